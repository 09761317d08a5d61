//! pisa-vk's `tracing` spans and events as records for Python's `logging` (logger `pisa_vk`).
//!
//! The translator and the runtime open DEBUG spans (`check`, `link`, `translate`,
//! `create_pipeline`, `submit`); this module is the process's global `tracing` subscriber
//! (installed at import unless the process already has one) and turns each span, when it
//! closes, into a line `check file=saxpy.pisa: 0.132 ms`, and each event into its
//! message and fields. Nothing is recorded below the level Python last told it
//! ([`set_level`]; the package passes `logging.getLogger("pisa_vk").getEffectiveLevel()` before
//! its calls into the device), so with logging off a span costs one atomic load.
//!
//! Records are queued, not logged at once: spans close inside calls that released the GIL,
//! possibly while the runtime holds a lock that a thread holding the GIL waits for, so
//! taking the GIL there could deadlock. The package drains the queue ([`take`]) into
//! `logging` when a call returns to Python. The queue keeps at most [`QUEUE_LIMIT`] records
//! (older ones are dropped and counted).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use pyo3::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The most records kept between two drains.
pub const QUEUE_LIMIT: usize = 10_000;

/// The least severe level recorded, as a Python `logging` level number; above CRITICAL
/// (the initial value) records nothing.
static PY_LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);

/// Records waiting for Python, and how many were dropped for the limit.
static QUEUE: Mutex<(VecDeque<(u8, String)>, u64)> = Mutex::new((VecDeque::new(), 0));

/// Python's level number of a `tracing` level.
fn py_level(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

fn push(level: u8, line: String) {
    let mut q = QUEUE.lock().unwrap_or_else(|p| p.into_inner());
    if q.0.len() >= QUEUE_LIMIT {
        q.0.pop_front();
        q.1 += 1;
    }
    q.0.push_back((level, line));
}

/// Writes a span's or event's fields as ` name=value` (the `message` field bare, first).
#[derive(Default)]
struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, " {value:?}{rest}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, " {value}{rest}");
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

/// An open span: what its line says, when it opened, how many handles to it exist.
struct Open {
    name: &'static str,
    level: u8,
    fields: String,
    start: Instant,
    refs: usize,
}

/// The subscriber: open spans by id.
struct PyLog {
    next: AtomicU64,
    spans: Mutex<HashMap<u64, Open>>,
}

impl Subscriber for PyLog {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // The level changes at run time: ask `enabled` every time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        py_level(metadata.level()) >= PY_LEVEL.load(Ordering::Relaxed)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut fields = Fields::default();
        span.record(&mut fields);
        let open = Open {
            name: span.metadata().name(),
            level: py_level(span.metadata().level()),
            fields: fields.0,
            start: Instant::now(),
            refs: 1,
        };
        self.spans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, open);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(open) = spans.get_mut(&span.into_u64()) {
            let mut fields = Fields(std::mem::take(&mut open.fields));
            values.record(&mut fields);
            open.fields = fields.0;
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        push(
            py_level(meta.level()),
            format!("{}:{}", meta.target(), fields.0),
        );
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}

    fn clone_span(&self, id: &Id) -> Id {
        let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(open) = spans.get_mut(&id.into_u64()) {
            open.refs += 1;
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        let closed = {
            let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
            match spans.get_mut(&id.into_u64()) {
                Some(open) if open.refs > 1 => {
                    open.refs -= 1;
                    None
                }
                Some(_) => spans.remove(&id.into_u64()),
                None => None,
            }
        };
        match closed {
            Some(open) => {
                let ms = open.start.elapsed().as_secs_f64() * 1e3;
                push(
                    open.level,
                    format!("{}{}: {ms:.3} ms", open.name, open.fields),
                );
                true
            }
            None => false,
        }
    }
}

/// Makes this module the process's `tracing` subscriber, unless one is set already (then
/// nothing reaches Python's logging from here).
pub fn install() {
    let _ = tracing::subscriber::set_global_default(PyLog {
        next: AtomicU64::new(1),
        spans: Mutex::new(HashMap::new()),
    });
}

/// Records spans and events of Python level `level` and above from now on (a level above
/// 50, CRITICAL, records nothing).
#[pyfunction]
pub fn set_level(level: i64) {
    PY_LEVEL.store(level.clamp(1, 255) as u8, Ordering::Relaxed);
}

/// Takes the queued records: `([(level, message), ...], dropped)`, `dropped` being how many
/// were left out since the last call because the queue was full.
#[pyfunction]
pub fn take() -> (Vec<(u8, String)>, u64) {
    let mut q = QUEUE.lock().unwrap_or_else(|p| p.into_inner());
    let dropped = std::mem::take(&mut q.1);
    (q.0.drain(..).collect(), dropped)
}
