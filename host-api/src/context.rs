//! [`Context`]: one Vulkan device, shared by the modules and buffers made from it.

use crate::{Buffer, Result};
use bytemuck::Pod;
use pisa_runtime::{ContextOptions, DeviceInfo, DeviceSelector, DriverBugs, FeatureSet};
use pisa_translator::Translation;
use std::sync::Arc;

/// A device to run PISA kernels on: a Vulkan logical device with its memory allocator,
/// pipeline caches and queue. Cheap to clone (shared, `Send + Sync`); the device is closed
/// when the last clone and the last buffer and module made from it are gone.
///
/// A context may ask for the memory checker ([`Context::with_checking`], or
/// `PISA_VK_CHECKED=1` for every context): modules loaded from source through it are then
/// translated checked ([`Options::checked`](crate::Options)).
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// let ctx = pisa_vk::Context::new()?; // PISA_VK_DEVICE, else the best device
/// println!("{ctx:?}"); // the device's name, type and driver
/// let input = ctx.buffer_from(&[1.0f32, 2.0, 3.0])?;
/// let output = ctx.zeroed::<f32>(3)?;
/// assert_eq!((input.len(), output.read()?), (3, vec![0.0; 3]));
/// assert!(ctx.info().max_workgroup_invocations >= 128); // Vulkan's minimum
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) rt: Arc<pisa_runtime::Context>,
    checked: bool,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.info();
        f.debug_struct("Context")
            .field("device", &info.name)
            .field("type", &info.device_type)
            .field("driver", &info.driver_name)
            .field("timeout_seconds", &self.rt.timeout_seconds())
            .field("checked", &self.checked)
            .finish()
    }
}

impl Context {
    /// The default device: `PISA_VK_DEVICE` if set (an index, a device UUID or a name
    /// substring: [`DeviceSelector`]), else the best one (discrete > integrated > CPU), with
    /// every feature it supports enabled, and
    /// the settings of the env variables (`PISA_VK_VALIDATION`, `PISA_VK_TIMEOUT`,
    /// `PISA_VK_PIPELINE_CACHE`, `PISA_VK_CHECKED`).
    ///
    /// Cost: loads the Vulkan loader and driver, creates an instance and a logical device,
    /// and reads the on-disk pipeline cache: the most expensive call of the API (tens of
    /// milliseconds; more with the validation layer), to make once per device and share.
    /// Errors (all `Error::Runtime`): `RuntimeError::NoVulkan` (no loader or driver, a
    /// loader older than Vulkan 1.2, or `PISA_VK_VALIDATION=1` without the validation
    /// layer), `RuntimeError::NoDevice` (no device with Vulkan 1.2 and a compute queue),
    /// `RuntimeError::DeviceNotFound` (`PISA_VK_DEVICE` matches no device),
    /// `RuntimeError::MissingFeatures` (no `bufferDeviceAddress`),
    /// `RuntimeError::InvalidArgument` (an env variable with a bad value),
    /// `RuntimeError::Allocation`, `RuntimeError::Vulkan`.
    pub fn new() -> Result<Context> {
        Context::with_device(DeviceSelector::Default)
    }

    /// A chosen device ([`DeviceSelector::Index`], [`DeviceSelector::NameContains`], or
    /// `Default` as [`Context::new`]). Cost and errors: those of [`Context::new`];
    /// `RuntimeError::DeviceNotFound` names the devices there are.
    pub fn with_device(selector: DeviceSelector) -> Result<Context> {
        Context::from_runtime(pisa_runtime::Context::new(selector)?)
    }

    /// A chosen device with only `features` enabled: those of them it supports, plus what
    /// the runtime itself needs ([`FeatureSet::runtime_minimum`]). A kernel that needs a
    /// feature left out fails when its pipeline is created, with
    /// `RuntimeError::FeaturesNotEnabled` naming it. Cost and errors: those of
    /// [`Context::new`].
    pub fn with_features(selector: DeviceSelector, features: FeatureSet) -> Result<Context> {
        let options = ContextOptions {
            features: Some(features),
            ..Default::default()
        };
        Context::with_options(selector, &options)
    }

    /// A chosen device with settings given here taking precedence over the env variables
    /// (validation layer, timeout, on-disk pipeline cache) and the features to enable.
    /// Cost and errors: those of [`Context::new`] (`RuntimeError::InvalidArgument` also for
    /// a timeout that is not a positive number of seconds).
    pub fn with_options(selector: DeviceSelector, options: &ContextOptions) -> Result<Context> {
        Context::from_runtime(pisa_runtime::Context::with_options(selector, options)?)
    }

