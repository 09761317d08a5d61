//! Translation throughput: a generated module of at least 100,000 instructions, front end
//! and SPIR-V back end together. Reported as instructions per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pisa_translator::{compile, Options, SourceFile};
use std::sync::Arc;

/// A module of `kernels` kernels, each a loop over integer, memory and float work, about
/// 100 instructions per kernel.
pub fn generate(kernels: usize) -> (String, u64) {
    let mut s = String::from(".version 0.1;\n.target 100;\n");
    let mut count = 0u64;
    for k in 0..kernels {
        s.push_str(&format!(
            ".kernel @k{k}(.param[8] %out, .param[4] %n) {{\n  .reg .64b %p, %off;\n  .reg .32b %i, %a, %b, %c;\n  .reg .32b %x<0~8>;\n  .pred %more;\n\
             ld.param.64b %p, [%out];\n  ld.param.32b %c, [%n];\n  mov.32b %i, 0;\n  mov.32b %a, %localid.x;\n"
        ));
        count += 4;
        s.push_str("loop:\n");
        for j in 0..8 {
            s.push_str(&format!(
                "  iadd.32b %x{j}, %a, {j};\n  umul.32b %x{j}, %x{j}, %i;\n  xor.32b %x{j}, %x{j}, 0x5a5a;\n  shl.32b %b, %x{j}, 3;\n  \
                 umax.32b %a, %a, %b;\n  fadd.f %b, %x{j}, %a;\n  umul.full.32b %off, %i, 4;\n  iadd.64b %off, %off, %p;\n  st.global.32b [%off], %b;\n  ld.global.32b %a, [%off];\n  sel.32b %a, %a, %b, %x{j};\n"
            ));
            count += 11;
        }
        s.push_str(
            "  iadd.32b %i, %i, 1;\n  ucmp.lt.32b %more, %i, %c;\n  goto.cond %more, loop;\n}\n",
        );
        count += 3;
    }
    (s, count)
}

fn bench(c: &mut Criterion) {
    let (src, count) = generate(1100);
    assert!(count >= 100_000, "{count} instructions");
    let file = Arc::new(SourceFile::new("bench.pisa", src));
    let mut g = c.benchmark_group("translate");
    g.throughput(Throughput::Elements(count));
    g.sample_size(10);
    g.bench_function("100k_instructions", |b| {
        b.iter(|| compile(&file, &Options::default()).expect("valid"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
