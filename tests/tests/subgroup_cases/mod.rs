//! The sub-group scenarios shared by `subgroup.rs` (one PISA sub-group per hardware
//! sub-group) and `subgroup_clusters.rs` (PISA sub-groups as clusters of wider hardware
//! sub-groups): the kernel that runs one isa-7 instruction under divergence, the per-sub-group
//! inputs, the comparison with the reference interpreter, and a width-agnostic scan kernel;
//! also the check of the spec's 32-lane reduction that `virtual_lanes.rs` and
//! `unsized_subgroups.rs` run.
#![allow(dead_code)]

use pisa_conformance::{kernel_module, run_both_with};
use pisa_translator::Options;
use rand::{Rng, SeedableRng};

/// Dispatches the spec's `subgroup_reduce` (`examples/subgroup_reduce.pisa`, loaded as `m`)
/// over 256 elements `1000 i + 3` in work-groups of 64 and checks each 32-lane sub-group's
/// sum against its closed form, `1000 (1024 s + 496) + 96`.
pub fn check_spec_reduction(ctx: &pisa_vk::Context, m: &pisa_vk::Module) {
    let n = 256usize;
    let data: Vec<u32> = (0..n as u32).map(|i| i * 1000 + 3).collect();
    let input = ctx.buffer_from(&data).unwrap();
    let sums = ctx.zeroed::<u32>(n / 32).unwrap();
    m.dispatch(
        "subgroup_reduce",
        n as u64,
        64u64,
        &[(&input).into(), (&sums).into()],
    )
    .unwrap();
    for (s, g) in sums.read().unwrap().iter().enumerate() {
        // sum over i in 32s..32s+32 of 1000 i + 3
        let want = 1000 * (32 * 32 * s as u32 + 496) + 96;
        assert_eq!(*g, want, "sub-group {s}");
    }
}

/// The scan's inputs for `n` work-items: the edges `u32::MAX`, 0 and `0x8000_0000` (so that
/// sums wrap) between small distinct values.
pub fn scan_input(n: u32) -> Vec<u32> {
    (0..n)
        .map(|i| match i % 5 {
            0 => u32::MAX,
            1 => 0,
            2 => 0x8000_0000,
            _ => i * 3 + 1,
        })
        .collect()
}

/// Inclusive prefix sum within each sub-group with `shfl.up`, width-agnostic
/// (`%subgroupsize` steps).
pub const SCAN: &str = ".version 0.1;\n.target 100;\n\
.kernel @scan(.param[8] %data) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %lane, %size, %step, %v, %t;\n  .pred %low, %more;\n\
  ld.param.64b %p, [%data];\n  mov.32b %i, %localid.x;\n  umul.full.32b %off, %i, 4;\n\
  iadd.64b %p, %p, %off;\n  ld.global.32b %v, [%p];\n\
  mov.32b %lane, %laneid;\n  mov.32b %size, %subgroupsize;\n  mov.32b %step, 1;\n\
loop:\n\
  shfl.up.32b %t, %v, %step, 0xffffffff;\n\
  ucmp.lt.32b %low, %lane, %step;\n  sel.32b %t, 0, %t, %low;\n  iadd.32b %v, %v, %t;\n\
  shl.32b %step, %step, 1;\n  ucmp.lt.32b %more, %step, %size;\n  goto.cond %more, loop;\n\
  st.global.32b [%p], %v;\n}\n";

/// Scenarios (sub-groups) per dispatch.
pub const SCENARIOS: usize = 64;
/// Work-group size: a multiple of every width tested.
pub const LOCAL: u64 = 64;
/// Words of input per work-item: value, control, mask, execute flag, old dst.
pub const IN_PER: usize = 5;

/// The kernel: loads the operands of work-item `i`, runs `inst` (on `%d`, `%v`, `%c`, `%m`)
/// only where the execute flag is set, and stores `%d` and the `%activemask` seen inside
/// the branch (0xDEAD where the work-item skipped it).
pub fn kernel(bits: u32, packed: bool, inst: &str) -> String {
    let (decl, load, store) = if packed {
        (
            ".reg .v2.16b %v, %d;\n.reg .16b %e16;\n".to_string(),
            "ld.global.16b %e16, [%pin];\nmov.16b %v.x, %e16;\n\
             ld.global.16b %e16, [%pin + 2];\nmov.16b %v.y, %e16;\n\
             ld.global.16b %e16, [%pin + 32];\nmov.16b %d.x, %e16;\n\
             ld.global.16b %e16, [%pin + 34];\nmov.16b %d.y, %e16;\n"
                .to_string(),
            "mov.16b %e16, %d.x;\nst.global.16b [%pout], %e16;\n\
             mov.16b %e16, %d.y;\nst.global.16b [%pout + 2], %e16;\n"
                .to_string(),
        )
    } else {
        (
            format!(".reg .{bits}b %v, %d;\n"),
            format!("ld.global.{bits}b %v, [%pin];\nld.global.{bits}b %d, [%pin + 32];\n"),
            format!("st.global.{bits}b [%pout], %d;\n"),
        )
    };
    kernel_module(
        "",
        &format!(
            ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %g, %s, %l, %c, %m, %e, %am;\n\
             .pred %skip;\n{decl}\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
             umad.32b %i, %g, %s, %l;\n\
             ld.param.64b %pin, [%in];\numul.full.32b %off, %i, {};\niadd.64b %pin, %pin, %off;\n\
             ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 16;\niadd.64b %pout, %pout, %off;\n\
             {load}ld.global.32b %c, [%pin + 8];\nld.global.32b %m, [%pin + 16];\n\
             ld.global.32b %e, [%pin + 24];\nmov.32b %am, 0xDEAD;\n\
             ucmp.eq.32b %skip, %e, 0;\ngoto.cond %skip, after;\n\
             mov.32b %am, %activemask;\n{inst};\n\
             after:\n{store}st.global.32b [%pout + 8], %am;",
            8 * IN_PER
        ),
    )
}

