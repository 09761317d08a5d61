//! Floating-point instructions with the default rounding mode on the device (`.f`, `.df`,
//! `.hf`, `.bf`), against the host's IEEE arithmetic (round to nearest even) and the `half`
//! crate's correctly rounded conversions, over edge values (±0, denormals, the largest
//! finite, infinities, NaNs) and pseudo-random ones. A NaN result only has to be a NaN.

use half::{bf16, f16};
use pisa_conformance::{eval, pairs};

fn f32_inputs() -> Vec<u64> {
    let extra = [
        0x8000_0001,
        0x4B00_0001,
        0xCB7F_FFFF,
        0x3F00_0000,
        0x3FC0_0000,
        0x4020_0000,
        0xC020_0000,
    ];
    pisa_conformance::f32_inputs(&extra, 5, 10)
}

fn same(got: u64, want_nan: bool, want: u64) -> bool {
    if want_nan {
        true
    } else {
        got == want
    }
}

fn check_f32(inst: &str, nsrc: usize, f: impl Fn(&[f32]) -> f32) {
    let xs = f32_inputs();
    let cases: Vec<Vec<u64>> = match nsrc {
        1 => xs.iter().map(|&x| vec![x]).collect(),
        2 => pairs(&xs, &xs),
        _ => pairs(&xs, &xs)
            .into_iter()
            .map(|c| vec![c[0], c[1], c[0] ^ 0x8000_0000])
            .collect(),
    };
    let got = eval(inst, &vec![32; nsrc], 32, &cases);
    for (c, g) in cases.iter().zip(got) {
        let args: Vec<f32> = c.iter().map(|&b| f32::from_bits(b as u32)).collect();
        let w = f(&args);
        let ok = if w.is_nan() {
            f32::from_bits(g as u32).is_nan()
        } else {
            same(g, false, w.to_bits() as u64)
        };
        assert!(
            ok,
            "`{inst}` with {c:x?}: got {g:#x}, expected {:#x} ({w:e})",
            w.to_bits()
        );
    }
}

#[test]
fn single_precision_arithmetic_is_correctly_rounded() {
    check_f32("fadd.f %d, %s0, %s1", 2, |a| a[0] + a[1]);
    check_f32("fsub.f %d, %s0, %s1", 2, |a| a[0] - a[1]);
    check_f32("fmul.f %d, %s0, %s1", 2, |a| a[0] * a[1]);
    check_f32("fdiv.f %d, %s0, %s1", 2, |a| a[0] / a[1]);
    check_f32("fsqrt.f %d, %s0", 1, |a| a[0].sqrt());
    check_f32("fmad.f %d, %s0, %s1, %s2", 3, |a| a[0].mul_add(a[1], a[2]));
}

fn min_num(a: f32, b: f32, max: bool) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // -0 < +0
        return if max == (a.is_sign_negative() && !b.is_sign_negative()) {
            b
        } else {
            a
        };
    }
    if (a < b) != max {
        a
    } else {
        b
    }
}

#[test]
fn min_max_abs_neg_and_saturation() {
    check_f32("fmin.f %d, %s0, %s1", 2, |a| min_num(a[0], a[1], false));
    check_f32("fmax.f %d, %s0, %s1", 2, |a| min_num(a[0], a[1], true));
    check_f32("fmin.nanp.f %d, %s0, %s1", 2, |a| {
        if a[0].is_nan() || a[1].is_nan() {
            f32::NAN
        } else {
            min_num(a[0], a[1], false)
        }
    });
    check_f32("fabs.f %d, %s0", 1, |a| a[0].abs());
    check_f32("fneg.f %d, %s0", 1, |a| -a[0]);
    check_f32("fadd.dsat.f %d, %s0, %s1", 2, |a| {
        let s = a[0] + a[1];
        if s.is_nan() || s <= 0.0 {
            0.0
        } else if s > 1.0 {
            1.0
        } else {
            s
        }
    });
    let flush = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    check_f32("fmul.ftz.f %d, %s0, %s1", 2, move |a| {
        flush(flush(a[0]) * flush(a[1]))
    });
}

