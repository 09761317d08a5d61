//! [`Buffer`]: host-visible device memory that kernels reach through its device address.
//!
//! Every buffer is a `VkBuffer` with storage, device-address and transfer usage, bound to
//! persistently mapped, host-coherent memory from gpu-allocator (`MemoryLocation::CpuToGpu`),
//! aligned to at least [`BUFFER_ALIGNMENT`] bytes and followed by [`GUARD_BYTES`] that no
//! other buffer uses. The host reads and writes it directly through the mapping; a
//! [`Stream`](crate::Stream)'s submission makes shader writes visible before its wait returns.
//!
//! A buffer the host never reads — a launch's private scratch — may instead live in
//! device-local memory ([`Context::create_scratch_buffer`](crate::Context::create_scratch_buffer),
//! `MemoryLocation::GpuOnly`): on a discrete GPU that memory is not host-visible, so such a
//! buffer has no mapping and refuses host reads and writes ([`Buffer::is_host_visible`]);
//! where all memory is host-visible (lavapipe) it is mapped like any other.
//!
//! A buffer may instead be *imported* host memory ([`Context::import_host`](crate::Context::import_host),
//! `crate::import`): the memory is the host program's own allocation, reached at its own host
//! address, and the buffer holds a keep-alive handle of its owner (say, a NumPy array) until
//! the device memory object is freed.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use crate::error::{Error, VkResultExt};
use crate::shared::DeviceShared;

/// The least alignment of every buffer's memory (and so of its device address), in bytes.
pub const BUFFER_ALIGNMENT: u64 = 16;

/// Bytes of memory after every buffer's end that belong to its allocation and to no other
/// buffer: an access that runs a little past a buffer's end touches no other buffer, so a
/// memory checker that knows the live buffers (`crate::live`) sees it (spec-notes §73).
pub const GUARD_BYTES: u64 = 256;

/// Device memory owned by one [`Context`](crate::Context)'s device, freed on drop.
///
/// The buffer keeps the device alive: it may outlive the `Context` that made it. Host accesses
/// are plain memory copies; doing them while a dispatch on another thread writes the same bytes
/// gives unspecified values. A [`Stream`](crate::Stream) that records a command on the buffer
/// keeps its memory alive until the submission has finished, so dropping the `Buffer` earlier
/// is safe (the memory is freed afterwards).
pub struct Buffer {
    raw: Arc<RawBuffer>,
}

/// Keeps a [`Buffer`]'s memory alive: what a stream holds for a buffer a kernel reaches
/// through an address ([`Buffer::lease`]).
#[derive(Clone)]
pub struct BufferLease(pub(crate) Arc<RawBuffer>);

impl std::fmt::Debug for BufferLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BufferLease({:#x})", self.0.address)
    }
}

/// What keeps imported host memory allocated: dropped only after the device memory object
/// that imports it is freed, and never when the device is wedged (a timed-out kernel may
/// still write the memory: then the owner is leaked with it).
pub type KeepAlive = Box<dyn Send + Sync>;

/// The memory behind a [`RawBuffer`].
enum Memory {
    /// From the allocator, mapped.
    Allocated(Allocation),
    /// Imported host memory: the device memory object, the host address of the buffer's
    /// first byte, and its owner's keep-alive handle.
    Imported {
        memory: vk::DeviceMemory,
        host: usize,
        keep: KeepAlive,
    },
    /// Given back (while dropping).
    Freed,
}

/// The Vulkan buffer and its memory, shared by the [`Buffer`] and the submissions using it.
pub(crate) struct RawBuffer {
    shared: Arc<DeviceShared>,
    buffer: vk::Buffer,
    memory: Memory,
    size: u64,
    address: u64,
    /// Listed in the context's live buffers ([`crate::live`]).
    listed: bool,
    /// Where the buffer's first byte is in the `VkBuffer` (0 but for imported memory, whose
    /// `VkBuffer` starts at an aligned address before it: `crate::import`). Commands on the
    /// `VkBuffer` add it to their offsets ([`RawBuffer::vk_offset`]).
    delta: u64,
}

