//! [`Context`]: one logical device with its allocator, pipeline caches and dispatch queue.
//!
//! The Vulkan objects that must outlive every buffer and pipeline (instance, device, allocator)
//! live in a reference-counted [`DeviceShared`]; buffers and pipelines hold an `Arc` to it, so
//! they stay valid even when they outlive the `Context`, and the device is destroyed only after
//! the last of them is gone.
//!
//! Destruction order: dropping the `Context` releases its cached pipelines (each destroyed when
//! its last `Arc` goes), the command pool and fence, and the `VkPipelineCache`; when the last
//! buffer and pipeline are gone too, `DeviceShared` drops the allocator (which frees its memory
//! blocks), the device, the debug messenger and the instance, in that order.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use gpu_allocator::{AllocationSizes, AllocatorDebugSettings};

use crate::buffer::Buffer;
use crate::device::{self, DeviceInfo, DeviceSelector};
use crate::disk_cache::DiskCache;
use crate::error::{Error, VkResultExt};
use crate::features::{self, FeatureSet};
use crate::instance::{InstanceOwner, LAYER_VERSION_FOR_MAXIMAL_RECONVERGENCE};
use crate::pipeline::{Pipeline, PipelineCache, PipelineDesc};
use crate::shared::DeviceShared;
use crate::stream::{DispatchPart, Stream};

/// Env variable: `1` turns the validation layer on.
pub const VALIDATION_ENV: &str = "PISA_VK_VALIDATION";
/// Env variable: the dispatch timeout in seconds (a float; default 60).
pub const TIMEOUT_ENV: &str = "PISA_VK_TIMEOUT";
/// The dispatch timeout when `PISA_VK_TIMEOUT` is not set.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;

/// How long dropping a context waits for a dispatch that timed out before leaking.
const DROP_GRACE_SECONDS: f64 = 1.0;

/// Settings of a [`Context`] that otherwise come from env variables. `None` = read the env
/// variable (or use the default). Tests use this to avoid racing on the process environment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextOptions {
    /// Validation layer on or off (`PISA_VK_VALIDATION`).
    pub validation: Option<bool>,
    /// Dispatch timeout in seconds (`PISA_VK_TIMEOUT`).
    pub timeout_seconds: Option<f64>,
    /// The device features to enable. `None` enables every feature of [`FeatureSet`] the
    /// device supports, so that any module can be loaded later. `Some(set)` enables only the
    /// features of `set` the device supports, plus [`FeatureSet::runtime_minimum`]: a
    /// context made for known modules (the union of their kernels' requirements, as
    /// `pisa-vk run` does) enables nothing they do not use. A kernel that needs a feature
    /// left out fails when its pipeline is created, with [`Error::FeaturesNotEnabled`].
    pub features: Option<FeatureSet>,
    /// Where the driver's pipeline cache is kept on disk ([`DiskCache::Default`]: as
    /// `PISA_VK_PIPELINE_CACHE` says, else the user's cache directory).
    pub pipeline_cache: DiskCache,
    /// The most compute queues to open (`None`: every queue of the compute family, up to
    /// [`MAX_QUEUES`](crate::MAX_QUEUES); at least 1). Each submission goes to the queue
    /// whose oldest work in flight started last, so that on a device with several queues a
    /// long kernel does not hold back work submitted beside it (spec-notes §116); 1 runs
    /// everything in one in-order queue.
    pub queues: Option<u32>,
}

impl ContextOptions {
    /// Fills every `None` from the env variables. Errors name the variable with a bad value.
    pub fn resolve_env(&self) -> Result<(bool, f64), Error> {
        let validation = match self.validation {
            Some(v) => v,
            None => parse_bool_env(VALIDATION_ENV, std::env::var(VALIDATION_ENV).ok())?,
        };
        let timeout = match self.timeout_seconds {
            Some(t) => check_timeout(t, "ContextOptions::timeout_seconds")?,
            None => match std::env::var(TIMEOUT_ENV) {
                Ok(v) => {
                    let t = v.trim().parse::<f64>().map_err(|_| {
                        Error::InvalidArgument(format!(
                            "{TIMEOUT_ENV}={v:?} is not a number of seconds"
                        ))
                    })?;
                    check_timeout(t, TIMEOUT_ENV)?
                }
                Err(_) => DEFAULT_TIMEOUT_SECONDS,
            },
        };
        Ok((validation, timeout))
    }
}