#[test]
fn half_and_bfloat16_arithmetic_rounds_once() {
    let hs: Vec<u64> = [
        0u16, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C01,
        0x4248, 0x3555, 0x1234, 0xC8A0,
    ]
    .iter()
    .map(|&x| x as u64)
    .collect();
    let cases = pairs(&hs, &hs);
    for (inst, op) in [("fadd", 0), ("fsub", 1), ("fmul", 2)] {
        for (ty, conv) in [("hf", 0), ("bf", 1)] {
            let got = eval(&format!("{inst}.{ty} %d, %s0, %s1"), &[16, 16], 16, &cases);
            for (c, g) in cases.iter().zip(got) {
                let (a, b) = if conv == 0 {
                    (
                        f16::from_bits(c[0] as u16).to_f64(),
                        f16::from_bits(c[1] as u16).to_f64(),
                    )
                } else {
                    (
                        bf16::from_bits(c[0] as u16).to_f64(),
                        bf16::from_bits(c[1] as u16).to_f64(),
                    )
                };
                // Exact in f64 for these inputs (16-bit significands, bounded exponents).
                let r = match op {
                    0 => a + b,
                    1 => a - b,
                    _ => a * b,
                };
                let want = if conv == 0 {
                    f16::from_f64(r).to_bits()
                } else {
                    bf16::from_f64(r).to_bits()
                };
                let nan = r.is_nan();
                let got_nan = if conv == 0 {
                    f16::from_bits(g as u16).is_nan()
                } else {
                    bf16::from_bits(g as u16).is_nan()
                };
                assert!(
                    if nan { got_nan } else { g == want as u64 },
                    "{inst}.{ty} {c:x?}: got {g:#x}, expected {want:#x}"
                );
            }
        }
    }
}

#[test]
fn comparisons_and_conversions() {
    let xs = f32_inputs();
    let cases = pairs(&xs, &xs);
    let f = |b: u64| f32::from_bits(b as u32);
    for (cop, cmp) in [
        ("eq", (|a: f32, b: f32| a == b) as fn(f32, f32) -> bool),
        ("ne", |a, b| a != b),
        ("lt", |a, b| a < b),
        ("le", |a, b| a <= b),
        ("gt", |a, b| a > b),
        ("ge", |a, b| a >= b),
    ] {
        let got = eval(&format!("fcmp.{cop}.f %d, %s0, %s1"), &[32, 32], 1, &cases);
        for (c, g) in cases.iter().zip(got) {
            assert_eq!(g, cmp(f(c[0]), f(c[1])) as u64, "fcmp.{cop} {c:x?}");
        }
    }
    let singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
    // f2i: round to nearest even, saturate, NaN -> 0.
    let got = eval("f2i.s32.f %d, %s0", &[32], 32, &singles);
    for (c, g) in singles.iter().zip(got) {
        let x = f(c[0]);
        let want = if x.is_nan() {
            0
        } else {
            x.round_ties_even().clamp(i32::MIN as f32, i32::MAX as f32) as i32
        };
        assert_eq!(g as u32 as i32, want, "f2i.s32.f {x:e}");
    }
    for (q, r) in [
        ("rd", f32::floor as fn(f32) -> f32),
        ("ru", f32::ceil),
        ("rz", f32::trunc),
        ("rna", f32::round),
    ] {
        let got = eval(&format!("f2i.u32.f.{q} %d, %s0"), &[32], 32, &singles);
        for (c, g) in singles.iter().zip(got) {
            let x = f(c[0]);
            let want = if x.is_nan() {
                0
            } else {
                r(x).clamp(0.0, u32::MAX as f32) as u32
            };
            assert_eq!(g as u32, want, "f2i.u32.f.{q} {x:e}");
        }
    }
    let got = eval("fext.df.f %d, %s0", &[32], 64, &singles);
    for (c, g) in singles.iter().zip(got) {
        let x = f(c[0]) as f64;
        assert!(
            if x.is_nan() {
                f64::from_bits(g).is_nan()
            } else {
                g == x.to_bits()
            },
            "fext {x:e}"
        );
    }
    let got = eval("ftrunc.hf.f %d, %s0", &[32], 16, &singles);
    for (c, g) in singles.iter().zip(got) {
        let w = f16::from_f32(f(c[0]));
        assert!(
            if w.is_nan() {
                f16::from_bits(g as u16).is_nan()
            } else {
                g == w.to_bits() as u64
            },
            "ftrunc.hf {:e}",
            f(c[0])
        );
    }
    let ints: Vec<Vec<u64>> = pisa_conformance::int_inputs(32, 8, 3)
        .into_iter()
        .map(|x| vec![x])
        .collect();
    let got = eval("i2f.f.s32 %d, %s0", &[32], 32, &ints);
    for (c, g) in ints.iter().zip(got) {
        assert_eq!(
            g,
            (c[0] as u32 as i32 as f32).to_bits() as u64,
            "i2f.f.s32 {:#x}",
            c[0]
        );
    }
}

