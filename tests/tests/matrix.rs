//! The conformance matrix: every instruction form × qualifier combination run on the
//! device and on the reference (see `pisa_conformance::matrix`); no combination may fail
//! (besides the documented known failures), and `docs/conformance.md` must be the table the
//! run generates, followed by its hand-kept record of differential campaigns.
//! `PISA_CONFORMANCE_WRITE=1` rewrites the generated part instead of comparing it.

use pisa_conformance::matrix::{self, report, Status};
use std::path::PathBuf;

/// Combinations that fail for a known translator bug, by reason (exact mnemonics, so that
/// a new failure is never hidden). Remove an entry when its bug is fixed.
const KNOWN_FAILURES: &[(&str, &[&str])] = &[];

fn known_failure(mnemonic: &str) -> bool {
    KNOWN_FAILURES
        .iter()
        .any(|(_, list)| list.contains(&mnemonic))
}

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
            Status::Fail(m) if !known_failure(&r.combo.mnemonic()) => {
                Some(format!("{}: {m}", r.combo.mnemonic()))
            }
            _ => None,
        })
        .collect();
    // A known failure that now passes (or no longer exists) must leave the list.
    let stale: Vec<&str> = KNOWN_FAILURES
        .iter()
        .flat_map(|(_, list)| list.iter().copied())
        .filter(|m| {
            !rows
                .iter()
                .any(|r| matches!(r.status, Status::Fail(_)) && r.combo.mnemonic() == *m)
        })
        .collect();
    eprintln!("stale known failures: {stale:?}");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(report::PATH);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let (generated, campaigns) = report::split(&committed);
    if std::env::var_os("PISA_CONFORMANCE_WRITE").is_some() {
        std::fs::write(&path, format!("{text}{campaigns}")).expect("write docs/conformance.md");
    }
    // every chapter is in the matrix (translated at least), and something runs
    for n in 1..=9u8 {
        assert!(
            rows.iter()
                .any(|r| matrix::enumerate::chapter(r.combo.opcode).0 == n
                    && matches!(
                        r.status,
                        Status::Pass | Status::Fail(_) | Status::Unsupported(_)
                    )),
            "nothing of isa-{n} in the matrix"
        );
    }
    assert!(rows.iter().filter(|r| r.status == Status::Pass).count() > 1000);
    assert!(
        failures.is_empty(),
        "{} combinations differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        stale.is_empty(),
        "known failures that no longer fail (remove them from KNOWN_FAILURES): {stale:?}"
    );
    assert!(
        std::env::var_os("PISA_CONFORMANCE_WRITE").is_some() || generated == text,
        "{} is not what the suite measures; regenerate it with PISA_CONFORMANCE_WRITE=1",
        report::PATH
    );
}

/// The rows that compute with floating-point values pass in the float models other than the
/// suite's default (portable): the float64 model (what lavapipe's device model is) and the
/// fused model with its `Fma` computed exactly (docs/spec-notes.md §55).
#[test]
fn float_rows_agree_with_the_reference_in_every_float_model() {
    use pisa_translator::{FloatModel, FloatWidths};
    let models = [
        (
            "float64",
            FloatModel {
                float64: true,
                ..FloatModel::default()
            },
        ),
        (
            "fused-emulated",
            FloatModel {
                fused_fma: FloatWidths::ALL,
                emulated_fma: true,
                ..FloatModel::default()
            },
        ),
    ];
    for (name, model) in models {
        let start = std::time::Instant::now();
        let rows = pisa_conformance::with_float_model(model, || matrix::run_rows(matrix::is_float));
        pisa_conformance::check_validation();
        let passed = rows.iter().filter(|r| r.status == Status::Pass).count();
        eprintln!(
            "{name}: {} float rows, {passed} pass, in {:.1?}",
            rows.len(),
            start.elapsed()
        );
        let failures: Vec<String> = rows
            .iter()
            .filter_map(|r| match &r.status {
                Status::Fail(m) => Some(format!("{}: {m}", r.combo.mnemonic())),
                Status::Unsupported(m) => Some(format!("{} unsupported: {m}", r.combo.mnemonic())),
                _ => None,
            })
            .collect();
        assert!(passed > 500, "{name}: only {passed} float rows pass");
        assert!(
            failures.is_empty(),
            "{name}: {} float rows differ from the reference:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
