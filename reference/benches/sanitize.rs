//! The cost of the sanitizers (`Sanitize::ALL`: races, uninitialized reads, barriers) over
//! the plain interpreter, on two kernels of `examples/`: a matrix multiply (32 x 32 floats,
//! work-groups of 8 x 8: global loads only) and a shared-memory tree reduction over 64
//! work-groups of 64 work-items (shared stores and loads between barriers). Each sample is
//! one dispatch on a machine that has the module loaded. Figures: docs/performance.md,
//! "The reference's sanitizers".
//!
//! `cargo bench -p pisa-reference --bench sanitize`

use criterion::{criterion_group, criterion_main, Criterion};
use pisa_reference::{Config, Launch, LoadedModule, Machine, Sanitize};
use std::sync::Arc;

/// A machine with `src` loaded, its buffers allocated (`sizes` bytes each, filled with small
/// numbers) and the argument block (the buffers' addresses, then `scalars`).
fn setup(
    src: &str,
    sizes: &[u64],
    scalars: &[u8],
    s: Sanitize,
) -> (Machine, LoadedModule, Vec<u8>) {
    let file = Arc::new(pisa_translator::SourceFile::new("bench.pisa", src));
    let program = pisa_translator::link(&[file]).expect("valid");
    let mut m = Machine::new(Config::default());
    m.set_sanitize(s);
    let module = m.load(&program.module).expect("loads");
    let mut args = Vec::new();
    for &size in sizes {
        let a = m.alloc(size, 16);
        let bytes: Vec<u8> = (0..size)
            .map(|i| if i % 4 == 3 { 0x3f } else { 0 })
            .collect();
        m.write(a, &bytes).expect("fits");
        args.extend_from_slice(&a.to_le_bytes());
    }
    args.extend_from_slice(scalars);
    (m, module, args)
}

fn bench(c: &mut Criterion) {
    let matmul = include_str!("../../examples/matmul.pisa");
    let reduce = include_str!("../../examples/reduce.pisa");
    let n = 32u32;
    let bytes = (n * n * 4) as u64;
    let mut group = c.benchmark_group("sanitize");
    group.sample_size(10);
    for (name, s) in [("plain", Sanitize::NONE), ("all", Sanitize::ALL)] {
        let (mut m, module, args) = setup(matmul, &[bytes, bytes, bytes], &n.to_le_bytes(), s);
        let launch = Launch {
            global_size: [n as u64, n as u64, 1],
            local_size: [8, 8, 1],
            global_offset: [0; 3],
            work_dim: 2,
        };
        group.bench_function(format!("matmul_32x32/{name}"), |b| {
            b.iter(|| {
                m.dispatch(&module, "matmul", &launch, &args).expect("runs");
                assert!(m.take_reports().is_empty());
            })
        });
        let (mut m, module, args) = setup(reduce, &[64 * 64 * 4, 64 * 4], &[], s);
        let launch = Launch::linear(64 * 64, 64);
        group.bench_function(format!("reduce_64_groups/{name}"), |b| {
            b.iter(|| {
                m.dispatch(&module, "reduce", &launch, &args).expect("runs");
                assert!(m.take_reports().is_empty());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
