//! The translator's contract with its callers: the [`Options`] a translation takes (sub-group
//! width and mapping, float model, float controls, the checked translation) and the
//! [`Translation`] it returns. Every stage reads these; none owns them.

use crate::mid::lanes::LaneNumbering;
use crate::reflect::Reflection;

/// Translation options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Sub-group width to translate for: 32 is PISA's; another width is non-conforming and
    /// only for devices that cannot run 32-wide sub-groups (`%subgroupsize` then reads it).
    /// A power of two from 1 to 32.
    pub subgroup_size: u32,
    /// The hardware (SPIR-V) sub-group width the kernels are run with, when it differs from
    /// [`Options::subgroup_size`]: each aligned cluster of `subgroup_size` lanes of a
    /// hardware sub-group is then one PISA sub-group (the "clustered" mapping, e.g. PISA's
    /// 32 lanes as one half of an AMD wave64). `None` (or `subgroup_size`) maps one PISA
    /// sub-group to one hardware sub-group. A power-of-two multiple of `subgroup_size`, at
    /// most 128, or narrower than `subgroup_size` for virtual lanes (which also run clusters:
    /// one work-item per invocation, spec-notes §115); see [`SubgroupMapping`].
    pub hardware_subgroup_size: Option<u32>,
    /// Which kernels run on virtual lanes: each invocation carries `subgroup_size /
    /// hardware` PISA work-items (one when the widths agree or the hardware is wider, each
    /// aligned cluster of `subgroup_size` lanes then one PISA sub-group) under a lane mask
    /// (spec-notes §88, §115). [`VirtualLanes::Auto`] (the default) puts sub-group kernels there where the
    /// hardware sub-group is narrower than `subgroup_size`. Each mode puts kernels in which a
    /// work-item may return before a barrier others reach there as it puts sub-group kernels,
    /// and always with [`Options::barriers_ignore_returned`] (spec-notes §83).
    pub virtual_lanes: VirtualLanes,
    /// Ask for maximal reconvergence (`SPV_KHR_maximal_reconvergence`) in kernels that use
    /// sub-group instructions, so that `%activemask` and the lanes taking part in a sub-group
    /// instruction are exactly the work-items that reached it together. Only for devices with
    /// `shaderMaximalReconvergence`: the host API sets it when the context enabled that.
    pub maximal_reconvergence: bool,
    /// Float widths (16, 32, 64) whose denormals the kernels ask the driver to preserve
    /// (`DenormPreserve`), so that a driver whose default flushes them cannot. Only for
    /// devices with `shaderDenormPreserveFloatN`: the host API sets it from the device.
    /// Where a device lacks the control its default applies (lavapipe keeps denormals).
    pub denorm_preserve: FloatWidths,
    /// What the floating-point lowering may assume about the device. `None` (the default)
    /// translates the portable model, exact on every Vulkan device with no `Float64` for
    /// `.f`/`.hf`/`.bf` code; the host API replaces `None` with the model of the device a
    /// module is loaded on ([`FloatModel::for_device`]).
    pub float: Option<FloatModel>,
    /// The checked translation (a memory checker): every load, store, atomic and vector
    /// access checks the whole access against the allocations it may touch and its
    /// alignment before it is performed, and the first violation of a dispatch is recorded
    /// for the host ([`checked`], [`crate::memcheck`]). The reflection then has
    /// [`Reflection::checked`](crate::reflect::Reflection::checked). Slower; for finding
    /// bugs.
    pub checked: bool,
    /// Cancellable kernels (spec-notes §91): each loop of the module checks, once every
    /// [`Options::cancel_interval`] iterations, a *cancel word* in host-visible memory whose
    /// address the launch block carries
    /// ([`LaunchLayout::cancel`](crate::layout::launch::LaunchLayout::cancel)), and each
    /// kernel not on virtual lanes checks it at its entry (spec-notes §100); once the host
    /// (a timeout, the user) or the memory checker (its first violation) has set it, every
    /// work-item returns.
    /// Off by default ([`DEFAULT_CANCELLABLE`]); a checked translation has the checks
    /// whatever this says.
    pub cancellable: bool,
    /// How often a cancellable loop reads the cancel word (spec-notes §107): at its first
    /// iteration and then once every this many iterations of that loop (the loop is
    /// strip-mined: an outer loop reads the word and runs this many iterations at most); 0
    /// and 1 read it at every iteration. Checked translations too: a work-item with a
    /// violation of its own stops at its loop's next read. Kernels on virtual lanes read it
    /// at every iteration whatever this says. Default [`DEFAULT_CANCEL_INTERVAL`].
    pub cancel_interval: u32,
    /// The most nested activations of the functions of one call cycle a work-item may have
    /// (recursion runs on an explicit stack of this many frames, [`crate::passes::recursion`];
    /// a deeper call fails the launch with a stack overflow). At least 1; default
    /// [`DEFAULT_STACK_DEPTH`](crate::passes::recursion::DEFAULT_STACK_DEPTH). Does nothing
    /// for a module without call cycles.
    pub stack_depth: u32,
    /// Where `.private` memory lives (spec-notes §95): a module whose private arena (the
    /// `.private` variables, the stop flag, the explicit stacks of call cycles; times the
    /// lanes of an invocation on virtual lanes) takes at most this many bytes per invocation
    /// keeps it in Private storage; a larger one in a slice of a device *scratch* buffer the
    /// runtime allocates per launch, so that the driver's compile time and memory do not
    /// grow with it. Default [`DEFAULT_SCRATCH_THRESHOLD`]; 0 puts every private arena in
    /// scratch.
    pub scratch_threshold: u32,
    /// For a device whose pipelines cannot require a sub-group size (no
    /// `subgroupSizeControl`, spec-notes §105): each kernel on virtual lanes (and each
    /// partial entry point) checks at entry that its hardware sub-group has
    /// `SubgroupSize` equal to the hardware width it was translated for and that every
    /// invocation of it is active (full sub-groups). Where either fails, the kernel records
    /// what it saw in a module variable ([`crate::reflect::SubgroupCheck`]) and returns, and
    /// the host fails the launch. Off by default: with a required sub-group size and full
    /// sub-groups the pipeline itself guarantees both.
    pub check_subgroup_size: bool,
    /// The device's barriers do not count invocations that returned as arrived (spec-notes
    /// §83; lavapipe, where a work-group in which some returned before two barriers loses
    /// its results): kernels in which a work-item may return before a barrier others reach
    /// then run on virtual lanes whatever the widths (one work-item per invocation where the
    /// hardware is as wide as `subgroup_size`). Off by default (natively such kernels count
    /// on the driver, as 32-lane GPUs' barriers do); they go on virtual lanes anyway wherever
    /// sub-group kernels do. The host API sets it for lavapipe.
    pub barriers_ignore_returned: bool,
}

