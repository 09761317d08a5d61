//! # pisa-vk
//!
//! Run Intel Portable ISA (PISA v0.1) kernels on any Vulkan device — NVIDIA, AMD, Intel,
//! or the CPU through Mesa's lavapipe.
//!
//! ```
//! use pisa_vk::{Context, Module};
//! # let vector_add_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/vector_add.pisa");
//! let ctx = Context::new()?;
//! let module = Module::load(&ctx, vector_add_pisa)?; // "examples/vector_add.pisa"
//! let a = ctx.buffer_from(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let b = ctx.buffer_from(&[10.0f32, 20.0, 30.0, 40.0])?;
//! let c = ctx.zeroed::<f32>(4)?;
//! // 4 work-items in work-groups of 4; each argument fills one `.param`.
//! module.dispatch("vector_add", 4, 4, (&a, &b, &c, 4u32))?;
//! assert_eq!(c.read()?, vec![11.0, 22.0, 33.0, 44.0]);
//! # Ok::<(), pisa_vk::Error>(())
//! ```
//!
//! The pieces: [`Context`] (a device), [`Buffer`] (typed device memory; its address is what
//! a kernel's pointer parameter receives), [`Module`] (a translated, loaded PISA module, or
//! several linked into one program, with its globals), [`Symbol`] (a `.host_access`
//! variable), [`Stream`] (launches, copies, fills and transfers in one submission, waited
//! for or polled, with GPU timestamps), [`Kernel`] (a kernel with a signature checked at
//! load), [`Error`] (one error type that keeps translator diagnostics intact — its `Debug`
//! prints the rendered diagnostic, so `fn main() -> pisa_vk::Result<()>` reads well;
//! runtime failures are [`Error::Runtime`] holding a [`RuntimeError`], e.g.
//! `RuntimeError::Timeout`). The grid of a dispatch is the NDRange in work-items, as in
//! OpenCL; it need not be a multiple of the work-group size.
//!
//! What things cost (each item's documentation says it under "Cost:", with its "Errors:"):
//! - [`Context::new`] loads the Vulkan driver and opens the device: once per process.
//! - [`Module::load`] and its twins translate the program (linear in its size) and
//!   allocate its globals arena; no pipeline is compiled yet.
//! - The first launch of a kernel with a given work-group size compiles its pipeline in the
//!   driver (tens of milliseconds on lavapipe; [`Module::prepare`] does it ahead); the
//!   module keeps it.
//! - [`Module::dispatch`] blocks until the kernel has run (at most `PISA_VK_TIMEOUT`
//!   seconds); its host-side work is under a microsecond (`docs/performance.md`).
//! - [`Buffer`] and [`Symbol`] reads and writes are host copies through mapped memory: no
//!   submission, no wait for the device. [`Stream`] records into host memory and submits
//!   without waiting.

#![warn(missing_docs)]

pub mod args;
#[cfg(feature = "cli")]
pub mod argspec;
mod buffer;
mod context;
mod device;
mod dim;
mod error;
mod launch;
pub mod memcheck;
mod module;
#[cfg(feature = "reference")]
pub mod reference;
mod scratch;
mod stack;
pub mod stream;
mod subgroup_check;
mod symbol;

pub use args::{
    check_kind as check_arg_kind, pack_args, Arg, ArgSink, Args, IntoArgs, KernelArg, Param,
    Signature,
};
pub use buffer::Buffer;
pub use context::Context;
pub use device::{
    barriers_ignore_returned, can_require_subgroup_size, clustered_subgroup_size,
    device_float_model, device_options, kernel_features, required_features, translation_features,
    unsized_subgroup_size, virtual_lanes_subgroup_size,
};
pub use dim::{Dim3, DimInt, Dims, IntoDim3, Launch};
pub use error::{Error, Extent, Result};
pub use module::{program_name, Kernel, LaunchTimes, Module};
pub use pisa_runtime::driver_bugs;
pub use pisa_runtime::Error as RuntimeError;
pub use pisa_runtime::{
    avoid_known_driver_bugs, cancel_waits_on, CancelHandle, ContextOptions, CpuCaps, DeviceInfo,
    DeviceSelector, DeviceType, DiskCache, DriverBugs, FeatureSet, FusedFma, ImportRefused,
    KeepAlive, MAX_QUEUES,
};
pub use pisa_translator::memcheck::Violation;
pub use pisa_translator::reflect::{Element, ElementClass, Given, ParamInfo, ParamKind};
pub use pisa_translator::{FloatModel, FloatWidths};

/// Translation options ([`pisa_translator::Options`]): [`Module::from_source_with`] and
/// [`Module::from_sources_with`] take them and complete them for the context's device
/// ([`device_options`]); [`Module::load`] and [`Module::from_source`] use the defaults.
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Context, Error, Module, Options};
/// # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
/// let ctx = Context::new()?;
/// let src = std::fs::read_to_string(scale_pisa).unwrap(); // examples/scale.pisa
/// // The memory checker: a bad access is reported, not performed.
/// let options = Options { checked: true, ..Options::default() };
/// let m = Module::from_source_with(&ctx, "scale.pisa", &src, &options)?;
/// assert!(m.checked());
/// let data = ctx.buffer_from(&[1u32, 2, 3, 4])?;
/// let e = m.dispatch("scale", 5, 4, (&data, 5u32)).unwrap_err(); // one element too many
/// assert!(matches!(e, Error::MemoryViolation(_)), "{e}");
/// assert_eq!(data.read()?, [3, 6, 9, 12]);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use pisa_translator::Options;

/// A translated program ([`pisa_translator::Translation`]): SPIR-V words and reflection.
/// [`Module::translation`] gives the one a module was loaded from; [`Module::from_translation`]
/// loads one made elsewhere (translate once, load on several contexts).
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Context, Module};
/// # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
/// let ctx = Context::new()?;
/// let m = Module::load(&ctx, scale_pisa)?; // examples/scale.pisa
/// let t = m.translation();
/// assert_eq!(t.spirv[0], 0x0723_0203); // the SPIR-V magic number
/// let k = t.reflection.kernel("scale").unwrap();
/// assert_eq!(k.params.iter().map(|p| p.size).collect::<Vec<_>>(), [8, 4]);
/// // Another module from the same translation: its own globals arena, no translation.
/// let again = Module::from_translation(&ctx, "scale again", t.clone())?;
/// again.symbol("scale_factor")?.write(&[2u32])?;
/// assert_eq!(m.symbol("scale_factor")?.read::<u32>()?, [3]);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use pisa_translator::Translation;
pub use stream::{Completed, Pending, Stream, Submission};
pub use symbol::Symbol;

/// docs/guide.md, whose Rust examples are compiled and run as doc-tests (`cargo test -p
/// pisa-vk --doc`) so that the guide keeps up with the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
pub struct Guide;

/// README.md of the crate, whose example is compiled as a doc-test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    /// The main types can be shared between threads: a context, its buffers and modules
    /// are used from several at once (the Python package relies on it too).
    #[test]
    fn main_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::Context>();
        check::<crate::Module>();
        check::<crate::Buffer<f32>>();
        check::<crate::Error>();
        check::<crate::Completed>();
    }
}
