//! The clustered sub-group mapping (`Options::hardware_subgroup_size`): each aligned cluster
//! of N lanes of a hardware sub-group of H lanes is one PISA sub-group, as PISA's 32 lanes
//! are one half of an AMD wave64.
//!
//! lavapipe cannot run 64-wide sub-groups, so the mapping is run at lavapipe's own width H
//! (8 lanes, or 16 with `LP_NATIVE_VECTOR_WIDTH=512`) with clusters of N = H/2 (and H/4 in
//! [`quarter_clusters`]), and every output word is compared with the reference interpreter
//! run at width N. [`whole_suite_at_16_lanes`] runs this binary again at 16 lanes, so the
//! N = 8 of H = 16 case runs wherever lavapipe does. The wave64 configuration itself (N = 32,
//! H = 64) is translated and checked with spirv-val ([`wave64_translates_and_validates`]).
//!
//! Work-groups of 64 work-items span several clusters, and the last work-group of each
//! dispatch is partial, so that its last present cluster is partial and the clusters after
//! it are empty.

mod subgroup_cases;

use pisa_conformance::{
    context, device_subgroup_size, disassemble, kernel_module, reference_u64, run_both_with,
    run_u64_with, translate_with,
};
use pisa_translator::{Options, SourceFile};
use std::sync::Arc;
use subgroup_cases::*;

/// The hardware sub-group width of the process's device.
fn hw() -> u32 {
    device_subgroup_size()
}

/// PISA sub-groups of half the hardware width.
fn halves() -> Options {
    Options::clustered(hw() / 2, hw())
}

/// `input` (words of `IN_PER` per work-item) without its last cluster and 3 lanes of the one
/// before: the last work-group is then partial, its last present cluster too.
fn partial(mut input: Vec<u64>, n: u32) -> Vec<u64> {
    let drop = (n as usize + 3).min(input.len() / IN_PER);
    input.truncate(input.len() - drop * IN_PER);
    input
}

/// Scenarios for PISA sub-groups of `n` lanes, cut by [`partial`].
fn cases(n: u32, seed: u64, value: impl FnMut(&mut rand::rngs::StdRng) -> u64) -> Vec<u64> {
    partial(scenarios(n, seed, value), n)
}

#[test]
fn shfl_every_mode_with_and_without_segments() {
    every_shfl(&halves(), 500, |n, seed, v| cases(n, seed, v));
}

#[test]
fn shfl_reads_only_its_own_cluster() {
    // Every lane reads lane 0 of its PISA sub-group (`shfl.idx` with offset 0): the value
    // of the first lane of its cluster, never one of the other cluster.
    let o = halves();
    let n = o.subgroup_size as u64;
    let src = kernel(32, false, "shfl.idx.32b %d, %v, 0, 0xffffffff");
    let mut input = Vec::new();
    for i in 0..LOCAL {
        input.extend([1000 + i, 0, 0, 1, 7]);
    }
    let out = run_u64_with(&src, &input, IN_PER, 2, LOCAL, &o);
    for i in 0..LOCAL {
        let first = i - i % n;
        assert_eq!(out[2 * i as usize], 1000 + first, "work-item {i}");
        let all = (1u64 << n) - 1;
        assert_eq!(out[2 * i as usize + 1], all, "%activemask of work-item {i}");
    }
}

#[test]
fn ired_every_operation_and_type() {
    every_ired(&halves(), 600, |n, seed, v| cases(n, seed, v));
}

#[test]
fn fred_every_operation_type_and_nan_mode() {
    every_fred(&halves(), 700, |n, seed, v| cases(n, seed, v));
}

#[test]
fn fred_takes_the_first_nan_of_its_own_cluster() {
    // Hand-derived: in every cluster lane 1 holds a signalling NaN whose payload is the
    // cluster's number, the other lanes 1.0. `.nanp` gives each cluster its own NaN, quiet.
    let o = halves();
    let n = o.subgroup_size as u64;
    let src = kernel(32, false, "fred.max.nanp.f %d, %v, %m");
    let mut input = Vec::new();
    for i in 0..LOCAL {
        let v = if i % n == 1 {
            0x7F80_0000 | (1 + i / n)
        } else {
            0x3F80_0000
        };
        input.extend([v, 0, u32::MAX as u64, 1, 0]);
    }
    let out = run_u64_with(&src, &input, IN_PER, 2, LOCAL, &o);
    for i in 0..LOCAL {
        assert_eq!(
            out[2 * i as usize],
            0x7FC0_0000 | (1 + i / n),
            "work-item {i}"
        );
    }
}

