//! Host-API overheads on the machine's Vulkan device, against a raw ash baseline.
//!
//! `dispatch overhead`: one work-group of an empty kernel (it reads its pointer argument and
//! nothing else), dispatched and waited for
//! - with plain ash on a device of its own (`raw ash submit+wait`, `raw_ash.rs`: reset fence
//!   and command buffer, record bind + push constants + dispatch + barrier, submit, wait),
//! - with `Module::dispatch` (name lookup, argument packing, launch plan, launch block,
//!   the module's pipeline, a stream of one launch, submit, wait),
//! - with a typed `Kernel::dispatch` (no name lookup),
//! - with a `Stream` of that one launch, submitted and waited for.
//!
//! The ratio `Module::dispatch / raw ash` is the host API's overhead (issue 17 asks for at
//! most 1.05). On a shared machine two criterion groups measured one after the other see
//! different loads, so before them the benchmark measures the sides interleaved in one
//! process: `PISA_BENCH_ROUNDS` rounds (default 2000) of a block of 20 dispatches per side,
//! each side taking each place in the order equally often. It prints per side the median
//! and quantiles of the per-dispatch wall time and the calling thread's CPU time (the
//! host-side work, without the waits); the ratios to raw ash (per round, against the raw
//! block next to it in time, and of the medians); and the load average. A third side, raw
//! ash on a second device, is the control: its ratio to the first raw device should be 1,
//! and how far it is not says how far two identical sides drift apart in that run.
//!
//! On lavapipe each device has its own worker threads (`LP_NUM_THREADS`, one per core by
//! default); on a loaded machine the scheduler can treat one device's threads persistently
//! worse than another's, so that even the control reads 0.3 or 3 for a whole run.
//! `LP_NUM_THREADS=0` runs each dispatch on its device's queue thread, and the control then
//! reads 1.00 within a percent: the setting for measuring the host-side overhead there.
//! Also `load_module` (translation, globals arena, initializer upload).
//!
//! ```sh
//! cargo bench -p pisa-vk --bench dispatch                  # interleaved, then criterion
//! cargo bench -p pisa-vk --bench dispatch -- interleaved   # the interleaved sides only
//! LP_NUM_THREADS=0 PISA_BENCH_ROUNDS=5000 cargo bench -p pisa-vk --bench dispatch -- interleaved
//! ```

mod raw_ash;

use criterion::Criterion;
use pisa_vk::{Buffer, Context, Module};
use std::time::Instant;

const EMPTY: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 .host_access(\"g\") @G[64] = { .zero 64 };\n\
    .kernel @empty(.param[8] %buf) {\n  .reg .64b %p;\n  ld.param.64b %p, [%buf];\n}\n";

/// Dispatches per side in one round of the interleaved measurement.
const BLOCK: u32 = 20;

/// What every measurement uses: the context, the module, its argument, the raw baseline
/// (on its own device of the same physical device) and a second raw baseline (on a third
/// device), the control of the interleaved measurement.
struct Setup {
    ctx: Context,
    module: Module,
    buf: Buffer<u32>,
    raw: raw_ash::RawDispatch,
    raw2: raw_ash::RawDispatch,
}

impl Setup {
    fn new() -> Setup {
        let ctx = Context::new().expect("a Vulkan device");
        let module = Module::from_source(&ctx, "empty.pisa", EMPTY).expect("valid");
        let buf = ctx.zeroed::<u32>(4).expect("buffer");
        module.dispatch("empty", 1, 1, (&buf,)).expect("warm-up");
        let k = &module.reflection().kernels[0];
        let raw = || {
            let r = raw_ash::RawDispatch::new(
                &ctx.info().name,
                module.spirv(),
                "empty",
                k.push_constant_size,
            );
            r.dispatch();
            r
        };
        let (raw, raw2) = (raw(), raw());
        Setup {
            ctx,
            module,
            buf,
            raw,
            raw2,
        }
    }

    fn api_dispatch(&self) {
        self.module
            .dispatch("empty", 1, 1, (&self.buf,))
            .expect("dispatch")
    }
}

/// The calling thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`), where there is one.
#[cfg(target_os = "linux")]
fn thread_cpu() -> Option<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu() -> Option<f64> {
    None
}

/// The 1-minute load average, where the system reports one.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// The `q`-quantile (0..=1) of `v` (sorted here), nearest rank.
fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// One side of the interleaved measurement: per-dispatch wall and thread-CPU seconds of
/// each round's block.
struct Side<'a> {
    name: &'static str,
    run: Box<dyn Fn() + 'a>,
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl<'a> Side<'a> {
    fn new(name: &'static str, run: Box<dyn Fn() + 'a>, rounds: usize) -> Side<'a> {
        Side {
            name,
            run,
            wall: Vec::with_capacity(rounds),
            cpu: Vec::with_capacity(rounds),
        }
    }

    /// Runs one block of the side's dispatches.
    fn block(&mut self) {
        let cpu = thread_cpu();
        let t = Instant::now();
        for _ in 0..BLOCK {
            (self.run)();
        }
        self.wall.push(t.elapsed().as_secs_f64() / BLOCK as f64);
        if let (Some(a), Some(b)) = (cpu, thread_cpu()) {
            self.cpu.push((b - a) / BLOCK as f64);
        }
    }
}

