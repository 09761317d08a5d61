//! `pisa-vk run FILE... --kernel NAME [--grid X[,Y[,Z]]] [--block ...] [--offset ...]
//! [--arg SPEC]... [--set NAME=SPEC]... [--print SEL[:TYPE]]... [--out SEL=PATH]... [--json]
//! [--device D] [--sanitize LIST]`

use super::output::{self, Selection, Shown};
use super::{invalid, read_sources, Failure};
use pisa_translator::reflect::{Given, ParamInfo};
use pisa_vk::argspec::{self, ArgSpec, ElemType};
use pisa_vk::reference::{self, Data, Job, Outputs};
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
    /// Global offset: X[,Y[,Z]] (the others 0).
    #[arg(long)]
    offset: Option<String>,
    /// A kernel argument, in `.param` order: TYPE:VALUE, bytes:HEX, addr:VALUE (an address,
    /// not checked against the parameter's kind; addr:SPEC any spec unchecked),
    /// TYPE[]:V1,V2,...,
    /// TYPE[N] or TYPE[]@PATH (buffers pass their device address).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Write a global before the dispatch: NAME=TYPE[]:V1,... (NAME as `Module::symbol` takes
    /// it: a `.host_access` name, else an exported or the only variable of that PISA name)
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
    /// Which kernels run on virtual lanes (spec-notes §88): `auto` (sub-group kernels, where
    /// the device's sub-groups are narrower), `virtual` (every sub-group kernel) or `all`
    /// (every kernel).
    #[arg(long, value_enum, default_value = "auto")]
    lanes: super::translate::Lanes,
    /// Check every memory access (a memory checker; also `PISA_VK_CHECKED=1`): a bad access
    /// is not performed, the first is reported at its PISA line with its work-item and the
    /// allocation it missed, and the run exits 3. `--device reference` always checks.
    #[arg(long)]
    checked: bool,
    /// Translate cancellable kernels (spec-notes §91): a kernel that does not end is then
    /// stopped at the timeout or by Ctrl-C (exit 130) instead of keeping the device busy
    /// (`--checked` includes it).
    #[arg(long)]
    cancellable: bool,
    /// Run the reference interpreter's sanitizers (with `--device reference`): a
    /// comma-separated list of `race` (data races on shared and global memory), `init`
    /// (reads of shared, private or register bytes nothing wrote), `sync` (barriers not
    /// reached by every work-item, sub-group masks naming inactive lanes) or `all`. Findings
    /// are printed on stderr (JSON with `--json`) and the run exits 3.
    #[arg(long, value_name = "LIST")]
    sanitize: Option<String>,
    /// Non-conforming fast math: the device's Fma, transcendentals, division and roots, and
    /// every rounding mode rounded to nearest (docs/float-accuracy.md gives the errors).
    #[arg(long)]
    fast_math: bool,
    /// The most nested activations of the functions of one call cycle (recursion) a
    /// work-item may have; a deeper call stops the run with a stack overflow naming the
    /// call, the work-item and the depth (exit 3). Also on `--device reference`.
    #[arg(long, default_value_t = pisa_translator::passes::recursion::DEFAULT_STACK_DEPTH)]
    stack_depth: u32,
}

