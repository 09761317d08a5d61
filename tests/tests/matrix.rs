//! The conformance matrix: every instruction form × qualifier combination run on the
//! device and on the reference (see `pisa_conformance::matrix`); no combination may fail
//! (besides the documented known failures), and `docs/conformance.md` must be the table the
//! run generates. `PISA_CONFORMANCE_WRITE=1` rewrites the file instead of comparing it.

use pisa_conformance::matrix::{self, report, Status};
use std::path::PathBuf;

/// Combinations that fail on lavapipe for a documented reason (mnemonics with qualifiers).
const KNOWN_FAILURES: &[&str] = &[];

#[test]
fn every_form_and_qualifier_agrees_with_the_reference_and_the_table_is_current() {
    let start = std::time::Instant::now();
    let rows = matrix::run();
    pisa_conformance::check_validation();
    let text = report::markdown(&rows);
    eprintln!("matrix: {} rows in {:.1?}", rows.len(), start.elapsed());

    let failures: Vec<String> = rows
        .iter()
        .filter_map(|r| match &r.status {
            Status::Fail(m) if !KNOWN_FAILURES.contains(&r.combo.mnemonic().as_str()) => {
                Some(format!("{}: {m}", r.combo.mnemonic()))
            }
            _ => None,
        })
        .collect();
    // the matrix must have measured something in every chapter
    for n in 1..=9u8 {
        assert!(
            rows.iter().any(|r| matrix::enumerate::chapter(r.combo.opcode).0 == n
                && r.status == Status::Pass),
            "no passing combination in isa-{n}"
        );
    }

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(report::PATH);
    if std::env::var_os("PISA_CONFORMANCE_WRITE").is_some() {
        std::fs::write(&path, &text).expect("write docs/conformance.md");
    }
    assert!(
        failures.is_empty(),
        "{} combinations differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not what the suite measures; regenerate it with PISA_CONFORMANCE_WRITE=1",
        report::PATH
    );
}
