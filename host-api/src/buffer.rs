//! [`Buffer`]: a typed device buffer whose 64-bit device address is what a kernel gets.
//!
//! Every buffer's memory is host-visible: the accessors ([`Buffer::read`],
//! [`Buffer::write_at`], [`Buffer::fill`]...) copy through the mapping at once, without a
//! submission and without waiting for the device, and [`Buffer::map_mut`] lends the mapped
//! memory itself. [`Buffer::copy_from`] is a device copy (one submission, waited for). To
//! order transfers with kernels, record them in a [`Stream`](crate::Stream).

use crate::error::{short_type_name, Extent};
use crate::{Error, Result};
use bytemuck::Pod;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// A device buffer of `len` elements of `T`, optionally named for error messages
/// ([`Buffer::named`]). Made by [`Context::buffer_from`](crate::Context::buffer_from) and
/// [`Context::zeroed`](crate::Context::zeroed); a kernel receives its device address
/// (`&buffer` as an argument). Its memory is freed when it is dropped and no submitted
/// stream uses it any more.
///
/// Host reads and writes go straight through the mapped memory, at once: they do not wait
/// for the device. While a submitted [`Stream`](crate::Stream) (or a dispatch on another
/// thread) writes the buffer, a read gives unspecified values; wait for the submission
/// first, or record the read in the stream.
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Error, Extent};
/// let ctx = pisa_vk::Context::new()?;
/// let out = ctx.zeroed::<u32>(4096)?.named("out");
/// out.write_at(10, &[1, 2, 3])?; // elements 10..13
/// assert_eq!(out.read_range(9..14)?, vec![0, 1, 2, 3, 0]);
/// out.fill_range(100..200, 7)?;
/// let mut host = vec![0u32; 4096];
/// out.read_into(&mut host)?; // no allocation
/// assert_eq!((host[99], host[100], host[199], host[200]), (0, 7, 7, 0));
/// // Sizes in errors are in elements and bytes, and name the buffer.
/// let e = out.write(&[1, 2, 3]).unwrap_err();
/// assert!(matches!(e, Error::Length { given: Extent { elements: 3, .. }, .. }));
/// assert_eq!(
///     e.to_string(),
///     "Buffer::write to buffer `out` (4096 u32): 3 u32 (12 bytes) given, 4096 u32 (16384 bytes) expected"
/// );
/// # Ok(()) }
/// ```
pub struct Buffer<T: Pod> {
    ctx: crate::Context,
    raw: pisa_runtime::Buffer,
    len: usize,
    name: Option<String>,
    _t: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("name", &self.name)
            .field("len", &self.len)
            .field("elem", &short_type_name::<T>())
            .field(
                "device_address",
                &format_args!("{:#x}", self.raw.device_address()),
            )
            .finish()
    }
}

/// `range` over `0..len` as `(start, end)`, or the [`Error::Range`] of `op` on `target`.
pub(crate) fn resolve_range<T>(
    range: impl RangeBounds<usize>,
    len: usize,
    op: &'static str,
    target: impl FnOnce() -> String,
) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s as u64,
        Bound::Excluded(&s) => s as u64 + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e as u64 + 1,
        Bound::Excluded(&e) => e as u64,
        Bound::Unbounded => len as u64,
    };
    if start > end || end > len as u64 {
        return Err(Error::Range {
            op,
            target: target(),
            start,
            end,
            size: Extent::of::<T>(len as u64),
        });
    }
    Ok((start as usize, end as usize))
}

impl<T: Pod> Buffer<T> {
    pub(crate) fn new(ctx: crate::Context, raw: pisa_runtime::Buffer, len: usize) -> Buffer<T> {
        Buffer {
            ctx,
            raw,
            len,
            name: None,
            _t: PhantomData,
        }
    }

    /// The buffer, named `name` in error messages (`` buffer `out` (4096 u32) ``). No cost
    /// beyond the string.
    pub fn named(mut self, name: impl Into<String>) -> Buffer<T> {
        self.name = Some(name.into());
        self
    }