impl Buffer {
    /// A buffer of `size` bytes in host-visible memory; `listed` ones are registered among
    /// the context's live buffers until their memory is freed.
    pub(crate) fn new(
        shared: &Arc<DeviceShared>,
        size: u64,
        listed: bool,
    ) -> Result<Buffer, Error> {
        Ok(Buffer {
            raw: Arc::new(RawBuffer::new(
                shared,
                size,
                listed,
                MemoryLocation::CpuToGpu,
            )?),
        })
    }

    /// An unlisted buffer of `size` bytes in device-local memory (`MemoryLocation::GpuOnly`),
    /// or in host-visible memory when the device cannot allocate that (no device-local
    /// memory type fits, or its heap is full).
    pub(crate) fn device_local(shared: &Arc<DeviceShared>, size: u64) -> Result<Buffer, Error> {
        let raw = match RawBuffer::new(shared, size, false, MemoryLocation::GpuOnly) {
            Err(Error::Allocation(_)) => {
                RawBuffer::new(shared, size, false, MemoryLocation::CpuToGpu)?
            }
            other => other?,
        };
        Ok(Buffer { raw: Arc::new(raw) })
    }

    /// Imports the `len` host bytes at `ptr` as a buffer's memory, without a copy (see
    /// [`Context::import_host`](crate::Context::import_host)); `keep` is dropped once the
    /// memory is no longer the device's.
    ///
    /// # Safety
    /// As [`Context::import_host`](crate::Context::import_host).
    pub(crate) unsafe fn import(
        shared: &Arc<DeviceShared>,
        ptr: *mut u8,
        len: usize,
        keep: KeepAlive,
    ) -> Result<Result<Buffer, crate::ImportRefused>, Error> {
        // SAFETY: the caller's promise.
        let imported = match unsafe { crate::import::import(shared, ptr, len) }? {
            Ok(i) => i,
            Err(refused) => return Ok(Err(refused)),
        };
        let end = imported.address + len as u64;
        let overlaps = shared
            .live
            .snapshot()
            .iter()
            .any(|b| b.address < end && imported.address < b.address + b.size.max(1));
        if overlaps {
            // SAFETY: just made; nothing uses them.
            unsafe {
                shared.device.destroy_buffer(imported.buffer, None);
                shared.device.free_memory(imported.memory, None);
            }
            return Ok(Err(crate::ImportRefused(
                "that memory is already part of a buffer of this context".into(),
            )));
        }
        shared.live.insert(crate::LiveBuffer {
            address: imported.address,
            size: len as u64,
        });
        Ok(Ok(Buffer {
            raw: Arc::new(RawBuffer {
                shared: Arc::clone(shared),
                buffer: imported.buffer,
                memory: Memory::Imported {
                    memory: imported.memory,
                    host: ptr as usize,
                    keep,
                },
                delta: imported.delta,
                size: len as u64,
                address: imported.address,
                listed: true,
            }),
        }))
    }

    /// Whether the memory is imported host memory ([`Context::import_host`](crate::Context::import_host)).
    pub fn is_imported(&self) -> bool {
        matches!(self.raw.memory, Memory::Imported { .. })
    }

    /// The size asked for at creation, in bytes (an allocated buffer is rounded up to a
    /// multiple of 4 and followed by [`GUARD_BYTES`]; an imported one is the host range).
    pub fn size(&self) -> u64 {
        self.raw.size
    }

    /// The buffer's device address (`vkGetBufferDeviceAddress`), what kernels use as a
    /// `.global` pointer. Aligned to at least [`BUFFER_ALIGNMENT`].
    pub fn device_address(&self) -> u64 {
        self.raw.address
    }

    /// Where the buffer's first byte is in its `VkBuffer` ([`Buffer::handle`]): 0, but for
    /// imported host memory, whose `VkBuffer` starts at the aligned address before it.
    pub fn handle_offset(&self) -> u64 {
        self.raw.delta
    }

    /// The id of the context that made it ([`Context::id`](crate::Context::id)).
    pub fn context_id(&self) -> u64 {
        self.raw.shared.live.id()
    }

