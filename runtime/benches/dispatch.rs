//! Benchmarks: dispatch overhead (an empty kernel; a 64-invocation kernel writing a tiny
//! buffer) and pipeline creation (from the in-memory cache, a driver-cache hit, and a new
//! specialization that the driver must build; on lavapipe the LLVM compile happens at the
//! first dispatch, so that is measured too).
//!
//! `cargo bench -p pisa-runtime --bench dispatch`. Runs on the default device
//! (`PISA_VK_DEVICE` to choose). Mesa's on-disk shader cache is turned off for this process
//! (`MESA_SHADER_CACHE_DISABLE`), so "new specialization" measures a real compile.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::PipelineDescExt;
use criterion::{criterion_group, criterion_main, Criterion};
use pisa_runtime::{Context, DeviceSelector};

fn context() -> Context {
    // Single-threaded here: nothing else reads the environment yet.
    std::env::set_var("MESA_SHADER_CACHE_DISABLE", "true");
    Context::new(DeviceSelector::Default).expect("a Vulkan device")
}

fn dispatch(c: &mut Criterion) {
    let ctx = context();
    let empty = common::empty_kernel();
    let fill = common::fill_kernel();
    let p_empty = ctx
        .create_pipeline(&common::desc(&empty, 1, 0, "empty"))
        .unwrap();
    let p_fill = ctx
        .create_pipeline(&common::desc(&fill, 64, 16, "fill"))
        .unwrap();
    let buf = ctx.create_buffer(256).unwrap();
    let push = common::addr_n_push(buf.device_address(), 64);
    let mut g = c.benchmark_group(format!("dispatch [{}]", ctx.info().name));
    g.bench_function("empty kernel, 1 group", |b| {
        b.iter(|| ctx.dispatch(&p_empty, &[], black_box([1, 1, 1])).unwrap())
    });
    g.bench_function("64 invocations writing 256 bytes", |b| {
        b.iter(|| ctx.dispatch(&p_fill, black_box(&push), [1, 1, 1]).unwrap())
    });
    g.finish();
}

fn pipeline_creation(c: &mut Criterion) {
    let ctx = context();
    let fill = common::fill_kernel();
    let mut g = c.benchmark_group(format!("create_pipeline [{}]", ctx.info().name));
    g.bench_function("in-memory cache hit", |b| {
        let _keep = ctx
            .create_pipeline(&common::desc(&fill, 32, 16, "k"))
            .unwrap();
        b.iter(|| {
            ctx.create_pipeline(&common::desc(&fill, 32, 16, "k"))
                .unwrap()
        })
    });
    g.bench_function("driver cache hit (in-memory cache cleared)", |b| {
        b.iter(|| {
            ctx.clear_pipeline_cache();
            ctx.create_pipeline(&common::desc(&fill, 32, 16, "k"))
                .unwrap()
        })
    });
    // Each iteration a local size not used before in this process, so the driver must build
    // a new pipeline. lavapipe translates at vkCreateComputePipelines but JIT-compiles with
    // LLVM at the first dispatch, so both are measured.
    let mut sizes = (1..=1024u32).flat_map(|x| {
        (1..=1024 / x).flat_map(move |y| (2..=1024 / (x * y)).map(move |z| [x, y, z]))
    });
    let buf = ctx.create_buffer(16).unwrap();
    let push = common::addr_n_push(buf.device_address(), 0);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(2));
    g.bench_function("new specialization: create", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let local = sizes.next().expect("more local sizes than iterations");
                let d = common::desc(&fill, 1, 16, "k").with_local(local);
                let t = Instant::now();
                let p = ctx.create_pipeline(&d).unwrap();
                total += t.elapsed();
                drop(p);
                ctx.clear_pipeline_cache();
            }
            total
        })
    });
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("new specialization: create + first dispatch", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let local = sizes.next().expect("more local sizes than iterations");
                let d = common::desc(&fill, 1, 16, "k").with_local(local);
                let t = Instant::now();
                let p = ctx.create_pipeline(&d).unwrap();
                ctx.dispatch(&p, &push, [1, 1, 1]).unwrap();
                total += t.elapsed();
                drop(p);
                ctx.clear_pipeline_cache();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, dispatch, pipeline_creation);
criterion_main!(benches);
