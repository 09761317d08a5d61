//! [`Buffer`]: host-visible device memory that kernels reach through its device address.
//!
//! Every buffer is a `VkBuffer` with storage, device-address and transfer usage, bound to
//! persistently mapped, host-coherent memory from gpu-allocator (`MemoryLocation::CpuToGpu`),
//! aligned to at least [`BUFFER_ALIGNMENT`] bytes. The host reads and writes it directly through
//! the mapping; [`Context::dispatch`](crate::Context::dispatch) makes shader writes visible
//! before it returns.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use crate::context::DeviceShared;
use crate::error::{Error, VkResultExt};

/// The least alignment of every buffer's memory (and so of its device address), in bytes.
pub const BUFFER_ALIGNMENT: u64 = 16;

/// Device memory owned by one [`Context`](crate::Context)'s device, freed on drop.
///
/// The buffer keeps the device alive: it may outlive the `Context` that made it. Host accesses
/// are plain memory copies; doing them while a dispatch on another thread writes the same bytes
/// gives unspecified values.
pub struct Buffer {
    shared: Arc<DeviceShared>,
    buffer: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    address: u64,
}

impl Buffer {
    pub(crate) fn new(shared: &Arc<DeviceShared>, size: u64) -> Result<Buffer, Error> {
        if size > isize::MAX as u64 - BUFFER_ALIGNMENT {
            return Err(Error::InvalidArgument(format!(
                "buffer size {size} is too large"
            )));
        }
        let device = &shared.device;
        let vk_size = size.max(4).next_multiple_of(4);
        let info = vk::BufferCreateInfo::default()
            .size(vk_size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer = unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        // SAFETY: `buffer` was just created on this device.
        let mut requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        requirements.alignment = requirements.alignment.max(BUFFER_ALIGNMENT);
        let allocation = shared.allocator().allocate(&AllocationCreateDesc {
            name: "pisa-runtime buffer",
            requirements,
            location: MemoryLocation::CpuToGpu,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused and unbound.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(Error::Allocation(format!("{size} bytes: {e}")));
            }
        };
        let fail = |allocation: Allocation, err: Error| {
            let _ = shared.allocator().free(allocation);
            // SAFETY: the buffer is not used by any command.
            unsafe { device.destroy_buffer(buffer, None) };
            Err(err)
        };
        if allocation.mapped_ptr().is_none() {
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
        Ok(Buffer {
            shared: Arc::clone(shared),
            buffer,
            allocation: Some(allocation),
            size,
            address,
        })
    }

    /// The size asked for at creation, in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The buffer's device address (`vkGetBufferDeviceAddress`), what kernels use as a
    /// `.global` pointer. Aligned to at least [`BUFFER_ALIGNMENT`].
    pub fn device_address(&self) -> u64 {
        self.address
    }

    /// The raw `VkBuffer` handle (for callers that record their own commands).
    pub fn handle(&self) -> vk::Buffer {
        self.buffer
    }

    fn check(&self, offset: u64, len: usize) -> Result<usize, Error> {
        let len64 = len as u64;
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
        // `new` checked the mapping exists; a buffer without allocation is being dropped.
        self.allocation
            .as_ref()
            .and_then(|a| a.mapped_ptr())
            .map(|p| p.as_ptr().cast::<u8>())
            .unwrap_or(std::ptr::null_mut())
    }

    /// Copies `bytes` into the buffer at `offset`. [`Error::OutOfBounds`] if it does not fit;
    /// [`Error::DeviceBusy`] while a dispatch that timed out still runs (it may use the
    /// buffer).
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), Error> {
        let start = self.check(offset, bytes.len())?;
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

    /// Copies bytes from the buffer at `offset` into `out`. [`Error::OutOfBounds`] if the
    /// range does not fit; [`Error::DeviceBusy`] while a dispatch that timed out still runs
    /// (it may still write the buffer).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        let start = self.check(offset, out.len())?;
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
            .field("size", &self.size)
            .field("device_address", &format_args!("{:#x}", self.address))
            .finish()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.shared.may_destroy() {
            return; // a timed-out kernel may still use it: leak
        }
        // SAFETY: dispatches wait for completion, so no command uses the buffer now.
        unsafe { self.shared.device.destroy_buffer(self.buffer, None) };
        if let Some(a) = self.allocation.take() {
            let _ = self.shared.allocator().free(a);
        }
    }
}
