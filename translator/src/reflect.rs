//! Reflection: everything a runtime needs to know about a translated module besides its
//! SPIR-V words — kernels and their argument blocks, the globals arena with its initializer
//! image and relocations, `.host_access` and exported names, and the device features each
//! kernel needs.
//!
//! It serializes to JSON for `pisa-vk translate --emit reflection`.

use crate::layout::Relocation;
use serde::Serialize;

/// Reflection of one translated module.
///
/// ```
/// use std::sync::Arc;
/// use pisa_translator::{compile, Options, SourceFile};
///
/// let src = ".version 0.1;\n.target 100;\n\
///            .global .align 4 .host_access(\"counter\") @C[4] = { .32b 41 };\n\
///            .kernel @k(.param[8] %out, .param[4] %n) {\n  return;\n}\n";
/// let t = compile(&Arc::new(SourceFile::new("k.pisa", src)), &Options::default()).unwrap();
/// let r = &t.reflection;
/// let k = r.kernel("k").expect("a kernel named k");
/// assert_eq!(k.params.iter().map(|p| p.size).collect::<Vec<_>>(), [8, 4]);
/// let counter = r.symbol("counter").expect("one variable of that name");
/// assert_eq!((counter.size, counter.element_width), (4, 4));
/// let at = counter.offset as usize;
/// assert_eq!(r.arena.image[at..at + 4], 41u32.to_le_bytes());
/// assert_eq!(r.symbol("nothing").unwrap_err(), 0);
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Reflection {
    /// Kernels, in declaration order.
    pub kernels: Vec<KernelInfo>,
    /// Module variables living in the globals arena.
    pub globals: Vec<GlobalInfo>,
    /// The globals arena.
    pub arena: ArenaInfo,
    /// Bytes of the shared arena as declared: the largest kernel's
    /// ([`KernelInfo::shared_size`]); each pipeline specializes it to its kernel's size.
    pub shared_size: u32,
    /// Bytes of private memory per work-item.
    pub private_size: u32,
    /// When the private arena lives in a per-launch scratch buffer (spec-notes §95): the
    /// bytes each invocation owns there. The host allocates `stride × invocations of the
    /// largest dispatch` bytes per launch and passes the address in the launch block's
    /// [`scratch`](crate::layout::launch::LaunchLayout::scratch) slot. `None`: the arena is
    /// in Private storage.
    pub scratch_stride: Option<u64>,
    /// For a checked translation ([`crate::Options::checked`]): the checked instructions
    /// and the memory variables, which the host needs to report a violation.
    pub checked: Option<crate::memcheck::CheckInfo>,
    /// What the float lowering assumed about the device ([`crate::Options::float`]): a
    /// module translated for fused `Fma` is exact only where `Fma` is fused (its kernels
    /// name `fusedFmaFloatN` among their features).
    pub float_model: crate::FloatModel,
    /// Whether the module computes some exact float operation in integers that the float64
    /// model ([`crate::FloatModel::float64`]) would compute with a few `f64` operations: a
    /// host translating for a device with `shaderFloat64` and no fused `Fma` should enable
    /// it and translate for that model.
    pub faster_with_float64: bool,
    /// Where the launch values and the argument block sit in the push constants.
    pub launch: crate::layout::launch::LaunchLayout,
    /// For a module with call cycles ([`crate::passes::recursion`]): the stack depth, the
    /// module variable where a stack overflow is recorded and the calls it may name.
    pub recursion: Option<crate::passes::recursion::RecursionInfo>,
    /// For a translation with [`crate::Options::check_subgroup_size`] whose kernels run on
    /// virtual lanes: where they record a hardware sub-group that breaks Vulkan's promise
    /// (spec-notes §105). Absent from the JSON when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subgroup_check: Option<SubgroupCheck>,
}

/// The name of the module `.global` variable (8 bytes) where a kernel on virtual lanes
/// that checks its sub-groups ([`crate::Options::check_subgroup_size`]) records one that is
/// not a full sub-group of the width it was translated for.
pub const SUBGROUP_FAULT: &str = "__pisa_subgroup_fault";

