//! "Did you mean" notes of the front end: a misspelled instruction gets the closest spec
//! instruction name, a misspelled qualifier the closest qualifier of that instruction and the
//! list of every qualifier it accepts; nothing is suggested when nothing is close.

use pisa_translator::{check, SourceFile};
use std::sync::Arc;

/// `(message, notes)` of every error of a kernel whose body is `body`.
fn diagnose(body: &str) -> Vec<(String, Vec<String>)> {
    let src = format!(
        ".version 0.1;\n.target 100;\n.kernel @k() {{\n.reg .32b %a;\n.reg .64b %d;\n{body}\n}}\n"
    );
    let file = Arc::new(SourceFile::new("t.pisa", src));
    check(&file)
        .expect_err("the kernel is invalid")
        .errors
        .into_iter()
        .map(|e| (e.message, e.notes))
        .collect()
}

#[test]
fn misspelled_instructions_get_the_closest_name() {
    let cases = [
        ("iad.32b %a, %a, %a;", "iadd"),   // a letter missing
        ("idad.32b %a, %a, %a;", "iadd"),  // two letters swapped
        ("barier;", "barrier"),            // a letter missing in a longer name
        ("IADD.32b %a, %a, %a;", "iadd"),  // case
        ("fmull.32b %a, %a, %a;", "fmul"), // a letter too many
    ];
    for (body, want) in cases {
        let d = diagnose(body);
        let name = body.split(['.', ';']).next().unwrap();
        assert_eq!(d[0].0, format!("unknown instruction `{name}`"), "{body}");
        assert_eq!(d[0].1, vec![format!("did you mean `{want}`?")], "{body}");
    }
}

#[test]
fn far_names_get_no_suggestion() {
    for body in ["frobnicate %a;", "xy.32b %a, %a, %a;", "q %a;"] {
        let d = diagnose(body);
        assert!(d[0].0.starts_with("unknown instruction"), "{body}: {d:?}");
        assert!(d[0].1.is_empty(), "{body}: {:?}", d[0].1);
    }
}

#[test]
fn misspelled_qualifiers_get_the_closest_and_the_list() {
    let d = diagnose("iadd.dsta.32b %a, %a, %a;");
    assert_eq!(d[0].0, "unknown qualifier `.dsta` for `iadd`");
    assert_eq!(
        d[0].1,
        vec![
            "did you mean `.dsat`?".to_string(),
            "qualifiers of `iadd`: .dsat .16b .32b .64b .8bx4 .16bx2".to_string(),
        ]
    );
    // A word of a multi-word value (`ld`'s cache controls) is suggested on its own, and the
    // twelve combinations are written as one pattern.
    let d = diagnose("ld.global.L1u.L2c.L3c.32b %a, [%d];");
    assert_eq!(d[0].0, "unknown qualifier `.L1u` for `ld`");
    assert_eq!(d[0].1[0], "did you mean `.L1uc`?");
    assert!(
        d[0].1[1].contains(" .L1{uc|c|s}.L2{uc|c}.L3{uc|c} .ri "),
        "{}",
        d[0].1[1]
    );
    let d = diagnose("ld.globl.32b %a, [%d];");
    assert_eq!(d[0].1[0], "did you mean `.global`?");
}

#[test]
fn far_qualifiers_get_only_the_list() {
    let d = diagnose("iadd.zzzz.32b %a, %a, %a;");
    assert_eq!(d[0].0, "unknown qualifier `.zzzz` for `iadd`");
    assert_eq!(
        d[0].1,
        vec!["qualifiers of `iadd`: .dsat .16b .32b .64b .8bx4 .16bx2".to_string()]
    );
}
