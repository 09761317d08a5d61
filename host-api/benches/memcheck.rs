//! The cost of the memory checker (spec-notes §70): saxpy, a naive matrix product (indexed,
//! and strength-reduced with pointers the loop bumps), a sum reduction and a five-point stencil whose loads form a run (one base register plus
//! constants, spec-notes §106), each translated unchecked and checked ([`Options::checked`]) and run on the
//! machine's Vulkan device with the same data; the checked/unchecked ratio of the times is
//! the figure (docs/performance.md, "The memory checker"). Each kernel's results are checked
//! against a CPU computation before timing, both ways.
//!
//! `cargo bench -p pisa-vk --bench memcheck`
//!
//! Besides criterion's wall-clock figures, the bench prints a ratio per kernel that a busy
//! machine disturbs less: the CPU time the process spends (lavapipe's worker threads run
//! the kernel; `/proc/self/stat`, Linux only) over rounds that alternate unchecked and
//! checked dispatches, median of the per-round ratios.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use pisa_vk::{Context, Module, Options};

/// saxpy elements.
const SAXPY_N: usize = 1 << 22;
/// Matrix side.
const MATMUL_N: u32 = 256;
/// Reduction elements.
const SUM_N: usize = 1 << 22;
/// Stencil outputs.
const STENCIL_N: usize = 1 << 22;

/// `out[i] = in[i] + ... + in[i + 4]`: five loads through one base register plus constants,
/// the shape of unrolled compiled code (a run, checked at its first load).
const STENCIL: &str = ".version 0.1;
.target 100;
.kernel @stencil(.param[8] %in, .param[8] %out) {
.reg .64b %p, %q, %off;
.reg .32b %i, %g, %s, %l, %a, %b;
mov.32b %g, %groupid.x;
mov.32b %s, %enqueuedlocalsize.x;
mov.32b %l, %localid.x;
umad.32b %i, %g, %s, %l;
umul.full.32b %off, %i, 4;
ld.param.64b %p, [%in];
iadd.64b %p, %p, %off;
ld.param.64b %q, [%out];
iadd.64b %q, %q, %off;
ld.global.32b %a, [%p + 0];
ld.global.32b %b, [%p + 4];
iadd.32b %a, %a, %b;
ld.global.32b %b, [%p + 8];
iadd.32b %a, %a, %b;
ld.global.32b %b, [%p + 12];
iadd.32b %a, %a, %b;
ld.global.32b %b, [%p + 16];
iadd.32b %a, %a, %b;
st.global.32b [%q], %a;
}
";

/// examples/matmul.pisa in the strength-reduced form a compiler emits: pointers into a row
/// of A and a column of B that the loop bumps (4 bytes and 4n bytes), the counter only
/// counting (checked once at the loop's entry since spec-notes §114's bumped registers).
const MATMUL_WALK: &str = ".version 0.1;
.target 100;
.kernel @matmul(.param[8] %a, .param[8] %b, .param[8] %c, .param[4] %n) {
.reg .64b %pa, %pb, %pc, %off, %stride;
.reg .32b %row, %col, %k, %count, %x, %y, %acc, %i, %group, %size, %lane;
.pred %out, %more;
ld.param.64b %pa, [%a];
ld.param.64b %pb, [%b];
ld.param.64b %pc, [%c];
ld.param.32b %count, [%n];
mov.32b %group, %groupid.x;
mov.32b %size, %enqueuedlocalsize.x;
mov.32b %lane, %localid.x;
umad.32b %col, %group, %size, %lane;
mov.32b %group, %groupid.y;
mov.32b %size, %enqueuedlocalsize.y;
mov.32b %lane, %localid.y;
umad.32b %row, %group, %size, %lane;
ucmp.ge.32b %out, %col, %count;
return.cond %out;
ucmp.ge.32b %out, %row, %count;
return.cond %out;
umad.32b %i, %row, %count, %col;
umul.full.32b %off, %i, 4;
iadd.64b %pc, %pc, %off;
umul.32b %i, %row, %count;
umul.full.32b %off, %i, 4;
iadd.64b %pa, %pa, %off;
umul.full.32b %off, %col, 4;
iadd.64b %pb, %pb, %off;
umul.full.32b %stride, %count, 4;
mov.32b %acc, 0;
mov.32b %k, 0;
dot:
ld.global.32b %x, [%pa];
ld.global.32b %y, [%pb];
fmad.f %acc, %x, %y, %acc;
iadd.64b %pa, %pa, 4;
iadd.64b %pb, %pb, %stride;
iadd.32b %k, %k, 1;
ucmp.lt.32b %more, %k, %count;
goto.cond %more, dot;
st.global.32b [%pc], %acc;
}
";

