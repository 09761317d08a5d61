//! Streams: commands recorded into one submission, submitted without waiting, and waited for
//! (or polled) through the [`Submission`] handle.
//!
//! A [`Stream`] collects commands — launches of one or more [`DispatchPart`]s, buffer copies,
//! fills, and host transfers (a write of host bytes, a read back into host memory) — and
//! records them into one command buffer when it is submitted. The commands run in the order
//! they were recorded: a memory barrier between each two makes the writes of one visible to
//! the next (the parts of one launch are not ordered among themselves, like the work-groups
//! of a dispatch). The end of the submission makes every write visible to host reads.
//!
//! Several submissions may be in flight at once (each has its own command buffer and fence,
//! a *slot* of [`crate::slots`]); nothing orders one with respect to another, so two of
//! them that touch the same memory race, as two CUDA streams do. A submission holds on to
//! every buffer and pipeline its commands use until it has finished, so dropping them
//! earlier is safe. A kernel that reaches a buffer through an address it was given
//! otherwise (in another buffer, or as a number) must find it alive: keep such buffers, or
//! pass them to [`Stream::keep_alive`].
//!
//! A timed stream ([`Stream::timed`]) writes a timestamp query before its first command
//! and after each command; [`Completion::command_times`] gives the GPU time of each.
//!
//! Robustness is the one of a blocking dispatch: [`Submission::wait`] waits at most the
//! context's timeout (`PISA_VK_TIMEOUT`) and then reports [`Error::Timeout`]; the submission
//! then becomes the device's busy state, so that every call needing the device returns
//! [`Error::DeviceBusy`] until it has been seen finished (submitting a stream is one such
//! call).

use std::sync::Arc;
use std::time::Duration;

use ash::vk;

use crate::buffer::{Buffer, BufferLease, RawBuffer};
use crate::context::Context;
use crate::error::Error;
use crate::pipeline::{Pipeline, PipelineObjects};
use crate::shared::DeviceShared;
use crate::slots::Slot;

/// The largest write recorded inline (`vkCmdUpdateBuffer` allows 65536 bytes); longer or
/// unaligned writes go through a staging buffer.
const INLINE_WRITE_LIMIT: usize = 65536;

/// One dispatch of a launch: a pipeline, its push constants (at most the pipeline's
/// push-constant size; shorter data is zero-padded) and a group count. The parts of one
/// launch are like the work-groups of one dispatch: nothing orders them.
#[derive(Clone, Copy, Debug)]
pub struct DispatchPart<'a> {
    /// The compute pipeline.
    pub pipeline: &'a Pipeline,
    /// Its push constants.
    pub push_constants: &'a [u8],
    /// Work-groups in x, y, z (each at most `maxComputeWorkGroupCount`).
    pub group_count: [u32; 3],
}

/// A recorded dispatch, owning what it needs.
struct Part {
    pipeline: Arc<PipelineObjects>,
    /// Exactly the pipeline's push-constant size.
    push: Vec<u8>,
    groups: [u32; 3],
}

/// The dispatches of a recorded launch: one (the common case, kept without a vector) or
/// several.
enum Parts {
    One(Part),
    Many(Vec<Part>),
}

impl Parts {
    fn as_slice(&self) -> &[Part] {
        match self {
            Parts::One(part) => std::slice::from_ref(part),
            Parts::Many(parts) => parts,
        }
    }
}

/// The commands of a stream: one (a blocking dispatch's case, kept without a vector) or
/// several.
#[derive(Default)]
enum Ops {
    #[default]
    Empty,
    One(Op),
    Many(Vec<Op>),
}

impl Ops {
    fn push(&mut self, op: Op) {
        *self = match std::mem::take(self) {
            Ops::Empty => Ops::One(op),
            Ops::One(first) => Ops::Many(vec![first, op]),
            Ops::Many(mut ops) => {
                ops.push(op);
                Ops::Many(ops)
            }
        }
    }

    fn as_slice(&self) -> &[Op] {
        match self {
            Ops::Empty => &[],
            Ops::One(op) => std::slice::from_ref(op),
            Ops::Many(ops) => ops,
        }
    }
}

