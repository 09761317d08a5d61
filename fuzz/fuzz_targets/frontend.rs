//! Fuzz target: the front end must never panic, hang or abort, whatever the bytes.
//! Run with `cargo +nightly fuzz run frontend` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = Arc::new(pisa_translator::SourceFile::new("fuzz.pisa", text));
    if let Err(d) = pisa_translator::check(&file) {
        let _ = d.render();
    }
});
