//! Sub-group kernels on a device whose pipelines cannot require a sub-group size (spec-notes
//! §105), as a Vulkan 1.1 or 1.2 device without `VK_EXT_subgroup_size_control`: lavapipe
//! through a context that enables neither `subgroupSizeControl` nor `computeFullSubgroups`
//! ([`context_without_size_control`]). The host API translates sub-group kernels on virtual
//! lanes for the device's `subgroupSize` (the size Vulkan promises to such a pipeline), each
//! kernel checks at entry that it got full sub-groups of that size, and a launch where it
//! did not fails. The whole virtual-lane suite runs this way too
//! (`virtual_lanes.rs::whole_suite_without_size_control`).

mod subgroup_cases;

use pisa_conformance::{context_without_size_control, translate_with};
use pisa_translator::Options;
use pisa_vk::{Context, Error, Module};
use std::sync::{Arc, OnceLock};

/// The shared context of this binary without sub-group size control.
fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(context_without_size_control)
}

fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example file")
}

#[test]
fn the_promised_size_is_the_device_subgroup_size() {
    let info = ctx().info();
    let f = ctx().enabled_features();
    assert!(!pisa_vk::can_require_subgroup_size(f));
    assert_eq!(
        pisa_vk::unsized_subgroup_size(info, f, 32),
        Some(info.subgroup_size)
    );
    // A context that can require a size keeps §88's choice.
    let full = pisa_conformance::context();
    if pisa_vk::can_require_subgroup_size(full.enabled_features()) {
        assert_eq!(
            pisa_vk::unsized_subgroup_size(full.info(), full.enabled_features(), 32),
            None
        );
    }
}

#[test]
fn the_promised_size_for_other_devices() {
    // Devices described by hand from this one: their `subgroupSize`, with and without the
    // features a required size needs.
    let mut info = ctx().info().clone();
    let none = pisa_vk::FeatureSet::default();
    let mut sized = none;
    sized.subgroup_size_control = true;
    sized.compute_full_subgroups = true;
    let mut control_only = none;
    control_only.subgroup_size_control = true;
    for (w, want) in [
        (1, Some(1)),
        (4, Some(4)),
        (16, Some(16)),
        (32, Some(32)),
        // Wider: PISA sub-groups as clusters on virtual lanes (spec-notes §115).
        (64, Some(64)),
        (128, Some(128)),
        (256, None),
        (24, None),
    ] {
        info.subgroup_size = w;
        (info.min_subgroup_size, info.max_subgroup_size) = (w, w);
        assert_eq!(
            pisa_vk::unsized_subgroup_size(&info, &none, 32),
            want,
            "width {w}"
        );
        // Without full sub-groups a required size is no help: the same promise is used.
        assert_eq!(
            pisa_vk::unsized_subgroup_size(&info, &control_only, 32),
            want,
            "width {w}"
        );
        assert_eq!(
            pisa_vk::unsized_subgroup_size(&info, &sized, 32),
            None,
            "width {w}"
        );
    }
}

#[test]
fn module_from_source_runs_the_spec_reduction_at_32_lanes() {
    let w = ctx().info().subgroup_size;
    let m = Module::from_source(ctx(), "reduce", &example("subgroup_reduce.pisa")).unwrap();
    let k = m.reflection().kernel("subgroup_reduce").unwrap();
    assert_eq!(k.subgroup_size, Some(32));
    assert_eq!(k.hardware_subgroup_size, Some(w));
    assert_eq!(k.virtual_lanes, Some(32 / w));
    let check = m.reflection().subgroup_check.expect("the kernels check");
    assert_eq!(check.hardware_subgroup_size, w);
    // Twice: a launch leaves the kernel's check record clear for the next.
    for _ in 0..2 {
        subgroup_cases::check_spec_reduction(ctx(), &m);
    }
}

#[test]
fn partial_sub_groups_and_the_spec_scan_in_work_groups_of_5_and_40() {
    let m = Module::from_source(ctx(), "scan", subgroup_cases::SCAN).unwrap();
    for local in [5u32, 40, 64] {
        let data = subgroup_cases::scan_input(local);
        let buf = ctx().buffer_from(&data).unwrap();
        m.dispatch("scan", local as u64, local as u64, &[(&buf).into()])
            .unwrap();
        let got = buf.read().unwrap();
        for (i, g) in got.iter().enumerate() {
            let start = i - i % 32;
            let want = data[start..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(*g, want, "local {local} work-item {i}");
        }
    }
}

/// Stores 1 for each work-item that runs.
const MARK: &str = ".version 0.1;\n.target 100;\n\
.kernel @mark(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %v;\n\
  mov.32b %i, %localid.x;\n  ired.sum.32b %v, %i, 0xffffffff;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  mov.32b %v, 1;\n  st.global.32b [%p], %v;\n}\n";

#[test]
fn a_kernel_that_gets_other_sub_groups_than_it_was_translated_for_fails_its_launch() {
    // Translated for hardware sub-groups of half the device's width: the device runs it in
    // its own, so every sub-group fails the check at entry and nothing is stored.
    let w = ctx().info().subgroup_size;
    assert!(
        w >= 2,
        "the device's sub-groups are too narrow for this test"
    );
    let t = translate_with(
        MARK,
        &Options {
            hardware_subgroup_size: Some(w / 2),
            check_subgroup_size: true,
            ..Options::default()
        },
    );
    let m = Module::from_translation(ctx(), "mark.pisa", Arc::new(t)).unwrap();
    let out = ctx().zeroed::<u32>(64).unwrap();
    for _ in 0..2 {
        match m.dispatch("mark", 64u64, 64u64, &[(&out).into()]) {
            Err(Error::SubgroupSize {
                kernel,
                expected,
                size,
                active,
            }) => {
                assert_eq!(kernel, "mark");
                assert_eq!((expected, size, active), (w / 2, w, w));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(out.read().unwrap(), vec![0; 64]);
    }
    let e = m
        .dispatch("mark", 64u64, 64u64, &[(&out).into()])
        .unwrap_err();
    assert!(!e.is_usage());
    let text = e.to_string();
    assert!(text.contains(&format!("sub-groups of {}", w / 2)), "{text}");
    // The same kernel translated for the device's width runs every work-item.
    let m = Module::from_source(ctx(), "mark", MARK).unwrap();
    m.dispatch("mark", 64u64, 64u64, &[(&out).into()]).unwrap();
    assert_eq!(out.read().unwrap(), vec![1; 64]);
}

#[test]
fn a_translation_without_the_check_is_refused_by_name() {
    // Virtual lanes without the entry check need a required sub-group size: the context
    // lacks it, and the error says which feature.
    let w = ctx().info().subgroup_size;
    let t = translate_with(
        MARK,
        &Options {
            hardware_subgroup_size: Some(w),
            ..Options::default()
        },
    );
    assert!(t.reflection.subgroup_check.is_none());
    let m = Module::from_translation(ctx(), "mark.pisa", Arc::new(t)).unwrap();
    let out = ctx().zeroed::<u32>(64).unwrap();
    let text = m
        .dispatch("mark", 64u64, 64u64, &[(&out).into()])
        .unwrap_err()
        .to_string();
    assert!(text.contains("subgroupSizeControl"), "{text}");
    assert!(!text.contains("requiredSubgroupSize"), "{text}");
}
