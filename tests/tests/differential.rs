//! Differential testing: random valid PISA programs (`pisa_conformance::generator`) run on
//! the Vulkan device and on the CPU reference, every output bit compared. A failure is
//! minimized and written to `target/difftest/failure-SEED.pisa`.
//!
//! Longer campaigns: `cargo run --release -p pisa-conformance --bin pisa-difftest -- --count 10000 --seed 1`.

use pisa_conformance::generator::{generate, run_case};

/// Seeds of the fixed set whose programs show a known device/reference difference, with the
/// failure they show (see the minimized programs in the differential-testing report). They
/// are left out so that the suite stays green while the bugs are open. None at present: the
/// seven float seeds (37 45 53 72 121 190 195) pass since spec-notes §44.
const KNOWN: &[(u64, &str)] = &[];

#[test]
fn fixed_seeds_agree_bit_for_bit() {
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0;
    for seed in 0..FIXED {
        if KNOWN.iter().any(|(s, _)| *s == seed) {
            continue;
        }
        ran += 1;
        if let Err(m) = run_case(seed) {
            failures.push(m.to_string());
        }
    }
    eprintln!("{ran} programs in {:.1}s", start.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Programs in the fixed set (about 20 per second in a debug build on lavapipe with 2 cores).
const FIXED: u64 = 200;

#[test]
fn generation_is_deterministic_and_in_size() {
    for seed in 0..50 {
        let a = generate(seed);
        assert_eq!(a.text(), generate(seed).text());
        let n = a.static_instructions();
        assert!((60..600).contains(&n), "seed {seed}: {n} instructions");
    }
}
