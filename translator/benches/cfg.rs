//! Translation time against CFG size for every control-flow shape of the property test
//! (`tests/cfg_shapes.rs`), from 1,000 to 100,000 blocks, front end and back end together
//! (deep nests, nested irreducible regions and random graphs as chains of bounded parts,
//! since loops nested deeper than SPIR-V's 1023 levels are refused).
//! Reported per block (criterion's element throughput): a flat rate across sizes is a
//! linear translation. Figures: docs/architecture.md, "Control flow".

#[path = "../tests/common/cfg_gen.rs"]
mod cfg_gen;

use cfg_gen::{chain, generate, Shape, SHAPES};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pisa_translator::{compile, Options, SourceFile};
use std::sync::Arc;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    for &shape in SHAPES {
        let mut g = c.benchmark_group(format!("cfg/{shape:?}"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        for size in [1_000, 10_000, 100_000] {
            // Loops nested deeper than SPIR-V allows are refused (random graphs of 30,000
            // blocks nest some 850 loops deep): long ones are chains of bounded parts.
            let p = match shape {
                Shape::DeepNest | Shape::NestedIrreducible => chain(shape, size, 600, 1),
                Shape::Random => chain(shape, size, 1000, 1),
                _ => generate(shape, size, 1),
            };
            g.throughput(Throughput::Elements(p.blocks as u64));
            let file = Arc::new(SourceFile::new("cfg.pisa", p.text));
            g.bench_with_input(BenchmarkId::from_parameter(size), &file, |b, f| {
                b.iter(|| compile(f, &Options::default()).expect("valid"))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
