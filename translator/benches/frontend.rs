//! Front-end throughput: lexes, parses and validates a generated module of more than 5 MiB
//! (many kernels and functions mixing declarations, arithmetic, memory, control flow and calls),
//! dropping the IR it returns, as [`pisa_translator::check`] does for a caller.
//!
//! Run with `cargo bench -p pisa-translator --bench frontend`. Before measuring, the bench
//! prints the module's exact size (`module: N bytes (X MB, Y MiB), K kernels`). Criterion then
//! reports, for `frontend/check 5 MiB module`, the time of one whole `check`
//! (`time: [low mean high]`) and the throughput (`thrpt: [low mean high]`): the module's bytes
//! divided by that time, in decimal MB/s (10^6 bytes per second; MiB/s = MB/s / 1.048576).
//! Criterion keeps the last results under `target/criterion/frontend/` and compares a new run
//! against them (`change:`). Throughput depends on the load of the machine (the benchmark is
//! single-threaded, so other work on the cores slows it): note `uptime`'s load average with a
//! figure.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::fmt::Write as _;
use std::sync::Arc;

/// A module of at least `min_bytes` bytes.
fn generate(min_bytes: usize) -> String {
    let mut s =
        String::from(".version 0.1;\n.target 100;\n.global .align 8 @table[64] = { .zero 64 };\n");
    s.push_str(".function .32b @helper(.reg .32b %x, .reg .32b %y) {\n  .reg .32b %t;\n  iadd.32b %t, %x, %y;\n  return %t;\n}\n");
    let mut i = 0;
    while s.len() < min_bytes {
        let _ = write!(
            s,
            r#"// kernel {i}
.kernel .reqd_work_group_size(64, 1, 1) @k{i}(.param[8] .addrspace(global) %x, .param[8] %y, .param[4] %a, .param[4] %n) {{
  .reg .32b %i, %t<0~8>, %av, %nn;
  .reg .64b %px, %py, %off;
  .reg .v4.32b %v;
  .reg .v2.16b %h2;
  .pred %p, %q;
  .shared .align 4 @tile[256];
  ld.param.64b %px, [%x];
  ld.param.64b %py, [%y];
  ld.param.32b %av, [%a];
  ld.param.32b %nn, [%n];
  mov.32b %i, %localid.x;
  umad.32b %i, %groupid.x, %localsize.x, %i;
  ucmp.ge.32b %p, %i, %nn;
  goto.cond %p, done;
  shl.32b %t0, %i, 2;
  zext.64b.32b %off, %t0;
  iadd.64b %px, %px, %off;
  iadd.64b %py, %py, %off;
  ld.global.32b %t1, [%px];
  ld.global.32b %t2, [%py + 4];
  fmad.f %t2, %av, %t1, %t2;
  fadd.rz.f %t3, %t2, 4.2;
  fmul.f %t4, %t3, 0x3F800000;
  sel.32b %t5, %t4, -1, !%p;
  st.shared.32b [@tile + %t0], %t5;
  barrier.workgroup;
  ld.shared.32b %t6, [@tile + 8];
  {{
    .reg .32b %inner;
    and.32b %inner, %t6, 0xFF;
    iadd.dsat.32b %t7, %inner, %t5;
  }}
  ld.global.v4.32b %v, [%px];
  iadd.32b %t7, %v.x, %v.w;
  iadd.16bx2 %h2, %h2, %h2;
  call %t7, @helper(%t7, %t6);
  iatom.global.add.32b %t0, [%py], %t7;
  st.global.32b [%py], %t7;
done:
  return;
}}
"#
        );
        i += 1;
    }
    s
}

fn frontend(c: &mut Criterion) {
    let text = generate(5 << 20);
    let kernels = text.matches(".kernel").count();
    println!(
        "module: {} bytes ({:.2} MB, {:.2} MiB), {kernels} kernels",
        text.len(),
        text.len() as f64 / 1e6,
        text.len() as f64 / (1024.0 * 1024.0)
    );
    let file = Arc::new(pisa_translator::SourceFile::new("bench.pisa", text));
    if let Err(d) = pisa_translator::check(&file) {
        panic!("generated module is invalid:\n{}", d.render());
    }
    let mut g = c.benchmark_group("frontend");
    g.throughput(Throughput::BytesDecimal(file.text.len() as u64));
    g.sample_size(10);
    g.bench_function("check 5 MiB module", |b| {
        b.iter(|| pisa_translator::check(std::hint::black_box(&file)).is_ok())
    });
    g.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
