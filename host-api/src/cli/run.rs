//! `pisa-vk run FILE... --kernel NAME [--grid X[,Y[,Z]]] [--block ...] [--offset ...]
//! [--arg SPEC]... [--set NAME=SPEC]... [--print SEL[:TYPE]]... [--out SEL=PATH]... [--json]
//! [--device D]`

use super::output::{self, Selection, Shown};
use super::{invalid, read_sources, Failure};
use pisa_vk::argspec::{self, ArgSpec, ElemType};
use pisa_vk::{Arg, Context, DeviceSelector, Dim3, Launch, Module};

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
    /// Print only this buffer (its argument position, e.g. `2`) or `.host_access` global (its
    /// name), optionally decoded as TYPE (`counter:f32`); may be repeated. Without it every
    /// buffer and global is printed, unless `--out` is given.
    #[arg(long = "print", value_name = "SEL[:TYPE]")]
    print: Vec<String>,
    /// Write a buffer (argument position) or global (name) to PATH as raw little-endian
    /// bytes; may be repeated. With `--out`, only what `--print` selects is printed.
    #[arg(long = "out", value_name = "SEL=PATH")]
    out: Vec<String>,
    /// Print one JSON object of the same selection instead of text.
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
    /// Check every memory access (a memory checker; also `PISA_VK_CHECKED=1`): a bad access
    /// is not performed, the first is reported at its PISA line with its work-item and the
    /// allocation it missed, and the run exits 3. `--device reference` always checks.
    #[arg(long)]
    checked: bool,
    /// Non-conforming fast math: the device's Fma, transcendentals, division and roots, and
    /// every rounding mode rounded to nearest (docs/float-accuracy.md gives the errors).
    #[arg(long)]
    fast_math: bool,
}

/// What a run reads back: buffer arguments and `.host_access` globals, and how many errors
/// the validation layer reported (already printed on stderr).
#[derive(Default)]
struct Results {
    shown: Vec<Shown>,
    validation_errors: usize,
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
    let args: Vec<ArgSpec> = a
        .args
        .iter()
        .map(|s| argspec::parse_arg(s))
        .collect::<Result<_, _>>()
        .map_err(Failure::usage)?;
    let selection = Selection::parse(&a.print, &a.out)?;
    let is_buffer: Vec<bool> = args
        .iter()
        .map(|s| matches!(s, ArgSpec::Buffer { .. }))
        .collect();
    selection.check_args(&is_buffer)?;
    let mut sets = Vec::new();
    let mut set_types = Vec::new();
    for s in &a.sets {
        let (name, spec) = s
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("`{s}`: expected NAME=SPEC")))?;
        let bytes = match argspec::parse_arg(spec).map_err(Failure::usage)? {
            ArgSpec::Buffer { bytes, .. } | ArgSpec::Scalar(bytes) => bytes,
        };
        let name = name.trim_start_matches('@').to_string();
        if let Some(ty) = ElemType::of_spec(spec) {
            set_types.push((name.clone(), ty));
        }
        sets.push((name, bytes));
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
        let device = a.device.as_deref();
        run_vulkan(
            &files,
            &req,
            device,
            a.subgroup_size,
            a.fast_math,
            a.checked,
        )?
    };
    let shown = selection.apply(results.shown, &set_types)?;
    output::print(&req.kernel, &shown, a.json);
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
    checked: bool,
) -> Result<Results, Failure> {
    // Translated first for the portable model (or fast math), to learn what the context must
    // enable; then again only if the device's options differ.
    let options = pisa_translator::Options {
        float: Some(pisa_translator::FloatModel {
            fast_math,
            ..Default::default()
        }),
        checked,
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
            ArgSpec::Scalar(bytes) => args.push(Arg::bytes(bytes.clone())),
            ArgSpec::Buffer { ty, bytes } => {
                let buffer = ctx.buffer_from(bytes)?;
                args.push(Arg::from(&buffer));
                buffers.push((index, *ty, buffer));
            }
        }
    }
    module.dispatch_launch(&req.kernel, &launch(req, reqd), &args)?;
    let mut out = Results::default();
    for (index, ty, b) in buffers {
        out.shown.push(Shown::buffer(index, ty, b.read()?));
    }
    for g in &module.reflection().globals {
        if let Some(name) = &g.host_access {
            let bytes = module.symbol(name)?.read::<u8>()?;
            out.shown.push(Shown::global(name, g.element_width, bytes));
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

/// `--device reference`: the CPU reference interpreter, with the same arguments and output.
fn run_reference(
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    req: &Request,
    subgroup_size: u32,
) -> Result<Results, Failure> {
    let program = pisa_translator::link(files).map_err(invalid)?;
    let module = &program.module;
    let rt = |e: pisa_reference::Error| Failure::runtime(format!("reference interpreter: {e}"));
    let kernels = || {
        module
            .functions
            .iter()
            .filter(|f| f.is_kernel() && f.body.is_some())
    };
    let f = kernels().find(|f| f.name == req.kernel).ok_or_else(|| {
        Failure::from(pisa_vk::Error::UnknownKernel {
            name: req.kernel.clone(),
            available: kernels().map(|f| f.name.clone()).collect(),
        })
    })?;
    let mut machine = pisa_reference::Machine::new(pisa_reference::Config {
        subgroup_size,
        ..Default::default()
    });
    let loaded = machine.load(module).map_err(rt)?;
    pisa_vk::reference::write_sets(&mut machine, &loaded, &req.sets)?;
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (i, spec) in req.args.iter().enumerate() {
        match spec {
            ArgSpec::Scalar(b) => args.push(Arg::bytes(b.clone())),
            ArgSpec::Buffer { ty, bytes } => {
                let addr = machine.alloc(bytes.len().max(1) as u64, 16);
                machine.write(addr, bytes).map_err(rt)?;
                buffers.push((i, *ty, addr, bytes.len()));
                args.push(Arg::bytes(addr.to_le_bytes().to_vec()));
            }
        }
    }
    let (params, size) = pisa_translator::reflect::params_of(f);
    let block = pisa_vk::pack_args(&f.name, &params, size, &args)?;
    let l = launch(req, f.attrs.reqd_work_group_size);
    let local = l.local.size.map(|x| u32::try_from(x).unwrap_or(u32::MAX));
    let rl = pisa_reference::Launch {
        global_size: l.global.size,
        local_size: local,
        global_offset: l.offset,
        work_dim: l.work_dim(),
    };
    machine
        .dispatch(&loaded, &req.kernel, &rl, &block)
        .map_err(|e| match e {
            pisa_reference::Error::InvalidLaunch { what } => {
                Failure::from(pisa_vk::Error::Launch {
                    kernel: req.kernel.clone(),
                    message: what,
                })
            }
            pisa_reference::Error::Memory(v) => {
                let v = pisa_vk::memcheck::from_reference(*v, &program.sources, &params, &block);
                Failure::from(pisa_vk::Error::MemoryViolation(Box::new(v)))
            }
            e => rt(e),
        })?;
    let mut out = Results::default();
    for (i, ty, addr, len) in buffers {
        let mut b = vec![0u8; len];
        machine.read(addr, &mut b).map_err(rt)?;
        out.shown.push(Shown::buffer(i, ty, b));
    }
    for g in &module.globals {
        if let Some(name) = &g.host_access {
            if let Some(sym) = loaded.symbol(name) {
                let mut b = vec![0u8; sym.size as usize];
                machine.read(sym.address, &mut b).map_err(rt)?;
                out.shown.push(Shown::global(name, g.element_width(), b));
            }
        }
    }
    Ok(out)
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
