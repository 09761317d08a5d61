//! Host-API overheads on the machine's Vulkan device: a dispatch of an empty kernel with a
//! tiny buffer (launch block, pipeline-cache lookup, submit, fence wait), and loading a
//! module (translation, globals arena, initializer upload).

use criterion::{criterion_group, criterion_main, Criterion};
use pisa_vk::{Context, Module};

const EMPTY: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 .host_access(\"g\") @G[64] = { .zero 64 };\n\
    .kernel @empty(.param[8] %buf) {\n  .reg .64b %p;\n  ld.param.64b %p, [%buf];\n}\n";

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let module = Module::from_source(&ctx, "empty.pisa", EMPTY).expect("valid");
    let buf = ctx.zeroed::<u32>(4).expect("buffer");
    module
        .dispatch("empty", 1u64, 1u64, &[(&buf).into()])
        .expect("warm-up");
    c.bench_function("dispatch_empty_kernel", |b| {
        b.iter(|| {
            module
                .dispatch("empty", 1u64, 1u64, &[(&buf).into()])
                .expect("dispatch")
        })
    });
    c.bench_function("load_module", |b| {
        b.iter(|| Module::from_source(&ctx, "empty.pisa", EMPTY).expect("load"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