    /// The raw `VkBuffer` handle (for callers that record their own commands). The buffer
    /// starts [`Buffer::handle_offset`] bytes into it (0 but for imported memory).
    pub fn handle(&self) -> vk::Buffer {
        self.raw.buffer
    }

    /// Whether the host can map the memory: `true` but for a scratch buffer in device-local
    /// memory that is not host-visible
    /// ([`Context::create_scratch_buffer`](crate::Context::create_scratch_buffer)), which
    /// [`Stream`](crate::Stream) commands and kernels reach but host reads and writes refuse.
    pub fn is_host_visible(&self) -> bool {
        !self.raw.mapped().is_null()
    }

    /// The property flags of the memory type of the buffer's memory (`DEVICE_LOCAL`,
    /// `HOST_VISIBLE`, ...); `HOST_VISIBLE | HOST_COHERENT` for imported host memory.
    pub fn memory_properties(&self) -> vk::MemoryPropertyFlags {
        match &self.raw.memory {
            Memory::Allocated(a) => a.memory_properties(),
            Memory::Imported { .. } => {
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
            }
            Memory::Freed => vk::MemoryPropertyFlags::empty(),
        }
    }

    /// The handle a submission keeps to the memory while it runs.
    pub(crate) fn keep(&self) -> Arc<RawBuffer> {
        Arc::clone(&self.raw)
    }

    /// A handle that keeps the buffer's memory alive (not usable otherwise), for
    /// [`Stream::keep_lease`](crate::Stream::keep_lease). While one exists,
    /// [`Buffer::mapped_mut`] refuses.
    pub fn lease(&self) -> BufferLease {
        BufferLease(self.keep())
    }

    /// Whether `shared` is the device of this buffer.
    pub(crate) fn belongs_to(&self, shared: &Arc<DeviceShared>) -> bool {
        Arc::ptr_eq(&self.raw.shared, shared)
    }

    /// `Ok` when `len` bytes at `offset` lie inside the buffer, else [`Error::OutOfBounds`].
    /// No device access.
    pub fn check_range(&self, offset: u64, len: u64) -> Result<(), Error> {
        self.raw.check(offset, len).map(drop)
    }

    /// Copies `bytes` into the buffer at `offset` through the mapping: no submission, no
    /// wait for the device (a submission still using the buffer races with it). Errors:
    /// [`Error::OutOfBounds`] if it does not fit; [`Error::InvalidArgument`] for memory
    /// that is not host-visible; [`Error::DeviceBusy`] while a dispatch that timed out
    /// still runs (it may use the buffer).
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), Error> {
        self.raw.write(offset, bytes)
    }

    /// Copies bytes from the buffer at `offset` into `out` through the mapping: no
    /// submission, no wait for the device. Errors: [`Error::OutOfBounds`] if the range does
    /// not fit; [`Error::InvalidArgument`] for memory that is not host-visible;
    /// [`Error::DeviceBusy`] while a dispatch that timed out still runs (it may still write
    /// the buffer).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        self.raw.read(offset, out)
    }

    /// The whole memory as a mutable byte slice, mapped: no copy. Needs `&mut self`, so no
    /// command can be recorded on the buffer while the slice lives. Errors:
    /// [`Error::InvalidArgument`] while a submitted [`Stream`](crate::Stream) that uses the
    /// buffer has not been waited for (the device may read or write it), or when the memory
    /// is not host-visible; [`Error::DeviceBusy`] while a dispatch that timed out still
    /// runs. A kernel that writes the memory through an address it got some other way
    /// (stored in another buffer) is outside what this check can see.
    pub fn mapped_mut(&mut self) -> Result<&mut [u8], Error> {
        if Arc::strong_count(&self.raw) > 1 {
            return Err(Error::InvalidArgument(format!(
                "cannot map a buffer of {} bytes: a submitted stream that uses it has not \
                 been waited for",
                self.raw.size
            )));
        }
        let ptr = self.raw.mapped();
        if ptr.is_null() {
            return Err(Error::InvalidArgument(
                "cannot map a buffer whose memory is not host-visible".into(),
            ));
        }
        self.raw
            .shared
            .check_idle(|| format!("map a buffer of {} bytes", self.raw.size))?;
        if self.raw.size == 0 {
            return Ok(&mut []);
        }
        // SAFETY: the mapping covers `size` bytes and stays valid while `self` lives; `&mut
        // self` and the unique `Arc` exclude every other host or recorded access through
        // this API; the memory is host-coherent.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, self.raw.size as usize) })
    }
}

