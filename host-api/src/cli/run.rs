//! `pisa-vk run FILE --kernel NAME [--grid X[,Y[,Z]]] [--block ...] [--offset ...]
//! [--arg SPEC]... [--set NAME=SPEC]... [--json] [--device D]`

use super::{read_source, Failure};
use pisa_vk::argspec::{self, ArgSpec, ElemType};
use pisa_vk::{Arg, Context, DeviceSelector, Dim3, Launch, Module};

/// Arguments of `run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PISA file (`-` for standard input).
    file: String,
    /// The kernel to run (with or without `@`).
    #[arg(long)]
    kernel: String,
    /// Global size in work-items: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// Work-group size: X[,Y[,Z]] (default: the kernel's .reqd_work_group_size, else 1).
    #[arg(long)]
    block: Option<String>,
    /// Global offset: X[,Y[,Z]].
    #[arg(long)]
    offset: Option<String>,
    /// A kernel argument, in `.param` order: TYPE:VALUE, bytes:HEX, TYPE[]:V1,V2,...,
    /// TYPE[N] or TYPE[]@PATH (buffers pass their device address).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Write a `.host_access` global before the dispatch: NAME=TYPE[]:V1,...
    #[arg(long = "set")]
    sets: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Device index or name substring (default: PISA_VK_DEVICE, else the best device), or
    /// `reference` for the CPU reference interpreter.
    #[arg(long)]
    device: Option<String>,
    /// Translate for this sub-group width instead of PISA's 32 (non-conforming). On a device
    /// that cannot run sub-groups of this width but can run a multiple of it (wave64), each
    /// sub-group runs as a cluster of a hardware sub-group.
    #[arg(long, default_value_t = 32)]
    subgroup_size: u32,
}

/// What a run leaves to print: buffer arguments (position, type, bytes) and `.host_access`
/// globals (name, bytes).
struct Results {
    buffers: Vec<(usize, ElemType, Vec<u8>)>,
    globals: Vec<(String, Vec<u8>)>,
}

/// The parsed request, shared by both executors.
struct Request {
    kernel: String,
    grid: ([u64; 3], u32),
    block: Option<([u64; 3], u32)>,
    offset: [u64; 3],
    args: Vec<ArgSpec>,
    sets: Vec<(String, Vec<u8>)>,
}

/// Runs the kernel and prints buffers and globals.
pub fn run(a: Args) -> Result<(), Failure> {
    let grid = argspec::parse_dims(&a.grid).map_err(Failure::usage)?;
    let block = a
        .block
        .as_deref()
        .map(argspec::parse_dims)
        .transpose()
        .map_err(Failure::usage)?;
    let offset = match &a.offset {
        Some(o) => argspec::parse_dims(o).map_err(Failure::usage)?.0,
        None => [0; 3],
    };
    let args = a
        .args
        .iter()
        .map(|s| argspec::parse_arg(s))
        .collect::<Result<_, _>>()
        .map_err(Failure::usage)?;
    let mut sets = Vec::new();
    for s in &a.sets {
        let (name, spec) = s
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("`{s}`: expected NAME=SPEC")))?;
        let bytes = match argspec::parse_arg(spec).map_err(Failure::usage)? {
            ArgSpec::Buffer { bytes, .. } | ArgSpec::Scalar(bytes) => bytes,
        };
        sets.push((name.trim_start_matches('@').to_string(), bytes));
    }
    let file = read_source(&a.file)?;
    let req = Request {
        kernel: a.kernel.trim_start_matches('@').to_string(),
        grid,
        block,
        offset,
        args,
        sets,
    };
    let results = if a.device.as_deref() == Some("reference") {
        run_reference(&file, &req, a.subgroup_size)?
    } else {
        run_vulkan(&file, &req, a.device.as_deref(), a.subgroup_size)?
    };
    print_results(&req.kernel, &results, a.json);
    Ok(())
}