/// Runs the kernel and prints buffers and globals.
pub fn run(a: Args) -> Result<(), Failure> {
    if a.stack_depth == 0 {
        return Err(Failure::usage("--stack-depth must be at least 1"));
    }
    let grid = argspec::parse_dims(&a.grid, 1).map_err(Failure::usage)?;
    let block = a
        .block
        .as_deref()
        .map(|b| argspec::parse_dims(b, 1))
        .transpose()
        .map_err(Failure::usage)?;
    let offset = match &a.offset {
        Some(o) => argspec::parse_dims(o, 0).map_err(Failure::usage)?.0,
        None => [0; 3],
    };
    let args: Vec<ArgSpec> = a
        .args
        .iter()
        .map(|s| argspec::parse_arg(s))
        .collect::<Result<_, _>>()
        .map_err(Failure::usage)?;
    // What each argument passes, checked against the kernel's parameters once translated.
    let given: Vec<Given> = a.args.iter().map(|s| argspec::given_of(s)).collect();
    let selection = Selection::parse(&a.print, &a.out)?;
    // The element type of each buffer argument (`None`: a scalar), for printing.
    let buffer_types: Vec<Option<ElemType>> = args
        .iter()
        .map(|s| match s {
            ArgSpec::Buffer { ty, .. } => Some(*ty),
            ArgSpec::Scalar(_) => None,
        })
        .collect();
    let is_buffer: Vec<bool> = buffer_types.iter().map(Option::is_some).collect();
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
    let dim = |(size, dims): ([u64; 3], u32)| Dim3 { size, dims };
    let job = Job {
        kernel: a.kernel.trim_start_matches('@').to_string(),
        global: dim(grid),
        local: block.map(dim),
        offset,
        args: args
            .into_iter()
            .map(|s| match s {
                ArgSpec::Scalar(bytes) => Data::Scalar(bytes),
                ArgSpec::Buffer { bytes, .. } => Data::Buffer(bytes),
            })
            .collect(),
        sets,
    };
    let (outputs, validation_errors) = if a.device.as_deref() == Some("reference") {
        if a.fast_math {
            return Err(Failure::usage(
                "--fast-math does not apply to the reference interpreter, which computes \
                 PISA's exact results",
            ));
        }
        let sanitize = match &a.sanitize {
            Some(list) => pisa_reference::Sanitize::parse(list).map_err(Failure::usage)?,
            None => pisa_reference::Sanitize::NONE,
        };
        let (outputs, findings) = run_reference(
            &files,
            &job,
            &given,
            a.subgroup_size,
            a.stack_depth,
            sanitize,
            a.json,
        )?;
        if !findings.is_empty() {
            let shown = selection.apply(shown(&buffer_types, outputs), &set_types)?;
            output::print(&job.kernel, &shown, a.json);
            return Err(findings_failure(&findings, a.json));
        }
        (outputs, 0)
    } else {
        if a.sanitize.is_some() {
            return Err(Failure::usage(
                "--sanitize runs on the reference interpreter: add --device reference",
            ));
        }
        let device = a.device.as_deref();
        let options = pisa_translator::Options {
            float: Some(pisa_translator::FloatModel {
                fast_math: a.fast_math,
                ..Default::default()
            }),
            checked: a.checked,
            cancellable: a.cancellable,
            stack_depth: a.stack_depth,
            virtual_lanes: a.lanes.into(),
            ..pisa_translator::Options::with_subgroup_size(a.subgroup_size)
        };
        run_vulkan(&files, &job, &given, device, options)?
    };
    let shown = selection.apply(shown(&buffer_types, outputs), &set_types)?;
    output::print(&job.kernel, &shown, a.json);
    match validation_errors {
        0 => Ok(()),
        n => Err(Failure::runtime(format!(
            "the validation layer reported {n} error(s) (PISA_VK_VALIDATION; messages above)"
        ))),
    }
}

/// What a run leaves, as printed: each buffer argument at its position with its element type
/// (`buffer_types`, one per argument), then each `.host_access` global.
fn shown(buffer_types: &[Option<ElemType>], outputs: Outputs) -> Vec<Shown> {
    let buffers = buffer_types
        .iter()
        .enumerate()
        .filter_map(|(i, ty)| ty.map(|ty| (i, ty)));
    let mut shown: Vec<Shown> = buffers
        .zip(outputs.buffers)
        .map(|((i, ty), bytes)| Shown::buffer(i, ty, bytes))
        .collect();
    shown.extend(
        outputs
            .globals
            .into_iter()
            .map(|g| Shown::global(&g.name, g.element_width, g.bytes)),
    );
    shown
}

/// Runs `job` on a Vulkan device; returns what it leaves and how many errors the validation
/// layer reported (every message of the context is printed on stderr, whatever the outcome).
fn run_vulkan(
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    job: &Job,
    given: &[Given],
    device: Option<&str>,
    options: pisa_translator::Options,
) -> Result<(Outputs, usize), Failure> {
    // Parsed and linked once; translated first for the portable model (or fast math), to
    // learn what the context must enable; then again only if the device's options differ.
    options.subgroup_mapping().map_err(Failure::usage)?;
    let program = pisa_translator::link(files).map_err(invalid)?;
    let translation = pisa_translator::translate_program(&program, &options).map_err(invalid)?;
    if let Some(k) = translation.reflection.kernel(&job.kernel) {
        check_kinds(&job.kernel, &k.params, given)?;
    }
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
    for warning in ctx.driver_bugs().warnings() {
        eprintln!("warning: {warning}");
    }
    let name = pisa_vk::program_name(files);
    let outcome = run_on(&ctx, (&name, &program), job, &options, translation);
    // Every message of the validation layer (PISA_VK_VALIDATION=1), whatever the outcome;
    // module and buffers are gone by now, so their destruction is covered.
    let messages = ctx.validation_messages();
    for m in &messages {
        eprintln!("{m}");
    }
    let outputs = outcome?;
    Ok((outputs, messages.iter().filter(|m| is_error(m)).count()))
}

/// Whether a validation-layer message (`[SEVERITY kind] ...`) is an error.
fn is_error(message: &str) -> bool {
    message.starts_with("[ERROR")
}