fn check_timeout(t: f64, source: &str) -> Result<f64, Error> {
    if t.is_finite() && t > 0.0 && t < 1.0e9 {
        Ok(t)
    } else {
        Err(Error::InvalidArgument(format!(
            "{source}: the timeout must be a positive finite number of seconds, not {t}"
        )))
    }
}

/// The value of a boolean env variable `name` (`value` as read): unset, empty, `0`, `false`,
/// `no`, `off` are false; `1`, `true`, `yes`, `on` true (any case); anything else is an
/// [`Error::InvalidArgument`] naming the variable.
pub fn parse_bool_env(name: &str, value: Option<String>) -> Result<bool, Error> {
    match value
        .as_deref()
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some(_) => Err(Error::InvalidArgument(format!(
            "{name}={:?}: use 1 (on) or 0 (off)",
            value.unwrap_or_default()
        ))),
    }
}

/// One Vulkan device ready to run kernels. `Send + Sync`; share it by reference or in an `Arc`.
///
/// Dispatches are serialised on one queue and wait for completion.
///
/// After an [`Error::Timeout`] the timed-out work is still running, and drivers may block
/// any call that touches the device until it ends (lavapipe blocks pipeline creation). So
/// until it has ended, every call that needs the device returns [`Error::DeviceBusy`] at
/// once without doing anything — [`dispatch`](Context::dispatch),
/// [`create_pipeline`](Context::create_pipeline) of a pipeline not in the cache (a cached
/// one is returned), [`create_buffer`](Context::create_buffer), [`Buffer::read`] and
/// [`Buffer::write`] (the kernel may still write the memory) — and buffers and pipelines
/// dropped meanwhile are leaked, not destroyed while the work may use them. Each of these
/// calls looks at the work's fence without waiting; once it has ended, the context works
/// again. Dropping the context waits at most one more second for it; if it still runs, the
/// device, its memory and every buffer and pipeline are leaked instead of destroyed while in
/// use (the device keeps running the work: on lavapipe, one CPU thread spins until the
/// process exits, which it does promptly).
pub struct Context {
    shared: Arc<DeviceShared>,
    info: DeviceInfo,
    enabled: FeatureSet,
    timeout_seconds: f64,
    pipelines: PipelineCache,
    /// The fused-`Fma` probe's answer, found at its first use.
    fused_fma: std::sync::OnceLock<crate::FusedFma>,
    /// The denormal probe's answer, found at its first use.
    keeps_f32_denormals: std::sync::OnceLock<bool>,
    /// The zero-operand probe's answer, found at its first use.
    folds_zero_operands: std::sync::OnceLock<bool>,
    /// The known driver bugs the probes found when the context was created.
    driver_bugs: crate::DriverBugs,
}

impl Context {
    /// Opens the device `selector` picks, with every feature it supports enabled and the
    /// settings of the env variables (`PISA_VK_DEVICE`, `PISA_VK_VALIDATION`,
    /// `PISA_VK_TIMEOUT`, `PISA_VK_PIPELINE_CACHE`). Cost and errors: those of
    /// [`Context::with_options`].
    pub fn new(selector: DeviceSelector) -> Result<Context, Error> {
        Context::with_options(selector, &ContextOptions::default())
    }

