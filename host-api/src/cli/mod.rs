//! The command line: one subcommand per job (clap derive).

mod check;
mod devices;
mod output;
mod run;
mod translate;

use clap::{Parser, Subcommand};
use std::sync::Arc;

/// Check, translate and run Intel Portable ISA (PISA v0.1) modules on Vulkan.
#[derive(Parser, Debug)]
#[command(name = "pisa-vk", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and validate modules, then link them; print nothing and exit 0 when all are valid.
    Check(check::Args),
    /// Translate a module, or several linked into one program, to SPIR-V (binary, disassembly,
    /// or reflection JSON).
    Translate(translate::Args),
    /// Run one kernel of a module (or of several linked into one program) and print its
    /// buffers and `.host_access` globals.
    Run(run::Args),
    /// List Vulkan devices with the features pisa-vk uses.
    Devices(devices::Args),
}

/// A failure with its exit code.
pub struct Failure {
    /// 1 invalid PISA, 2 usage (a mistake in the command line: unknown kernel or symbol,
    /// wrong arguments, an impossible launch; [`pisa_vk::Error::is_usage`]), 3 device or
    /// runtime (including validation-layer errors).
    pub code: u8,
    /// What to print on stderr.
    pub message: String,
}

impl Failure {
    /// A usage error (exit 2).
    pub fn usage(m: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: format!("error: {}", m.into()),
        }
    }

    /// A runtime or device error (exit 3).
    pub fn runtime(m: impl std::fmt::Display) -> Failure {
        Failure {
            code: 3,
            message: format!("error: {m}"),
        }
    }
}

impl From<pisa_vk::Error> for Failure {
    fn from(e: pisa_vk::Error) -> Failure {
        match e {
            pisa_vk::Error::Invalid(d) => invalid(d),
            pisa_vk::Error::MemoryViolation(v) => Failure {
                code: 3,
                message: v.render(),
            },
            pisa_vk::Error::Runtime(e @ pisa_vk::RuntimeError::Cancelled { .. }) => Failure {
                code: 130,
                message: format!("interrupted: {e}"),
            },
            e if e.is_usage() => Failure::usage(e.to_string()),
            other => Failure::runtime(other),
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Translate(a) => translate::run(a),
        Command::Run(a) => run::run(a),
        Command::Devices(a) => devices::run(a),
    }
}

/// Reads the source files of a program (`-` is standard input, at most once).
pub fn read_sources(paths: &[String]) -> Result<Vec<Arc<pisa_translator::SourceFile>>, Failure> {
    if paths.iter().filter(|p| *p == "-").count() > 1 {
        return Err(Failure::usage(
            "standard input (`-`) can be given only once",
        ));
    }
    paths.iter().map(|p| read_source(p)).collect()
}

/// The failure of an invalid (or unlinkable) program: its diagnostics, exit 1.
pub fn invalid(d: pisa_translator::Diagnostics) -> Failure {
    Failure {
        code: 1,
        message: d.render(),
    }
}

/// Reads a source file (`-` is standard input).
pub fn read_source(path: &str) -> Result<Arc<pisa_translator::SourceFile>, Failure> {
    let (name, text) = if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
        ("<stdin>".to_string(), s)
    } else {
        let bytes =
            std::fs::read(path).map_err(|e| Failure::usage(format!("cannot read {path}: {e}")))?;
        (
            path.to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    };
    Ok(Arc::new(pisa_translator::SourceFile::new(name, text)))
}
