//! lavapipe with `LP_NATIVE_VECTOR_WIDTH=512` has sub-groups of 16, and `PISA_VK_DEVICE` as a
//! number selects by index.
//!
//! One test only in this binary: it sets the process environment before Vulkan is loaded.

mod common;

use common::*;
use pisa_runtime::{Context, DeviceSelector};

#[test]
fn wider_vectors_give_16_lane_subgroups() {
    std::env::set_var("LP_NATIVE_VECTOR_WIDTH", "512");
    let devices = Context::devices().unwrap();
    let lp = devices
        .iter()
        .find(|d| d.driver_name == "llvmpipe")
        .expect("lavapipe installed");
    assert!(lp.name.contains("512 bits"), "{}", lp.name);
    assert_eq!(
        (lp.subgroup_size, lp.min_subgroup_size, lp.max_subgroup_size),
        (16, 16, 16)
    );

    std::env::set_var("PISA_VK_DEVICE", lp.index.to_string());
    let ctx = Context::new(DeviceSelector::Default).unwrap();
    assert_eq!(ctx.info().index, lp.index);
    let spirv = fill_kernel();
    let mut d = desc(&spirv, 64, 16, "fill16");
    d.required_subgroup_size = Some(16);
    d.require_full_subgroups = true;
    let p = ctx.create_pipeline(&d).unwrap();
    let buf = ctx.create_buffer(64 * 4 * 2).unwrap();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 128), [2, 1, 1])
        .unwrap();
    let got = read_u32s(&buf, 128);
    assert!(got.iter().enumerate().all(|(i, v)| *v == i as u32 * 3 + 7));

    d.required_subgroup_size = Some(8);
    assert!(matches!(
        ctx.create_pipeline(&d),
        Err(pisa_runtime::Error::MissingFeatures { .. })
    ));
}
