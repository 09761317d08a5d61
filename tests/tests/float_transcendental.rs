//! `fsin fcos fexp2 flog2 ftanh frcp frsqrt` on the device against the reference
//! interpreter (which evaluates them in `f64` with the host's libm and rounds once) within
//! 1 ULP of each other, and against `f64` libm within the ULP bounds of isa-2 (2 ULP for
//! `fsin fcos fexp2 ftanh`, 1 ULP for `frcp frsqrt flog2` away from 1). `.hf`/`.bf` are
//! checked on every 16-bit input. The 1,000,000-input measurement per function is
//! `million_inputs_max_ulp` (ignored by default: `cargo test --test float_transcendental --
//! --ignored --nocapture`); its figures are in docs/float-accuracy.md.

use pisa_conformance::{kernel_module, reference_u64, run_u64};

const FUNCS: [&str; 7] = [
    "fsin",
    "fcos",
    "fexp2",
    "flog2",
    "ftanh",
    "frcp",
    "frsqrt.fast",
];

fn kernel(inst: &str, bits: u32) -> String {
    kernel_module(
        "",
        &format!(
            ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %g, %l, %s;\n.reg .{bits}b %x, %d;\n\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
             umad.32b %i, %g, %s, %l;\n\
             ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 8;\niadd.64b %pin, %pin, %off;\n\
             ld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\n\
             ld.global.{bits}b %x, [%pin];\n{inst} %d, %x;\nst.global.{bits}b [%pout], %d;\n"
        ),
    )
}

/// Distance in representable values between two floats of a format whose sign bit is
/// `sign` (both non-NaN).
/// ULPs between two results whose sign bit is `sign` ([`pisa_conformance::ulp_distance`]);
/// `u64::MAX` when no bound may accept them (an infinity against anything else, different
/// signs: -0 against +0 included). A 16-bit value counts as infinite when it is one in
/// binary16 or in bfloat16.
fn ulps(a: u64, b: u64, sign: u64) -> u64 {
    use pisa_conformance::{ulp_distance, FloatFormat};
    let formats: &[FloatFormat] = match sign {
        s if s == 1 << 63 => &[FloatFormat::F64],
        s if s == 1 << 31 => &[FloatFormat::F32],
        _ => &[FloatFormat::F16, FloatFormat::BF16],
    };
    formats
        .iter()
        .map(|f| ulp_distance(*f, a, b).unwrap_or(u64::MAX))
        .max()
        .unwrap_or(u64::MAX)
}

fn is_nan(x: u64, bits: u32, bf: bool) -> bool {
    match (bits, bf) {
        (32, _) => f32::from_bits(x as u32).is_nan(),
        (_, false) => x & 0x7C00 == 0x7C00 && x & 0x3FF != 0,
        (_, true) => x & 0x7F80 == 0x7F80 && x & 0x7F != 0,
    }
}

fn f32_inputs(n: usize, seed: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        0x0000_0001,
        0x8000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x3F80_0001,
        0x3F7F_FFFF,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x42FE_0000, // 127
        0x4300_0000, // 128
        0xC315_0000, // -149
        0xC316_0000, // -150
        0x4B80_0000, // 2^24
        0x4B7F_FFFF,
        0x5A00_0000,
        0x7E00_0000,
        0x4049_0FDB, // pi
        0x3FC9_0FDB, // pi/2
        0x4616_4000,
        0x4120_0000, // 10
        0x3F00_0000, // 0.5
        0x3EFF_FFFF,
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for i in 0..n {
        v.push(match i % 3 {
            0 => rng.random::<u32>(),
            1 => (rng.random::<f32>() * 40.0 - 20.0).to_bits(),
            _ => (rng.random::<f32>() * 300.0 - 150.0).to_bits(),
        });
    }
    v.into_iter().map(|x| x as u64).collect()
}

