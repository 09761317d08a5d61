//! Virtual lanes (spec-notes §88): PISA's 32-lane sub-groups on lavapipe, whose hardware
//! sub-groups are 8 lanes (16 with `LP_NATIVE_VECTOR_WIDTH=512`), and partial sub-groups for
//! any work-group size.
//!
//! Every kernel here is translated for PISA's width, 32, on the device's own hardware width
//! ([`Options::hardware_subgroup_size`]), so each invocation carries 32 / H work-items, and
//! is compared bit for bit with the reference interpreter at 32 lanes - the isa-7 matrix
//! under divergence with partial participation masks, whole and partial sub-groups, calls
//! (direct and through addresses that differ per lane), private memory per lane - or with
//! values worked out by hand (launch shapes, the spec's examples).
//! [`whole_suite_at_16_lanes`] runs this binary again at 16 lanes,
//! [`whole_suite_without_size_control`] as on a device without `subgroupSizeControl`.

mod subgroup_cases;

use pisa_conformance::{context, device_subgroup_size, run_both_with, translate_with};
use pisa_translator::{Options, VirtualLanes};
use std::sync::Arc;
use subgroup_cases::*;

/// PISA's 32-lane sub-groups on the device's hardware width (virtual lanes).
fn lanes32() -> Options {
    Options {
        subgroup_size: 32,
        hardware_subgroup_size: Some(device_subgroup_size()),
        ..Options::default()
    }
}

/// `input` without its last 3 work-items and 7 more: the last work-group of 64 is then
/// partial, its second sub-group too.
fn partial(mut input: Vec<u64>, _n: u32) -> Vec<u64> {
    input.truncate(input.len() - 10 * IN_PER);
    input
}

/// Scenarios for 32 lanes, cut by [`partial`].
fn cases(n: u32, seed: u64, value: &mut dyn FnMut(&mut rand::rngs::StdRng) -> u64) -> Vec<u64> {
    partial(scenarios(n, seed, value), n)
}

/// Plain scenarios for 32 lanes.
fn whole(n: u32, seed: u64, value: &mut dyn FnMut(&mut rand::rngs::StdRng) -> u64) -> Vec<u64> {
    scenarios(n, seed, value)
}

#[test]
fn translation_records_virtual_lanes() {
    let h = device_subgroup_size();
    let t = translate_with(
        &kernel(32, false, "shfl.idx.32b %d, %v, 0, 0xffffffff"),
        &lanes32(),
    );
    let k = t.reflection.kernel("k").unwrap();
    assert_eq!(k.subgroup_size, Some(32));
    assert_eq!(k.hardware_subgroup_size, Some(h));
    // Virtual lanes where the hardware is narrower than 32; natively on 32 lanes (a GPU).
    assert_eq!(k.virtual_lanes, (h < 32).then_some(32 / h));
    // A kernel without cross-lane operations stays native unless every kernel is asked for.
    let plain = pisa_conformance::kernel_module("", "mov.32b %r, %laneid;");
    let plain = plain.replace("{\n", "{\n.reg .32b %r;\n");
    let t = translate_with(&plain, &lanes32());
    assert_eq!(t.reflection.kernel("k").unwrap().virtual_lanes, None);
    let all = Options {
        virtual_lanes: VirtualLanes::AllKernels,
        ..lanes32()
    };
    let t = translate_with(&plain, &all);
    assert_eq!(
        t.reflection.kernel("k").unwrap().virtual_lanes,
        Some(32 / h)
    );
}

#[test]
fn shfl_every_mode_at_32_lanes() {
    every_shfl(&lanes32(), 1100, whole);
    every_shfl(&lanes32(), 1200, cases);
}

#[test]
fn ired_every_operation_and_type_at_32_lanes() {
    every_ired(&lanes32(), 1300, whole);
    every_ired(&lanes32(), 1400, cases);
}

#[test]
fn fred_every_operation_type_and_nan_mode_at_32_lanes() {
    every_fred(&lanes32(), 1500, whole);
    every_fred(&lanes32(), 1600, cases);
}

#[test]
fn redfirstidx_at_32_lanes() {
    let mut input = scenarios(32, 1700, int_value(32));
    // Give every scenario a participating lane (the first executing one), so that the
    // result is defined.
    for chunk in input.chunks_mut(IN_PER * 32) {
        let first = (0..32).find(|&l| chunk[l * IN_PER + 3] != 0).unwrap();
        let mask = chunk[2] | 1 << first;
        for l in 0..32 {
            chunk[l * IN_PER + 2] = mask;
        }
    }
    let out = check_with(&lanes32(), 32, false, "redfirstidx.32b %d, %m", &input);
    for (s, chunk) in input.chunks(IN_PER * 32).enumerate() {
        let exec: u64 = (0..32)
            .map(|l| chunk[l * IN_PER + 3] << l)
            .fold(0, |a, b| a | b);
        let want = (chunk[2] & exec).trailing_zeros() as u64;
        for l in 0..32 {
            // A lane that skipped the instruction keeps its old `dst`.
            let want = if chunk[l * IN_PER + 3] != 0 {
                want
            } else {
                chunk[l * IN_PER + 4]
            };
            assert_eq!(out[s * 32 + l], want, "scenario {s} lane {l}");
        }
    }
}