/// Signed zeros with immediate operands, where a driver could fold `x * 0 → 0` or
/// `x + 0 → x` (spec-notes §44): device and reference bit for bit, and the IEEE values.
#[test]
fn signed_zeros_survive_immediates() {
    use pisa_conformance::{kernel_module, run_both};
    let src = kernel_module(
        "",
        ".reg .64b %pin, %pout;\n.reg .32b %x, %r0, %r1, %r2, %r3;\n.reg .64b %dx, %d0;\n\
         ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
         mov.32b %r0, %groupid.x;\numul.full.32b %dx, %r0, 8;\niadd.64b %pin, %pin, %dx;\n\
         umul.full.32b %dx, %r0, 24;\niadd.64b %pout, %pout, %dx;\nld.global.32b %x, [%pin];\n\
         fmad.f %r0, 0, %x, 0;\nfmul.f %r1, 0, %x;\nfadd.f %r2, %r1, 0;\n\
         fadd.rd.f %r3, %x, 0;\nfext.df.f %dx, %x;\nfmul.df %d0, %dx, 0;\nfadd.df %d0, %d0, 0;\n\
         st.global.32b [%pout], %r0;\nst.global.32b [%pout + 4], %r1;\n\
         st.global.32b [%pout + 8], %r2;\nst.global.32b [%pout + 12], %r3;\n\
         st.global.64b [%pout + 16], %d0;\n",
    );
    let out = run_both(&src, &[0xC000_0000, 0x8000_0000], 1, 3, 1, |a, b| a == b);
    // x = -2: 0 * -2 + 0 = +0; 0 * -2 = -0; -0 + 0 = +0; -2 + 0 = -2; f64 0 * -2 + 0 = +0.
    assert_eq!(
        out[0],
        0x8000_0000 << 32,
        "fmad.f 0 * -2 + 0, fmul.f 0 * -2"
    );
    assert_eq!(out[1], 0xC000_0000 << 32, "fadd.f -0 + 0, fadd.rd.f -2 + 0");
    assert_eq!(out[2], 0, "fadd.df (0 * -2) + 0");
    // x = -0: 0 * -0 + 0 = +0, 0 * -0 = -0, -0 + 0 = +0, -0 + 0 toward -inf = -0.
    assert_eq!(out[3], 0x8000_0000 << 32);
    assert_eq!(out[4], 0x8000_0000 << 32, "fadd.rd.f -0 + 0");
}

/// Signed zeros where the zero operand is a register the driver knows to be +0 from the bits
/// it tracks: `zext`, then `shr` by 32, then `trunc` (differential seed 29937367019, where
/// lavapipe folded `0 - x` to `-x` and gave -0 for x = +0). IEEE: 0 - x and x + 0 are +0 for
/// x = ±0 in round-to-nearest; 2 and -2 for x = -2. Device and reference bit for bit.
#[test]
fn signed_zeros_survive_known_bit_zeros() {
    use pisa_conformance::{kernel_module, run_both};
    let src = kernel_module(
        "",
        ".reg .64b %pin, %pout, %dx, %a, %t;\n.reg .32b %x, %z, %r0, %r1, %g;\n\
         ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
         mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
         iadd.64b %pout, %pout, %dx;\nld.global.32b %x, [%pin];\n\
         zext.64b.32b %a, %x;\nshr.64b %t, %a, 32;\ntrunc.32b.64b %z, %t;\n\
         fsub.f %r0, %z, %x;\nfadd.f %r1, %x, %z;\n\
         st.global.32b [%pout], %r0;\nst.global.32b [%pout + 4], %r1;\n",
    );
    let out = run_both(&src, &[0, 0x8000_0000, 0xC000_0000], 1, 1, 1, |a, b| a == b);
    assert_eq!(out[0], 0, "0 - (+0), (+0) + 0");
    assert_eq!(out[1], 0, "0 - (-0), (-0) + 0");
    assert_eq!(out[2], 0xC000_0000_4000_0000, "0 - (-2), (-2) + 0");
}

