//! `pisa-vk run FILE... --kernel NAME [--grid X[,Y[,Z]]] [--block ...] [--offset ...]
//! [--arg SPEC]... [--set NAME=SPEC]... [--json] [--device D]`

use super::{invalid, read_sources, Failure};
use pisa_vk::argspec::{self, ArgSpec, ElemType};
use pisa_vk::{Context, DeviceSelector, Dim3, Module};

/// Arguments of `run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PISA files (`-` for standard input, once); several are linked into one program.
    #[arg(required = true)]
    files: Vec<String>,
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
    /// Non-conforming fast math: the device's Fma, transcendentals, division and roots, and
    /// every rounding mode rounded to nearest (docs/float-accuracy.md gives the errors).
    #[arg(long)]
    fast_math: bool,
}

/// What a run leaves to print: buffer arguments (position, type, bytes) and `.host_access`
/// globals (name, bytes), and how many errors the validation layer reported (already
/// printed on stderr).
#[derive(Default)]
struct Results {
    buffers: Vec<(usize, ElemType, Vec<u8>)>,
    globals: Vec<(String, Vec<u8>)>,
    validation_errors: usize,
}

impl Results {
    /// The results of a run whose buffer arguments are at `kinds` (position, element type).
    fn new(kinds: Vec<(usize, ElemType)>, out: pisa_vk::reference::Outputs) -> Results {
        Results {
            buffers: kinds
                .into_iter()
                .zip(out.buffers)
                .map(|((i, ty), b)| (i, ty, b))
                .collect(),
            globals: out.globals,
            validation_errors: 0,
        }
    }
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
    let files = read_sources(&a.files)?;
    let req = Request {
        kernel: a.kernel.trim_start_matches('@').to_string(),
        grid,
        block,
        offset,
        args,
        sets,
    };
    let results = if a.device.as_deref() == Some("reference") {
        if a.fast_math {
            return Err(Failure::usage(
                "--fast-math does not apply to the reference interpreter, which computes \
                 PISA's exact results",
            ));
        }
        run_reference(&files, &req, a.subgroup_size)?
    } else {
        run_vulkan(
            &files,
            &req,
            a.device.as_deref(),
            a.subgroup_size,
            a.fast_math,
        )?
    };
    print_results(&req.kernel, &results, a.json);
    match results.validation_errors {
        0 => Ok(()),
        n => Err(Failure::runtime(format!(
            "the validation layer reported {n} error(s) (PISA_VK_VALIDATION; messages above)"
        ))),
    }
}

fn run_vulkan(
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    req: &Request,
    device: Option<&str>,
    subgroup_size: u32,
    fast_math: bool,
) -> Result<Results, Failure> {
    // Translated first for the portable model (or fast math), to learn what the context must
    // enable; then again only if the device's options differ.
    let options = pisa_translator::Options {
        float: Some(pisa_translator::FloatModel {
            fast_math,
            ..Default::default()
        }),
        ..pisa_translator::Options::with_subgroup_size(subgroup_size)
    };
    options.subgroup_mapping().map_err(Failure::usage)?;
    let translation = pisa_translator::compile_linked(files, &options).map_err(invalid)?;
    let selector = match device {
        None => DeviceSelector::Default,
        Some(d) => match d.parse::<usize>() {
            Ok(i) => DeviceSelector::Index(i),
            Err(_) => DeviceSelector::NameContains(d.to_string()),
        },
    };
    // A device with only what this module's kernels need enabled; the module is translated
    // again when the device offers more (maximal reconvergence, denormal preservation, a
    // faster exact float model).
    let ctx = Context::for_translations(selector, &[&translation])?;
    let outcome = run_on(&ctx, files, req, &options, translation);
    // Every message of the validation layer (PISA_VK_VALIDATION=1), whatever the outcome;
    // module and buffers are gone by now, so their destruction is covered.
    let messages = ctx.validation_messages();
    for m in &messages {
        eprintln!("{m}");
    }
    let mut results = outcome?;
    results.validation_errors = messages.iter().filter(|m| is_error(m)).count();
    Ok(results)
}

/// Whether a validation-layer message (`[SEVERITY kind] ...`) is an error.
fn is_error(message: &str) -> bool {
    message.starts_with("[ERROR")
}

/// Loads the program on `ctx`, runs the kernel and reads the results back.
fn run_on(
    ctx: &Context,
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    req: &Request,
    options: &pisa_translator::Options,
    translation: pisa_translator::Translation,
) -> Result<Results, Failure> {
    let mut device_options = pisa_vk::device_options(ctx, options)?;
    if !options.float.is_some_and(|f| f.fast_math) {
        device_options.float = Some(pisa_vk::device_float_model(ctx)?);
    }
    let module = if device_options != *options {
        let sources: Vec<(&str, &str)> = files
            .iter()
            .map(|f| (f.name.as_str(), f.text.as_str()))
            .collect();
        Module::from_sources_with(ctx, &sources, &device_options)?
    } else {
        let name = pisa_vk::program_name(files);
        Module::from_translation(ctx, &name, std::sync::Arc::new(translation))?
    };
    let (job, kinds) = req.job();
    let out = pisa_vk::reference::on_device_unchecked(&module, &job)?;
    Ok(Results::new(kinds, out))
}

impl Request {
    /// The run as a [`Job`](pisa_vk::reference::Job) (the same launch on the device and on
    /// the reference), with the position and element type of each buffer argument.
    fn job(&self) -> (pisa_vk::reference::Job, Vec<(usize, ElemType)>) {
        use pisa_vk::reference::Data;
        let mut kinds = Vec::new();
        let job = pisa_vk::reference::Job {
            kernel: self.kernel.clone(),
            global: Dim3 {
                size: self.grid.0,
                dims: self.grid.1,
            },
            local: self.block.map(|(size, dims)| Dim3 { size, dims }),
            offset: self.offset,
            args: self
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
            sets: self.sets.clone(),
        };
        (job, kinds)
    }
}

/// `--device reference`: the CPU reference interpreter, with the same arguments and output
/// ([`pisa_vk::reference`]: the launch and argument block the device gets).
fn run_reference(
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    req: &Request,
    subgroup_size: u32,
) -> Result<Results, Failure> {
    use pisa_vk::reference;
    let module = pisa_translator::link(files).map_err(invalid)?.module;
    let (job, kinds) = req.job();
    let config = pisa_reference::Config {
        subgroup_size,
        ..Default::default()
    };
    let out = reference::on_reference(&module, &job, config)?;
    Ok(Results::new(kinds, out))
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

#[cfg(test)]
mod tests {
    use super::is_error;

    #[test]
    fn only_error_messages_fail_a_run() {
        assert!(is_error(
            "[ERROR validation] VUID-RuntimeSpirv-Workgroup-06530: too much shared memory"
        ));
        assert!(!is_error(
            "[WARNING performance] UNASSIGNED-BestPractices: advice"
        ));
        assert!(!is_error("[WARNING validation] mentions [ERROR later"));
    }
}
