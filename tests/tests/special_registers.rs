//! Special registers (arch-4) on the device, with a partial last work-group in every
//! dimension and a global offset, against values worked out from the launch; and the
//! sub-group registers: numbered by linear local id on every device in kernels without
//! cross-lane operations, from hardware sub-groups (with their size gate) in the others.

use pisa_conformance::{context, load, translate_with};
use pisa_vk::{Dim3, Launch, Module};

const KERNEL: &str = ".version 0.1;\n.target 100;\n\
.kernel @k(.param[8] %out) {\n\
  .reg .64b %p, %off, %v, %gx, %gy, %gz, %lin;\n\
  .reg .32b %t, %gidx, %gidy, %gidz, %lx, %ly, %lz, %ex, %ey;\n\
  ld.param.64b %p, [%out];\n\
  mov.32b %gidx, %groupid.x;\n  mov.32b %gidy, %groupid.y;\n  mov.32b %gidz, %groupid.z;\n\
  mov.32b %lx, %localid.x;\n  mov.32b %ly, %localid.y;\n  mov.32b %lz, %localid.z;\n\
  mov.32b %ex, %enqueuedlocalsize.x;\n  mov.32b %ey, %enqueuedlocalsize.y;\n\
  umad.32b %t, %gidx, %ex, %lx;\n  zext.64b.32b %gx, %t;\n\
  umad.32b %t, %gidy, %ey, %ly;\n  zext.64b.32b %gy, %t;\n\
  mov.32b %t, %enqueuedlocalsize.z;\n  umad.32b %t, %gidz, %t, %lz;\n  zext.64b.32b %gz, %t;\n\
  // linear global id (without offset) = x + y*GX + z*GX*GY\n\
  mov.64b %v, %globalsize.x;\n  umad.64b %lin, %gy, %v, %gx;\n\
  mov.64b %off, %globalsize.y;\n  umul.64b %off, %off, %v;\n  umad.64b %lin, %gz, %off, %lin;\n\
  umul.64b %off, %lin, 96;\n  iadd.64b %p, %p, %off;\n\
  mov.32b %t, %localsize.x;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p], %v;\n\
  mov.32b %t, %localsize.y;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p + 8], %v;\n\
  mov.32b %t, %localsize.z;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p + 16], %v;\n\
  mov.32b %t, %groupcount.x;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p + 24], %v;\n\
  mov.32b %t, %groupcount.y;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p + 32], %v;\n\
  mov.64b %v, %globalsize.z;\n  st.global.64b [%p + 40], %v;\n\
  mov.64b %v, %globaloffset.x;\n  st.global.64b [%p + 48], %v;\n\
  mov.64b %v, %globaloffset.y;\n  st.global.64b [%p + 56], %v;\n\
  mov.32b %t, %workdim;\n  zext.64b.32b %v, %t;\n  st.global.64b [%p + 64], %v;\n\
  mov.64b %v, %printfbuffer;\n  st.global.64b [%p + 72], %v;\n\
  st.global.64b [%p + 80], %gx;\n  st.global.64b [%p + 88], %gz;\n\
}\n";

/// A launch of `global` work-items in work-groups of `local`, both given in 3 dimensions.
fn launch_3d(global: [u64; 3], local: [u64; 3], offset: [u64; 3]) -> Launch {
    let dims = |size| Dim3 { size, dims: 3 };
    Launch {
        global: dims(global),
        local: dims(local),
        offset,
    }
}

#[test]
fn sizes_ids_offsets_and_partial_work_groups() {
    let m = load(KERNEL);
    let (global, local, offset) = ([10u64, 5, 3], [4u64, 2, 2], [100u64, 7, 0]);
    let n = (global[0] * global[1] * global[2]) as usize;
    let out = context().zeroed::<u64>(n * 12).unwrap();
    let launch = launch_3d(global, local, offset);
    m.dispatch_launch("k", &launch, &[(&out).into()]).unwrap();
    let got = out.read().unwrap();
    for z in 0..global[2] {
        for y in 0..global[1] {
            for x in 0..global[0] {
                let lin = (x + y * global[0] + z * global[0] * global[1]) as usize;
                let row = &got[lin * 12..lin * 12 + 12];
                let part = |g: u64, d: usize| local[d].min(global[d] - (g / local[d]) * local[d]);
                let want = [
                    part(x, 0),
                    part(y, 1),
                    part(z, 2),
                    global[0].div_ceil(local[0]),
                    global[1].div_ceil(local[1]),
                    global[2],
                    offset[0],
                    offset[1],
                    3,
                    0,
                    x,
                    z,
                ];
                assert_eq!(row, &want, "work-item ({x}, {y}, {z})");
            }
        }
    }
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}

