//! The cost of linking: a program of one library module and `MODULES` kernel modules that
//! import its functions and variables, against the same program written as one module.
//!
//! Groups: `link/front end of every module` (the front end of each file, what linking needs
//! anyway), `link/link_modules` (the link step alone, on checked modules: binding and the
//! renumbering pass), `link/link` (both), and `link/compile_linked` against `link/compile one
//! module` (front end, link and SPIR-V back end of the split program, against the whole
//! program as one file). Run with `cargo bench -p pisa-translator --bench link`; figures are
//! in docs/architecture.md ("Linking").

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pisa_translator::{link, SourceFile, SourceMap};
use std::fmt::Write as _;
use std::sync::Arc;

/// Kernel modules.
const MODULES: usize = 10;
/// Exported functions and variables of the library.
const EXPORTS: usize = 50;
/// Kernels per kernel module.
const KERNELS: usize = 100;

const HEADER: &str = ".version 0.1;\n.target 100;\n";

/// The library's definitions (exported when `export`).
fn library(export: bool) -> String {
    let e = if export { ".export " } else { "" };
    let mut s = String::new();
    for j in 0..EXPORTS {
        let _ = write!(
            s,
            "{e}.global .align 4 @g{j}[4] = {{ .32b {j} }};\n\
             {e}.function .32b @f{j}(.reg .32b %x) {{\n  .reg .32b %r;\n  iadd.32b %r, %x, {j};\n  \
             xor.32b %r, %r, 0x5a5a;\n  return %r;\n}}\n"
        );
    }
    s
}

/// Kernel module `m`'s kernels: each loads, calls and stores through the library.
fn kernels(m: usize) -> String {
    let mut s = String::new();
    for k in 0..KERNELS {
        let _ = write!(
            s,
            ".kernel @k{m}_{k}(.param[8] %out) {{\n  .reg .64b %p;\n  .reg .32b %a, %b;\n  \
             ld.param.64b %p, [%out];\n  mov.32b %a, %localid.x;\n"
        );
        for j in (k..k + 10).map(|j| j % EXPORTS) {
            let _ = write!(
                s,
                "  ld.global.32b %b, [@g{j}];\n  iadd.32b %a, %a, %b;\n  call %a, @f{j}(%a);\n  \
                 umul.32b %b, %a, %a;\n  st.global.32b [@g{j}], %b;\n  st.global.32b [%p], %a;\n"
            );
        }
        s.push_str("}\n");
    }
    s
}

fn imports() -> String {
    let mut s = String::new();
    for j in 0..EXPORTS {
        let _ = write!(
            s,
            ".import .global .align 4 @g{j}[4];\n.import .function .32b @f{j}(.reg .32b);\n"
        );
    }
    s
}

/// The split program (library first) and the same program as one module.
fn programs() -> (Vec<Arc<SourceFile>>, Arc<SourceFile>) {
    let mut files = vec![Arc::new(SourceFile::new(
        "lib.pisa",
        format!("{HEADER}{}", library(true)),
    ))];
    let mut whole = format!("{HEADER}{}", library(false));
    for m in 0..MODULES {
        let body = kernels(m);
        whole.push_str(&body);
        files.push(Arc::new(SourceFile::new(
            format!("m{m}.pisa"),
            format!("{HEADER}{}{body}", imports()),
        )));
    }
    (files, Arc::new(SourceFile::new("whole.pisa", whole)))
}

fn bench(c: &mut Criterion) {
    let (files, whole) = programs();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    println!(
        "program: {} modules, {bytes} bytes; as one module: {} bytes",
        files.len(),
        whole.text.len()
    );
    let checked: Vec<_> = files
        .iter()
        .map(|f| pisa_translator::check(f).expect("valid"))
        .collect();
    let sources = SourceMap::new(&files).expect("small");
    let options = pisa_translator::Options::default();
    let mut g = c.benchmark_group("link");
    g.throughput(Throughput::BytesDecimal(bytes as u64));
    g.sample_size(10);
    g.bench_function("front end of every module", |b| {
        b.iter(|| files.iter().all(|f| pisa_translator::check(f).is_ok()))
    });
    g.bench_function("link_modules", |b| {
        b.iter_batched(
            || checked.clone(),
            |m| pisa_translator::link::link_modules(&sources, m).expect("links"),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("link", |b| b.iter(|| link(&files).expect("links")));
    g.bench_function("compile_linked", |b| {
        b.iter(|| pisa_translator::compile_linked(&files, &options).expect("translates"))
    });
    g.bench_function("compile one module", |b| {
        b.iter(|| pisa_translator::compile(&whole, &options).expect("translates"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
