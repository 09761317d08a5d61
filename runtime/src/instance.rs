//! The Vulkan loader, the instance, and the validation layer's debug messenger.
//!
//! The loader is opened at run time (`ash::Entry::load`), so a machine without Vulkan gets an
//! [`Error::NoVulkan`] with an installation hint instead of a failure to start. With validation
//! on, `VK_LAYER_KHRONOS_validation` and `VK_EXT_debug_utils` are enabled and every warning or
//! error message is collected for [`Context::validation_messages`](crate::Context), with the
//! thread whose Vulkan call raised it (the layer reports synchronously, in the calling thread).

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Mutex};

use ash::vk;

use crate::error::{Error, VkResultExt};

/// The name of the Khronos validation layer.
pub(crate) const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Where the debug messenger puts the messages it keeps, each with the thread whose Vulkan
/// call raised it.
pub(crate) type MessageSink = Mutex<Vec<(std::thread::ThreadId, String)>>;

/// An installed debug messenger and the sink its callback writes to.
pub(crate) struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    handle: vk::DebugUtilsMessengerEXT,
    /// Kept alive here: the callback's user data points into it.
    pub sink: Arc<MessageSink>,
}

/// The loader and the instance, destroyed together (messenger first) on drop.
pub(crate) struct InstanceOwner {
    /// Keeps the loader library loaded for as long as the instance exists.
    pub entry: ash::Entry,
    /// The instance.
    pub instance: ash::Instance,
    /// The API version the instance was created with (1.2 or 1.3).
    pub api_version: u32,
    /// The debug messenger, when validation is on.
    pub messenger: Option<Messenger>,
    /// The validation layer's Vulkan header version (`specVersion`), when validation is on.
    pub validation_layer_version: Option<u32>,
}

/// The first validation layer that knows `VK_KHR_shader_maximal_reconvergence` (Vulkan
/// headers 1.3.274). An older layer (Debian 12 ships 1.3.239) rejects the extension's SPIR-V
/// execution mode as invalid and then reports errors that follow from that, so a context
/// under such a layer leaves maximal reconvergence off.
pub(crate) const LAYER_VERSION_FOR_MAXIMAL_RECONVERGENCE: u32 = vk::make_api_version(0, 1, 3, 274);

impl InstanceOwner {
    /// Loads the loader and creates an instance; with `validation`, also the validation layer
    /// and a debug messenger.
    pub fn new(validation: bool) -> Result<InstanceOwner, Error> {
        // Mesa reads its CPU caps once, when the driver first initializes in the process.
        crate::driver_bugs::before_loading_vulkan();
        // SAFETY: loading the system Vulkan loader runs its initialisers; that is what every
        // Vulkan application does.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| {
            Error::NoVulkan(format!(
                "{e}. Install the Vulkan loader and a driver \
                 (Debian/Ubuntu: `apt install libvulkan1 mesa-vulkan-drivers`; \
                 mesa-vulkan-drivers includes lavapipe, a CPU driver)"
            ))
        })?;
        // SAFETY: plain global query.
        let loader_version = unsafe { entry.try_enumerate_instance_version() }
            .vk("vkEnumerateInstanceVersion")?
            .unwrap_or(vk::API_VERSION_1_0);
        if loader_version < vk::API_VERSION_1_2 {
            return Err(Error::NoVulkan(format!(
                "the Vulkan loader supports only Vulkan {}; 1.2 or newer is needed",
                version_text(loader_version)
            )));
        }
        let api_version = loader_version.min(vk::API_VERSION_1_3);

        // SAFETY: plain global queries.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .vk("vkEnumerateInstanceLayerProperties")?;
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }
            .vk("vkEnumerateInstanceExtensionProperties")?;
        let has_ext = |list: &[vk::ExtensionProperties], name: &CStr| {
            list.iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(name))
        };

        let mut layer_names: Vec<*const c_char> = Vec::new();
        let mut ext_names: Vec<*const c_char> = Vec::new();
        let mut flags = vk::InstanceCreateFlags::empty();
        if has_ext(&exts, vk::KHR_PORTABILITY_ENUMERATION_NAME) {
            ext_names.push(vk::KHR_PORTABILITY_ENUMERATION_NAME.as_ptr());
            flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }
        let sink: Arc<MessageSink> = Arc::new(Mutex::new(Vec::new()));
        if validation {
            if !layers
                .iter()
                .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER))
            {
                return Err(Error::NoVulkan(
                    "PISA_VK_VALIDATION=1 asks for the validation layer, but \
                     VK_LAYER_KHRONOS_validation is not installed \
                     (Debian/Ubuntu: `apt install vulkan-validationlayers`)"
                        .to_string(),
                ));
            }
            // SAFETY: plain global query.
            let layer_exts =
                unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                    .vk("vkEnumerateInstanceExtensionProperties")?;
            if !has_ext(&exts, ash::ext::debug_utils::NAME)
                && !has_ext(&layer_exts, ash::ext::debug_utils::NAME)
            {
                return Err(Error::NoVulkan(
                    "validation is on but VK_EXT_debug_utils is not available".to_string(),
                ));
            }
            layer_names.push(VALIDATION_LAYER.as_ptr());
            ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let validation_layer_version = validation
            .then(|| {
                layers
                    .iter()
                    .find(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER))
                    .map(|l| l.spec_version)
            })
            .flatten();

        let app = vk::ApplicationInfo::default()
            .application_name(c"pisa-vk")
            .engine_name(c"pisa-runtime")
            .api_version(api_version);
        let mut messenger_info = messenger_create_info(&sink);
        let mut info = vk::InstanceCreateInfo::default()
            .flags(flags)
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&ext_names);
        if validation {
            // Also report messages from vkCreateInstance/vkDestroyInstance themselves.
            info = info.push_next(&mut messenger_info);
        }
        // SAFETY: every pointer in `info` is valid for the call; the sink outlives the
        // instance (it is kept in the messenger, which is destroyed before the instance).
        let instance = unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance")?;

        let mut owner = InstanceOwner {
            entry,
            instance,
            api_version,
            messenger: None,
            validation_layer_version,
        };
        if validation {
            let loader = ash::ext::debug_utils::Instance::new(&owner.entry, &owner.instance);
            let info = messenger_create_info(&sink);
            // SAFETY: the instance is valid and has VK_EXT_debug_utils enabled.
            let handle = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .vk("vkCreateDebugUtilsMessengerEXT")?;
            owner.messenger = Some(Messenger {
                loader,
                handle,
                sink,
            });
        }
        Ok(owner)
    }

    /// Takes every message collected so far (empty when validation is off).
    pub fn drain_messages(&self) -> Vec<String> {
        self.drain_where(|_| true)
    }

    /// Takes the messages raised by Vulkan calls of the calling thread; other threads'
    /// messages stay for their own drain.
    pub fn drain_thread_messages(&self) -> Vec<String> {
        let me = std::thread::current().id();
        self.drain_where(|t| t == me)
    }

    fn drain_where(&self, take: impl Fn(std::thread::ThreadId) -> bool) -> Vec<String> {
        let Some(m) = &self.messenger else {
            return Vec::new();
        };
        let mut sink = m.sink.lock().unwrap_or_else(|e| e.into_inner());
        let (taken, kept) = std::mem::take(&mut *sink)
            .into_iter()
            .partition::<Vec<_>, _>(|(t, _)| take(*t));
        *sink = kept;
        taken.into_iter().map(|(_, line)| line).collect()
    }
}

