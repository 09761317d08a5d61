//! Submission slots: what one submission in flight needs of its own — a command pool with one
//! command buffer, a fence, and (for a timed stream) a query pool — kept in a free list of the
//! device, so that a blocking dispatch reuses the same objects every time and several streams
//! can be in flight at once, each in its own slot.
//!
//! A slot is taken from the free list (or created) when a [`Stream`](crate::Stream) is
//! submitted, and given back once its fence has been seen signalled. The slot of a
//! submission that timed out is never given back: its fence becomes the device's busy state
//! (`DeviceShared::set_busy`, [`crate::shared`]) and the slot is leaked with it.

use ash::vk;

use crate::error::{Error, VkResultExt};
use crate::timestamps::QueryTimer;
use crate::timestamps::TimestampSupport;

/// A command pool, its command buffer, a fence and an optional timestamp query pool.
pub(crate) struct Slot {
    pool: vk::CommandPool,
    pub cmd: vk::CommandBuffer,
    pub fence: vk::Fence,
    /// The timestamp queries of timed submissions, made at the first one.
    timer: Option<QueryTimer>,
    /// Its cancel word's index ([`crate::cancel`]; 0: none of its own).
    pub cancel_word: u32,
}

impl Slot {
    /// A new slot on `device`'s queue family `queue_family`, its fence unsignalled.
    pub fn new(device: &ash::Device, queue_family: u32) -> Result<Slot, Error> {
        let pool_info = vk::CommandPoolCreateInfo::default()
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
            .queue_family_index(queue_family);
        // SAFETY: valid device and create infos; on failure, what was created is destroyed.
        unsafe {
            let pool = device
                .create_command_pool(&pool_info, None)
                .vk("vkCreateCommandPool")?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cmd = match device.allocate_command_buffers(&alloc) {
                Ok(c) => c[0],
                Err(result) => {
                    device.destroy_command_pool(pool, None);
                    return Err(Error::Vulkan {
                        call: "vkAllocateCommandBuffers",
                        result,
                    });
                }
            };
            let fence = match device.create_fence(&vk::FenceCreateInfo::default(), None) {
                Ok(f) => f,
                Err(result) => {
                    device.destroy_command_pool(pool, None);
                    return Err(Error::Vulkan {
                        call: "vkCreateFence",
                        result,
                    });
                }
            };
            Ok(Slot {
                pool,
                cmd,
                fence,
                timer: None,
                cancel_word: 0,
            })
        }
    }

    /// A query pool of at least `count` timestamp queries on `device`, whose queue family
    /// has `timestamps` (grown to the next power of two when the one it has is smaller).
    pub fn timer(
        &mut self,
        device: &ash::Device,
        timestamps: TimestampSupport,
        count: u32,
    ) -> Result<&QueryTimer, Error> {
        if self.timer.as_ref().is_some_and(|t| t.capacity() < count) {
            if let Some(old) = self.timer.take() {
                // SAFETY: the slot's last submission has finished (it is not in flight).
                unsafe { old.destroy(device) };
            }
        }
        if self.timer.is_none() {
            let capacity = count.next_power_of_two().max(2);
            self.timer = Some(QueryTimer::new(device, timestamps, capacity)?);
        }
        Ok(self.timer.as_ref().expect("made above"))
    }

    /// The query pool, when a timed submission made one.
    pub fn existing_timer(&self) -> Option<&QueryTimer> {
        self.timer.as_ref()
    }

    /// Resets the fence and the command buffer for a new submission.
    ///
    /// # Safety
    /// No submission of this slot is in flight.
    pub unsafe fn reset(&self, device: &ash::Device) -> Result<(), Error> {
        device.reset_fences(&[self.fence]).vk("vkResetFences")?;
        device
            .reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
            .vk("vkResetCommandBuffer")
    }

    /// Destroys everything of the slot.
    ///
    /// # Safety
    /// No submission of this slot is in flight.
    pub unsafe fn destroy(&self, device: &ash::Device) {
        if let Some(t) = &self.timer {
            t.destroy(device);
        }
        device.destroy_fence(self.fence, None);
        device.destroy_command_pool(self.pool, None);
    }
}