/// A recorded command.
enum Op {
    Launch(Parts),
    Copy {
        src: Arc<RawBuffer>,
        src_offset: u64,
        dst: Arc<RawBuffer>,
        dst_offset: u64,
        size: u64,
    },
    Fill {
        dst: Arc<RawBuffer>,
        offset: u64,
        size: u64,
        value: u32,
    },
    /// A host write recorded inline (`vkCmdUpdateBuffer`).
    Update {
        dst: Arc<RawBuffer>,
        offset: u64,
        data: Vec<u8>,
    },
    /// A copy into a staging buffer, read back by the host after the fence.
    Read {
        src: Arc<RawBuffer>,
        offset: u64,
        staging: Arc<RawBuffer>,
        size: u64,
    },
}

impl Op {
    /// What the command does, for error messages.
    fn describe(&self) -> String {
        match self {
            Op::Launch(parts) => {
                let parts = parts.as_slice();
                let first = &parts[0];
                let [x, y, z] = first.groups;
                let more = match parts.len() {
                    1 => String::new(),
                    n => format!(" and {} more part(s)", n - 1),
                };
                format!(
                    "dispatch of {} with {x}x{y}x{z} groups{more}",
                    first.pipeline.name
                )
            }
            Op::Copy { size, .. } => format!("a copy of {size} bytes"),
            Op::Fill { size, .. } => format!("a fill of {size} bytes"),
            Op::Update { data, .. } => format!("a write of {} bytes", data.len()),
            Op::Read { size, .. } => format!("a read of {size} bytes"),
        }
    }
}

/// Where the bytes of a [`Stream::read`] will be in the [`Completion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadId(usize);

/// Commands recorded for one submission (launches, copies, fills, host writes and reads,
/// run in recording order; see the [crate documentation](crate)). Made by
/// [`Context::stream`]; recording allocates host memory only (and a staging buffer for a
/// read, or for a write that cannot be recorded inline); nothing reaches the device before
/// [`Stream::submit`].
pub struct Stream<'c> {
    ctx: &'c Context,
    ops: Ops,
    keep: Vec<BufferLease>,
    timed: bool,
    reads: usize,
}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("commands", &self.ops.as_slice().len())
            .field("timed", &self.timed)
            .finish()
    }
}

