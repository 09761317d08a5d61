//! Leak test: create-buffer / create-pipeline / dispatch / drop cycles keep memory flat.
//!
//! Its own test binary with one test (the parts run in sequence), so that nothing else
//! allocates in the process while memory is measured. `examples/leak_check.rs` runs the same cycle 10,000 times and prints the figures.

mod common;

use common::*;
use pisa_runtime::{Context, ContextOptions, DeviceSelector};

const MIB: f64 = 1048576.0;

fn lavapipe() -> Context {
    let opts = ContextOptions {
        validation: Some(false),
        timeout_seconds: Some(60.0),
        ..ContextOptions::default()
    };
    Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts).unwrap()
}

#[test]
fn memory_stays_flat() {
    cycles_keep_memory_flat();
    contexts_free_what_they_allocate();
}

fn cycles_keep_memory_flat() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    for i in 0..LEAK_WARM_UP {
        leak_cycle(&ctx, &spirv, i).unwrap();
    }
    let (rss0, heap0) = (rss_bytes(), heap_in_use());
    let cycles = 1000;
    for i in LEAK_WARM_UP..LEAK_WARM_UP + cycles {
        leak_cycle(&ctx, &spirv, i).unwrap();
    }
    let (rss1, heap1) = (rss_bytes(), heap_in_use());
    let growth = (rss1 as f64 - rss0 as f64) / MIB;
    eprintln!(
        "RSS after warm-up {:.1} MiB, after {cycles} more cycles {:.1} MiB ({growth:+.2} MiB)",
        rss0 as f64 / MIB,
        rss1 as f64 / MIB
    );
    assert!(
        growth < 4.0,
        "RSS grew by {growth:.2} MiB over {cycles} cycles"
    );
    if let (Some(h0), Some(h1)) = (heap0, heap1) {
        let heap_growth = (h1 as f64 - h0 as f64) / MIB;
        eprintln!("heap in use: {heap_growth:+.3} MiB");
        assert!(heap_growth < 1.0, "heap grew by {heap_growth:.3} MiB");
    } else {
        skipped(
            "memory_stays_flat",
            "no heap statistic (mallinfo2) on this platform: only RSS checked over cycles",
        );
    }
    assert!(ctx.cached_pipelines() <= pisa_runtime::PIPELINE_CACHE_CAPACITY);
}

fn contexts_free_what_they_allocate() {
    // Contexts, each with a buffer, pipeline and dispatch. RSS is no measure here: every
    // lavapipe device starts worker threads, and glibc gives new threads new malloc arenas
    // (up to 8 per core) that stay mapped. The heap in use must come back.
    let Some(_) = heap_in_use() else {
        skipped(
            "memory_stays_flat",
            "no heap statistic (mallinfo2) on this platform: contexts not checked",
        );
        return;
    };
    let spirv = fill_kernel();
    for i in 0..5 {
        leak_cycle(&lavapipe(), &spirv, i).unwrap();
    }
    let heap0 = heap_in_use().unwrap();
    for i in 0..20 {
        leak_cycle(&lavapipe(), &spirv, i).unwrap();
    }
    let growth = (heap_in_use().unwrap() as f64 - heap0 as f64) / MIB;
    eprintln!("heap in use over 20 contexts: {growth:+.3} MiB");
    assert!(
        growth < 1.0,
        "heap grew by {growth:.3} MiB over 20 contexts"
    );
}