/// The interleaved measurement (see the module documentation), printed on stderr: raw ash,
/// `Module::dispatch` and the control, a second raw ash device, whose ratio to the first
/// shows how far two identical sides drift apart in this run.
fn interleaved(s: &Setup, rounds: usize) {
    if rounds == 0 {
        return;
    }
    let load_before = load_average();
    let mut sides = [
        Side::new("raw ash", Box::new(|| s.raw.dispatch()), rounds),
        Side::new("Module::dispatch", Box::new(|| s.api_dispatch()), rounds),
        Side::new(
            "raw ash, second device",
            Box::new(|| s.raw2.dispatch()),
            rounds,
        ),
    ];
    for round in 0..rounds {
        // Each side takes each place in the order equally often.
        for i in 0..sides.len() {
            sides[(round + i) % 3].block();
        }
    }
    let [raw, api, control] = &mut sides;
    eprintln!(
        "dispatch overhead, interleaved: {rounds} rounds of {BLOCK} dispatches per side on {}{}",
        s.ctx.info().name,
        match std::env::var("LP_NUM_THREADS") {
            Ok(n) => format!(" (LP_NUM_THREADS={n})"),
            Err(_) => String::new(),
        }
    );
    for side in [&mut *raw, &mut *api, &mut *control] {
        let us = |v: &mut Vec<f64>, q| quantile(v, q) * 1e6;
        let cpu = match side.cpu.is_empty() {
            true => String::new(),
            false => format!(", calling thread CPU {:.2} us", us(&mut side.cpu, 0.5)),
        };
        eprintln!(
            "  {:<24} wall per dispatch median {:.2} us [p10 {:.2}, p25 {:.2}, p75 {:.2}]{cpu}",
            side.name,
            us(&mut side.wall, 0.5),
            us(&mut side.wall, 0.1),
            us(&mut side.wall, 0.25),
            us(&mut side.wall, 0.75),
        );
    }
    for (side, of) in [(&*api, "Module::dispatch"), (&*control, "control")] {
        // Per round, the side's block against the raw block next to it in time.
        let mut ratios: Vec<f64> = side
            .wall
            .iter()
            .zip(&raw.wall)
            .map(|(a, r)| a / r)
            .collect();
        let (mut a, mut r) = (side.wall.clone(), raw.wall.clone());
        eprintln!(
            "  {of} / raw ash: per-round ratios median {:.3} [p25 {:.3}, p75 {:.3}]; \
             ratio of medians {:.3}, of 10th percentiles {:.3}",
            quantile(&mut ratios, 0.5),
            quantile(&mut ratios, 0.25),
            quantile(&mut ratios, 0.75),
            quantile(&mut a, 0.5) / quantile(&mut r, 0.5),
            quantile(&mut a, 0.1) / quantile(&mut r, 0.1),
        );
    }
    eprintln!(
        "  load average: {load_before} before, {} after",
        load_average()
    );
}

fn criterion_groups(c: &mut Criterion, s: &Setup) {
    let typed = s.module.kernel::<(Buffer<u32>,)>("empty").expect("typed");
    let mut g = c.benchmark_group(format!("dispatch overhead [{}]", s.ctx.info().name));
    g.bench_function("raw ash submit+wait", |b| b.iter(|| s.raw.dispatch()));
    g.bench_function("Module::dispatch", |b| b.iter(|| s.api_dispatch()));
    g.bench_function("Kernel::dispatch (typed)", |b| {
        b.iter(|| typed.dispatch(1, 1, (&s.buf,)).expect("dispatch"))
    });
    g.bench_function("Stream of one launch", |b| {
        b.iter(|| {
            let mut st = s.ctx.stream();
            st.dispatch(&s.module, "empty", 1, 1, (&s.buf,))
                .expect("record");
            st.run().expect("run")
        })
    });
    g.finish();
    c.bench_function("load_module", |b| {
        b.iter(|| Module::from_source(&s.ctx, "empty.pisa", EMPTY).expect("load"))
    });
}

fn main() {
    let setup = Setup::new();
    // `cargo bench` passes `--bench`; `cargo test --benches` does not (then a short run
    // checks that the measurement works).
    let benching = std::env::args().any(|a| a == "--bench");
    let rounds = match std::env::var("PISA_BENCH_ROUNDS") {
        Ok(v) => v.parse().expect("PISA_BENCH_ROUNDS: a number of rounds"),
        Err(_) if benching => 2000,
        Err(_) => 4,
    };
    interleaved(&setup, rounds);
    let mut c = Criterion::default().configure_from_args();
    criterion_groups(&mut c, &setup);
    c.final_summary();
}
