//! Every code example of the spec (tests/data/examples, wrapped into modules where they are
//! fragments) parses and validates, except the examples that break the spec's own rules, which
//! give their documented errors; the examples that are not PISA (semantics pseudocode, a C
//! struct) are refused without a panic.

use pisa_translator::{check, SourceFile};
use std::path::Path;
use std::sync::Arc;

fn data(sub: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(sub)
}

/// Checks each module of a file (modules are separated by `// ---- next module ----`) and
/// returns the rendered errors as `line:col: message` lines (line numbers of the whole file).
fn errors_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut line_base = 0;
    for part in text.split("// ---- next module ----") {
        let file = Arc::new(SourceFile::new(path.display().to_string(), part));
        if let Err(d) = check(&file) {
            for e in &d.errors {
                let (l, c) = d.location(e);
                out.push(format!("{}:{}: {}", l + line_base, c, e.message));
            }
        }
        line_base += part.matches('\n').count();
    }
    out
}

/// Examples that are invalid as printed, with the errors they must give.
const INVALID: &[(&str, &[&str])] = &[(
    "isa-8-memory-and-atomics--8-3-ld--2",
    &[
        "13:13: qualifier `.cc` must not be specified when `.addrspace` is `.shared`",
        "13:39: address offset register must be 32 or 64 bits, but `%b` is .16b",
        "20:22: qualifier `.type` cannot be `.64b` unless `.addrspace` is `.global`",
    ],
)];

#[test]
fn spec_examples_validate() {
    let mut count = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(data("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().and_then(|e| e.to_str()) != Some("pisa") {
            continue;
        }
        count += 1;
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let got = errors_of(&path);
        let want: Vec<String> = INVALID
            .iter()
            .find(|(n, _)| *n == stem)
            .map_or(Vec::new(), |(_, e)| {
                e.iter().map(|s| s.to_string()).collect()
            });
        if got != want {
            failures.push(format!("{stem}:\n  got  {got:#?}\n  want {want:#?}"));
        }
    }
    assert_eq!(count, 113, "number of PISA examples");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn non_pisa_examples_are_refused_without_panic() {
    let mut count = 0;
    for e in std::fs::read_dir(data("examples/not-pisa")).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = Arc::new(SourceFile::new("x.pisa", text));
        assert!(check(&file).is_err(), "{}", path.display());
        count += 1;
    }
    assert_eq!(count, 15);
}