#[test]
fn redfirstidx_over_masks() {
    let o = halves();
    let n = o.subgroup_size as usize;
    let mut input = cases(n as u32, 800, int_value(32));
    // Give every cluster with an executing lane a participating one (the first executing
    // lane), so that the result is defined (spec-notes §37).
    for chunk in input.chunks_mut(IN_PER * n) {
        let lanes = chunk.len() / IN_PER;
        let Some(first) = (0..lanes).find(|&l| chunk[l * IN_PER + 3] != 0) else {
            continue;
        };
        let mask = chunk[2] | 1 << first;
        for l in 0..lanes {
            chunk[l * IN_PER + 2] = mask;
        }
    }
    let out = check_with(&o, 32, false, "redfirstidx.32b %d, %m", &input);
    for (s, chunk) in input.chunks(IN_PER * n).enumerate() {
        let lanes = chunk.len() / IN_PER;
        let exec: u64 = (0..lanes)
            .map(|l| chunk[l * IN_PER + 3] << l)
            .fold(0, |a, b| a | b);
        let want = (chunk[2] & exec).trailing_zeros() as u64;
        for l in (0..lanes).filter(|&l| chunk[l * IN_PER + 3] != 0) {
            assert_eq!(out[s * n + l], want, "scenario {s} lane {l}");
        }
    }
}

/// Stores `%laneid | %subgroupsize << 8` and `%activemask` of work-item `i` where input word
/// `i` is not 0 (divergence), 0xDEAD elsewhere.
const LANES: &str = ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %g, %s, %l, %e, %a, %b, %t;\n\
.pred %skip;\n\
mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
umad.32b %i, %g, %s, %l;\n\
ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 8;\niadd.64b %pin, %pin, %off;\n\
ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 16;\niadd.64b %pout, %pout, %off;\n\
ld.global.32b %e, [%pin];\nmov.32b %a, 0xDEAD;\nmov.32b %b, 0xDEAD;\n\
ucmp.eq.32b %skip, %e, 0;\ngoto.cond %skip, after;\n\
mov.32b %a, %laneid;\nmov.32b %t, %subgroupsize;\nshl.32b %t, %t, 8;\nor.32b %a, %a, %t;\n\
mov.32b %b, %activemask;\n\
after:\nst.global.32b [%pout], %a;\nst.global.32b [%pout + 8], %b;";

#[test]
fn laneid_subgroupsize_and_activemask_under_divergence() {
    let o = halves();
    let n = o.subgroup_size as usize;
    let src = kernel_module("", LANES);
    // Execute flags: a fixed pattern, then the last work-group cut short (partial clusters).
    let items = 3 * LOCAL as usize - n - 3;
    let input: Vec<u64> = (0..items)
        .map(|i| ((i * 7 + i / 5) % 3 != 0) as u64)
        .collect();
    let out = run_both_with(&src, &input, 1, 2, LOCAL, &o, |a, b| a == b);
    for (i, &e) in input.iter().enumerate() {
        if e == 0 {
            assert_eq!(out[2 * i], 0xDEAD, "work-item {i}");
            continue;
        }
        assert_eq!(
            out[2 * i],
            ((i % n) | (n << 8)) as u64,
            "%laneid of work-item {i}"
        );
        let base = i - i % n;
        let mask = (base..(base + n).min(items))
            .filter(|&j| input[j] != 0)
            .fold(0u64, |m, j| m | 1 << (j - base));
        assert_eq!(out[2 * i + 1], mask, "%activemask of work-item {i}");
    }
}