/// Where and against what width kernels on virtual lanes check their hardware sub-groups
/// ([`crate::Options::check_subgroup_size`], spec-notes §105).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SubgroupCheck {
    /// The hardware sub-group width the kernels were translated for (H).
    pub hardware_subgroup_size: u32,
    /// Arena offset of the record ([`SUBGROUP_FAULT`], in the reflection's `globals`): word
    /// 0 is the `SubgroupSize` a failing sub-group saw (0: no failure), word 1 how many of
    /// its invocations were active at the kernel's entry. The host reads and clears it after
    /// each launch.
    pub record: u64,
}

/// The specialization constant (a bool) that a kernel on virtual lanes must be specialized
/// with as true, so that the pipeline's work-group is the hardware shape
/// ([`KernelInfo::virtual_lanes`]).
pub const VIRTUAL_LANES_SPEC_ID: u32 = 7;

/// A kernel.
#[derive(Clone, Debug, Serialize)]
pub struct KernelInfo {
    /// The PISA name (without `@`); also the SPIR-V entry point name.
    pub name: String,
    /// Its `.param` parameters.
    pub params: Vec<ParamInfo>,
    /// Size of the argument block in bytes.
    pub param_size: u32,
    /// Whether the argument block travels inside the push constants (at
    /// [`LaunchLayout::params`](crate::layout::launch::LaunchLayout::params); else in a buffer
    /// whose address is there).
    pub params_inline: bool,
    /// Size of the push-constant block.
    pub push_constant_size: u32,
    /// `.reqd_work_group_size`.
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// Bytes of shared memory per work-group: the `.shared` variables of the functions it
    /// can reach and, when it can reach an atomic that takes a shared lock, the lock table
    /// (a multiple of 8; 0 for none). The size of its pipeline's shared arena
    /// (specialization constant 3, in words), checked against the device's
    /// `maxComputeSharedMemorySize` when the pipeline is created.
    pub shared_size: u32,
    /// Device features the kernel needs.
    pub features: Vec<Feature>,
    /// Sub-group size the kernel is translated for (what `%subgroupsize` reads), when it
    /// uses sub-group instructions.
    pub subgroup_size: Option<u32>,
    /// Sub-group size its pipeline must be created with (full sub-groups of exactly this
    /// size), when it uses sub-group instructions: `subgroup_size`, or a multiple of it when
    /// the kernel is translated for the clustered mapping
    /// ([`crate::Options::hardware_subgroup_size`]).
    pub hardware_subgroup_size: Option<u32>,
    /// PISA work-items each invocation carries when the kernel runs on virtual lanes
    /// ([`crate::VirtualLanes`], spec-notes §88): `subgroup_size / hardware_subgroup_size`,
    /// 1 when the widths agree. Its pipeline then runs `ceil(x·y·z / subgroup_size) ·
    /// hardware_subgroup_size` invocations in x for a PISA work-group of `x·y·z`, with
    /// specialization constant [`VIRTUAL_LANES_SPEC_ID`] set to 1. `None` natively.
    pub virtual_lanes: Option<u32>,
    /// For a native sub-group kernel (hardware sub-groups as wide as its own), the entry point
    /// of the same kernel on one virtual lane per invocation: what a launch whose work-group x
    /// size is no multiple of the sub-group size runs (its pipeline created as for
    /// [`KernelInfo::virtual_lanes`] `Some(1)`), so that any work-group size has partial
    /// sub-groups (spec-notes §88).
    pub partial_entry_point: Option<String>,
    /// A work-item may return before a barrier other work-items of its work-group reach
    /// (isa-9 §9.1, spec-notes §83): natively (`virtual_lanes` `None`) its results then
    /// depend on the device's barriers counting returned invocations as arrived, which
    /// lavapipe's do not ([`crate::Options::barriers_ignore_returned`]).
    pub returns_before_barrier: bool,
    /// Bytes of `Workgroup` memory its entry point on virtual lanes (a native kernel's
    /// partial entry point) declares besides the shared arena: the barrier service's words
    /// of a kernel with [`KernelInfo::returns_before_barrier`] (spec-notes §83), else 0.
    /// Counted with `shared_size` against `maxComputeSharedMemorySize` when that entry
    /// point's pipeline is created.
    pub barrier_service_size: u32,
}