/// Signed zeros where the zero addend is one the translator cannot see but the driver's
/// compiler can prove, after inlining and forwarding memory: the result of a call (direct, and
/// through a function address, as in differential seed 29938502083 of generator 5, where
/// lavapipe gave `fmad.f 0, -x, zero()` = -0), a function's parameter given a register
/// holding 0, and a `.private` word stored with that 0 and loaded back, in `.f` and `.df`. IEEE, round to
/// nearest: `-0 + +0`, `+0 - +0` and `0 * -2 + +0` (= `-0 + +0`) are +0; `-2 + 0` is -2.
/// Device (with the float model the runtime chose for it, spec-notes §113) and reference
/// bit for bit, and the values worked out by hand.
#[test]
fn signed_zeros_survive_zeros_the_driver_proves() {
    use pisa_conformance::{kernel_module, run_both};
    let decls = ".function .32b @zero(.reg .32b %v) {\n.reg .64b %t;\n.reg .32b %r;\n\
                 zext.64b.32b %t, %v;\nshr.64b %t, %t, 32;\ntrunc.32b.64b %r, %t;\n\
                 return %r;\n}\n\
                 .function .32b @plus(.reg .32b %a, .reg .32b %b) {\n.reg .32b %r;\n\
                 fadd.f %r, %a, %b;\nreturn %r;\n}\n\
                 .function .64b @dplus(.reg .64b %a, .reg .64b %b) {\n.reg .64b %r;\n\
                 fadd.df %r, %a, %b;\nreturn %r;\n}\n";
    let body = ".reg .64b %pin, %pout, %dx, %fp, %dxv, %dz, %dr;\n\
                .reg .32b %x, %z, %zi, %zp, %r0, %r1, %r2, %r3, %r4, %r5, %g;\n\
                .private .align 4 @P[4];\n\
                ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
                mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
                umul.full.32b %dx, %g, 32;\niadd.64b %pout, %pout, %dx;\n\
                ld.global.32b %x, [%pin];\n\
                call %z, @zero(%x);\nfadd.f %r0, %x, %z;\nfsub.f %r1, %z, %z;\n\
                addrof.64b %fp, @zero;\ncall %zi, %fp(%x);\n\
                fmad.f %r2, 0, %x, %zi;\n\
                mov.32b %zp, 0;\ncall %r3, @plus(%x, %zp);\n\
                st.private.32b [@P], %zp;\nld.private.32b %zp, [@P];\nfadd.f %r4, %zp, %x;\n\
                fext.df.f %dxv, %x;\nmov.64b %dz, 0;\ncall %dr, @dplus(%dxv, %dz);\n\
                st.global.32b [%pout], %r0;\nst.global.32b [%pout + 4], %r1;\n\
                st.global.32b [%pout + 8], %r2;\nst.global.32b [%pout + 12], %r3;\n\
                st.global.32b [%pout + 16], %r4;\nst.global.64b [%pout + 24], %dr;\n";
    let src = kernel_module(decls, body);
    let out = run_both(&src, &[0x8000_0000, 0xC000_0000, 0], 1, 4, 1, |a, b| a == b);
    // x = -0: every sum of -0 and +0 is +0; 0 * -0 = -0, -0 + +0 = +0.
    assert_eq!(out[0], 0, "x + zero(), zero() - zero() for x = -0");
    assert_eq!(
        out[1], 0,
        "fmad 0 * x + zero via an address, plus(x, 0), for x = -0"
    );
    assert_eq!(out[2], 0, "private zero + x for x = -0");
    assert_eq!(out[3], 0, "dplus(x, 0) in .df for x = -0");
    // x = -2: the sums are -2; 0 * -2 = -0, -0 + +0 = +0.
    assert_eq!(
        out[4], 0xC000_0000,
        "x + zero(), zero() - zero() for x = -2"
    );
    assert_eq!(
        out[5], 0xC000_0000_0000_0000,
        "fmad gives +0, plus(x, 0) gives -2"
    );
    assert_eq!(out[6], 0xC000_0000, "private zero + x for x = -2");
    assert_eq!(
        out[7], 0xC000_0000_0000_0000,
        "dplus(x, 0) in .df for x = -2"
    );
    // x = +0: +0 everywhere.
    assert_eq!(&out[8..12], &[0, 0, 0, 0], "x = +0");
}