/// Each work-item stores its linear local id, `%laneid`, `%activemask` and the sum of the
/// linear ids of its sub-group (`ired.sum`).
const SHAPE: &str = ".version 0.1;\n.target 100;\n\
.kernel @shape(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %x, %y, %z, %lx, %ly, %id, %g, %n, %lane, %am, %sum;\n\
  mov.32b %x, %localid.x;\n  mov.32b %y, %localid.y;\n  mov.32b %z, %localid.z;\n\
  mov.32b %lx, %localsize.x;\n  mov.32b %ly, %localsize.y;\n\
  umad.32b %id, %z, %ly, %y;\n  umad.32b %id, %id, %lx, %x;\n\
  mov.32b %g, %groupid.x;\n  mov.32b %n, %localsize.z;\n  umul.32b %n, %n, %ly;\n\
  umul.32b %n, %n, %lx;\n  umad.32b %g, %g, %n, %id;\n\
  mov.32b %lane, %laneid;\n  mov.32b %am, %activemask;\n\
  ired.sum.32b %sum, %id, 0xffffffff;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %g, 16;\n  iadd.64b %p, %p, %off;\n\
  st.global.32b [%p], %id;\n  st.global.32b [%p + 4], %lane;\n\
  st.global.32b [%p + 8], %am;\n  st.global.32b [%p + 12], %sum;\n}\n";

#[test]
fn every_work_group_shape_has_partial_sub_groups() {
    let t = translate_with(SHAPE, &lanes32());
    let m = pisa_vk::Module::from_translation(context(), "shape.pisa", Arc::new(t)).unwrap();
    for local in [
        [1, 1, 1],
        [5, 1, 1],
        [33, 1, 1],
        [100, 1, 1],
        [3, 5, 2],
        [7, 3, 4],
        [32, 2, 1],
    ] {
        let n: u32 = local.iter().product();
        let groups = 3u32;
        let out = context().zeroed::<u32>((4 * n * groups) as usize).unwrap();
        let global = [local[0] * groups, local[1], local[2]];
        m.dispatch("shape", global, local, &[(&out).into()])
            .unwrap();
        let got = out.read().unwrap();
        for g in 0..groups {
            for id in 0..n {
                let w = &got[(4 * (g * n + id)) as usize..][..4];
                let s = id / 32;
                let present = (n - 32 * s).min(32);
                let mask = if present == 32 {
                    u32::MAX
                } else {
                    (1 << present) - 1
                };
                let sum: u32 = (32 * s..32 * s + present).sum();
                assert_eq!(
                    w,
                    [id, id % 32, mask, sum],
                    "local {local:?} group {g} item {id}"
                );
            }
        }
    }
}

/// Calls under divergence: `@twice` (with a `shfl` inside) is called by the odd lanes only,
/// and each lane calls one of two functions through an address chosen by its value.
const CALLS: &str = "
.function .32b @twice(.reg .32b %a) {
  .reg .32b %b;
  shfl.xor.32b %b, %a, 2, 0xffffffff;
  iadd.32b %b, %b, %a;
  return %b;
}
.function .32b @inc(.reg .32b %a) {
  .reg .32b %b, %am;
  mov.32b %am, %activemask;
  iadd.32b %b, %a, %am;
  return %b;
}
.function .32b @dec(.reg .32b %a) {
  .reg .32b %b;
  ired.sum.32b %b, %a, 0xffffffff;
  isub.32b %b, %b, 1;
  return %b;
}
";

#[test]
fn calls_diverge_per_lane_direct_and_through_addresses() {
    let body = ".reg .64b %pin, %pout, %off, %f;\n.reg .32b %i, %v, %d, %e, %r, %am;\n\
        .pred %odd, %low;\n\
        mov.32b %i, %groupid.x;\nmov.32b %e, %enqueuedlocalsize.x;\nmov.32b %r, %localid.x;\n\
        umad.32b %i, %i, %e, %r;\n\
        ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 40;\niadd.64b %pin, %pin, %off;\n\
        ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 16;\niadd.64b %pout, %pout, %off;\n\
        ld.global.32b %v, [%pin];\nld.global.32b %d, [%pin + 32];\n\
        and.32b %r, %v, 1;\nucmp.ne.32b %odd, %r, 0;\n\
        call.cond %odd, %d, @twice(%v);\n\
        and.32b %r, %v, 6;\nucmp.lt.32b %low, %r, 3;\n\
        addrof.64b %f, @inc;\ngoto.cond %low, picked;\naddrof.64b %f, @dec;\n\
        picked:\ncall %e, %f(%v);\nmov.32b %am, %activemask;\n\
        st.global.32b [%pout], %d;\nst.global.32b [%pout + 8], %e;";
    let src = pisa_conformance::kernel_module(CALLS, body);
    let input = scenarios(32, 1800, int_value(32));
    for local in [64, 40, 7] {
        run_both_with(&src, &input, IN_PER, 2, local, &lanes32(), |a, b| a == b);
    }
}

