//! # pisa-vk
//!
//! Run Intel Portable ISA (PISA v0.1) kernels on any Vulkan device — NVIDIA, AMD, Intel,
//! or the CPU through Mesa's lavapipe.
//!
//! ```no_run
//! use pisa_vk::{Context, Module};
//! let ctx = Context::new()?;
//! let module = Module::load(&ctx, "examples/vector_add.pisa")?;
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
pub mod stream;
mod symbol;

pub use args::{pack_args, Arg, ArgSink, Args, IntoArgs, KernelArg, Param, Signature};
pub use buffer::Buffer;
pub use context::Context;
pub use device::{
    clustered_subgroup_size, device_float_model, device_options, kernel_features,
    required_features, translation_features,
};
pub use dim::{Dim3, DimInt, Dims, IntoDim3, Launch};
pub use error::{Error, Extent, Result};
pub use module::{program_name, Kernel, Module};
pub use pisa_runtime::Error as RuntimeError;
pub use pisa_runtime::{
    ContextOptions, DeviceInfo, DeviceSelector, DeviceType, DiskCache, FeatureSet, FusedFma,
};
pub use pisa_translator::memcheck::Violation;
pub use pisa_translator::{FloatModel, FloatWidths, Options, Translation};
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
