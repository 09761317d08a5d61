//! The order of submissions on the device's queue, so that work waiting behind other work is
//! not charged for it (spec-notes §92).
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

use crate::cancel::WordRef;
use crate::shared::DeviceShared;

/// How long work that was asked to stop may take before it is taken to be one that does not
/// stop (then the device is busy with it, spec-notes §62).
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// One submission not yet seen finished.
struct Entry {
    seq: u64,
    word: Option<WordRef>,
    /// When its time is up: set by its first wait, or by the first wait behind it.
    deadline: Option<Instant>,
    /// When it was asked to stop, if it was.
    stopping_since: Option<Instant>,
    /// What it was doing, once it is known not to stop.
    stuck: Option<String>,
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
    fn order(&self) -> MutexGuard<'_, Order> {
        self.order.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `submit` (which submits to the queue) and registers the submission when it
    /// succeeds, under one lock, so that the order is the queue's; returns its place.
    pub(crate) fn order_submit(
        &self,
        word: Option<WordRef>,
        submit: impl FnOnce() -> Result<(), crate::Error>,
    ) -> Result<u64, crate::Error> {
        let mut o = self.order();
        submit()?;
        let seq = o.next;
        o.next += 1;
        o.running.push(Entry {
            seq,
            word,
            deadline: None,
            stopping_since: None,
            stuck: None,
        });
        Ok(seq)
    }

    /// Records the deadline a submission's own wait set.
    pub(crate) fn order_deadline(&self, seq: u64, deadline: Instant) {
        if let Some(e) = self.order().running.iter_mut().find(|e| e.seq == seq) {
            e.deadline = Some(deadline);
        }
    }

    /// Records that a submission was asked to stop.
    pub(crate) fn order_stopping(&self, seq: u64) {
        if let Some(e) = self.order().running.iter_mut().find(|e| e.seq == seq) {
            e.stopping_since.get_or_insert_with(Instant::now);
        }
    }

    /// Forgets a submission seen finished (or stopped between batches); one that did not
    /// stop stays until the busy state is over.
    pub(crate) fn order_finished(&self, seq: u64) {
        self.order()
            .running
            .retain(|e| e.seq != seq || e.stuck.is_some());
    }

    /// Records that a submission did not stop: it is part of the busy state now.
    pub(crate) fn order_stuck(&self, seq: u64, what: String) {
        if let Some(e) = self.order().running.iter_mut().find(|e| e.seq == seq) {
            e.stuck = Some(what);
        }
    }

    /// What blocks submission `seq` now, at the end of its own time. Earlier work that
    /// nobody waits for (no deadline) shares the time of this wait: its time is up now too.
    /// Earlier work past its deadline is asked to stop.
    pub(crate) fn order_blocking(&self, seq: u64) -> Blocking {
        let idle = self.wait_idle(Duration::ZERO).is_ok();
        let mut o = self.order();
        if idle {
            // Work that did not stop has ended since: it blocks nothing any more.
            o.running.retain(|e| e.stuck.is_none());
        }
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

/// The order's mutex, for `DeviceShared`.
pub(crate) type OrderLock = Mutex<Order>;
