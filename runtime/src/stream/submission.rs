//! [`Submission`]: a submitted stream, waited for or polled, and stopped through its cancel
//! word when its time is up or the user cancels it (spec-notes §91), its time counted from
//! when the work before it on the queue has ended (spec-notes §92, [`crate::order`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ash::vk;

use super::{Op, Progress, ReadId, Timing};
use crate::buffer::BufferLease;
use crate::cancel::{CancelHandle, WordRef, CANCELLED_BY_HOST, STOPPED_AT_TIMEOUT};
use crate::error::Error;
use crate::order::{Blocking, CANCEL_GRACE};
use crate::shared::DeviceShared;
use crate::slots::Slot;

/// A submitted [`Stream`](super::Stream): poll it with [`Submission::is_done`], wait for it
/// with [`Submission::wait`], stop it with [`Submission::cancel`] (or a [`CancelHandle`] from
/// another thread). Dropping it without waiting waits (at most the timeout) and ignores
/// errors. It keeps every buffer and pipeline of its commands alive until then.
#[must_use = "a submission should be waited for to see its errors and results"]
pub struct Submission {
    pub(super) shared: Arc<DeviceShared>,
    pub(super) progress: Mutex<Progress>,
    pub(super) _keep: Vec<BufferLease>,
    pub(super) timing: Timing,
    /// The names of the pipelines it dispatched first (see [`Error::Timeout`]).
    pub(super) compiled: Vec<String>,
    pub(super) timeout_seconds: f64,
    pub(super) times: Option<Vec<Duration>>,
    pub(super) compile_time: Option<Duration>,
    /// Its cancel word (`None` until submitted, or when nothing was).
    pub(super) word: Option<WordRef>,
    /// Its queue and place in that queue's order ([`crate::order`]), once submitted.
    pub(super) place: Option<crate::order::Place>,
    /// Whether a pipeline of its launches reads the cancel word (else a timeout does not
    /// wait for the work to stop: it cannot).
    pub(super) cancellable: bool,
}

impl std::fmt::Debug for Submission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let progress = self.progress();
        f.debug_struct("Submission")
            .field("commands", &progress.ops.as_slice().len())
            .field("in_flight", &progress.slot.is_some())
            .finish()
    }
}