/// Compares the device with the reference on `inputs` (at most 1 ULP apart, NaN for NaN) and
/// returns the device's results.
fn compare_with_reference(func: &str, ty: &str, inputs: &[u64]) -> Vec<u64> {
    let bits = if ty == "f" { 32 } else { 16 };
    let src = kernel(&format!("{func}.{ty}"), bits);
    let dev = run_u64(&src, inputs, 1, 1, 64);
    let reference = reference_u64(&src, inputs, 1, 1, 64, 32);
    let mask = (1u64 << bits) - 1;
    let sign = 1u64 << (bits - 1);
    let bf = ty == "bf";
    let mut worst = 0;
    for ((x, d), r) in inputs.iter().zip(&dev).zip(&reference) {
        let (d, r) = (d & mask, r & mask);
        if is_nan(r, bits, bf) || is_nan(d, bits, bf) {
            assert!(
                is_nan(r, bits, bf) && is_nan(d, bits, bf),
                "{func}.{ty} {x:#x}: device {d:#x}, reference {r:#x}"
            );
            continue;
        }
        let u = ulps(d, r, sign);
        worst = worst.max(u);
        assert!(
            u <= 1,
            "{func}.{ty} {x:#x}: device {d:#x}, reference {r:#x} ({u} ULP apart)"
        );
    }
    eprintln!(
        "{func}.{ty}: {} inputs, device/reference at most {worst} ULP apart",
        inputs.len()
    );
    dev
}

#[test]
fn single_precision_within_one_ulp_of_the_reference() {
    let xs = f32_inputs(3000, 1);
    for f in FUNCS {
        compare_with_reference(f, "f", &xs);
    }
}

/// Every `.hf` and `.bf` input: within 1 ULP of the reference, and within isa-2's bound of
/// the `f64` libm value (the maximum error printed is docs/float-accuracy.md's).
#[test]
fn half_and_bfloat16_every_input_within_one_ulp_of_the_reference() {
    let all: Vec<u64> = (0..=0xFFFFu64).collect();
    for ty in ["hf", "bf"] {
        let format = if ty == "hf" { HALF } else { BFLOAT16 };
        for f in FUNCS {
            let dev = compare_with_reference(f, ty, &all);
            let (mut worst, mut at) = (0f64, 0u64);
            for (&x, &d) in all.iter().zip(&dev) {
                let want = exact(f, format.value(x));
                let got = format.value(d & 0xFFFF);
                if want.is_nan() || format.overflows(want) {
                    assert!(
                        (want.is_nan() && got.is_nan()) || got == format.infinity(want),
                        "{f}.{ty} {x:#06x}: got {got:e}, want {want:e}"
                    );
                    continue;
                }
                let e = format.ulp_error(got, want);
                if e > worst {
                    (worst, at) = (e, x);
                }
            }
            eprintln!("{f}.{ty}: max {worst:.6} ULP of the f64 value (at {at:#06x})");
            assert!(worst <= bound(f), "{f}.{ty}: {worst} ULP at {at:#06x}");
        }
    }
}

/// A 16-bit binary floating-point format, for measuring errors against `f64` values.
struct Format16 {
    /// Significand bits after the point.
    fraction: i32,
    /// Exponent of the smallest normal number.
    min_exp: i32,
    /// Exponent of the largest finite number.
    max_exp: i32,
}

/// IEEE binary16 (`.hf`).
const HALF: Format16 = Format16 {
    fraction: 10,
    min_exp: -14,
    max_exp: 15,
};

/// bfloat16 (`.bf`): binary32's exponent range, 7 fraction bits.
const BFLOAT16: Format16 = Format16 {
    fraction: 7,
    min_exp: -126,
    max_exp: 127,
};

impl Format16 {
    /// The value of the bit pattern `x`.
    fn value(&self, x: u64) -> f64 {
        if self.fraction == 7 {
            f32::from_bits((x as u32) << 16) as f64
        } else {
            half::f16::from_bits(x as u16).to_f64()
        }
    }

    /// The ULP of the format at `v` (finite).
    fn ulp(&self, v: f64) -> f64 {
        let a = v.abs();
        let e = if a < 2f64.powi(self.min_exp) {
            self.min_exp
        } else {
            (a.log2().floor() as i32).min(self.max_exp)
        };
        2f64.powi(e - self.fraction)
    }

