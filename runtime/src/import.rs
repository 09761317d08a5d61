//! Host memory imported as buffer memory (`VK_EXT_external_memory_host`): a
//! [`Buffer`](crate::Buffer) whose memory is an allocation the host program already has (a
//! NumPy array's, a `Vec`'s), with no copy ([`Context::import_host`](crate::Context::import_host)).
//!
//! The extension imports whole runs of `minImportedHostPointerAlignment` bytes (a page on
//! lavapipe and most drivers): the import covers the aligned pages around the host range.
//! The `VkBuffer` is bound at the range's offset inside them rounded down to the buffer's
//! memory alignment (64 bytes on lavapipe, where a large NumPy array starts 16 bytes into its
//! page, after malloc's header), and the runtime's [`Buffer`](crate::Buffer) starts
//! `delta` bytes into that `VkBuffer`, at the range's first byte: its device address,
//! host address and size are the range's, and stream commands add `delta` to their offsets.
//! The range must start on a multiple of [`BUFFER_ALIGNMENT`](crate::BUFFER_ALIGNMENT), the
//! memory type must be host-coherent, and the driver must accept the pointer; otherwise the
//! import is [`refused`](ImportRefused) with the reason, and the caller copies instead. An
//! imported buffer has no guard bytes of its own: what follows it is the host program's
//! memory.

use std::ffi::c_void;

use ash::vk;

use crate::error::{Error, VkResultExt};
use crate::shared::DeviceShared;

const HANDLE: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;

/// The usage of every runtime buffer (imported ones too).
pub(crate) const BUFFER_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// Why host memory was not imported: the caller falls back to a copy. The text says what
/// was missing (the extension, an alignment, a memory type, the driver's refusal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportRefused(pub String);

impl std::fmt::Display for ImportRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a device offers for host imports, found once when the context is made.
#[derive(Clone)]
pub(crate) struct HostImport {
    /// `minImportedHostPointerAlignment`: imports start and end on multiples of it.
    pub alignment: u64,
    /// The memory types (a bit each) that are host-visible and host-coherent.
    pub coherent_types: u32,
    /// The memory alignment of a buffer of the runtime's usage (a power of two; 64 on
    /// lavapipe): where in the pages a buffer can be bound.
    pub buffer_alignment: u64,
    /// The extension's `vkGetMemoryHostPointerPropertiesEXT`.
    pub functions: ash::ext::external_memory_host::Device,
}

impl HostImport {
    /// What `pdev` offers, when the device was created with the extension
    /// (`enabled`) and it can import host allocations as buffers of the runtime's usage.
    pub fn query(
        instance: &ash::Instance,
        pdev: vk::PhysicalDevice,
        device: &ash::Device,
        enabled: bool,
    ) -> Option<HostImport> {
        if !enabled {
            return None;
        }
        let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut host);
        // SAFETY: `pdev` comes from `instance`; the chain lives until the call returns.
        unsafe { instance.get_physical_device_properties2(pdev, &mut props) };
        let alignment = host.min_imported_host_pointer_alignment;
        let info = vk::PhysicalDeviceExternalBufferInfo::default()
            .usage(BUFFER_USAGE)
            .handle_type(HANDLE);
        let mut external = vk::ExternalBufferProperties::default();
        // SAFETY: as above.
        unsafe {
            instance.get_physical_device_external_buffer_properties(pdev, &info, &mut external)
        };
        let importable = external
            .external_memory_properties
            .external_memory_features
            .contains(vk::ExternalMemoryFeatureFlags::IMPORTABLE);
        if !importable || alignment == 0 || !alignment.is_power_of_two() {
            return None;
        }
        // SAFETY: as above.
        let memory = unsafe { instance.get_physical_device_memory_properties(pdev) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let coherent_types = memory
            .memory_types_as_slice()
            .iter()
            .enumerate()
            .filter(|(_, t)| t.property_flags.contains(wanted))
            .fold(0u32, |bits, (i, _)| bits | 1 << i);
        // The alignment does not depend on the size: ask a small buffer once.
        let probe = make_buffer(device, 4).ok()?;
        // SAFETY: `probe` was just created on this device; it is destroyed unused.
        let buffer_alignment = unsafe {
            let req = device.get_buffer_memory_requirements(probe);
            device.destroy_buffer(probe, None);
            req.alignment
        };
        if !buffer_alignment.is_power_of_two() || buffer_alignment > alignment {
            return None;
        }
        Some(HostImport {
            alignment,
            coherent_types,
            buffer_alignment,
            functions: ash::ext::external_memory_host::Device::new(instance, device),
        })
    }
}

