//! [`Stream`]: launches, copies, fills and host transfers recorded into one submission,
//! submitted without waiting; [`Submission`] to poll or wait for it; [`Completed`] with what
//! it read back and, for a timed stream, the GPU time of every command.
//!
//! Commands run in the order they are recorded (each sees the writes of those before it);
//! a launch with partial edge work-groups is one command of several dispatches, as in
//! [`Module::dispatch`](crate::Module::dispatch). Several submissions may be in flight at
//! once; nothing orders one with respect to another. Everything a stream records
//! (buffers, the module, arguments given as `&Buffer`) stays borrowed until the submission
//! is waited for or dropped, and its device memory is kept alive until the device has
//! finished, even if the submission handle is leaked. A buffer passed as a raw [`Arg`]
//! (its address as bytes) is not known to the stream: it must outlive the submission.
//!
//! A launch of a checked module ([`Module::checked`]) reports its first bad memory access
//! when the submission is waited for: [`Submission::wait`] (and [`Stream::run`]) return
//! [`Error::MemoryViolation`] for the first launch, in recording order, that made one (the
//! stream's reads are lost then); its allocation table holds the context's buffers alive
//! when the launch was recorded.
//!
//! [`Arg`]: crate::Arg
//!
//! With `examples/scale.pisa` (`data[i] *= 3` for `i < n`):
//!
//! ```
//! # fn main() -> pisa_vk::Result<()> {
//! use pisa_vk::{Context, Module};
//! # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
//! let ctx = Context::new()?;
//! let m = Module::load(&ctx, scale_pisa)?; // "examples/scale.pisa"
//! let data = ctx.zeroed::<u32>(7)?;
//! let copy = ctx.zeroed::<u32>(7)?;
//! let mut s = ctx.stream();
//! s.timed()?; // GPU time of every command
//! s.write(&data, &[1, 2, 3, 4, 5, 6, 7])?;
//! s.dispatch(&m, "scale", 7, 4, (&data, 7u32))?;
//! let result = s.read(&data)?;
//! s.copy(&data, &copy)?;
//! s.fill_range(&data, 2..5, 0)?;
//! let running = s.submit()?; // returns at once
//! let done = running.wait()?; // at most PISA_VK_TIMEOUT seconds
//! assert_eq!(done.get(&result)?, [3, 6, 9, 12, 15, 18, 21]);
//! assert_eq!(data.read()?, [3, 6, 0, 0, 0, 18, 21]);
//! assert_eq!(copy.read()?, [3, 6, 9, 12, 15, 18, 21]);
//! assert_eq!(done.command_times().map(<[_]>::len), Some(5));
//! # Ok(()) }
//! ```

use crate::args::IntoArgs;
use crate::dim::{IntoDim3, Launch};
use crate::error::Extent;
use crate::memcheck::Check;
use crate::{Buffer, CancelHandle, Context, Error, Module, Result};
use bytemuck::Pod;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Numbers streams, so that a [`Pending`] read is only redeemed by its own submission.
static STREAM_IDS: AtomicU64 = AtomicU64::new(1);

/// Commands recorded for one submission ([`Context::stream`]); see the
/// [module documentation](self). Recording costs host memory only (and a staging buffer
/// for a read or a write that cannot be recorded inline, and a pipeline compiled by the
/// first launch of a kernel with a work-group size); nothing reaches the device before
/// [`Stream::submit`]. Errors are reported by the call that records, and nothing is
/// recorded then. Dropping a stream without submitting it discards its commands.
pub struct Stream<'a> {
    inner: pisa_runtime::Stream<'a>,
    id: u64,
    /// The checks of the checked launches recorded, in order.
    checks: Vec<Check<'a>>,
    _borrows: PhantomData<&'a ()>,
}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("commands", &self.inner.len())
            .finish()
    }
}

/// A read recorded in a stream ([`Stream::read`]): its elements once the submission has
/// completed ([`Completed::get`]). Holds no memory itself.
#[derive(Debug)]
#[must_use = "the read's values are only reachable through it"]
pub struct Pending<T> {
    id: pisa_runtime::ReadId,
    stream: u64,
    _t: PhantomData<fn() -> T>,
}

