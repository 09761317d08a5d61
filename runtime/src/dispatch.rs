//! Recording, submitting and waiting for dispatches.
//!
//! One command pool with one command buffer and one fence, reset for each submission; the
//! [`Context`](crate::Context) guards them with a mutex, so submissions are serialised. A
//! submission is one launch: one or more [`DispatchPart`]s (a launch too large for the
//! device's group-count limits, or with partial work-groups, is several), optionally
//! bracketed by timestamp queries ([`crate::timestamps`]). It ends with a barrier that makes
//! shader writes visible to host reads, and the fence wait is bounded by the timeout: a
//! kernel that never ends gives [`Error::Timeout`], not a hung process. The fence of a
//! submission that timed out is handed to the device's busy state
//! ([`DeviceShared::set_busy`]); nothing is recorded or submitted again until that fence has
//! been seen signalled.
use std::time::{Duration, Instant};

use ash::vk;

use crate::context::DeviceShared;
use crate::error::{Error, VkResultExt};
use crate::pipeline::Pipeline;
use crate::timestamps::{QueryTimer, TimestampSupport};

/// The command pool, command buffer, fence and queue used for dispatches.
pub(crate) struct Executor {
    queue: vk::Queue,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    /// What the queue family says about timestamps.
    timestamps: TimestampSupport,
    /// The timestamp queries of timed submissions, made at the first one.
    timer: Option<QueryTimer>,
}

/// One dispatch of a launch: a pipeline, its push constants (at most the pipeline's
/// push-constant size; shorter data is zero-padded) and a group count. The parts of one
/// submission are like the work-groups of one dispatch: nothing orders them.
#[derive(Clone, Copy, Debug)]
pub struct DispatchPart<'a> {
    /// The compute pipeline.
    pub pipeline: &'a Pipeline,
    /// Its push constants.
    pub push_constants: &'a [u8],
    /// Work-groups in x, y, z (each at most `maxComputeWorkGroupCount`).
    pub group_count: [u32; 3],
}

impl Executor {
    pub fn new(
        shared: &DeviceShared,
        queue_family: u32,
        timestamps: TimestampSupport,
    ) -> Result<Executor, Error> {
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
                timestamps,
                timer: None,
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
            if let Some(t) = &self.timer {
                t.destroy(&shared.device);
            }
            shared.device.destroy_fence(self.fence, None);
            shared.device.destroy_command_pool(self.pool, None);
        }
    }

    /// Records `parts` into the command buffer (with timestamps around them when `timed`),
    /// submits it and waits at most `timeout_seconds`. Returns the GPU time when `timed`.
    pub fn submit(
        &mut self,
        shared: &DeviceShared,
        parts: &[DispatchPart],
        timed: bool,
        timeout_seconds: f64,
    ) -> Result<Option<Duration>, Error> {
        for part in parts {
            let push_size = part.pipeline.push_constant_size() as usize;
            if part.push_constants.len() > push_size {
                return Err(Error::InvalidArgument(format!(
                    "dispatch of {}: {} bytes of push constants, but the pipeline takes {}",
                    part.pipeline.name(),
                    part.push_constants.len(),
                    push_size
                )));
            }
        }
        shared.check_idle(|| match parts.first() {
            Some(p) => format!("dispatch {}", p.pipeline.name()),
            None => "an empty launch".to_string(),
        })?;
        let device = &shared.device;
        if timed && self.timer.is_none() {
            self.timer = Some(QueryTimer::new(device, self.timestamps)?);
        }
        let timer = if timed { self.timer.as_ref() } else { None };

        // SAFETY: the fence and command buffer are not in use (no submission runs: a
        // submission waits for its own, and `check_idle` saw any that timed out finished);
        // all handles belong to this device; each pipeline's push-constant range covers
        // its data.
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
            if let Some(t) = timer {
                t.record_start(device, self.cmd);
            }
            let mut bound = None;
            let mut push = Vec::new();
            for part in parts {
                let pipeline = part.pipeline;
                if bound != Some(pipeline.handle()) {
                    device.cmd_bind_pipeline(
                        self.cmd,
                        vk::PipelineBindPoint::COMPUTE,
                        pipeline.handle(),
                    );
                    bound = Some(pipeline.handle());
                }
                let push_size = pipeline.push_constant_size() as usize;
                if push_size > 0 {
                    push.clear();
                    push.extend_from_slice(part.push_constants);
                    push.resize(push_size, 0);
                    device.cmd_push_constants(
                        self.cmd,
                        pipeline.layout(),
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        &push,
                    );
                }
                let [x, y, z] = part.group_count;
                device.cmd_dispatch(self.cmd, x, y, z);
            }
            if let Some(t) = timer {
                t.record_end(device, self.cmd);
            }
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
            Ok(()) => timer.map(|t| t.elapsed(device)).transpose(),
            Err(vk::Result::TIMEOUT) => {
                let what = describe(parts);
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

/// `dispatch of k with 4x1x1 groups` (and how many more parts a launch had).
fn describe(parts: &[DispatchPart]) -> String {
    let Some(first) = parts.first() else {
        return "an empty submission".to_string();
    };
    let [x, y, z] = first.group_count;
    let more = match parts.len() {
        1 => String::new(),
        n => format!(" and {} more part(s)", n - 1),
    };
    format!(
        "dispatch of {} with {x}x{y}x{z} groups{more}",
        first.pipeline.name()
    )
}