    /// Like [`Context::new`], with settings given here taking precedence over env variables.
    ///
    /// Cost: loads the Vulkan loader and driver, creates an instance (with the validation
    /// layer when asked) and a logical device with a compute queue; the most expensive call of
    /// the runtime, to make once per device; the on-disk pipeline cache is read. Errors:
    /// [`Error::NoVulkan`] (no loader or driver, a loader older than Vulkan 1.2, or
    /// validation asked for without the layer installed), [`Error::NoDevice`] (no device,
    /// or the chosen one lacks Vulkan 1.2 or a compute queue), [`Error::DeviceNotFound`] for
    /// a selector that matches nothing, [`Error::InvalidArgument`] for an invalid
    /// `PISA_VK_VALIDATION` or `PISA_VK_TIMEOUT` (or timeout option), a device without the
    /// features the runtime needs ([`Error::MissingFeatures`]), [`Error::Allocation`] (the
    /// memory allocator), [`Error::Vulkan`].
    pub fn with_options(
        selector: DeviceSelector,
        options: &ContextOptions,
    ) -> Result<Context, Error> {
        let (validation, timeout_seconds) = options.resolve_env()?;
        let from_env = selector == DeviceSelector::Default;
        let selector = selector.resolve_env();
        let owner = InstanceOwner::new(validation)?;
        let mut devices = device::enumerate(&owner.instance, owner.api_version)?;
        let infos: Vec<DeviceInfo> = devices.iter().map(|d| d.info.clone()).collect();
        let picked = selector.pick(&infos).map_err(|e| match e {
            Error::DeviceNotFound {
                selector,
                available,
            } if from_env => Error::DeviceNotFound {
                selector: format!("{selector} (from {})", device::DEVICE_ENV),
                available,
            },
            other => other,
        })?;
        let chosen = devices.swap_remove(picked);
        let info = chosen.info;
        if info.api_version < (1, 2, 0) {
            return Err(Error::NoDevice(format!(
                "{} supports only Vulkan {}.{}; 1.2 or newer is needed",
                info.name, info.api_version.0, info.api_version.1
            )));
        }
        if !info.features.buffer_device_address {
            return Err(Error::MissingFeatures {
                what: format!("the runtime (device {})", info.name),
                features: vec!["bufferDeviceAddress"],
            });
        }
        let queue_family = chosen
            .queue_family
            .ok_or_else(|| Error::NoDevice(format!("{} has no compute queue", info.name)))?;
        let mut support = match &options.features {
            Some(wanted) => chosen.support.restricted_to(wanted),
            None => chosen.support,
        };
        if owner
            .validation_layer_version
            .is_some_and(|v| v < LAYER_VERSION_FOR_MAXIMAL_RECONVERGENCE)
        {
            // The layer cannot validate it: leave it off rather than drown real messages.
            support = support.without_maximal_reconvergence();
        }
        let queue_count = match options.queues {
            Some(0) => {
                return Err(Error::InvalidArgument(
                    "ContextOptions::queues is 0: a context needs at least one queue".into(),
                ))
            }
            Some(n) => n,
            None => crate::order::MAX_QUEUES,
        }
        .min(info.compute_queues)
        .clamp(1, crate::order::MAX_QUEUES);
        let device = features::create_logical_device(
            &owner.instance,
            chosen.handle,
            queue_family,
            queue_count,
            &support,
        )
        .vk("vkCreateDevice")?;
        let mut debug_settings = AllocatorDebugSettings::default();
        debug_settings.log_leaks_on_shutdown = false;
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: owner.instance.clone(),
            device: device.clone(),
            physical_device: chosen.handle,
            debug_settings,
            buffer_device_address: true,
            allocation_sizes: AllocationSizes::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing was created on the device yet.
                unsafe { device.destroy_device(None) };
                return Err(Error::Allocation(e.to_string()));
            }
        };
        // SAFETY: the device was created with `queue_count` queues of this family.
        let queues = (0..queue_count)
            .map(|i| {
                crate::order::DeviceQueue::new(unsafe { device.get_device_queue(queue_family, i) })
            })
            .collect();
        let host_import = crate::import::HostImport::query(
            &owner.instance,
            chosen.handle,
            &device,
            support.extensions.external_memory_host,
        );
        let shared = Arc::new(DeviceShared {
            device,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            wedged: AtomicBool::new(false),
            busy: Mutex::new(Vec::new()),
            any_busy: AtomicBool::new(false),
            queues,
            queue_family,
            timestamps: chosen.timestamps,
            slots: Mutex::new(Vec::new()),
            cancel: Mutex::new(None),
            live: crate::live::Registry::new(),
            host_import,
            max_allocation_size: info.max_allocation_size,
            instance: ManuallyDrop::new(owner),
        });
        // From here on, dropping `shared` on an error cleans everything up.
        let pipelines =
            PipelineCache::new(&shared, &chosen.cache_identity, &options.pipeline_cache)?;
        let mut ctx = Context {
            enabled: support.features,
            shared,
            info,
            timeout_seconds,
            pipelines,
            fused_fma: std::sync::OnceLock::new(),
            keeps_f32_denormals: std::sync::OnceLock::new(),
            folds_zero_operands: std::sync::OnceLock::new(),
            driver_bugs: crate::DriverBugs::default(),
        };
        ctx.driver_bugs = crate::DriverBugs::probe(&ctx);
        // The probe's pipeline is not one of the user's: the in-memory cache starts empty.
        ctx.clear_pipeline_cache();
        Ok(ctx)
    }

    /// Every device the loader reports, without creating a logical device. Cost: an
    /// instance is created and destroyed. Errors: [`Error::NoVulkan`], [`Error::Vulkan`].
    pub fn devices() -> Result<Vec<DeviceInfo>, Error> {
        let owner = InstanceOwner::new(false)?;
        let devices = device::enumerate(&owner.instance, owner.api_version)?;
        Ok(devices.into_iter().map(|d| d.info).collect())
    }

    /// The device this context runs on: name, type, driver, limits, supported features.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The features enabled on the logical device: every supported one the runtime knows, or
    /// those of [`ContextOptions::features`] the device supports.
    pub fn enabled_features(&self) -> &FeatureSet {
        &self.enabled
    }

    /// The dispatch timeout in seconds: how long a wait for a submission lasts before
    /// [`Error::Timeout`].
    pub fn timeout_seconds(&self) -> f64 {
        self.timeout_seconds
    }

    /// How many compute queues the context opened ([`ContextOptions::queues`]): submissions
    /// go to the one whose oldest work in flight started last (spec-notes §116).
    pub fn queue_count(&self) -> usize {
        self.shared.queues.len()
    }

    /// A host-visible, persistently mapped buffer of `size` bytes (0 allowed), usable by
    /// kernels through its [`device address`](Buffer::device_address). Contents start
    /// unspecified.
    ///
    /// Cost: one device allocation (gpu-allocator sub-allocates from larger blocks). Errors:
    /// [`Error::Allocation`] (out of memory, or an allocation, guard bytes included, beyond
    /// the device's largest,
    /// [`DeviceInfo::max_allocation_size`](crate::DeviceInfo::max_allocation_size), which is
    /// refused before Vulkan is asked: `vkAllocateMemory` must not be given more than a
    /// heap), [`Error::DeviceBusy`] while a dispatch that timed out still runs.
    pub fn create_buffer(&self, size: u64) -> Result<Buffer, Error> {
        self.shared
            .check_idle(|| format!("create a buffer of {size} bytes"))?;
        Buffer::new(&self.shared, size, true)
    }

    /// A buffer whose memory is the `len` host bytes at `ptr`, imported without a copy
    /// (`VK_EXT_external_memory_host`): kernels and the host then share that memory, and
    /// host reads and writes through [`Buffer::read`]/[`Buffer::write`] go to it. `keep` (the
    /// owner of the host memory) is held until the device memory is freed, after the buffer
    /// and every submission using it are gone; never, if a kernel that timed out may still
    /// use it. No guard bytes follow the range (what follows is the program's memory).
    ///
    /// `Ok(Err(refused))` when this device cannot import this range, saying why: no
    /// extension, an address not aligned as the device needs (the range's offset in its
    /// `minImportedHostPointerAlignment` page must be a multiple of the buffer alignment), no
    /// host-coherent memory type, the driver's refusal; the caller copies instead. Cost: one
    /// device memory object (no sub-allocation) and a buffer. Errors: [`Error::DeviceBusy`]
    /// while a dispatch that timed out still runs, [`Error::Vulkan`].
    ///
    /// # Safety
    /// `ptr..ptr + len` is readable and writable memory of this process that stays
    /// allocated, and is used for nothing else that kernels must not see, as long as `keep`
    /// lives (the caller makes `keep` the owner of that memory, or a guard that pins it).
    pub unsafe fn import_host(
        &self,
        ptr: *mut u8,
        len: usize,
        keep: crate::KeepAlive,
    ) -> Result<Result<Buffer, crate::ImportRefused>, Error> {
        self.shared
            .check_idle(|| format!("import {len} bytes of host memory"))?;
        // SAFETY: the caller's promise.
        unsafe { Buffer::import(&self.shared, ptr, len, keep) }
    }

    /// The alignment host memory must have to be imported without a copy
    /// ([`Context::import_host`]: `minImportedHostPointerAlignment`), or `None` when the
    /// device cannot import host memory.
    pub fn host_import_alignment(&self) -> Option<u64> {
        self.shared.host_import.as_ref().map(|h| h.alignment)
    }

    /// Like [`Context::create_buffer`], but not listed in [`Context::live_buffers`]: for a
    /// host API's own bookkeeping that kernels must not touch (e.g. a memory checker's
    /// allocation table). Cost and errors: those of [`Context::create_buffer`].
    pub fn create_internal_buffer(&self, size: u64) -> Result<Buffer, Error> {
        self.shared
            .check_idle(|| format!("create a buffer of {size} bytes"))?;
        Buffer::new(&self.shared, size, false)
    }

    /// A buffer of `size` bytes for memory only kernels use — a launch's private scratch —
    /// in device-local memory (gpu-allocator's `MemoryLocation::GpuOnly`) where the device
    /// has one that fits, else host-visible memory; not listed in
    /// [`Context::live_buffers`]. On a discrete GPU its memory is not host-visible
    /// ([`Buffer::is_host_visible`] is `false`: host reads and writes are refused); on
    /// lavapipe every memory type is both. Cost and errors: those of
    /// [`Context::create_buffer`].
    pub fn create_scratch_buffer(&self, size: u64) -> Result<Buffer, Error> {
        self.shared
            .check_idle(|| format!("create a scratch buffer of {size} bytes"))?;
        Buffer::device_local(&self.shared, size)
    }

    /// The context's identity: unique in the process, the same as
    /// [`Buffer::context_id`] of its buffers.
    pub fn id(&self) -> u64 {
        self.shared.live.id()
    }

    /// The address ranges of the context's live buffers (those of
    /// [`Context::create_buffer`] whose memory is not freed yet: a buffer dropped while a
    /// submission still uses it stays until that ends), sorted by address. Cost: a copy of
    /// the list under a lock (allocates the vector).
    pub fn live_buffers(&self) -> Vec<crate::LiveBuffer> {
        self.shared.live.snapshot()
    }

    /// A compute pipeline for `desc`, from the in-memory cache when an identical one (same
    /// SPIR-V, entry point, local size, push-constant size and sub-group settings) exists.
    /// Checks `desc.required_features` first, and the local size against the device limits.
    ///
    /// A kernel that needs fused `Fma` (`desc.required_features.fused_fma`) on a device whose
    /// `Fma` is not fused ([`Context::fused_fma`]) is refused with
    /// [`Error::MissingFeatures`] naming `fusedFmaFloatN`; one that needs single-precision
    /// denormals kept (`keeps_denormals_f32`) on a device that flushes them
    /// ([`Context::keeps_f32_denormals`]), naming `keepsDenormalsFloat32`; one translated for
    /// zero operands kept (`keeps_zero_operands`) on a device whose compiler takes shortcuts
    /// with them ([`Context::folds_zero_operands`]), naming `keepsZeroOperands`. Each probe runs
    /// at the first such pipeline (a dispatch: its errors, [`Error::DeviceBusy`] included).
    /// A pipeline not in the cache is refused with [`Error::DeviceBusy`] while work that
    /// timed out still runs.
    ///
    /// Cost: a cache hit is a lookup; a miss compiles the SPIR-V in the driver, which blocks
    /// the caller (tens of milliseconds on lavapipe). Errors: [`Error::MissingFeatures`],
    /// [`Error::SharedMemory`], an invalid local size, [`Error::DeviceBusy`], Vulkan errors.
    pub fn create_pipeline(&self, desc: &PipelineDesc) -> Result<Arc<Pipeline>, Error> {
        let _span =
            tracing::debug_span!("create_pipeline", kernel = desc.name_for_errors).entered();
        let need = desc.required_features.fused_fma;
        if !need.is_empty() {
            let lacks = self.fused_fma()?.missing(&need);
            if !lacks.is_empty() {
                return Err(Error::MissingFeatures {
                    what: format!(
                        "{} (translated for a device whose Fma is fused; this one's is not)",
                        desc.name_for_errors
                    ),
                    features: lacks,
                });
            }
        }
        if desc.required_features.keeps_denormals_f32 && !self.keeps_f32_denormals()? {
            return Err(Error::MissingFeatures {
                what: format!(
                    "{} (computes with single-precision values, whose denormals PISA keeps; \
                     this device flushes them to zero and has no shaderDenormPreserveFloat32 \
                     to ask it not to: translate with fast math to accept its arithmetic)",
                    desc.name_for_errors
                ),
                features: vec!["keepsDenormalsFloat32"],
            });
        }
        if desc.required_features.keeps_zero_operands && self.folds_zero_operands()? {
            return Err(Error::MissingFeatures {
                what: format!(
                    "{} (translated for a device whose compiler computes float operations on \
                     a zero it proves as IEEE says; this one's takes shortcuts with them: \
                     translate without keeps_zero_operands / --keeps-zero-operands)",
                    desc.name_for_errors
                ),
                features: vec!["keepsZeroOperands"],
            });
        }
        self.pipelines
            .get_or_create(&self.shared, &self.info, &self.enabled, desc)
    }

    /// Records and submits one dispatch of `pipeline` with `push_constants` (at most the
    /// pipeline's push-constant size; shorter data is zero-padded) and waits for it, at most
    /// the timeout (`PISA_VK_TIMEOUT`). Shader writes are visible to [`Buffer::read`] when
    /// this returns.
    ///
    /// Blocks the calling thread for the whole run of the kernel. Errors: a pipeline of
    /// another context or a group count beyond `maxComputeWorkGroupCount`
    /// ([`Error::InvalidArgument`]), [`Error::Timeout`] (the work may still run: later calls
    /// get [`Error::DeviceBusy`] until it ends), device loss and other Vulkan errors.
    pub fn dispatch(
        &self,
        pipeline: &Pipeline,
        push_constants: &[u8],
        group_count: [u32; 3],
    ) -> Result<(), Error> {
        self.launch(&[DispatchPart {
            pipeline,
            push_constants,
            group_count,
        }])
    }

    /// Like [`Context::dispatch`], and returns the GPU time the dispatch took, measured with
    /// timestamp queries around it (`timestampPeriod` applied, `timestampValidBits`
    /// respected). Cost: that of [`Context::dispatch`] and two timestamps (the first timed
    /// submission of a slot makes its query pool). Errors: those of [`Context::dispatch`];
    /// a queue without timestamps gives [`Error::MissingFeatures`].
    pub fn dispatch_timed(
        &self,
        pipeline: &Pipeline,
        push_constants: &[u8],
        group_count: [u32; 3],
    ) -> Result<Duration, Error> {
        self.launch_timed(&[DispatchPart {
            pipeline,
            push_constants,
            group_count,
        }])
    }

    /// Records the dispatches of one launch in one command buffer, submits it and waits for
    /// it as [`Context::dispatch`] does (same cost and errors): a [`Stream`] of one launch.
    /// Nothing orders the parts with respect to each other (they are like the work-groups of
    /// one dispatch); each part's group count must be within `maxComputeWorkGroupCount`. An
    /// empty `parts` submits nothing.
    pub fn launch(&self, parts: &[DispatchPart]) -> Result<(), Error> {
        if parts.is_empty() {
            return Ok(());
        }
        let mut stream = self.stream();
        stream.launch(parts)?;
        stream.submit()?.wait().map(drop)
    }

    /// Like [`Context::launch`], and returns the GPU time from before the first part started
    /// to after the last one finished (timestamp queries); errors as
    /// [`Context::dispatch_timed`].
    pub fn launch_timed(&self, parts: &[DispatchPart]) -> Result<Duration, Error> {
        let mut stream = self.stream();
        stream.timed(true)?;
        stream.launch(parts)?;
        let done = stream.submit()?.wait()?;
        Ok(done.gpu_time().unwrap_or_default())
    }

    /// A new, empty [`Stream`] of commands for this device: record launches, copies, fills
    /// and host transfers, then submit them as one submission. Costs nothing until submitted.
    pub fn stream(&self) -> Stream<'_> {
        Stream::new(self)
    }

    pub(crate) fn shared(&self) -> &Arc<DeviceShared> {
        &self.shared
    }

    /// Per float width, whether this device's SPIR-V `Fma` rounds once. Found by running a
    /// probe kernel the first time it is asked for (a pipeline per width: tens of
    /// milliseconds on lavapipe), then remembered. Widths the context did not enable
    /// (`shaderFloat16`, `shaderFloat64`) report `false`. See [`crate::probe`]. Errors (of
    /// the probe): those of [`Context::create_pipeline`], [`Context::create_buffer`] and
    /// [`Context::dispatch`].
    pub fn fused_fma(&self) -> Result<crate::FusedFma, Error> {
        probed(&self.fused_fma, || crate::probe::probe(self))
    }

    /// Whether the device's single-precision arithmetic keeps denormals in a shader that does
    /// not ask for `DenormPreserve` (as every kernel that needs `keepsDenormalsFloat32`): the
    /// answer of a probe kernel the first time it is asked for, then remembered (lavapipe
    /// keeps them; NVIDIA's driver 580 flushes them). A device with
    /// `shaderDenormPreserveFloat32` may flush by default too; the host API then has its
    /// kernels ask. See [`crate::probe`]. Errors (of the probe): those of
    /// [`Context::create_pipeline`], [`Context::create_buffer`] and [`Context::dispatch`].
    pub fn keeps_f32_denormals(&self) -> Result<bool, Error> {
        probed(&self.keeps_f32_denormals, || {
            crate::probe::probe_denormals(self)
        })
    }

    /// Whether the device's compiler replaces a float operation with an operand it can prove
    /// to be zero by a shortcut, despite `SignedZeroInfNanPreserve` (`x + 0.0 -> x`,
    /// `0.0 - x -> -x`, `0.0 / x -> +0`, `x / 0.0 ->` undefined: wrong for zeros, infinities
    /// and NaNs): the answer of a probe kernel the first time it is asked for, then
    /// remembered. lavapipe does (its code generator's shortcuts, for any operand its compiler
    /// proved constant, after inlining and memory forwarding); the translator then fixes the
    /// sign of every exact-zero sum and the special cases of every division (spec-notes
    /// §113). See [`crate::probe`]. Errors (of the probe): those of
    /// [`Context::create_pipeline`], [`Context::create_buffer`] and [`Context::dispatch`].
    pub fn folds_zero_operands(&self) -> Result<bool, Error> {
        probed(&self.folds_zero_operands, || {
            crate::probe::probe_zero_operands(self)
        })
    }

    /// For tests only: from now on [`Context::keeps_f32_denormals`] answers "flushed", as on
    /// a device that flushes them (NVIDIA's driver 580), so that the refusal of kernels that
    /// need them can be tested where the device keeps them. False, changing nothing, when the
    /// probe has already answered for this context.
    #[doc(hidden)]
    pub fn pretend_f32_denormals_flushed(&self) -> bool {
        self.keeps_f32_denormals.set(false).is_ok()
    }

    /// The known driver bugs found on this device when the context was created (on lavapipe:
    /// one probe dispatch, a few milliseconds). See [`crate::driver_bugs`].
    pub fn driver_bugs(&self) -> crate::DriverBugs {
        self.driver_bugs
    }

    /// Takes the messages the validation layer reported since the last call: warnings and
    /// errors of every type, one line each (`[ERROR validation] VUID-...: text`); informational
    /// messages are dropped. Empty when validation is off.
    ///
    /// A validation layer older than the driver may report the extensions and feature
    /// structures it does not know yet (seen with layer 1.3.239 and Mesa 25:
    /// `VK_KHR_shader_maximal_reconvergence`); those come from context creation.
    pub fn validation_messages(&self) -> Vec<String> {
        self.shared.instance.drain_messages()
    }

    /// [`Context::validation_messages`] raised by the calling thread's Vulkan calls only, so
    /// that concurrent users of one context (parallel tests) each get their own messages.
    pub fn thread_validation_messages(&self) -> Vec<String> {
        self.shared.instance.drain_thread_messages()
    }

    /// Number of pipelines held by the in-memory pipeline cache (at most
    /// [`PIPELINE_CACHE_CAPACITY`](crate::PIPELINE_CACHE_CAPACITY)).
    pub fn cached_pipelines(&self) -> usize {
        self.pipelines.len()
    }

    /// Empties the in-memory pipeline cache (pipelines still held elsewhere stay valid).
    pub fn clear_pipeline_cache(&self) {
        self.pipelines.clear();
    }

    /// The file the driver's pipeline cache is loaded from and saved to ([`DiskCache`]);
    /// `None` when it is off or no cache directory was found.
    pub fn pipeline_cache_path(&self) -> Option<&std::path::Path> {
        self.pipelines.disk_path()
    }

    /// Writes the driver's pipeline cache to its file now, when pipelines were built since
    /// it was loaded or last saved (dropping the context does this too). Returns whether a
    /// file was written. Cost: reads the file again when another process changed it (and
    /// merges it in), then writes a temporary file and renames it. Errors:
    /// [`Error::InvalidArgument`] naming the file that could not be written,
    /// [`Error::Vulkan`] (`vkGetPipelineCacheData`).
    pub fn save_pipeline_cache(&self) -> Result<bool, Error> {
        self.pipelines.save(&self.shared)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let timeout = Duration::from_secs_f64(self.timeout_seconds.min(DROP_GRACE_SECONDS));
        // Wait for any timed-out work once more; if it still runs, mark the device wedged
        // so that nothing in use gets destroyed.
        if self.shared.wait_idle(timeout).is_err() {
            self.shared.wedged.store(true, Ordering::Release);
        }
        self.pipelines.clear();
        self.pipelines.destroy(&self.shared);
    }
}

