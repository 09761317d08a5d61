//! Cost of virtual lanes (docs/spec-notes.md §88, docs/performance.md): each kernel runs
//! translated for PISA's 32-lane sub-groups on the device's hardware width (virtual lanes,
//! 32 / H work-items per invocation) and natively for the device's own width
//! (`--subgroup-size H`, non-conforming: the speed of light for this device), in one
//! process, interleaved (virtual then native, then native then virtual, ...), each launch
//! timed on the GPU with timestamp queries; the table gives the medians and their ratio.
//!
//! - `reduce`: `ired.sum` of 16M u32 per sub-group, lane 0 stores the sum;
//! - `scan`: inclusive prefix sum of 16M u32 within each sub-group (`shfl.up`);
//! - `transpose`: S x S tiles (S = `%subgroupsize`) transposed through `shfl.idx` by
//!   rotation, 16M elements in all on both sides (the native side has 4x the work-items);
//! - `plain`: a kernel without cross-lane operations (64 rounds of an integer hash per
//!   work-item, 4M work-items) forced onto virtual lanes (`VirtualLanes::AllKernels`).
//!
//! Before timing, the sides that compute the same thing (`plain`; the others at the width
//! of their own sub-groups) are checked against values worked out on the host.
//!
//! `cargo bench -p pisa-vk --bench virtual_lanes` (`PISA_BENCH_REPS` runs per side, default
//! 7; `PISA_BENCH_ITEMS` the 16M).

use pisa_translator::{Options, VirtualLanes};
use pisa_vk::{Buffer, Context, Module};
use std::sync::Arc;
use std::time::Duration;

const HEAD: &str = ".version 0.1;\n.target 100;\n";

/// `%i` = the global id, `%p` = `data + 4 i`, `%v` = `data[i]`.
const PROLOGUE: &str = ".reg .64b %p, %off, %q, %rowin, %rowout;\n\
    .reg .32b %i, %v, %t, %lane, %size, %step, %j, %c, %src, %x, %g, %w;\n\
    .pred %low, %more;\n\
    mov.32b %i, %groupid.x;\numad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\n\
    ld.param.64b %p, [%data];\numul.full.32b %off, %i, 4;\niadd.64b %p, %p, %off;\n\
    ld.global.32b %v, [%p];\nmov.32b %lane, %laneid;\nmov.32b %size, %subgroupsize;\n";

fn reduce() -> String {
    format!(
        "{HEAD}.kernel @k(.param[8] %data) {{\n{PROLOGUE}\
         ired.sum.32b %t, %v, 0xffffffff;\nucmp.eq.32b %low, %lane, 0;\n\
         goto.cond !%low, done;\nst.global.32b [%p], %t;\ndone:\n}}\n"
    )
}

fn scan() -> String {
    format!(
        "{HEAD}.kernel @k(.param[8] %data) {{\n{PROLOGUE}mov.32b %step, 1;\n\
         loop:\nshfl.up.32b %t, %v, %step, 0xffffffff;\nucmp.lt.32b %low, %lane, %step;\n\
         sel.32b %t, 0, %t, %low;\niadd.32b %v, %v, %t;\nshl.32b %step, %step, 1;\n\
         ucmp.lt.32b %more, %step, %size;\ngoto.cond %more, loop;\nst.global.32b [%p], %v;\n}}\n"
    )
}

/// Work-item `m` of tile `g` (S x S words at `in + 4 S² g`): at step j it reads row `m`,
/// column `(m + j) mod S`, takes lane `(m - j) mod S`'s value with `shfl.idx` and stores it at
/// row `m`, column `(m - j) mod S` of the output tile.
fn transpose() -> String {
    format!(
        "{HEAD}.kernel @k(.param[8] %data, .param[8] %out) {{\n{PROLOGUE}\
         udiv.32b %g, %i, %size;\numul.32b %w, %size, %size;\numul.32b %g, %g, %w;\n\
         umad.32b %w, %lane, %size, %g;\numul.full.32b %off, %w, 4;\n\
         ld.param.64b %rowin, [%data];\niadd.64b %rowin, %rowin, %off;\n\
         ld.param.64b %rowout, [%out];\niadd.64b %rowout, %rowout, %off;\n\
         mov.32b %j, 0;\nisub.32b %w, %size, 1;\n\
         loop:\niadd.32b %c, %lane, %j;\nand.32b %c, %c, %w;\numul.full.32b %off, %c, 4;\n\
         iadd.64b %q, %rowin, %off;\nld.global.32b %x, [%q];\n\
         isub.32b %src, %lane, %j;\nand.32b %src, %src, %w;\n\
         shfl.idx.32b %x, %x, %src, 0xffffffff;\n\
         umul.full.32b %off, %src, 4;\niadd.64b %q, %rowout, %off;\nst.global.32b [%q], %x;\n\
         iadd.32b %j, %j, 1;\nucmp.lt.32b %more, %j, %size;\ngoto.cond %more, loop;\n}}\n"
    )
}

