//! `fsin fcos fexp2 flog2 ftanh frcp frsqrt` on the device and on the reference interpreter,
//! each against the exact value (`f64` libm at the input, whose own error is about 2^-29
//! ULP of `f32`) within isa-2's bound: 2 ULP for `fsin fcos fexp2 ftanh`, 1 ULP for `frcp
//! frsqrt` and for `flog2` outside [0.5, 1.5), where its bound is 2^-23 relative. The device
//! evaluates them in `f32` (spec-notes §47) and the reference in `f64`, so they may differ
//! within those bounds; NaN, infinite and zero results must be the reference's bit for bit.
//! `.f` is sampled (edge values and random inputs, with and without `.ftz`); `.hf`/`.bf`
//! are checked on every 16-bit input. Every `f32` input: `every_f32_input` (ignored; its
//! figures are in docs/float-accuracy.md).

use pisa_conformance::{context, kernel_module, load, reference_u64, run_u64};

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
        0x7F80_0001, // signalling NaN
        0xFFC1_2345, // negative quiet NaN with a payload
        0x42FE_0000, // 127
        0x4300_0000, // 128
        0x42FF_FFFF, // just below 128
        0xC315_0000, // -149
        0xC316_0000, // -150
        0xC315_8000, // -149.5
        0xC2FC_0000, // -126
        0xC2FE_0000, // -127
        0x4B80_0000, // 2^24
        0x4B7F_FFFF,
        0x5A00_0000,
        0x7E00_0000,
        0x7E80_0000, // 2^126: its reciprocal is denormal
        0x7F00_0000, // 2^127
        0x0040_0000, // 2^-127: its reciprocal overflows
        0x0020_0000, // 2^-128
        0x0020_0001,
        0x4049_0FDB, // pi
        0x3FC9_0FDB, // pi/2
        0x43C7_FFFF, // the largest Cody–Waite input (below 400)
        0x43C8_0000, // 400: Payne–Hanek from here
        0xC3C8_0000,
        0x5FA8_A8B1,
        0x4616_4000,
        0x4120_0000, // 10
        0x4118_0000, // 9.5
        0x3F60_0000, // 0.875 (tanh switches to the exponential form)
        0x3F5F_FFFF,
        0x3F00_0000, // 0.5
        0x3EFF_FFFF,
        0x3FB5_04F3, // sqrt(2)
        0x3FB5_04F4,
        0x3F35_04F3, // sqrt(1/2)
        0x3FBF_FFFF, // just below 1.5
        0x3FC0_0000, // 1.5
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for i in 0..n {
        v.push(match i % 4 {
            0 => rng.random::<u32>(),
            1 => (rng.random::<f32>() * 40.0 - 20.0).to_bits(),
            2 => (rng.random::<f32>() * 300.0 - 150.0).to_bits(),
            _ => (rng.random::<f32>() + 0.5).to_bits(),
        });
    }
    v.into_iter().map(|x| x as u64).collect()
}

/// isa-2's bound for `func` (ULP), and `flog2`'s relative bound in [0.5, 1.5).
fn bound(func: &str) -> f64 {
    match func {
        "frcp" | "frsqrt.fast" | "flog2" => 1.0,
        _ => 2.0,
    }
}

/// Whether `func`'s error at input `x` (an exact value `want`, error `e` in ULPs of the
/// format whose ULP at `want` is `ulp`) is within isa-2's bound.
fn within_bound(func: &str, x: f64, want: f64, e: f64, ulp: f64) -> bool {
    if func == "flog2" && (0.5..1.5).contains(&x) {
        // 2^-23 relative, in ULPs.
        return e * ulp <= want.abs() * 2f64.powi(-23) || e <= 1.0;
    }
    e <= bound(func)
}

