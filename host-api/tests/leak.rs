//! Load / dispatch / drop cycles keep the heap flat (the full 10,000-cycle run is
//! `cargo run --release -p pisa-vk --example host_leak_check`). Its own test binary, so that
//! nothing else allocates while it measures.

#[path = "../../examples/leak_check.rs"]
mod leak_check;

#[test]
fn load_dispatch_drop_cycles_keep_the_heap_flat() {
    use pisa_runtime::memory_stats::heap_in_use;
    let ctx = pisa_vk::Context::new().expect("a Vulkan device");
    for i in 0..150 {
        leak_check::cycle(&ctx, i).unwrap();
    }
    let Some(before) = heap_in_use() else {
        // the test harness shows `eprintln!` only for failures: say it on stderr itself
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED load_dispatch_drop_cycles_keep_the_heap_flat: no heap statistic \
             (mallinfo2) on this platform"
        );
        return;
    };
    for i in 150..450 {
        leak_check::cycle(&ctx, i).unwrap();
    }
    let after = heap_in_use().unwrap_or(before);
    let growth = leak_check::mib(after) - leak_check::mib(before);
    eprintln!("heap in use grew {growth:+.3} MiB over 300 cycles");
    assert!(growth < 1.0, "heap grew by {growth:.3} MiB over 300 cycles");
}