impl<'c> Stream<'c> {
    pub(crate) fn new(ctx: &'c Context) -> Stream<'c> {
        Stream {
            ctx,
            ops: Ops::Empty,
            keep: Vec::new(),
            timed: false,
            reads: 0,
        }
    }

    /// With `true`, the submission measures the GPU time of every command with timestamp
    /// queries ([`Completion::command_times`]). A queue without timestamps gives
    /// [`Error::MissingFeatures`].
    pub fn timed(&mut self, on: bool) -> Result<&mut Self, Error> {
        if on {
            self.ctx.shared().timestamps.check()?;
        }
        self.timed = on;
        Ok(self)
    }

    /// How many commands are recorded (a launch of several parts is one).
    pub fn len(&self) -> usize {
        self.ops.as_slice().len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.ops.as_slice().is_empty()
    }

    fn check_buffer(&self, b: &Buffer, what: &str) -> Result<(), Error> {
        if b.belongs_to(self.ctx.shared()) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{what}: the buffer was created by another context"
            )))
        }
    }

    /// Records one launch: its parts, unordered among themselves. Errors (nothing is
    /// recorded then): a pipeline of another context, push constants longer than the
    /// pipeline's, a group count beyond `maxComputeWorkGroupCount` ([`Error::InvalidArgument`]).
    /// An empty `parts` records nothing.
    ///
    /// The first launch of the process on a device with a known driver bug that gives wrong
    /// results ([`Context::driver_bugs`]) logs a `tracing` warning (target `pisa_vk`).
    pub fn launch(&mut self, parts: &[DispatchPart]) -> Result<&mut Self, Error> {
        if let Some(warning) = self.ctx.driver_bugs().first_warning() {
            tracing::warn!(target: "pisa_vk", "{warning}");
        }
        if let [part] = parts {
            let part = self.part(part)?;
            self.ops.push(Op::Launch(Parts::One(part)));
            return Ok(self);
        }
        let recorded = parts
            .iter()
            .map(|part| self.part(part))
            .collect::<Result<Vec<Part>, Error>>()?;
        if !recorded.is_empty() {
            self.ops.push(Op::Launch(Parts::Many(recorded)));
        }
        Ok(self)
    }

    /// `part` checked ([`Stream::launch`]'s errors) and owning what it needs.
    fn part(&self, part: &DispatchPart) -> Result<Part, Error> {
        let max = self.ctx.info().max_workgroup_count;
        let pipeline = part.pipeline;
        if !pipeline.belongs_to(self.ctx.shared()) {
            return Err(Error::InvalidArgument(format!(
                "pipeline {} was created by another context",
                pipeline.name()
            )));
        }
        let group_count = part.group_count;
        if group_count.iter().zip(max).any(|(g, m)| *g > m) {
            return Err(Error::InvalidArgument(format!(
                "dispatch of {}: group count {group_count:?} exceeds the device limit \
                 maxComputeWorkGroupCount {max:?}",
                pipeline.name()
            )));
        }
        let push_size = pipeline.push_constant_size() as usize;
        if part.push_constants.len() > push_size {
            return Err(Error::InvalidArgument(format!(
                "dispatch of {}: {} bytes of push constants, but the pipeline takes {}",
                pipeline.name(),
                part.push_constants.len(),
                push_size
            )));
        }
        let mut push = Vec::with_capacity(push_size);
        push.extend_from_slice(part.push_constants);
        push.resize(push_size, 0);
        Ok(Part {
            pipeline: pipeline.keep(),
            push,
            groups: group_count,
        })
    }

    /// Records a copy of `size` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
    /// Errors: a range outside its buffer ([`Error::OutOfBounds`]), overlapping ranges of
    /// one buffer or a buffer of another context ([`Error::InvalidArgument`]). A size of 0
    /// records nothing.
    pub fn copy(
        &mut self,
        src: &Buffer,
        src_offset: u64,
        dst: &Buffer,
        dst_offset: u64,
        size: u64,
    ) -> Result<&mut Self, Error> {
        self.check_buffer(src, "copy")?;
        self.check_buffer(dst, "copy")?;
        src.check_range(src_offset, size)?;
        dst.check_range(dst_offset, size)?;
        if size == 0 {
            return Ok(self);
        }
        if src.handle() == dst.handle()
            && src_offset < dst_offset + size
            && dst_offset < src_offset + size
        {
            return Err(Error::InvalidArgument(format!(
                "copy of {size} bytes from offset {src_offset} to offset {dst_offset} of the \
                 same buffer: the ranges overlap"
            )));
        }
        self.ops.push(Op::Copy {
            src: src.keep(),
            src_offset,
            dst: dst.keep(),
            dst_offset,
            size,
        });
        Ok(self)
    }

    /// Records filling `size` bytes of `dst` from `offset` with the 32-bit `value`
    /// (little-endian, repeated). `offset` and `size` must be multiples of 4
    /// (`vkCmdFillBuffer`; [`Error::InvalidArgument`]); a range outside the buffer is
    /// [`Error::OutOfBounds`]. A size of 0 records nothing.
    pub fn fill(
        &mut self,
        dst: &Buffer,
        offset: u64,
        size: u64,
        value: u32,
    ) -> Result<&mut Self, Error> {
        self.check_buffer(dst, "fill")?;
        dst.check_range(offset, size)?;
        if offset % 4 != 0 || size % 4 != 0 {
            return Err(Error::InvalidArgument(format!(
                "fill of {size} bytes at offset {offset}: both must be multiples of 4"
            )));
        }
        if size > 0 {
            self.ops.push(Op::Fill {
                dst: dst.keep(),
                offset,
                size,
                value,
            });
        }
        Ok(self)
    }

    /// Records a write of `bytes` (copied now) into `dst` at `offset`, done on the device
    /// in stream order. Up to 64 KiB at 4-byte aligned offsets and lengths are recorded
    /// inline; other writes allocate a staging buffer. [`Error::OutOfBounds`] when the
    /// range does not fit.
    pub fn write(&mut self, dst: &Buffer, offset: u64, bytes: &[u8]) -> Result<&mut Self, Error> {
        self.check_buffer(dst, "write")?;
        dst.check_range(offset, bytes.len() as u64)?;
        if bytes.is_empty() {
            return Ok(self);
        }
        if bytes.len() <= INLINE_WRITE_LIMIT && offset % 4 == 0 && bytes.len() % 4 == 0 {
            self.ops.push(Op::Update {
                dst: dst.keep(),
                offset,
                data: bytes.to_vec(),
            });
        } else {
            let staging = self.ctx.create_internal_buffer(bytes.len() as u64)?;
            staging.write(0, bytes)?;
            self.ops.push(Op::Copy {
                src: staging.keep(),
                src_offset: 0,
                dst: dst.keep(),
                dst_offset: offset,
                size: bytes.len() as u64,
            });
        }
        Ok(self)
    }

    /// Records a read of `len` bytes of `src` at `offset`, taken in stream order (after the
    /// commands recorded before it, before those after it) into a staging buffer; the bytes
    /// are [`Completion::read`]`(id)` once the submission has finished.
    /// [`Error::OutOfBounds`] when the range does not fit.
    pub fn read(&mut self, src: &Buffer, offset: u64, len: u64) -> Result<ReadId, Error> {
        self.check_buffer(src, "read")?;
        src.check_range(offset, len)?;
        let staging = self.ctx.create_internal_buffer(len)?;
        self.ops.push(Op::Read {
            src: src.keep(),
            offset,
            staging: staging.keep(),
            size: len,
        });
        self.reads += 1;
        Ok(ReadId(self.reads - 1))
    }

    /// Keeps `buffer` alive until the submission has finished, for a buffer that a kernel
    /// reaches through an address rather than a command of this stream.
    pub fn keep_alive(&mut self, buffer: &Buffer) -> &mut Self {
        self.keep.push(buffer.lease());
        self
    }

    /// Like [`Stream::keep_alive`], from a [`BufferLease`].
    pub fn keep_lease(&mut self, lease: BufferLease) -> &mut Self {
        self.keep.push(lease);
        self
    }

    /// Like [`Stream::keep_lease`] for each of `leases`; the first time, the vector itself
    /// is kept (no copy, no allocation).
    pub fn keep_leases(&mut self, mut leases: Vec<BufferLease>) -> &mut Self {
        if self.keep.is_empty() {
            self.keep = leases;
        } else {
            self.keep.append(&mut leases);
        }
        self
    }

    /// Records the commands into a command buffer and submits it, without waiting. Errors:
    /// [`Error::DeviceBusy`] while work that timed out still runs (nothing is submitted), a
    /// failed Vulkan call. A stream without commands submits nothing (its submission is
    /// finished at once).
    pub fn submit(self) -> Result<Submission, Error> {
        let _span = tracing::debug_span!(
            "submit",
            commands = self.ops.as_slice().len(),
            kernel = self.ops.as_slice().iter().find_map(|op| match op {
                Op::Launch(parts) => parts.as_slice().first().map(|p| p.pipeline.name.as_str()),
                _ => None,
            }),
            timed = self.timed
        )
        .entered();
        let shared = Arc::clone(self.ctx.shared());
        let timeout_seconds = self.ctx.timeout_seconds();
        let mut submission = Submission {
            shared,
            slot: None,
            ops: self.ops,
            _keep: self.keep,
            queries: 0,
            timeout_seconds,
            times: None,
        };
        if submission.ops.as_slice().is_empty() {
            return Ok(submission);
        }
        let shared = &submission.shared;
        shared.check_idle(|| match submission.ops.as_slice() {
            [Op::Launch(parts)] => format!("dispatch {}", parts.as_slice()[0].pipeline.name),
            ops => format!("submit a stream of {} commands", ops.len()),
        })?;
        let mut slot = shared.take_slot()?;
        let queries = if self.timed {
            submission.ops.as_slice().len() as u32 + 1
        } else {
            0
        };
        // SAFETY: the slot is not in flight; every object recorded belongs to this device
        // (checked when recorded) and is kept alive by `submission` until the fence signals.
        let recorded = unsafe { record(shared, &mut slot, submission.ops.as_slice(), queries) }
            .and_then(|()| unsafe { shared.queue_submit(slot.cmd, slot.fence) });
        if let Err(e) = recorded {
            // Nothing was submitted: the slot is reusable (it is reset when taken).
            shared.give_back_slot(slot);
            return Err(e);
        }
        submission.queries = queries;
        submission.slot = Some(slot);
        Ok(submission)
    }
}

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