#[test]
fn private_memory_is_per_work_item() {
    // Each work-item writes its value into a private array, shuffles, then reads its own
    // array back: another lane's writes never show.
    let body = ".private .align 4 @arr[16];\n.reg .64b %pin, %pout, %off;\n\
        .reg .32b %i, %v, %w, %e, %r, %a;\n\
        mov.32b %i, %groupid.x;\nmov.32b %e, %enqueuedlocalsize.x;\nmov.32b %r, %localid.x;\n\
        umad.32b %i, %i, %e, %r;\n\
        ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 40;\niadd.64b %pin, %pin, %off;\n\
        ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 16;\niadd.64b %pout, %pout, %off;\n\
        ld.global.32b %v, [%pin];\n\
        addrof.32b %a, @arr;\nand.32b %r, %v, 3;\nshl.32b %r, %r, 2;\niadd.32b %a, %a, %r;\n\
        st.private.32b [%a], %v;\nshfl.xor.32b %w, %v, 5, 0xffffffff;\n\
        ld.private.32b %r, [%a];\n\
        st.global.32b [%pout], %r;\nst.global.32b [%pout + 8], %w;";
    let src = pisa_conformance::kernel_module("", body);
    let input = scenarios(32, 1900, int_value(32));
    let out = run_both_with(&src, &input, IN_PER, 2, 64, &lanes32(), |a, b| a == b);
    for (i, w) in out.chunks(2).enumerate() {
        assert_eq!(w[0], input[i * IN_PER] & 0xFFFF_FFFF, "work-item {i}");
    }
}