/// A kernel parameter.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ParamInfo {
    /// Name without `%`.
    pub name: String,
    /// Offset in the argument block.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in the argument block.
    pub align: u32,
    /// `.addrspace`, if given.
    pub addrspace: Option<String>,
    /// How the kernel uses it ([`crate::mid::argkinds`], spec-notes §89).
    pub kind: ParamKind,
    /// The instruction that decides [`ParamInfo::kind`] (unknown: `None`), resolved against
    /// the program's sources.
    pub kind_at: Option<crate::memcheck::Location>,
    /// Its span in the program's span space (start, end), until resolved into `kind_at`.
    #[serde(skip)]
    pub kind_span: Option<(u32, u32)>,
}

/// A variable of the globals arena.
#[derive(Clone, Debug, Serialize)]
pub struct GlobalInfo {
    /// Name without `@`.
    pub name: String,
    /// `.host_access("NAME")`.
    pub host_access: Option<String>,
    /// Whether it is `.export`ed.
    pub exported: bool,
    /// `global` or `const`.
    pub space: String,
    /// Offset in the arena.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// The width in bytes of the elements it holds, for showing its contents
    /// ([`crate::ir::GlobalVar::element_width`]: its initializer's value width).
    pub element_width: u8,
}

/// The globals arena.
#[derive(Clone, Debug, Serialize)]
pub struct ArenaInfo {
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Initial contents (relocated values are zero).
    #[serde(serialize_with = "hex")]
    pub image: Vec<u8>,
    /// Values to patch with `arena address + target + addend`.
    pub relocations: Vec<Relocation>,
}

fn hex<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    s.serialize_str(&out)
}

/// Device features a kernel may need, named as Vulkan names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Feature {
    /// `bufferDeviceAddress` (always).
    BufferDeviceAddress,
    /// `shaderInt64` (always: addresses are 64-bit).
    Int64,
    /// `shaderInt8`.
    Int8,
    /// `shaderInt16`.
    Int16,
    /// `shaderFloat16`.
    Float16,
    /// `shaderFloat64`.
    Float64,
    /// `storageBuffer8BitAccess`.
    StorageBuffer8Bit,
    /// `storageBuffer16BitAccess`.
    StorageBuffer16Bit,
    /// Sub-group operations with a required sub-group size.
    SubgroupSizeControl,
    /// `shaderBufferInt64Atomics` (64-bit atomics in global memory).
    BufferInt64Atomics,
    /// `shaderSharedInt64Atomics` (64-bit atomics in shared memory).
    SharedInt64Atomics,
    /// `shaderMaximalReconvergence` (`VK_KHR_shader_maximal_reconvergence`): the kernel's
    /// entry point has the `MaximallyReconvergesKHR` execution mode.
    MaximalReconvergence,
    /// `shaderSignedZeroInfNanPreserveFloat16` (a property: the kernel preserves signed zeros,
    /// infinities and NaNs of half-precision values).
    SignedZeroInfNanPreserveFloat16,
    /// `shaderSignedZeroInfNanPreserveFloat32`.
    SignedZeroInfNanPreserveFloat32,
    /// `shaderSignedZeroInfNanPreserveFloat64`.
    SignedZeroInfNanPreserveFloat64,
    /// `shaderDenormPreserveFloat16` (a property: the kernel asks for half-precision
    /// denormals to be preserved).
    DenormPreserveFloat16,
    /// `shaderDenormPreserveFloat32`.
    DenormPreserveFloat32,
    /// `shaderDenormPreserveFloat64`.
    DenormPreserveFloat64,
    /// The device's `Fma` on half-precision values is fused (one rounding): not a Vulkan
    /// feature but a property pisa-vk probes when it opens a device.
    FusedFmaFloat16,
    /// The device's `Fma` on single-precision values is fused.
    FusedFmaFloat32,
    /// The device's `Fma` on double-precision values is fused.
    FusedFmaFloat64,
    /// The device's single-precision arithmetic keeps denormals (PISA's rule for `.f` and
    /// `.bf`, which compute in `f32`): not a Vulkan feature but a property pisa-vk probes, true
    /// wherever the kernel can ask for `DenormPreserve`. Needed by kernels that compute with
    /// `f32` values without that mode and without fast math (docs/spec-notes.md §111).
    KeepsDenormalsFloat32,
    /// The device's compiler computes float operations with an operand it proves zero as
    /// IEEE says (no `x + 0.0 -> x`, `x / 0.0 ->` undefined): not a Vulkan feature but a
    /// property pisa-vk probes (lavapipe lacks it). Needed by modules translated with
    /// [`crate::FloatModel::keeps_zero_operands`], whose exact sums and divisions then skip
    /// their zero fix-ups (docs/spec-notes.md §113).
    KeepsZeroOperands,
}

