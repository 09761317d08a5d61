//! A 2^24-element sum reduction (`examples/sum_reduce.pisa`: grid-strided partial sums, a
//! `shfl.xor` butterfly per sub-group, one `iatom.global.add` per sub-group) on the machine's
//! Vulkan device, against a plain-Rust sum of the same data on the CPU. Both sums wrap at 32
//! bits, and the bench checks that they agree before timing. The ratio of the two times is
//! the figure to report (device time includes submission and the fence wait; the data is
//! already on the device).
//!
//! On a device whose sub-groups are narrower than PISA's 32 lanes (lavapipe: 8 or 16), the
//! kernel is translated for the device's width (the non-conforming `subgroup_size` option):
//! it is written for any width.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pisa_vk::{Context, Module, Options};
use std::hint::black_box;

const N: usize = 1 << 24;
const BLOCK: u64 = 256;
const GROUPS: u64 = 1024;

fn cpu_sum(data: &[u32]) -> u32 {
    data.iter().fold(0u32, |a, &x| a.wrapping_add(x))
}

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let info = ctx.info().clone();
    let width = if info.max_subgroup_size >= 32 {
        32
    } else {
        info.subgroup_size
    };
    let src = include_str!("../../examples/sum_reduce.pisa");
    let options = Options::with_subgroup_size(width);
    let module = Module::from_source_with(&ctx, "sum_reduce.pisa", src, &options).expect("load");
    // Deterministic pseudo-random words (xorshift), not all small.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let data: Vec<u32> = (0..N)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect();
    let input = ctx.buffer_from(&data).expect("input buffer");
    let total = ctx.zeroed::<u32>(1).expect("total");
    let n = N as u32;
    let run = || {
        total.write(&[0]).expect("reset");
        module
            .dispatch(
                "sum_reduce",
                GROUPS * BLOCK,
                BLOCK,
                &[(&input).into(), (&total).into(), n.into()],
            )
            .expect("dispatch");
        total.read().expect("read")[0]
    };
    assert_eq!(run(), cpu_sum(&data), "device and CPU sums differ");

    let mut g = c.benchmark_group("sum_2^24_u32");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.bench_function(
        format!("device ({}, {width}-lane sub-groups)", info.name),
        |b| b.iter(run),
    );
    g.bench_function("cpu plain Rust", |b| b.iter(|| cpu_sum(black_box(&data))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