/// The default [`Options::scratch_threshold`]: 64 KiB. Measured on lavapipe (docs/
/// performance.md, "Private memory in scratch"): a kernel with a `.private` array compiles
/// in the same time and memory as one without up to 64 KiB, and in 2 s and 233 MB at
/// 1 MiB, 28 s and 2.2 GB at 16 MiB; in scratch, every size compiles like a small one.
pub const DEFAULT_SCRATCH_THRESHOLD: u32 = 64 << 10;

/// Whether translations are cancellable unless told otherwise ([`Options::cancellable`]):
/// no, because the check costs more than 2 % on some kernels of
/// `host-api/benches/vs_glsl.rs` on lavapipe (up to twice the time of a loop with a tiny
/// body; docs/performance.md, "Cancellable kernels").
pub const DEFAULT_CANCELLABLE: bool = false;

/// The default [`Options::cancel_interval`]: every 8 iterations. Measured on lavapipe
/// (docs/performance.md, "Cancellable kernels"): a load in a loop is a masked gather there,
/// so reading the word at every iteration costs a small loop 1.6x to 5x its time; strips of
/// 8 to 32 iterations cost 1.1x to 1.9x, longer strips a little more.
pub const DEFAULT_CANCEL_INTERVAL: u32 = 8;

/// Which kernels a translation puts on virtual lanes (spec-notes §88); kernels in which a
/// work-item may return before a barrier others reach count as sub-group kernels here
/// (spec-notes §83).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum VirtualLanes {
    /// Sub-group kernels, where the hardware sub-group is narrower than the PISA one.
    #[default]
    Auto,
    /// Every sub-group kernel, whatever the widths: partial sub-groups for any work-group
    /// size also where the hardware is as wide as PISA's sub-group (one lane per invocation).
    SubgroupKernels,
    /// Every kernel, cross-lane or not (to measure the cost of the mask).
    AllKernels,
}