impl Feature {
    /// The Vulkan spelling.
    pub fn vulkan_name(self) -> &'static str {
        match self {
            Feature::BufferDeviceAddress => "bufferDeviceAddress",
            Feature::Int64 => "shaderInt64",
            Feature::Int8 => "shaderInt8",
            Feature::Int16 => "shaderInt16",
            Feature::Float16 => "shaderFloat16",
            Feature::Float64 => "shaderFloat64",
            Feature::StorageBuffer8Bit => "storageBuffer8BitAccess",
            Feature::StorageBuffer16Bit => "storageBuffer16BitAccess",
            Feature::SubgroupSizeControl => "subgroupSizeControl",
            Feature::BufferInt64Atomics => "shaderBufferInt64Atomics",
            Feature::SharedInt64Atomics => "shaderSharedInt64Atomics",
            Feature::MaximalReconvergence => "shaderMaximalReconvergence",
            Feature::SignedZeroInfNanPreserveFloat16 => "shaderSignedZeroInfNanPreserveFloat16",
            Feature::SignedZeroInfNanPreserveFloat32 => "shaderSignedZeroInfNanPreserveFloat32",
            Feature::SignedZeroInfNanPreserveFloat64 => "shaderSignedZeroInfNanPreserveFloat64",
            Feature::DenormPreserveFloat16 => "shaderDenormPreserveFloat16",
            Feature::DenormPreserveFloat32 => "shaderDenormPreserveFloat32",
            Feature::DenormPreserveFloat64 => "shaderDenormPreserveFloat64",
            Feature::FusedFmaFloat16 => "fusedFmaFloat16",
            Feature::FusedFmaFloat32 => "fusedFmaFloat32",
            Feature::FusedFmaFloat64 => "fusedFmaFloat64",
            Feature::KeepsDenormalsFloat32 => "keepsDenormalsFloat32",
            Feature::KeepsZeroOperands => "keepsZeroOperands",
        }
    }
}

/// The `.param` parameters of a kernel with their offsets in the argument block, and the
/// block's size (PISA's argument ABI: [`crate::ir::Function::param_layout`]).
pub fn params_of(f: &crate::ir::Function) -> (Vec<ParamInfo>, u32) {
    let (offsets, size) = f.param_layout();
    let params = f
        .params
        .iter()
        .zip(offsets)
        .map(|(p, offset)| ParamInfo {
            name: p.name.clone(),
            offset,
            size: p.size,
            align: p.align,
            addrspace: p.addrspace.map(|s| s.as_str().to_string()),
            ..ParamInfo::default()
        })
        .collect();
    (params, size)
}

impl Reflection {
    /// The kernel named `name` (without `@`), if the module has one.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The arena variable the host means by `name` ([`find_symbol`]): `Err(n)` when no
    /// variable (`n` = 0) or several internal variables of linked modules (`n` > 1) have it.
    pub fn symbol(&self, name: &str) -> Result<&GlobalInfo, usize> {
        let vars = self
            .globals
            .iter()
            .map(|g| (g.name.as_str(), g.host_access.as_deref(), g.exported));
        find_symbol(vars, name).map(|i| &self.globals[i])
    }
}

/// Which module variable the host means by `name` (with or without `@`), among `vars` =
/// `(name, .host_access name, exported)` of every variable of a (linked) module: the one whose
/// `.host_access` name it is, else the exported one of that name, else the only one of that
/// name. The linker makes `.host_access` names and exports unique, but internal variables of
/// two modules may share a name: then `Err(count)` says how many (`Err(0)`: none).
pub fn find_symbol<'a>(
    vars: impl Iterator<Item = (&'a str, Option<&'a str>, bool)> + Clone,
    name: &str,
) -> Result<usize, usize> {
    let bare = name.strip_prefix('@').unwrap_or(name);
    let host = |h: Option<&str>| h == Some(name) || h == Some(bare);
    if let Some(i) = vars.clone().position(|(_, h, _)| host(h)) {
        return Ok(i);
    }
    if let Some(i) = vars.clone().position(|(n, _, e)| e && n == bare) {
        return Ok(i);
    }
    let mut named = vars.enumerate().filter(|(_, (n, _, _))| *n == bare);
    match (named.next(), named.count()) {
        (Some((i, _)), 0) => Ok(i),
        (None, _) => Err(0),
        (Some(_), more) => Err(more + 1),
    }
}

