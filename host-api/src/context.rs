//! [`Context`]: one Vulkan device, shared by the modules and buffers made from it.

use crate::{Buffer, Result};
use bytemuck::Pod;
use pisa_runtime::{ContextOptions, DeviceInfo, DeviceSelector, FeatureSet};
use pisa_translator::Translation;
use std::sync::Arc;

/// A device to run PISA kernels on. Cheap to clone (shared).
///
/// A context may ask for the memory checker ([`Context::with_checking`], or
/// `PISA_VK_CHECKED=1` for every context): modules loaded from source through it are then
/// translated checked ([`Options::checked`](crate::Options)).
///
/// ```no_run
/// # fn main() -> pisa_vk::Result<()> {
/// let ctx = pisa_vk::Context::new()?; // PISA_VK_DEVICE, else the best device
/// println!("{:?}", ctx); // the device's name, type and driver
/// let input = ctx.buffer_from(&[1.0f32, 2.0, 3.0])?;
/// let output = ctx.zeroed::<f32>(3)?;
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
    /// The default device: `PISA_VK_DEVICE` if set (an index or a name substring), else the
    /// best one (discrete > integrated > CPU).
    pub fn new() -> Result<Context> {
        Context::with_device(DeviceSelector::Default)
    }

    /// A chosen device.
    pub fn with_device(selector: DeviceSelector) -> Result<Context> {
        Context::from_runtime(pisa_runtime::Context::new(selector)?)
    }

    /// A chosen device with only `features` enabled: those of them it supports, plus what
    /// the runtime itself needs ([`FeatureSet::runtime_minimum`]). A kernel that needs a
    /// feature left out fails to load with [`Error::Runtime`](crate::Error) naming it.
    pub fn with_features(selector: DeviceSelector, features: FeatureSet) -> Result<Context> {
        let options = ContextOptions {
            features: Some(features),
            ..Default::default()
        };
        Context::with_options(selector, &options)
    }

    /// A chosen device with settings given here taking precedence over the env variables
    /// (validation layer, timeout) and the features to enable.
    pub fn with_options(selector: DeviceSelector, options: &ContextOptions) -> Result<Context> {
        Context::from_runtime(pisa_runtime::Context::with_options(selector, options)?)
    }

    /// A chosen device with only the features the kernels of `translations` need
    /// ([`translation_features`](crate::translation_features)): what `pisa-vk run` uses.
    /// [`Context::new`] instead enables every supported feature, for modules not known yet.
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

    /// This context (the same device, buffers and modules) with the memory checker on or
    /// off for the modules loaded from source through it from now on; the initial setting is
    /// `PISA_VK_CHECKED` (off when unset).
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

    /// The features enabled on the device.
    pub fn enabled_features(&self) -> &FeatureSet {
        self.rt.enabled_features()
    }

    /// Every Vulkan device of this machine.
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        Ok(pisa_runtime::Context::devices()?)
    }

    /// Per float width, whether the device's `Fma` is fused (rounds once): probed by running
    /// a small kernel the first time it is asked for, then remembered
    /// ([`pisa_runtime::Context::fused_fma`]).
    pub fn fused_fma(&self) -> Result<pisa_runtime::FusedFma> {
        Ok(self.rt.fused_fma()?)
    }

    /// The device in use.
    pub fn info(&self) -> &DeviceInfo {
        self.rt.info()
    }

    /// The underlying runtime context.
    pub fn runtime(&self) -> &pisa_runtime::Context {
        &self.rt
    }

    /// A device buffer holding a copy of `data` (host-visible memory; allocation and a
    /// host copy, no submission).
    pub fn buffer_from<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        let b = self.uninit_buffer::<T>(data.len())?;
        b.write(data)?;
        Ok(b)
    }

    /// A device buffer of `len` zeroed elements (allocation and a host write of zeros).
    pub fn zeroed<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let b = self.uninit_buffer::<T>(len)?;
        b.fill(T::zeroed())?;
        Ok(b)
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
    /// transfers, then submit them as one submission and wait for it or poll it.
    pub fn stream(&self) -> crate::Stream<'_> {
        crate::Stream::new(self)
    }

    /// Validation-layer messages collected so far (with `PISA_VK_VALIDATION=1`).
    pub fn validation_messages(&self) -> Vec<String> {
        self.rt.validation_messages()
    }

    /// The validation-layer messages raised by the calling thread's Vulkan calls since the
    /// last time it took them (other threads' messages stay for them).
    pub fn thread_validation_messages(&self) -> Vec<String> {
        self.rt.thread_validation_messages()
    }
}