/// Division where an operand is a zero the driver can prove (a register set from an immediate,
/// an immediate, a function's result), in `.f` and `.df`, to nearest and in directed modes:
/// lavapipe's code generator answered `0 / x` with +0 and `x / 0` with 0 (its "undefined")
/// before the division's zero cases were taken from the operands' bits (spec-notes §113).
/// IEEE: `0 / x` is a zero of the sign `x` gives it (a NaN for `x` = ±0 or NaN), `x / 0` an
/// infinity of the operands' signs (a NaN for `x` = ±0 or NaN); arch-3 §3.4: a quiet NaN
/// operand is the result. Hand-derived bits, and the reference bit for bit.
#[test]
fn division_with_zeros_the_driver_proves_follows_ieee() {
    use pisa_conformance::{kernel_module, run_both};
    let decls = ".function .32b @zero(.reg .32b %v) {\n.reg .64b %t;\n.reg .32b %r;\n\
                 zext.64b.32b %t, %v;\nshr.64b %t, %t, 32;\ntrunc.32b.64b %r, %t;\n\
                 return %r;\n}\n";
    let body = ".reg .64b %pin, %pout, %dx, %dz, %d0, %d1;\n\
                .reg .32b %x, %z, %zc, %r0, %r1, %r2, %r3, %g;\n\
                ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
                mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
                umul.full.32b %dx, %g, 32;\niadd.64b %pout, %pout, %dx;\n\
                ld.global.32b %x, [%pin];\nmov.32b %z, 0;\n\
                fdiv.f %r0, %z, %x;\nfdiv.f %r1, %x, 0;\nfdiv.rz.f %r2, %x, %z;\n\
                call %zc, @zero(%x);\nfdiv.f %r3, %x, %zc;\n\
                fext.df.f %dx, %x;\nmov.64b %dz, 0;\n\
                fdiv.df %d0, %dz, %dx;\nfdiv.rd.df %d1, %dx, %dz;\n\
                st.global.32b [%pout], %r0;\nst.global.32b [%pout + 4], %r1;\n\
                st.global.32b [%pout + 8], %r2;\nst.global.32b [%pout + 12], %r3;\n\
                st.global.64b [%pout + 16], %d0;\nst.global.64b [%pout + 24], %d1;\n";
    let src = kernel_module(decls, body);
    // x: -2, +0, -0, a quiet NaN with a payload, -inf, the denormal 3 * 2^-149.
    let xs = [0xC000_0000u64, 0, 0x8000_0000, 0x7FC0_0001, 0xFF80_0000, 3];
    let out = run_both(&src, &xs, 1, 4, 1, |a, b| a == b);
    let pair = |lo: u64, hi: u64| lo | hi << 32;
    // (0 / x, x / 0 in .f as [r0 | r1, r2 | r3]; 0 / x and x / 0 in .df)
    let want: [[u64; 4]; 6] = [
        [
            pair(0x8000_0000, 0xFF80_0000),
            pair(0xFF80_0000, 0xFF80_0000),
            0x8000_0000_0000_0000,
            0xFFF0_0000_0000_0000,
        ],
        [
            pair(0x7FC0_0000, 0x7FC0_0000),
            pair(0x7FC0_0000, 0x7FC0_0000),
            0x7FF8_0000_0000_0000,
            0x7FF8_0000_0000_0000,
        ],
        [
            pair(0x7FC0_0000, 0x7FC0_0000),
            pair(0x7FC0_0000, 0x7FC0_0000),
            0x7FF8_0000_0000_0000,
            0x7FF8_0000_0000_0000,
        ],
        [
            pair(0x7FC0_0001, 0x7FC0_0001),
            pair(0x7FC0_0001, 0x7FC0_0001),
            0x7FF8_0000_2000_0000,
            0x7FF8_0000_2000_0000,
        ],
        [
            pair(0x8000_0000, 0xFF80_0000),
            pair(0xFF80_0000, 0xFF80_0000),
            0x8000_0000_0000_0000,
            0xFFF0_0000_0000_0000,
        ],
        [
            pair(0, 0x7F80_0000),
            pair(0x7F80_0000, 0x7F80_0000),
            0,
            0x7FF0_0000_0000_0000,
        ],
    ];
    for (i, (x, w)) in xs.iter().zip(&want).enumerate() {
        assert_eq!(&out[4 * i..4 * i + 4], w, "x = {x:#x}");
    }
}