#[test]
fn work_dim_counts_the_dimensions_given() {
    let m = load(KERNEL);
    let out = context().zeroed::<u64>(12).unwrap();
    m.dispatch("k", 1u64, 1u64, &[(&out).into()]).unwrap();
    assert_eq!(out.read().unwrap()[8], 1);
    m.dispatch("k", (1u64, 1u64), (1u64, 1u64), &[(&out).into()])
        .unwrap();
    assert_eq!(out.read().unwrap()[8], 2);
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}

/// Writes `%laneid` and `%subgroupsize` at the work-item's linear global id (without the
/// offset): no cross-lane operation, so lanes are numbered by linear local id.
const LANES: &str = ".version 0.1;\n.target 100;\n\
.kernel @lanes(.param[8] %out) {\n\
  .reg .64b %p, %off, %g, %lin, %n;\n  .reg .32b %t, %lane, %size;\n\
  ld.param.64b %p, [%out];\n\
  mov.32b %t, %groupid.z;\n  mov.32b %size, %enqueuedlocalsize.z;\n  umul.32b %t, %t, %size;\n\
  mov.32b %size, %localid.z;\n  iadd.32b %t, %t, %size;\n  zext.64b.32b %lin, %t;\n\
  mov.64b %n, %globalsize.y;\n  umul.64b %lin, %lin, %n;\n\
  mov.32b %t, %groupid.y;\n  mov.32b %size, %enqueuedlocalsize.y;\n  umul.32b %t, %t, %size;\n\
  mov.32b %size, %localid.y;\n  iadd.32b %t, %t, %size;\n  zext.64b.32b %g, %t;\n\
  iadd.64b %lin, %lin, %g;\n  mov.64b %n, %globalsize.x;\n  umul.64b %lin, %lin, %n;\n\
  mov.32b %t, %groupid.x;\n  mov.32b %size, %enqueuedlocalsize.x;\n  umul.32b %t, %t, %size;\n\
  mov.32b %size, %localid.x;\n  iadd.32b %t, %t, %size;\n  zext.64b.32b %g, %t;\n\
  iadd.64b %lin, %lin, %g;\n\
  umul.64b %off, %lin, 8;\n  iadd.64b %p, %p, %off;\n\
  mov.32b %lane, %laneid;\n  mov.32b %size, %subgroupsize;\n\
  st.global.32b [%p], %lane;\n  st.global.32b [%p + 4], %size;\n}\n";

/// The `%laneid` PISA's virtual machine gives work-item `g` (global id) of an NDRange of
/// `global` in work-groups of `local` when it divides work-groups by linear local id:
/// `(x + Lx·(y + Ly·z)) mod 32` with `L` the work-group's `%localsize` (smaller in a
/// partial work-group).
fn linear_lane(g: [u64; 3], global: [u64; 3], local: [u64; 3]) -> u32 {
    let size = |d: usize| local[d].min(global[d] - g[d] / local[d] * local[d]);
    let l = |d: usize| g[d] % local[d];
    ((l(0) + size(0) * (l(1) + size(1) * l(2))) % 32) as u32
}

#[test]
fn sub_group_registers_without_cross_lane_operations_run_on_every_device() {
    // Work-groups of 16x2x2 = 64 (two sub-groups), partial in x and y: numbered by linear
    // local id over %localsize, whatever the device's own sub-groups (lavapipe: 8 lanes).
    let m = load(LANES);
    let (global, local) = ([40u64, 3, 2], [16u64, 2, 2]);
    let n = (global[0] * global[1] * global[2]) as usize;
    let out = context().zeroed::<u32>(2 * n).unwrap();
    let launch = launch_3d(global, local, [0; 3]);
    m.dispatch_launch("lanes", &launch, &[(&out).into()])
        .unwrap();
    let got = out.read().unwrap();
    let mut i = 0;
    for z in 0..global[2] {
        for y in 0..global[1] {
            for x in 0..global[0] {
                let want = linear_lane([x, y, z], global, local);
                assert_eq!(got[2 * i], want, "%laneid of work-item ({x}, {y}, {z})");
                assert_eq!(got[2 * i + 1], 32, "%subgroupsize");
                i += 1;
            }
        }
    }
    // By hand: (39, 2, 1) is in the corner work-group of 8x1x2: 7 + 8·(0 + 1·1) = 15.
    assert_eq!(linear_lane([39, 2, 1], global, local), 15);
    assert!(
        m.reflection().kernels[0].subgroup_size.is_none(),
        "needs no sub-group size"
    );
    pisa_conformance::check_validation();
}

/// `%activemask` is a cross-lane operation: the kernel is a sub-group kernel.
const MASK: &str = ".version 0.1;\n.target 100;\n\
.kernel @mask(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %l, %lane, %bits;\n\
  ld.param.64b %p, [%out];\n  mov.32b %l, %localid.x;\n  umul.full.32b %off, %l, 8;\n  iadd.64b %p, %p, %off;\n\
  mov.32b %lane, %laneid;\n  mov.32b %bits, %activemask;\n\
  st.global.32b [%p], %lane;\n  st.global.32b [%p + 4], %bits;\n}\n";

