//! The conformance matrix: every instruction form × qualifier combination run on the
//! device and on the reference (see `pisa_conformance::matrix`); no combination may fail
//! (besides the documented known failures), and `docs/conformance.md` must be the table the
//! run generates. `PISA_CONFORMANCE_WRITE=1` rewrites the file instead of comparing it.

use pisa_conformance::matrix::{self, report, Status};
use std::path::PathBuf;

/// Combinations that fail for a known translator bug, by reason (exact mnemonics, so that
/// a new failure is never hidden). Remove an entry when its bug is fixed.
const KNOWN_FAILURES: &[(&str, &[&str])] = &[
    (
        "a `.v32.32b` register indexed dynamically: its Function-storage array type \
         `uint[32]` carries the ArrayStride decoration (VUID-StandaloneSpirv-None-10684)",
        &[
            "extract.dynamic.v32.32b",
            "extract.16.32b",
            "extract.0.v32.32b",
            "extract.16.v2.32b",
            "extract.16.v4.32b",
            "extract.16.v8.32b",
            "extract.16.v16.32b",
            "extract.32.v32.32b",
            "insert.dynamic.v32.32b",
            "insert.16.32b",
            "insert.0.v32.32b",
            "insert.16.v2.32b",
            "insert.16.v4.32b",
            "insert.16.v8.32b",
            "insert.16.v16.32b",
            "insert.32.v32.32b",
        ],
    ),
    (
        "f2i from .df rounds 1.5 to 1 with .re (the default): GLSL RoundEven on doubles \
         truncates on lavapipe",
        &[
            "f2i.u8.df",
            "f2i.u8.df.re",
            "f2i.s8.df",
            "f2i.s8.df.re",
            "f2i.u16.df",
            "f2i.u16.df.re",
            "f2i.s16.df",
            "f2i.s16.df.re",
            "f2i.u32.df",
            "f2i.u32.df.re",
            "f2i.s32.df",
            "f2i.s32.df.re",
            "f2i.u64.df",
            "f2i.u64.df.re",
            "f2i.s64.df",
            "f2i.s64.df.re",
        ],
    ),
    (
        "frnd .re/.rz/.rna .df of a negative value that rounds to zero gives +0, not -0 \
         (GLSL RoundEven/Trunc on doubles drop the sign on lavapipe)",
        &[
            "frnd.re.df",
            "frnd.re.ftz.df",
            "frnd.rz.df",
            "frnd.rz.ftz.df",
            "frnd.rna.df",
            "frnd.rna.ftz.df",
        ],
    ),
    (
        "ftrunc.bf.f rounds a denormal source instead of giving ±0 (isa-4 ftrunc table: \
         denorm -> 0): 0x007fffff gives 0x0080",
        &["ftrunc.bf.f", "ftrunc.bf.f.re"],
    ),
];

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
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(report::PATH);
    if std::env::var_os("PISA_CONFORMANCE_WRITE").is_some() {
        std::fs::write(&path, &text).expect("write docs/conformance.md");
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
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not what the suite measures; regenerate it with PISA_CONFORMANCE_WRITE=1",
        report::PATH
    );
}
