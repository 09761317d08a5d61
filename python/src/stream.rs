//! `Stream` and `Submission`: the host API's streams (`pisa_vk::Stream`): launches, copies,
//! fills and host transfers recorded into one submission, submitted without waiting, then
//! polled or waited for (with the GIL released).
//!
//! The host API's stream borrows the context, the modules and the buffers it records until
//! the submission is waited for or dropped. A Python object has no Rust lifetime, so these
//! objects hold strong references (`keep`) to every Python object whose Rust value they
//! borrow, and drop them only after the host-API stream or submission (fields drop in
//! declaration order). Offsets and lengths here are in bytes: the Python package turns
//! element ranges of typed buffers into byte ranges.

use crate::buffer::Buffer;
use crate::bytes::Bytes;
use crate::errors::{stream_error, to_py};
use crate::module::{launch, Module};
use pisa_vk::{Arg, Completed, Pending};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::types::PyBytes;
use pyo3::PyClass;
use std::sync::{Mutex, MutexGuard};

/// A borrow of the Rust value of a frozen Python object, for as long as a stream needs it.
///
/// # Safety
/// The caller keeps a strong reference to `obj` (in `keep`) until every use of the borrow
/// has ended: the value of a frozen pyclass neither moves nor changes while the object lives.
unsafe fn pinned<T: PyClass<Frozen = True> + Sync>(obj: &Py<T>) -> &'static T {
    &*(obj.get() as *const T)
}

/// Locks `m`; a poisoned lock (a panic while recording) is an error, not a second panic.
fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("a stream was poisoned by an earlier panic"))
}

/// What a stream has recorded. `stream` is declared first: it drops before `keep`.
struct Recording {
    stream: pisa_vk::Stream<'static>,
    reads: Vec<Pending<u8>>,
    keep: Vec<Py<PyAny>>,
}

/// Commands recorded for one submission (`Context.stream()`); `None` once submitted.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct Stream {
    recording: Mutex<Option<Recording>>,
}

impl Stream {
    /// A new stream of `ctx` (kept alive by the stream), timed or not.
    pub fn new(ctx: Py<crate::context::Context>, timed: bool) -> PyResult<Stream> {
        // SAFETY: `ctx` goes into `keep`, which drops after the stream.
        let mut stream = unsafe { pinned(&ctx) }.inner.stream();
        if timed {
            stream.timed().map_err(to_py)?;
        }
        Ok(Stream {
            recording: Mutex::new(Some(Recording {
                stream,
                reads: Vec::new(),
                keep: vec![ctx.into_any()],
            })),
        })
    }

    /// Runs `record` on the recording (an error once submitted), keeping `buffers` alive.
    fn record<R>(
        &self,
        buffers: &[&Py<Buffer>],
        record: impl FnOnce(&mut Recording) -> pisa_vk::Result<R>,
    ) -> PyResult<R> {
        let mut guard = lock(&self.recording)?;
        let r = guard
            .as_mut()
            .ok_or_else(|| stream_error("the stream was submitted already"))?;
        let out = record(r).map_err(to_py)?;
        Python::attach(|py| {
            r.keep
                .extend(buffers.iter().map(|b| b.clone_ref(py).into_any()))
        });
        Ok(out)
    }
}

#[pymethods]
impl Stream {
    /// How many commands are recorded (0 once submitted).
    fn __len__(&self) -> PyResult<usize> {
        Ok(lock(&self.recording)?
            .as_ref()
            .map_or(0, |r| r.stream.len()))
    }