    /// Whether `v` rounds to an infinity (or is one) in round-to-nearest.
    fn overflows(&self, v: f64) -> bool {
        let max = (2.0 - 2f64.powi(-self.fraction)) * 2f64.powi(self.max_exp);
        v.abs() >= max + self.ulp(max) / 2.0
    }

    /// The format's infinity of `v`'s sign: what an overflowing `v` rounds to.
    fn infinity(&self, v: f64) -> f64 {
        f64::INFINITY.copysign(v)
    }

    /// Error of `got` from the real `want`, in ULPs of the format at `want`
    /// ([`pisa_conformance::ulp_error`]: infinite for a different sign or an infinity).
    fn ulp_error(&self, got: f64, want: f64) -> f64 {
        let format = pisa_conformance::FloatFormat {
            exponent: if self.fraction == 7 { 8 } else { 5 },
            fraction: self.fraction as u32,
        };
        pisa_conformance::ulp_error(format, got, want)
    }
}

/// `f64` libm value of `func` at `x`.
fn exact(func: &str, x: f64) -> f64 {
    match func {
        "fsin" => x.sin(),
        "fcos" => x.cos(),
        "fexp2" => x.exp2(),
        "flog2" => x.log2(),
        "ftanh" => x.tanh(),
        "frcp" => 1.0 / x,
        _ => 1.0 / x.sqrt(),
    }
}

/// Error of the `f32` `got` from the real `want`, in ULPs of `f32` at `want`
/// ([`pisa_conformance::ulp_error`]: infinite for a different sign or an infinity).
fn ulp_error(got: f32, want: f64) -> f64 {
    pisa_conformance::ulp_error(pisa_conformance::FloatFormat::F32, got as f64, want)
}

/// Max ULP error of `func.f` over `inputs` (NaN/infinite expectations must match exactly).
fn max_ulp(func: &str, inputs: &[u64]) -> (f64, u64) {
    let src = kernel(&format!("{func}.f"), 32);
    let dev = run_u64(&src, inputs, 1, 1, 64);
    let mut worst = (0f64, 0u64);
    for (x, d) in inputs.iter().zip(dev) {
        let xf = f32::from_bits(*x as u32);
        let got = f32::from_bits(d as u32);
        let want = exact(func, xf as f64);
        if want.is_nan() {
            assert!(got.is_nan(), "{func}.f {xf:e}: got {got:e}, expected NaN");
            continue;
        }
        if (want as f32).is_infinite() || want.is_infinite() {
            assert_eq!(got, want as f32, "{func}.f {xf:e}");
            continue;
        }
        let e = ulp_error(got, want);
        if e > worst.0 {
            worst = (e, *x);
        }
    }
    worst
}

/// isa-2's bound for `func.f` (ULP); `flog2` is 1 ULP except relative 2^-23 near 1.
fn bound(func: &str) -> f64 {
    match func {
        "frcp" | "frsqrt.fast" | "flog2" => 1.0,
        _ => 2.0,
    }
}

#[test]
fn single_precision_within_the_specified_ulp_of_f64_libm() {
    let xs = f32_inputs(20_000, 2);
    for f in FUNCS {
        let (e, x) = max_ulp(f, &xs);
        eprintln!("{f}.f: max {e:.6} ULP (at {x:#x})");
        assert!(e <= bound(f), "{f}.f: {e} ULP at {x:#x}");
    }
}

#[test]
#[ignore = "1,000,000 inputs per function: about a minute on lavapipe"]
fn million_inputs_max_ulp() {
    let xs = f32_inputs(1_000_000, 3);
    for f in FUNCS {
        let (e, x) = max_ulp(f, &xs);
        println!("{f}.f: max {e:.6} ULP over {} inputs (at {x:#x})", xs.len());
        assert!(e <= bound(f), "{f}.f: {e} ULP at {x:#x}");
    }
}

/// `x * 2^k` for an `f64` power-of-two scaling (exact while the result is normal).
fn scale(x: f64, k: i32) -> f64 {
    let (mut x, mut k) = (x, k);
    while k != 0 {
        let s = k.clamp(-500, 500);
        x *= 2f64.powi(s);
        k -= s;
    }
    x
}

