//! Fuzz target: the whole translator (front end and SPIR-V back end) must never panic, hang or
//! abort. Inputs the front end rejects are skipped (the `frontend` target covers them); every
//! module that passes `check` is handed to `compile`, which may return errors but must not panic.
//! Inputs of odd length are translated for the wave64 mapping (PISA sub-groups as 32-lane
//! halves of 64-lane hardware sub-groups), even ones with the default options.
//! Run with `cargo +nightly fuzz run translate` from the repository root (see fuzz/README.md).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = Arc::new(pisa_translator::SourceFile::new("fuzz.pisa", text));
    if pisa_translator::check(&file).is_err() {
        return;
    }
    let options = if data.len() % 2 == 1 {
        pisa_translator::Options::clustered(32, 64)
    } else {
        pisa_translator::Options::default()
    };
    if let Err(d) = pisa_translator::compile(&file, &options) {
        let _ = d.render();
    }
});
