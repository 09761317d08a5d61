//! [`Buffer`]: a typed device buffer whose 64-bit device address is what a kernel gets.

use crate::{Error, Result};
use bytemuck::Pod;
use std::marker::PhantomData;

/// A device buffer of `len` elements of `T`.
pub struct Buffer<T: Pod> {
    raw: pisa_runtime::Buffer,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> Buffer<T> {
    pub(crate) fn new(raw: pisa_runtime::Buffer, len: usize) -> Buffer<T> {
        Buffer {
            raw,
            len,
            _t: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address a kernel dereferences (`.global` space).
    pub fn device_address(&self) -> u64 {
        self.raw.device_address()
    }

    /// A copy of the contents.
    pub fn read(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.raw.read(0, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Overwrites the contents; `data` must have exactly `len` elements.
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::SizeMismatch {
                what: "Buffer::write".into(),
                expected: self.len as u64,
                got: data.len() as u64,
            });
        }
        Ok(self.raw.write(0, bytemuck::cast_slice(data))?)
    }

    /// The untyped runtime buffer.
    pub fn raw(&self) -> &pisa_runtime::Buffer {
        &self.raw
    }
}