fn run_vulkan(
    file: &pisa_translator::SourceFile,
    req: &Request,
    device: Option<&str>,
    subgroup_size: u32,
) -> Result<Results, Failure> {
    let options = pisa_translator::Options::with_subgroup_size(subgroup_size);
    options.subgroup_mapping().map_err(Failure::usage)?;
    let file = std::sync::Arc::new(file.clone());
    let translation = pisa_translator::compile(&file, &options).map_err(|d| Failure {
        code: 1,
        message: d.render(),
    })?;
    let selector = match device {
        None => DeviceSelector::Default,
        Some(d) => match d.parse::<usize>() {
            Ok(i) => DeviceSelector::Index(i),
            Err(_) => DeviceSelector::NameContains(d.to_string()),
        },
    };
    // A device with only what this module's kernels need enabled; the module is translated
    // again when the device offers more (maximal reconvergence, denormal preservation).
    let ctx = Context::for_translations(selector, &[&translation])?;
    let module = if pisa_vk::device_options(&ctx, &options) != options {
        Module::from_source_with(&ctx, &file.name, &file.text, &options)?
    } else {
        Module::from_translation(&ctx, &file.name, std::sync::Arc::new(translation))?
    };
    let reqd = module
        .reflection()
        .kernel(&req.kernel)
        .and_then(|k| k.reqd_work_group_size);
    for (name, bytes) in &req.sets {
        module.symbol(name)?.write(bytes)?;
    }
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (index, spec) in req.args.iter().enumerate() {
        match spec {
            ArgSpec::Scalar(bytes) => args.push(Arg(bytes.clone())),
            ArgSpec::Buffer { ty, bytes } => {
                let buffer = ctx.buffer_from(bytes)?;
                args.push(Arg::from(&buffer));
                buffers.push((index, *ty, buffer));
            }
        }
    }
    module.dispatch_launch(&req.kernel, &launch(req, reqd), &args)?;
    let mut out = Results {
        buffers: Vec::new(),
        globals: Vec::new(),
    };
    for (index, ty, b) in buffers {
        out.buffers.push((index, ty, b.read()?));
    }
    for g in &module.reflection().globals {
        if let Some(name) = &g.host_access {
            out.globals
                .push((name.clone(), module.symbol(name)?.read::<u8>()?));
        }
    }
    Ok(out)
}

/// The launch: the block defaults to the kernel's `.reqd_work_group_size`, else 1.
fn launch(req: &Request, reqd: Option<[u32; 3]>) -> Launch {
    let block = req.block.unwrap_or(match reqd {
        Some(r) => ([r[0] as u64, r[1] as u64, r[2] as u64], 3),
        None => ([1, 1, 1], 1),
    });
    Launch {
        global: Dim3 {
            size: req.grid.0,
            dims: req.grid.1,
        },
        local: Dim3 {
            size: block.0,
            dims: block.1,
        },
        offset: req.offset,
    }
}

/// `--device reference`: the CPU reference interpreter, with the same arguments and output
/// ([`pisa_vk::reference`]: the launch and argument block the device gets).
fn run_reference(
    file: &pisa_translator::SourceFile,
    req: &Request,
    subgroup_size: u32,
) -> Result<Results, Failure> {
    use pisa_vk::reference::{self, Data, Job};
    let file = std::sync::Arc::new(file.clone());
    let module = pisa_translator::check(&file).map_err(|d| Failure {
        code: 1,
        message: d.render(),
    })?;
    let mut kinds = Vec::new();
    let job = Job {
        kernel: req.kernel.clone(),
        global: Dim3 {
            size: req.grid.0,
            dims: req.grid.1,
        },
        local: req.block.map(|(size, dims)| Dim3 { size, dims }),
        offset: req.offset,
        args: req
            .args
            .iter()
            .enumerate()
            .map(|(i, spec)| match spec {
                ArgSpec::Scalar(b) => Data::Scalar(b.clone()),
                ArgSpec::Buffer { ty, bytes } => {
                    kinds.push((i, *ty));
                    Data::Buffer(bytes.clone())
                }
            })
            .collect(),
        sets: req.sets.clone(),
    };
    let config = pisa_reference::Config {
        subgroup_size,
        ..Default::default()
    };
    let out = reference::on_reference(&module, &job, config)?;
    Ok(Results {
        buffers: kinds
            .into_iter()
            .zip(out.buffers)
            .map(|((i, ty), b)| (i, ty, b))
            .collect(),
        globals: out.globals,
    })
}

fn print_results(kernel: &str, r: &Results, json: bool) {
    let decoded: Vec<(usize, ElemType, Vec<argspec::Value>)> = r
        .buffers
        .iter()
        .map(|(i, ty, bytes)| {
            (
                *i,
                *ty,
                bytes
                    .chunks_exact(ty.size())
                    .map(|c| ty.decode(c))
                    .collect(),
            )
        })
        .collect();
    if json {
        let bufs: Vec<String> = decoded
            .iter()
            .map(|(i, ty, vs)| {
                let vals: Vec<String> = vs.iter().map(|v| v.to_json()).collect();
                format!(
                    "{{\"arg\":{i},\"type\":\"{}\",\"values\":[{}]}}",
                    ty.name(),
                    vals.join(",")
                )
            })
            .collect();
        let globs: Vec<String> = r
            .globals
            .iter()
            .map(|(n, b)| {
                format!(
                    "{{\"name\":{},\"bytes\":\"{}\"}}",
                    serde_json::to_string(n).unwrap_or_default(),
                    argspec::to_hex(b)
                )
            })
            .collect();
        println!(
            "{{\"kernel\":{},\"buffers\":[{}],\"globals\":[{}]}}",
            serde_json::to_string(kernel).unwrap_or_default(),
            bufs.join(","),
            globs.join(",")
        );
    } else {
        for (i, ty, vs) in &decoded {
            let vals: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            println!("arg {i} ({}[{}]): {}", ty.name(), vs.len(), vals.join(" "));
        }
        for (n, b) in &r.globals {
            println!("{n}: {}", argspec::to_hex(b));
        }
    }
}
