//! Sub-group communication (isa-7: `shfl`, `ired`, `fred`, `redfirstidx`) on the device.
//!
//! lavapipe's sub-groups are 8 lanes (16 with `LP_NATIVE_VECTOR_WIDTH=512`), so sub-group
//! kernels are translated for the device's width (`Options::subgroup_size`, non-conforming)
//! and compared bit for bit with the reference interpreter run at the same width. Every
//! test runs at the width of the process's device; [`whole_suite_at_16_lanes`] runs this
//! test binary again with `LP_NATIVE_VECTOR_WIDTH=512` (never 1024: there lavapipe claims 32
//! lanes but its ballots and reductions see 16), so both 8 and 16 lanes are covered.
//!
//! Each sub-group of a dispatch is one scenario: a participation mask (sub-group-uniform),
//! which lanes execute the instruction (divergence), and per-lane values, `shfl` controls
//! and old `dst` values, random and edge values mixed.

mod subgroup_cases;

use pisa_conformance::{context, device_subgroup_size, load, run_u64_with, translate_with};
use pisa_translator::Options;
use subgroup_cases::*;

fn width() -> u32 {
    device_subgroup_size()
}

/// Runs `inst` over the scenarios at the device's width against the reference, bit for bit;
/// also checks `%activemask` inside the branch against the execute flags. Returns the
/// device's `dst` per work-item.
fn check(bits: u32, packed: bool, inst: &str, input: &[u64]) -> Vec<u64> {
    check_with(
        &Options::with_subgroup_size(width()),
        bits,
        packed,
        inst,
        input,
    )
}

#[test]
fn shfl_every_mode_with_and_without_segments() {
    every_shfl(&Options::with_subgroup_size(width()), 100, |w, seed, v| {
        scenarios(w, seed, v)
    });
}

#[test]
fn shfl_hand_derived() {
    // Down by 2 within segments of 8 lanes, clamped at the segment's end (cval 0b11111 per
    // the encoding table), with an immediate control and mask; lane values 100 + lane.
    let w = width();
    let src = kernel(32, false, "shfl.dn.sg.32b %d, %v, 0x00181f02, 0xffffffff");
    let mut input = Vec::new();
    for i in 0..LOCAL {
        input.extend([100 + i % w as u64, 0, 0, 1, 7]);
    }
    let out = run_u64_with(
        &src,
        &input,
        IN_PER,
        2,
        LOCAL,
        &Options::with_subgroup_size(w),
    );
    for i in 0..LOCAL as usize {
        let lane = i as u64 % w as u64;
        // in bounds when lane + 2 stays in the lane's segment of 8 (and the sub-group)
        let want = if lane % 8 + 2 <= 7 && lane + 2 < w as u64 {
            102 + lane
        } else {
            100 + lane
        };
        assert_eq!(out[2 * i], want, "lane {lane}");
    }
}

#[test]
fn ired_every_operation_and_type() {
    every_ired(&Options::with_subgroup_size(width()), 200, |w, seed, v| {
        scenarios(w, seed, v)
    });
}

#[test]
fn fred_every_operation_type_and_nan_mode() {
    every_fred(&Options::with_subgroup_size(width()), 300, |w, seed, v| {
        scenarios(w, seed, v)
    });
}