    /// Records a launch of `kernel` of `module` over `global` work-items in work-groups of
    /// `local`, from `offset`, with per `.param` its `bytes` or a native `Buffer` (its address;
    /// one of another context is refused). The objects in `keep` (buffers
    /// and modules whose addresses are among the arguments) stay alive until the submission
    /// has finished.
    #[allow(clippy::too_many_arguments)] // one per part of a launch, as Module.dispatch
    fn launch(
        &self,
        module: Py<Module>,
        kernel: &str,
        global: Vec<u64>,
        local: Vec<u64>,
        offset: [u64; 3],
        args: Vec<Bound<'_, PyAny>>,
        keep: Vec<Py<PyAny>>,
    ) -> PyResult<()> {
        let launch = launch(&global, &local, offset)?;
        let args: Vec<Arg> = crate::buffer::kernel_args(&args)?;
        // SAFETY: `module` goes into `keep` (below, on success; on failure nothing recorded
        // borrows it).
        let m = unsafe { pinned(&module) };
        self.record(&[], |r| {
            r.stream.launch(&m.inner, kernel, &launch, args)?;
            r.keep.push(module.into_any());
            r.keep.extend(keep);
            Ok(())
        })
    }

    /// Records a write of the bytes of `data` into `buf` from byte `start`.
    fn write(&self, buf: Py<Buffer>, start: usize, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = Bytes::get(data, false)?;
        // SAFETY: `record` keeps `buf`.
        let b = unsafe { pinned(&buf) };
        self.record(&[&buf], |r| {
            r.stream
                .write_at(&b.inner, start, data.as_slice())
                .map(drop)
        })
    }

    /// Records a read of the bytes `start..end` of `buf`; returns its number, the index for
    /// `Submission.read`.
    fn read(&self, buf: Py<Buffer>, start: usize, end: usize) -> PyResult<usize> {
        // SAFETY: `record` keeps `buf`.
        let b = unsafe { pinned(&buf) };
        self.record(&[&buf], |r| {
            let pending = r.stream.read_range(&b.inner, start..end)?;
            r.reads.push(pending);
            Ok(r.reads.len() - 1)
        })
    }

    /// Records a device copy of the bytes `start..end` of `src` into `dst` from byte
    /// `dst_start`.
    fn copy(
        &self,
        src: Py<Buffer>,
        start: usize,
        end: usize,
        dst: Py<Buffer>,
        dst_start: usize,
    ) -> PyResult<()> {
        // SAFETY: `record` keeps both.
        let (s, d) = unsafe { (pinned(&src), pinned(&dst)) };
        self.record(&[&src, &dst], |r| {
            r.stream
                .copy_range(&s.inner, start..end, &d.inner, dst_start)
                .map(drop)
        })
    }

    /// Records setting the bytes `start..end` of `buf` to repetitions of `value` (whose
    /// length divides `end - start`): a device fill when `value` is one repeated byte, else
    /// a write of the repeated value.
    fn fill(&self, buf: Py<Buffer>, start: usize, end: usize, value: Vec<u8>) -> PyResult<()> {
        if value.is_empty() || end.saturating_sub(start) % value.len() != 0 {
            return Err(PyValueError::new_err(
                "the fill value's size must divide the filled range",
            ));
        }
        // SAFETY: `record` keeps `buf`.
        let b = unsafe { pinned(&buf) };
        self.record(&[&buf], |r| {
            if value.iter().all(|&x| x == value[0]) {
                r.stream.fill_range(&b.inner, start..end, value[0])?;
            } else {
                let data = value.repeat(end.saturating_sub(start) / value.len());
                r.stream.write_at(&b.inner, start, &data)?;
            }
            Ok(())
        })
    }

    /// Submits the recorded commands without waiting (a stream submits once).
    fn submit(&self) -> PyResult<Submission> {
        let r = lock(&self.recording)?
            .take()
            .ok_or_else(|| stream_error("the stream was submitted already"))?;
        let Recording {
            stream,
            reads,
            keep,
        } = r;
        let state = match stream.submit() {
            Ok(s) => State::Running(s),
            // `keep` outlives nothing that borrows it: the stream was consumed.
            Err(e) => return Err(to_py(e)),
        };
        Ok(Submission {
            state: Mutex::new(state),
            reads,
            keep,
        })
    }
}