#[test]
fn quarter_clusters() {
    // Four PISA sub-groups per hardware sub-group: the cluster base is not only 0 and H/2.
    let o = Options::clustered(hw() / 4, hw());
    let n = o.subgroup_size;
    let insts = [
        (32, "shfl.idx.sg.32b %d, %v, %c, %m"),
        (32, "shfl.up.32b %d, %v, %c, %m"),
        (32, "ired.sum.32b %d, %v, %m"),
        (16, "ired.smin.16b %d, %v, %m"),
    ];
    for (k, (bits, inst)) in insts.iter().enumerate() {
        let input = cases(n, 900 + k as u64, int_value(*bits));
        check_with(&o, *bits, false, inst, &input);
    }
    let input = cases(n, 950, float_value("f"));
    check_with(&o, 32, false, "fred.absmax.nanp.f %d, %v, %m", &input);
}

/// [`halves`] on virtual lanes: one work-item per invocation, each cluster of a hardware
/// sub-group one PISA sub-group (spec-notes §115), as a device without sub-group size control
/// wider than PISA's sub-groups runs every sub-group kernel.
fn halves_on_lanes() -> Options {
    Options {
        virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
        ..halves()
    }
}

#[test]
fn clustered_virtual_lanes_every_instruction() {
    // The whole matrix at work-groups that are whole hardware sub-groups (the driver folds
    // the lane masks), the last one cut short.
    let o = halves_on_lanes();
    every_shfl(&o, 1500, |n, seed, v| cases(n, seed, v));
    every_ired(&o, 1600, |n, seed, v| cases(n, seed, v));
    every_fred(&o, 1700, |n, seed, v| cases(n, seed, v));
    let q = Options {
        virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
        ..Options::clustered(hw() / 4, hw())
    };
    let input = cases(q.subgroup_size, 1800, int_value(32));
    check_with(&q, 32, false, "shfl.xor.sg.32b %d, %v, %c, %m", &input);
    check_with(&q, 32, false, "ired.umax.32b %d, %v, %m", &input);
    let t = translate_with(&kernel_module("", ALL), &o);
    assert_eq!(t.reflection.kernel("k").unwrap().virtual_lanes, Some(1));
}

/// Scenarios of `n`-lane sub-groups (seeds from `seed`) for at least `items` work-items.
fn enough_scenarios(
    n: u32,
    seed: u64,
    items: usize,
    mut value: impl FnMut(&mut rand::rngs::StdRng) -> u64,
) -> Vec<u64> {
    let mut input = Vec::new();
    let mut k = 0;
    while input.len() < items * IN_PER {
        input.extend(scenarios(n, seed + 1000 * k, &mut value));
        k += 1;
    }
    input
}

/// The first `items` work-items of `input` (scenarios of `n`-lane sub-groups), each sub-group
/// of the launch in work-groups of `local` given one participation mask (that of its first
/// work-item), as isa-7 asks of the lanes that take part together.
fn launch_masks(mut input: Vec<u64>, items: usize, local: u64, n: u32) -> Vec<u64> {
    input.truncate(items * IN_PER);
    let (local, n) = (local as usize, n as usize);
    for i in 0..items {
        let first = i - i % local + (i % local) / n * n;
        input[i * IN_PER + 2] = input[first * IN_PER + 2];
    }
    input
}