/// A probe's answer: the one `cell` holds, or `probe`'s, run now and remembered (a failed
/// probe is not remembered: the next call runs it again).
fn probed<T: Copy>(
    cell: &std::sync::OnceLock<T>,
    probe: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    if let Some(&v) = cell.get() {
        return Ok(v);
    }
    let v = probe()?;
    Ok(*cell.get_or_init(|| v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_env_values() {
        assert!(!parse_bool_env("X", None).unwrap());
        assert!(!parse_bool_env("X", Some("0".into())).unwrap());
        assert!(parse_bool_env("X", Some("1".into())).unwrap());
        assert!(parse_bool_env("X", Some(" TRUE ".into())).unwrap());
        assert!(matches!(
            parse_bool_env("X", Some("maybe".into())),
            Err(Error::InvalidArgument(m)) if m.contains("X=")
        ));
    }

    #[test]
    fn timeout_must_be_positive_and_finite() {
        assert_eq!(check_timeout(2.5, "t").unwrap(), 2.5);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(check_timeout(bad, "t").is_err());
        }
        let opts = ContextOptions {
            validation: Some(false),
            timeout_seconds: Some(3.0),
            ..ContextOptions::default()
        };
        assert_eq!(opts.resolve_env().unwrap(), (false, 3.0));
    }

    #[test]
    fn context_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Context>();
        check::<Buffer>();
        check::<Pipeline>();
    }
}