impl Submission {
    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A handle that stops this submission from any thread ([`CancelHandle::cancel`]); one
    /// of a submission that submitted nothing does nothing.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle {
            shared: Arc::clone(&self.shared),
            word: self.word.unwrap_or(WordRef {
                index: 0,
                generation: 0,
            }),
        }
    }

    /// Asks the submission to stop: the work-items of its launches (of kernels translated
    /// cancellable) return at their next loop iteration, and no further batch is submitted.
    /// [`Submission::wait`] then returns [`Error::Cancelled`] (what the work wrote is
    /// incomplete). Returns whether there was anything to stop (`false` once the submission
    /// has been waited for, or when it submitted nothing).
    pub fn cancel(&self) -> bool {
        let stopped = self
            .word
            .is_some_and(|w| self.shared.cancel(w, CANCELLED_BY_HOST));
        if let (true, Some(at)) = (stopped, self.place) {
            self.shared.order_stopping(at);
        }
        stopped
    }

    /// What the host wrote into the submission's cancel word: 0 (nothing),
    /// [`CANCELLED_BY_HOST`] or [`STOPPED_AT_TIMEOUT`] (a value the kernel wrote, the
    /// checker's, counts as 0: the host API reports its violation).
    fn host_stop(&self) -> u32 {
        match self.word.map(|w| self.shared.cancel_value(w)) {
            Some(v @ (CANCELLED_BY_HOST | STOPPED_AT_TIMEOUT)) => v,
            _ => 0,
        }
    }

    /// Whether the device has finished the submission: a look at its fence, never a wait.
    /// When a batch of a launch submitted in batches has finished, the next one is recorded
    /// and submitted here (`false` then), unless the time allowed has run out or it was
    /// cancelled (`true`: nothing more will run; [`Submission::wait`] reports it). A failed
    /// query (a lost device) is [`Error::Vulkan`], and so is a failed submission of a batch.
    pub fn is_done(&self) -> Result<bool, Error> {
        let cancelled = self.host_stop() != 0;
        let mut progress = self.progress();
        let Some(slot) = &progress.slot else {
            return Ok(true);
        };
        // SAFETY: the fence belongs to this device and is in flight or signalled.
        let done = unsafe { self.shared.device.get_fence_status(slot.fence) };
        match done {
            Ok(true) if !progress.recorded() && cancelled => Ok(true),
            Ok(true) if !progress.recorded() => {
                let slot = progress.slot.take().expect("looked at above");
                let timeout = Duration::from_secs_f64(self.timeout_seconds);
                progress.next_batch(&self.shared, slot, self.timing, timeout)?;
                Ok(progress.expired)
            }
            Ok(done) => Ok(done),
            Err(result) => Err(Error::Vulkan {
                call: "vkGetFenceStatus",
                result,
            }),
        }
    }

    /// Waits at most `limit` for the submission to be ready for [`Submission::wait`]: `true`
    /// once it has finished (or its time is up, or it was cancelled, so that `wait` returns
    /// within [`CANCEL_GRACE`]); `false` when `limit` passed first. The time allowed starts
    /// at the first wait of either kind. For waiting in slices, e.g. to look for Ctrl-C in
    /// between. Errors: those of [`Submission::is_done`].
    pub fn wait_timeout(&self, limit: Duration) -> Result<bool, Error> {
        let timeout = Duration::from_secs_f64(self.timeout_seconds);
        let stopping = self.host_stop() != 0;
        let mut progress = self.progress();
        let deadline = *progress
            .deadline
            .get_or_insert_with(|| Instant::now() + timeout);
        if let Some(at) = self.place {
            self.shared.order_deadline(at, deadline);
        }
        let Some(slot) = progress.slot.take() else {
            return Ok(true);
        };
        let now = Instant::now();
        if now >= deadline || stopping {
            progress.slot = Some(slot);
            return Ok(true);
        }
        let waited = wait_fence(&self.shared, &slot, limit.min(deadline - now));
        match waited {
            Ok(true) if !progress.recorded() => {
                progress.next_batch(&self.shared, slot, self.timing, timeout)?;
                Ok(progress.expired)
            }
            Ok(done) => {
                progress.slot = Some(slot);
                Ok(done || Instant::now() >= deadline)
            }
            Err(e) => {
                progress.slot = Some(slot);
                Err(e)
            }
        }
    }

    /// Waits for the submission, at most the context's timeout (`PISA_VK_TIMEOUT`) for all
    /// its batches together, counted from when the work submitted before it has ended, and
    /// returns what it produced: the bytes of its reads and, for a timed stream, the GPU time
    /// of each command. At the timeout the work is asked to stop (its cancel word) and
    /// waited for [`CANCEL_GRACE`] more: [`Error::Timeout`] says whether it stopped (then
    /// the context is usable at once). Work that does not stop (a kernel translated without
    /// cancel checks) becomes the device's busy state: until it ends, calls that need the
    /// device return [`Error::DeviceBusy`] (see [`Context`](crate::Context)). A cancelled
    /// submission returns [`Error::Cancelled`].
    pub fn wait(mut self) -> Result<Completion, Error> {
        self.finish()?;
        let mut reads = Vec::new();
        for op in self.progress().ops.as_slice() {
            if let Op::Read { staging, size, .. } = op {
                let mut bytes = vec![0u8; *size as usize];
                staging.read(0, &mut bytes)?;
                reads.push(bytes);
            }
        }
        Ok(Completion {
            times: self.times.take(),
            compile: self.compile_time,
            reads,
        })
    }

    /// Waits for every batch (bounded by the timeout, from the first wait on and from the
    /// end of the work before it), submitting each after the one before; on success reads
    /// the timestamps and gives the slot back. Does nothing when nothing is in flight.
    fn finish(&mut self) -> Result<(), Error> {
        let timeout = Duration::from_secs_f64(self.timeout_seconds);
        let at = self.place;
        let shared = Arc::clone(&self.shared);
        let mut deadline = {
            let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
            *progress
                .deadline
                .get_or_insert_with(|| Instant::now() + timeout)
        };
        if let Some(at) = at {
            shared.order_deadline(at, deadline);
        }
        let mut wake = deadline;
        loop {
            let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
            let Some(slot) = progress.slot.take() else {
                return match progress.expired {
                    true => Err(self.timeout(false, false)),
                    false => Ok(()),
                };
            };
            let interrupt = crate::cancel::interrupted();
            let until = match interrupt {
                Some(_) => wake.min(Instant::now() + crate::cancel::INTERRUPT_SLICE),
                None => wake,
            };
            let left = until.saturating_duration_since(Instant::now());
            let waited = wait_fence(&shared, &slot, left);
            let stop = match self.word {
                Some(w) => match shared.cancel_value(w) {
                    v @ (CANCELLED_BY_HOST | STOPPED_AT_TIMEOUT) => v,
                    _ => 0,
                },
                None => 0,
            };
            match waited {
                Ok(true) if stop == CANCELLED_BY_HOST => {
                    shared.give_back_slot(slot);
                    return Err(self.cancelled_error());
                }
                Ok(true) if stop == STOPPED_AT_TIMEOUT => {
                    // Stopped by a wait behind it, its time being up.
                    shared.give_back_slot(slot);
                    return Err(self.timeout(true, true));
                }
                Ok(true) if !progress.recorded() => {
                    progress.next_batch(&shared, slot, self.timing, timeout)?;
                }
                Ok(true) => return self.finished(slot),
                Ok(false) => {
                    progress.slot = Some(slot);
                    if interrupt == Some(true) && stop == 0 {
                        if let Some(w) = self.word {
                            shared.cancel(w, CANCELLED_BY_HOST);
                        }
                        continue;
                    }
                    if Instant::now() < wake {
                        continue; // a slice ended before the deadline
                    }
                    let blocking = match at {
                        Some(at) => shared.order_blocking(at),
                        None => Blocking::Nothing,
                    };
                    match blocking {
                        Blocking::Until(t) => {
                            // Behind earlier work: this one has not started; its time
                            // starts again from now.
                            deadline = deadline.max(Instant::now() + timeout);
                            progress.deadline = Some(deadline);
                            wake = t.min(deadline);
                        }
                        Blocking::Nothing if Instant::now() < deadline => wake = deadline,
                        Blocking::Nothing => return self.stop_at_timeout(),
                        Blocking::Stuck(running) => return Err(self.stuck_behind(running)),
                    }
                    if let Some(at) = at {
                        shared.order_deadline(at, deadline);
                    }
                }
                Err(e) => {
                    progress.slot = Some(slot);
                    return Err(e);
                }
            }
        }
    }

    /// At the deadline: asks the work to stop and waits [`CANCEL_GRACE`] for it; a timeout
    /// that stopped it, or one that leaves it running as the device's busy state.
    fn stop_at_timeout(&mut self) -> Result<(), Error> {
        if let Some(w) = self.word {
            self.shared.cancel(w, STOPPED_AT_TIMEOUT);
        }
        if let Some(at) = self.place {
            self.shared.order_stopping(at);
        }
        let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
        let Some(slot) = progress.slot.take() else {
            return Err(self.timeout(false, false));
        };
        let grace = match self.cancellable {
            true => CANCEL_GRACE,
            false => Duration::ZERO,
        };
        match wait_fence(&self.shared, &slot, grace) {
            Ok(true) => {
                self.shared.give_back_slot(slot);
                Err(self.timeout(true, true))
            }
            Ok(false) => {
                // The slot is leaked: its fence is the busy state from now on.
                let what = progress.describe();
                self.shared.set_busy(slot.fence, what.clone());
                if let Some(at) = self.place {
                    self.shared.order_stuck(at, what, Some(slot.fence));
                }
                Err(self.timeout(true, false))
            }
            Err(e) => {
                progress.slot = Some(slot);
                Err(e)
            }
        }
    }

    /// Behind earlier work that did not stop: this submission cannot start until it ends,
    /// and joins the busy state.
    fn stuck_behind(&mut self, running: String) -> Error {
        let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
        let what = progress.describe();
        let fence = progress.slot.take().map(|slot| {
            self.shared.set_busy(slot.fence, what.clone());
            slot.fence
        });
        if let Some(at) = self.place {
            self.shared.order_stuck(at, what.clone(), fence);
        }
        Error::DeviceBusy {
            what: format!("finish {what}"),
            running,
        }
    }

    /// After the last batch has finished: its timestamps read, the slot given back.
    fn finished(&mut self, slot: Slot) -> Result<(), Error> {
        let device = &self.shared.device;
        let queries = self.timing.queries;
        let times = match slot.existing_timer() {
            Some(t) if queries > 0 => Some(t.intervals(device, queries)),
            _ => None,
        };
        self.shared.give_back_slot(slot);
        if let Some(mut times) = times.transpose()? {
            if self.timing.warm && !times.is_empty() {
                self.compile_time = Some(times.remove(0));
            }
            self.times = Some(times);
        }
        Ok(())
    }

    /// The [`Error::Cancelled`] of this submission.
    fn cancelled_error(&mut self) -> Error {
        let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
        Error::Cancelled {
            what: progress.describe(),
        }
    }

    /// The [`Error::Timeout`] of this submission (`running`: its work was running at the
    /// deadline; `stopped`: it stopped when asked).
    fn timeout(&mut self, running: bool, stopped: bool) -> Error {
        let progress = self.progress.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut what = progress.describe();
        if !running {
            what.push_str(", stopped between two batches");
        }
        Error::Timeout {
            seconds: self.timeout_seconds,
            what,
            compiled: self.compiled.clone(),
            checked: false,
            stopped: stopped || !running,
        }
    }
}