/// A bound, device-addressable buffer with its memory, host-mapped unless made in
/// device-local memory: what [`RawBuffer`] and the runtime's own buffers (the cancel words)
/// are made of.
pub(crate) struct HostBuffer {
    /// The buffer.
    pub buffer: vk::Buffer,
    /// Its memory: host-coherent and mapped for `MemoryLocation::CpuToGpu`.
    pub allocation: Allocation,
    /// Its device address.
    pub address: u64,
}

impl HostBuffer {
    /// A buffer of `size` bytes with storage and device-address usage (and `usage`), aligned
    /// to at least [`BUFFER_ALIGNMENT`], followed by `guard` more bytes of its allocation,
    /// mapped (an error if the memory is not host-visible). `name` labels the allocation.
    pub fn new(
        shared: &DeviceShared,
        size: u64,
        usage: vk::BufferUsageFlags,
        guard: u64,
        name: &str,
    ) -> Result<HostBuffer, Error> {
        Self::at(shared, (size, usage, guard), name, MemoryLocation::CpuToGpu)
    }

    /// As [`HostBuffer::new`], in memory of `location`: only `CpuToGpu` must be mapped
    /// (`GpuOnly` memory is mapped when its type happens to be host-visible).
    pub fn at(
        shared: &DeviceShared,
        (size, usage, guard): (u64, vk::BufferUsageFlags, u64),
        name: &str,
        location: MemoryLocation,
    ) -> Result<HostBuffer, Error> {
        let device = &shared.device;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | usage,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer = unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        // SAFETY: `buffer` was just created on this device.
        let mut requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        requirements.alignment = requirements.alignment.max(BUFFER_ALIGNMENT);
        requirements.size += guard;
        let most = shared.max_allocation_size;
        if requirements.size > most {
            // SAFETY: the buffer is unused and unbound.
            unsafe { device.destroy_buffer(buffer, None) };
            return Err(Error::Allocation(format!(
                "{} bytes (with {guard} guard bytes) are more than this device's largest \
                 allocation ({most} bytes: its largest memory heap or \
                 maxMemoryAllocationSize)",
                requirements.size
            )));
        }
        let allocation = shared.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused and unbound.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(Error::Allocation(e.to_string()));
            }
        };
        let fail = |allocation: Allocation, err: Error| {
            let _ = shared.allocator().free(allocation);
            // SAFETY: the buffer is not used by any command.
            unsafe { device.destroy_buffer(buffer, None) };
            Err(err)
        };
        if location == MemoryLocation::CpuToGpu && allocation.mapped_ptr().is_none() {
            let err = Error::Allocation("buffer memory is not host-visible".into());
            return fail(allocation, err);
        }
        // SAFETY: memory and offset come from the allocator for these requirements.
        let bound =
            unsafe { device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) };
        if let Err(result) = bound {
            let err = Error::Vulkan {
                call: "vkBindBufferMemory",
                result,
            };
            return fail(allocation, err);
        }
        // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and is bound to memory allocated
        // with the device-address flag (the allocator was created with it).
        let address = unsafe {
            device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer))
        };
        Ok(HostBuffer {
            buffer,
            allocation,
            address,
        })
    }
}