#[test]
fn any_work_group_size_runs_clustered() {
    // Work-groups of sizes that are no multiple of the hardware sub-group (nor of the PISA
    // one): natively clustered kernels take their entry point on clustered virtual lanes
    // there, and kernels on virtual lanes number work-items by cluster; the last sub-group
    // of each work-group is partial and the clusters after it are empty. Every output word
    // against the reference at the PISA width.
    let h = hw() as u64;
    for o in [
        halves(),
        halves_on_lanes(),
        Options::clustered(hw() / 4, hw()),
    ] {
        let n = o.subgroup_size;
        for (k, local) in [1, 3, n as u64 + 1, h - 1, h + 3, 2 * h + n as u64 + 1, 100]
            .into_iter()
            .enumerate()
        {
            // About 3 work-groups, the last one partial.
            let items = (3 * local as usize).saturating_sub(2).max(2);
            let input = launch_masks(
                enough_scenarios(n, 2000 + k as u64, items, int_value(32)),
                items,
                local,
                n,
            );
            for inst in [
                "shfl.idx.sg.32b %d, %v, %c, %m",
                "shfl.dn.32b %d, %v, %c, %m",
                "ired.sum.32b %d, %v, %m",
                "shfl.up.sg.32b %d, %v, %c, %m",
            ] {
                run_both_with(
                    &kernel(32, false, inst),
                    &input,
                    IN_PER,
                    2,
                    local,
                    &o,
                    |a, b| a == b,
                );
            }
            let input = launch_masks(
                enough_scenarios(n, 2100 + k as u64, items, float_value("f")),
                items,
                local,
                n,
            );
            let src = kernel(32, false, "fred.max.nanp.f %d, %v, %m");
            run_both_with(&src, &input, IN_PER, 2, local, &o, |a, b| a == b);
        }
    }
}

/// Each work-item adds 1 to word `i` (its global id) and its sub-group's `ired.sum` of 1 to
/// word `i` of a second buffer, with atomics: a work-item run twice, or by an invocation
/// that should be absent, shows as a count other than 1 (an idempotent store would not).
const COUNT: &str = ".version 0.1;\n.target 100;\n\
.kernel @count(.param[8] %hits, .param[8] %sums) {\n\
  .reg .64b %p, %q, %off;\n  .reg .32b %i, %g, %s, %l, %one, %n, %old;\n\
  mov.32b %g, %groupid.x;\n  mov.32b %s, %enqueuedlocalsize.x;\n  mov.32b %l, %localid.x;\n\
  umad.32b %i, %g, %s, %l;\n  umul.full.32b %off, %i, 4;\n\
  ld.param.64b %p, [%hits];\n  iadd.64b %p, %p, %off;\n\
  ld.param.64b %q, [%sums];\n  iadd.64b %q, %q, %off;\n\
  mov.32b %one, 1;\n  ired.sum.32b %n, %one, 0xffffffff;\n\
  iatom.global.add.32b %old, [%p], %one;\n  iatom.global.add.32b %old, [%q], %n;\n}\n";

#[test]
fn every_work_item_runs_once_in_any_work_group() {
    // Hand-derived: every count is 1, and the sum is the size of the work-item's PISA
    // sub-group (N, or what is left of the work-group for its last sub-group).
    let h = hw() as u64;
    for o in [
        halves(),
        halves_on_lanes(),
        Options::clustered(hw() / 4, hw()),
    ] {
        let n = o.subgroup_size as u64;
        let m = pisa_conformance::load_with(COUNT, &o);
        for local in [1, 3, n, n + 1, h, h + 3, 2 * h, 100] {
            let items = 3 * local - 1;
            let hits = context().zeroed::<u32>(items as usize).unwrap();
            let sums = context().zeroed::<u32>(items as usize).unwrap();
            m.dispatch("count", items, local, &[(&hits).into(), (&sums).into()])
                .unwrap();
            assert_eq!(
                hits.read().unwrap(),
                vec![1; items as usize],
                "local {local}, {o:?}"
            );
            for (i, &sum) in sums.read().unwrap().iter().enumerate() {
                let (l, size) = (
                    i as u64 % local,
                    local.min(items - i as u64 / local * local),
                );
                let want = n.min(size - l / n * n);
                assert_eq!(sum as u64, want, "work-item {i}, local {local}, {o:?}");
            }
        }
    }
}