/// Waits up to `left` for the slot's fence: `true` once signalled.
fn wait_fence(shared: &DeviceShared, slot: &Slot, left: Duration) -> Result<bool, Error> {
    let ns = u64::try_from(left.as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: the fence belongs to this device.
    match unsafe { shared.device.wait_for_fences(&[slot.fence], true, ns) } {
        Ok(()) => Ok(true),
        Err(vk::Result::TIMEOUT) => Ok(false),
        Err(result) => Err(Error::Vulkan {
            call: "vkWaitForFences",
            result,
        }),
    }
}

impl Drop for Submission {
    fn drop(&mut self) {
        let _ = self.finish();
        if let Some(at) = self.place {
            self.shared.order_finished(at);
        }
    }
}

/// What a finished [`Submission`] produced.
#[derive(Clone, Debug, Default)]
pub struct Completion {
    times: Option<Vec<Duration>>,
    compile: Option<Duration>,
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
    /// (a launch of several parts is one command); `None` for an untimed one. A launch's
    /// time does not include compiling its pipelines ([`Completion::first_dispatch_compile`]).
    pub fn command_times(&self) -> Option<&[Duration]> {
        self.times.as_deref()
    }

    /// For a timed stream, the GPU time from before its first command started to after its
    /// last one finished.
    pub fn gpu_time(&self) -> Option<Duration> {
        self.times.as_ref().map(|t| t.iter().sum())
    }

    /// For a timed stream that dispatched pipelines never dispatched before, the GPU time of
    /// their first dispatch without work-groups, before the first command: what a driver
    /// that compiles a pipeline at its first dispatch (lavapipe) spends compiling them, kept
    /// out of [`Completion::command_times`]. `None` for an untimed stream or one whose
    /// pipelines had all run before.
    pub fn first_dispatch_compile(&self) -> Option<Duration> {
        self.compile
    }
}
