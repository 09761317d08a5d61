//! The one error type of the runtime.
//!
//! Every fallible function of the crate returns [`Error`]. Vulkan calls that fail are reported
//! as [`Error::Vulkan`] with the name of the call, so that a user can look it up in the spec.

use ash::vk;

/// Everything that can go wrong in the runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Vulkan loader (`libvulkan.so.1`, `vulkan-1.dll`, ...) could not be loaded, or it
    /// offers too old an API version.
    #[error("Vulkan is not available: {0}")]
    NoVulkan(String),

    /// The loader works but no usable device was found.
    #[error("no usable Vulkan device: {0}")]
    NoDevice(String),

    /// A [`DeviceSelector`](crate::DeviceSelector) matched no device.
    #[error("no Vulkan device matches {selector}; available devices: {}", fmt_list(.available))]
    DeviceNotFound {
        /// The selector, as text (for example `name containing "nvidia"`).
        selector: String,
        /// `"index: name"` of every device the loader reported.
        available: Vec<String>,
    },

    /// A kernel (or the runtime itself) needs device features that are not enabled.
    #[error("{what} needs device features this device lacks: {}", .features.join(", "))]
    MissingFeatures {
        /// What needed them (a kernel name, or "the runtime").
        what: String,
        /// Vulkan spelling of every missing feature, e.g. `"shaderInt64"`.
        features: Vec<&'static str>,
    },

    /// A kernel needs device features that the device supports but that this context did
    /// not enable (it was created with [`ContextOptions::features`](crate::ContextOptions)
    /// naming fewer features).
    #[error(
        "{what} needs device features this context did not enable: {} (the device supports \
         them; create the context with every feature, or with this module's)",
        .features.join(", ")
    )]
    FeaturesNotEnabled {
        /// What needed them (a kernel name).
        what: String,
        /// Vulkan spelling of every feature left out.
        features: Vec<&'static str>,
    },

    /// A wait on the device took longer than the allowed time.
    ///
    /// The work is still running on the device after this error (unless it was a launch
    /// submitted in batches whose time ran out between two of them: then nothing runs). Until
    /// it ends, every call of the [`Context`](crate::Context) that needs the device returns
    /// [`Error::DeviceBusy`] at once (then the context works again); if it is still running
    /// when the context is dropped, its Vulkan objects are leaked rather than destroyed
    /// while in use. The message says whether the work included the first dispatch of a
    /// pipeline, which on a CPU driver compiles it, and which hint applies.
    #[error(
        "{what} did not finish within {seconds:.3} s (PISA_VK_TIMEOUT){}; {}",
        stopped_note(*.stopped),
        timeout_hint(.compiled, *.checked)
    )]
    Timeout {
        /// The time waited, in seconds (the timeout, for a submission that did not finish).
        seconds: f64,
        /// What was being waited for.
        what: String,
        /// The pipelines (`PipelineDesc::name_for_errors`) whose first dispatch the work
        /// included: on a CPU driver that dispatch compiles the pipeline. Empty when every
        /// pipeline had run before.
        compiled: Vec<String>,
        /// Whether the work included a launch of a checked kernel (set by the host API,
        /// which knows; `false` from the runtime).
        checked: bool,
        /// Whether the work has stopped: it was asked to through its cancel word and did
        /// (or the time ran out between two batches). The context is then usable at once;
        /// otherwise the work still runs and the device is busy with it.
        stopped: bool,
    },

    /// The work was cancelled ([`Submission::cancel`](crate::Submission::cancel), a
    /// [`CancelHandle`](crate::CancelHandle)) before it finished: what it wrote is
    /// incomplete. Nothing of it runs any more.
    #[error("{what} was cancelled")]
    Cancelled {
        /// What was cancelled.
        what: String,
    },

    /// A call was refused because work that timed out earlier ([`Error::Timeout`]) is still
    /// running on the device: nothing was done. The same call succeeds once that work has
    /// ended.
    #[error("cannot {what}: the device is still running {running}, which timed out earlier (PISA_VK_TIMEOUT); nothing was done")]
    DeviceBusy {
        /// What was refused (`"create a buffer"`, `"dispatch \"k\""`, ...).
        what: String,
        /// The work that timed out and still runs.
        running: String,
    },

    /// A kernel needs more shared (Workgroup) memory than the device has per work-group.
    #[error("{what} needs {size} bytes of shared memory per work-group, more than the device's maxComputeSharedMemorySize of {limit} bytes")]
    SharedMemory {
        /// The kernel (`PipelineDesc::name_for_errors`).
        what: String,
        /// The bytes it needs.
        size: u64,
        /// `maxComputeSharedMemorySize`.
        limit: u64,
    },

    /// A buffer access outside the buffer.
    #[error("out of bounds: {len} bytes at offset {offset} in a buffer of {size} bytes")]
    OutOfBounds {
        /// Requested start offset in bytes.
        offset: u64,
        /// Requested length in bytes.
        len: u64,
        /// Size of the buffer in bytes.
        size: u64,
    },

    /// A Vulkan call returned an error code.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The Vulkan function, e.g. `"vkCreateComputePipelines"`.
        call: &'static str,
        /// The code it returned.
        result: vk::Result,
    },

    /// The memory allocator failed.
    #[error("memory allocation failed: {0}")]
    Allocation(String),

    /// A caller passed an argument the runtime cannot honour (the message says which).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// What an [`Error::Timeout`] says of work that stopped.
