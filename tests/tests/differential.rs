//! Differential testing: random valid PISA programs (`pisa_conformance::generator`) run on
//! the Vulkan device and on the CPU reference, every output bit compared; and the programs
//! of past campaign failures, with their results worked out by hand from the specification.
//! A failure is minimized and written to `target/difftest/failure-V-SEED.pisa`.
//!
//! lavapipe runs as users get it: the product caps its code generation below AVX-512 on
//! AVX-512 CPUs (docs/driver-bugs.md), nothing in the harness does.
//!
//! Longer campaigns: `cargo run --release -p pisa-conformance --bin pisa-difftest --
//! --generator 3 --count 5000 --seed S`; their record is in docs/conformance.md.
//!
//! Generated programs are translated as `Module::from_source` translates them on the test
//! device (`pisa_conformance::user_options`: its float model, lavapipe's float64, unless
//! `PISA_CONFORMANCE_FLOAT` names one).

use pisa_conformance::generator::{generate_version, run_case_version, GENERATOR_VERSIONS};
use pisa_conformance::{device_job, reference_job, regressions};
use pisa_vk::reference::{Data, Job};

/// Programs per generator version in the fixed set (about one a second in a debug build on
/// lavapipe with 2 cores). Generator 2's seeds 0-99 include the 21 that showed two bugs of
/// the control-flow lowering before main's rewrite (a branch whose two targets are one block
/// followed by a barrier: seeds 0 5 9 44 54 56 60 83; an irreducible cycle in a loop,
/// "jump target not in scope": seeds 4 6 26 33 36 47 49 51 62 76 77 80 89).
const FIXED: [u64; 3] = [200, 100, 60];

/// Campaign failures replayed as they were generated (generator version, seed); each has a
/// hand-checked program below.
const CAMPAIGN_FAILURES: &[(u32, u64)] = &[(1, 9_100_141), (1, 9_101_075), (1, 9_103_400)];

