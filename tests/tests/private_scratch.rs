//! Private memory in scratch (docs/spec-notes.md §95): a private arena larger than
//! `Options::scratch_threshold` lives in a per-launch device buffer, one slice per
//! invocation of a dispatch. Work-items write and read their own 64 MiB `.private` array
//! (its first and last words, a word at an index from a register, a word through a generic
//! address), checked against values worked out by hand and against the reference
//! interpreter; a launch larger than the scratch budget runs as serialized dispatches; a
//! work-group needing more than the device can allocate is `Error::Scratch`; recursion
//! and virtual lanes with their private arena in scratch. Every module passes spirv-val
//! (`device_job` validates).

use pisa_conformance::{context, device_job, reference_job, DeviceFailure};
use pisa_translator::Options;
use pisa_vk::reference::{Data, Job};

/// A kernel whose work-item `i` (of a 1-D launch) owns the `.private` array `@a` of
/// `bytes` bytes: it stores `i + 1` in its first word, `3(i + 1)` in its last, `5(i + 1)`
/// in word `(i * 8 + 1) mod (bytes / 8 - 1)` through a register offset and `7(i + 1)` in
/// the word after the first through a generic address; then it reads the four back into
/// `out[4i..4i + 4]`.
fn own_array(bytes: u64) -> String {
    let last = bytes - 8;
    let words = bytes / 8 - 1;
    format!(
        ".version 0.1;\n.target 100;\n\
         .kernel @k(.param[8] %out) {{\n\
           .private .align 8 @a[{bytes}];\n\
           .reg .64b %p, %o, %v, %g, %x, %gen;\n  .reg .32b %i, %w, %at;\n\
           mov.32b %i, %groupid.x;\n  umad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\n\
           zext.64b.32b %g, %i;\n  iadd.64b %g, %g, 1;\n\
           st.private.64b [@a], %g;\n\
           umul.64b %x, %g, 3;\n  st.private.64b [@a+{last}], %x;\n\
           umul.32b %w, %i, 8;\n  iadd.32b %w, %w, 1;\n  udiv.rem.32b %w, %w, {words};\n\
           shl.32b %at, %w, 3;\n  addrof.32b %w, @a;\n  iadd.32b %at, %at, %w;\n\
           umul.64b %x, %g, 5;\n  st.private.64b [%at], %x;\n\
           addrcast.generic.private %gen, @a;\n  iadd.64b %gen, %gen, 8;\n\
           umul.64b %x, %g, 7;\n  st.generic.64b [%gen], %x;\n\
           ld.param.64b %p, [%out];\n  umul.full.32b %o, %i, 32;\n  iadd.64b %p, %p, %o;\n\
           ld.private.64b %v, [@a];\n  st.global.64b [%p], %v;\n\
           ld.private.64b %v, [@a+{last}];\n  st.global.64b [%p+8], %v;\n\
           ld.private.64b %v, [%at];\n  st.global.64b [%p+16], %v;\n\
           ld.generic.64b %v, [%gen];\n  st.global.64b [%p+24], %v;\n\
         }}\n"
    )
}

/// What [`own_array`] of `bytes` writes for `n` work-items, worked out by hand. Work-item
/// 0's register-offset word is word 1, which the generic store then overwrites.
fn expected(bytes: u64, n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for i in 0..n {
        let g = i + 1;
        let overwritten = (i * 8 + 1) % (bytes / 8 - 1) == 1;
        out.extend([g, 3 * g, if overwritten { 7 * g } else { 5 * g }, 7 * g]);
    }
    out
}

/// Runs [`own_array`] of `bytes` over `n` work-items in work-groups of `local` on the
/// device (with `options`) and on the reference; both must agree. Returns the words.
fn run(bytes: u64, n: u64, local: u64, options: &Options) -> Vec<u64> {
    let src = own_array(bytes);
    let job = Job::new("k", n, local).arg(Data::zero_words(4 * n as usize));
    let dev = match device_job("scratch.pisa", &src, options, &job) {
        Ok(out) => out.words(0),
        Err(DeviceFailure::Translate(e)) => panic!("translation failed:\n{e}"),
        Err(DeviceFailure::Run(e)) => panic!("device run failed: {e}"),
    };
    let reference = reference_job("scratch.pisa", &src, &job, Default::default())
        .unwrap_or_else(|e| panic!("reference failed: {e}"))
        .words(0);
    assert_eq!(dev, reference, "device and reference differ");
    dev
}

