//! `pisa-vk translate FILE... [-o OUT] [--emit spv|spvasm|reflection] [--subgroup-size N]
//! [--hardware-subgroup-size H] [--lanes auto|virtual|all] [--maximal-reconvergence] [--denorm-preserve]
//! [--fused-fma WIDTHS] [--float64] [--keeps-zero-operands] [--fast-math] [--checked]`
//!
//! Without a device, the default float model is portable: exact on every Vulkan device and
//! without `Float64` for `.f`/`.hf`/`.bf` code. `--fused-fma` and `--float64` translate for
//! faster assumptions (a module translated for fused `Fma` is refused by the runtime on a
//! device whose `Fma` is not fused); `--fast-math` is non-conforming.

use super::{invalid, read_sources, Failure};
use std::io::{IsTerminal, Write};

/// What `translate` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Emit {
    /// SPIR-V binary.
    Spv,
    /// SPIR-V disassembly.
    Spvasm,
    /// Reflection metadata as JSON.
    Reflection,
}

/// Which kernels run on virtual lanes (`--lanes`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lanes {
    /// Sub-group kernels, where the hardware sub-group is narrower than --subgroup-size.
    #[default]
    Auto,
    /// Every sub-group kernel, also on hardware as wide (partial sub-groups for any
    /// work-group size).
    Virtual,
    /// Every kernel, with cross-lane operations or not (to measure the mask's cost).
    All,
}

impl From<Lanes> for pisa_translator::VirtualLanes {
    fn from(l: Lanes) -> Self {
        match l {
            Lanes::Auto => pisa_translator::VirtualLanes::Auto,
            Lanes::Virtual => pisa_translator::VirtualLanes::SubgroupKernels,
            Lanes::All => pisa_translator::VirtualLanes::AllKernels,
        }
    }
}

/// Arguments of `translate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PISA files (`-` for standard input, once); several are linked into one program,
    /// translated to one SPIR-V module with the kernels of them all.
    #[arg(required = true)]
    files: Vec<String>,
    /// Output file (standard output when absent).
    #[arg(short, long)]
    output: Option<String>,
    /// What to write.
    #[arg(long, value_enum, default_value = "spv")]
    emit: Emit,
    /// Translate for this sub-group width instead of PISA's 32 (non-conforming).
    #[arg(long, default_value_t = 32)]
    subgroup_size: u32,
    /// Run each sub-group as an aligned cluster of a hardware sub-group of this many lanes
    /// (a power-of-two multiple of --subgroup-size, e.g. 64 for AMD wave64); the pipeline
    /// must then be created with this sub-group size (the reflection's
    /// `hardware_subgroup_size`). `pisa-vk run` decides this from the device.
    #[arg(long)]
    hardware_subgroup_size: Option<u32>,
    /// Which kernels run on virtual lanes: each invocation carries --subgroup-size /
    /// --hardware-subgroup-size work-items (one where the hardware is wider: each cluster of a
    /// hardware sub-group is then one PISA sub-group), so that PISA's 32-lane sub-groups run on
    /// narrower hardware and any work-group size has partial sub-groups (spec-notes §88, §115).
    #[arg(long, value_enum, default_value = "auto")]
    lanes: Lanes,
    /// Ask for maximal reconvergence in kernels with sub-group instructions (for devices with
    /// VK_KHR_shader_maximal_reconvergence; `pisa-vk run` decides this from the device).
    #[arg(long)]
    maximal_reconvergence: bool,
    /// Ask for denormals to be preserved in every float width (for devices with
    /// shaderDenormPreserveFloatN; `pisa-vk run` decides this from the device).
    #[arg(long)]
    denorm_preserve: bool,
    /// The checked translation (a memory checker): every memory access is checked before it
    /// is performed; the reflection gets the site table (`checked`).
    #[arg(long)]
    checked: bool,
    /// Cancellable kernels (spec-notes §91, §100): each loop iteration and each kernel's
    /// entry read a cancel word, so a launch can be stopped at its timeout or by Ctrl-C (a
    /// checked translation always has the loops' checks).
    #[arg(long)]
    cancellable: bool,
    /// For a device without `subgroupSizeControl` (spec-notes §105): kernels on virtual
    /// lanes check at entry that they run in full sub-groups of the hardware width, and a
    /// launch where they do not fails instead of computing wrong values.
    #[arg(long)]
    check_subgroup_size: bool,
    /// For a device whose barriers do not count invocations that returned (lavapipe;
    /// `pisa-vk run` decides this from the device): kernels in which a work-item may return
    /// before a barrier others reach run on virtual lanes whatever the widths (spec-notes §83).
    #[arg(long)]
    barriers_ignore_returned: bool,
    /// The most nested activations of the functions of one call cycle (recursion) a
    /// work-item may have: the size of the explicit stack (recorded in the reflection).
    #[arg(long, default_value_t = pisa_translator::passes::recursion::DEFAULT_STACK_DEPTH)]
    stack_depth: u32,
    /// Assume the device's Fma is fused for these float widths: a comma-separated list of
    /// 16, 32, 64, or `all` (`pisa-vk devices` shows what a device does; `pisa-vk run`
    /// decides this from the device).
    #[arg(long, value_name = "WIDTHS", value_parser = parse_widths)]
    fused_fma: Option<pisa_translator::FloatWidths>,
    /// Let exact `.f`/`.hf`/`.bf` results be computed in f64 where Fma is not fused (for
    /// devices with shaderFloat64).
    #[arg(long)]
    float64: bool,
    /// Assume the device's compiler computes float operations on a zero it can prove as IEEE
    /// says (`pisa-vk devices` lists a device that does not among its driver bugs; lavapipe
    /// does not): exact sums and divisions then skip their zero fix-ups (spec-notes §113).
    #[arg(long)]
    keeps_zero_operands: bool,
    /// Non-conforming fast math: the device's Fma, transcendentals, division and roots, and
    /// every rounding mode rounded to nearest (docs/float-accuracy.md gives the errors).
    #[arg(long)]
    fast_math: bool,
}