/// Loads `program` (with its name for errors) on `ctx` (`translation` is its translation
/// with `options`; translated again when the device's options differ) and runs `job` through
/// the harness (whose module and buffers are gone when it returns); the caller takes the
/// validation layer's messages.
fn run_on(
    ctx: &Context,
    (name, program): (&str, &pisa_translator::Program),
    job: &Job,
    options: &pisa_translator::Options,
    translation: pisa_translator::Translation,
) -> Result<Outputs, Failure> {
    let mut device_options = pisa_vk::device_options(ctx, options)?;
    if !options.float.is_some_and(|f| f.fast_math) {
        device_options.float = Some(pisa_vk::device_float_model(ctx)?);
    }
    let translation = if device_options != *options {
        pisa_translator::translate_program(program, &device_options).map_err(invalid)?
    } else {
        translation
    };
    let module = Module::from_translation(ctx, name, std::sync::Arc::new(translation))?;
    Ok(reference::on_device_unchecked(&module, job)?)
}

/// Refuses an argument that clearly contradicts how the kernel uses its parameter (an
/// integer where it dereferences an address, a buffer where it only computes with the
/// value, ...: [`pisa_vk::Error::ArgumentKind`]), before anything runs.
fn check_kinds(kernel: &str, params: &[ParamInfo], given: &[Given]) -> Result<(), Failure> {
    if params.len() != given.len() {
        return Ok(()); // the dispatch reports the count, naming the parameters
    }
    for (index, (p, &g)) in params.iter().zip(given).enumerate() {
        pisa_vk::check_arg_kind(kernel, index, p, g)?;
    }
    Ok(())
}

/// `--device reference`: the CPU reference interpreter, with the same job and output, and
/// the findings of the sanitizers `sanitize` (printed on stderr before a failure of the run).
fn run_reference(
    files: &[std::sync::Arc<pisa_translator::SourceFile>],
    job: &Job,
    given: &[Given],
    subgroup_size: u32,
    stack_depth: u32,
    sanitize: pisa_reference::Sanitize,
    json: bool,
) -> Result<(Outputs, Vec<reference::Finding>), Failure> {
    let program = pisa_translator::link(files).map_err(invalid)?;
    if let Some(params) = pisa_translator::reflect::kernel_params(&program, &job.kernel) {
        check_kinds(&job.kernel, &params, given)?;
    }
    let config = pisa_reference::Config {
        subgroup_size,
        stack_depth,
        ..Default::default()
    };
    let (outputs, findings) = reference::on_reference_sanitized(&program, job, config, sanitize);
    match outputs {
        Ok(o) => Ok((o, findings)),
        Err(e) => {
            if !findings.is_empty() {
                eprintln!("{}", findings_failure(&findings, json).message);
            }
            Err(e.into())
        }
    }
}

/// The failure (exit 3) that reports the sanitizers' findings: text, or with `json` one JSON
/// object `{"sanitizer": [...]}` (one entry per finding).
fn findings_failure(findings: &[reference::Finding], json: bool) -> Failure {
    let message = if json {
        let list: Vec<serde_json::Value> = findings.iter().map(finding_json).collect();
        serde_json::json!({ "sanitizer": list }).to_string()
    } else {
        let mut s: Vec<String> = findings.iter().map(|f| f.render()).collect();
        s.push(format!(
            "error: the sanitizers found {} problem(s)",
            findings.len()
        ));
        s.join("\n")
    };
    Failure { code: 3, message }
}

/// One finding as JSON.
fn finding_json(f: &reference::Finding) -> serde_json::Value {
    use pisa_reference::sanitize::{Event, Target};
    use serde_json::json;
    let event = |e: &Event, at: &(String, usize, usize)| {
        json!({
            "file": at.0, "line": at.1, "column": at.2,
            "function": e.function,
            "access": e.access.map(|a| format!("{a:?}").to_lowercase()),
            "work_item": {
                "global": e.work_item.global,
                "local": e.work_item.local,
                "group": e.work_item.group,
            },
        })
    };
    let r = &f.report;
    let (space, address) = match &r.target {
        Target::Memory { space, address, .. } => (Some(space.as_str()), Some(*address)),
        _ => (None, None),
    };
    json!({
        "check": r.check.as_str(),
        "message": r.message,
        "first": event(&r.first, &f.first_at),
        "second": r.second.as_ref().zip(f.second_at.as_ref()).map(|(e, at)| event(e, at)),
        "space": space,
        "address": address,
        "what": f.what,
        "missing": r.missing.iter().map(|w| w.local).collect::<Vec<_>>(),
        "count": r.count,
    })
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