/// How a kernel uses one of its parameters, as far as the whole kernel (and the functions it
/// calls with the parameter) shows ([`crate::mid::argkinds`]); what every launch path checks
/// an argument against ([`ParamKind::refusal`], spec-notes §89).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// Nothing decides it (not used, used in ways that disagree, stored or passed where the
    /// analysis cannot follow): every argument of the right size is taken.
    #[default]
    Unknown,
    /// An address the kernel dereferences (loads, stores or atomics through it).
    Address {
        /// The space of the accesses: `global`, `generic`, `shared`, ... or `mixed`.
        space: String,
        /// The data behind it, where every access agrees on the width.
        element: Option<Element>,
        /// Whether the kernel may read through it (a load or an atomic).
        read: bool,
        /// Whether the kernel may write through it (a store or an atomic).
        write: bool,
    },
    /// An integer the kernel does arithmetic or comparisons with, never dereferences.
    Int {
        /// Its width in bits (the parameter's size).
        bits: u32,
        /// `Some(false)`: only unsigned operations decide its sign (`ucmp`, `udiv`, `umin`,
        /// `zext`, ...); `Some(true)`: only signed ones; `None`: no operation or both.
        signed: Option<bool>,
    },
    /// A float the kernel computes with (`fadd.f`, `fmad.df`, ...).
    Float {
        /// Its width in bits.
        bits: u32,
    },
}

/// The data an address parameter points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Element {
    /// The width of every access through it, in bits.
    pub bits: u32,
    /// What the accessed values are used as: float or integer arithmetic (`None`: neither,
    /// or both).
    pub class: Option<ElementClass>,
}

/// Whether data is used as floats or as integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElementClass {
    /// Float arithmetic.
    Float,
    /// Integer arithmetic or comparisons.
    Int,
}

/// What a host passes for a parameter, as far as its kind goes ([`ParamKind::refusal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given {
    /// Bytes the caller vouches for (`Arg::raw`, `bytes:`, `raw_address`): never refused.
    Raw,
    /// The address of a buffer (or array) whose elements are `element`, when known.
    Buffer {
        /// The element type's width and class (`None`: untyped, or bytes).
        element: Option<Element>,
    },
    /// An integer of `bits` bits; `negative` when its value is below zero.
    Int {
        /// Width in bits.
        bits: u32,
        /// Whether the value is negative.
        negative: bool,
    },
    /// A float of `bits` bits.
    Float {
        /// Width in bits.
        bits: u32,
    },
}

impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Given::Raw => write!(f, "raw bytes"),
            Given::Buffer { element: Some(e) } => write!(f, "a buffer of {}", e),
            Given::Buffer { element: None } => write!(f, "a buffer"),
            Given::Int { negative: true, .. } => write!(f, "a negative integer"),
            Given::Int { .. } => write!(f, "an integer"),
            Given::Float { bits } => write!(f, "a {bits}-bit float"),
        }
    }
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.class {
            Some(ElementClass::Float) => write!(f, "{}-bit floats", self.bits),
            Some(ElementClass::Int) => write!(f, "{}-bit integers", self.bits),
            None => write!(f, "{}-bit values", self.bits),
        }
    }
}

impl std::fmt::Display for ParamKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamKind::Unknown => write!(f, "unknown"),
            ParamKind::Address {
                space,
                element,
                read,
                write,
            } => {
                write!(f, "an address ({space}")?;
                if let Some(e) = element {
                    write!(f, ", of {e}")?;
                }
                let access = match (read, write) {
                    (true, true) => ", read and written",
                    (true, false) => ", read only",
                    (false, true) => ", written only",
                    (false, false) => "",
                };
                write!(f, "{access})")
            }
            ParamKind::Int { bits, signed } => {
                let sign = match signed {
                    Some(true) => "signed ",
                    Some(false) => "unsigned ",
                    None => "",
                };
                write!(f, "a {bits}-bit {sign}integer")
            }
            ParamKind::Float { bits } => write!(f, "a {bits}-bit float"),
        }
    }
}