/// `.ftz` flushes a denormal immediate addend to a zero the driver then sees as its constant:
/// `fmad.ftz x, y, 1-ulp-denormal` with `x * y = -0` is `-0 + +0 = +0` (IEEE, the reference),
/// where lavapipe's shortcut kept the product's -0 (found by review, spec-notes §113).
#[test]
fn a_flushed_denormal_immediate_addend_keeps_the_zero_sum_positive() {
    use pisa_conformance::{kernel_module, run_both};
    let body = ".reg .64b %pin, %pout, %dx;\n.reg .32b %x, %y, %r, %g;\n\
                .reg .16b %hx, %hy, %hr;\n\
                ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
                mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
                iadd.64b %pout, %pout, %dx;\nld.global.32b %x, [%pin];\n\
                ld.global.32b %y, [%pin + 4];\nfmad.ftz.f %r, %x, %y, 0x00000001;\n\
                st.global.32b [%pout], %r;\ntrunc.16b.32b %hx, %x;\ntrunc.16b.32b %hy, %y;\n\
                fmad.ftz.hf %hr, %hx, %hy, 0x0001;\nst.global.16b [%pout + 4], %hr;\n";
    let src = kernel_module("", body);
    // Work-item 0: x = -1.0 (f32), y = +0; its `.hf` operands (the low halves) are +0, +0.
    // Work-item 1: x = 0xbc00, -1.0 as `.hf` (a denormal as f32), y = +0. Every result is +0.
    let input = [0x0000_0000_BF80_0000u64, 0x0000_0000_0000_BC00];
    let out = run_both(&src, &input, 1, 1, 1, |a, b| a == b);
    assert_eq!(
        out,
        [0, 0],
        "fmad.ftz of -1 (or +0), +0 and a denormal immediate"
    );
}

/// `0 - x` with a zero the driver proves: lavapipe's shortcut made it `-x`, which for a NaN
/// `x` is another NaN (its sign flipped), where arch-3 §3.4 returns the same quiet NaN (a
/// signaling one made quiet, as the reference does). `.f` and `.df`, hand-derived bits.
#[test]
fn zero_minus_a_nan_is_that_nan() {
    use pisa_conformance::{kernel_module, run_both};
    let body = ".reg .64b %pin, %pout, %dx, %dz, %d0;\n.reg .32b %x, %z, %r, %g;\n\
                ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
                mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
                umul.full.32b %dx, %g, 16;\niadd.64b %pout, %pout, %dx;\n\
                ld.global.32b %x, [%pin];\nmov.32b %z, 0;\nfsub.f %r, %z, %x;\n\
                st.global.32b [%pout], %r;\nfext.df.f %dx, %x;\nmov.64b %dz, 0;\n\
                fsub.df %d0, %dz, %dx;\nst.global.64b [%pout + 8], %d0;\n";
    let src = kernel_module("", body);
    // A quiet NaN of each sign and a signaling NaN (quieted by `fext` and by the subtraction).
    let xs = [0x7FC0_0001u64, 0xFFC0_0001, 0x7FA0_0000];
    let out = run_both(&src, &xs, 1, 2, 1, |a, b| a == b);
    assert_eq!(
        out,
        [
            0x7FC0_0001,
            0x7FF8_0000_2000_0000,
            0xFFC0_0001,
            0xFFF8_0000_2000_0000,
            0x7FE0_0000,
            0x7FFC_0000_0000_0000,
        ]
    );
}

