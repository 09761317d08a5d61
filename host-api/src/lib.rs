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
//! module.dispatch("vector_add", 4u64, 4u64, &[(&a).into(), (&b).into(), (&c).into(), 4u32.into()])?;
//! assert_eq!(c.read()?, vec![11.0, 22.0, 33.0, 44.0]);
//! # Ok::<(), pisa_vk::Error>(())
//! ```
//!
//! The pieces: [`Context`] (a device), [`Buffer`] (typed device memory; its address is what
//! a kernel's pointer parameter receives), [`Module`] (a translated, loaded PISA module, or
//! several linked into one program, with its globals), [`Symbol`] (a `.host_access` variable), [`Error`] (one error type that
//! keeps translator diagnostics intact; runtime failures are [`Error::Runtime`] holding a
//! [`RuntimeError`], e.g. `RuntimeError::Timeout`). The grid of a dispatch is the NDRange in
//! work-items, as in OpenCL; it need not be a multiple of the work-group size.

#![warn(missing_docs)]

pub mod argspec;
mod buffer;
mod context;
mod error;
mod launch;
mod module;
pub mod reference;

pub use buffer::Buffer;
pub use context::Context;
pub use error::{Error, Result};
pub use module::{
    clustered_subgroup_size, device_float_model, device_options, kernel_features, pack_args, program_name,
    required_features, translation_features, Arg, Dim3, Launch, Module, Symbol,
};
pub use pisa_runtime::Error as RuntimeError;
pub use pisa_runtime::{
    ContextOptions, DeviceInfo, DeviceSelector, DeviceType, FeatureSet, FusedFma,
};
pub use pisa_translator::{FloatModel, FloatWidths, Options};
