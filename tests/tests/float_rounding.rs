//! Every rounding mode (`.re .rd .ru .rz .rna`) of the rounded floating-point instructions
//! and conversions, on the device against the reference interpreter's soft-float
//! (`rustc_apfloat`, independent of the back end's f64 round-to-odd emulation), bit for bit
//! (a NaN result only has to be a NaN). Inputs: ±0, denormals, the largest finite value,
//! infinities, NaNs, values whose sums and products are ties in each format, and random
//! ones.

use pisa_conformance::{eval, is_nan_bits, kernel_module, pairs, run_both};

const MODES: [&str; 5] = ["re", "rd", "ru", "rz", "rna"];

fn f32_edges() -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let extra = [
        0x8000_0003,
        0x3380_0000, // 2^-24: 1 + this is a tie
        0x33C0_0000, // 1.5 * 2^-24
        0xB400_0000,
        0x4B80_0001,
        0x0040_0001,
        0x7F00_0001,
    ];
    let mut v = pisa_conformance::f32_inputs(&extra, 11, 10);
    // Near 1, so that sums and products round in the low bits.
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    v.extend((0..4).map(|_| (0x3F80_0000 | (rng.random::<u32>() & 0xFF_FFFF)) as u64));
    v
}

fn f16_edges(bf: bool) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut v: Vec<u16> = if bf {
        vec![
            0, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x807F, 0x0080, 0x7F7F,
            0xFF7F, 0x3F81, 0x3B80, 0x3BC0, 0x4049, 0x3EAB,
        ]
    } else {
        vec![
            0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x0400, 0x7BFF,
            0xFBFF, 0x3C01, 0x1000, 0x1200, 0x4248, 0x3555,
        ]
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    for _ in 0..8 {
        v.push(rng.random::<u16>());
    }
    v.into_iter().map(|x| x as u64).collect()
}

fn f64_edges() -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut v: Vec<u64> = vec![
        0,
        1 << 63,
        1f64.to_bits(),
        (-1f64).to_bits(),
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        f64::NAN.to_bits(),
        1,
        (1 << 63) | 5,
        f64::MAX.to_bits(),
        f64::MIN.to_bits(),
        f64::MIN_POSITIVE.to_bits(),
        1f64.to_bits() + 1,
        2f64.powi(-53).to_bits(),
        (1.5 * 2f64.powi(-53)).to_bits(),
        2f64.powi(970).to_bits(),
        (f64::MAX.to_bits()) - 1,
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    for _ in 0..8 {
        v.push(rng.random::<u64>());
    }
    v
}

fn triples(xs: &[u64], n: usize) -> Vec<Vec<u64>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(14);
    (0..n)
        .map(|_| (0..3).map(|_| xs[rng.random_range(0..xs.len())]).collect())
        .collect()
}

/// Runs `inst` for every mode; `eval` asserts device == reference.
fn all_modes(op: &str, ty: &str, bits: u32, nsrc: usize, cases: &[Vec<u64>]) {
    for m in MODES {
        let inst = match nsrc {
            1 => format!("{op}.{m}.{ty} %d, %s0"),
            2 => format!("{op}.{m}.{ty} %d, %s0, %s1"),
            _ => format!("{op}.{m}.{ty} %d, %s0, %s1, %s2"),
        };
        eval(&inst, &vec![bits; nsrc], bits, cases);
    }
}

#[test]
fn single_precision_arithmetic_in_every_mode() {
    let xs = f32_edges();
    let p = pairs(&xs, &xs);
    for op in ["fadd", "fsub", "fmul", "fdiv"] {
        all_modes(op, "f", 32, 2, &p);
    }
    let singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
    all_modes("fsqrt", "f", 32, 1, &singles);
    all_modes("fmad", "f", 32, 3, &triples(&xs, 3000));
    eval("fadd.rd.ftz.dsat.f %d, %s0, %s1", &[32, 32], 32, &p);
    eval("fmul.ru.ftz.f %d, %s0, %s1", &[32, 32], 32, &p);
}

