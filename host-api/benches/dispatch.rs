//! Host-API overheads on the machine's Vulkan device, against a raw ash baseline.
//!
//! `dispatch overhead`: one work-group of an empty kernel (it reads its pointer argument and
//! nothing else), dispatched and waited for
//! - with plain ash on a device of its own (`raw ash submit+wait`, `raw_ash.rs`: reset fence
//!   and command buffer, record bind + push constants + dispatch + barrier, submit, wait),
//! - with `Module::dispatch` (name lookup, argument packing, launch plan, launch block,
//!   the module's pipeline, a stream of one launch, submit, wait),
//! - with a typed `Kernel::dispatch` (no name lookup),
//! - with a `Stream` of that one launch, submitted and waited for.
//!
//! The ratio `Module::dispatch / raw ash` is the host API's overhead (issue 17 asks for at
//! most 1.05). Also `load_module` (translation, globals arena, initializer upload).
//! `cargo bench -p pisa-vk --bench dispatch`.

mod raw_ash;

use criterion::{criterion_group, criterion_main, Criterion};
use pisa_vk::{Buffer, Context, Module};

const EMPTY: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 .host_access(\"g\") @G[64] = { .zero 64 };\n\
    .kernel @empty(.param[8] %buf) {\n  .reg .64b %p;\n  ld.param.64b %p, [%buf];\n}\n";

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let module = Module::from_source(&ctx, "empty.pisa", EMPTY).expect("valid");
    let buf = ctx.zeroed::<u32>(4).expect("buffer");
    module.dispatch("empty", 1, 1, (&buf,)).expect("warm-up");
    let k = &module.reflection().kernels[0];
    let raw = raw_ash::RawDispatch::new(
        &ctx.info().name,
        module.spirv(),
        "empty",
        k.push_constant_size,
    );
    raw.dispatch();
    let typed = module.kernel::<(Buffer<u32>,)>("empty").expect("typed");
    // Interleaved rounds, so that the load of a shared machine hits both sides alike: the
    // median per-dispatch time of each side over 9 rounds of 500 dispatches, and the ratio.
    let mut raw_t = Vec::new();
    let mut api_t = Vec::new();
    for _ in 0..9 {
        let t = std::time::Instant::now();
        (0..500).for_each(|_| raw.dispatch());
        raw_t.push(t.elapsed().as_secs_f64() / 500.0);
        let t = std::time::Instant::now();
        (0..500).for_each(|_| module.dispatch("empty", 1, 1, (&buf,)).expect("dispatch"));
        api_t.push(t.elapsed().as_secs_f64() / 500.0);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (r, a) = (median(&mut raw_t), median(&mut api_t));
    eprintln!(
        "interleaved medians: raw ash {:.2} us, Module::dispatch {:.2} us, ratio {:.3}",
        r * 1e6,
        a * 1e6,
        a / r
    );
    let mut g = c.benchmark_group(format!("dispatch overhead [{}]", ctx.info().name));
    g.bench_function("raw ash submit+wait", |b| b.iter(|| raw.dispatch()));
    g.bench_function("Module::dispatch", |b| {
        b.iter(|| module.dispatch("empty", 1, 1, (&buf,)).expect("dispatch"))
    });
    g.bench_function("Kernel::dispatch (typed)", |b| {
        b.iter(|| typed.dispatch(1, 1, (&buf,)).expect("dispatch"))
    });
    g.bench_function("Stream of one launch", |b| {
        b.iter(|| {
            let mut s = ctx.stream();
            s.dispatch(&module, "empty", 1, 1, (&buf,)).expect("record");
            s.run().expect("run")
        })
    });
    g.finish();
    c.bench_function("load_module", |b| {
        b.iter(|| Module::from_source(&ctx, "empty.pisa", EMPTY).expect("load"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