/// An imported allocation bound to a new buffer.
pub(crate) struct Imported {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    /// The device address of the range's first byte (`delta` bytes into `buffer`).
    pub address: u64,
    /// Where the range starts in `buffer`.
    pub delta: u64,
}

/// Imports the `len` host bytes at `ptr` (the aligned pages around them) and binds a new
/// buffer to them that holds the range `delta` bytes from its start. `Ok(Err(..))`: the device cannot import
/// this range (the caller copies); `Err`: a Vulkan failure unrelated to the import.
///
/// # Safety
/// `ptr..ptr + len` is memory of this process, readable and writable, that stays allocated
/// (and is not given to anyone else) until the buffer's memory is freed.
pub(crate) unsafe fn import(
    shared: &DeviceShared,
    ptr: *mut u8,
    len: usize,
) -> Result<Result<Imported, ImportRefused>, Error> {
    let refuse = |why: String| Ok(Err(ImportRefused(why)));
    let Some(host) = &shared.host_import else {
        return refuse("the device does not offer VK_EXT_external_memory_host".into());
    };
    if len == 0 {
        return refuse("an empty range has no memory to import".into());
    }
    let align = host.alignment;
    let addr = ptr as u64;
    if addr % crate::BUFFER_ALIGNMENT != 0 {
        return refuse(format!(
            "the host address {addr:#x} is not a multiple of {} bytes",
            crate::BUFFER_ALIGNMENT
        ));
    }
    let start = addr & !(align - 1);
    let offset = addr - start;
    let Some(end) = addr
        .checked_add(len as u64)
        .and_then(|e| e.checked_next_multiple_of(align))
    else {
        return refuse("the range wraps around the address space".into());
    };
    let device = &shared.device;
    let delta = offset % host.buffer_alignment;
    let bind = offset - delta;
    let vk_size = (delta + len as u64).next_multiple_of(4);
    let buffer = make_buffer(device, vk_size)?;
    let destroy = || {
        // SAFETY: the buffer is unused.
        unsafe { device.destroy_buffer(buffer, None) }
    };
    // SAFETY: `buffer` was just created on this device.
    let req = unsafe { device.get_buffer_memory_requirements(buffer) };
    if bind % req.alignment.max(1) != 0 || bind + req.size > end - start {
        destroy();
        return refuse(format!(
            "the device needs {} bytes at a multiple of {} for this buffer, which do not fit \
             in the pages of the range",
            req.size, req.alignment
        ));
    }
    let mut pointer = vk::MemoryHostPointerPropertiesEXT::default();
    // SAFETY: `start` is aligned as the extension asks; the caller vouches for the memory.
    let found = unsafe {
        (host.functions.fp().get_memory_host_pointer_properties_ext)(
            device.handle(),
            HANDLE,
            start as *const c_void,
            &mut pointer,
        )
    };
    if found != vk::Result::SUCCESS {
        destroy();
        return refuse(format!("vkGetMemoryHostPointerPropertiesEXT: {found:?}"));
    }
    let types = pointer.memory_type_bits & req.memory_type_bits & host.coherent_types;
    if types == 0 {
        destroy();
        return refuse("no host-coherent memory type can hold this host memory".into());
    }
    let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
        .handle_type(HANDLE)
        .host_pointer(start as *mut c_void);
    let mut flags =
        vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(end - start)
        .memory_type_index(types.trailing_zeros())
        .push_next(&mut import)
        .push_next(&mut flags);
    // SAFETY: valid device; the pointer, size and type follow the extension's rules above.
    let memory = match unsafe { device.allocate_memory(&alloc, None) } {
        Ok(m) => m,
        Err(result) => {
            destroy();
            return refuse(format!("vkAllocateMemory refused the import: {result:?}"));
        }
    };
    // SAFETY: memory of a type the buffer accepts, at an offset meeting its alignment, with
    // room for its size.
    if let Err(result) = unsafe { device.bind_buffer_memory(buffer, memory, bind) } {
        destroy();
        // SAFETY: nothing uses the memory.
        unsafe { device.free_memory(memory, None) };
        return Err(Error::Vulkan {
            call: "vkBindBufferMemory",
            result,
        });
    }
    // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and memory allocated with the
    // device-address flag.
    let address = unsafe {
        device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer))
    };
    Ok(Ok(Imported {
        buffer,
        memory,
        address: address + delta,
        delta,
    }))
}

/// A buffer of `size` bytes with the runtime's usage that can be bound to imported host
/// memory.
fn make_buffer(device: &ash::Device, size: u64) -> Result<vk::Buffer, Error> {
    let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE);
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(BUFFER_USAGE)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .push_next(&mut external);
    // SAFETY: valid device and create info.
    unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")
}
