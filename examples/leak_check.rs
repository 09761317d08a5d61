//! Load / dispatch / drop cycles through the host API, printing memory as it goes:
//! `cargo run --release -p pisa-vk --example host_leak_check -- 10000`.
//!
//! Each cycle translates and loads a module (globals arena with an initializer), creates a
//! buffer, dispatches a kernel over a partial work-group, checks the result and drops it all.

use pisa_runtime::memory_stats::{heap_in_use, rss_bytes};
use pisa_vk::{Context, Module};

/// The module of every cycle.
pub const SOURCE: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 @bias[4] = { .32b 7 };\n\
    .kernel @fill(.param[8] %out) {\n\
      .reg .64b %p, %off;\n  .reg .32b %i, %g, %s, %l, %b;\n\
      ld.param.64b %p, [%out];\n  mov.32b %g, %groupid.x;\n  mov.32b %s, %enqueuedlocalsize.x;\n\
      mov.32b %l, %localid.x;\n  umad.32b %i, %g, %s, %l;\n  ld.global.32b %b, [@bias];\n\
      umad.32b %b, %i, 3, %b;\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n  st.global.32b [%p], %b;\n}\n";

/// One cycle; `i` varies the sizes so that buffers and pipelines differ.
pub fn cycle(ctx: &Context, i: usize) -> pisa_vk::Result<()> {
    let module = Module::from_source(ctx, "leak.pisa", SOURCE)?;
    let n = 1 + (i % 97) as u64;
    let out = ctx.zeroed::<u32>(n as usize)?;
    module.dispatch("fill", n, 1 + (i % 5) as u64, &[(&out).into()])?;
    let got = out.read()?;
    assert_eq!(got[n as usize - 1], (n as u32 - 1) * 3 + 7);
    Ok(())
}

/// Megabytes.
pub fn mib(b: u64) -> f64 {
    b as f64 / 1048576.0
}

#[allow(dead_code)]
fn main() -> pisa_vk::Result<()> {
    let cycles: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let ctx = Context::new()?;
    let warm = 200.min(cycles);
    println!("start: RSS {:.1} MiB", mib(rss_bytes()));
    for i in 0..warm {
        cycle(&ctx, i)?;
    }
    let (rss0, heap0) = (rss_bytes(), heap_in_use());
    println!(
        "after {warm} warm-up cycles: RSS {:.1} MiB, heap {:?} MiB",
        mib(rss0),
        heap0.map(mib)
    );
    for i in warm..cycles {
        cycle(&ctx, i)?;
        if (i + 1) % 2000 == 0 {
            println!(
                "{:>6} cycles: RSS {:.1} MiB, heap {:?} MiB",
                i + 1,
                mib(rss_bytes()),
                heap_in_use().map(mib)
            );
        }
    }
    let (rss1, heap1) = (rss_bytes(), heap_in_use());
    println!(
        "end: RSS {:.1} MiB ({:+.2}), heap {:?} MiB ({:+.3})",
        mib(rss1),
        mib(rss1) - mib(rss0),
        heap1.map(mib),
        heap1
            .zip(heap0)
            .map(|(a, b)| mib(a) - mib(b))
            .unwrap_or(0.0)
    );
    Ok(())
}