#[test]
fn laneid_and_activemask_by_cluster_in_odd_work_groups() {
    // Hand-derived: in work-groups of `local` work-items, work-item `l` of a work-group is
    // lane `l % N` of sub-group `l / N`, and `%activemask` holds the executing lanes of
    // that sub-group that exist.
    let o = halves_on_lanes();
    let n = o.subgroup_size as usize;
    let src = kernel_module("", LANES);
    for local in [1usize, 5, hw() as usize + 3] {
        let items = 3 * local - 1;
        let input: Vec<u64> = (0..items).map(|i| (i % 5 != 2) as u64).collect();
        let out = run_u64_with(&src, &input, 1, 2, local as u64, &o);
        for (i, &e) in input.iter().enumerate() {
            if e == 0 {
                assert_eq!(out[2 * i], 0xDEAD, "work-item {i}");
                continue;
            }
            let (group, l) = (i / local, i % local);
            assert_eq!(
                out[2 * i],
                ((l % n) | (n << 8)) as u64,
                "%laneid of work-item {i} (local {local})"
            );
            let first = group * local + l - l % n;
            let end = (first + n).min(group * local + local).min(items);
            let mask = (first..end)
                .filter(|&j| input[j] != 0)
                .fold(0u64, |m, j| m | 1 << (j - first));
            assert_eq!(
                out[2 * i + 1],
                mask,
                "%activemask of work-item {i} (local {local})"
            );
        }
    }
}

#[test]
fn the_host_api_clusters_when_the_device_cannot_run_the_width() {
    // lavapipe runs exactly one width (min = max), so PISA sub-groups of half of it can only
    // run clustered: `Module::from_source_with` picks that mapping by itself.
    let ctx = context();
    let n = hw() / 2;
    let m =
        pisa_vk::Module::from_source_with(ctx, "scan.pisa", SCAN, &Options::with_subgroup_size(n))
            .unwrap();
    let k = m.reflection().kernel("scan").unwrap();
    assert_eq!(
        (k.subgroup_size, k.hardware_subgroup_size),
        (Some(n), Some(hw()))
    );
    let data: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0xFFFF_0000 | 1)
        .collect();
    let buf = ctx.buffer_from(&data).unwrap();
    m.dispatch("scan", 64u64, 64u64, &[(&buf).into()]).unwrap();
    pisa_conformance::check_validation();
    let got = buf.read().unwrap();
    for (i, g) in got.iter().enumerate() {
        let start = i - i % n as usize;
        let want = data[start..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(*g, want, "work-item {i}");
    }
    // At the device's own width nothing changes where the context can require a size
    // (without that control, every width runs on virtual lanes of the device's width).
    let native = pisa_vk::device_options(ctx, &Options::with_subgroup_size(hw())).expect("options");
    let sized = pisa_vk::can_require_subgroup_size(ctx.enabled_features());
    assert_eq!(native.hardware_subgroup_size, (!sized).then(hw));
}

#[test]
fn clustered_sizes_are_picked_from_the_device_range() {
    let pick = |n: u32, min: u32, max: u32| {
        let mut info = context().info().clone();
        info.min_subgroup_size = min;
        info.max_subgroup_size = max;
        info.subgroup_size = max;
        pisa_vk::clustered_subgroup_size(&info, n)
    };
    assert_eq!(
        pick(32, 64, 64),
        Some(64),
        "wave64 only: PISA's 32 lanes as halves"
    );
    assert_eq!(pick(32, 32, 64), None, "runs 32 lanes natively");
    assert_eq!(pick(32, 4, 128), None, "Intel-like range with 32");
    assert_eq!(pick(32, 8, 16), None, "lavapipe: no multiple of 32");
    assert_eq!(pick(32, 128, 128), Some(128));
    assert_eq!(pick(8, 16, 64), Some(16), "the smallest multiple");
    assert_eq!(pick(24, 64, 64), None, "not a sub-group size");
    assert_eq!(pick(0, 64, 64), None);
    assert_eq!(pick(64, 128, 128), None, "PISA widths stop at 32");
}

/// Every sub-group instruction and register, for the translation-only checks.
const ALL: &str = ".reg .32b %v, %d, %c, %m, %a;\n.reg .16b %h, %hd;\n.reg .v2.16b %p, %pd;\n\
mov.32b %v, %localid.x;\nmov.32b %m, %activemask;\nmov.32b %c, %laneid;\n\
mov.32b %a, %subgroupsize;\n\
shfl.up.32b %d, %v, 1, %m;\nshfl.dn.sg.32b %d, %d, %c, %m;\nshfl.xor.32b %d, %d, 3, 0xffff;\n\
shfl.idx.sg.32b %d, %d, 0x00181f02, %m;\n\
ired.sum.32b %d, %d, %m;\nired.absmax.32b %d, %d, %m;\nmov.16b %h, 3;\n\
ired.umin.16b %hd, %h, %m;\nfred.max.nanp.f %d, %d, %m;\nfred.absmax.hf %hd, %hd, %m;\n\
mov.16b %p.x, %h;\nmov.16b %p.y, %hd;\nfred.min.bfx2 %pd, %p, 0xffff0000;\n\
redfirstidx.32b %a, %m;";