impl ParamKind {
    /// Why an argument `given` clearly contradicts this kind (what the kernel uses the
    /// parameter as), or `None` when it is taken. Clear contradictions only (spec-notes §89):
    /// a float or a negative integer for an unsigned integer, a float for any integer, an
    /// integer or a float where the kernel dereferences an address, a buffer where it does
    /// integer or float arithmetic only, a buffer of floats where the kernel accesses integer
    /// data or floats of another width (buffers of integer element types, bytes included,
    /// and untyped ones are taken for any data: they are how bits travel). [`Given::Raw`]
    /// and [`ParamKind::Unknown`] are never refused.
    pub fn refusal(&self, given: Given) -> Option<&'static str> {
        use ParamKind as K;
        match (self, given) {
            (_, Given::Raw) | (K::Unknown, _) => None,
            (K::Address { .. }, Given::Int { .. } | Given::Float { .. }) => {
                Some("the kernel dereferences it as an address")
            }
            (
                K::Address {
                    element: Some(want),
                    ..
                },
                Given::Buffer { element: Some(got) },
            ) => {
                // Integer element types are how bits and raw memory travel (a `Buffer<u32>`
                // to look at float results bit by bit, a `Buffer<u64>` of words): taken for
                // any data. Float elements contradict integer data, and float data of
                // another width.
                let contradicts = got.class == Some(ElementClass::Float)
                    && match want.class {
                        Some(ElementClass::Int) => true,
                        Some(ElementClass::Float) => want.bits != got.bits,
                        None => false,
                    };
                contradicts.then_some(
                    "its element type contradicts the data the kernel accesses through it",
                )
            }
            (K::Address { .. }, Given::Buffer { .. }) => None,
            // A 64-bit integer the kernel only adds and multiplies (no comparison, division or
            // extension decides a sign) may be address arithmetic whose result goes unused on
            // this path (a kernel that offsets `%in` but works in `.shared` memory): taken.
            // A narrower one cannot hold an address; a compared one is a count.
            (K::Int { bits, signed }, Given::Buffer { .. }) if *bits < 64 || signed.is_some() => {
                Some("the kernel computes with its value and never dereferences it")
            }
            (K::Float { .. }, Given::Buffer { .. }) => {
                Some("the kernel computes with its value and never dereferences it")
            }
            (K::Int { .. }, Given::Float { .. }) => Some("the kernel uses it as an integer"),
            (
                K::Int {
                    signed: Some(false),
                    ..
                },
                Given::Int { negative: true, .. },
            ) => Some("the kernel uses it as an unsigned integer"),
            (K::Float { .. }, Given::Int { .. }) => Some("the kernel uses it as a float"),
            _ => None,
        }
    }
}

/// Records the argument kinds of every kernel's parameters ([`crate::mid::argkinds`]) in
/// `reflection`, with the source location of the instruction that decides each.
pub fn record_kinds(
    module: &crate::ir::Module,
    reflection: &mut Reflection,
    sources: &crate::span::SourceMap,
) {
    let kinds = crate::mid::argkinds::infer(module);
    for (f, kinds) in module.functions.iter().zip(kinds) {
        let Some(kinds) = kinds else { continue };
        let Some(k) = reflection.kernels.iter_mut().find(|k| k.name == f.name) else {
            continue;
        };
        set_kinds(&mut k.params, kinds, sources);
    }
}

/// The `.param`s of kernel `name` of a linked program, with their kinds (what
/// [`KernelInfo::params`] holds after a translation), without translating it: for a host that
/// runs the program elsewhere (the reference interpreter). `None`: no kernel of that name.
pub fn kernel_params(program: &crate::Program, name: &str) -> Option<Vec<ParamInfo>> {
    let module = &program.module;
    let i = module
        .functions
        .iter()
        .position(|f| f.is_kernel() && f.body.is_some() && f.name == name)?;
    let (mut params, _) = params_of(&module.functions[i]);
    let kinds = crate::mid::argkinds::infer(module).swap_remove(i)?;
    set_kinds(&mut params, kinds, &program.sources);
    Some(params)
}

fn set_kinds(
    params: &mut [ParamInfo],
    kinds: Vec<(ParamKind, Option<crate::span::Span>)>,
    sources: &crate::span::SourceMap,
) {
    for (p, (kind, span)) in params.iter_mut().zip(kinds) {
        p.kind = kind;
        p.kind_span = span.map(|s| (s.start, s.end));
        p.kind_at = span.map(|s| crate::memcheck::Location::of(sources, s));
    }
}
