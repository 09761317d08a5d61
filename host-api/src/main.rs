//! `pisa-vk`: check, translate and run PISA modules on Vulkan devices.
//!
//! Exit codes: 0 success, 1 invalid PISA (diagnostics on stderr), 2 usage error (a mistake
//! in the command line: bad option or value, unreadable file, unknown kernel or symbol,
//! wrong argument count or size, a launch the kernel or device cannot run), 3 device or
//! runtime error (no device, missing features, too much shared memory, timeout, memory,
//! Vulkan, or an error reported by the validation layer under `PISA_VK_VALIDATION=1`).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before anything loads Vulkan, and while the process has one thread (docs/driver-bugs.md).
    pisa_vk::avoid_known_driver_bugs();
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