    /// The name given by [`Buffer::named`], if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// How errors name the buffer.
    pub(crate) fn target(&self) -> String {
        let elem = short_type_name::<T>();
        match &self.name {
            Some(n) => format!("buffer `{n}` ({} {elem})", self.len),
            None => format!("a buffer of {} {elem}", self.len),
        }
    }

    /// Number of elements of `T`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its size in bytes (`len * size_of::<T>()`).
    pub fn size_bytes(&self) -> u64 {
        self.len as u64 * std::mem::size_of::<T>() as u64
    }

    /// The device address a kernel dereferences (`.global` space), aligned to at least 16
    /// bytes. What `&buffer` passes as a kernel argument; as a raw number in memory the
    /// device reads, the buffer must be kept alive by the caller.
    pub fn device_address(&self) -> u64 {
        self.raw.device_address()
    }

    /// The elements in `range` as a byte range, checked ([`Error::Range`]).
    pub(crate) fn byte_range(
        &self,
        range: impl RangeBounds<usize>,
        op: &'static str,
    ) -> Result<(u64, u64)> {
        let (start, end) = resolve_range::<T>(range, self.len, op, || self.target())?;
        let size = std::mem::size_of::<T>() as u64;
        Ok((start as u64 * size, (end - start) as u64 * size))
    }

    /// A copy of the contents. Cost: a host copy through the mapping into a new vector; no
    /// submission, no wait for the device. Errors: `RuntimeError::DeviceBusy` while a
    /// submission that timed out still runs (it may still write the buffer).
    pub fn read(&self) -> Result<Vec<T>> {
        self.read_range(..)
    }