/// Where a submission stands.
enum State {
    /// Submitted; nobody waits for it yet.
    Running(pisa_vk::Submission<'static>),
    /// A thread waits for it (with the GIL released).
    Waiting,
    /// Finished: its reads, in recording order, and its GPU times for a timed stream.
    Finished(Vec<Vec<u8>>, Option<Vec<f64>>),
    /// Failed: the error that the first `wait` raised.
    Failed(PyErr),
}

/// A submitted stream: poll it (`done`) or wait for it (`wait`); then its reads and times.
/// `state` is declared first: a running submission drops (and waits) before `keep`.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct Submission {
    state: Mutex<State>,
    reads: Vec<Pending<u8>>,
    #[allow(dead_code)] // held for its drop: see the module documentation
    keep: Vec<Py<PyAny>>,
}

impl Submission {
    /// The results once finished: raises the submission's error, or says it was not
    /// waited for.
    fn finished<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&[Vec<u8>], Option<&[f64]>) -> R,
    ) -> PyResult<R> {
        match &*lock(&self.state)? {
            State::Finished(reads, times) => Ok(f(reads, times.as_deref())),
            State::Failed(e) => Err(e.clone_ref(py)),
            _ => Err(stream_error(
                "the submission has not been waited for (call wait() first)",
            )),
        }
    }
}

#[pymethods]
impl Submission {
    /// Whether the device has finished it (a look, never a wait; true once waited for).
    fn done(&self) -> PyResult<bool> {
        match &*lock(&self.state)? {
            State::Running(s) => s.is_done().map_err(to_py),
            State::Waiting => Ok(false),
            State::Finished(..) | State::Failed(_) => Ok(true),
        }
    }

    /// Waits for it with the GIL released (at most `PISA_VK_TIMEOUT` seconds); raises its
    /// error, again on every later call. Returns at once when finished before. Ctrl-C
    /// (`KeyboardInterrupt`) meanwhile cancels it (`crate::wait`): the interrupt is raised
    /// once the work has stopped, and later calls raise the cancellation.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        let running = {
            let mut state = lock(&self.state)?;
            match std::mem::replace(&mut *state, State::Waiting) {
                State::Running(s) => s,
                other => {
                    let waiting = matches!(other, State::Waiting);
                    *state = other;
                    if waiting {
                        return Err(stream_error("another thread waits for this submission"));
                    }
                    drop(state);
                    return self.finished(py, |_, _| ());
                }
            }
        };
        let result = match crate::wait::wait_interruptible(py, running) {
            Ok(result) => result,
            Err(interrupt) => {
                let cancelled = stream_error("the submission was cancelled by an interrupt");
                *lock(&self.state)? = State::Failed(cancelled);
                return Err(interrupt);
            }
        };
        let next = match result.and_then(|done| self.collect(&done)) {
            Ok(state) => state,
            Err(e) => State::Failed(to_py(e)),
        };
        *lock(&self.state)? = next;
        self.finished(py, |_, _| ())
    }

    /// The bytes of read number `index` (of `Stream.read`).
    fn read<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyBytes>> {
        self.finished(py, |reads, _| reads.get(index).map(|r| PyBytes::new(py, r)))?
            .ok_or_else(|| PyValueError::new_err(format!("no read number {index}")))
    }

    /// For a timed stream, the GPU time in seconds of each command in recording order;
    /// `None` for an untimed one.
    fn command_times(&self, py: Python<'_>) -> PyResult<Option<Vec<f64>>> {
        self.finished(py, |_, times| times.map(<[f64]>::to_vec))
    }
}

impl Submission {
    /// The finished state of `done`: every read's bytes and the command times.
    fn collect(&self, done: &Completed) -> pisa_vk::Result<State> {
        let reads = self
            .reads
            .iter()
            .map(|p| done.get(p))
            .collect::<pisa_vk::Result<Vec<_>>>()?;
        let times = done
            .command_times()
            .map(|t| t.iter().map(|d| d.as_secs_f64()).collect());
        Ok(State::Finished(reads, times))
    }
}