fn run_all(cases: impl Iterator<Item = (u32, u64)>) {
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (version, seed) in cases {
        ran += 1;
        if let Err(m) = run_case_version(version, seed) {
            failures.push(m.to_string());
        }
    }
    eprintln!("{ran} programs in {:.1}s", start.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn fixed_seeds_of_generator_1_agree_bit_for_bit() {
    run_all((0..FIXED[0]).map(|s| (1, s)));
}

#[test]
fn fixed_seeds_of_generator_2_agree_bit_for_bit() {
    run_all((0..FIXED[1]).map(|s| (2, s)));
}

/// Generator 3: generator 2's programs of the same seeds, split into two linked modules.
#[test]
fn fixed_seeds_of_generator_3_agree_bit_for_bit() {
    run_all((0..FIXED[2]).map(|s| (3, s)));
}

#[test]
fn campaign_failures_agree_bit_for_bit() {
    run_all(CAMPAIGN_FAILURES.iter().copied());
}

#[test]
fn generation_is_deterministic_and_in_size() {
    for version in 1..=GENERATOR_VERSIONS {
        for seed in 0..50 {
            let a = generate_version(version, seed);
            assert_eq!(a.sources(), generate_version(version, seed).sources());
            let n = a.static_instructions();
            assert!(
                (60..900).contains(&n),
                "generator {version} seed {seed}: {n} instructions"
            );
        }
    }
}

/// Generator 1's programs are what they were when the recorded campaigns ran: a digest of
/// the text of its first programs (FNV-1a over seeds 0..20), taken at commit 30ab317.
#[test]
fn generator_1_programs_are_unchanged() {
    let h = digest(1);
    assert_eq!(h, GENERATOR_1_DIGEST, "generator 1 changed: {h:#x}");
}

const GENERATOR_1_DIGEST: u64 = 0xb07d_09ed_13a3_8e9d;

/// Generator 2's programs are those of its recorded fixed sets and campaigns: a digest of
/// seeds 0..20, taken when generator 3 was added.
#[test]
fn generator_2_programs_are_unchanged() {
    let h = digest(2);
    assert_eq!(h, GENERATOR_2_DIGEST, "generator 2 changed: {h:#x}");
}

const GENERATOR_2_DIGEST: u64 = 0xb4bb_0de4_539f_c816;

/// FNV-1a over the text of the programs of seeds 0..20 of generator `version`.
fn digest(version: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for seed in 0..20 {
        for b in generate_version(version, seed).text().bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Generator 3's program of a seed is generator 2's, split: two modules (the kernel's and a
/// library) that link, whose lines are generator 2's plus `.import` declarations and
/// `.export` prefixes, with something crossing the modules in most programs.
#[test]
fn generator_3_splits_generator_2_into_two_linked_modules() {
    let mut crossing = 0;
    for seed in 0..50 {
        let two = generate_version(2, seed);
        let three = generate_version(3, seed);
        assert_eq!(
            two.text(),
            three.text(),
            "seed {seed}: generator 2's program"
        );
        let sources = three.sources();
        assert_eq!(sources.len(), 2, "seed {seed}");
        let refs: Vec<(&str, &str)> = sources
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        pisa_conformance::link_sources(&refs);
        let mut lines: Vec<&str> = Vec::new();
        for (_, text) in &sources {
            for l in text.lines() {
                if l.starts_with(".import ") {
                    crossing += 1;
                } else if !l.starts_with(".version") && !l.starts_with(".target") {
                    lines.push(l.trim_start_matches(".export "));
                }
            }
        }
        let text = two.text();
        let mut want: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with(".version") && !l.starts_with(".target"))
            .collect();
        lines.sort_unstable();
        want.sort_unstable();
        assert_eq!(lines, want, "seed {seed}: {text}");
    }
    assert!(crossing >= 50, "only {crossing} imports in 50 programs");
}

/// The programs of `tests/regressions/` (the three campaign seeds of the masked-merge
/// miscompile, docs/driver-bugs.md), each by 16 work-items in work-groups of 8, on the device
/// through the product's default path and on the reference: every work-item's 20 output
/// words must be the `want` its file works out by hand from isa-3 §3.3 and arch-3 §3.4.
#[test]
fn regressions_of_the_masked_merge_miscompile_by_hand() {
    let cases = regressions();
    assert_eq!(cases.len(), 3, "tests/regressions/ holds the three seeds");
    for case in cases {
        let job = Job::new("k", 16u64, 8u64)
            .arg(Data::zero_words(16 * 20))
            .arg(Data::words(&case.input));
        let device = device_job(&case.name, &case.source, &Default::default(), &job)
            .unwrap_or_else(|e| panic!("{}: device: {e}", case.name))
            .words(0);
        let reference = reference_job(&case.name, &case.source, &job, Default::default())
            .unwrap_or_else(|e| panic!("{}: reference: {e}", case.name))
            .words(0);
        for (side, out) in [("device", &device), ("reference", &reference)] {
            assert_eq!(out.len(), 16 * 20);
            for (item, words) in out.chunks(20).enumerate() {
                assert_eq!(
                    words,
                    case.want,
                    "{}: {side}: work-item {item} (device {})",
                    case.name,
                    pisa_conformance::context().info().name
                );
            }
        }
    }
}

/// Campaign seeds 40005480 and 40006438 (generator 3; generator 2 too), reduced by hand: an
/// atomic float sum of memory holding -0 and an addend that the driver knows to be +0 (`xor`
/// of a register with itself; `isaddr.global` of a shared address, which the translator
/// resolves to 0). IEEE 754 §6.3: an exact zero sum is +0 in round-to-nearest unless both
/// addends are -0, so only the last `.f` case stays -0; lavapipe folded `x + 0.0 → x` and
/// gave -0 in the first three before `fatom` recomputed the sign (spec-notes §44).
#[test]
fn seeds_40005480_and_40006438_atomic_sum_of_minus_zero_and_a_folded_zero() {
    let src = ".version 0.1;\n.target 100;\n\
        .kernel @k(.param[8] %out, .param[8] %in) {\n\
        .reg .64b %po, %pi, %ga;\n.reg .32b %x, %z, %zi, %o, %m;\n.reg .16b %h, %hz, %ho;\n\
        .shared .align 8 @S[8];\n\
        ld.param.64b %po, [%out];\nld.param.64b %pi, [%in];\n\
        ld.global.32b %x, [%pi];\nxor.32b %z, %x, %x;\n\
        addrcast.generic.shared %ga, @S;\nisaddr.global %zi, %ga;\n\
        mov.32b %m, 0x80000000;\n\
        st.global.32b [%po], %m;\nfatom.global.add.f %o, [%po], %z;\n\
        st.global.32b [%po + 4], %m;\nfatom.global.add.f %o, [%po + 4], %zi;\n\
        st.global.32b [%po + 8], %m;\nfatom.global.sub.f %o, [%po + 8], %m;\n\
        st.global.32b [%po + 12], %m;\nfatom.global.add.f %o, [%po + 12], %m;\n\
        mov.16b %h, 0x8000;\nst.shared.16b [@S], %h;\n\
        trunc.16b.32b %hz, %x;\nxor.16b %hz, %hz, %hz;\n\
        fatom.generic.add.hf %ho, [%ga], %hz;\n\
        ld.shared.16b %h, [@S];\nst.global.16b [%po + 16], %h;\n}\n";
    let job = Job::new("k", 1u64, 1u64)
        .arg(Data::Buffer(vec![0; 20]))
        .arg(Data::Buffer(0x1234_5678u32.to_le_bytes().to_vec()));
    // -0 + +0, -0 + +0, -0 - -0: +0; -0 + -0: -0; .hf -0 + +0: +0
    let want: Vec<u8> = [0u32, 0, 0, 0x8000_0000, 0]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let device = device_job("zero.pisa", src, &Default::default(), &job)
        .unwrap_or_else(|e| panic!("device: {e}"));
    let reference = reference_job("zero.pisa", src, &job, Default::default())
        .unwrap_or_else(|e| panic!("reference: {e}"));
    assert_eq!(device.buffers[0], want, "device");
    assert_eq!(reference.buffers[0], want, "reference");
}