fn data(n: usize, seed: u64) -> Vec<u32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect()
}

fn floats(n: usize, seed: u64) -> Vec<f32> {
    data(n, seed)
        .into_iter()
        .map(|w| (w % 1000) as f32 / 64.0)
        .collect()
}

fn load(ctx: &Context, name: &str, src: &str, options: &Options, checked: bool) -> Module {
    let options = Options {
        checked,
        ..options.clone()
    };
    let m = Module::from_source_with(ctx, name, src, &options).expect("load");
    assert_eq!(m.checked(), checked);
    m
}

/// Rounds of the CPU-time comparison.
const ROUNDS: usize = 9;
/// Wall-clock time each variant runs for in a round, at least (CPU time is counted in
/// clock ticks of 10 ms).
const ROUND_TIME: std::time::Duration = std::time::Duration::from_millis(400);

/// CPU time of the process so far (user + system), in clock ticks; `None` off Linux.
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Prints the median over [`ROUNDS`] of checked/unchecked CPU time, the variants
/// interleaved (each run as often per round as the unchecked one takes to fill
/// [`ROUND_TIME`]).
fn cpu_ratio(name: &str, unchecked: &dyn Fn(), checked: &dyn Fn()) {
    let t = std::time::Instant::now();
    unchecked();
    let one = t.elapsed().max(std::time::Duration::from_micros(100));
    let per_round = (ROUND_TIME.as_secs_f64() / one.as_secs_f64()).ceil() as usize;
    let mut ratios = Vec::new();
    for _ in 0..ROUNDS {
        let mut t = [0u64; 2];
        for (i, run) in [unchecked, checked].into_iter().enumerate() {
            let Some(start) = cpu_ticks() else {
                println!("{name}: no CPU time on this system (no /proc/self/stat)");
                return;
            };
            (0..per_round).for_each(|_| run());
            t[i] = cpu_ticks().unwrap_or(start) - start;
        }
        if t[0] > 0 {
            ratios.push(t[1] as f64 / t[0] as f64);
        }
    }
    ratios.sort_by(f64::total_cmp);
    match ratios.get(ratios.len() / 2) {
        Some(m) => println!(
            "{name}: checked/unchecked CPU time, median of {} interleaved rounds of {per_round} dispatches each: {m:.2} (range {:.2}-{:.2})",
            ratios.len(),
            ratios[0],
            ratios[ratios.len() - 1]
        ),
        None => println!("{name}: CPU time too short to compare"),
    }
}

