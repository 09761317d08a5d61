//! What the host API's integration tests share: a context on lavapipe.

use pisa_vk::{Context, ContextOptions, DeviceSelector, DiskCache};

/// A context on lavapipe (the CI device) with a per-dispatch timeout of `timeout_seconds`
/// and no on-disk pipeline cache, so that each test compiles what it runs.
pub fn lavapipe(timeout_seconds: f64) -> Context {
    let options = ContextOptions {
        timeout_seconds: Some(timeout_seconds),
        pipeline_cache: DiskCache::Off,
        ..ContextOptions::default()
    };
    Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &options)
        .expect("lavapipe (mesa-vulkan-drivers) must be installed for these tests")
}
