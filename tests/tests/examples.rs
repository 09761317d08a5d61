//! The programs of `examples/` run on the device, with their results worked out by hand.

use pisa_conformance::{context, translate};
use pisa_vk::Module;
use std::sync::Arc;

fn example(name: &str) -> Module {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("example file");
    Module::from_translation(context(), &path, Arc::new(translate(&text))).expect("load")
}

#[test]
fn vector_add() {
    let m = example("vector_add.pisa");
    let ctx = context();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let (ba, bb, bc) = (
        ctx.buffer_from(&a).unwrap(),
        ctx.buffer_from(&b).unwrap(),
        ctx.zeroed::<f32>(n).unwrap(),
    );
    // 1000 work-items in groups of 64: the last group is partial.
    m.dispatch(
        "vector_add",
        n as u64,
        64u64,
        &[(&ba).into(), (&bb).into(), (&bc).into(), (n as u32).into()],
    )
    .unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| i as f32 * 0.5 + (1000.0 - i as f32))
        .collect();
    assert_eq!(bc.read().unwrap(), want);
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}

#[test]
fn saxpy_is_fused() {
    let m = example("saxpy.pisa");
    let ctx = context();
    // a*x + y where a*x is not representable: a fused multiply-add rounds once.
    let a = 1.0f32 + f32::EPSILON;
    let xs = vec![1.0f32 - f32::EPSILON / 2.0, 2.0, -3.0, 0.0, 1e30];
    let ys = vec![-1.0f32, 0.5, 3.0, -0.0, -1e30];
    let (bx, by) = (ctx.buffer_from(&xs).unwrap(), ctx.buffer_from(&ys).unwrap());
    m.dispatch(
        "saxpy",
        5u64,
        2u64,
        &[a.into(), (&bx).into(), (&by).into(), 5u32.into()],
    )
    .unwrap();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| a.mul_add(*x, *y)).collect();
    let got = by.read().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_bits(), w.to_bits(), "got {g:e}, want {w:e}");
    }
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}

#[test]
fn shared_memory_reduction_with_barriers() {
    let m = example("reduce.pisa");
    let ctx = context();
    let groups = 8usize;
    let input: Vec<u32> = (0..groups * 64)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761))
        .collect();
    let (bi, bs) = (
        ctx.buffer_from(&input).unwrap(),
        ctx.zeroed::<u32>(groups).unwrap(),
    );
    m.dispatch(
        "reduce",
        (groups * 64) as u64,
        64u64,
        &[(&bi).into(), (&bs).into()],
    )
    .unwrap();
    let want: Vec<u32> = input
        .chunks(64)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    assert_eq!(bs.read().unwrap(), want);
    // the validation layer reported nothing for this test's Vulkan calls
    pisa_conformance::check_validation();
}

#[path = "../../examples/host_api.rs"]
mod host_api;

#[test]
fn host_api_example() {
    let (data, count) = host_api::run().expect("example runs");
    // Scaled by 5 twice: once by a dispatch, once in a stream.
    assert_eq!(data, vec![25, 50, 75, 100, 125, 150, 175]);
    assert_eq!(count, 7);
}