#[test]
fn wave64_translates_and_validates() {
    let src = kernel_module("", ALL);
    for (n, h) in [(32, 64), (32, 128), (16, 64), (1, 32)] {
        // `translate_with` runs spirv-val on the module.
        let t = translate_with(&src, &Options::clustered(n, h));
        let k = t.reflection.kernel("k").unwrap();
        assert_eq!(
            (k.subgroup_size, k.hardware_subgroup_size),
            (Some(n), Some(h))
        );
        let asm = disassemble(&t.spirv);
        assert!(asm.contains("ClusteredReduce"), "{asm}");
        assert!(asm.contains("GroupNonUniformClustered"), "{asm}");
        // A translation that checks its sub-groups sums over the whole hardware sub-group
        // once, at the entry of the partial entry point.
        if !pisa_conformance::without_size_control() {
            assert!(
                !asm.contains(" Reduce "),
                "no whole-sub-group reduction\n{asm}"
            );
        }
    }
    // Clustered virtual lanes, checked as on a wave64 without sub-group size control.
    for (n, h) in [(32, 64), (32, 128)] {
        let o = Options {
            virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
            check_subgroup_size: true,
            ..Options::clustered(n, h)
        };
        let t = translate_with(&src, &o);
        let k = t.reflection.kernel("k").unwrap();
        assert_eq!(
            (k.subgroup_size, k.hardware_subgroup_size, k.virtual_lanes),
            (Some(n), Some(h), Some(1))
        );
        assert_eq!(
            t.reflection.subgroup_check.unwrap().hardware_subgroup_size,
            h
        );
        assert!(disassemble(&t.spirv).contains("ClusteredReduce"));
    }
    // Native: plain `Reduce`, no clusters; the hardware size is the PISA size.
    let t = translate_with(&src, &Options::default());
    let k = t.reflection.kernel("k").unwrap();
    assert_eq!(
        (k.subgroup_size, k.hardware_subgroup_size),
        (Some(32), Some(32))
    );
    assert!(!disassemble(&t.spirv).contains("Clustered"));
    // `Some(N)` is the native mapping.
    let same = translate_with(&src, &Options::clustered(32, 32));
    assert_eq!(same.spirv, t.spirv);
}

#[test]
fn invalid_mappings_are_errors() {
    let file = Arc::new(SourceFile::new("t.pisa", kernel_module("", ALL)));
    for (n, h, why) in [
        (8, Some(12), "hardware sub-group size 12"),
        (32, Some(256), "hardware sub-group size 256"),
        (64, None, "sub-group size 64"),
        (0, Some(64), "sub-group size 0"),
        (12, Some(48), "sub-group size 12"),
    ] {
        let o = Options {
            hardware_subgroup_size: h,
            virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
            ..Options::with_subgroup_size(n)
        };
        let err = match pisa_translator::compile(&file, &o) {
            Ok(_) => panic!("{n} on {h:?} was accepted"),
            Err(d) => d.render(),
        };
        assert!(err.contains(why), "{n} on {h:?}: {err}");
    }
}

#[test]
fn the_reference_width_is_the_pisa_width() {
    // The same input at PISA width N: the reference at N agrees with the device clustered,
    // and differs from the reference at H (a sum over twice the lanes).
    let o = halves();
    let n = o.subgroup_size;
    let src = kernel(32, false, "ired.sum.32b %d, %v, 0xffffffff");
    let input: Vec<u64> = (0..LOCAL).flat_map(|i| [i + 1, 0, 0, 1, 0]).collect();
    let dev = run_both_with(&src, &input, IN_PER, 2, LOCAL, &o, |a, b| a == b);
    let wide = reference_u64(&src, &input, IN_PER, 2, LOCAL, hw());
    assert_ne!(dev[0], wide[0]);
    assert_eq!(dev[0], (1..=n as u64).sum::<u64>());
}

