//! pisa-runtime: a small Vulkan compute runtime for translated PISA kernels.
//!
//! Built on `ash` (the Vulkan loader is opened at run time) and `gpu-allocator`. One
//! [`Context`] per device gives host-visible [`Buffer`]s that kernels reach through their
//! device addresses, compute [`Pipeline`]s built from SPIR-V (local size through
//! specialization constants 0, 1, 2; arguments through push constants; no descriptor sets),
//! [`Stream`]s of launches, copies, fills and host transfers submitted as one submission and
//! waited for (or polled) through a [`Submission`], several in flight at once, with GPU
//! timestamps per command; and the blocking, time-limited [`Context::dispatch`] —
//! or [`Context::launch`] of several [`DispatchPart`]s — on top of them; the `_timed`
//! variants return the GPU time measured with timestamp queries ([`timestamps`]). The
//! driver's pipeline cache is kept on disk ([`disk_cache`]). Known driver bugs are avoided
//! before the driver loads and probed once it has ([`driver_bugs`]).
//!
//! Env variables: `PISA_VK_DEVICE` (device index, UUID or name substring), `PISA_VK_VALIDATION=1`
//! (Khronos validation layer; messages through [`Context::validation_messages`]),
//! `PISA_VK_TIMEOUT` (dispatch timeout in seconds, default 60), `PISA_VK_PIPELINE_CACHE`
//! (`0` turns the on-disk pipeline cache off, a path moves it). [`ContextOptions`] overrides
//! the last three from code.
//!
//! ```no_run
//! use pisa_runtime::{Context, DeviceSelector};
//! let ctx = Context::new(DeviceSelector::Default)?;
//! let buf = ctx.create_buffer(1024)?;
//! buf.write(0, &[1, 2, 3, 4])?;
//! println!("{} at {:#x}", ctx.info().name, buf.device_address());
//! # Ok::<(), pisa_runtime::Error>(())
//! ```
//!
//! A whole round trip: a pipeline from SPIR-V (here the fused-`Fma` probe of [`probe`], which
//! reads three `f32` at the address in its push constants and writes `Fma(a, b, c)` after
//! them), one blocking dispatch, the result read back.
//!
//! ```
//! use pisa_runtime::{Context, DeviceSelector, FeatureSet, PipelineDesc};
//! let ctx = Context::new(DeviceSelector::Default)?;
//! let spirv = pisa_runtime::probe::fma_probe_module(32);
//! let pipeline = ctx.create_pipeline(&PipelineDesc {
//!     spirv: &spirv,
//!     entry_point: "main",
//!     local_size: [1, 1, 1],
//!     shared_memory_size: 0,
//!     extra_shared_memory: 0,
//!     specialization: &[],
//!     push_constant_size: 8,
//!     required_subgroup_size: None,
//!     require_full_subgroups: false,
//!     virtual_lanes: None,
//!     required_features: FeatureSet {
//!         buffer_device_address: true,
//!         int64: true,
//!         ..FeatureSet::default()
//!     },
//!     name_for_errors: "the example",
//!     cancel_word_at: None,
//! })?;
//! let buf = ctx.create_buffer(16)?;
//! let input: Vec<u8> = [2.0f32, 3.0, 1.0, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
//! buf.write(0, &input)?;
//! // Blocks until the kernel has run (at most PISA_VK_TIMEOUT seconds).
//! ctx.dispatch(&pipeline, &buf.device_address().to_le_bytes(), [1, 1, 1])?;
//! let mut out = [0u8; 4];
//! buf.read(12, &mut out)?;
//! assert_eq!(f32::from_le_bytes(out), 7.0);
//! # Ok::<(), pisa_runtime::Error>(())
//! ```
//!
//! Costs: creating a [`Context`] loads the Vulkan driver and opens the device; creating a
//! pipeline compiles SPIR-V in the driver unless the context's cache has it; a dispatch
//! records one command buffer, submits it and waits on a fence; buffer reads and writes are
//! copies to and from mapped memory. [`Context::create_pipeline`] and each submission open
//! `tracing` spans (`create_pipeline`, `submit` of a stream, every dispatch included; level DEBUG).
#![warn(missing_docs)]

mod buffer;
mod cancel;
mod context;
mod device;
pub mod disk_cache;
pub mod driver_bugs;
mod error;
mod features;
mod import;
mod instance;
mod live;
pub mod memory_stats;
mod order;
mod pipeline;
pub mod probe;
mod shared;
mod slots;
mod stream;
pub mod timestamps;

pub use ash;
pub use buffer::{Buffer, BufferLease, KeepAlive, BUFFER_ALIGNMENT, GUARD_BYTES};
pub use cancel::{
    cancel_waits_on, CancelHandle, CANCELLED_BY_HOST, CANCEL_WORDS, STOPPED_AT_TIMEOUT,
};
pub use context::{
    parse_bool_env, Context, ContextOptions, DEFAULT_TIMEOUT_SECONDS, TIMEOUT_ENV, VALIDATION_ENV,
};
pub use device::{DeviceInfo, DeviceSelector, DeviceType, DEVICE_ENV};
pub use disk_cache::{DiskCache, PIPELINE_CACHE_ENV};
pub use driver_bugs::{avoid_known_driver_bugs, CpuCaps, DriverBugs};
pub use error::Error;
pub use features::{FeatureSet, FloatAtomics, FloatControls, SubgroupOps};
pub use import::ImportRefused;
pub use live::LiveBuffer;
pub use order::MAX_QUEUES;
pub use pipeline::{LaneShape, Pipeline, PipelineDesc, PIPELINE_CACHE_CAPACITY};
pub use probe::FusedFma;
pub use stream::{
    Completion, DispatchPart, LazyLaunch, LazyPart, ReadId, Stream, Submission, BATCH_DISPATCHES,
    CANCELLABLE_BATCH_GROUPS,
};
