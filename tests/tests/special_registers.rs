//! Special registers (arch-4) on the device, with a partial last work-group in every
//! dimension and a global offset, against values worked out from the launch; and the
//! sub-group gate: a kernel that reads sub-group state needs its sub-group size.

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

#[test]
fn sizes_ids_offsets_and_partial_work_groups() {
    let m = load(KERNEL);
    let (global, local, offset) = ([10u64, 5, 3], [4u64, 2, 2], [100u64, 7, 0]);
    let n = (global[0] * global[1] * global[2]) as usize;
    let out = context().zeroed::<u64>(n * 12).unwrap();
    let launch = Launch {
        global: Dim3 {
            size: global,
            dims: 3,
        },
        local: Dim3 {
            size: local,
            dims: 3,
        },
        offset,
    };
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

const LANES: &str = ".version 0.1;\n.target 100;\n\
.kernel @lanes(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %l, %lane, %size;\n\
  ld.param.64b %p, [%out];\n  mov.32b %l, %localid.x;\n  umul.full.32b %off, %l, 8;\n  iadd.64b %p, %p, %off;\n\
  mov.32b %lane, %laneid;\n  mov.32b %size, %subgroupsize;\n\
  st.global.32b [%p], %lane;\n  st.global.32b [%p + 4], %size;\n}\n";

#[test]
fn sub_group_state_needs_its_sub_group_size() {
    // PISA's 32-wide sub-groups: lavapipe cannot run them, and says so by name.
    let m = load(LANES);
    let out = context().zeroed::<u32>(64).unwrap();
    let run = m.dispatch("lanes", 32u64, 32u64, &[(&out).into()]);
    let info = context().info().clone();
    if info.max_subgroup_size < 32 {
        let text = run
            .expect_err("32-wide sub-groups are refused on this device")
            .to_string();
        assert!(text.contains("requiredSubgroupSize 32"), "{text}");
    } else {
        // a device with 32-wide sub-groups runs it as PISA says
        run.expect("32-wide sub-groups run on this device");
        let got = out.read().unwrap();
        for l in 0..32u32 {
            assert_eq!(got[2 * l as usize], l, "%laneid of work-item {l}");
            assert_eq!(got[2 * l as usize + 1], 32, "%subgroupsize");
        }
    }
    // Translated (non-conforming) for the device's own width, it runs.
    let width = info.subgroup_size;
    let t = translate_with(LANES, &pisa_translator::Options::with_subgroup_size(width));
    let m = Module::from_translation(context(), "lanes.pisa", std::sync::Arc::new(t)).unwrap();
    m.dispatch("lanes", 32u64, 32u64, &[(&out).into()]).unwrap();
    let got = out.read().unwrap();
    for l in 0..32u32 {
        assert_eq!(got[2 * l as usize], l % width, "%laneid of work-item {l}");
        assert_eq!(got[2 * l as usize + 1], width, "%subgroupsize");
    }
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}