/// Signed zeros where the zero addend is a register the driver can prove +0 by an identity
/// (`xor` of a register with itself, `and` with 0, `isub` of a register from itself): IEEE
/// gives -0 + +0 = +0 in every mode but `.rd`, where the driver's fold `x + 0 → x` would keep
/// -0 (spec-notes §44; differential seeds 40005480, 40006438). Device and reference bit for
/// bit, and the IEEE values.
#[test]
fn signed_zeros_survive_identity_zeros() {
    use pisa_conformance::{kernel_module, run_both};
    let src = kernel_module(
        "",
        ".reg .64b %pin, %pout, %dx;\n.reg .32b %x, %z0, %z1, %z2, %r0, %r1, %r2, %g;\n\
         ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
         mov.32b %g, %groupid.x;\numul.full.32b %dx, %g, 8;\niadd.64b %pin, %pin, %dx;\n\
         umul.full.32b %dx, %g, 16;\niadd.64b %pout, %pout, %dx;\nld.global.32b %x, [%pin];\n\
         xor.32b %z0, %x, %x;\nand.32b %z1, %x, 0;\nisub.32b %z2, %x, %x;\n\
         fadd.f %r0, %x, %z0;\nfadd.f %r1, %z1, %x;\nfadd.f %r2, %x, %z2;\n\
         st.global.32b [%pout], %r0;\nst.global.32b [%pout + 4], %r1;\n\
         st.global.32b [%pout + 8], %r2;\n",
    );
    let out = run_both(&src, &[0x8000_0000, 0xC000_0000], 1, 2, 1, |a, b| a == b);
    // x = -0: -0 + +0 = +0 three times.
    assert_eq!(out[0], 0, "-0 + (x xor x), (x and 0) + -0");
    assert_eq!(out[1] & 0xFFFF_FFFF, 0, "-0 + (x - x)");
    // x = -2: -2 + 0 = -2.
    assert_eq!(out[2], 0xC000_0000_C000_0000);
    assert_eq!(out[3] & 0xFFFF_FFFF, 0xC000_0000);
}

/// arch-3 §3.4 in the formats computed in `f32` (`.hf`, `.bf`; the packed forms take the same
/// path element by element): a quiet
/// NaN operand is the result (the first in operand order when there are several), a
/// signaling one made quiet; an invalid operation gives the canonical quiet NaN (the
/// reference's choice: positive, quiet bit only). Bit for bit on the device and the
/// reference, against values worked out by hand, whatever NaN the device's `f32` operation
/// returned: lavapipe's gives `-NaN` for `inf - inf`, NVIDIA's driver 580 `0x7fffffff` for
/// every NaN (docs/driver-bugs.md).
#[test]
fn nan_results_of_half_and_bfloat16_arithmetic_follow_arch_3() {
    // (type, +inf, 1, two quiet NaNs with payloads, a signaling NaN, its quieted self, the
    // canonical quiet NaN)
    for (ty, inf, one, qa, qb, sa, sa_quiet, canonical) in [
        (
            "hf", 0x7C00u64, 0x3C00u64, 0x7E01u64, 0x7E02u64, 0x7C03u64, 0x7E03u64, 0x7E00u64,
        ),
        ("bf", 0x7F80, 0x3F80, 0x7FC1, 0x7FC2, 0x7F83, 0x7FC3, 0x7FC0),
    ] {
        let neg = |x: u64| x | 0x8000;
        let cases: [(&str, Vec<u64>, u64); 14] = [
            ("fadd", vec![qa, one], qa),
            ("fadd", vec![one, qb], qb),
            ("fadd", vec![qa, qb], qa),
            ("fadd", vec![inf, neg(inf)], canonical),
            ("fsub", vec![sa, one], sa_quiet),
            ("fsub", vec![inf, inf], canonical),
            ("fmul", vec![0, inf], canonical),
            ("fmul", vec![neg(qb), one], neg(qb)),
            ("fdiv.fast", vec![0, 0], canonical),
            ("fdiv.fast", vec![one, qb], qb),
            ("fsqrt.fast", vec![neg(one)], canonical),
            ("fmad", vec![0, inf, one], canonical),
            ("fmad", vec![0, inf, qb], qb),
            ("fmad", vec![one, qa, qb], qa),
        ];
        for (op, src, want) in cases {
            let regs: Vec<String> = (0..src.len()).map(|i| format!("%s{i}")).collect();
            let inst = format!("{op}.{ty} %d, {}", regs.join(", "));
            let got = eval(&inst, &vec![16; src.len()], 16, &[src.clone()]);
            assert_eq!(
                got[0], want,
                "`{inst}` {src:x?}: {:#x}, arch-3 gives {want:#x}",
                got[0]
            );
        }
    }
}