    /// A copy of the elements in `range` (`2..10`, `..4`, `..`). Cost: as [`Buffer::read`].
    /// Errors: [`Error::Range`] when the range is not inside the buffer,
    /// `RuntimeError::DeviceBusy`.
    pub fn read_range(&self, range: impl RangeBounds<usize>) -> Result<Vec<T>> {
        let (offset, bytes) = self.byte_range(range, "Buffer::read_range of")?;
        let mut out = vec![T::zeroed(); bytes as usize / std::mem::size_of::<T>().max(1)];
        self.raw.read(offset, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Copies the whole buffer into `out`: a host copy, no allocation, no wait. Errors:
    /// [`Error::Length`] unless `out` has exactly [`Buffer::len`] elements,
    /// `RuntimeError::DeviceBusy`.
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len {
            return Err(self.length_error("Buffer::read_into from", out.len()));
        }
        self.read_range_into(0, out)
    }

    /// Copies the `out.len()` elements from `start` into `out`: a host copy, no allocation,
    /// no wait. Errors: [`Error::Range`] when they are not inside the buffer,
    /// `RuntimeError::DeviceBusy`.
    pub fn read_range_into(&self, start: usize, out: &mut [T]) -> Result<()> {
        let end = start.saturating_add(out.len());
        let (offset, _) = self.byte_range(start..end, "Buffer::read_range_into of")?;
        Ok(self.raw.read(offset, bytemuck::cast_slice_mut(out))?)
    }

    fn length_error(&self, op: &'static str, given: usize) -> Error {
        Error::Length {
            op,
            target: self.target(),
            expected: Extent::of::<T>(self.len as u64),
            given: Extent::of::<T>(given as u64),
        }
    }

    /// Overwrites the contents with `data`: a host copy through the mapping, no submission,
    /// no wait (a kernel still running on the buffer races with it). Errors:
    /// [`Error::Length`] (in elements and bytes) unless `data` has exactly [`Buffer::len`]
    /// elements, `RuntimeError::DeviceBusy` while a submission that timed out still runs.
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(self.length_error("Buffer::write to", data.len()));
        }
        Ok(self.raw.write(0, bytemuck::cast_slice(data))?)
    }

    /// Overwrites the elements from `start` with `data`: a host copy, as [`Buffer::write`].
    /// Errors: [`Error::Range`] when they are not inside the buffer,
    /// `RuntimeError::DeviceBusy`.
    pub fn write_at(&self, start: usize, data: &[T]) -> Result<()> {
        let end = start.saturating_add(data.len());
        let (offset, _) = self.byte_range(start..end, "Buffer::write_at to")?;
        Ok(self.raw.write(offset, bytemuck::cast_slice(data))?)
    }

    /// Sets every element to `value`: host writes through the mapping, as
    /// [`Buffer::fill_range`]. Errors: `RuntimeError::DeviceBusy`.
    pub fn fill(&self, value: T) -> Result<()> {
        self.fill_range(.., value)
    }

    /// Sets the elements in `range` to `value`. Cost: host writes through the mapping in
    /// chunks of at most 64 KiB (a chunk of repeated values is allocated once); no
    /// submission. Errors: [`Error::Range`] when the range is not inside the buffer,
    /// `RuntimeError::DeviceBusy`.
    pub fn fill_range(&self, range: impl RangeBounds<usize>, value: T) -> Result<()> {
        let (offset, bytes) = self.byte_range(range, "Buffer::fill_range of")?;
        let size = std::mem::size_of::<T>() as u64;
        if size == 0 || bytes == 0 {
            return Ok(());
        }
        let per_chunk = (65536 / size).max(1);
        let chunk = vec![value; per_chunk.min(bytes / size) as usize];
        let mut at = 0;
        while at < bytes {
            let n = (bytes - at).min(per_chunk * size);
            let part: &[u8] = bytemuck::cast_slice(&chunk);
            self.raw.write(offset + at, &part[..n as usize])?;
            at += n;
        }
        Ok(())
    }

    /// Copies every element of `src` into this buffer on the device. Cost: one submission
    /// of one copy command, waited for (at most `PISA_VK_TIMEOUT` seconds). Errors:
    /// [`Error::Length`] unless both have the same length, `RuntimeError::InvalidArgument`
    /// for a buffer of another context or a copy of a buffer onto itself,
    /// `RuntimeError::DeviceBusy`, `RuntimeError::Timeout`, `RuntimeError::Vulkan`.
    pub fn copy_from(&self, src: &Buffer<T>) -> Result<()> {
        if src.len != self.len {
            return Err(Error::Length {
                op: "Buffer::copy_from into",
                target: self.target(),
                expected: Extent::of::<T>(self.len as u64),
                given: Extent::of::<T>(src.len as u64),
            });
        }
        let mut s = self.ctx.stream();
        s.copy(src, self)?;
        s.submit()?.wait().map(drop)
    }

    /// The mapped memory itself as a mutable slice: reads and writes go straight to the
    /// buffer, no copy, no allocation. Needs `&mut self`, so nothing can record the buffer
    /// into a stream or pass it to a dispatch while the slice lives. Errors:
    /// `RuntimeError::InvalidArgument` while a submitted stream that uses the buffer has not
    /// been waited for (or dropped), or when the memory is not host-visible (every buffer of
    /// this version is); [`Error::Mismatch`] when `T`'s alignment exceeds the buffer's 16
    /// bytes; `RuntimeError::DeviceBusy` while a submission that timed out still runs.
    pub fn map_mut(&mut self) -> Result<&mut [T]> {
        let target = self.target();
        let len = self.len;
        let bytes = self.raw.mapped_mut()?;
        let bytes = &mut bytes[..len * std::mem::size_of::<T>()];
        bytemuck::try_cast_slice_mut(bytes).map_err(|e| {
            Error::Mismatch(format!(
                "cannot map {target} as {}: {e}",
                short_type_name::<T>()
            ))
        })
    }

    /// The untyped runtime buffer (its handle, for code that records its own Vulkan
    /// commands).
    pub fn raw(&self) -> &pisa_runtime::Buffer {
        &self.raw
    }
}