impl RawBuffer {
    fn new(
        shared: &Arc<DeviceShared>,
        size: u64,
        listed: bool,
        location: MemoryLocation,
    ) -> Result<RawBuffer, Error> {
        if size > isize::MAX as u64 - BUFFER_ALIGNMENT {
            return Err(Error::InvalidArgument(format!(
                "buffer size {size} is too large"
            )));
        }
        let vk_size = size.max(4).next_multiple_of(4);
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let HostBuffer {
            buffer,
            allocation,
            address,
        } = HostBuffer::at(
            shared,
            (vk_size, usage, GUARD_BYTES),
            "pisa-runtime buffer",
            location,
        )
        .map_err(|e| match e {
            Error::Allocation(m) => Error::Allocation(format!("{size} bytes: {m}")),
            e => e,
        })?;
        if listed {
            shared.live.insert(crate::LiveBuffer { address, size });
        }
        Ok(RawBuffer {
            shared: Arc::clone(shared),
            buffer,
            memory: Memory::Allocated(allocation),
            delta: 0,
            size,
            address,
            listed,
        })
    }

    /// The `VkBuffer`.
    pub fn handle(&self) -> vk::Buffer {
        self.buffer
    }

    /// The offset in the `VkBuffer` of the buffer's byte `offset` (commands on the handle
    /// use these).
    pub fn vk_offset(&self, offset: u64) -> u64 {
        self.delta + offset
    }

    /// `offset` as a host index when `len` bytes from it fit.
    pub fn check(&self, offset: u64, len64: u64) -> Result<usize, Error> {
        match offset.checked_add(len64) {
            Some(end) if end <= self.size => Ok(offset as usize),
            _ => Err(Error::OutOfBounds {
                offset,
                len: len64,
                size: self.size,
            }),
        }
    }

    fn mapped(&self) -> *mut u8 {
        // `new` checked the mapping exists; a buffer without memory is being dropped.
        match &self.memory {
            Memory::Allocated(a) => a
                .mapped_ptr()
                .map(|p| p.as_ptr().cast::<u8>())
                .unwrap_or(std::ptr::null_mut()),
            Memory::Imported { host, .. } => *host as *mut u8,
            Memory::Freed => std::ptr::null_mut(),
        }
    }

    /// `offset` as a host index when `len` bytes from it fit in memory the host reaches.
    fn host_range(&self, offset: u64, len: u64) -> Result<usize, Error> {
        let start = self.check(offset, len)?;
        if self.mapped().is_null() && len > 0 {
            return Err(Error::InvalidArgument(
                "the host cannot read or write a buffer whose memory is not host-visible".into(),
            ));
        }
        Ok(start)
    }

    /// See [`Buffer::write`].
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), Error> {
        let start = self.host_range(offset, bytes.len() as u64)?;
        self.shared
            .check_idle(|| format!("write {} bytes to a buffer", bytes.len()))?;
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: `start + len <= size <=` the mapped allocation size; the mapping is
        // host-coherent, so no flush is needed; source and mapping cannot overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapped().add(start), bytes.len())
        };
        Ok(())
    }

    /// See [`Buffer::read`].
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        let start = self.host_range(offset, out.len() as u64)?;
        self.shared
            .check_idle(|| format!("read {} bytes from a buffer", out.len()))?;
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: as in `write`, the range lies inside the mapped, host-coherent allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(self.mapped().add(start), out.as_mut_ptr(), out.len())
        };
        Ok(())
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("size", &self.raw.size)
            .field("device_address", &format_args!("{:#x}", self.raw.address))
            .finish()
    }
}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        if self.listed {
            self.shared.live.remove(self.address);
        }
        let memory = std::mem::replace(&mut self.memory, Memory::Freed);
        if !self.shared.may_destroy() {
            // A timed-out kernel may still use it: leak it, and an imported range's owner
            // too (the kernel may still write that host memory).
            std::mem::forget(memory);
            return;
        }
        // SAFETY: every submission that records a command on the buffer holds an `Arc` to
        // it until it has finished, so no command uses the buffer now.
        unsafe { self.shared.device.destroy_buffer(self.buffer, None) };
        match memory {
            Memory::Allocated(a) => {
                let _ = self.shared.allocator().free(a);
            }
            Memory::Imported { memory, keep, .. } => {
                // SAFETY: the only buffer bound to it is destroyed; nothing uses it.
                unsafe { self.shared.device.free_memory(memory, None) };
                drop(keep); // the host memory may go now, not before
            }
            Memory::Freed => {}
        }
    }
}
