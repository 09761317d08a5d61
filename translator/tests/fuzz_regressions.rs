//! Regression tests for inputs that crashed or hung the translator, found by fuzzing (the
//! cargo-fuzz targets in `fuzz/`, and a differential run of the old and new front ends over
//! mutated spec examples). Each input is inline, minimized; the comment says what it did.

use pisa_translator::{check, compile, SourceFile};
use std::sync::Arc;

fn file(text: &str) -> Arc<SourceFile> {
    Arc::new(SourceFile::new("fuzz.pisa", text.to_string()))
}

/// Messages of the errors `check` reports.
fn check_errors(text: &str) -> Vec<String> {
    match check(&file(text)) {
        Ok(_) => Vec::new(),
        Err(d) => d.errors.iter().map(|e| e.message.clone()).collect(),
    }
}

/// A function calling itself with arguments: the validator read the callee's parameter types
/// from the function whose body it was checking, which it had emptied for the time being
/// (`index out of bounds: the len is 0 but the index is 0` in `sema::restrict::call`).
/// Recursion is not a front-end error; direct recursion translates to an explicit stack
/// (docs/spec-notes.md §33).
#[test]
fn recursive_call_with_arguments() {
    let text = "\
.version 0.1;
.target 100;
.function void @foo(.reg .32b %x) {
  call void, @foo(%x);
  return;
}
";
    assert_eq!(check_errors(text), Vec::<String>::new());
    if let Err(d) = compile(&file(text), &Default::default()) {
        panic!("direct recursion translates: {}", d.render());
    }

    // The callee's signature is still checked against the call.
    let text = "\
.version 0.1;
.target 100;
.function .32b @f(.reg .32b %x, .reg .64b %y) {
  .reg .32b %r;
  call %r, @f(%x);
  return %r;
}
";
    assert_eq!(
        check_errors(text),
        vec!["`@f` takes 2 arguments, but 1 is given".to_string()]
    );
}

/// Call operands nested in argument lists (`@f(@f(@f(...`): the parser recursed once per level
/// and overflowed the stack (`thread 'main' has overflowed its stack`, an abort) on deep inputs.
/// Nesting is now bounded like scopes.
#[test]
fn deeply_nested_argument_lists() {
    let text = format!(
        ".version 0.1;\n.target 100;\n.function void @f(.reg .32b %x) {{\n  call void, {};\n  return;\n}}\n",
        "@f(".repeat(100_000)
    );
    assert_eq!(
        check_errors(&text),
        vec!["argument lists are nested more than 256 deep".to_string()]
    );
    // Shallow nesting is still the validator's "nested argument lists" error.
    let text = ".version 0.1;\n.target 100;\n.function void @f(.reg .32b %x) {\n  call void, @f(@f(%x));\n  return;\n}\n";
    assert_eq!(
        check_errors(text),
        vec!["nested argument lists are not allowed".to_string()]
    );
}
