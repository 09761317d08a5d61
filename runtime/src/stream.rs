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
//! A launch may have more dispatches than fit in memory (the parts of the largest legal
//! grid): [`Stream::launch_lazy`] takes them as an iterator, made as they are recorded. A
//! submission records at most [`BATCH_DISPATCHES`] dispatches into its command buffer at a
//! time (and, of pipelines that read a cancel word, at most [`CANCELLABLE_BATCH_GROUPS`]
//! work-groups, so that a cancel stops a launch after the batch in flight); when a batch
//! has finished, waiting for (or polling) the submission records and submits the next one
//! into the same command buffer, so memory does not grow with the grid. The timeout covers every batch together: [`Submission::wait`] returns
//! [`Error::Timeout`] once the whole time has passed, between batches too (then nothing
//! is left running). A timed submission's times then include the host's time between
//! batches.
//!
//! A timed stream also measures what the first dispatch of each of its pipelines costs
//! beyond running it: on a CPU driver (lavapipe) that dispatch compiles the shader. Before
//! its first command it dispatches each pipeline never dispatched before with no work-groups,
//! timed apart ([`Completion::first_dispatch_compile`]), so that the commands' times are
//! those of running them.
//!
//! Robustness is the one of a blocking dispatch: [`Submission::wait`] waits at most the
//! context's timeout (`PISA_VK_TIMEOUT`) and then reports [`Error::Timeout`]; the submission
//! then becomes the device's busy state, so that every call needing the device returns
//! [`Error::DeviceBusy`] until it has been seen finished (submitting a stream is one such
//! call).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::buffer::{Buffer, BufferLease, RawBuffer};
use crate::context::Context;
use crate::error::Error;
use crate::pipeline::{Pipeline, PipelineObjects};
use crate::shared::DeviceShared;
use crate::slots::Slot;

mod record;
mod submission;

use record::record;
pub use submission::{Completion, Submission};

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

/// The most dispatches recorded into a command buffer at a time: a launch with more is
/// submitted in batches of this many (see the [module documentation](self)).
pub const BATCH_DISPATCHES: u128 = 4096;

/// The most work-groups of pipelines that read a cancel word recorded into a command buffer
/// at a time (at least one dispatch): a batch of a cancellable launch ends once its
/// dispatches reach this many work-groups, so that a cancel stops a launch within one such
/// batch. A cancelled kernel's work-groups return at their entry check, but a CPU driver
/// still starts each one (lavapipe: about 2 µs each, so 2^16 of them take about 0.15 s;
/// spec-notes §108). Hosts split larger dispatches of such pipelines into parts of at most
/// this many work-groups.
pub const CANCELLABLE_BATCH_GROUPS: u64 = 1 << 16;

/// One dispatch of a launch recorded with [`Stream::launch_lazy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LazyPart {
    /// Its pipeline: an index into [`LazyLaunch::pipelines`].
    pub pipeline: usize,
    /// Three words written at [`LazyLaunch::patch_at`] in its push constants (for example
    /// the id of its first work-group).
    pub patch: [u32; 3],
    /// Work-groups in x, y, z (each at most `maxComputeWorkGroupCount`).
    pub group_count: [u32; 3],
}

/// A launch whose dispatches are made as they are recorded ([`Stream::launch_lazy`]): any
/// number of them in bounded memory. Like the parts of [`Stream::launch`], nothing orders
/// them.
pub struct LazyLaunch<'a> {
    /// The pipelines its parts use (all with the same push-constant size).
    pub pipelines: &'a [&'a Pipeline],
    /// The push constants of every part (at most the pipelines' size; zero-padded), but
    /// for the part's [`LazyPart::patch`].
    pub push_constants: &'a [u8],
    /// Where each part's patch goes in its push constants (12 bytes), if anywhere.
    pub patch_at: Option<u32>,
    /// How many parts `parts` gives (for messages).
    pub count: u128,
    /// The parts; at least one.
    pub parts: Box<dyn Iterator<Item = LazyPart> + Send>,
    /// Whether each part waits for the one before it (a barrier between them): for parts
    /// that reuse one memory, such as a kernel's per-launch private scratch, whose slices
    /// are numbered within each part.
    pub serial: bool,
}

