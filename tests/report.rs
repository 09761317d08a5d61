//! `pisa-conformance-report`: runs the conformance matrix and writes `docs/conformance.md`
//! (the path is relative to the workspace root, or given as the only argument), keeping its
//! hand-kept record of differential campaigns.

use pisa_conformance::matrix::{self, report};
use std::process::ExitCode;

fn main() -> ExitCode {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| format!("{}/../{}", env!("CARGO_MANIFEST_DIR"), report::PATH));
    let rows = matrix::run();
    let text = report::markdown(&rows);
    // the hand-kept record of campaigns at the end stays as it is
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let (_, campaigns) = report::split(&committed);
    if let Err(e) = std::fs::write(&path, format!("{text}{campaigns}")) {
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