impl<'a> Stream<'a> {
    pub(crate) fn new(ctx: &'a Context) -> Stream<'a> {
        Stream {
            inner: ctx.rt.stream(),
            id: STREAM_IDS.fetch_add(1, Ordering::Relaxed),
            checks: Vec::new(),
            _borrows: PhantomData,
        }
    }

    /// Records a launch of kernel `index` of `module` (every way to launch ends here), and
    /// keeps its check when the module is checked.
    pub(crate) fn record_launch(
        &mut self,
        module: &'a Module,
        index: usize,
        launch: &Launch,
        args: impl IntoArgs,
    ) -> Result<()> {
        if let Some(check) = module.record(&mut self.inner, index, launch, args)? {
            self.checks.push(check);
        }
        Ok(())
    }

    /// Measures the GPU time of every command with timestamp queries
    /// ([`Completed::command_times`]). Cost: two timestamps around each command, and a query
    /// pool made by the first timed submission of a submission slot. Errors:
    /// `RuntimeError::MissingFeatures` when the queue has no timestamps.
    pub fn timed(&mut self) -> Result<&mut Self> {
        self.inner.timed(true)?;
        Ok(self)
    }

    /// How many commands are recorded (a launch of several dispatches is one).
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Records a launch of `kernel` of `module`, with the arguments and sizes of
    /// [`Module::dispatch`]. It runs after the commands recorded before it and sees their
    /// writes. Cost: host memory; creating a pipeline the module has not built yet happens
    /// here (blocking while the driver compiles it), not at submission. Errors: those of
    /// [`Module::dispatch`] up to the submission (unknown kernel, arguments, launch sizes,
    /// pipeline creation, an argument or check buffer); a checked launch's
    /// [`Error::MemoryViolation`] is reported by [`Submission::wait`].
    pub fn dispatch(
        &mut self,
        module: &'a Module,
        kernel: &str,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: impl IntoArgs,
    ) -> Result<&mut Self> {
        let (index, _) = module.kernel_info(kernel)?;
        let launch = module.launch_of(index, global, local)?;
        self.record_launch(module, index, &launch, args)?;
        Ok(self)
    }

    /// Records a launch of `kernel` with a full launch description (global offset
    /// included); as [`Stream::dispatch`] (same cost and errors).
    pub fn launch(
        &mut self,
        module: &'a Module,
        kernel: &str,
        launch: &Launch,
        args: impl IntoArgs,
    ) -> Result<&mut Self> {
        let (index, _) = module.kernel_info(kernel)?;
        self.record_launch(module, index, launch, args)?;
        Ok(self)
    }

    /// Records a write of all of `data` (copied now) to `dst`, in stream order. Cost: as
    /// [`Stream::write_at`]. Errors: [`Error::Length`] unless `data` has exactly
    /// `dst.len()` elements; those of [`Stream::write_at`].
    pub fn write<T: Pod>(&mut self, dst: &'a Buffer<T>, data: &[T]) -> Result<&mut Self> {
        if data.len() != dst.len() {
            return Err(Error::Length {
                op: "Stream::write to",
                target: dst.target(),
                expected: Extent::of::<T>(dst.len() as u64),
                given: Extent::of::<T>(data.len() as u64),
            });
        }
        self.write_at(dst, 0, data)
    }

    /// Records a write of `data` (copied now) to the elements of `dst` from `start`, done on
    /// the device in stream order. Cost: up to 64 KiB at 4-byte aligned offsets and lengths
    /// travel inside the command buffer (`vkCmdUpdateBuffer`); any other write allocates a
    /// staging buffer (device memory) and copies from it. Errors: [`Error::Range`] when the
    /// elements are not inside `dst`; for a staging buffer, `RuntimeError::Allocation` and
    /// `RuntimeError::DeviceBusy`; `RuntimeError::InvalidArgument` for a buffer of another
    /// context.
    pub fn write_at<T: Pod>(
        &mut self,
        dst: &'a Buffer<T>,
        start: usize,
        data: &[T],
    ) -> Result<&mut Self> {
        let end = start.saturating_add(data.len());
        let (offset, _) = dst.byte_range(start..end, "Stream::write_at to")?;
        self.inner
            .write(dst.raw(), offset, bytemuck::cast_slice(data))?;
        Ok(self)
    }

    /// Records a read of all of `src`, taken in stream order: after the commands recorded
    /// before it, before those after it. As [`Stream::read_range`] (same cost and errors).
    pub fn read<T: Pod>(&mut self, src: &'a Buffer<T>) -> Result<Pending<T>> {
        self.read_range(src, ..)
    }

    /// Records a read of the elements of `src` in `range`, taken in stream order; its
    /// values are [`Completed::get`] of the returned [`Pending`]. Cost: a staging buffer
    /// of the range's size (device memory) and a copy command; the values are copied to the
    /// host when the submission is waited for. Errors: [`Error::Range`] when the range is
    /// not inside `src`, `RuntimeError::Allocation`, `RuntimeError::DeviceBusy`,
    /// `RuntimeError::InvalidArgument` for a buffer of another context.
    pub fn read_range<T: Pod>(
        &mut self,
        src: &'a Buffer<T>,
        range: impl RangeBounds<usize>,
    ) -> Result<Pending<T>> {
        let (offset, bytes) = src.byte_range(range, "Stream::read_range of")?;
        let id = self.inner.read(src.raw(), offset, bytes)?;
        Ok(Pending {
            id,
            stream: self.id,
            _t: PhantomData,
        })
    }

    /// Records a device copy of every element of `src` into `dst`, as
    /// [`Stream::copy_range`]. Errors: [`Error::Length`] unless both have the same length;
    /// those of [`Stream::copy_range`].
    pub fn copy<T: Pod>(&mut self, src: &'a Buffer<T>, dst: &'a Buffer<T>) -> Result<&mut Self> {
        if src.len() != dst.len() {
            return Err(Error::Length {
                op: "Stream::copy into",
                target: dst.target(),
                expected: Extent::of::<T>(dst.len() as u64),
                given: Extent::of::<T>(src.len() as u64),
            });
        }
        self.copy_range(src, .., dst, 0)
    }

    /// Records a device copy (`vkCmdCopyBuffer`) of the elements of `src` in `range` to
    /// `dst` from element `dst_start`. Cost: host memory only. Errors: [`Error::Range`]
    /// when either range is not inside its buffer; `RuntimeError::InvalidArgument` when the
    /// two ranges of one buffer overlap or a buffer belongs to another context.
    pub fn copy_range<T: Pod>(
        &mut self,
        src: &'a Buffer<T>,
        range: impl RangeBounds<usize>,
        dst: &'a Buffer<T>,
        dst_start: usize,
    ) -> Result<&mut Self> {
        let (src_offset, bytes) = src.byte_range(range, "Stream::copy_range from")?;
        let n = (bytes / std::mem::size_of::<T>().max(1) as u64) as usize;
        let (dst_offset, _) = dst.byte_range(
            dst_start..dst_start.saturating_add(n),
            "Stream::copy_range to",
        )?;
        self.inner
            .copy(src.raw(), src_offset, dst.raw(), dst_offset, bytes)?;
        Ok(self)
    }

    /// Records setting every element of `dst` to `value`, as [`Stream::fill_range`].
    pub fn fill<T: Pod>(&mut self, dst: &'a Buffer<T>, value: T) -> Result<&mut Self> {
        self.fill_range(dst, .., value)
    }

    /// Records setting the elements of `dst` in `range` to `value`: a device fill
    /// (`vkCmdFillBuffer`, no memory) when the value's bytes repeat every 4 bytes and the
    /// range is 4-byte aligned, else a write of the repeated value ([`Stream::write_at`]:
    /// inline up to 64 KiB, else through a staging buffer). Errors: [`Error::Range`] when
    /// the range is not inside `dst`; a write's errors ([`Stream::write_at`]).
    pub fn fill_range<T: Pod>(
        &mut self,
        dst: &'a Buffer<T>,
        range: impl RangeBounds<usize>,
        value: T,
    ) -> Result<&mut Self> {
        let (offset, bytes) = dst.byte_range(range, "Stream::fill_range of")?;
        let v: &[u8] = bytemuck::bytes_of(&value);
        let word = match v.len() {
            1 => Some([v[0]; 4]),
            2 => Some([v[0], v[1], v[0], v[1]]),
            4 => Some([v[0], v[1], v[2], v[3]]),
            _ => None,
        };
        match word {
            Some(w) if offset % 4 == 0 && bytes % 4 == 0 => {
                self.inner
                    .fill(dst.raw(), offset, bytes, u32::from_le_bytes(w))?;
            }
            _ => {
                let n = bytes as usize / v.len().max(1);
                self.inner
                    .write(dst.raw(), offset, bytemuck::cast_slice(&vec![value; n]))?;
            }
        }
        Ok(self)
    }

    /// Records the commands into one command buffer and submits it, without waiting: the
    /// returned [`Submission`] is polled or waited for. Several submissions may be in flight.
    /// Cost: recording and `vkQueueSubmit` (a submission slot — command pool, buffer and
    /// fence — is reused, or made when every slot is in flight); no wait. A stream without
    /// commands submits nothing. Errors: `RuntimeError::DeviceBusy` while an earlier
    /// submission that timed out still runs (nothing is submitted), `RuntimeError::Vulkan`.
    pub fn submit(self) -> Result<Submission<'a>> {
        Ok(Submission {
            inner: self.inner.submit()?,
            stream: self.id,
            checks: self.checks,
            _borrows: PhantomData,
        })
    }

