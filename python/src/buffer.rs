//! `Buffer`: device memory holding bytes (the host API's `Buffer<u8>`); its device address is
//! what a kernel's pointer parameter receives. The Python `pisa_vk.Buffer` adds shape and dtype.
//!
//! Where the memory is host-visible (every buffer of this runtime version: lavapipe,
//! integrated GPUs, resizable BAR), the host address of its persistent mapping is exposed
//! (`mapped_address`) so that Python can see the memory itself as a NumPy array
//! (`__array_interface__`, DLPack) without a copy.

use crate::bytes::Bytes;
use crate::errors::to_py;
use pyo3::prelude::*;

/// A zero-initialized device buffer of `nbytes` bytes.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct Buffer {
    pub(crate) inner: pisa_vk::Buffer<u8>,
    /// The host address of the mapped memory (`Buffer::map_mut`'s slice, taken once at
    /// creation; the mapping is persistent, so it stays valid while `inner` lives), or `None`
    /// when the memory is not host-visible.
    mapped: Option<usize>,
}

impl Buffer {
    /// Wraps a freshly made buffer, taking the address of its mapping.
    pub(crate) fn new(mut inner: pisa_vk::Buffer<u8>) -> Buffer {
        let mapped = inner.map_mut().ok().map(|s| s.as_mut_ptr() as usize);
        Buffer { inner, mapped }
    }
}

#[pymethods]
impl Buffer {
    /// The device address (what a `.param[8]` pointer parameter receives).
    #[getter]
    fn address(&self) -> u64 {
        self.inner.device_address()
    }

    /// The host address of the buffer's mapped memory (valid while this object lives), or
    /// `None` when the device's memory is not host-visible.
    #[getter]
    fn mapped_address(&self) -> Option<usize> {
        self.mapped
    }

    /// Whether the memory is imported host memory (`Context.import_host`: a NumPy array's
    /// own pages), not an allocation of the device.
    #[getter]
    fn imported(&self) -> bool {
        self.inner.raw().is_imported()
    }

    /// The size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.len()
    }

    /// Overwrites the whole buffer with the bytes of `data` (exactly `nbytes` of them).
    fn write(&self, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = Bytes::get(data, false)?;
        self.inner.write(data.as_slice()).map_err(to_py)
    }

    /// Copies the whole buffer into the writable, contiguous `out` (exactly `nbytes` long).
    fn read_into(&self, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut out = Bytes::get(out, true)?;
        let out = out.as_mut_slice();
        if out.len() != self.inner.len() {
            return Err(to_py(pisa_vk::Error::SizeMismatch {
                what: "Buffer.read_into".into(),
                expected: self.inner.len() as u64,
                got: out.len() as u64,
            }));
        }
        self.inner
            .raw()
            .read(0, out)
            .map_err(|e| to_py(pisa_vk::Error::Runtime(e)))
    }
}

/// The kernel arguments of a Python call: a native [`Buffer`] passes itself (its address;
/// a buffer of another context than the module's is refused with `ArgumentError`, as in
/// Rust), anything else its bytes (checked against the `.param`'s size at dispatch).
pub(crate) fn kernel_args(args: &[Bound<'_, PyAny>]) -> PyResult<Vec<pisa_vk::Arg>> {
    args.iter()
        .map(|a| match a.cast::<Buffer>() {
            Ok(b) => Ok(pisa_vk::Arg::from(&b.get().inner)),
            Err(_) => Ok(pisa_vk::Arg::bytes(a.extract::<Vec<u8>>()?)),
        })
        .collect()
}