/// Checks the unchecked and the checked run of kernel `name` (`verify` runs one and asserts
/// its result, told which), benches each, and prints their CPU-time ratio ([`cpu_ratio`]).
fn measure(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    runs: [&dyn Fn(); 2],
    verify: impl Fn(&dyn Fn(), bool),
) {
    for (checked, run) in [false, true].into_iter().zip(runs) {
        verify(run, checked);
        let label = if checked {
            format!("{name} checked")
        } else {
            name.to_string()
        };
        g.bench_function(label, |b| b.iter(run));
    }
    cpu_ratio(name, runs[0], runs[1]);
}

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let device = ctx.info().name.clone();
    let mut g = c.benchmark_group(format!("memcheck ({device})"));
    g.sample_size(10);

    // saxpy: y = 2x + y over 2^22 floats, in work-groups of 256.
    let src = include_str!("../../examples/saxpy.pisa");
    let xs = floats(SAXPY_N, 1);
    let ys = floats(SAXPY_N, 2);
    let x = ctx.buffer_from(&xs).expect("x");
    let y = ctx.buffer_from(&ys).expect("y");
    let want: Vec<f32> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| 2.0f32.mul_add(*a, *b))
        .collect();
    let ms =
        [false, true].map(|checked| load(&ctx, "saxpy.pisa", src, &Options::default(), checked));
    let (x, y) = (&x, &y);
    let runs = ms.each_ref().map(|m| {
        move || {
            let args = [2.0f32.into(), x.into(), y.into(), (SAXPY_N as u32).into()];
            m.dispatch("saxpy", SAXPY_N as u64, 256u64, &args)
                .expect("saxpy");
        }
    });
    measure(&mut g, "saxpy", [&runs[0], &runs[1]], |run, checked| {
        y.write(&ys).expect("reset");
        run();
        assert_eq!(y.read().expect("y"), want, "saxpy checked={checked}");
    });

    // matmul: 256 x 256, work-groups of 16 x 16.
    let src = include_str!("../../examples/matmul.pisa");
    let n = MATMUL_N as usize;
    let av: Vec<f32> = floats(n * n, 3).iter().map(|v| v.floor()).collect();
    let bv: Vec<f32> = floats(n * n, 4).iter().map(|v| v.floor()).collect();
    let a = ctx.buffer_from(&av).expect("a");
    let b = ctx.buffer_from(&bv).expect("b");
    let cm = ctx.zeroed::<f32>(n * n).expect("c");
    let mut want = vec![0f32; n * n];
    for r in 0..n {
        for col in 0..n {
            want[r * n + col] =
                (0..n).fold(0f32, |acc, k| av[r * n + k].mul_add(bv[k * n + col], acc));
        }
    }
    let (a, b, cm) = (&a, &b, &cm);
    for (name, src) in [("matmul", src), ("matmul walk", MATMUL_WALK)] {
        let ms = [false, true]
            .map(|checked| load(&ctx, "matmul.pisa", src, &Options::default(), checked));
        let runs = ms.each_ref().map(|m| {
            move || {
                let args = [a.into(), b.into(), cm.into(), MATMUL_N.into()];
                m.dispatch("matmul", (n as u64, n as u64), (16u64, 16u64), &args)
                    .expect("matmul");
            }
        });
        measure(&mut g, name, [&runs[0], &runs[1]], |run, checked| {
            cm.write(&vec![0.0; n * n]).expect("reset");
            run();
            assert_eq!(cm.read().expect("c"), want, "{name} checked={checked}");
        });
    }

    // reduction: examples/sum_reduce.pisa over 2^22 words, 256 work-groups of 256.
    let src = include_str!("../../examples/sum_reduce.pisa");
    let info = ctx.info().clone();
    let width = if info.max_subgroup_size >= 32 {
        32
    } else {
        info.subgroup_size
    };
    let words = data(SUM_N, 5);
    let input = ctx.buffer_from(&words).expect("input");
    let total = ctx.zeroed::<u32>(1).expect("total");
    let expect = words.iter().fold(0u32, |s, &w| s.wrapping_add(w));
    let ms = [false, true].map(|checked| {
        load(
            &ctx,
            "sum_reduce.pisa",
            src,
            &Options::with_subgroup_size(width),
            checked,
        )
    });
    let (input, total) = (&input, &total);
    let runs = ms.each_ref().map(|m| {
        move || {
            total.write(&[0]).expect("reset");
            let args = [input.into(), total.into(), (SUM_N as u32).into()];
            m.dispatch("sum_reduce", 256u64 * 256, 256u64, &args)
                .expect("reduce");
            assert_eq!(total.read().expect("total")[0], expect, "reduction");
        }
    });
    measure(&mut g, "reduction", [&runs[0], &runs[1]], |run, _| run());

    // stencil: 2^22 outputs, work-groups of 256.
    let words = data(STENCIL_N + 4, 6);
    let input = ctx.buffer_from(&words).expect("input");
    let out = ctx.zeroed::<u32>(STENCIL_N).expect("out");
    let want: Vec<u32> = words
        .windows(5)
        .map(|w| w.iter().fold(0u32, |s, &x| s.wrapping_add(x)))
        .collect();
    let ms = [false, true]
        .map(|checked| load(&ctx, "stencil.pisa", STENCIL, &Options::default(), checked));
    let (input, out) = (&input, &out);
    let runs = ms.each_ref().map(|m| {
        move || {
            m.dispatch(
                "stencil",
                STENCIL_N as u64,
                256u64,
                &[input.into(), out.into()],
            )
            .expect("stencil");
        }
    });
    measure(&mut g, "stencil", [&runs[0], &runs[1]], |run, checked| {
        out.write(&vec![0; STENCIL_N]).expect("reset");
        run();
        assert_eq!(out.read().expect("out"), want, "stencil checked={checked}");
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