/// A set of float widths (16, 32, 64 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FloatWidths {
    /// Half precision.
    pub f16: bool,
    /// Single precision.
    pub f32: bool,
    /// Double precision.
    pub f64: bool,
}

impl FloatWidths {
    /// Every width.
    pub const ALL: FloatWidths = FloatWidths {
        f16: true,
        f32: true,
        f64: true,
    };

    /// Whether the width `w` (16, 32 or 64) is in the set.
    pub fn width(&self, w: u32) -> bool {
        match w {
            16 => self.f16,
            32 => self.f32,
            _ => self.f64,
        }
    }
}

/// What the floating-point lowering may assume about the device it translates for
/// (docs/spec-notes.md §55). Every model gives PISA's exact results except
/// [`FloatModel::fast_math`]; they differ in speed and in the device features they need.
///
/// - Portable ([`FloatModel::default`]): no assumption. Exact operations that the device
///   cannot do in one IEEE instruction are computed with 32- and 64-bit integers, so no
///   `.f`/`.hf`/`.bf` operation needs `Float64`.
/// - [`FloatModel::fused_fma`]: the device's `Fma` is fused for those widths (probed by the
///   runtime); `fmad` is one `Fma` and the exact division and root are corrected with it.
///   Kernels that rely on it name `fusedFmaFloatN` among their features, and the runtime
///   refuses them on a device whose `Fma` is not fused.
/// - [`FloatModel::float64`]: where `Fma` is not fused, exact `.f` results may be computed
///   in `f64` (shorter than the integer forms where the device has fast `f64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FloatModel {
    /// Widths whose SPIR-V `Fma` (GLSL.std.450) the device computes with a single rounding.
    pub fused_fma: FloatWidths,
    /// Whether exact `.f`/`.hf`/`.bf` lowerings may compute in `f64` (`Float64`).
    pub float64: bool,
    /// Non-conforming fast math: `fmad` is the device's `Fma` whether fused or not,
    /// transcendentals are GLSL.std.450's, division and roots the device's, and every
    /// rounding mode is rounded to nearest even. Measured errors: docs/float-accuracy.md.
    pub fast_math: bool,
    /// The device's compiler computes a float operation with an operand it proves to be zero
    /// as IEEE and `SignedZeroInfNanPreserve` require (the runtime's probe says so), rather
    /// than by a shortcut: `x + 0.0 -> x` and `0.0 - x -> -x` (wrong for zeros:
    /// `-0 + 0 = +0`), `0.0 / x -> +0` and `x / 0.0 ->` undefined (wrong for zeros,
    /// infinities and NaNs). lavapipe's code generator takes them, for any operand its
    /// compiler proves constant, after inlining and memory forwarding, so without this
    /// assurance (the portable default) every exact `fadd`, `fsub` and `fmad` recomputes the
    /// sign of an exactly zero result from its operands' bits, and every division by the
    /// device its zero and infinite special cases: a few integer instructions each (spec-notes
    /// §113). With it, only operations whose operand the translator sees may be constant do
    /// (`crate::mid::constants`, §44).
    pub keeps_zero_operands: bool,
    /// For tests only: with [`FloatModel::fused_fma`], compute every `Fma` the fused
    /// lowerings emit exactly in integers, so that their algorithms run (and are checked) on a
    /// device whose `Fma` is not fused; kernels then do not need `fusedFmaFloatN`.
    #[doc(hidden)]
    #[serde(skip)]
    pub emulated_fma: bool,
}

impl FloatModel {
    /// The model for a device whose `Fma` is fused for `fused` and that has `Float64` or not.
    pub fn for_device(fused: FloatWidths, float64: bool) -> FloatModel {
        FloatModel {
            fused_fma: fused,
            float64,
            ..FloatModel::default()
        }
    }
}

impl Options {
    /// The default options, translating for sub-groups of `n` work-items
    /// ([`Options::subgroup_size`]).
    pub fn with_subgroup_size(n: u32) -> Options {
        Options {
            subgroup_size: n,
            ..Options::default()
        }
    }

    /// The default options, translating for PISA sub-groups of `n` work-items that are
    /// `n`-lane clusters of hardware sub-groups of `hardware` lanes
    /// ([`Options::hardware_subgroup_size`]).
    pub fn clustered(n: u32, hardware: u32) -> Options {
        Options {
            subgroup_size: n,
            hardware_subgroup_size: Some(hardware),
            ..Options::default()
        }
    }