impl Drop for InstanceOwner {
    fn drop(&mut self) {
        // SAFETY: the owner of the logical device destroyed it before this runs (it is dropped
        // first); the messenger belongs to this instance.
        unsafe {
            if let Some(m) = self.messenger.take() {
                m.loader.destroy_debug_utils_messenger(m.handle, None);
                self.instance.destroy_instance(None);
                drop(m.sink); // only now: vkDestroyInstance may still report through it
            } else {
                self.instance.destroy_instance(None);
            }
        }
    }
}

/// "1.3.281" for a packed Vulkan version.
pub(crate) fn version_text(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

fn messenger_create_info(sink: &Arc<MessageSink>) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(Arc::as_ptr(sink) as *mut c_void)
}

/// Keeps warnings and errors of every message type (general, validation, performance); drops
/// the informational messages (the layer's "validation layer active" banner, cache notes).
fn keep(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
) -> bool {
    severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
            | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
    )
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if user.is_null() || data.is_null() || !keep(severity, types) {
        return vk::FALSE;
    }
    // Never unwind into the driver.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the layer passes a valid callback-data structure for the duration of the
        // call; `user` is the `Arc<MessageSink>` pointer kept alive by the messenger owner.
        let (data, sink) = unsafe { (&*data, &*(user as *const MessageSink)) };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: non-null strings in the callback data are NUL-terminated.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            "ERROR"
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            "WARNING"
        } else {
            "INFO"
        };
        let kind = if types.contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION) {
            "validation"
        } else if types.contains(vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE) {
            "performance"
        } else {
            "general"
        };
        let id = text(data.p_message_id_name);
        let msg = text(data.p_message);
        let line = if id.is_empty() {
            format!("[{level} {kind}] {msg}")
        } else {
            format!("[{level} {kind}] {id}: {msg}")
        };
        sink.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((std::thread::current().id(), line));
    });
    vk::FALSE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_warnings_and_errors_only() {
        use vk::DebugUtilsMessageSeverityFlagsEXT as S;
        use vk::DebugUtilsMessageTypeFlagsEXT as T;
        assert!(keep(S::WARNING, T::GENERAL));
        assert!(keep(S::ERROR, T::PERFORMANCE));
        assert!(keep(S::ERROR, T::VALIDATION));
        assert!(!keep(S::INFO, T::VALIDATION));
        assert!(!keep(S::VERBOSE, T::GENERAL));
    }

    #[test]
    fn version_text_reads_packed_versions() {
        assert_eq!(version_text(vk::make_api_version(0, 1, 3, 281)), "1.3.281");
    }
}