/// Error in ULPs of `y` (positive normal) as `1/sqrt(x)`: with `y = 2^j y'`, `x' = 2^2j x`,
/// `δ = y'^2 x' - 1` in double-double (host fused `mul_add`), `y = (1 + δ/2 + O(δ²))/sqrt(x)`.
fn rsqrt_ulp_error(x: f64, y: f64) -> f64 {
    let j = ((y.to_bits() >> 52) as i32) - 1023;
    let (y, x) = (scale(y, -j), scale(x, 2 * j));
    let h1 = y * y;
    let l1 = y.mul_add(y, -h1);
    let h2 = h1 * x;
    let l2 = h1.mul_add(x, -h2) + l1 * x;
    let d = (h2 - 1.0) + l2;
    (y * d / 2.0).abs() / 2f64.powi(-52)
}

/// `frsqrt.fast.df` and `frsqrt.ftz.fast.df`: within isa-2's 1 ULP of the exact value
/// (measured with [`rsqrt_ulp_error`]) and of the reference; zeros, infinities, negative
/// values and NaNs as the reference.
#[test]
fn double_precision_rsqrt_within_one_ulp() {
    check_double_precision_rsqrt(20_000);
}

#[test]
#[ignore = "1,000,000 inputs per form: a few minutes on lavapipe and the reference"]
fn double_precision_rsqrt_million_inputs() {
    check_double_precision_rsqrt(1_000_000);
}

/// [`double_precision_rsqrt_within_one_ulp`] on the edge values and `random` more inputs.
fn check_double_precision_rsqrt(random: usize) {
    use rand::{Rng, SeedableRng};
    let mut xs: Vec<u64> = vec![
        0,
        1 << 63,
        1,
        3,
        0x000F_FFFF_FFFF_FFFF,
        0x0010_0000_0000_0000,
        1f64.to_bits(),
        4f64.to_bits(),
        2f64.to_bits(),
        0.25f64.to_bits(),
        (1f64 - 2f64.powi(-53)).to_bits(),
        f64::MAX.to_bits(),
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        f64::NAN.to_bits(),
        (-1f64).to_bits(),
        (1u64 << 63) | 1,
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    for i in 0..random {
        xs.push(match i % 3 {
            0 => rng.random::<u64>() >> 1,
            1 => 0x3FF0_0000_0000_0000 | (rng.random::<u64>() & 0x1F_FFFF_FFFF_FFFF),
            _ => rng.random::<u64>() & 0x000F_FFFF_FFFF_FFFF,
        });
    }
    for ftz in ["", ".ftz"] {
        let src = kernel(&format!("frsqrt{ftz}.fast.df"), 64);
        let dev = run_u64(&src, &xs, 1, 1, 64);
        let reference = reference_u64(&src, &xs, 1, 1, 64, 32);
        let (mut worst, mut at, mut differ) = (0f64, 0u64, 0usize);
        for ((&x, &d), &r) in xs.iter().zip(&dev).zip(&reference) {
            let (xf, df, rf) = (f64::from_bits(x), f64::from_bits(d), f64::from_bits(r));
            if rf.is_nan() || df.is_nan() || rf.is_infinite() || rf == 0.0 {
                assert!(
                    d == r || (rf.is_nan() && df.is_nan()),
                    "frsqrt{ftz}.fast.df {x:#x}: device {d:#x}, reference {r:#x}"
                );
                continue;
            }
            let u = ulps(d, r, 1 << 63);
            assert!(
                u <= 1,
                "frsqrt{ftz}.fast.df {x:#x}: {u} ULP from the reference"
            );
            differ += usize::from(u != 0);
            let xin = if ftz == ".ftz" && x & 0x7FF0_0000_0000_0000 == 0 {
                0.0
            } else {
                xf
            };
            if xin == 0.0 {
                continue;
            }
            let e = rsqrt_ulp_error(xin, df);
            if e > worst {
                (worst, at) = (e, x);
            }
        }
        eprintln!(
            "frsqrt{ftz}.fast.df: {} inputs, max {worst:.6} ULP from the exact value (at {at:#x}), {differ} differ from the reference",
            xs.len()
        );
        assert!(worst <= 1.0, "frsqrt{ftz}.fast.df: {worst} ULP at {at:#x}");
    }
}