/// What a launch of a kernel translated for 32-lane hardware says on a narrower device: the
/// pipeline cannot require 32-lane sub-groups, or, where pipelines cannot require a size at
/// all (spec-notes §105), the kernel's entry check found the device's narrower sub-groups.
fn refusal() -> &'static str {
    if pisa_conformance::without_size_control() {
        "full sub-groups of 32 invocations"
    } else {
        "requiredSubgroupSize 32"
    }
}

#[test]
fn cross_lane_operations_need_their_sub_group_size() {
    // PISA's 32-wide sub-groups: lavapipe cannot run them, and says so by name.
    let m = load(MASK);
    let out = context().zeroed::<u32>(64).unwrap();
    let run = m.dispatch("mask", 32u64, 32u64, &[(&out).into()]);
    let info = context().info().clone();
    if info.max_subgroup_size < 32 {
        let text = run
            .expect_err("32-wide sub-groups are refused on this device")
            .to_string();
        assert!(text.contains(refusal()), "{text}");
    } else {
        // a device with 32-wide sub-groups runs it as PISA says
        run.expect("32-wide sub-groups run on this device");
        let got = out.read().unwrap();
        for l in 0..32u32 {
            assert_eq!(got[2 * l as usize], l, "%laneid of work-item {l}");
            assert_eq!(
                got[2 * l as usize + 1],
                u32::MAX,
                "%activemask of work-item {l}"
            );
        }
    }
    // Translated (non-conforming) for the device's own width, it runs on hardware lanes.
    let width = info.subgroup_size;
    let t = translate_with(MASK, &pisa_translator::Options::with_subgroup_size(width));
    let m = Module::from_translation(context(), "mask.pisa", std::sync::Arc::new(t)).unwrap();
    m.dispatch("mask", 32u64, 32u64, &[(&out).into()]).unwrap();
    let got = out.read().unwrap();
    let all = if width == 32 {
        u32::MAX
    } else {
        (1 << width) - 1
    };
    for l in 0..32u32 {
        assert_eq!(got[2 * l as usize], l % width, "%laneid of work-item {l}");
        assert_eq!(got[2 * l as usize + 1], all, "%activemask of work-item {l}");
    }
    pisa_conformance::check_validation();
}

/// A helper that reads `%laneid`, called by a kernel without cross-lane operations and by
/// one with them: one function's code, two numberings (the kernel's flag picks).
const MIXED: &str = ".version 0.1;\n.target 100;\n\
.function .32b @lane() {\n  .reg .32b %r;\n  mov.32b %r, %laneid;\n  return %r;\n}\n\
.kernel @plain(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %l, %lane;\n\
  ld.param.64b %p, [%out];\n  mov.32b %l, %localid.x;\n  umul.full.32b %off, %l, 4;\n  iadd.64b %p, %p, %off;\n\
  call %lane, @lane();\n  st.global.32b [%p], %lane;\n}\n\
.kernel @cross(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %l, %lane, %bits;\n\
  ld.param.64b %p, [%out];\n  mov.32b %l, %localid.x;\n  umul.full.32b %off, %l, 4;\n  iadd.64b %p, %p, %off;\n\
  call %lane, @lane();\n  mov.32b %bits, %activemask;\n  and.32b %bits, %bits, 0;\n\
  iadd.32b %lane, %lane, %bits;\n  st.global.32b [%p], %lane;\n}\n";

#[test]
fn a_function_serving_both_kinds_of_kernel_numbers_lanes_per_kernel() {
    let m = load(MIXED);
    let kernels = &m.reflection().kernels;
    assert_eq!(kernels[0].subgroup_size, None, "@plain");
    assert_eq!(kernels[1].subgroup_size, Some(32), "@cross");
    let out = context().zeroed::<u32>(64).unwrap();
    m.dispatch("plain", 64u64, 64u64, &[(&out).into()]).unwrap();
    let want: Vec<u32> = (0..64).map(|i| i % 32).collect();
    assert_eq!(out.read().unwrap(), want, "@plain: linear local id mod 32");
    let width = context().info().subgroup_size;
    if context().info().max_subgroup_size < 32 {
        let err = m
            .dispatch("cross", 64u64, 64u64, &[(&out).into()])
            .expect_err("32-wide sub-groups are refused on this device");
        assert!(err.to_string().contains(refusal()), "{err}");
    }
    // At the device's width both kernels run: hardware lanes for @cross.
    let t = translate_with(MIXED, &pisa_translator::Options::with_subgroup_size(width));
    let m = Module::from_translation(context(), "mixed.pisa", std::sync::Arc::new(t)).unwrap();
    for k in ["plain", "cross"] {
        m.dispatch(k, 64u64, 64u64, &[(&out).into()]).unwrap();
        let want: Vec<u32> = (0..64).map(|i| i % width).collect();
        assert_eq!(out.read().unwrap(), want, "@{k} at {width} lanes");
    }
    pisa_conformance::check_validation();
}