#[test]
fn half_and_bfloat16_arithmetic_in_every_mode() {
    for (ty, bf) in [("hf", false), ("bf", true)] {
        let xs = f16_edges(bf);
        let p = pairs(&xs, &xs);
        for op in ["fadd", "fsub", "fmul"] {
            all_modes(op, ty, 16, 2, &p);
        }
        all_modes("fmad", ty, 16, 3, &triples(&xs, 2000));
        eval(
            &format!("fmul.rz.dsat.{ty} %d, %s0, %s1"),
            &[16, 16],
            16,
            &p,
        );
        let words: Vec<[u32; 3]> = pairs(&xs, &xs)
            .into_iter()
            .map(|c| {
                let (a, b) = (c[0] as u32, c[1] as u32);
                [a | (b ^ 0x8000) << 16, b | a << 16, a | a << 16]
            })
            .collect();
        for m in MODES {
            packed(&format!("fadd.{m}.{ty}x2 %d, %a, %b"), &words, true);
            packed(&format!("fmad.{m}.{ty}x2 %d, %a, %b, %c"), &words, true);
        }
        // fmul.full: the exact product rounded once to .f.
        for m in MODES {
            eval(
                &format!("fmul.full.{m}.{ty} %d, %s0, %s1"),
                &[16, 16],
                32,
                &p,
            );
        }
    }
}

#[test]
fn double_precision_sums_in_every_mode() {
    let xs = f64_edges();
    let p = pairs(&xs, &xs);
    for op in ["fadd", "fsub"] {
        all_modes(op, "df", 64, 2, &p);
    }
    eval("fmul.df %d, %s0, %s1", &[64, 64], 64, &p);
}

/// [`f64_edges`] plus values whose products, quotients and roots are ties, exact, overflow
/// or underflow into the denormals, and the largest denormal.
fn f64_exact_edges() -> Vec<u64> {
    let mut v = f64_edges();
    v.extend([
        3f64.to_bits(), // 3 * (1 + 2^-52) is a tie
        (-3f64).to_bits(),
        0.5f64.to_bits(),
        (1.0f64 / 3.0).to_bits(),
        (1.5 * 2f64.powi(-537)).to_bits(), // squares and products round into the denormals
        2f64.powi(-538).to_bits(),
        (-2f64.powi(-537)).to_bits(),
        0x000F_FFFF_FFFF_FFFF, // largest denormal
        0x0000_0000_0000_0003,
        2f64.powi(-1022).to_bits() + 1,
        2f64.powi(600).to_bits(),
        (1.75 * 2f64.powi(511)).to_bits(), // squares overflow
        2f64.sqrt().to_bits(),
        (1f64 - 2f64.powi(-53)).to_bits(),
        (1f64 + 2f64.powi(-51)).to_bits(),
        4f64.to_bits(),
    ]);
    v
}

/// Random binary64 values: near 1 (low bits decide the rounding), any finite magnitude, and
/// raw bit patterns.
fn f64_random(n: usize, seed: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| match i % 3 {
            0 => 0x3FF0_0000_0000_0000 | (rng.random::<u64>() & 0xF_FFFF_FFFF_FFFF),
            1 => rng.random::<u64>() & !(1 << 62),
            _ => rng.random::<u64>(),
        })
        .collect()
}

#[test]
fn double_precision_products_quotients_and_roots_in_every_mode() {
    let xs = f64_exact_edges();
    let mut p = pairs(&xs, &xs);
    let r = f64_random(1200, 15);
    p.extend(r.chunks(2).map(|c| c.to_vec()));
    for op in ["fmul", "fdiv"] {
        all_modes(op, "df", 64, 2, &p);
    }
    let mut singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
    singles.extend(f64_random(900, 16).into_iter().map(|x| vec![x]));
    // Squares of 53-bit values: exact roots.
    singles.extend(
        [3f64, 1.0 + 2f64.powi(-26), 2f64.powi(-537) * 1.25].map(|x| vec![(x * x).to_bits()]),
    );
    all_modes("fsqrt", "df", 64, 1, &singles);
    eval("fmul.rd.ftz.df %d, %s0, %s1", &[64, 64], 64, &p);
    eval("fdiv.ru.ftz.df %d, %s0, %s1", &[64, 64], 64, &p);
    eval("fmul.rna.dsat.df %d, %s0, %s1", &[64, 64], 64, &p);
    eval("fsqrt.rz.ftz.df %d, %s0", &[64], 64, &singles);
}

#[test]
fn double_precision_fmad_is_fused_in_every_mode() {
    use rand::{Rng, SeedableRng};
    let xs = f64_exact_edges();
    let mut t = triples(&xs, 3000);
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let r = f64_random(3000, 18);
    for c in r.chunks(3) {
        let (a, b) = (f64::from_bits(c[0]), f64::from_bits(c[1]));
        // The addend cancels the rounded product (the result is the product's error), is
        // far smaller (sticky bits), or is random.
        let ab = a * b;
        let small = f64::from_bits(c[2]) * 2f64.powi(-rng.random_range(40..80));
        for addend in [-ab, ab * 2f64.powi(-60), small, f64::from_bits(c[2])] {
            t.push(vec![c[0], c[1], addend.to_bits()]);
        }
    }
    // Exact ties: (1 + 2^-52)(1 + 2^-52) - 1 - 2^-51 = 2^-104, plus tiny addends.
    let e = (1f64 + 2f64.powi(-52)).to_bits();
    for c in [
        -1f64,
        -1.0 - 2f64.powi(-51),
        2f64.powi(-53),
        -2f64.powi(-53),
        0.0,
        -0.0,
    ] {
        t.push(vec![e, e, c.to_bits()]);
        t.push(vec![3f64.to_bits(), e, c.to_bits()]);
    }
    all_modes("fmad", "df", 64, 3, &t);
    eval("fmad.df %d, %s0, %s1, %s2", &[64, 64, 64], 64, &t);
    eval(
        "fmad.rd.ftz.dsat.df %d, %s0, %s1, %s2",
        &[64, 64, 64],
        64,
        &t,
    );
}