    /// Submits and waits: [`Stream::submit`] then [`Submission::wait`], with their cost
    /// (blocking) and errors.
    pub fn run(self) -> Result<Completed> {
        self.submit()?.wait()
    }
}

/// A submitted [`Stream`]: poll it ([`Submission::is_done`]) or wait for it
/// ([`Submission::wait`]). It borrows what the stream recorded until then. Dropping it
/// waits (blocking, at most the timeout) and discards errors and reads.
#[must_use = "a submission should be waited for to see its errors and results"]
pub struct Submission<'a> {
    inner: pisa_runtime::Submission,
    stream: u64,
    /// The checks of its checked launches, read once it has finished.
    checks: Vec<Check<'a>>,
    _borrows: PhantomData<&'a ()>,
}

impl std::fmt::Debug for Submission<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl Submission<'_> {
    /// Whether the device has finished it: a look at its fence, never a wait. Errors:
    /// `RuntimeError::Vulkan` (a lost device).
    pub fn is_done(&self) -> Result<bool> {
        Ok(self.inner.is_done()?)
    }

    /// Waits at most `limit` for it to be ready: `true` once [`Submission::wait`] would
    /// return at once (finished, cancelled, or its time is up). For waiting in slices, e.g.
    /// to look for Ctrl-C in between. Errors: `RuntimeError::Vulkan` (a lost device).
    pub fn wait_timeout(&self, limit: Duration) -> Result<bool> {
        Ok(self.inner.wait_timeout(limit)?)
    }

    /// Asks it to stop: every work-item of its launches returns at its next loop iteration
    /// (kernels translated with [`Options::cancellable`](crate::Options::cancellable), the
    /// default), and [`Submission::wait`] returns `RuntimeError::Cancelled`. Returns whether
    /// there was anything to stop. Cost: one store into host-visible memory.
    pub fn cancel(&self) -> bool {
        self.inner.cancel()
    }

    /// A handle that stops this submission from another thread ([`CancelHandle::cancel`],
    /// what [`Submission::cancel`] does), harmless once it has finished.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.inner.cancel_handle()
    }

    /// Waits for it and returns what it produced. Cost: blocks until the device has
    /// finished, at most `PISA_VK_TIMEOUT` seconds; copies the recorded reads to the host
    /// (allocating their vectors); a checked launch's record is read back. Errors:
    /// `RuntimeError::Timeout` (the work was asked to stop through its cancel word: its
    /// `stopped` says whether it did; if not, the context reports `RuntimeError::DeviceBusy`
    /// until it has ended), `RuntimeError::Cancelled` ([`Submission::cancel`]),
    /// `RuntimeError::Vulkan` (a lost device), [`Error::MemoryViolation`] for the first
    /// launch of a checked module, in recording order, that made a bad access (the reads
    /// are lost then; the checker stopped the launch at it, spec-notes §91).
    pub fn wait(self) -> Result<Completed> {
        let checked = !self.checks.is_empty();
        let inner = self
            .inner
            .wait()
            .map_err(|e| crate::memcheck::mark_checked(e, checked))?;
        crate::memcheck::finish_all(self.checks)?;
        Ok(Completed {
            inner,
            stream: self.stream,
        })
    }
}

