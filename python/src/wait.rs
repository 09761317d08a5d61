//! Waiting for device work with the GIL released, in slices, so that Ctrl-C is seen while a
//! kernel runs: between two slices the signal handlers run (`PyErr_CheckSignals`); when one
//! raises (`KeyboardInterrupt`), the submission is cancelled (its kernels return at their next
//! loop iteration, spec-notes §91), waited for until it has stopped, and the handler's
//! exception is raised.

use pisa_vk::{Completed, Submission};
use pyo3::prelude::*;
use std::time::Duration;

/// How long one slice of a wait lasts: how late Ctrl-C may be seen.
const SLICE: Duration = Duration::from_millis(50);

/// Waits for `s` (at most `PISA_VK_TIMEOUT` in all), running Python's signal handlers every
/// [`SLICE`]. `Ok` holds the wait's own result; `Err` a signal handler's exception, raised
/// once the cancelled work has stopped.
pub(crate) fn wait_interruptible(
    py: Python<'_>,
    s: Submission<'_>,
) -> PyResult<pisa_vk::Result<Completed>> {
    loop {
        match py.detach(|| s.wait_timeout(SLICE)) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return Ok(Err(e)),
        }
        if let Err(interrupt) = py.check_signals() {
            s.cancel();
            let _ = py.detach(|| s.wait());
            return Err(interrupt);
        }
    }
    Ok(py.detach(|| s.wait()))
}
