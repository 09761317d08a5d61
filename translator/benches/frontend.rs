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
//!
//! A second group, `frontend-cpu`, measures the same `check` by the CPU time of the benchmark's
//! thread instead of wall-clock time (Unix only). On a busy machine wall-clock time also counts
//! the time the thread waited for a core; CPU time does not, so it is the steadier figure when
//! other builds run (it still rises somewhat with load: caches and memory bandwidth are shared).

use criterion::measurement::{Measurement, ValueFormatter};
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

/// The module, checked once.
fn module() -> Arc<pisa_translator::SourceFile> {
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
    file
}

fn bench<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let file = module();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::BytesDecimal(file.text.len() as u64));
    g.sample_size(10);
    g.bench_function("check 5 MiB module", |b| {
        b.iter(|| pisa_translator::check(std::hint::black_box(&file)).is_ok())
    });
    g.finish();
}

fn frontend(c: &mut Criterion) {
    bench(c, "frontend");
}

/// CPU time of the calling thread, in nanoseconds.
#[cfg(unix)]
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Criterion measurement: the CPU time of the benchmark's thread.
#[cfg(unix)]
struct ThreadCpuTime;

#[cfg(unix)]
impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Shows CPU times in ms and byte throughputs in decimal MB/s.
#[cfg(unix)]
struct CpuFormatter;

#[cfg(unix)]
impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, _typical: f64, values: &mut [f64]) -> &'static str {
        for v in values {
            *v /= 1e6;
        }
        "ms (CPU)"
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (n, unit) = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64 / 1e6, "MB/s (CPU)"),
            Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => {
                (n as f64, "elem/s (CPU)")
            }
            Throughput::Bits(n) => (n as f64 / 1e6, "Mbit/s (CPU)"),
        };
        for v in values {
            *v = n * 1e9 / *v;
        }
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

#[cfg(unix)]
fn frontend_cpu(c: &mut Criterion<ThreadCpuTime>) {
    bench(c, "frontend-cpu");
}

criterion_group!(benches, frontend);
#[cfg(unix)]
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = frontend_cpu
}
#[cfg(unix)]
criterion_main!(benches, cpu);
#[cfg(not(unix))]
criterion_main!(benches);