    /// The sub-group mapping these options ask for, or why it is invalid.
    pub fn subgroup_mapping(&self) -> Result<SubgroupMapping, String> {
        SubgroupMapping::new(self.subgroup_size, self.hardware_subgroup_size)
    }
}

/// How PISA sub-groups map onto hardware (SPIR-V `Subgroup` scope) sub-groups: one to one
/// (native), or as aligned clusters of [`width`](Self::width) lanes of a hardware sub-group of
/// [`hardware`](Self::hardware) lanes (clustered). The lowering of `%laneid`, `%activemask`,
/// `%subgroupsize` and the isa-7 instructions reads it (`ops_subgroup.rs`).
/// [`lanes`](Self::lanes) says whether the function being lowered uses that mapping or
/// numbers lanes by linear local id (kernels without cross-lane operations,
/// [`crate::mid::lanes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubgroupMapping {
    /// The PISA sub-group width N (`%subgroupsize`): a power of two from 1 to 32.
    pub width: u32,
    /// The hardware sub-group width H the pipeline must be created with: N, a power-of-two
    /// multiple of N up to 128 (Vulkan's largest sub-group; clustered, natively or on
    /// virtual lanes of one work-item per invocation), or a power of two below N (virtual
    /// lanes only).
    pub hardware: u32,
    /// How the function being lowered numbers lanes (set per function by the back end;
    /// [`LaneNumbering::Hardware`] from [`SubgroupMapping::new`]).
    pub lanes: LaneNumbering,
    /// PISA work-items each invocation of the function being lowered carries: `N / H` (at
    /// least 1) on virtual lanes, 0 natively (set per function by the back end).
    pub virtual_lanes: u32,
}

impl SubgroupMapping {
    /// PISA sub-groups of `width` lanes on hardware sub-groups of `hardware` lanes (`None`:
    /// the same width); an error names the invalid combination.
    pub fn new(width: u32, hardware: Option<u32>) -> Result<SubgroupMapping, String> {
        if !width.is_power_of_two() || width > 32 {
            return Err(format!(
                "sub-group size {width}: must be a power of two from 1 to 32"
            ));
        }
        let hw = hardware.unwrap_or(width);
        if !hw.is_power_of_two() || hw > 128 {
            return Err(format!(
                "hardware sub-group size {hw}: must be a power of two from 1 to 128"
            ));
        }
        Ok(SubgroupMapping {
            width,
            hardware: hw,
            lanes: LaneNumbering::Hardware,
            virtual_lanes: 0,
        })
    }

    /// Whether a hardware sub-group holds several PISA sub-groups.
    pub fn clustered(&self) -> bool {
        self.hardware > self.width
    }

    /// PISA work-items per invocation on virtual lanes (K): `N / H`, or 1 when the hardware
    /// is as wide or wider (clustered virtual lanes: each aligned N-lane cluster of a
    /// hardware sub-group is one PISA sub-group, one work-item per invocation).
    pub fn lanes_per_invocation(&self) -> u32 {
        (self.width / self.hardware).max(1)
    }

    /// PISA work-items one hardware sub-group carries on virtual lanes: `K·H`, which is N, or
    /// H when clustered.
    pub fn items_per_hardware_subgroup(&self) -> u32 {
        self.width.max(self.hardware)
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            subgroup_size: 32,
            hardware_subgroup_size: None,
            virtual_lanes: VirtualLanes::Auto,
            maximal_reconvergence: false,
            denorm_preserve: FloatWidths::default(),
            float: None,
            checked: false,
            cancellable: DEFAULT_CANCELLABLE,
            cancel_interval: DEFAULT_CANCEL_INTERVAL,
            stack_depth: crate::passes::recursion::DEFAULT_STACK_DEPTH,
            scratch_threshold: DEFAULT_SCRATCH_THRESHOLD,
            check_subgroup_size: false,
            barriers_ignore_returned: false,
        }
    }
}

/// A translated module: what [`crate::compile`] and [`crate::compile_linked`] return.
///
/// The SPIR-V is one module (version 1.5, Vulkan 1.2 environment) with one `GLCompute` entry
/// point per kernel, named as the kernel without `@`. Its local size is specialization
/// constants 0, 1, 2 and the kernel's arguments arrive through push constants (or a buffer
/// whose address they hold, [`crate::reflect::KernelInfo::params_inline`]); the reflection
/// says where everything is.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The SPIR-V words.
    pub spirv: Vec<u32>,
    /// What the runtime needs to know.
    pub reflection: Reflection,
}