#[test]
fn fred_hand_derived_signed_zeros_and_nans() {
    // One sub-group, every lane executing and participating: lane 0 has -0, lane 1 +0,
    // lane 2 a signalling NaN (payload 1), lane 3 -inf; the rest +1.0.
    let w = width() as usize;
    let run_lane = |inst: &str, lane: usize| -> u64 {
        let mut input = Vec::new();
        for lane in 0..LOCAL as usize {
            let v = match lane % w {
                0 => 0x8000_0000,
                1 => 0,
                2 => 0xFF80_0001,
                3 => 0xFF80_0000,
                _ => 0x3F80_0000,
            };
            input.extend([v, 0, u32::MAX as u64, 1, 0]);
        }
        let out = run_u64_with(
            &kernel(32, false, inst),
            &input,
            IN_PER,
            2,
            LOCAL,
            &Options::with_subgroup_size(w as u32),
        );
        out[2 * lane]
    };
    let run = |inst: &str| run_lane(inst, 0);
    assert_eq!(run("fred.min.f %d, %v, %m"), 0xFF80_0000, "min: -inf");
    assert_eq!(run("fred.max.f %d, %v, %m"), 0x3F80_0000, "max: 1.0");
    assert_eq!(
        run("fred.min.nanp.f %d, %v, %m"),
        0xFFC0_0001,
        "nanp: the NaN, quiet"
    );
    assert_eq!(run("fred.absmax.f %d, %v, %m"), 0x7F80_0000, "absmax: +inf");
    assert_eq!(
        run("fred.absmax.nanp.f %d, %v, %m"),
        0x7FC0_0001,
        "|NaN|, quiet"
    );
    // -0 < +0: min of lanes 0 and 1 only is -0, max is +0.
    assert_eq!(run("fred.min.f %d, %v, 3"), 0x8000_0000);
    assert_eq!(run("fred.max.f %d, %v, 3"), 0);
    // Only the NaN participates: it comes back quiet; lane 0 keeps its `dst` (0).
    assert_eq!(run_lane("fred.max.f %d, %v, 4", 2), 0xFFC0_0001);
    assert_eq!(run("fred.max.f %d, %v, 4"), 0);
}

#[test]
fn shfl_clamp_follows_the_semantics_block() {
    // The specification's first `.sg` example (cval 0 with segmask 0b11000) draws lanes
    // 24..29 reading 26..31, but its semantics block clamps at `(%laneid & segmask) |
    // (cval & ~segmask)` = the segment's first lane: every lane keeps its own value
    // (spec-notes §37). Its second example (cval 0b11101) agrees with the block.
    let w = width() as u64;
    let run = |control: u32| -> Vec<u64> {
        let src = kernel(
            32,
            false,
            &format!("shfl.dn.sg.32b %d, %v, {control:#x}, %m"),
        );
        let mut input = Vec::new();
        for i in 0..LOCAL {
            input.extend([100 + i % w, 0, u32::MAX as u64, 1, 7]);
        }
        let out = run_u64_with(
            &src,
            &input,
            IN_PER,
            2,
            LOCAL,
            &Options::with_subgroup_size(w as u32),
        );
        out.iter().step_by(2).copied().collect()
    };
    let got = run(0x0018_0002);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 100 + i as u64 % w, "cval 0: lane {i} keeps its value");
    }
    let got = run(0x0018_1d02);
    for (i, g) in got.iter().enumerate() {
        let lane = i as u64 % w;
        let want = if lane % 8 + 2 <= 5 {
            102 + lane
        } else {
            100 + lane
        };
        assert_eq!(*g, want, "cval 0b11101: lane {lane}");
    }
}

#[test]
fn redfirstidx_over_masks() {
    let w = width();
    let mut input = scenarios(w, 400, int_value(32));
    // The specification's loop does not end without a participating lane: give every
    // scenario one (the first executing lane) so that the result is defined.
    for chunk in input.chunks_mut(IN_PER * w as usize) {
        let first = (0..w as usize)
            .find(|&l| chunk[l * IN_PER + 3] != 0)
            .unwrap();
        let mask = chunk[2] | 1 << first;
        for l in 0..w as usize {
            chunk[l * IN_PER + 2] = mask;
        }
    }
    let out = check(32, false, "redfirstidx.32b %d, %m", &input);
    for (s, chunk) in input.chunks(IN_PER * w as usize).enumerate() {
        let exec: u64 = (0..w as usize)
            .map(|l| chunk[l * IN_PER + 3] << l)
            .fold(0, |a, b| a | b);
        let want = (chunk[2] & exec).trailing_zeros() as u64;
        for l in (0..w as usize).filter(|&l| chunk[l * IN_PER + 3] != 0) {
            assert_eq!(out[s * w as usize + l], want, "scenario {s} lane {l}");
        }
    }
}