/// Checks `func.f` (`ftz`: with `.ftz`) on `inputs` on the device and the reference: each
/// within the bound of the exact value, NaN/infinite/zero results bit for bit the
/// reference's. Returns the device's maximum error in ULPs and its input.
fn check_single(func: &str, ftz: &str, inputs: &[u64]) -> (f64, u64) {
    // `.ftz` comes right after the opcode (`frsqrt.ftz.fast.f`).
    let (op, rest) = func.split_once('.').map_or((func, ""), |(o, r)| (o, r));
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    let src = kernel(&format!("{op}{ftz}{rest}.f"), 32);
    let dev = run_u64(&src, inputs, 1, 1, 64);
    let reference = reference_u64(&src, inputs, 1, 1, 64, 32);
    let mut worst = (0f64, 0u64);
    for ((&x, &d), &r) in inputs.iter().zip(&dev).zip(&reference) {
        let (d, r) = (d as u32, r as u32);
        let mut xf = f32::from_bits(x as u32);
        if !ftz.is_empty() && xf.is_subnormal() {
            xf = 0f32.copysign(xf);
        }
        let want = exact(func, xf as f64);
        let (df, rf) = (f32::from_bits(d), f32::from_bits(r));
        if !rf.is_finite() || rf == 0.0 || !df.is_finite() || df == 0.0 {
            assert_eq!(
                d, r,
                "{func}{ftz}.f {x:#x}: device {d:#x}, reference {r:#x}"
            );
            continue;
        }
        if !ftz.is_empty() && want.abs() < f32::MIN_POSITIVE as f64 {
            // A result that rounds near the denormals may flush on one side only.
            assert!(
                ulps(d as u64, r as u64, 1 << 31) <= 1,
                "{func}{ftz}.f {x:#x}"
            );
            continue;
        }
        let ulp = f32_ulp(want);
        for (who, v) in [("device", df), ("reference", rf)] {
            let e = ulp_error(v, want);
            assert!(
                within_bound(func, xf as f64, want, e, ulp),
                "{func}{ftz}.f {x:#x}: {who} {:#x} is {e} ULP from {want:e}",
                v.to_bits()
            );
        }
        let e = ulp_error(df, want);
        if e > worst.0 {
            worst = (e, x);
        }
    }
    worst
}

/// The ULP of `f32` at the real `v`.
fn f32_ulp(v: f64) -> f64 {
    let a = v.abs();
    if a < f32::MIN_POSITIVE as f64 {
        2f64.powi(-149)
    } else {
        2f64.powi((a.log2().floor() as i32).min(127) - 23)
    }
}

#[test]
fn single_precision_within_the_bound_of_the_exact_value() {
    let xs = f32_inputs(4000, 2);
    for f in FUNCS {
        for ftz in ["", ".ftz"] {
            let (e, x) = check_single(f, ftz, &xs);
            eprintln!(
                "{f}{ftz}.f: max {e:.6} ULP (at {x:#x}) over {} inputs",
                xs.len()
            );
        }
    }
}

