//! The device's queues and the order of submissions on each, so that work waiting behind
//! other work is not charged for it (spec-notes §92), and independent work goes where nothing
//! holds it back (spec-notes §116).
//!
//! A context opens up to [`MAX_QUEUES`] queues of its compute family; each submission goes
//! to the queue whose oldest work in flight started last ([`choose_queue`]), so on a device
//! with several queues a long kernel on one does not delay work submitted beside it. Nothing
//! orders two submissions anyway (streams race as CUDA streams do, `crate::stream`), so the
//! choice changes no result. Each queue keeps its own order.
//!
//! On an in-order queue a submission starts only once the ones submitted before it have
//! ended. Its time (the context's timeout) therefore starts when they have ended: a wait that
//! reaches its deadline while earlier work still runs restarts its clock and waits on, looking
//! again at the earliest deadline of that work. Earlier work whose own time is up but which
//! nobody waits for (a stream submitted and not waited) is stopped through its cancel word by
//! the first wait behind it. Work that does not stop ([`Blocking::Stuck`]) turns the wait
//! behind it into [`Error::DeviceBusy`](crate::Error::DeviceBusy).
//!
//! Must not: touch another submission's fence (its owner may be resetting it); everything
//! here is the bookkeeping the owners keep up to date.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ash::vk;

use crate::cancel::WordRef;
use crate::shared::DeviceShared;

/// How long work that was asked to stop may take before it is taken to be one that does not
/// stop (then the device is busy with it, spec-notes §62).
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// The most queues a context opens (NVIDIA's compute-only family has 8, AMD's 4 or 8).
pub const MAX_QUEUES: u32 = 8;

/// One queue of the device and the submissions in flight on it.
pub(crate) struct DeviceQueue {
    /// The queue (`vkQueueSubmit` needs it externally synchronised).
    pub queue: Mutex<vk::Queue>,
    order: Mutex<Order>,
}

impl DeviceQueue {
    /// `queue`, with nothing in flight.
    pub fn new(queue: vk::Queue) -> DeviceQueue {
        DeviceQueue {
            queue: Mutex::new(queue),
            order: Mutex::new(Order::default()),
        }
    }

    /// What [`choose_queue`] weighs at `now`, or `None` when a submission of the queue did
    /// not stop when asked (the queue is held for as long as it runs). A queue whose order
    /// another thread holds (it is submitting there now) counts as the worst free queue
    /// rather than making the choice wait for that submission to be recorded.
    fn load(&self, now: Instant) -> Option<Load> {
        let o = match self.order.try_lock() {
            Ok(o) => o,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Some(Load {
                    oldest: Duration::MAX,
                    count: usize::MAX,
                })
            }
        };
        if o.running.iter().any(|e| e.stuck.is_some()) {
            return None;
        }
        Some(Load {
            oldest: o
                .running
                .first()
                .map_or(Duration::ZERO, |e| now.saturating_duration_since(e.since)),
            count: o.running.len(),
        })
    }

    /// Forgets the submissions that did not stop and have `ended` since: they block
    /// nothing any more.
    fn forget_stuck(&self, ended: impl Fn(&Entry) -> bool) {
        let mut o = self.order.lock().unwrap_or_else(|e| e.into_inner());
        o.running.retain(|e| e.stuck.is_none() || !ended(e));
    }
}

/// What [`choose_queue`] weighs of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Load {
    /// How long its oldest submission in flight has been in flight (zero when none is).
    pub oldest: Duration,
    /// Its submissions in flight.
    pub count: usize,
}

/// A submission's place: its queue (an index into the context's queues) and its number
/// there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub queue: usize,
    seq: u64,
}

/// The queue for a new submission, given each queue's load (`None`: held by work that does
/// not stop): among the free ones, the one whose oldest submission in flight started last
/// (an idle queue first), then the one with the fewest in flight, then the first. Work that
/// has run long is the work likely to run on (a kernel that spins, a long solve), so a queue
/// behind it is the one to avoid, however few submissions it holds; a first rule of the
/// fewest in flight sent every other submission behind such a kernel on a two-queue device.
/// The first queue when every one is held (the submission then waits there, and its wait
/// reports the busy state).
pub(crate) fn choose_queue(loads: &[Option<Load>]) -> usize {
    loads
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.map(|l| (l, i)))
        .min()
        .map_or(0, |(_, i)| i)
}

