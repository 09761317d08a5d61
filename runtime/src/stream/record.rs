//! Recording a submission's commands into its command buffer: the batches of dispatches,
//! the barriers between commands, the transfers, and the cancel word's address patched
//! into the push constants of the pipelines that read it ([`crate::cancel`]).

use std::sync::Arc;

use ash::vk;

use super::{
    LazyPart, LazyParts, Op, Parts, Progress, Timing, BATCH_DISPATCHES, CANCELLABLE_BATCH_GROUPS,
};
use crate::error::Error;
use crate::pipeline::PipelineObjects;
use crate::shared::DeviceShared;
use crate::slots::Slot;

/// The barrier between two commands of a stream: every shader or transfer write before it
/// is visible to every shader or transfer access after it.
fn command_barrier() -> vk::MemoryBarrier<'static> {
    vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::TRANSFER_READ
                | vk::AccessFlags::TRANSFER_WRITE,
        )
}

const STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
);

/// Records the next batch of `progress`'s commands into the slot's command buffer: from its
/// cursor until every command is recorded, or [`BATCH_DISPATCHES`] dispatches are, or
/// dispatches of pipelines that read a cancel word reach [`CANCELLABLE_BATCH_GROUPS`]
/// work-groups ([`Budget`]), moving the cursor. The first batch of a timed submission
/// starts its queries and, with `timing.warm`, dispatches each pipeline of `warm` with no
/// work-groups first.
///
/// # Safety
/// The slot is not in flight and reset; every handle in the commands and `warm` belongs to
/// `shared`'s device.
pub(super) unsafe fn record(
    shared: &DeviceShared,
    slot: &mut Slot,
    progress: &mut Progress,
    timing: Timing,
    warm: &[Arc<PipelineObjects>],
) -> Result<(), Error> {
    use crate::error::VkResultExt;
    let device = &shared.device;
    let cmd = slot.cmd;
    let timer = match timing.queries {
        0 => None,
        n => Some(slot.timer(&shared.device, shared.timestamps, n)?),
    };
    let begin =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    device
        .begin_command_buffer(cmd, &begin)
        .vk("vkBeginCommandBuffer")?;
    let first_batch = progress.op == 0 && progress.part == 0;
    if let Some(t) = timer.filter(|_| first_batch) {
        t.record_start(device, cmd, timing.queries);
        if timing.warm {
            record_warm_up(device, cmd, warm);
            t.record(device, cmd, 1);
        }
    }
    let base = timing.warm as u32;
    let mut budget = Budget {
        dispatches: BATCH_DISPATCHES,
        cancellable_groups: CANCELLABLE_BATCH_GROUPS,
    };
    let mut bound = None;
    while let Some(op) = progress.ops.as_mut_slice().get_mut(progress.op) {
        if progress.op > 0 && progress.part == 0 {
            barrier(device, cmd);
        }
        if let Op::Launch(parts) = op {
            let done = record_parts(
                device,
                cmd,
                parts,
                (&mut progress.part, &mut budget),
                &mut bound,
                progress.cancel_address,
            )?;
            if !done {
                break;
            }
        } else {
            record_transfer(device, cmd, op);
        }
        if let Some(t) = timer {
            t.record(device, cmd, base + progress.op as u32 + 1);
        }
        progress.op += 1;
        progress.part = 0;
    }
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    device.cmd_pipeline_barrier(
        cmd,
        STAGES,
        vk::PipelineStageFlags::HOST,
        vk::DependencyFlags::empty(),
        &[to_host],
        &[],
        &[],
    );
    device.end_command_buffer(cmd).vk("vkEndCommandBuffer")
}

/// Records [`command_barrier`] between two commands.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state.
unsafe fn barrier(device: &ash::Device, cmd: vk::CommandBuffer) {
    device.cmd_pipeline_barrier(
        cmd,
        STAGES,
        STAGES,
        vk::DependencyFlags::empty(),
        &[command_barrier()],
        &[],
        &[],
    );
}

/// Dispatches each of `pipelines` with no work-groups: nothing runs, but a driver that
/// compiles a pipeline at its first dispatch (lavapipe) compiles it here.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state; the pipelines belong to it.
unsafe fn record_warm_up(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    pipelines: &[Arc<PipelineObjects>],
) {
    for p in pipelines {
        device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, p.pipeline);
        if p.push_constant_size > 0 {
            let zeros = vec![0u8; p.push_constant_size as usize];
            device.cmd_push_constants(cmd, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &zeros);
        }
        device.cmd_dispatch(cmd, 0, 0, 0);
    }
}

/// What is left of a batch: dispatches, and work-groups of pipelines that read a cancel
/// word. A batch ends when either runs out (after at least one dispatch).
struct Budget {
    dispatches: u128,
    cancellable_groups: u64,
}

impl Budget {
    fn spent(&self) -> bool {
        self.dispatches == 0 || self.cancellable_groups == 0
    }

    /// Counts one dispatch of `groups` work-groups with `pipeline`.
    fn take(&mut self, pipeline: &PipelineObjects, groups: [u32; 3]) {
        self.dispatches -= 1;
        if pipeline.cancel_word_at.is_some() {
            let n = groups.iter().map(|&g| g as u64).product::<u64>();
            self.cancellable_groups = self.cancellable_groups.saturating_sub(n);
        }
    }
}