/// 64 rounds of `v = (v ^ (v >> 15)) * 0x2C1B3C6D + i` per work-item.
fn plain() -> String {
    format!(
        "{HEAD}.kernel @k(.param[8] %data) {{\n{PROLOGUE}mov.32b %step, 0;\n\
         loop:\nshr.32b %t, %v, 15;\nxor.32b %v, %v, %t;\numul.32b %v, %v, 0x2C1B3C6D;\n\
         iadd.32b %v, %v, %i;\niadd.32b %step, %step, 1;\nucmp.lt.32b %more, %step, 64;\n\
         goto.cond %more, loop;\nst.global.32b [%p], %v;\n}}\n"
    )
}

/// What `plain` leaves in word `i` that held `v`.
fn plain_host(i: u32, mut v: u32) -> u32 {
    for _ in 0..64 {
        v = (v ^ (v >> 15)).wrapping_mul(0x2C1B_3C6D).wrapping_add(i);
    }
    v
}

fn load(ctx: &Context, src: &str, o: &Options) -> Module {
    let o = pisa_vk::device_options(ctx, o).expect("options");
    let file = Arc::new(pisa_translator::SourceFile::new("bench.pisa", src));
    let t = pisa_translator::compile(&file, &o).unwrap_or_else(|d| panic!("{}\n{src}", d.render()));
    Module::from_translation(ctx, "bench.pisa", Arc::new(t)).expect("load")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test --benches` builds it only.
    }
    let ctx = Context::new().expect("a Vulkan device");
    let h = ctx.info().subgroup_size;
    let reps = env("PISA_BENCH_REPS", 7);
    let items = env("PISA_BENCH_ITEMS", 1 << 24) as u64;
    let data: Vec<u32> = (0..items as u32)
        .map(|i| i.wrapping_mul(2654435761))
        .collect();
    let input = ctx.buffer_from(&data).expect("buffer");
    let work: Buffer<u32> = ctx.zeroed(items as usize).expect("buffer");
    let out: Buffer<u32> = ctx.zeroed(items as usize).expect("buffer");
    let virt = Options {
        hardware_subgroup_size: Some(h),
        ..Options::default()
    };
    let native = Options::with_subgroup_size(h);
    let all = Options {
        virtual_lanes: VirtualLanes::AllKernels,
        ..virt.clone()
    };
    eprintln!(
        "device: {} ({h}-lane sub-groups), {reps} runs per side",
        ctx.info().name
    );
    eprintln!("| kernel | virtual (32 on {h}) | native ({h}) | ratio |");
    eprintln!("| --- | --- | --- | --- |");
    let cases: [(&str, String, &Options, u64); 4] = [
        ("reduce", reduce(), &virt, items),
        ("scan", scan(), &virt, items),
        ("transpose", transpose(), &virt, items),
        ("plain", plain(), &all, items / 4),
    ];
    for (name, src, vopts, n) in cases {
        let sides = [load(&ctx, &src, vopts), load(&ctx, &src, &native)];
        // Work-items per side: the transpose moves S elements per work-item.
        let grid = |side: usize| match name {
            "transpose" => n / if side == 0 { 32 } else { h as u64 },
            _ => n,
        };
        let run = |side: usize| {
            work.write(&data[..]).expect("write");
            let m = &sides[side];
            if name == "transpose" {
                m.dispatch_timed("k", grid(side), 256u64, (&input, &out))
            } else {
                m.dispatch_timed("k", grid(side), 256u64, (&work,))
            }
            .expect("dispatch")
        };
        if name == "plain" {
            for side in 0..2 {
                run(side);
                let got = work.read().expect("read");
                for i in (0..n as usize).step_by(9973) {
                    assert_eq!(
                        got[i],
                        plain_host(i as u32, data[i]),
                        "plain side {side} word {i}"
                    );
                }
            }
        }
        let mut times = [Vec::new(), Vec::new()];
        for r in 0..reps {
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                times[side].push(run(side));
            }
        }
        let [v, nat] = times.map(median);
        eprintln!(
            "| {name} | {:.1} ms | {:.1} ms | {:.2} |",
            v.as_secs_f64() * 1e3,
            nat.as_secs_f64() * 1e3,
            v.as_secs_f64() / nat.as_secs_f64()
        );
    }
}