/// What a finished submission produced ([`Submission::wait`]): its reads and, for a timed
/// stream, its GPU times. Host memory only.
#[derive(Debug)]
pub struct Completed {
    inner: pisa_runtime::Completion,
    stream: u64,
}

impl Completed {
    /// The elements of the read `pending` (a copy: allocates the vector; it may be taken
    /// again). Errors: [`Error::Mismatch`] for a read of another stream.
    pub fn get<T: Pod>(&self, pending: &Pending<T>) -> Result<Vec<T>> {
        let bytes = self
            .inner
            .read(pending.id)
            .filter(|_| pending.stream == self.stream)
            .ok_or_else(|| Error::Mismatch("the read belongs to another stream".into()))?;
        let mut out = vec![T::zeroed(); bytes.len() / std::mem::size_of::<T>().max(1)];
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(bytes);
        Ok(out)
    }

    /// For a timed stream ([`Stream::timed`]), the GPU time of each command in recording
    /// order; `None` for an untimed one.
    pub fn command_times(&self) -> Option<&[Duration]> {
        self.inner.command_times()
    }

    /// For a timed stream whose launches used pipelines for the first time, the GPU time of
    /// their first dispatch without work-groups, before the first command: a CPU driver
    /// (lavapipe) compiles a pipeline then, and [`Completed::command_times`] leave it out.
    /// `None` for an untimed stream, or when every pipeline had run before.
    pub fn first_dispatch_compile(&self) -> Option<Duration> {
        self.inner.first_dispatch_compile()
    }

    /// For a timed stream, the GPU time of the whole submission (the sum of
    /// [`Completed::command_times`]); `None` for an untimed one.
    pub fn gpu_time(&self) -> Option<Duration> {
        self.inner.gpu_time()
    }
}