#[test]
fn narrowing_conversions_in_every_mode() {
    let xs = f32_edges();
    let singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
    let ds: Vec<Vec<u64>> = f64_edges()
        .into_iter()
        .chain(
            xs.iter()
                .map(|&x| (f32::from_bits(x as u32) as f64).to_bits()),
        )
        .chain([
            // Ties and near-ties of every narrower format.
            (1.0 + 2f64.powi(-24)).to_bits(),
            (1.0 + 2f64.powi(-11)).to_bits(),
            (1.0 + 2f64.powi(-8)).to_bits(),
            (1.0 + 2f64.powi(-11) + 2f64.powi(-40)).to_bits(),
            65520f64.to_bits(),
            (f32::MAX as f64 * (1.0 + 2f64.powi(-25))).to_bits(),
            2f64.powi(-149).to_bits(),
            (2f64.powi(-150)).to_bits(),
            (3.0 * 2f64.powi(-151)).to_bits(),
            2f64.powi(-25).to_bits(),
        ])
        .map(|x| vec![x])
        .collect();
    for m in MODES {
        for to in ["hf", "bf"] {
            eval(&format!("ftrunc.{to}.f.{m} %d, %s0"), &[32], 16, &singles);
            eval(&format!("ftrunc.{to}.df.{m} %d, %s0"), &[64], 16, &ds);
        }
        eval(&format!("ftrunc.f.df.{m} %d, %s0"), &[64], 32, &ds);
        eval(
            &format!("ftrunc.hf.f.{m}.dsat %d, %s0"),
            &[32],
            16,
            &singles,
        );
        eval(&format!("ftrunc.bf.df.{m}.ftz %d, %s0"), &[64], 16, &ds);
        eval(&format!("frnd.{m}.f %d, %s0"), &[32], 32, &singles);
        eval(&format!("f2i.s16.f.{m} %d, %s0"), &[32], 16, &singles);
    }
    let p = pairs(&xs, &xs);
    let words: Vec<[u32; 3]> = p.iter().map(|c| [c[0] as u32, c[1] as u32, 0]).collect();
    for m in MODES {
        packed(&format!("ftrunc2.hfx2.{m} %d, %f0, %f1"), &words, true);
        packed(&format!("ftrunc2.bfx2.{m}.dsat %d, %f0, %f1"), &words, true);
    }
}

#[test]
fn integer_to_float_in_every_mode() {
    let i64s: Vec<Vec<u64>> = pisa_conformance::int_inputs(64, 24, 21)
        .into_iter()
        .chain([
            (1 << 53) + 1,
            (1 << 24) + 1,
            (1 << 62) + (1 << 38) + 1,
            u64::MAX - (1 << 10),
            65520,
            65519,
        ])
        .map(|x| vec![x])
        .collect();
    let i32s: Vec<Vec<u64>> = pisa_conformance::int_inputs(32, 24, 22)
        .into_iter()
        .chain([(1 << 24) + 1, (1 << 24) + 3, 65520, 65504, 2049])
        .map(|x| vec![x])
        .collect();
    for m in MODES {
        for (to, bits) in [("f", 32), ("hf", 16), ("bf", 16), ("df", 64)] {
            eval(&format!("i2f.{to}.s64.{m} %d, %s0"), &[64], bits, &i64s);
            eval(&format!("i2f.{to}.u64.{m} %d, %s0"), &[64], bits, &i64s);
            eval(&format!("i2f.{to}.s32.{m} %d, %s0"), &[32], bits, &i32s);
            eval(&format!("i2f.{to}.u32.{m} %d, %s0"), &[32], bits, &i32s);
        }
        eval(&format!("i2f.hf.u32.{m}.dsat %d, %s0"), &[32], 16, &i32s);
    }
}

