//! Leak check: many create-buffer / create-pipeline / dispatch / drop cycles on one context,
//! printing the resident set size (RSS) and, with glibc, the heap in use (`mallinfo2`) at the
//! start, after warm-up and at the end.
//!
//! `cargo run --release -p pisa-runtime --example leak_check -- [cycles]` (default 10000).
//! Pipelines use a different local size each cycle (cycling through more sizes than the
//! in-memory pipeline cache holds, so pipelines are created and destroyed all along).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use pisa_runtime::{Context, DeviceSelector};

fn main() -> Result<(), pisa_runtime::Error> {
    let cycles: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let ctx = Context::new(DeviceSelector::Default)?;
    println!("device: {}", ctx.info().name);
    let spirv = common::fill_kernel();
    let start_rss = common::rss_bytes();
    let heap = || {
        common::heap_in_use()
            .map(|h| format!("{:.2} MiB", h as f64 / 1048576.0))
            .unwrap_or_else(|| "n/a".into())
    };
    let start_heap = heap();
    let warm_up = common::LEAK_WARM_UP.min(cycles);
    let t0 = Instant::now();
    let mut after_warm_up = start_rss;
    let mut heap_after_warm_up = start_heap.clone();
    for i in 0..cycles {
        if i == warm_up {
            after_warm_up = common::rss_bytes();
            heap_after_warm_up = heap();
        }
        common::leak_cycle(&ctx, &spirv, i)?;
        if (i + 1) % 1000 == 0 {
            println!(
                "{:>6} cycles  RSS {:>8.1} MiB  heap in use {}  {:.1} s",
                i + 1,
                common::rss_bytes() as f64 / 1048576.0,
                heap(),
                t0.elapsed().as_secs_f64()
            );
        }
    }
    let end_rss = common::rss_bytes();
    let mib = |b: u64| b as f64 / 1048576.0;
    println!(
        "RSS start {:.1} MiB, after {warm_up} warm-up cycles {:.1} MiB, end {:.1} MiB \
         (growth after warm-up {:+.1} MiB over {} cycles)",
        mib(start_rss),
        mib(after_warm_up),
        mib(end_rss),
        mib(end_rss) - mib(after_warm_up),
        cycles - warm_up
    );
    println!(
        "heap in use: start {start_heap}, after warm-up {heap_after_warm_up}, end {}",
        heap()
    );
    let cached = ctx.cached_pipelines();
    ctx.clear_pipeline_cache();
    println!(
        "after dropping the {cached} pipelines of the in-memory cache: RSS {:.1} MiB, heap in use {}",
        mib(common::rss_bytes()),
        heap()
    );
    drop(ctx);
    println!(
        "after dropping the context: RSS {:.1} MiB, heap in use {}",
        mib(common::rss_bytes()),
        heap()
    );
    Ok(())
}
