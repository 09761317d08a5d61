//! Recording, submitting and waiting for dispatches.
//!
//! One command pool with one command buffer and one fence, reset for each dispatch; the
//! [`Context`](crate::Context) guards them with a mutex, so dispatches are serialised. Each
//! dispatch ends with a barrier that makes shader writes visible to host reads, and the fence
//! wait is bounded by the timeout: a kernel that never ends gives [`Error::Timeout`], not a
//! hung process. The fence of a submission that timed out is handed to the device's busy
//! state ([`DeviceShared::set_busy`]); nothing is recorded or submitted again until that
//! fence has been seen signalled.

use std::time::Instant;

use ash::vk;

use crate::context::DeviceShared;
use crate::error::{Error, VkResultExt};
use crate::pipeline::Pipeline;

/// The command pool, command buffer, fence and queue used for dispatches.
pub(crate) struct Executor {
    queue: vk::Queue,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
}

impl Executor {
    pub fn new(shared: &DeviceShared, queue_family: u32) -> Result<Executor, Error> {
        let device = &shared.device;
        // SAFETY: the device was created with one queue of this family.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
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
            Ok(Executor {
                queue,
                pool,
                cmd,
                fence,
            })
        }
    }

    /// Destroys fence and pool, unless work that timed out may still use them (then they
    /// are leaked).
    pub fn destroy(&mut self, shared: &DeviceShared) {
        if !shared.may_destroy() {
            return;
        }
        // SAFETY: no submission is pending; freeing the pool frees the command buffer.
        unsafe {
            shared.device.destroy_fence(self.fence, None);
            shared.device.destroy_command_pool(self.pool, None);
        }
    }

    pub fn dispatch(
        &mut self,
        shared: &DeviceShared,
        pipeline: &Pipeline,
        push_constants: &[u8],
        group_count: [u32; 3],
        timeout_seconds: f64,
    ) -> Result<(), Error> {
        let push_size = pipeline.push_constant_size() as usize;
        if push_constants.len() > push_size {
            return Err(Error::InvalidArgument(format!(
                "dispatch of {}: {} bytes of push constants, but the pipeline takes {}",
                pipeline.name(),
                push_constants.len(),
                push_size
            )));
        }
        shared.check_idle(|| format!("dispatch {}", pipeline.name()))?;
        let device = &shared.device;
        let mut push = vec![0u8; push_size];
        push[..push_constants.len()].copy_from_slice(push_constants);

        // SAFETY: the fence and command buffer are not in use (no submission runs: a
        // dispatch waits for its own, and `check_idle` saw any that timed out finished); all
        // handles belong to this device; the pipeline's push-constant range covers `push`.
        unsafe {
            device.reset_fences(&[self.fence]).vk("vkResetFences")?;
            device
                .reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .vk("vkResetCommandBuffer")?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            device
                .begin_command_buffer(self.cmd, &begin)
                .vk("vkBeginCommandBuffer")?;
            device.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline.handle());
            if !push.is_empty() {
                device.cmd_push_constants(
                    self.cmd,
                    pipeline.layout(),
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &push,
                );
            }
            let [x, y, z] = group_count;
            device.cmd_dispatch(self.cmd, x, y, z);
            let barrier = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            device.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
            device
                .end_command_buffer(self.cmd)
                .vk("vkEndCommandBuffer")?;
            let cmds = [self.cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            device
                .queue_submit(self.queue, &[submit], self.fence)
                .vk("vkQueueSubmit")?;
        }
        let start = Instant::now();
        let ns = (timeout_seconds * 1e9) as u64;
        // SAFETY: the fence belongs to this device.
        match unsafe { device.wait_for_fences(&[self.fence], true, ns) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => {
                let what = format!(
                    "dispatch of {} with {}x{}x{} groups",
                    pipeline.name(),
                    group_count[0],
                    group_count[1],
                    group_count[2]
                );
                shared.set_busy(self.fence, what.clone());
                Err(Error::Timeout {
                    seconds: start.elapsed().as_secs_f64(),
                    what,
                })
            }
            Err(result) => Err(Error::Vulkan {
                call: "vkWaitForFences",
                result,
            }),
        }
    }
}