/// Per-scenario inputs for sub-groups of `w` lanes: `values(rng, lane)` gives a value.
pub fn scenarios(
    w: u32,
    seed: u64,
    mut value: impl FnMut(&mut rand::rngs::StdRng) -> u64,
) -> Vec<u64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let full = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
    let mut input = Vec::new();
    for s in 0..SCENARIOS {
        let mask: u32 = match s % 8 {
            0 => u32::MAX,
            1 => rng.random(),
            2 => 1 << rng.random_range(0..w),
            3 => 0x5555_5555,
            4 => full >> (w / 2),
            5 => rng.random::<u32>() & rng.random::<u32>(),
            6 => (1 << (w - 1)) | 1,
            _ => {
                if s == 7 {
                    0
                } else {
                    rng.random::<u32>() | rng.random::<u32>()
                }
            }
        };
        // Which lanes execute the instruction: all, then assorted divergent sets (at
        // least one lane).
        let exec: u32 = match (s / 8) % 4 {
            0 => full,
            1 => loop {
                let e = rng.random::<u32>() & full;
                if e != 0 {
                    break e;
                }
            },
            2 => 0xAAAA_AAAA & full,
            _ => full & !(1 << rng.random_range(0..w)),
        };
        // shfl control: the same for the whole sub-group in half the scenarios.
        let uniform_control = s % 2 == 0;
        let shared_control = control(&mut rng);
        for lane in 0..w {
            let c = if uniform_control {
                shared_control
            } else {
                control(&mut rng)
            };
            input.extend([
                value(&mut rng),
                c as u64,
                mask as u64,
                (exec >> lane & 1) as u64,
                rng.random::<u32>() as u64,
            ]);
        }
    }
    input
}

/// A `shfl` control word: lane offset, clamp value and segment mask, from the encoding
/// table or arbitrary, with the don't-care bits set at times.
pub fn control(rng: &mut rand::rngs::StdRng) -> u32 {
    let offset = match rng.random_range(0..4) {
        0 => rng.random_range(0..4),
        1 => [0, 1, 2, 4, 8, 16, 31][rng.random_range(0..7)],
        _ => rng.random_range(0..32),
    };
    let seg = match rng.random_range(0..3) {
        0 => [0u32, 0x10, 0x18, 0x1C, 0x1E][rng.random_range(0..5)],
        1 => 0,
        _ => rng.random_range(0..32),
    };
    let cval = rng.random_range(0..32u32);
    let junk = if rng.random_range(0..4) == 0 {
        rng.random::<u32>() & 0xFFE0_E0E0
    } else {
        0
    };
    offset | cval << 8 | seg << 16 | junk
}

/// Random 32-bit values with edge values mixed in.
pub fn int_value(bits: u32) -> impl FnMut(&mut rand::rngs::StdRng) -> u64 {
    let edges = pisa_conformance::int_inputs(bits, 0, 0);
    move |rng| {
        if rng.random_range(0..3) == 0 {
            edges[rng.random_range(0..edges.len())]
        } else {
            rng.random::<u64>() & pisa_conformance::mask(bits)
        }
    }
}