/// Records `ops` into the slot's command buffer, with `queries` timestamps (0: untimed; else
/// one per command plus one).
///
/// # Safety
/// The slot is not in flight; every handle in `ops` belongs to `shared`'s device.
unsafe fn record(
    shared: &DeviceShared,
    slot: &mut Slot,
    ops: &[Op],
    queries: u32,
) -> Result<(), Error> {
    use crate::error::VkResultExt;
    let device = &shared.device;
    let cmd = slot.cmd;
    let timer = if queries > 0 {
        Some(slot.timer(&shared.device, shared.timestamps, queries)?)
    } else {
        None
    };
    let begin =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    device
        .begin_command_buffer(cmd, &begin)
        .vk("vkBeginCommandBuffer")?;
    if let Some(t) = timer {
        t.record_start(device, cmd, queries);
    }
    let mut bound = None;
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
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
        match op {
            Op::Launch(parts) => {
                for part in parts.as_slice() {
                    let p = &part.pipeline;
                    if bound != Some(p.pipeline) {
                        device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                        bound = Some(p.pipeline);
                    }
                    if !part.push.is_empty() {
                        device.cmd_push_constants(
                            cmd,
                            p.layout,
                            vk::ShaderStageFlags::COMPUTE,
                            0,
                            &part.push,
                        );
                    }
                    let [x, y, z] = part.groups;
                    device.cmd_dispatch(cmd, x, y, z);
                }
            }
            Op::Copy {
                src,
                src_offset,
                dst,
                dst_offset,
                size,
            } => {
                let region = vk::BufferCopy {
                    src_offset: *src_offset,
                    dst_offset: *dst_offset,
                    size: *size,
                };
                device.cmd_copy_buffer(cmd, src.handle(), dst.handle(), &[region]);
            }
            Op::Fill {
                dst,
                offset,
                size,
                value,
            } => device.cmd_fill_buffer(cmd, dst.handle(), *offset, *size, *value),
            Op::Update { dst, offset, data } => {
                device.cmd_update_buffer(cmd, dst.handle(), *offset, data)
            }
            Op::Read {
                src,
                offset,
                staging,
                size,
            } => {
                if *size > 0 {
                    let region = vk::BufferCopy {
                        src_offset: *offset,
                        dst_offset: 0,
                        size: *size,
                    };
                    device.cmd_copy_buffer(cmd, src.handle(), staging.handle(), &[region]);
                }
            }
        }
        if let Some(t) = timer {
            t.record(device, cmd, i as u32 + 1);
        }
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

/// A submitted [`Stream`]: poll it with [`Submission::is_done`], wait for it with
/// [`Submission::wait`]. Dropping it without waiting waits (at most the timeout) and
/// ignores errors. It keeps every buffer and pipeline of its commands alive until then.
#[must_use = "a submission should be waited for to see its errors and results"]
pub struct Submission {
    shared: Arc<DeviceShared>,
    /// The slot in flight; `None` when nothing was submitted or once finished.
    slot: Option<Slot>,
    ops: Ops,
    _keep: Vec<BufferLease>,
    queries: u32,
    timeout_seconds: f64,
    times: Option<Vec<Duration>>,
}

impl std::fmt::Debug for Submission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Submission")
            .field("commands", &self.ops.as_slice().len())
            .field("in_flight", &self.slot.is_some())
            .finish()
    }
}