/// `16,32,64` or `all` as a set of float widths.
fn parse_widths(s: &str) -> Result<pisa_translator::FloatWidths, String> {
    if s == "all" {
        return Ok(pisa_translator::FloatWidths::ALL);
    }
    let mut w = pisa_translator::FloatWidths::default();
    for part in s.split(',') {
        match part.trim() {
            "16" => w.f16 = true,
            "32" => w.f32 = true,
            "64" => w.f64 = true,
            other => {
                return Err(format!(
                    "{other:?} is not a float width: give 16, 32, 64 (comma-separated) or all"
                ))
            }
        }
    }
    Ok(w)
}

/// Translates and writes the requested form.
pub fn run(a: Args) -> Result<(), Failure> {
    let files = read_sources(&a.files)?;
    let options = pisa_translator::Options {
        subgroup_size: a.subgroup_size,
        hardware_subgroup_size: a.hardware_subgroup_size,
        virtual_lanes: a.lanes.into(),
        maximal_reconvergence: a.maximal_reconvergence,
        denorm_preserve: pisa_translator::FloatWidths {
            f16: a.denorm_preserve,
            f32: a.denorm_preserve,
            f64: a.denorm_preserve,
        },
        checked: a.checked,
        cancellable: a.cancellable,
        cancel_interval: pisa_translator::Options::default().cancel_interval,
        stack_depth: a.stack_depth,
        scratch_threshold: pisa_translator::Options::default().scratch_threshold,
        check_subgroup_size: a.check_subgroup_size,
        barriers_ignore_returned: a.barriers_ignore_returned,
        float: Some(pisa_translator::FloatModel {
            fused_fma: a.fused_fma.unwrap_or_default(),
            float64: a.float64,
            keeps_zero_operands: a.keeps_zero_operands,
            fast_math: a.fast_math,
            ..Default::default()
        }),
    };
    options.subgroup_mapping().map_err(Failure::usage)?;
    let t = pisa_translator::compile_linked(&files, &options).map_err(invalid)?;
    let bytes: Vec<u8> = match a.emit {
        Emit::Spv => t.spirv.iter().flat_map(|w| w.to_le_bytes()).collect(),
        Emit::Spvasm => pisa_translator::disassemble(&t.spirv).into_bytes(),
        Emit::Reflection => {
            let mut s = serde_json::to_string_pretty(&t.reflection).map_err(Failure::runtime)?;
            s.push('\n');
            s.into_bytes()
        }
    };
    match &a.output {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| Failure::usage(format!("cannot write {path}: {e}"))),
        None => {
            if a.emit == Emit::Spv && std::io::stdout().is_terminal() {
                return Err(Failure::usage(
                    "refusing to write binary SPIR-V to a terminal; use -o FILE or --emit spvasm",
                ));
            }
            std::io::stdout()
                .write_all(&bytes)
                .map_err(|e| Failure::usage(format!("cannot write: {e}")))
        }
    }
}
