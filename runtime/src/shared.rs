//! [`DeviceShared`]: the Vulkan objects of one device that must outlive every buffer,
//! pipeline and submission (instance, device, allocator, queues, free submission slots), and
//! the device's busy state after a timeout (spec-notes §62). Buffers, pipelines, streams and
//! the context hold an `Arc` to it; it depends on none of them, so the runtime's modules form
//! no circle: `shared` stands on `instance`, `slots`, `live` and `timestamps` only.
//!
//! Destruction order: when the last holder is gone, the free slots, the allocator (which frees
//! its memory blocks), the device, the debug messenger and the instance, in that order, unless
//! the device is wedged (work that timed out may still use it: everything is leaked).

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ash::vk;
use gpu_allocator::vulkan::Allocator;

use crate::error::{Error, VkResultExt};
use crate::instance::InstanceOwner;
use crate::slots::Slot;
use crate::timestamps::TimestampSupport;

/// The device-lifetime objects shared by the context, its buffers and its pipelines.
pub(crate) struct DeviceShared {
    /// The logical device.
    pub device: ash::Device,
    /// The memory allocator (dropped before the device).
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    /// Set when the context was dropped while work that timed out still ran: then nothing
    /// is destroyed or freed any more (leaking is safe, destroying objects in use is not).
    pub wedged: AtomicBool,
    /// Submissions that timed out and have not been seen finished since.
    pub busy: Mutex<Vec<Busy>>,
    /// Whether `busy` is not empty: what every call that needs the device looks at first,
    /// so that the common case (nothing timed out) takes no lock.
    pub any_busy: AtomicBool,
    /// The compute queues, each with the order of its submissions ([`crate::order`]): at
    /// least one.
    pub queues: Vec<crate::order::DeviceQueue>,
    /// Their family.
    pub queue_family: u32,
    /// What the queue family says about timestamps.
    pub timestamps: TimestampSupport,
    /// Submission slots not in use ([`crate::slots`]).
    pub slots: Mutex<Vec<Slot>>,
    /// The slots' cancel words ([`crate::cancel`]), made with the first slot.
    pub cancel: crate::cancel::CancelPool,
    /// The context's identity and its live buffers.
    pub live: crate::live::Registry,
    /// Host-memory imports, when the device offers them (`crate::import`).
    pub host_import: Option<crate::import::HostImport>,
    /// The device's largest allocation ([`crate::DeviceInfo::max_allocation_size`]): no
    /// request beyond it reaches `vkAllocateMemory`.
    pub max_allocation_size: u64,
    /// Loader, instance and messenger (dropped after the device).
    pub instance: ManuallyDrop<InstanceOwner>,
}

impl DeviceShared {
    /// Locks the allocator, ignoring poisoning (the allocator stays consistent).
    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether objects must be leaked instead of destroyed.
    pub fn is_wedged(&self) -> bool {
        self.wedged.load(Ordering::Acquire)
    }

    fn busy(&self) -> MutexGuard<'_, Vec<Busy>> {
        self.busy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the submission signalling `fence` timed out while doing `what`.
    pub fn set_busy(&self, fence: vk::Fence, what: String) {
        let mut busy = self.busy();
        busy.push(Busy { fence, what });
        self.any_busy.store(true, Ordering::Release);
    }

    /// A submission slot from the free list, or a new one. Its fence is unsignalled and its
    /// command buffer reset.
    pub fn take_slot(&self) -> Result<Slot, Error> {
        let slot = self.slots.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match slot {
            Some(slot) => {
                // SAFETY: a slot in the free list has no submission in flight.
                if let Err(e) = unsafe { slot.reset(&self.device) } {
                    // SAFETY: as above; the slot is dropped from the list.
                    unsafe { slot.destroy(&self.device) };
                    return Err(e);
                }
                Ok(slot)
            }
            None => {
                let mut slot = Slot::new(&self.device, self.queue_family)?;
                match self.new_cancel_word() {
                    Ok(w) => slot.cancel_word = w,
                    Err(e) => {
                        // SAFETY: the slot was just made; nothing is in flight in it.
                        unsafe { slot.destroy(&self.device) };
                        return Err(e);
                    }
                }
                Ok(slot)
            }
        }
    }

    /// Puts back a slot whose submission has finished (its fence was seen signalled).
    pub fn give_back_slot(&self, slot: Slot) {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot);
    }

    /// Submits `cmd` to queue `queue` (an index into [`DeviceShared::queues`]), signalling
    /// `fence`.
    ///
    /// # Safety
    /// `cmd` is a recorded command buffer of this device whose objects stay alive until
    /// `fence` signals; `fence` is unsignalled and not in use.
    pub unsafe fn queue_submit(
        &self,
        queue: usize,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
    ) -> Result<(), Error> {
        let queue = self.queues[queue]
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default().command_buffers(&cmds);
        self.device
            .queue_submit(*queue, &[submit], fence)
            .vk("vkQueueSubmit")
    }

    /// `Ok` when no submission that timed out still runs: its fence is queried, never
    /// waited for, so this returns at once. Else [`Error::DeviceBusy`] naming `what` (the
    /// refused call, built only then).
    pub fn check_idle(&self, what: impl FnOnce() -> String) -> Result<(), Error> {
        self.wait_idle(Duration::ZERO)
            .map_err(|running| Error::DeviceBusy {
                what: what(),
                running,
            })
    }

    /// Waits up to `timeout` for the submissions that timed out. `Ok` once none runs any
    /// more (their fences are then forgotten), else what still runs. A failed query (a lost
    /// device) counts as finished: nothing of that submission will run any more.
    pub fn wait_idle(&self, timeout: Duration) -> Result<(), String> {
        if !self.any_busy.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut busy = self.busy();
        if busy.is_empty() {
            return Ok(());
        }
        let deadline = std::time::Instant::now() + timeout;
        // SAFETY (of the fence calls): the fences belong to this device; a fence recorded
        // here belongs to a slot that was leaked, so only this lock's holder touches it.
        busy.retain(|b| {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            unsafe {
                if left.is_zero() {
                    matches!(self.device.get_fence_status(b.fence), Ok(false))
                } else {
                    let ns = left.as_nanos().min(u64::MAX as u128) as u64;
                    matches!(
                        self.device.wait_for_fences(&[b.fence], true, ns),
                        Err(vk::Result::TIMEOUT)
                    )
                }
            }
        });
        match busy.first() {
            Some(b) => Err(b.what.clone()),
            None => {
                self.any_busy.store(false, Ordering::Release);
                Ok(())
            }
        }
    }

    /// Whether a Vulkan object may be destroyed now: the context was not wedged and no
    /// submission that timed out still runs (it might use the object). Objects dropped when
    /// this is false are leaked.
    pub fn may_destroy(&self) -> bool {
        !self.is_wedged() && self.wait_idle(Duration::ZERO).is_ok()
    }
}

/// A submission that timed out: its fence and what it was doing.
pub(crate) struct Busy {
    fence: vk::Fence,
    what: String,
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        if self.is_wedged() {
            // Work may still use the device: leak device, memory and instance on purpose.
            return;
        }
        // SAFETY: every buffer, pipeline and submission holds an Arc to this, so none is
        // left and the free slots have no submission in flight. Order: slots, allocator
        // (frees memory), device, then instance (messenger first).
        unsafe {
            let _ = self.device.device_wait_idle();
            for slot in self
                .slots
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                slot.destroy(&self.device);
            }
            self.destroy_cancel_words();
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            ManuallyDrop::drop(&mut self.instance);
        }
    }
}