/// Runs this test binary again with lavapipe's 16-lane sub-groups (N = 8 on H = 16; never
/// `LP_NATIVE_VECTOR_WIDTH=1024`, where lavapipe claims 32 lanes but its ballots and
/// reductions see 16).
#[test]
fn whole_suite_at_16_lanes() {
    if pisa_conformance::is_16_lane_child() {
        assert_eq!(hw(), 16, "the child process runs lavapipe at 16 lanes");
        return;
    }
    pisa_conformance::rerun_at_16_lanes(20);
}

/// Runs this test binary again as on a device whose pipelines cannot require a sub-group
/// size (spec-notes §105, §115): every clustered kernel then runs on clustered virtual lanes
/// in pipelines without a required size, checking its sub-groups at entry.
#[test]
fn whole_suite_without_size_control() {
    pisa_conformance::rerun_without_size_control(18);
}

#[test]
fn every_spec_example_translates_clustered_and_validates() {
    // Each example of the spec (translator/tests/data/examples) on 64- and 128-lane hardware:
    // natively clustered (sub-group kernels get a partial entry point on clustered virtual
    // lanes) and on clustered virtual lanes with the entry check of a device without size
    // control. A module may be refused (an example that imports what no file exports), never
    // panic, and every module made with a kernel passes spirv-val.
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../translator/tests/data/examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pisa"))
        .collect();
    files.sort();
    assert!(files.len() > 100, "{} examples", files.len());
    let (mut translated, mut sub) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let file = Arc::new(SourceFile::new(path.display().to_string(), text));
        for h in [64, 128] {
            let on_lanes = Options {
                virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
                check_subgroup_size: true,
                ..Options::clustered(32, h)
            };
            for o in [Options::clustered(32, h), on_lanes] {
                // A module without kernels has no entry point to validate.
                let compiled = pisa_translator::compile(&file, &o);
                if let Some(t) = compiled.ok().filter(|t| !t.reflection.kernels.is_empty()) {
                    if let Err(e) = pisa_conformance::validate(&t.spirv) {
                        panic!("{} on {h} lanes: {e}", path.display());
                    }
                    translated += 1;
                    sub += t
                        .reflection
                        .kernels
                        .iter()
                        .any(|k| k.subgroup_size.is_some()) as usize;
                }
            }
        }
    }
    assert!(
        translated >= 380 && sub >= 16,
        "{translated} modules, {sub} with sub-group kernels"
    );
}

/// The reproduction of docs/driver-bugs.md, "Clustered operations at 16 lanes beside another
/// thread": two threads each translate, compile and run `PISA_STRESS_KERNELS` (default 300)
/// new clustered-`ired` kernels (a distinct mask each, so every pipeline is new) against the
/// reference. At 16 lanes (`LP_NATIVE_VECTOR_WIDTH=512`) one run in five failed (1 kernel in
/// 3,000); at 8 lanes none did (0 in 3,000). Ignored: it measures a driver's rare fault.
#[test]
#[ignore]
fn fresh_clustered_kernels_from_two_threads() {
    let env = |name: &str, default: u32| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (n, base) = (env("PISA_STRESS_KERNELS", 300), env("PISA_STRESS_FIRST", 0));
    std::thread::scope(|s| {
        for t in 0..2u32 {
            s.spawn(move || {
                let o = halves_on_lanes();
                let input = cases(o.subgroup_size, 1800 + t as u64, int_value(32));
                for i in 0..n {
                    let k = base.wrapping_add(t * 0x8000 + i);
                    let mask = 0xffff_ffffu32 ^ ((k & 0xffff) << 16);
                    check_with(
                        &o,
                        32,
                        false,
                        &format!("ired.sum.32b %d, %v, {mask:#x}"),
                        &input,
                    );
                }
            });
        }
    });
}
