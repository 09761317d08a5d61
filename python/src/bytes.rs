//! Byte views of Python objects that export the buffer protocol (NumPy arrays, `bytes`,
//! `bytearray`, `memoryview`), borrowed for the length of one host-API call.

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;

/// A C-contiguous buffer export of a Python object, seen as bytes.
pub struct Bytes {
    buf: PyUntypedBuffer,
}

impl Bytes {
    /// Borrows `obj`'s memory; refuses a non-contiguous one, and a read-only one when
    /// `writable` is asked.
    pub fn get(obj: &Bound<'_, PyAny>, writable: bool) -> PyResult<Bytes> {
        let buf = PyUntypedBuffer::get(obj)?;
        if !buf.is_c_contiguous() {
            return Err(PyValueError::new_err(
                "the buffer is not C-contiguous (pass a contiguous copy)",
            ));
        }
        if writable && buf.readonly() {
            return Err(PyBufferError::new_err("the buffer is read-only"));
        }
        Ok(Bytes { buf })
    }

    /// The bytes (valid while `self` holds the export and the GIL keeps other writers out).
    pub fn as_slice(&self) -> &[u8] {
        let len = self.buf.len_bytes();
        if len == 0 {
            return &[];
        }
        // SAFETY: the export is C-contiguous and `len` bytes long; it stays valid (and its
        // owner cannot resize it) until `self.buf` is released.
        unsafe { std::slice::from_raw_parts(self.buf.buf_ptr().cast::<u8>(), len) }
    }

    /// The bytes, for writing (only for an export checked writable by [`Bytes::get`]).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.buf.len_bytes();
        if len == 0 {
            return &mut [];
        }
        debug_assert!(!self.buf.readonly());
        // SAFETY: as in `as_slice`; `get(.., true)` checked that the export is writable, and
        // `&mut self` keeps this the only slice made from it.
        unsafe { std::slice::from_raw_parts_mut(self.buf.buf_ptr().cast::<u8>(), len) }
    }
}