    /// A chosen device with only the features the kernels of `translations` need
    /// ([`translation_features`](crate::translation_features)): what `pisa-vk run` uses.
    /// [`Context::new`] instead enables every supported feature, for modules not known yet.
    /// Cost and errors: those of [`Context::new`].
    pub fn for_translations(
        selector: DeviceSelector,
        translations: &[&Translation],
    ) -> Result<Context> {
        let features = translations.iter().fold(FeatureSet::default(), |f, t| {
            f.union(&crate::translation_features(t))
        });
        Context::with_features(selector, features)
    }

    fn from_runtime(rt: pisa_runtime::Context) -> Result<Context> {
        Ok(Context {
            rt: Arc::new(rt),
            checked: crate::memcheck::checked_from_env()?,
        })
    }

    /// This context (the same device, buffers and modules: a clone) with the memory checker
    /// on or off for the modules loaded from source through it from now on; the initial
    /// setting is `PISA_VK_CHECKED` (off when unset). Modules loaded earlier keep their
    /// translation.
    pub fn with_checking(&self, on: bool) -> Context {
        Context {
            rt: Arc::clone(&self.rt),
            checked: on,
        }
    }

    /// Whether modules loaded from source through this context are translated checked.
    pub fn checked(&self) -> bool {
        self.checked
    }

    /// The features enabled on the device: every supported one [`FeatureSet`] knows, or
    /// those asked for ([`Context::with_features`]) that the device supports.
    pub fn enabled_features(&self) -> &FeatureSet {
        self.rt.enabled_features()
    }

