//! `pisa-difftest`: a long differential campaign. Generates random valid PISA programs,
//! runs each on the Vulkan device and on the CPU reference, and reports every difference
//! (minimized, written to `target/difftest/failure-V-SEED.pisa` with the inputs in
//! `failure-V-SEED.in`, the differing value named, and the `pisa-vk run` lines that rerun
//! it). Devices run as users get them: on AVX-512 CPUs the product caps lavapipe's code
//! generation below AVX-512 unless `GALLIUM_OVERRIDE_CPU_CAPS` is set (docs/driver-bugs.md).
//!
//! `pisa-difftest [--generator V] --count 10000 --seed 1 [--threads N] [--stop-after K]`
//! (`--generator 1`, the default, is the generator of the campaigns recorded before
//! version 2 existed; `--generator 3` splits version 2's programs into two linked modules;
//! `--generator 4` adds cross-lane instructions under divergence and its own work-group sizes;
//! `--check-only N [--generator V]` checks N programs with the front end and the linker;
//! `--current FILE` writes each seed to FILE before running it, so that a campaign script
//! can name the program that aborted the process, as an LLVM error in lavapipe does).
//! Programs are translated as `Module::from_source` translates them on the device (its float
//! model, unless `PISA_CONFORMANCE_FLOAT` names one); the summary names the model.

use pisa_conformance::generator::{run_case_stats, Kind, GENERATOR_VERSIONS};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

fn main() {
    let mut count = 1000u64;
    let mut seed = 1u64;
    let mut threads = 1usize;
    let mut stop_after = usize::MAX;
    let mut version = 1u32;
    let mut check_only = None;
    let mut current: Option<String> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).and_then(|s| s.parse::<u64>().ok());
        if args[i] == "--current" && i + 1 < args.len() {
            current = Some(args[i + 1].clone());
            i += 2;
            continue;
        }
        match (args[i].as_str(), v) {
            ("--count", Some(v)) => count = v,
            ("--seed", Some(v)) => seed = v,
            ("--threads", Some(v)) => threads = v.max(1) as usize,
            ("--stop-after", Some(v)) => stop_after = v as usize,
            ("--check-only", Some(v)) => check_only = Some(v),
            ("--generator", Some(v)) if (1..=GENERATOR_VERSIONS as u64).contains(&v) => {
                version = v as u32
            }
            _ => {
                eprintln!(
                    "usage: pisa-difftest [--generator 1..={GENERATOR_VERSIONS}] [--count N] \
                     [--seed S] [--threads T] [--stop-after K] [--current FILE] | --check-only N"
                );
                std::process::exit(2);
            }
        }
        i += 2;
    }
    if let Some(n) = check_only {
        // front-end validity of many generated programs: distinct first error lines
        let mut seen = std::collections::BTreeMap::new();
        for s in seed..seed + n {
            if let Some(e) = pisa_conformance::generator::check_only(version, s) {
                let key: String = e
                    .lines()
                    .next()
                    .unwrap_or("")
                    .split(": ")
                    .skip(2)
                    .collect::<Vec<_>>()
                    .join(": ");
                seen.entry(key).or_insert((s, e));
            }
        }
        for (k, (s, e)) in &seen {
            println!("seed {s}: {k}\n{e}");
        }
        println!(
            "{n} programs of generator {version} checked, {} distinct errors",
            seen.len()
        );
        if !seen.is_empty() {
            std::process::exit(1);
        }
        return;
    }
    let device = pisa_conformance::context().info().name.clone();
    let float = pisa_conformance::generator::options()
        .float
        .unwrap_or_default();
    let start = Instant::now();
    let next = AtomicU64::new(0);
    let ran = AtomicU64::new(0);
    let static_insts = AtomicU64::new(0);
    let dyn_insts = AtomicU64::new(0);
    let failures = Mutex::new(Vec::new());
    let nfail = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= count || nfail.load(Ordering::Relaxed) >= stop_after {
                    break;
                }
                let case = seed.wrapping_add(k);
                if let Some(path) = &current {
                    // what a crash of the driver (an abort in its compiler) leaves behind
                    let _ = std::fs::write(path, format!("{case}\n"));
                }
                match run_case_stats(version, case) {
                    Ok(st) => {
                        static_insts.fetch_add(st.static_instructions as u64, Ordering::Relaxed);
                        dyn_insts.fetch_add(st.dynamic_instructions, Ordering::Relaxed);
                    }
                    Err(m) => {
                        eprintln!("{m}");
                        nfail.fetch_add(1, Ordering::Relaxed);
                        failures.lock().unwrap().push((m.seed, m.kind));
                    }
                }
                let n = ran.fetch_add(1, Ordering::Relaxed) + 1;
                if n % 500 == 0 {
                    eprintln!(
                        "... {n} programs, {} failures, {:.1}s",
                        nfail.load(Ordering::Relaxed),
                        start.elapsed().as_secs_f64()
                    );
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let n = ran.load(Ordering::Relaxed);
    let f = failures.into_inner().unwrap();
    let count_of = |k: Kind| f.iter().filter(|(_, x)| *x == k).count();
    println!(
        "programs:               {n} (generator {version}, seeds {seed}..{})",
        seed + count
    );
    println!(
        "device:                 {device}{}",
        match pisa_vk::avoid_known_driver_bugs() {
            pisa_vk::CpuCaps::Capped => ", without AVX-512 (pisa-vk's default)".to_string(),
            pisa_vk::CpuCaps::SetByUser(v) => format!(", GALLIUM_OVERRIDE_CPU_CAPS={v}"),
            _ => String::new(),
        }
    );
    for warning in pisa_conformance::context().driver_bugs().warnings() {
        println!("driver bug:             {warning}");
    }
    println!("float model:            {float:?}");
    println!(
        "static instructions:    {}",
        static_insts.load(Ordering::Relaxed)
    );
    println!(
        "device instructions:    {} (upper bound: per-item instruction count with loop trip counts, x the program's work-items)",
        dyn_insts.load(Ordering::Relaxed)
    );
    println!(
        "mismatches:             {} (translate errors {}, device errors {}, invalid programs {})",
        count_of(Kind::Mismatch),
        count_of(Kind::Translate),
        count_of(Kind::Device),
        count_of(Kind::Reference)
    );
    let mut seeds: Vec<u64> = f.iter().map(|(s, _)| *s).collect();
    seeds.sort_unstable();
    println!("failing seeds:          {seeds:?}");
    println!(
        "time:                   {secs:.1}s ({:.1} programs/s)",
        n as f64 / secs
    );
    if !f.is_empty() {
        std::process::exit(1);
    }
}