impl std::fmt::Debug for LazyLaunch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyLaunch")
            .field("pipelines", &self.pipelines)
            .field("patch_at", &self.patch_at)
            .field("count", &self.count)
            .field("serial", &self.serial)
            .finish()
    }
}

/// A recorded [`LazyLaunch`]: what it needs, and the parts not yet recorded.
struct LazyParts {
    pipelines: Vec<Arc<PipelineObjects>>,
    /// Exactly the pipelines' push-constant size.
    push: Vec<u8>,
    patch_at: Option<usize>,
    count: u128,
    /// `maxComputeWorkGroupCount`.
    max_groups: [u32; 3],
    /// The first part (for messages), and the rest.
    first: LazyPart,
    rest: Box<dyn Iterator<Item = LazyPart> + Send>,
    /// [`LazyLaunch::serial`].
    serial: bool,
}

/// A recorded dispatch, owning what it needs.
struct Part {
    pipeline: Arc<PipelineObjects>,
    /// Exactly the pipeline's push-constant size.
    push: Vec<u8>,
    groups: [u32; 3],
}

/// The dispatches of a recorded launch: one (the common case, kept without a vector),
/// several, or made as they are recorded.
enum Parts {
    One(Part),
    Many(Vec<Part>),
    Lazy(LazyParts),
}

impl Parts {
    /// The parts held in memory (none for a lazy launch).
    fn as_slice(&self) -> &[Part] {
        match self {
            Parts::One(part) => std::slice::from_ref(part),
            Parts::Many(parts) => parts,
            Parts::Lazy(_) => &[],
        }
    }

    /// How many dispatches it has.
    fn count(&self) -> u128 {
        match self {
            Parts::Lazy(lazy) => lazy.count,
            parts => parts.as_slice().len() as u128,
        }
    }

    /// Its pipelines, once per part (lazy: once each); allocates nothing.
    fn pipelines(&self) -> impl Iterator<Item = &Arc<PipelineObjects>> {
        let lazy: &[Arc<PipelineObjects>] = match self {
            Parts::Lazy(lazy) => &lazy.pipelines,
            _ => &[],
        };
        lazy.iter()
            .chain(self.as_slice().iter().map(|p| &p.pipeline))
    }