/// Records the dispatches of a launch from its `done`-th on, as many as `budget` allows
/// (both updated); `true` once every one is recorded. `bound` is the pipeline bound last;
/// `cancel` the submission's cancel word's address.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state; the pipelines belong to it.
unsafe fn record_parts(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    parts: &mut Parts,
    (done, budget): (&mut u128, &mut Budget),
    bound: &mut Option<vk::Pipeline>,
    cancel: u64,
) -> Result<bool, Error> {
    let count = parts.count();
    while *done < count {
        if budget.spent() {
            return Ok(false);
        }
        match &mut *parts {
            Parts::Lazy(lazy) => {
                let Some(part) = lazy.next_part(*done)? else {
                    return Ok(true);
                };
                if lazy.serial && *done > 0 {
                    // Also at the start of a later batch: a barrier orders every command
                    // submitted before it on the queue.
                    barrier(device, cmd);
                }
                let p = &lazy.pipelines[part.pipeline];
                dispatch(
                    device,
                    cmd,
                    (p, &lazy.push),
                    part.group_count,
                    bound,
                    cancel,
                );
                budget.take(p, part.group_count);
            }
            eager => {
                let part = &eager.as_slice()[*done as usize];
                let pipeline = (&*part.pipeline, &part.push[..]);
                dispatch(device, cmd, pipeline, part.groups, bound, cancel);
                budget.take(&part.pipeline, part.groups);
            }
        }
        *done += 1;
    }
    Ok(true)
}

impl LazyParts {
    /// Its `index`-th part (counting from 0, asked for in order), its patch written into
    /// the push constants; `None` once the parts run out. A part naming no pipeline of the
    /// launch or with too many groups is an [`Error::InvalidArgument`].
    fn next_part(&mut self, index: u128) -> Result<Option<LazyPart>, Error> {
        let part = match index {
            0 => self.first,
            _ => match self.rest.next() {
                Some(part) => part,
                None => return Ok(None),
            },
        };
        let Some(pipeline) = self.pipelines.get(part.pipeline) else {
            return Err(Error::InvalidArgument(format!(
                "part {index} of a launch names pipeline {} of {}",
                part.pipeline,
                self.pipelines.len()
            )));
        };
        if part
            .group_count
            .iter()
            .zip(self.max_groups)
            .any(|(g, m)| *g > m)
        {
            return Err(Error::InvalidArgument(format!(
                "dispatch of {}: group count {:?} exceeds the device limit \
                 maxComputeWorkGroupCount {:?}",
                pipeline.name, part.group_count, self.max_groups
            )));
        }
        if let Some(at) = self.patch_at {
            for (d, word) in part.patch.iter().enumerate() {
                self.push[at + 4 * d..at + 4 * d + 4].copy_from_slice(&word.to_le_bytes());
            }
        }
        Ok(Some(part))
    }
}

/// Records one dispatch of `groups` with `pipeline` and its push constants `push`, binding
/// the pipeline unless it is `bound`; a pipeline that reads a cancel word gets `cancel`'s
/// address at its `cancel_word_at`.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state; the pipeline belongs to it
/// and `push` is at most its push-constant size.
unsafe fn dispatch(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    (pipeline, push): (&PipelineObjects, &[u8]),
    groups: [u32; 3],
    bound: &mut Option<vk::Pipeline>,
    cancel: u64,
) {
    if *bound != Some(pipeline.pipeline) {
        device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
        *bound = Some(pipeline.pipeline);
    }
    let mut patched = [0u8; 256];
    let push = match pipeline.cancel_word_at.map(|at| at as usize) {
        Some(at) if push.len() <= patched.len() && at + 8 <= push.len() => {
            let patched = &mut patched[..push.len()];
            patched.copy_from_slice(push);
            patched[at..at + 8].copy_from_slice(&cancel.to_le_bytes());
            &*patched
        }
        _ => push,
    };
    if !push.is_empty() {
        device.cmd_push_constants(cmd, pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
    }
    let [x, y, z] = groups;
    device.cmd_dispatch(cmd, x, y, z);
}

/// Records a command that is not a launch.
///
/// # Safety
/// `cmd` is a command buffer of `device` in the recording state; the buffers belong to it.
unsafe fn record_transfer(device: &ash::Device, cmd: vk::CommandBuffer, op: &Op) {
    match op {
        Op::Launch(_) => {}
        Op::Copy {
            src,
            src_offset,
            dst,
            dst_offset,
            size,
        } => {
            let region = vk::BufferCopy {
                src_offset: src.vk_offset(*src_offset),
                dst_offset: dst.vk_offset(*dst_offset),
                size: *size,
            };
            device.cmd_copy_buffer(cmd, src.handle(), dst.handle(), &[region]);
        }
        Op::Fill {
            dst,
            offset,
            size,
            value,
        } => device.cmd_fill_buffer(cmd, dst.handle(), dst.vk_offset(*offset), *size, *value),
        Op::Update { dst, offset, data } => {
            device.cmd_update_buffer(cmd, dst.handle(), dst.vk_offset(*offset), data)
        }
        Op::Read {
            src,
            offset,
            staging,
            size,
        } => {
            if *size > 0 {
                let region = vk::BufferCopy {
                    src_offset: src.vk_offset(*offset),
                    dst_offset: staging.vk_offset(0),
                    size: *size,
                };
                device.cmd_copy_buffer(cmd, src.handle(), staging.handle(), &[region]);
            }
        }
    }
}