/// One submission not yet seen finished.
struct Entry {
    seq: u64,
    /// When it was submitted.
    since: Instant,
    word: Option<WordRef>,
    /// When its time is up: set by its first wait, or by the first wait behind it.
    deadline: Option<Instant>,
    /// When it was asked to stop, if it was.
    stopping_since: Option<Instant>,
    /// What it was doing, once it is known not to stop.
    stuck: Option<String>,
    /// The fence that says when such work has ended, if it had one.
    stuck_fence: Option<vk::Fence>,
}

/// The submissions in flight, in submission order.
#[derive(Default)]
pub(crate) struct Order {
    next: u64,
    running: Vec<Entry>,
}

/// What blocks a submission on the queue.
pub(crate) enum Blocking {
    /// Nothing: its own time counts.
    Nothing,
    /// Earlier work that will end, or be stopped, by this time: look again then.
    Until(Instant),
    /// Earlier work that did not stop when asked: what it was doing.
    Stuck(String),
}

impl DeviceShared {
    /// The order of `queue`'s submissions.
    fn order(&self, queue: usize) -> MutexGuard<'_, Order> {
        self.queues[queue]
            .order
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The entry of the submission at `at`, if still in flight.
    fn with_entry(&self, at: Place, f: impl FnOnce(&mut Entry)) {
        if let Some(e) = self
            .order(at.queue)
            .running
            .iter_mut()
            .find(|e| e.seq == at.seq)
        {
            f(e);
        }
    }

    /// Chooses a queue ([`choose_queue`]), runs `submit` (which submits to the queue it is
    /// given) and registers the submission when it succeeds, under that queue's order lock,
    /// so that the order is the queue's; returns its place.
    pub(crate) fn order_submit(
        &self,
        word: Option<WordRef>,
        submit: impl FnOnce(usize) -> Result<(), crate::Error>,
    ) -> Result<Place, crate::Error> {
        let queue = match self.queues.len() {
            1 => 0,
            _ => {
                // The busy state was looked at just before (`check_idle`): once it is over,
                // every submission that did not stop has ended, and its queue is free again.
                let idle = !self.any_busy.load(std::sync::atomic::Ordering::Acquire);
                for q in &self.queues {
                    q.forget_stuck(|e| self.stuck_work_ended(e, idle));
                }
                let now = Instant::now();
                let loads: Vec<Option<Load>> = self.queues.iter().map(|q| q.load(now)).collect();
                choose_queue(&loads)
            }
        };
        let mut o = self.order(queue);
        submit(queue)?;
        let seq = o.next;
        o.next += 1;
        o.running.push(Entry {
            seq,
            since: Instant::now(),
            word,
            deadline: None,
            stopping_since: None,
            stuck: None,
            stuck_fence: None,
        });
        Ok(Place { queue, seq })
    }

    /// Records the deadline a submission's own wait set.
    pub(crate) fn order_deadline(&self, at: Place, deadline: Instant) {
        self.with_entry(at, |e| e.deadline = Some(deadline));
    }

    /// Records that a submission was asked to stop.
    pub(crate) fn order_stopping(&self, at: Place) {
        self.with_entry(at, |e| {
            e.stopping_since.get_or_insert_with(Instant::now);
        });
    }

    /// Forgets a submission seen finished (or stopped between batches); one that did not
    /// stop stays until the busy state is over.
    pub(crate) fn order_finished(&self, at: Place) {
        self.order(at.queue)
            .running
            .retain(|e| e.seq != at.seq || e.stuck.is_some());
    }

    /// Records that a submission did not stop (`fence` signals when it ends, if it has
    /// one): it is part of the busy state now.
    pub(crate) fn order_stuck(&self, at: Place, what: String, fence: Option<vk::Fence>) {
        self.with_entry(at, |e| {
            e.stuck = Some(what);
            e.stuck_fence = fence;
        });
    }

    /// Whether work that did not stop has ended since: the whole device is idle, or its own
    /// fence has signalled (a failed query, a lost device, counts as ended).
    fn stuck_work_ended(&self, e: &Entry, idle: bool) -> bool {
        idle || e.stuck_fence.is_some_and(|f| {
            // SAFETY: the fence belongs to a slot leaked into the busy state, which is never
            // reset or destroyed while the context lives; a status query needs no lock.
            !matches!(unsafe { self.device.get_fence_status(f) }, Ok(false))
        })
    }

