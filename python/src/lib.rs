//! `pisa_vk._native`: the thin pyo3 layer between the Python package `pisa_vk` and the Rust
//! host API (crate `pisa-vk`).
//!
//! Everything here maps one host-API call to one Python method and moves bytes: no PISA
//! semantics, no NumPy, no argument typing. The Python package (`pisa_vk/*.py`) turns NumPy
//! arrays and Python scalars into the bytes of kernel parameters and buffers, and builds the
//! public classes on top of these. Device work (translation, pipeline creation, dispatch) runs
//! with the GIL released, so other Python threads go on meanwhile. The `tracing` spans of the
//! translator and runtime are queued for Python's `logging` (`log`).

mod buffer;
mod bytes;
mod context;
mod errors;
mod kinds;
mod log;
mod module;
mod reference;
mod stream;
mod wait;

use pyo3::prelude::*;

/// The native half of `pisa_vk`: `Context`, `Module`, `Buffer`, `Stream`, `Submission` over the Rust host API.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // On import, before anything of this process can load Vulkan through pisa-vk: lavapipe
    // below AVX-512 on AVX-512 CPUs unless the user chose (docs/driver-bugs.md).
    pisa_vk::avoid_known_driver_bugs();
    m.add_class::<context::Context>()?;
    m.add_class::<module::Module>()?;
    m.add_class::<reference::ReferenceModule>()?;
    m.add_class::<buffer::Buffer>()?;
    m.add_class::<stream::Stream>()?;
    m.add_class::<stream::Submission>()?;
    m.add_function(wrap_pyfunction!(cpu_caps, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_has_avx512, m)?)?;
    m.add_function(wrap_pyfunction!(log::set_level, m)?)?;
    m.add_function(wrap_pyfunction!(log::take, m)?)?;
    log::install();
    Ok(())
}

/// What pisa-vk decided about lavapipe's CPU features when the module was imported
/// (docs/driver-bugs.md): `"capped"` (it set `GALLIUM_OVERRIDE_CPU_CAPS=avx`), `"set by
/// user"`, `"not needed"` (no AVX-512) or `"too late"` (Vulkan was loaded before).
#[pyfunction]
fn cpu_caps() -> &'static str {
    match pisa_vk::avoid_known_driver_bugs() {
        pisa_vk::CpuCaps::Capped => "capped",
        pisa_vk::CpuCaps::SetByUser(_) => "set by user",
        pisa_vk::CpuCaps::NotNeeded => "not needed",
        pisa_vk::CpuCaps::TooLate => "too late",
    }
}

/// Whether the CPU has AVX-512.
#[pyfunction]
fn cpu_has_avx512() -> bool {
    pisa_vk::driver_bugs::cpu_has_avx512()
}
