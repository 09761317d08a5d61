//! `pisa-vk`: check, translate and run PISA modules on Vulkan devices.
//!
//! Exit codes: 0 success, 1 invalid PISA (diagnostics on stderr), 2 usage error,
//! 3 device or runtime error.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
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