#[test]
fn scan_kernel_exact() {
    let w = width();
    let t = translate_with(SCAN, &Options::with_subgroup_size(w));
    let m =
        pisa_vk::Module::from_translation(context(), "scan.pisa", std::sync::Arc::new(t)).unwrap();
    let data: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0xFFFF_0000 | 1)
        .collect();
    let buf = context().buffer_from(&data).unwrap();
    m.dispatch("scan", 64u64, 64u64, &[(&buf).into()]).unwrap();
    let got = buf.read().unwrap();
    for (i, g) in got.iter().enumerate() {
        let start = i - i % w as usize;
        let want = data[start..=i].iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(*g, want, "work-item {i}");
    }
}

fn example_text(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example file")
}

#[test]
fn reduction_example_exact() {
    let w = width();
    let t = translate_with(
        &example_text("subgroup_reduce.pisa"),
        &Options::with_subgroup_size(w),
    );
    let m = pisa_vk::Module::from_translation(context(), "reduce", std::sync::Arc::new(t)).unwrap();
    let n = 256usize;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| {
            if i % 7 == 0 {
                u32::MAX - i
            } else {
                i * 1000 + 3
            }
        })
        .collect();
    let input = context().buffer_from(&data).unwrap();
    let sums = context().zeroed::<u32>(n / w as usize).unwrap();
    m.dispatch(
        "subgroup_reduce",
        n as u64,
        64u64,
        &[(&input).into(), (&sums).into()],
    )
    .unwrap();
    let got = sums.read().unwrap();
    for (s, g) in got.iter().enumerate() {
        let want = data[s * w as usize..(s + 1) * w as usize]
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(*g, want, "sub-group {s}");
    }
}

/// Two kernels in one module: `plain` uses no sub-group state, `shuffles` uses `shfl`.
const MIXED: &str = ".version 0.1;\n.target 100;\n\
.kernel @plain(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %v;\n  ld.param.64b %p, [%out];\n\
  mov.32b %v, 42;\n  st.global.32b [%p], %v;\n}\n\
.kernel @shuffles(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %v;\n\
  ld.param.64b %p, [%out];\n  mov.32b %v, %localid.x;\n  shfl.xor.32b %v, %v, 1, 0xffffffff;\n\
  st.global.32b [%p], %v;\n}\n";

#[test]
fn sub_group_kernels_are_refused_without_32_lanes_and_others_run() {
    let info = context().info().clone();
    let m = load(MIXED);
    let out = context().zeroed::<u32>(1).unwrap();
    if info.max_subgroup_size >= 32 {
        // a device with 32-wide sub-groups runs both: every work-item stores its
        // partner's %localid (itself xor 1), so the word holds one of 0..32
        m.dispatch("shuffles", 32u64, 32u64, &[(&out).into()])
            .expect("a device with 32-wide sub-groups runs a shfl kernel");
        assert!(out.read().unwrap()[0] < 32);
        m.dispatch("plain", 1u64, 1u64, &[(&out).into()]).unwrap();
        assert_eq!(out.read().unwrap(), vec![42]);
        pisa_conformance::check_validation();
        return;
    }
    let err = m
        .dispatch("shuffles", 32u64, 32u64, &[(&out).into()])
        .expect_err("a shfl kernel needs 32-wide sub-groups")
        .to_string();
    // Where pipelines cannot require a size at all (spec-notes §105), the kernel's entry
    // check finds the device's narrower sub-groups instead.
    let refusal = if pisa_conformance::without_size_control() {
        "full sub-groups of 32 invocations"
    } else {
        "requiredSubgroupSize 32"
    };
    assert!(err.contains(refusal), "{err}");
    assert!(err.contains("shuffles"), "{err}");
    m.dispatch("plain", 1u64, 1u64, &[(&out).into()]).unwrap();
    assert_eq!(out.read().unwrap(), vec![42]);
    let t = translate_with(MIXED, &Options::default());
    let k = t.reflection.kernel("plain").unwrap();
    assert_eq!(k.subgroup_size, None);
    assert_eq!(
        t.reflection.kernel("shuffles").unwrap().subgroup_size,
        Some(32)
    );
}

/// Runs this test binary again with lavapipe's 16-lane sub-groups; the child process runs
/// every test above at width 16.
#[test]
fn whole_suite_at_16_lanes() {
    if pisa_conformance::is_16_lane_child() {
        assert_eq!(width(), 16, "the child process runs lavapipe at 16 lanes");
        return;
    }
    pisa_conformance::rerun_at_16_lanes(11);
}