/// Every `.hf` and `.bf` input: the device and the reference within isa-2's bound of the
/// `f64` libm value, in ULPs of the type (the maximum error printed is
/// docs/float-accuracy.md's); NaN, infinite and zero results bit for bit the reference's.
#[test]
fn half_and_bfloat16_every_input_within_the_bound() {
    let all: Vec<u64> = (0..=0xFFFFu64).collect();
    for ty in ["hf", "bf"] {
        let format = if ty == "hf" { HALF } else { BFLOAT16 };
        for f in FUNCS {
            let src = kernel(&format!("{f}.{ty}"), 16);
            let dev = run_u64(&src, &all, 1, 1, 64);
            let reference = reference_u64(&src, &all, 1, 1, 64, 32);
            let (mut worst, mut at, mut differ) = (0f64, 0u64, 0usize);
            for ((&x, &d), &r) in all.iter().zip(&dev).zip(&reference) {
                let (d, r) = (d & 0xFFFF, r & 0xFFFF);
                let xv = format.value(x);
                let want = exact(f, xv);
                let (got, rv) = (format.value(d), format.value(r));
                differ += usize::from(d != r);
                if !rv.is_finite() || rv == 0.0 || !got.is_finite() || got == 0.0 {
                    assert_eq!(
                        d, r,
                        "{f}.{ty} {x:#06x}: device {d:#06x}, reference {r:#06x}"
                    );
                    continue;
                }
                for (who, v) in [("device", got), ("reference", rv)] {
                    let e = format.ulp_error(v, want);
                    assert!(
                        within_bound(f, xv, want, e, format.ulp(want)),
                        "{f}.{ty} {x:#06x}: {who} {v:e} is {e} ULP from {want:e}"
                    );
                }
                let e = format.ulp_error(got, want);
                if e > worst {
                    (worst, at) = (e, x);
                }
            }
            eprintln!(
                "{f}.{ty}: max {worst:.6} ULP of the f64 value (at {at:#06x}); {differ} of 65536 differ from the reference"
            );
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

/// Vulkan's precision requirement for the GLSL.std.450 instruction (or `OpFDiv`) that the
/// fast-math model uses for `func`, at the finite input `x` whose exact result is `want`
/// (normal): whether the device's `got` meets it, or `None` where Vulkan states none
/// (`Tanh`, and inputs outside the stated domain).
fn vulkan_precision(func: &str, x: f64, want: f64, got: f32) -> Option<bool> {
    let e = ulp_error(got, want);
    let abs = (got as f64 - want).abs();
    match func {
        "fsin" | "fcos" if x.abs() <= std::f64::consts::PI => Some(abs <= 2f64.powi(-11)),
        "fexp2" => Some(e <= 3.0 + 2.0 * x.abs()),
        "flog2" if (0.5..=2.0).contains(&x) => Some(abs <= 2f64.powi(-21)),
        "flog2" => Some(e <= 3.0),
        "frsqrt.fast" => Some(e <= 2.0),
        "frcp" if (2f64.powi(-126)..=2f64.powi(126)).contains(&x.abs()) => Some(e <= 2.5),
        _ => None,
    }
}

/// The non-conforming fast-math model ([`pisa_translator::FloatModel::fast_math`],
/// spec-notes §55) evaluates the transcendentals with the device's GLSL.std.450
/// instructions: each result meets Vulkan's precision requirement for that instruction where
/// Vulkan states one, `ftanh` stays within [-1, 1] with the sign of its input, and a NaN
/// input gives a NaN. Prints the maximum
/// error over the sample (the figures of docs/float-accuracy.md).
#[test]
fn fast_math_meets_vulkan_precision() {
    let model = pisa_translator::FloatModel {
        fast_math: true,
        ..Default::default()
    };
    let xs = f32_inputs(4000, 3);
    for func in FUNCS {
        let src = kernel(&format!("{func}.f"), 32);
        let dev = pisa_conformance::with_float_model(model, || run_u64(&src, &xs, 1, 1, 64));
        let (mut worst, mut worst_bounded, mut checked) = ((0f64, 0u64), (0f64, 0u64), 0);
        for (&x, &d) in xs.iter().zip(&dev) {
            let xf = f32::from_bits(x as u32);
            let got = f32::from_bits(d as u32);
            let want = exact(func, xf as f64);
            if xf.is_nan() {
                assert!(got.is_nan(), "{func}.f {x:#x}: NaN in, {d:#x} out");
                continue;
            }
            let normal = (f32::MIN_POSITIVE as f64..=f32::MAX as f64).contains(&want.abs());
            if !normal || xf.is_subnormal() {
                continue; // overflow, underflow and denormal inputs: Vulkan leaves them open
            }
            if func == "ftanh" {
                assert!(
                    got.abs() <= 1.0 && (got == 0.0 || got.signum() == xf.signum()),
                    "{func}.f {x:#x}: {got:e} is not tanh-like"
                );
            }
            let e = ulp_error(got, want);
            if let Some(ok) = vulkan_precision(func, xf as f64, want, got) {
                assert!(
                    ok,
                    "{func}.f {x:#x}: {got:e} against {want:e} breaks Vulkan's precision"
                );
                checked += 1;
                if e > worst_bounded.0 {
                    worst_bounded = (e, x);
                }
            }
            if e > worst.0 {
                worst = (e, x);
            }
        }
        eprintln!(
            "fast math {func}.f: max {:.2} ULP (at {:#x}) over the {checked} inputs where \
             Vulkan bounds it, {:.2} ULP (at {:#x}) over all {} normal results",
            worst_bounded.0,
            worst_bounded.1,
            worst.0,
            worst.1,
            xs.len()
        );
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

/// Every `f32` input of `func` on the device, in 256 dispatches of 2^24 work-items (the
/// input is the work-item's index plus a base), against `f64` libm on the host (one thread
/// per hardware thread). Returns
/// the maximum error in ULPs and its input; asserts the bound and the reference's special
/// values.
fn every_input(func: &str) -> (f64, u32) {
    use std::sync::Mutex;
    let src = format!(
        ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out, .param[4] %base) {{\n\
         .reg .64b %p, %off;\n.reg .32b %i, %g, %l, %s, %b, %x, %d;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\nld.param.32b %b, [%base];\niadd.32b %x, %b, %i;\n\
         {func}.f %d, %x;\nld.param.64b %p, [%out];\numul.full.32b %off, %i, 4;\n\
         iadd.64b %p, %p, %off;\nst.global.32b [%p], %d;\n}}\n"
    );
    let m = load(&src);
    let ctx = context();
    const CHUNK: u32 = 1 << 24;
    let out = ctx.zeroed::<u32>(CHUNK as usize).expect("output buffer");
    let worst = Mutex::new((0f64, 0u32));
    // The host check is most of the time: one part of each chunk per hardware thread.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let part_len = (CHUNK as usize).div_ceil(threads);
    for c in 0..(1u64 << 32) / CHUNK as u64 {
        let base = (c as u32).wrapping_mul(CHUNK);
        m.dispatch("k", CHUNK as u64, 256u64, &[(&out).into(), base.into()])
            .unwrap_or_else(|e| panic!("dispatch failed: {e}"));
        let got = out.read().expect("read back");
        std::thread::scope(|s| {
            for part in got.chunks(part_len).enumerate() {
                let worst = &worst;
                s.spawn(move || {
                    let (pi, vals) = part;
                    let mut w = (0f64, 0u32);
                    for (j, &d) in vals.iter().enumerate() {
                        let x = base + (pi * part_len + j) as u32;
                        let xf = f32::from_bits(x);
                        let want = exact(func, xf as f64);
                        let df = f32::from_bits(d);
                        if want.is_nan() {
                            let canonical = if xf.is_nan() {
                                x | 0x40_0000
                            } else {
                                0x7FC0_0000
                            };
                            assert_eq!(d, canonical, "{func}.f {x:#x}");
                            continue;
                        }
                        if (want as f32).is_infinite() || want == 0.0 {
                            assert_eq!(df, want as f32, "{func}.f {x:#x}");
                            assert_eq!(
                                df.is_sign_negative(),
                                want.is_sign_negative(),
                                "{func}.f {x:#x}"
                            );
                            continue;
                        }
                        let e = ulp_error(df, want);
                        assert!(
                            within_bound(func, xf as f64, want, e, f32_ulp(want)),
                            "{func}.f {x:#x}: {d:#x} is {e} ULP from {want:e}"
                        );
                        if e > w.0 {
                            w = (e, x);
                        }
                    }
                    let mut g = worst.lock().unwrap();
                    if w.0 > g.0 {
                        *g = w;
                    }
                });
            }
        });
    }
    worst.into_inner().unwrap()
}

/// Every `f32` input of every function (or of those named in `PISA_EXHAUSTIVE`, e.g.
/// `fsin,fexp2`), with the time each took; the figures of docs/float-accuracy.md.
#[test]
#[ignore = "2^32 inputs per function: long on lavapipe (see docs/float-accuracy.md)"]
fn every_f32_input() {
    let only = std::env::var("PISA_EXHAUSTIVE").unwrap_or_default();
    for f in FUNCS {
        if !only.is_empty() && !only.split(',').any(|o| o == f) {
            continue;
        }
        let t = std::time::Instant::now();
        let (e, x) = every_input(f);
        println!(
            "{f}.f: max {e:.6} ULP over all 2^32 inputs (at {x:#010x}), {:.0} s",
            t.elapsed().as_secs_f64()
        );
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