    /// What blocks the submission at `at` now, at the end of its own time: the work before
    /// it on its queue. Earlier work that nobody waits for (no deadline) shares the time of
    /// this wait: its time is up now too. Earlier work past its deadline is asked to stop.
    pub(crate) fn order_blocking(&self, at: Place) -> Blocking {
        let seq = at.seq;
        let idle = self.wait_idle(Duration::ZERO).is_ok();
        // Its own fence says when work that did not stop has ended, even while work on
        // another queue keeps the device busy.
        self.queues[at.queue].forget_stuck(|e| self.stuck_work_ended(e, idle));
        let mut o = self.order(at.queue);
        let now = Instant::now();
        let mut until: Option<Instant> = None;
        for e in o.running.iter_mut().filter(|e| e.seq < seq) {
            if let Some(what) = &e.stuck {
                return Blocking::Stuck(what.clone());
            }
            let deadline = *e.deadline.get_or_insert(now);
            let look = if deadline > now {
                deadline
            } else {
                if let Some(w) = e.word {
                    self.cancel(w, crate::cancel::STOPPED_AT_TIMEOUT);
                }
                let since = *e.stopping_since.get_or_insert(now);
                if now >= since + CANCEL_GRACE {
                    return Blocking::Stuck(format!(
                        "earlier work (submission {}) that was asked to stop {:.1} s ago",
                        e.seq,
                        (now - since).as_secs_f64()
                    ));
                }
                since + CANCEL_GRACE
            };
            until = Some(until.map_or(look, |u| u.min(look)));
        }
        match until {
            Some(t) => Blocking::Until(t),
            None => Blocking::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{choose_queue, DeviceQueue, Entry, Load};
    use std::time::{Duration, Instant};

    fn load(oldest_ms: u64, count: usize) -> Option<Load> {
        Some(Load {
            oldest: Duration::from_millis(oldest_ms),
            count,
        })
    }

    #[test]
    fn the_queue_whose_oldest_work_is_youngest_is_chosen() {
        assert_eq!(choose_queue(&[load(0, 0)]), 0);
        // An idle queue first, the first of equals.
        assert_eq!(choose_queue(&[load(5, 1), load(0, 0), load(0, 0)]), 1);
        // Behind a kernel running for 2 s rather than behind a dispatch of 1 ms, even when
        // that one has company: the two-queue case where a count-first rule failed.
        assert_eq!(choose_queue(&[load(2000, 1), load(1, 1)]), 1);
        assert_eq!(choose_queue(&[load(2000, 1), load(1, 2)]), 1);
        // Equal ages: the fewest in flight.
        assert_eq!(choose_queue(&[load(3, 3), load(3, 2), load(3, 4)]), 1);
        // A queue being submitted to by another thread is the worst free one.
        let locked = Some(Load {
            oldest: Duration::MAX,
            count: usize::MAX,
        });
        assert_eq!(choose_queue(&[locked, load(60_000, 9)]), 1);
        assert_eq!(choose_queue(&[locked, None]), 0);
        // A queue held by work that does not stop is left alone, however young.
        assert_eq!(choose_queue(&[None, load(5000, 5)]), 1);
        assert_eq!(choose_queue(&[load(0, 0), None]), 0);
        // Every queue held: the first, where the wait reports the busy state.
        assert_eq!(choose_queue(&[None, None]), 0);
        assert_eq!(choose_queue(&[]), 0);
    }

    #[test]
    fn a_queue_weighs_its_oldest_work_and_is_freed_once_stuck_work_is_forgotten() {
        let q = DeviceQueue::new(ash::vk::Queue::null());
        let t0 = Instant::now();
        let now = t0 + Duration::from_millis(50);
        assert_eq!(q.load(now), load(0, 0));
        let entry = |seq: u64, since: Instant, stuck: bool| Entry {
            seq,
            since,
            word: None,
            deadline: None,
            stopping_since: None,
            stuck: stuck.then(|| "a kernel".to_string()),
            stuck_fence: None,
        };
        q.order.lock().unwrap().running.push(entry(0, t0, false));
        q.order
            .lock()
            .unwrap()
            .running
            .push(entry(1, t0 + Duration::from_millis(40), false));
        assert_eq!(q.load(now), load(50, 2));
        // Being submitted to by another thread: the worst free queue, without waiting.
        {
            let _held = q.order.lock().unwrap();
            assert_eq!(q.load(now).map(|l| l.count), Some(usize::MAX));
        }
        q.order.lock().unwrap().running.push(entry(2, t0, true));
        assert_eq!(q.load(now), None);
        // Still running: kept, the queue stays held.
        q.forget_stuck(|_| false);
        assert_eq!(q.load(now), None);
        q.forget_stuck(|_| true);
        assert_eq!(q.load(now), load(50, 2));
    }
}