#[test]
fn a_64_mib_private_array_per_work_item() {
    // 6 work-items in work-groups of 4 (a partial edge group of 2): 384 MiB of scratch.
    assert_eq!(
        run(64 << 20, 6, 4, &Options::default()),
        expected(64 << 20, 6)
    ); // Checked: every access to the array is checked against its bounds, in scratch too.
    let checked = Options {
        checked: true,
        ..Options::default()
    };
    assert_eq!(run(64 << 20, 3, 2, &checked), expected(64 << 20, 3));
}

#[test]
fn a_launch_beyond_the_scratch_budget_runs_as_serialized_dispatches() {
    // 40 work-items of 64 MiB: 2.5 GiB, so dispatches of at most 16 work-groups of one,
    // each reusing the slices of the one before.
    assert_eq!(
        run(64 << 20, 40, 1, &Options::default()),
        expected(64 << 20, 40)
    );
}

#[test]
fn only_arenas_past_the_threshold_live_in_scratch() {
    let translate = |bytes: u64, threshold: u32| {
        let file = std::sync::Arc::new(pisa_translator::SourceFile::new(
            "t.pisa",
            &own_array(bytes),
        ));
        let options = Options {
            scratch_threshold: threshold,
            ..Options::default()
        };
        let t = pisa_translator::compile(&file, &options).unwrap();
        (t.reflection.scratch_stride, t.reflection.launch.scratch)
    };
    assert_eq!(translate(64 << 10, 64 << 10), (None, None));
    let (stride, slot) = translate((64 << 10) + 8, 64 << 10);
    assert_eq!(stride, Some((64 << 10) + 16), "rounded up to 16");
    assert!(slot.is_some());
    let (stride, _) = translate(64, 0);
    assert_eq!(stride, Some(64));
    // A small arena forced into scratch computes what it computes in Private storage.
    let options = Options {
        scratch_threshold: 0,
        ..Options::default()
    };
    let small = run(4096, 9, 4, &options);
    let plain = run(4096, 9, 4, &Options::default());
    assert_eq!(small, plain);
    assert_eq!(small, expected(4096, 9));
}

#[test]
fn a_work_group_beyond_the_largest_allocation_is_an_error_naming_the_kernel() {
    // 3 GiB of `.private` (under PISA's 4 GiB): more than lavapipe's 2 GiB allocations.
    let file = std::sync::Arc::new(pisa_translator::SourceFile::new(
        "big.pisa",
        &own_array(3 << 30),
    ));
    let t = pisa_translator::compile(&file, &Options::default()).unwrap();
    let m =
        pisa_vk::Module::from_translation(context(), "big.pisa", std::sync::Arc::new(t)).unwrap();
    let limit = context().info().max_allocation_size;
    let out = context().zeroed::<u64>(4).unwrap();
    let r = m.dispatch("k", 1, 1, (&out,));
    if limit >= 3 << 30 {
        // A device that can hold it (the H200's allocations reach 140 GB) runs it.
        r.expect("3 GiB of scratch within the device's largest allocation");
        return;
    }
    let e = r.unwrap_err();
    match &e {
        pisa_vk::Error::Scratch {
            kernel,
            size,
            limit: l,
            ..
        } => {
            assert_eq!((kernel.as_str(), *size, *l), ("k", 3 << 30, limit));
            assert!(!e.is_usage());
            let text = e.to_string();
            assert!(
                text.contains("3221225472 bytes") && text.contains("`k`"),
                "{text}"
            );
        }
        other => panic!("expected a scratch error, got {other}"),
    }
}

#[test]
#[ignore = "1 GiB of private memory per work-item: docs/performance.md gives its figure"]
fn a_1_gib_private_array() {
    assert_eq!(
        run(1 << 30, 2, 1, &Options::default()),
        expected(1 << 30, 2)
    );
}

#[test]
fn virtual_lanes_keep_one_arena_copy_per_lane_in_scratch() {
    // Every kernel on virtual lanes: an invocation carries several work-items, each with its
    // copy of the arena in the invocation's slice. 37 work-items in groups of 12.
    let options = Options {
        virtual_lanes: pisa_translator::VirtualLanes::AllKernels,
        hardware_subgroup_size: Some(context().info().subgroup_size),
        scratch_threshold: 0,
        ..Options::default()
    };
    assert_eq!(run(4096, 37, 12, &options), expected(4096, 37));
}