fn stopped_note(stopped: bool) -> &'static str {
    match stopped {
        true => " and was stopped (the context is usable)",
        false => " and is still running (the device is busy until it ends)",
    }
}

/// The hint of an [`Error::Timeout`]: whether the time included compiling a pipeline, and
/// what to try.
fn timeout_hint(compiled: &[String], checked: bool) -> String {
    if compiled.is_empty() {
        return "its pipelines had run before, so no compiling was included: the kernel may \
                not end (a loop that never exits, a wait on memory no one writes), or the grid \
                needs a longer PISA_VK_TIMEOUT"
            .to_string();
    }
    let slow = match checked {
        true => "minutes for a checked kernel with thousands of accesses",
        false => "seconds for a large kernel",
    };
    format!(
        "it was the first dispatch of {}, which on a CPU driver includes compiling it ({slow}): \
         a longer PISA_VK_TIMEOUT may let it finish",
        compiled.join(", ")
    )
}

fn fmt_list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// Turns a raw Vulkan result into [`Error::Vulkan`] naming `call`.
pub(crate) trait VkResultExt<T> {
    /// Maps the error code of `call` to [`Error::Vulkan`].
    fn vk(self, call: &'static str) -> Result<T, Error>;
}

impl<T> VkResultExt<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> Result<T, Error> {
        self.map_err(|result| Error::Vulkan { call, result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout(compiled: &[&str], checked: bool) -> String {
        Error::Timeout {
            seconds: 2.0,
            what: "dispatch of k".into(),
            compiled: compiled.iter().map(|s| s.to_string()).collect(),
            checked,
            stopped: true,
        }
        .to_string()
    }

    #[test]
    fn a_timeout_says_whether_it_included_compiling_and_which_hint_applies() {
        assert_eq!(
            timeout(&[], true),
            "dispatch of k did not finish within 2.000 s (PISA_VK_TIMEOUT) and was stopped (the context is usable); its pipelines had \
             run before, so no compiling was included: the kernel may not end (a loop that \
             never exits, a wait on memory no one writes), or the grid needs a longer \
             PISA_VK_TIMEOUT"
        );
        assert_eq!(
            timeout(&["k", "k (edge)"], false),
            "dispatch of k did not finish within 2.000 s (PISA_VK_TIMEOUT) and was stopped (the context is usable); it was the first \
             dispatch of k, k (edge), which on a CPU driver includes compiling it (seconds for \
             a large kernel): a longer PISA_VK_TIMEOUT may let it finish"
        );
        assert!(timeout(&["k"], true).contains(
            "includes compiling it (minutes for a checked kernel with thousands of accesses)"
        ));
    }
}