    /// Every Vulkan device of this machine, as the loader lists them (the indices of
    /// [`DeviceSelector::Index`]). Cost: an instance is created and destroyed; no logical
    /// device. Errors: `RuntimeError::NoVulkan`, `RuntimeError::Vulkan`.
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        Ok(pisa_runtime::Context::devices()?)
    }

    /// Per float width, whether the device's `Fma` is fused (rounds once): probed by running
    /// a small kernel the first time it is asked for, then remembered
    /// ([`pisa_runtime::Context::fused_fma`]). The first module loaded from source asks for
    /// it. Cost: the first call compiles and runs a probe pipeline per enabled width (tens of
    /// milliseconds on lavapipe, blocking); later calls return at once. Errors (first call):
    /// the runtime's pipeline and dispatch errors (`RuntimeError::DeviceBusy`,
    /// `RuntimeError::Timeout`, `RuntimeError::Vulkan`, `RuntimeError::Allocation`).
    pub fn fused_fma(&self) -> Result<pisa_runtime::FusedFma> {
        Ok(self.rt.fused_fma()?)
    }

    /// Whether the device's single-precision arithmetic keeps denormals by default, as PISA's
    /// `.f` and `.bf` (computed in `f32`) need where a kernel cannot ask for `DenormPreserve`:
    /// probed by running a small kernel the first time it is asked for, then remembered
    /// ([`pisa_runtime::Context::keeps_f32_denormals`]). Where it does not and the device
    /// has no `shaderDenormPreserveFloat32`, a kernel that computes in `f32` (`.f`, `.bf`,
    /// some `.hf` steps) is refused unless translated with fast math (spec-notes §111).
    /// Errors (first call): as [`Context::fused_fma`]'s.
    pub fn keeps_f32_denormals(&self) -> Result<bool> {
        Ok(self.rt.keeps_f32_denormals()?)
    }

    /// Whether the device's compiler replaces a float operation with an operand it proves to
    /// be zero by a shortcut (`x + 0.0 -> x`, wrong for `x = -0`; `x / 0.0 -> 0`) despite the
    /// kernels' `SignedZeroInfNanPreserve`: probed by running a small kernel the first time it
    /// is asked for, then remembered ([`pisa_runtime::Context::folds_zero_operands`]).
    /// lavapipe does; kernels translated for such a device then recompute the sign of every
    /// exactly zero sum and the special cases of every division (spec-notes §113).
    /// Errors (first call): as [`Context::fused_fma`]'s.
    pub fn folds_zero_operands(&self) -> Result<bool> {
        Ok(self.rt.folds_zero_operands()?)
    }

    /// For tests only: [`pisa_runtime::Context::pretend_f32_denormals_flushed`].
    #[doc(hidden)]
    pub fn pretend_f32_denormals_flushed(&self) -> bool {
        self.rt.pretend_f32_denormals_flushed()
    }

    /// The known driver bugs that give wrong results found on this device when the context
    /// was created ([`pisa_runtime::driver_bugs`]; docs/driver-bugs.md): on lavapipe, whether
    /// its LLVM still miscompiles masked merges (the default path caps it below AVX-512, so
    /// only a user's `GALLIUM_OVERRIDE_CPU_CAPS`, or a driver loaded before pisa-vk could set
    /// it, leaves the bug in). The first launch on such a context logs a `tracing` warning.
    pub fn driver_bugs(&self) -> DriverBugs {
        self.rt.driver_bugs()
    }

    /// The device in use: name, type, driver, limits and supported features.
    pub fn info(&self) -> &DeviceInfo {
        self.rt.info()
    }

    /// How many compute queues the context opened: independent launches and streams go to
    /// the one whose oldest work in flight started last, so a long kernel on one queue does
    /// not hold back work on another (spec-notes §116). 1 on lavapipe.
    pub fn queue_count(&self) -> usize {
        self.rt.queue_count()
    }

    /// The underlying runtime context ([`pisa_runtime::Context`]), for what the host API
    /// does not wrap (raw pipelines, live buffers, the pipeline cache file).
    pub fn runtime(&self) -> &pisa_runtime::Context {
        &self.rt
    }

    /// A device buffer holding a copy of `data`. Cost: one device allocation
    /// (host-visible memory, sub-allocated from larger blocks) and a host copy; no
    /// submission. Errors: `RuntimeError::Allocation` (out of memory),
    /// `RuntimeError::InvalidArgument` (a size beyond what can be mapped),
    /// `RuntimeError::DeviceBusy` while a submission that timed out still runs.
    pub fn buffer_from<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        let b = self.uninit_buffer::<T>(data.len())?;
        b.write(data)?;
        Ok(b)
    }

    /// A device buffer of `len` zeroed elements (0 allowed). Cost: one device allocation and
    /// a host write of zeros; no submission. Errors: as [`Context::buffer_from`]
    /// (`RuntimeError::InvalidArgument` also when `len` elements overflow 64 bits).
    pub fn zeroed<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let b = self.uninit_buffer::<T>(len)?;
        b.fill(T::zeroed())?;
        Ok(b)
    }

    /// A buffer whose memory is the `len` elements of host memory at `ptr`, imported
    /// without a copy where the device allows it (`VK_EXT_external_memory_host`; see
    /// [`pisa_runtime::Context::import_host`]): kernels and the host share that memory.
    /// `keep` owns (or pins) the host memory and is dropped once the device is done with it.
    /// `Ok(Err(refused))` says why this device cannot import this range (no extension, an
    /// address not aligned as the device needs, ...): copy instead ([`Context::buffer_from`]).
    /// Errors: `RuntimeError::DeviceBusy`, `RuntimeError::Vulkan`, and
    /// `RuntimeError::InvalidArgument` when `len` elements overflow the address space.
    ///
    /// # Safety
    /// `ptr..ptr + len` is readable and writable memory of this process that stays
    /// allocated, and is not used for anything kernels must not see, while `keep` lives.
    pub unsafe fn import_host<T: Pod>(
        &self,
        ptr: *mut T,
        len: usize,
        keep: pisa_runtime::KeepAlive,
    ) -> Result<std::result::Result<Buffer<T>, pisa_runtime::ImportRefused>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            pisa_runtime::Error::InvalidArgument(format!(
                "{len} elements of {} bytes overflow the address space",
                std::mem::size_of::<T>()
            ))
        })?;
        // SAFETY: the caller's promise.
        let imported = unsafe { self.rt.import_host(ptr.cast::<u8>(), bytes, keep) }?;
        Ok(imported.map(|raw| Buffer::new(self.clone(), raw, len)))
    }

    fn uninit_buffer<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = (len as u64)
            .checked_mul(std::mem::size_of::<T>() as u64)
            .ok_or_else(|| {
                pisa_runtime::Error::InvalidArgument(format!(
                    "a buffer of {len} elements of {} bytes is too large",
                    std::mem::size_of::<T>()
                ))
            })?;
        let raw = self.rt.create_buffer(bytes)?;
        Ok(Buffer::new(self.clone(), raw, len))
    }

    /// A new, empty [`Stream`](crate::Stream): record launches, copies, fills and host
    /// transfers, then submit them as one submission and wait for it or poll it. Costs
    /// nothing until commands are recorded.
    pub fn stream(&self) -> crate::Stream<'_> {
        crate::Stream::new(self)
    }

    /// Takes the validation-layer messages collected so far, from every thread (with
    /// `PISA_VK_VALIDATION=1`; empty otherwise): one line each.
    pub fn validation_messages(&self) -> Vec<String> {
        self.rt.validation_messages()
    }

    /// Takes the validation-layer messages raised by the calling thread's Vulkan calls since
    /// the last time it took them (other threads' messages stay for them).
    pub fn thread_validation_messages(&self) -> Vec<String> {
        self.rt.thread_validation_messages()
    }
}