#[test]
fn spec_prefix_sum_over_32_lanes() {
    // isa-7's inclusive scan with `shfl.up` over a whole 32-lane sub-group: each work-item
    // ends with the wrapping sum of its sub-group's values up to its own.
    let t = translate_with(SCAN, &lanes32());
    let m = pisa_vk::Module::from_translation(context(), "scan.pisa", Arc::new(t)).unwrap();
    let data = subgroup_cases::scan_input(64);
    let buf = context().buffer_from(&data).unwrap();
    m.dispatch("scan", 64u64, 64u64, &[(&buf).into()]).unwrap();
    let got = buf.read().unwrap();
    for (i, g) in got.iter().enumerate() {
        let start = i - i % 32;
        let want = data[start..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(*g, want, "work-item {i}");
    }
}

#[test]
fn spec_reduction_example_over_32_lanes() {
    let path = format!(
        "{}/../examples/subgroup_reduce.pisa",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let t = translate_with(&text, &lanes32());
    let m = pisa_vk::Module::from_translation(context(), "reduce", Arc::new(t)).unwrap();
    subgroup_cases::check_spec_reduction(context(), &m);
}

#[test]
fn the_default_path_runs_sub_group_kernels_at_32_lanes() {
    // `Module::from_source` picks virtual lanes on its own on a narrower device.
    let src = kernel(32, false, "ired.sum.32b %d, %v, 0xffffffff");
    let m = pisa_vk::Module::from_source(context(), "k.pisa", &src).unwrap();
    let info = m.translation().reflection.kernel("k").unwrap().clone();
    if context().info().max_subgroup_size < 32 {
        assert_eq!(info.virtual_lanes, Some(32 / device_subgroup_size()));
    }
    assert_eq!(info.subgroup_size, Some(32));
    // Without sub-group size control the kernels check their sub-groups (spec-notes §105).
    let unrequired = !pisa_vk::can_require_subgroup_size(context().enabled_features());
    assert_eq!(unrequired, pisa_conformance::without_size_control());
    assert_eq!(
        m.reflection().subgroup_check.is_some(),
        unrequired,
        "{:?}",
        m.reflection().subgroup_check
    );
}

/// Runs this test binary again with lavapipe's 16-lane sub-groups (2 lanes per invocation).
#[test]
fn whole_suite_at_16_lanes() {
    if pisa_conformance::is_16_lane_child() {
        assert_eq!(
            device_subgroup_size(),
            16,
            "the child process runs lavapipe at 16 lanes"
        );
        return;
    }
    pisa_conformance::rerun_at_16_lanes(22);
}

#[test]
fn whole_suite_without_size_control() {
    // Every other test of this binary, as on a device whose pipelines cannot require a
    // sub-group size (spec-notes §105): virtual lanes for the device's `subgroupSize` in
    // pipelines without a required size, each kernel checking its sub-groups.
    pisa_conformance::rerun_without_size_control(20);
}

#[test]
fn the_memory_checker_names_the_pisa_work_item() {
    // 48 work-items in work-groups of 24 (one partial sub-group each) store their global id
    // into a 40-word buffer and their sub-group's `ired.sum` of local ids into another:
    // global ids 40..47 (work-group 1, local ids 16..23) go past the first buffer's end.
    let src = ".version 0.1;\n.target 100;\n\
        .kernel @k(.param[8] %out, .param[8] %sums) {\n\
        .reg .64b %p, %q, %off;\n.reg .32b %i, %l, %g, %e, %s;\n\
        ld.param.64b %p, [%out];\nld.param.64b %q, [%sums];\n\
        mov.32b %l, %localid.x;\nmov.32b %g, %groupid.x;\nmov.32b %e, %enqueuedlocalsize.x;\n\
        umad.32b %i, %g, %e, %l;\nired.sum.32b %s, %l, 0xffffffff;\n\
        umul.full.32b %off, %i, 4;\nst.global.32b [%q + %off], %s;\n\
        st.global.32b [%p + %off], %i;\n}\n";
    let o = Options {
        checked: true,
        ..lanes32()
    };
    let t = translate_with(src, &o);
    let lanes = t.reflection.kernel("k").unwrap().virtual_lanes;
    assert_eq!(lanes.is_some(), device_subgroup_size() < 32, "{lanes:?}");
    let ctx = pisa_vk::Context::new().unwrap();
    let m = pisa_vk::Module::from_translation(&ctx, "mc.pisa", Arc::new(t)).unwrap();
    let out = ctx.zeroed::<u32>(40).unwrap();
    let sums = ctx.zeroed::<u32>(48).unwrap();
    let err = m
        .dispatch("k", 48u64, 24u64, &[(&out).into(), (&sums).into()])
        .expect_err("a store past the end");
    let pisa_vk::Error::MemoryViolation(v) = err else {
        panic!("{err}");
    };
    let w = &v.work_item;
    assert!((40..48).contains(&w.global[0]), "{v}");
    assert_eq!(w.group, [1, 0, 0], "{v}");
    assert_eq!(w.local[0] as u64 + 24, w.global[0], "{v}");
    assert_eq!(v.further, 7, "{v}");
    assert_eq!(v.site.location.as_ref().unwrap().line, 15, "{v}");
    assert_eq!(
        out.read().unwrap(),
        (0..40).collect::<Vec<u32>>(),
        "the good stores"
    );
    // local ids 0..23 in one partial sub-group: 0 + 1 + ... + 23
    assert_eq!(sums.read().unwrap(), vec![276; 48]);
}

#[test]
fn one_lane_per_invocation_gives_partial_sub_groups_at_the_hardware_width() {
    // `VirtualLanes::SubgroupKernels` where the hardware is as wide as the sub-group (here:
    // the device's own width, as PISA's 32 on a 32-lane GPU): K = 1, and work-groups of any
    // size run, their last sub-group partial, against the reference at that width.
    let h = device_subgroup_size();
    let o = Options {
        subgroup_size: h,
        hardware_subgroup_size: Some(h),
        virtual_lanes: VirtualLanes::SubgroupKernels,
        ..Options::default()
    };
    let t = translate_with(SHAPE, &o);
    assert_eq!(t.reflection.kernel("shape").unwrap().virtual_lanes, Some(1));
    let m = pisa_vk::Module::from_translation(context(), "shape.pisa", Arc::new(t)).unwrap();
    for local in [[1u32, 1, 1], [5, 1, 1], [h + 3, 1, 1], [3, 3, 1]] {
        let n: u32 = local.iter().product();
        let out = context().zeroed::<u32>((4 * n * 2) as usize).unwrap();
        m.dispatch(
            "shape",
            [local[0] * 2, local[1], local[2]],
            local,
            &[(&out).into()],
        )
        .unwrap();
        let got = out.read().unwrap();
        for id in 0..n {
            let w = &got[(4 * (n + id)) as usize..][..4];
            let s = id / h;
            let present = (n - h * s).min(h);
            let mask = if present == 32 {
                u32::MAX
            } else {
                (1 << present) - 1
            };
            let sum: u32 = (h * s..h * s + present).sum();
            assert_eq!(w, [id, id % h, mask, sum], "local {local:?} item {id}");
        }
    }
}

#[test]
fn a_native_sub_group_kernel_runs_any_work_group_size_through_its_partial_entry_point() {
    // Translated natively for the device's own width (as PISA's 32 on a 32-lane GPU): a
    // launch whose work-group x size is a multiple of it runs the kernel's entry point, any
    // other its `.partial` one, on one virtual lane per invocation; both give the values
    // worked out by hand.
    let h = device_subgroup_size();
    let t = translate_with(SHAPE, &Options::with_subgroup_size(h));
    let k = t.reflection.kernel("shape").unwrap();
    assert_eq!(k.virtual_lanes, None);
    assert_eq!(k.partial_entry_point.as_deref(), Some("shape.partial"));
    let m = pisa_vk::Module::from_translation(context(), "shape.pisa", Arc::new(t)).unwrap();
    for local in [
        [2 * h, 1, 1],
        [1, 1, 1],
        [5, 1, 1],
        [h + 3, 1, 1],
        [3, 3, 2],
    ] {
        let n: u32 = local.iter().product();
        let out = context().zeroed::<u32>((4 * n * 2) as usize).unwrap();
        m.dispatch(
            "shape",
            [local[0] * 2, local[1], local[2]],
            local,
            &[(&out).into()],
        )
        .unwrap_or_else(|e| panic!("local {local:?}: {e}"));
        let got = out.read().unwrap();
        for g in 0..2 {
            for id in 0..n {
                let w = &got[(4 * (g * n + id)) as usize..][..4];
                let s = id / h;
                let present = (n - h * s).min(h);
                let mask = if present == 32 {
                    u32::MAX
                } else {
                    (1 << present) - 1
                };
                let sum: u32 = (h * s..h * s + present).sum();
                assert_eq!(
                    w,
                    [id, id % h, mask, sum],
                    "local {local:?} group {g} item {id}"
                );
            }
        }
    }
}

#[test]
fn lanes_outside_a_reduction_keep_dst_written_only_by_the_lanes_that_skipped_them() {
    // Differential seed 29936698092 (generator 4, 16 lanes): `%h` is written in a branch
    // that some lanes skip, then by `ired` whose mask leaves lanes out; those keep `%h`, so
    // `%h` is live at the merge and an inactive lane's copy must survive the branch.
    let body = ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %e, %r, %v, %h;\n.pred %skip;\n\
        mov.32b %i, %groupid.x;\nmov.32b %e, %enqueuedlocalsize.x;\nmov.32b %r, %localid.x;\n\
        umad.32b %i, %i, %e, %r;\n\
        ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 16;\niadd.64b %pin, %pin, %off;\n\
        ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 8;\niadd.64b %pout, %pout, %off;\n\
        ld.global.32b %v, [%pin];\nld.global.32b %e, [%pin + 8];\nmov.32b %h, %v;\n\
        ucmp.ne.32b %skip, %e, 0;\ngoto.cond %skip, L2;\nmov.32b %h, 7;\ngoto L3;\nL2:\nL3:\n\
        ired.sum.32b %h, %v, 0x0000ffff;\nst.global.32b [%pout], %h;";
    let src = pisa_conformance::kernel_module("", body);
    let mut input = Vec::new();
    for i in 0..64u64 {
        input.extend([1000 + i, (i % 3 != 0) as u64]);
    }
    let out = run_both_with(&src, &input, 2, 1, 64, &lanes32(), |a, b| a == b);
    for (i, &h) in out.iter().enumerate() {
        let lane = i % 32;
        let want = if lane < 16 {
            // lanes 0..15 of the sub-group, all back at the merge
            (0..16).map(|l| 1000 + (i - lane + l) as u64).sum::<u64>()
        } else if i % 3 != 0 {
            1000 + i as u64
        } else {
            7
        };
        assert_eq!(h & 0xFFFF_FFFF, want, "work-item {i}");
    }
}

/// A uniform loop around a divergent branch, a register reused for a varying and then a
/// uniform value (the webs pass splits it), rotations by `shfl.idx` whose source is
/// lane-affine in one arm-free block: every path of the divergence analysis, in whole and
/// partial sub-groups, against a host simulation of 32-lane sub-groups.
const ROTATE: &str = ".version 0.1;\n.target 100;\n\
    .kernel @rot(.param[8] %data) {\n\
    .reg .64b %p, %off;\n.reg .32b %i, %v, %w, %j, %src, %x, %lane, %t;\n.pred %odd, %more;\n\
    mov.32b %i, %groupid.x;\numad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\n\
    ld.param.64b %p, [%data];\numul.full.32b %off, %i, 4;\niadd.64b %p, %p, %off;\n\
    ld.global.32b %v, [%p];\nmov.32b %lane, %laneid;\n\
    umul.32b %w, %v, 3;\niadd.32b %v, %v, %w;\n\
    mov.32b %w, %subgroupsize;\nisub.32b %w, %w, 1;\nmov.32b %j, 0;\n\
    and.32b %t, %lane, 1;\nucmp.eq.32b %odd, %t, 1;\n\
    loop:\nisub.32b %src, %lane, %j;\nand.32b %src, %src, %w;\n\
    shfl.idx.32b %x, %v, %src, 0xffffffff;\n\
    goto.cond !%odd, even;\nxor.32b %x, %x, 0x55;\n\
    even:\niadd.32b %v, %v, %x;\n\
    iadd.32b %j, %j, 1;\nucmp.lt.32b %more, %j, 5;\ngoto.cond %more, loop;\n\
    st.global.32b [%p], %v;\n}\n";

/// What [`ROTATE`] leaves in the words of one sub-group of `c` present work-items.
fn rotate_host(v: &mut [u32]) {
    let c = v.len();
    for x in v.iter_mut() {
        *x = x.wrapping_mul(4);
    }
    for j in 0..5usize {
        let before = v.to_vec();
        for (lane, value) in v.iter_mut().enumerate() {
            let src = (lane + 32 - j) % 32;
            // A source lane outside the sub-group is not active: the lane reads its own.
            let mut x = if src < c { before[src] } else { before[lane] };
            if lane % 2 == 1 {
                x ^= 0x55;
            }
            *value = value.wrapping_add(x);
        }
    }
}

#[test]
fn uniform_loops_reused_registers_and_rotations_in_partial_sub_groups() {
    let t = translate_with(ROTATE, &lanes32());
    let m = pisa_vk::Module::from_translation(context(), "rot.pisa", Arc::new(t)).unwrap();
    let data: Vec<u32> = (0..80u32)
        .map(|i| match i % 4 {
            0 => u32::MAX,
            1 => 0,
            2 => 0x8000_0001,
            _ => i.wrapping_mul(2_654_435_761),
        })
        .collect();
    // Work-groups of 40: one whole sub-group and one of 8 work-items each.
    let buf = context().buffer_from(&data).unwrap();
    m.dispatch("rot", 80u64, 40u64, &[(&buf).into()]).unwrap();
    let got = buf.read().unwrap();
    let mut want = data.clone();
    for group in want.chunks_mut(40) {
        let (first, second) = group.split_at_mut(32);
        rotate_host(first);
        rotate_host(second);
    }
    assert_eq!(got, want);
}

/// Lanes that `return` inside a loop whose own test is uniform take no part in what
/// follows it: the reduction after the loop and its `%activemask` see only the lanes that
/// stayed - in whole sub-groups, whose first mask the driver folds to every lane, and in a
/// partial one.
#[test]
fn lanes_that_return_inside_a_uniform_loop_do_nothing_after_it() {
    let body = ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %e, %r, %v, %h, %j, %t;\n\
        .pred %leave, %more;\n\
        mov.32b %i, %groupid.x;\nmov.32b %e, %enqueuedlocalsize.x;\nmov.32b %r, %localid.x;\n\
        umad.32b %i, %i, %e, %r;\n\
        ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 16;\niadd.64b %pin, %pin, %off;\n\
        ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 8;\niadd.64b %pout, %pout, %off;\n\
        ld.global.32b %v, [%pin];\nld.global.32b %e, [%pin + 8];\nmov.32b %j, 0;\n\
        loop:\niadd.32b %t, %j, 1;\nucmp.eq.32b %leave, %e, %t;\ngoto.cond !%leave, stay;\n\
        iadd.32b %t, %j, 100;\nst.global.32b [%pout], %t;\nreturn;\n\
        stay:\niadd.32b %j, %j, 1;\nucmp.lt.32b %more, %j, 3;\ngoto.cond %more, loop;\n\
        ired.sum.32b %h, %v, 0xffffffff;\nmov.32b %t, %activemask;\n\
        st.global.32b [%pout], %h;\nst.global.32b [%pout + 4], %t;";
    let src = pisa_conformance::kernel_module("", body);
    // 118 work-items in work-groups of 64: the second group's second sub-group has 22;
    // a work-item whose word is 1, 2 or 3 returns in that iteration.
    let n = 118usize;
    let mut input = Vec::new();
    for i in 0..n as u64 {
        input.extend([1000 + i, [0, 1, 2, 3, 5][(i * 7 % 5) as usize]]);
    }
    let out = run_both_with(&src, &input, 2, 1, 64, &lanes32(), |a, b| a == b);
    for (s, words) in out.chunks(1).collect::<Vec<_>>().chunks(32).enumerate() {
        let first = if s < 2 { s * 32 } else { 64 + (s - 2) * 32 };
        let lanes = first..(first + 32).min(n).min(if s < 2 { 64 } else { n });
        let stays = |i: usize| !matches!(input[2 * i + 1], 1..=3);
        let sum: u64 = lanes
            .clone()
            .filter(|&i| stays(i))
            .map(|i| 1000 + i as u64)
            .sum();
        let mask: u64 = lanes
            .clone()
            .filter(|&i| stays(i))
            .map(|i| 1u64 << (i - first))
            .sum();
        for (l, w) in words.iter().enumerate() {
            let i = first + l;
            let want = if stays(i) {
                sum | mask << 32
            } else {
                99 + input[2 * i + 1]
            };
            assert_eq!(w[0], want, "work-item {i}");
        }
    }
}

/// Kernels whose every work-item leaves a region at once, on a predicate the same in the
/// whole work-group (found by review, 2026-12-04): the lowering on virtual lanes passes
/// through the code after such an exit with no lane in its masks, and used to run it as if
/// every lane were there (it starts a block run together from the function's first mask),
/// so work-groups that had returned stored, and loops with a uniform top test never ended.
const UNIFORM_EXITS: &str = ".version 0.1;\n.target 100;\n\
.function .32b @f(.reg .32b %x) {\n  .reg .32b %s;\n  .pred %p;\n\
  ucmp.eq.32b %p, 0, 0;\n  return.cond %p, 5;\n  ired.sum.32b %s, %x, 0xffffffff;\n  return %s;\n}\n\
.kernel @ret(.param[8] %out, .param[4] %nblocks) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %g, %n, %s;\n  .pred %done;\n\
  mov.32b %g, %groupid.x;\n  ld.param.32b %n, [%nblocks];\n  ucmp.ge.32b %done, %g, %n;\n\
  return.cond %done;\n  umad.32b %i, %g, %enqueuedlocalsize.x, %localid.x;\n\
  ired.sum.32b %s, %localid.x, 0xffffffff;\n  ld.param.64b %p, [%out];\n\
  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n  st.global.32b [%p], %s;\n}\n\
.kernel @skip(.param[8] %out, .param[4] %flag) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %f, %s;\n  .pred %c;\n\
  mov.32b %i, %localid.x;\n  ired.sum.32b %s, %i, 0xffffffff;\n  ld.param.32b %f, [%flag];\n\
  ucmp.ne.32b %c, %f, 0;\n  goto.cond %c, end;\n  ld.param.64b %p, [%out];\n\
  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n  st.global.32b [%p], %s;\nend:\n}\n\
.kernel @count(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %s, %j, %acc, %one;\n  .pred %c;\n\
  mov.32b %i, %localid.x;\n  mov.32b %j, 0;\n  mov.32b %acc, 0;\n  mov.32b %one, 1;\nloop:\n\
  ucmp.ge.32b %c, %j, 3;\n  goto.cond %c, done;\n  ired.sum.32b %s, %one, 0xffffffff;\n\
  iadd.32b %acc, %acc, %s;\n  iadd.32b %j, %j, 1;\n  goto loop;\ndone:\n\
  umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  st.global.32b [%p], %acc;\n}\n\
.kernel @call(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %s;\n  mov.32b %i, %localid.x;\n  call %s, @f(%i);\n\
  umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  st.global.32b [%p], %s;\n}\n";

#[test]
fn an_exit_every_work_item_takes_skips_the_code_after_it() {
    // Hand-derived, work-groups of `local` work-items (sub-groups of 32, the last partial):
    // `@ret` with one block of work stores the sum of the local ids of each sub-group of
    // work-group 0 and nothing for the others; `@skip` with the flag set stores nothing;
    // `@count` stores 3 times its sub-group's size; `@call` stores the function's early 5.
    let h = device_subgroup_size();
    let on_lanes = [
        lanes32(),
        Options {
            virtual_lanes: VirtualLanes::SubgroupKernels,
            ..Options::clustered(h / 2, h)
        },
    ];
    for o in on_lanes {
        let n = o.subgroup_size;
        let t = translate_with(UNIFORM_EXITS, &o);
        assert!(t.reflection.kernel("ret").unwrap().virtual_lanes.is_some());
        let m = pisa_vk::Module::from_translation(context(), "exits.pisa", Arc::new(t)).unwrap();
        for local in [8u32, 40, 64] {
            let items = (3 * local) as usize;
            let out = context().buffer_from(&vec![0xAAAA_AAAAu32; items]).unwrap();
            m.dispatch(
                "ret",
                items as u64,
                local as u64,
                &[(&out).into(), 1u32.into()],
            )
            .unwrap();
            let got = out.read().unwrap();
            for (i, &g) in got.iter().enumerate() {
                let l = i as u32 % local;
                let first = l - l % n;
                let last = (first + n).min(local);
                let want = match i < local as usize {
                    true => (first..last).sum::<u32>(),
                    false => 0xAAAA_AAAA,
                };
                assert_eq!(g, want, "@ret, local {local}, work-item {i}, {o:?}");
            }
            let out = context().buffer_from(&vec![0xAAAA_AAAAu32; items]).unwrap();
            m.dispatch(
                "skip",
                items as u64,
                local as u64,
                &[(&out).into(), 1u32.into()],
            )
            .unwrap();
            assert_eq!(
                out.read().unwrap(),
                vec![0xAAAA_AAAA; items],
                "@skip, local {local}"
            );
            for (kernel, each) in [("count", 3u32), ("call", 0)] {
                let out = context().zeroed::<u32>(items).unwrap();
                m.dispatch(kernel, items as u64, local as u64, &[(&out).into()])
                    .unwrap();
                for (i, &g) in out.read().unwrap().iter().enumerate() {
                    let l = i as u32 % local;
                    let size = (l - l % n + n).min(local) - (l - l % n);
                    let want = if kernel == "call" { 5 } else { each * size };
                    assert_eq!(g, want, "@{kernel}, local {local}, work-item {i}, {o:?}");
                }
            }
        }
    }
}

/// Per-lane `continue`s that carry lanes into later iterations of a loop whose exit follows
/// them (found by review, 2026-12-05): the divergence analysis took the code after such a
/// branch for code every lane runs together, since it post-dominates the branch, though lanes
/// reach it in different iterations - so each lane ran it once per iteration of any lane.
/// `@latch`: work-item L skips L iterations by a forward `goto` to the latch, then adds 1 to
/// its own word and leaves by a break on a parameter (1: the same for all); `@header`: the
/// same with the `continue` straight to the header (two back edges); `@count`: a counter
/// stepped after the `continue` and stored after the loop. Each word ends at 1 (by hand: one
/// add, one step per work-item).
const CARRIED_APART: &str = ".version 0.1;\n.target 100;\n\
.kernel @latch(.param[8] %out, .param[4] %stop) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %j, %l, %g, %one, %old, %m;\n  .pred %c, %q;\n\
  mov.32b %m, %activemask;\n  umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n  mov.32b %l, %laneid;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  ld.param.32b %g, [%stop];\n  ucmp.ne.32b %q, %g, 0;\n  mov.32b %one, 1;\n  mov.32b %j, 0;\n\
top:\n  iadd.32b %j, %j, 1;\n  ucmp.le.32b %c, %j, %l;\n  goto.cond %c, latch;\n\
  iatom.global.add.32b %old, [%p], %one;\n  goto.cond %q, done;\nlatch:\n  goto top;\ndone:\n}\n\
.kernel @header(.param[8] %out, .param[4] %stop) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %j, %l, %g, %one, %old, %m;\n  .pred %c, %q;\n\
  mov.32b %m, %activemask;\n  umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n  mov.32b %l, %laneid;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  ld.param.32b %g, [%stop];\n  ucmp.ne.32b %q, %g, 0;\n  mov.32b %one, 1;\n  mov.32b %j, 0;\n\
top:\n  iadd.32b %j, %j, 1;\n  ucmp.le.32b %c, %j, %l;\n  goto.cond %c, top;\n\
  iatom.global.add.32b %old, [%p], %one;\n  goto.cond %q, done;\n  goto top;\ndone:\n}\n\
.kernel @count(.param[8] %out, .param[4] %stop) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %j, %l, %g, %k, %m;\n  .pred %c, %q;\n\
  mov.32b %m, %activemask;\n  umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n  mov.32b %l, %laneid;\n\
  ld.param.64b %p, [%out];\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  ld.param.32b %g, [%stop];\n  ucmp.ne.32b %q, %g, 0;\n  mov.32b %j, 0;\n  mov.32b %k, 0;\n\
top:\n  iadd.32b %j, %j, 1;\n  ucmp.le.32b %c, %j, %l;\n  goto.cond %c, latch;\n\
  iadd.32b %k, %k, 1;\n  goto.cond %q, done;\nlatch:\n  goto top;\ndone:\n\
  st.global.32b [%p], %k;\n}\n";

#[test]
fn lanes_a_per_lane_continue_carries_apart_run_the_code_after_it_once() {
    let h = device_subgroup_size();
    let on_lanes = [
        lanes32(),
        // One work-item per invocation: the lowering a 32-lane device uses for partial
        // work-groups (`NAME.partial`).
        Options {
            virtual_lanes: VirtualLanes::SubgroupKernels,
            ..Options::with_subgroup_size(h)
        },
    ];
    for o in on_lanes {
        let t = translate_with(CARRIED_APART, &o);
        let m = pisa_vk::Module::from_translation(context(), "apart.pisa", Arc::new(t)).unwrap();
        for (items, local) in [(32u64, 32u64), (5, 5), (80, 40)] {
            for kernel in ["latch", "header", "count"] {
                let out = context().zeroed::<u32>(items as usize).unwrap();
                m.dispatch(kernel, items, local, &[(&out).into(), 1u32.into()])
                    .unwrap();
                assert_eq!(
                    out.read().unwrap(),
                    vec![1; items as usize],
                    "@{kernel}, {items} work-items in groups of {local}, {o:?}"
                );
            }
        }
    }
    // The reference interpreter agrees (at PISA's width).
    for kernel in ["latch", "header", "count"] {
        for (items, local) in [(32u64, 32u64), (5, 5), (80, 40)] {
            let job = pisa_vk::reference::Job::new(kernel, items, local)
                .arg(pisa_vk::reference::Data::Buffer(vec![
                    0;
                    4 * items as usize
                ]))
                .arg(pisa_vk::reference::Data::Scalar(
                    1u32.to_le_bytes().to_vec(),
                ));
            let out = pisa_conformance::reference_job(
                "apart.pisa",
                CARRIED_APART,
                &job,
                pisa_reference::Config::default(),
            )
            .unwrap();
            let want: Vec<u8> = (0..items).flat_map(|_| 1u32.to_le_bytes()).collect();
            assert_eq!(out.buffers[0], want, "reference @{kernel}, {items}/{local}");
        }
    }
}

/// `shfl.idx` whose lane index is a saturating sum of `%laneid` (found by review): the
/// shortcut that reads one slot of every invocation took `iadd.dsat` for a sum whose low bits
/// follow the lane's. Work-item L reads lane `min(L + 0x7ffffff0, 0x7fffffff) mod 32`: L + 16
/// below 16, 31 from there on; its value is 10 times the lane.
#[test]
fn a_shuffle_index_that_saturates_reads_the_lane_it_names() {
    let src = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .64b %p, %off;\n.reg .32b %lane, %x, %v, %d;\n\
        ld.param.64b %p, [%out];\nmov.32b %lane, %laneid;\n\
        iadd.dsat.32b %x, %lane, 0x7FFFFFF0;\numul.32b %v, %lane, 10;\n\
        shfl.idx.32b %d, %v, %x, 0xffffffff;\n\
        umad.32b %lane, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n\
        umul.full.32b %off, %lane, 4;\niadd.64b %p, %p, %off;\nst.global.32b [%p], %d;\n}\n";
    let t = translate_with(src, &lanes32());
    let m = pisa_vk::Module::from_translation(context(), "sat.pisa", Arc::new(t)).unwrap();
    let out = context().zeroed::<u32>(64).unwrap();
    m.dispatch("k", 64, 32, &[(&out).into()]).unwrap();
    let want: Vec<u32> = (0..64u32)
        .map(|i| if i % 32 < 16 { 10 * (i % 32 + 16) } else { 310 })
        .collect();
    assert_eq!(out.read().unwrap(), want);
}