#[test]
fn conversions_overflow_when_the_rounded_source_exceeds_the_largest_finite_value() {
    // spec-notes §45: a source above the type's largest finite value gives +infinity in
    // every mode (isa-4 `i2f`, `ftrunc`) when it is still above it rounded to the type's
    // precision in the instruction's mode; the largest finite `.hf` is 65504 (0x7BFF), the
    // next step 65536. Values worked out by hand for `.re .rd .ru .rz .rna`.
    const MAX: u64 = 0x7BFF;
    const INF: u64 = 0x7C00;
    let rows: [(u64, [u64; 5]); 7] = [
        (65504, [MAX, MAX, MAX, MAX, MAX]),
        // 65505..65519 are nearer to 65504 than to 65536
        (65505, [MAX, MAX, INF, MAX, MAX]),
        (65519, [MAX, MAX, INF, MAX, MAX]),
        // the midpoint: ties to even is 65536 (65504's last significand bit is 1); away too
        (65520, [INF, MAX, INF, MAX, INF]),
        (65535, [INF, MAX, INF, MAX, INF]),
        // 65536 rounds to itself in every mode, above the largest finite value
        (65536, [INF, INF, INF, INF, INF]),
        (70000, [INF, INF, INF, INF, INF]),
    ];
    let cases: Vec<Vec<u64>> = rows.iter().map(|(x, _)| vec![*x]).collect();
    for (k, m) in MODES.iter().enumerate() {
        let got = eval(&format!("i2f.hf.u32.{m} %d, %s0"), &[32], 16, &cases);
        let want: Vec<u64> = rows.iter().map(|(_, w)| w[k]).collect();
        assert_eq!(got, want, "i2f.hf.u32.{m}");
        // the same values as f32 sources of `ftrunc` (exact in f32)
        let singles: Vec<Vec<u64>> = rows
            .iter()
            .map(|(x, _)| vec![(*x as f32).to_bits() as u64])
            .collect();
        let got = eval(&format!("ftrunc.hf.f.{m} %d, %s0"), &[32], 16, &singles);
        assert_eq!(got, want, "ftrunc.hf.f.{m}");
    }
}

#[test]
fn packed_conversions_to_integers() {
    let hs = f16_edges(false);
    let bs = f16_edges(true);
    for (ty, xs) in [("hfx2", &hs), ("bfx2", &bs)] {
        let words: Vec<[u32; 3]> = pairs(xs, xs)
            .into_iter()
            .map(|c| [(c[0] | c[1] << 16) as u32, 0, 0])
            .collect();
        for m in MODES {
            packed(&format!("pf2i.s16x2.{ty}.{m} %d, %a"), &words, false);
            packed(&format!("pf2i.u16x2.{ty}.{m} %d, %a"), &words, false);
        }
    }
}

/// Runs `inst` with `%a %b %c %d` declared `.v2.16b` and `%f0 %f1` `.32b`, loaded from the
/// three words of each case (`%a`/`%f0` from the first, ...); compares `%d` (two halves)
/// between device and reference, a NaN half matching any NaN when `float`.
fn packed(inst: &str, cases: &[[u32; 3]], float: bool) {
    let mut load = String::new();
    for (reg, slot) in [("%a", 0), ("%b", 1), ("%c", 2)] {
        for (e, name) in ["x", "y"].iter().enumerate() {
            load.push_str(&format!(
                "ld.global.16b %e, [%pin + {}];\nmov.16b {reg}.{name}, %e;\n",
                8 * slot + 2 * e
            ));
        }
    }
    let src = kernel_module(
        "",
        &format!(
            ".reg .v2.16b %a, %b, %c, %d;\n.reg .16b %e;\n.reg .32b %f0, %f1, %i, %g, %s, %l;\n.reg .64b %pin, %pout, %off;\n\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\numad.32b %i, %g, %s, %l;\n\
             ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 24;\niadd.64b %pin, %pin, %off;\n\
             ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 8;\niadd.64b %pout, %pout, %off;\n\
             {load}ld.global.32b %f0, [%pin];\nld.global.32b %f1, [%pin + 8];\n{inst};\n\
             mov.16b %e, %d.x;\nst.global.16b [%pout], %e;\nmov.16b %e, %d.y;\nst.global.16b [%pout + 2], %e;\n"
        ),
    );
    let input: Vec<u64> = cases
        .iter()
        .flat_map(|c| c.iter().map(|&x| x as u64))
        .collect();
    run_both(&src, &input, 3, 1, 8, |d, r| {
        (0..2).all(|h| {
            let (x, y) = ((d >> (16 * h)) & 0xFFFF, (r >> (16 * h)) & 0xFFFF);
            x == y || (float && is_nan_bits(x, 16) && is_nan_bits(y, 16))
        })
    });
}
