//! `pisa-vk`: check, translate and run PISA modules on Vulkan devices.
//!
//! Exit codes: 0 success, 1 invalid PISA (diagnostics on stderr), 2 usage error (a mistake
//! in the command line: bad option or value, unreadable file, unknown kernel or symbol,
//! wrong argument count or size, a launch the kernel or device cannot run), 3 device or
//! runtime error (no device, missing features, too much shared memory, timeout, memory,
//! Vulkan, or an error reported by the validation layer under `PISA_VK_VALIDATION=1`), 130
//! interrupted (Ctrl-C stops the running kernel first, spec-notes §92).

mod cli;

use clap::Parser;
use std::process::ExitCode;

/// Set by the first Ctrl-C: the wait in progress cancels its kernel (spec-notes §92).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// SIGINT: the first stops the running kernel (the process then exits 130), a second exits
/// at once. Async-signal-safe: an atomic swap and `_exit`.
#[cfg(unix)]
extern "C" fn on_interrupt(_: libc::c_int) {
    if INTERRUPTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // SAFETY: `_exit` is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs [`on_interrupt`] and makes every wait look at [`INTERRUPTED`].
fn stop_kernels_on_ctrl_c() {
    #[cfg(unix)]
    {
        let handler = on_interrupt as extern "C" fn(libc::c_int);
        // SAFETY: the handler only touches an atomic and calls `_exit`.
        unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
        pisa_vk::cancel_waits_on(&INTERRUPTED);
    }
}

fn main() -> ExitCode {
    // Before anything loads Vulkan, and while the process has one thread (docs/driver-bugs.md).
    pisa_vk::avoid_known_driver_bugs();
    stop_kernels_on_ctrl_c();
    let args = match cli::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprint!("{}", e.message);
            if !e.message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(e.code)
        }
    }
}
