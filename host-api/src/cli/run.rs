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
    /// Device index or name substring (default: PISA_VK_DEVICE, else the best device).
    #[arg(long)]
    device: Option<String>,
    /// Translate for this sub-group width instead of PISA's 32 (non-conforming).
    #[arg(long, default_value_t = 32)]
    subgroup_size: u32,
}

struct BufArg {
    index: usize,
    ty: ElemType,
    buffer: pisa_vk::Buffer<u8>,
}

/// Runs the kernel and prints buffers and globals.
pub fn run(a: Args) -> Result<(), Failure> {
    let (grid, gdims) = argspec::parse_dims(&a.grid).map_err(Failure::usage)?;
    let offset = match &a.offset {
        Some(o) => argspec::parse_dims(o).map_err(Failure::usage)?.0,
        None => [0; 3],
    };
    let specs: Vec<ArgSpec> = a
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
    let options = pisa_translator::Options {
        subgroup_size: a.subgroup_size,
    };
    let translation = pisa_translator::compile(&file, &options).map_err(|d| Failure {
        code: 1,
        message: d.render(),
    })?;
    let selector = match &a.device {
        None => DeviceSelector::Default,
        Some(d) => match d.parse::<usize>() {
            Ok(i) => DeviceSelector::Index(i),
            Err(_) => DeviceSelector::NameContains(d.clone()),
        },
    };
    let ctx = Context::with_device(selector)?;
    let module = Module::from_translation(&ctx, &file.name, std::sync::Arc::new(translation))?;
    let kernel = a.kernel.trim_start_matches('@').to_string();
    let block = match &a.block {
        Some(b) => argspec::parse_dims(b).map_err(Failure::usage)?,
        None => match module
            .reflection()
            .kernel(&kernel)
            .and_then(|k| k.reqd_work_group_size)
        {
            Some(r) => ([r[0] as u64, r[1] as u64, r[2] as u64], 3),
            None => ([1, 1, 1], 1),
        },
    };
    for (name, bytes) in &sets {
        module.symbol(name)?.write(bytes)?;
    }
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (index, spec) in specs.into_iter().enumerate() {
        match spec {
            ArgSpec::Scalar(bytes) => args.push(Arg(bytes)),
            ArgSpec::Buffer { ty, bytes } => {
                let buffer = ctx.buffer_from(&bytes)?;
                args.push(Arg::from(&buffer));
                buffers.push(BufArg { index, ty, buffer });
            }
        }
    }
    let launch = Launch {
        global: Dim3 {
            size: grid,
            dims: gdims,
        },
        local: Dim3 {
            size: block.0,
            dims: block.1,
        },
        offset,
    };
    module.dispatch_launch(&kernel, &launch, &args)?;
    print_results(&module, &kernel, &buffers, a.json)
}

fn print_results(
    module: &Module,
    kernel: &str,
    buffers: &[BufArg],
    json: bool,
) -> Result<(), Failure> {
    let mut globals = Vec::new();
    for g in &module.reflection().globals {
        if let Some(name) = &g.host_access {
            let bytes: Vec<u8> = module.symbol(name)?.read::<u8>()?;
            globals.push((name.clone(), bytes));
        }
    }
    let mut decoded = Vec::new();
    for b in buffers {
        let bytes = b.buffer.read()?;
        let values: Vec<argspec::Value> = bytes
            .chunks_exact(b.ty.size())
            .map(|c| b.ty.decode(c))
            .collect();
        decoded.push((b.index, b.ty, values));
    }
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
        let globs: Vec<String> = globals
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
        for (n, b) in &globals {
            println!("{n}: {}", argspec::to_hex(b));
        }
    }
    Ok(())
}
