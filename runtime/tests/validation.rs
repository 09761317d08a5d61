//! With `PISA_VK_VALIDATION=1` the Khronos validation layer checks everything the runtime
//! does with the test kernels, and must report nothing.
//!
//! One test only in this binary: it sets the process environment.

mod common;

use common::*;
use pisa_runtime::{Context, DeviceSelector};

#[test]
fn test_kernels_produce_no_validation_messages() {
    std::env::set_var("PISA_VK_VALIDATION", "1");
    std::env::set_var("PISA_VK_DEVICE", "llvmpipe");
    let ctx = Context::new(DeviceSelector::Default).expect("validation layer installed");
    assert!(ctx.info().name.contains("llvmpipe"));
    // Context creation: a validation layer older than the driver (1.3.239 here, Mesa 25)
    // reports the device extension and feature structure it does not know,
    // VK_KHR_shader_maximal_reconvergence (VkStructureType 1000434000). Those are expected;
    // anything else is a failure.
    let creation: Vec<String> = ctx
        .validation_messages()
        .into_iter()
        .inspect(|m| eprintln!("context creation: {}", &m[..m.len().min(300)]))
        .filter(|m| {
            !(m.contains("VK_KHR_shader_maximal_reconvergence is not supported by this layer")
                || m.contains("unknown VkStructureType (1000434000)"))
        })
        .collect();

    let fill = fill_kernel();
    for local in [1u32, 7, 64] {
        let p = ctx
            .create_pipeline(&desc(&fill, local, 16, "fill"))
            .unwrap();
        let buf = ctx.create_buffer(local as u64 * 3 * 4).unwrap();
        ctx.dispatch(&p, &addr_n_push(buf.device_address(), local * 3), [3, 1, 1])
            .unwrap();
        let got = read_u32s(&buf, local as usize * 3);
        assert!(got.iter().enumerate().all(|(i, v)| *v == i as u32 * 3 + 7));
    }
    let copy = copy_push_kernel();
    let p = ctx
        .create_pipeline(&desc(&copy, 32, 128, "copy_push"))
        .unwrap();
    let buf = ctx.create_buffer(128).unwrap();
    let mut push = buf.device_address().to_le_bytes().to_vec();
    push.resize(128, 0x5A);
    ctx.dispatch(&p, &push, [1, 1, 1]).unwrap();
    let empty = empty_kernel();
    let p = ctx.create_pipeline(&desc(&empty, 1, 0, "empty")).unwrap();
    ctx.dispatch(&p, &[], [2, 2, 2]).unwrap();
    let spin = spin_kernel();
    let p = ctx.create_pipeline(&desc(&spin, 1, 16, "spin")).unwrap();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 1), [1, 1, 1])
        .unwrap();
    let sg = ctx.info().subgroup_size;
    let mut d = desc(&fill, sg * 2, 16, "fill_sg");
    d.required_subgroup_size = Some(sg);
    d.require_full_subgroups = true;
    let p = ctx.create_pipeline(&d).unwrap();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 16), [1, 1, 1])
        .unwrap();
    drop(p);
    drop(buf);

    let messages = ctx.validation_messages();
    assert!(
        creation.is_empty() && messages.is_empty(),
        "validation messages:\n{}\n{}",
        creation.join("\n"),
        messages.join("\n")
    );
}
