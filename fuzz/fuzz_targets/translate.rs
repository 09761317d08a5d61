//! Fuzz target: the whole translator (front end and SPIR-V back end) must never panic, hang or
//! abort. Inputs the front end rejects are skipped (the `frontend` target covers them); every
//! module that passes `check` is handed to `compile`, which may return errors but must not panic.
//! The input's length picks the options ([`options`]): the defaults, the wave64 mapping (PISA
//! sub-groups as 32-lane halves of 64-lane hardware sub-groups), the memory checker,
//! cancellable loops in strips, every kernel on virtual lanes of 8-lane hardware (checked,
//! with the sub-group entry check of a device without size control), sub-group kernels on
//! clustered virtual lanes of 64-lane hardware (a wave64 without size control), and the
//! float64 float model with a shallow recursion stack.
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
    if let Err(d) = pisa_translator::compile(&file, &options(data.len())) {
        let _ = d.render();
    }
});

/// The translation options for an input of `len` bytes: each pass and mode of the back end
/// gets its share of the inputs.
fn options(len: usize) -> pisa_translator::Options {
    use pisa_translator::{FloatModel, Options, VirtualLanes};
    match len % 7 {
        0 => Options::default(),
        1 => Options::clustered(32, 64),
        2 => Options {
            checked: true,
            ..Options::default()
        },
        3 => Options {
            cancellable: true,
            cancel_interval: 3,
            ..Options::default()
        },
        4 => Options {
            hardware_subgroup_size: Some(8),
            virtual_lanes: VirtualLanes::AllKernels,
            checked: true,
            check_subgroup_size: true,
            ..Options::default()
        },
        5 => Options {
            virtual_lanes: VirtualLanes::SubgroupKernels,
            check_subgroup_size: true,
            ..Options::clustered(32, 64)
        },
        _ => Options {
            float: Some(FloatModel {
                float64: true,
                ..FloatModel::default()
            }),
            stack_depth: 2,
            ..Options::default()
        },
    }
}
