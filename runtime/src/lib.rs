//! pisa-runtime: a small Vulkan compute runtime for translated PISA kernels.
//!
//! Built on `ash` (the Vulkan loader is opened at run time) and `gpu-allocator`. One
//! [`Context`] per device gives host-visible [`Buffer`]s that kernels reach through their
//! device addresses, compute [`Pipeline`]s built from SPIR-V (local size through
//! specialization constants 0, 1, 2; arguments through push constants; no descriptor sets),
//! and synchronous, time-limited [`Context::dispatch`] — or [`Context::launch`] of several
//! [`DispatchPart`]s in one submission; the `_timed` variants return the GPU time measured
//! with timestamp queries ([`timestamps`]).
//!
//! Env variables: `PISA_VK_DEVICE` (device index or name substring), `PISA_VK_VALIDATION=1`
//! (Khronos validation layer; messages through [`Context::validation_messages`]),
//! `PISA_VK_TIMEOUT` (dispatch timeout in seconds, default 60). [`ContextOptions`] overrides
//! the last two from code.
//!
//! ```no_run
//! use pisa_runtime::{Context, DeviceSelector};
//! let ctx = Context::new(DeviceSelector::Default)?;
//! let buf = ctx.create_buffer(1024)?;
//! buf.write(0, &[1, 2, 3, 4])?;
//! println!("{} at {:#x}", ctx.info().name, buf.device_address());
//! # Ok::<(), pisa_runtime::Error>(())
//! ```
#![warn(missing_docs)]

mod buffer;
mod context;
mod device;
mod dispatch;
mod error;
mod features;
mod instance;
pub mod memory_stats;
mod pipeline;
pub mod probe;
pub mod timestamps;

pub use ash;
pub use buffer::{Buffer, BUFFER_ALIGNMENT};
pub use context::{Context, ContextOptions, DEFAULT_TIMEOUT_SECONDS, TIMEOUT_ENV, VALIDATION_ENV};
pub use device::{DeviceInfo, DeviceSelector, DeviceType, DEVICE_ENV};
pub use dispatch::DispatchPart;
pub use error::Error;
pub use features::{FeatureSet, FloatAtomics, FloatControls, SubgroupOps};
pub use pipeline::{Pipeline, PipelineDesc, PIPELINE_CACHE_CAPACITY};
pub use probe::FusedFma;