impl Submission {
    /// Whether the device has finished the submission: a look at its fence, never a wait.
    /// A failed query (a lost device) is [`Error::Vulkan`].
    pub fn is_done(&self) -> Result<bool, Error> {
        let Some(slot) = &self.slot else {
            return Ok(true);
        };
        // SAFETY: the fence belongs to this device and is in flight or signalled.
        match unsafe { self.shared.device.get_fence_status(slot.fence) } {
            Ok(done) => Ok(done),
            Err(result) => Err(Error::Vulkan {
                call: "vkGetFenceStatus",
                result,
            }),
        }
    }

    /// Waits for the submission, at most the context's timeout (`PISA_VK_TIMEOUT`), and
    /// returns what it produced: the bytes of its reads and, for a timed stream, the GPU time
    /// of each command. After [`Error::Timeout`] the work still runs: until it ends, calls
    /// that need the device return [`Error::DeviceBusy`] (see [`Context`]).
    pub fn wait(mut self) -> Result<Completion, Error> {
        self.finish()?;
        let mut reads = Vec::new();
        for op in self.ops.as_slice() {
            if let Op::Read { staging, size, .. } = op {
                let mut bytes = vec![0u8; *size as usize];
                staging.read(0, &mut bytes)?;
                reads.push(bytes);
            }
        }
        Ok(Completion {
            times: self.times.take(),
            reads,
        })
    }

