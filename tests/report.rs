//! `pisa-conformance-report`: runs the conformance matrix and writes `docs/conformance.md`
//! (the path is relative to the workspace root, or given as the only argument).

use pisa_conformance::matrix::{self, report};
use std::process::ExitCode;

fn main() -> ExitCode {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| format!("{}/../{}", env!("CARGO_MANIFEST_DIR"), report::PATH));
    let rows = matrix::run();
    let text = report::markdown(&rows);
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("pisa-conformance-report: cannot write {path}: {e}");
        return ExitCode::FAILURE;
    }
    let fails = rows
        .iter()
        .filter(|r| matches!(r.status, matrix::Status::Fail(_)))
        .count();
    eprintln!("wrote {path}: {} rows, {fails} failing", rows.len());
    if fails > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