    /// The name of its (first) pipeline and its first part's group count.
    fn first(&self) -> (&str, [u32; 3]) {
        match self {
            Parts::Lazy(lazy) => (
                &lazy.pipelines[lazy.first.pipeline].name,
                lazy.first.group_count,
            ),
            parts => {
                let first = &parts.as_slice()[0];
                (&first.pipeline.name, first.groups)
            }
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

    fn as_mut_slice(&mut self) -> &mut [Op] {
        match self {
            Ops::Empty => &mut [],
            Ops::One(op) => std::slice::from_mut(op),
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
                let (name, [x, y, z]) = parts.first();
                let more = match parts.count() {
                    1 => String::new(),
                    n => format!(" and {} more part(s)", n - 1),
                };
                format!("dispatch of {name} with {x}x{y}x{z} groups{more}")
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

    /// Records one launch whose parts are made as they are recorded, in batches of at most
    /// [`BATCH_DISPATCHES`] (see the [module documentation](self)): memory does not depend
    /// on their number. Errors (nothing is recorded then): those of [`Stream::launch`] for
    /// the pipelines and push constants, a patch beyond the push constants, no parts
    /// ([`Error::InvalidArgument`]). A part naming no pipeline of the launch, or with too
    /// many groups, is an [`Error::InvalidArgument`] of the submission when it is recorded.
    pub fn launch_lazy(&mut self, mut launch: LazyLaunch) -> Result<&mut Self, Error> {
        if let Some(warning) = self.ctx.driver_bugs().first_warning() {
            tracing::warn!(target: "pisa_vk", "{warning}");
        }
        let Some(first) = launch.parts.next() else {
            return Err(Error::InvalidArgument("a launch without parts".into()));
        };
        let push_size = launch
            .pipelines
            .iter()
            .map(|p| p.push_constant_size())
            .max();
        let push_size = push_size.unwrap_or(0) as usize;
        let mut pipelines = Vec::with_capacity(launch.pipelines.len());
        for pipeline in launch.pipelines {
            let part = DispatchPart {
                pipeline,
                push_constants: launch.push_constants,
                group_count: [0; 3],
            };
            pipelines.push(self.part(&part)?.pipeline);
        }
        if launch
            .patch_at
            .is_some_and(|at| at as usize + 12 > push_size)
        {
            return Err(Error::InvalidArgument(format!(
                "a patch at byte {:?} of {push_size} bytes of push constants",
                launch.patch_at
            )));
        }
        let mut push = launch.push_constants.to_vec();
        push.resize(push_size, 0);
        let lazy = LazyParts {
            pipelines,
            push,
            patch_at: launch.patch_at.map(|at| at as usize),
            count: launch.count,
            max_groups: self.ctx.info().max_workgroup_count,
            first,
            rest: launch.parts,
            serial: launch.serial,
        };
        self.ops.push(Op::Launch(Parts::Lazy(lazy)));
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

    /// Records the commands into a command buffer and submits it, without waiting: all of
    /// them, or the first batch of a launch of more than [`BATCH_DISPATCHES`] dispatches
    /// (the submission records the rest as it is waited for). A timed stream first
    /// dispatches each pipeline never dispatched before with no work-groups (its compile
    /// time on a CPU driver, [`Completion::first_dispatch_compile`]). Errors:
    /// [`Error::DeviceBusy`] while work that timed out still runs (nothing is submitted), a
    /// failed Vulkan call. A stream without commands submits nothing (its submission is
    /// finished at once).
    pub fn submit(self) -> Result<Submission, Error> {
        let _span = tracing::debug_span!(
            "submit",
            commands = self.ops.as_slice().len(),
            kernel = self.ops.as_slice().iter().find_map(|op| match op {
                Op::Launch(parts) => Some(parts.first().0),
                _ => None,
            }),
            timed = self.timed
        )
        .entered();
        let shared = Arc::clone(self.ctx.shared());
        let first = first_dispatches(self.ops.as_slice());
        let warm = self.timed && !first.is_empty();
        let queries = match self.timed {
            true => self.ops.as_slice().len() as u32 + 1 + warm as u32,
            false => 0,
        };
        let mut submission = Submission {
            shared,
            progress: Mutex::new(Progress {
                slot: None,
                ops: self.ops,
                op: 0,
                part: 0,
                deadline: None,
                expired: false,
                cancel_address: 0,
                queue: 0,
            }),
            word: None,
            _keep: self.keep,
            timing: Timing { queries, warm },
            compiled: first.iter().map(|p| p.name.clone()).collect(),
            timeout_seconds: self.ctx.timeout_seconds(),
            times: None,
            compile_time: None,
            place: None,
            cancellable: false,
        };
        let shared = &submission.shared;
        let progress = submission
            .progress
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        if progress.ops.as_slice().is_empty() {
            return Ok(submission);
        }
        shared.check_idle(|| match progress.ops.as_slice() {
            [Op::Launch(parts)] => format!("dispatch {}", parts.first().0),
            ops => format!("submit a stream of {} commands", ops.len()),
        })?;
        let warm = match warm {
            true => first,
            false => Vec::new(),
        };
        submission.cancellable = progress.ops.as_slice().iter().any(|op| match op {
            Op::Launch(parts) => parts.pipelines().any(|p| p.cancel_word_at.is_some()),
            _ => false,
        });
        let slot = shared.take_slot()?;
        let (word, address) = shared.arm_cancel_word(slot.cancel_word);
        progress.cancel_address = address;
        let timing = submission.timing;
        let place = shared.order_submit(Some(word), |queue| {
            progress.queue = queue;
            progress.submit_batch(shared, slot, timing, &warm)
        })?;
        submission.word = Some(word);
        submission.place = Some(place);
        Ok(submission)
    }
}

/// The pipelines of `ops` never dispatched before, once each, now marked dispatched: on a
/// CPU driver their first dispatch compiles them.
fn first_dispatches(ops: &[Op]) -> Vec<Arc<PipelineObjects>> {
    let mut first: Vec<Arc<PipelineObjects>> = Vec::new();
    for op in ops {
        let Op::Launch(parts) = op else { continue };
        for p in parts.pipelines() {
            if !first.iter().any(|f| Arc::ptr_eq(f, p)) && p.first_dispatch() {
                first.push(Arc::clone(p));
            }
        }
    }
    first
}

/// How a submission is timed: its timestamp queries (0: untimed; else one before the first
/// command, one after each, and with `warm` one after the first dispatches of new pipelines).
#[derive(Clone, Copy, Debug)]
struct Timing {
    queries: u32,
    warm: bool,
}

/// What a submission has recorded and what it has left.
struct Progress {
    /// The slot in flight; `None` when nothing was submitted or once finished.
    slot: Option<Slot>,
    ops: Ops,
    /// The next command to record, and how many of its dispatches are recorded.
    op: usize,
    part: u128,
    /// When the time allowed for the whole submission ends: set by the first wait, or by
    /// the first batch submitted after the first one.
    deadline: Option<Instant>,
    /// Whether the time ran out between two batches (nothing more was submitted).
    expired: bool,
    /// The device address of the submission's cancel word, written into the push
    /// constants of every dispatch of a pipeline that reads it (0: none).
    cancel_address: u64,
    /// The queue the submission went to (its later batches go there too).
    queue: usize,
}

impl Progress {
    /// Whether every command is recorded.
    fn recorded(&self) -> bool {
        self.op >= self.ops.as_slice().len()
    }

    /// Records the next batch into `slot` (reset) and submits it; on an error the slot is
    /// given back (nothing of the batch was submitted).
    fn submit_batch(
        &mut self,
        shared: &DeviceShared,
        mut slot: Slot,
        timing: Timing,
        warm: &[Arc<PipelineObjects>],
    ) -> Result<(), Error> {
        // SAFETY: the slot is not in flight and reset; every object recorded belongs to this
        // device (checked when recorded) and is kept alive by the submission until the fence
        // signals.
        let recorded = unsafe { record(shared, &mut slot, self, timing, warm) }
            .and_then(|()| unsafe { shared.queue_submit(self.queue, slot.cmd, slot.fence) });
        if let Err(e) = recorded {
            shared.give_back_slot(slot);
            return Err(e);
        }
        self.slot = Some(slot);
        Ok(())
    }

    /// With the batch in flight finished (its fence signalled) and commands left: the next
    /// batch submitted, or, once the deadline has passed, nothing (`expired`; the slot given
    /// back).
    fn next_batch(
        &mut self,
        shared: &DeviceShared,
        slot: Slot,
        timing: Timing,
        timeout: Duration,
    ) -> Result<(), Error> {
        let deadline = *self
            .deadline
            .get_or_insert_with(|| Instant::now() + timeout);
        if Instant::now() >= deadline {
            self.expired = true;
            shared.give_back_slot(slot);
            return Ok(());
        }
        // SAFETY: the slot's submission has finished (its fence signalled).
        if let Err(e) = unsafe { slot.reset(&shared.device) } {
            shared.give_back_slot(slot);
            return Err(e);
        }
        self.submit_batch(shared, slot, timing, &[])
    }

    /// What is waited for, for a timeout: the command, or the stream and its first launch.
    fn describe(&self) -> String {
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
        match self.ops.as_slice().get(self.op) {
            Some(Op::Launch(parts)) if self.part > 0 || self.expired => format!(
                "{what} ({} of its {} dispatches submitted)",
                self.part,
                parts.count()
            ),
            _ => what,
        }
    }
}