    /// Waits for the fence (bounded by the timeout); on success reads the timestamps and
    /// gives the slot back. Does nothing when nothing is in flight.
    fn finish(&mut self) -> Result<(), Error> {
        let Some(slot) = self.slot.take() else {
            return Ok(());
        };
        let device = &self.shared.device;
        let ns = (self.timeout_seconds * 1e9) as u64;
        // SAFETY: the fence belongs to this device.
        match unsafe { device.wait_for_fences(&[slot.fence], true, ns) } {
            Ok(()) => {
                let times = match slot.existing_timer() {
                    Some(t) if self.queries > 0 => Some(t.intervals(device, self.queries)),
                    _ => None,
                };
                self.shared.give_back_slot(slot);
                self.times = times.transpose()?;
                Ok(())
            }
            Err(vk::Result::TIMEOUT) => {
                let what = match self.ops.as_slice() {
                    [op] => op.describe(),
                    ops => {
                        // Name a launch when there is one: it is what may run forever.
                        let first = ops.iter().find(|op| matches!(op, Op::Launch(_)));
                        format!(
                            "a stream of {} commands with {}",
                            ops.len(),
                            first.unwrap_or(&ops[0]).describe()
                        )
                    }
                };
                // The slot is leaked: its fence is the busy state from now on.
                self.shared.set_busy(slot.fence, what.clone());
                // VK_TIMEOUT means the whole timeout has passed (no clock is read on the way:
                // it would cost every wait).
                Err(Error::Timeout {
                    seconds: self.timeout_seconds,
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

impl Drop for Submission {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// What a finished [`Submission`] produced.
#[derive(Clone, Debug, Default)]
pub struct Completion {
    times: Option<Vec<Duration>>,
    reads: Vec<Vec<u8>>,
}

impl Completion {
    /// The bytes of the [`Stream::read`] that returned `id`; `None` for an id of another
    /// stream with fewer reads.
    pub fn read(&self, id: ReadId) -> Option<&[u8]> {
        self.reads.get(id.0).map(|r| &r[..])
    }

    /// Takes the bytes of the read `id` out (empty if taken before; `None` as for
    /// [`Completion::read`]).
    pub fn take_read(&mut self, id: ReadId) -> Option<Vec<u8>> {
        self.reads.get_mut(id.0).map(std::mem::take)
    }

    /// For a timed stream, the GPU time of each command in the order they were recorded
    /// (a launch of several parts is one command); `None` for an untimed one.
    pub fn command_times(&self) -> Option<&[Duration]> {
        self.times.as_deref()
    }

    /// For a timed stream, the GPU time from before its first command started to after its
    /// last one finished.
    pub fn gpu_time(&self) -> Option<Duration> {
        self.times.as_ref().map(|t| t.iter().sum())
    }
}