/// Floats of `ty` (`f`, `hf`, `bf`; a pair of 16-bit ones for the packed types): random,
/// and edge values (±0, ±inf, quiet and signalling NaNs of both signs with payloads,
/// denormals, extremes). NaNs are rarer in some scenarios than others through `nan_rate`.
pub fn float_value(ty: &str) -> impl FnMut(&mut rand::rngs::StdRng) -> u64 {
    let (w, edges): (u32, Vec<u64>) = match ty {
        "f" => (
            32,
            vec![
                0,
                0x8000_0000,
                0x7F80_0000,
                0xFF80_0000,
                0x7FC0_0000,
                0xFFC0_0001,
                0x7F80_0001,
                0xFFA0_0000,
                1,
                0x8000_0001,
                0x007F_FFFF,
                0x7F7F_FFFF,
                0xFF7F_FFFF,
                0x3F80_0000,
                0xBF80_0000,
            ],
        ),
        "hf" | "hfx2" => (
            16,
            vec![
                0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0xFD00, 1, 0x8001, 0x03FF,
                0x7BFF, 0xFBFF, 0x3C00, 0xBC00,
            ],
        ),
        _ => (
            16,
            vec![
                0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0xFFA0, 1, 0x8001, 0x007F,
                0x7F7F, 0xFF7F, 0x3F80, 0xBF80,
            ],
        ),
    };
    let n = if ty.ends_with("x2") { 2 } else { 1 };
    move |rng| {
        let mut v = 0u64;
        for e in 0..n {
            let x = match rng.random_range(0..8) {
                0..=2 => edges[rng.random_range(0..edges.len())],
                // Non-NaN values of a narrow range, so that equal magnitudes and ties occur.
                3 => edges[rng.random_range(0..2)] ^ rng.random_range(0..4),
                _ => rng.random::<u64>() & pisa_conformance::mask(w),
            };
            v |= x << (16 * e);
        }
        v
    }
}

/// Runs `inst` over the scenarios (input words of whole or partial sub-groups of
/// `options.subgroup_size` lanes) on the device translated with `options` and on the
/// reference at that width, bit for bit; also checks `%activemask` inside the branch against
/// the execute flags of the work-items present. Returns the device's `dst` per work-item.
pub fn check_with(
    options: &Options,
    bits: u32,
    packed: bool,
    inst: &str,
    input: &[u64],
) -> Vec<u64> {
    let w = options.subgroup_size as usize;
    let src = kernel(bits, packed, inst);
    let out = run_both_with(&src, input, IN_PER, 2, LOCAL, options, |a, b| a == b);
    for (s, chunk) in input.chunks(IN_PER * w).enumerate() {
        let lanes = chunk.len() / IN_PER;
        let exec: u64 = (0..lanes)
            .map(|l| chunk[l * IN_PER + 3] << l)
            .fold(0, |a, b| a | b);
        for l in 0..lanes {
            let am = out[2 * (s * w + l) + 1];
            let want = if chunk[l * IN_PER + 3] != 0 {
                exec
            } else {
                0xDEAD
            };
            assert_eq!(
                am, want,
                "`{inst}`: %activemask of lane {l} in scenario {s}"
            );
        }
    }
    out.iter().step_by(2).copied().collect()
}

/// How a test file makes the inputs of one dispatch: from the PISA width, a seed and a value
/// generator (plain [`scenarios`], or scenarios with a cut-short last work-group).
pub type Inputs = fn(u32, u64, &mut dyn FnMut(&mut rand::rngs::StdRng) -> u64) -> Vec<u64>;

/// Every `shfl` mode with and without `.sg`, translated with `o`, against the reference
/// (seeds `seed`, `seed + 1`, ...).
pub fn every_shfl(o: &Options, seed: u64, inputs: Inputs) {
    for (k, op) in ["up", "dn", "xor", "idx"].iter().enumerate() {
        for sg in ["", ".sg"] {
            let input = inputs(o.subgroup_size, seed + k as u64, &mut int_value(32));
            let inst = format!("shfl.{op}{sg}.32b %d, %v, %c, %m");
            check_with(o, 32, false, &inst, &input);
        }
    }
}

/// Every `ired` operation at 16 and 32 bits, translated with `o`, against the reference.
pub fn every_ired(o: &Options, seed: u64, inputs: Inputs) {
    let ops = [
        "sum", "smin", "smax", "umin", "umax", "and", "or", "xor", "absmax",
    ];
    for (k, op) in ops.iter().enumerate() {
        for bits in [16, 32] {
            let seed = seed + k as u64 * 2 + bits as u64;
            let input = inputs(o.subgroup_size, seed, &mut int_value(bits));
            let inst = format!("ired.{op}.{bits}b %d, %v, %m");
            check_with(o, bits, false, &inst, &input);
        }
    }
}

/// Every `fred` operation and type, with and without `.nanp`, translated with `o`, against
/// the reference.
pub fn every_fred(o: &Options, seed: u64, inputs: Inputs) {
    for (k, op) in ["min", "max", "absmax"].iter().enumerate() {
        for ty in ["f", "hf", "bf", "hfx2", "bfx2"] {
            for nanp in ["", ".nanp"] {
                let seed = seed + k as u64 * 16 + ty.len() as u64 * 2 + nanp.len() as u64;
                let input = inputs(o.subgroup_size, seed, &mut float_value(ty));
                let bits = if ty == "f" { 32 } else { 16 };
                let inst = format!("fred.{op}{nanp}.{ty} %d, %v, %m");
                check_with(o, bits, ty.ends_with("x2"), &inst, &input);
            }
        }
    }
}
