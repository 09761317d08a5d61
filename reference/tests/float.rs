//! Floating-point arithmetic (isa-2). Expected values are derived by hand (bit patterns
//! worked out from the definitions), or computed by the host FPU (round to nearest even),
//! which is independent of the soft-float under test.

mod common;
use common::*;
use pisa_reference::Error;
use RoundingMode::*;

const MODES: [RoundingMode; 5] = [Re, Rd, Ru, Rz, Rna];

fn f2(op: Opcode, q: Quals, a: u32, b: u32) -> u32 {
    eval32(op, q, &[a, b])
}

fn f1(op: Opcode, q: Quals, a: u32) -> u32 {
    eval32(op, q, &[a])
}

fn bits(x: f32) -> u32 {
    x.to_bits()
}

const ONE: u32 = 0x3F80_0000;
const MAX: u32 = 0x7F7F_FFFF;
const INF: u32 = 0x7F80_0000;
const NINF: u32 = 0xFF80_0000;
const QNAN: u32 = 0x7FC0_0000;

#[test]
fn fadd_rounding_ties_in_every_mode() {
    // 1 + 2^-24: exactly half an ulp above 1.
    let expect = [ONE, ONE, ONE + 1, ONE, ONE + 1];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            f2(Opcode::Fadd, ty(T::F).rnd(*m), ONE, 0x3380_0000),
            e,
            "{m:?}"
        );
    }
    // -1 - 2^-24
    let expect = [
        0xBF80_0000,
        0xBF80_0001,
        0xBF80_0000,
        0xBF80_0000,
        0xBF80_0001,
    ];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            f2(Opcode::Fadd, ty(T::F).rnd(*m), 0xBF80_0000, 0xB380_0000),
            e,
            "{m:?}"
        );
    }
    // 1 + 1.5 * 2^-24: three quarters of an ulp (not a tie).
    let expect = [ONE + 1, ONE, ONE + 1, ONE, ONE + 1];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            f2(Opcode::Fadd, ty(T::F).rnd(*m), ONE, 0x33C0_0000),
            e,
            "{m:?}"
        );
    }
    // (1 + 2^-23) + 2^-24: a tie whose lower neighbour is odd.
    let expect = [ONE + 2, ONE + 1, ONE + 2, ONE + 1, ONE + 2];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            f2(Opcode::Fadd, ty(T::F).rnd(*m), ONE + 1, 0x3380_0000),
            e,
            "{m:?}"
        );
    }
    // fsub: 1 - (-2^-24)
    assert_eq!(
        f2(Opcode::Fsub, ty(T::F).rnd(Ru), ONE, 0xB380_0000),
        ONE + 1
    );
    assert_eq!(f2(Opcode::Fsub, ty(T::F).rnd(Re), ONE, 0xB380_0000), ONE);
}

#[test]
fn fadd_ties_in_half_bfloat_and_double() {
    let h = |m, a, b| evalt(Opcode::Fadd, ty(T::Hf).rnd(m), B16, &[a, b]);
    // 1 + 2^-11 in .hf (ulp 2^-10 at 1)
    assert_eq!(h(Re, 0x3C00, 0x1000), 0x3C00);
    assert_eq!(h(Rd, 0x3C00, 0x1000), 0x3C00);
    assert_eq!(h(Ru, 0x3C00, 0x1000), 0x3C01);
    assert_eq!(h(Rz, 0x3C00, 0x1000), 0x3C00);
    assert_eq!(h(Rna, 0x3C00, 0x1000), 0x3C01);
    let b = |m, a, c| evalt(Opcode::Fadd, ty(T::Bf).rnd(m), B16, &[a, c]);
    // 1 + 2^-8 in .bf (ulp 2^-7 at 1)
    assert_eq!(b(Re, 0x3F80, 0x3B80), 0x3F80);
    assert_eq!(b(Rd, 0x3F80, 0x3B80), 0x3F80);
    assert_eq!(b(Ru, 0x3F80, 0x3B80), 0x3F81);
    assert_eq!(b(Rz, 0x3F80, 0x3B80), 0x3F80);
    assert_eq!(b(Rna, 0x3F80, 0x3B80), 0x3F81);
    let d = |m, a, c| evalt(Opcode::Fadd, ty(T::Df).rnd(m), B64, &[a, c]);
    // 1 + 2^-53 in .df
    let one = 0x3FF0_0000_0000_0000u128;
    assert_eq!(d(Re, one, 0x3CA0_0000_0000_0000), one);
    assert_eq!(d(Ru, one, 0x3CA0_0000_0000_0000), one + 1);
    assert_eq!(d(Rna, one, 0x3CA0_0000_0000_0000), one + 1);
    assert_eq!(d(Rd, one, 0x3CA0_0000_0000_0000), one);
}

#[test]
fn overflow_follows_the_rounding_direction() {
    let add = |m, a, b| f2(Opcode::Fadd, ty(T::F).rnd(m), a, b);
    assert_eq!(add(Re, MAX, MAX), INF);
    assert_eq!(add(Ru, MAX, MAX), INF);
    assert_eq!(add(Rz, MAX, MAX), MAX);
    assert_eq!(add(Rd, MAX, MAX), MAX);
    assert_eq!(add(Rna, MAX, MAX), INF);
    assert_eq!(add(Rd, MAX | 0x8000_0000, MAX | 0x8000_0000), NINF);
    assert_eq!(
        add(Ru, MAX | 0x8000_0000, MAX | 0x8000_0000),
        MAX | 0x8000_0000
    );
}

#[test]
fn nan_inputs_propagate_quietly_and_generated_nans_are_canonical() {
    let add = |a, b| f2(Opcode::Fadd, ty(T::F), a, b);
    assert_eq!(add(0x7FC0_0001, ONE), 0x7FC0_0001);
    assert_eq!(add(ONE, 0xFFC0_0005), 0xFFC0_0005);
    assert_eq!(
        add(0x7F80_0001, ONE),
        0x7FC0_0001,
        "a signaling NaN is made quiet"
    );
    assert_eq!(
        add(0x7FC0_0002, 0xFFC0_0003),
        0x7FC0_0002,
        "the first NaN operand"
    );
    assert_eq!(add(INF, NINF), QNAN);
    assert_eq!(f2(Opcode::Fmul, ty(T::F), 0, INF), QNAN);
    assert_eq!(f2(Opcode::Fdiv, ty(T::F), 0, 0), QNAN);
    assert_eq!(f2(Opcode::Fdiv, ty(T::F), INF, NINF), QNAN);
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Hf), B16, &[0x7C00, 0xFC00]),
        0x7E00
    );
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Bf), B16, &[0x7F80, 0xFF80]),
        0x7FC0
    );
    assert_eq!(
        evalt(
            Opcode::Fadd,
            ty(T::Df),
            B64,
            &[0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000]
        ),
        0x7FF8_0000_0000_0000
    );
    // fmad: 0 * inf + qNaN gives the qNaN
    assert_eq!(
        eval32(Opcode::Fmad, ty(T::F), &[0, INF, 0x7FC0_1234]),
        0x7FC0_1234
    );
}

#[test]
fn signed_zeros() {
    assert_eq!(f2(Opcode::Fadd, ty(T::F), 0, 0x8000_0000), 0);
    assert_eq!(
        f2(Opcode::Fadd, ty(T::F).rnd(Rd), 0, 0x8000_0000),
        0x8000_0000
    );
    assert_eq!(f2(Opcode::Fsub, ty(T::F), ONE, ONE), 0);
    assert_eq!(f2(Opcode::Fsub, ty(T::F).rnd(Rd), ONE, ONE), 0x8000_0000);
    assert_eq!(f2(Opcode::Fmul, ty(T::F), 0x8000_0000, ONE), 0x8000_0000);
    assert_eq!(f2(Opcode::Fdiv, ty(T::F), ONE, 0x8000_0000), NINF);
}

#[test]
fn denormals_are_kept_unless_ftz() {
    assert_eq!(f2(Opcode::Fadd, ty(T::F), 1, 1), 2);
    assert_eq!(f2(Opcode::Fadd, ty(T::F).ftz(), 1, 1), 0);
    // 2^-126 * 0.5 = 2^-127, a denormal result
    assert_eq!(
        f2(Opcode::Fmul, ty(T::F), 0x0080_0000, 0x3F00_0000),
        0x0040_0000
    );
    assert_eq!(
        f2(Opcode::Fmul, ty(T::F).ftz(), 0x0080_0000, 0x3F00_0000),
        0
    );
    assert_eq!(
        f2(Opcode::Fmul, ty(T::F).ftz(), 0x8080_0000, 0x3F00_0000),
        0x8000_0000
    );
    // a flushed source keeps its sign
    assert_eq!(
        f2(Opcode::Fmul, ty(T::F).ftz(), 0x8000_0001, ONE),
        0x8000_0000
    );
    // .hf denormals: 2^-24 + 2^-24
    assert_eq!(evalt(Opcode::Fadd, ty(T::Hf), B16, &[1, 1]), 2);
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Hf).ftz(), B16, &[1, 0x3C00]),
        0x3C00
    );
    assert_eq!(evalt(Opcode::Fadd, ty(T::Hf).ftz(), B16, &[1, 1]), 0);
    // .df
    assert_eq!(evalt(Opcode::Fadd, ty(T::Df), B64, &[1, 1]), 2);
    assert_eq!(evalt(Opcode::Fadd, ty(T::Df).ftz(), B64, &[1, 1]), 0);
}

#[test]
fn dsat_clamps_to_zero_one() {
    let add = |a, b| f2(Opcode::Fadd, ty(T::F).dsat(), a, b);
    assert_eq!(add(bits(0.5), bits(0.75)), ONE);
    assert_eq!(add(bits(-1.0), bits(0.5)), 0);
    assert_eq!(add(bits(0.25), bits(0.25)), bits(0.5));
    assert_eq!(add(INF, NINF), 0, "NaN results become +0");
    assert_eq!(add(0x7FC0_0001, ONE), 0);
    assert_eq!(add(INF, ONE), ONE);
    assert_eq!(add(NINF, ONE), 0);
    assert_eq!(
        f2(Opcode::Fmul, ty(T::F).dsat(), bits(-1.0), 0),
        0,
        "-0 becomes +0"
    );
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Hf).dsat(), B16, &[0x3C00, 0x3C00]),
        0x3C00
    );
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Bf).dsat(), B16, &[0x3F80, 0x3F80]),
        0x3F80
    );
    assert_eq!(
        evalt(
            Opcode::Fadd,
            ty(T::Df).dsat(),
            B64,
            &[0x4000_0000_0000_0000, 0]
        ),
        0x3FF0_0000_0000_0000
    );
}

#[test]
fn fmad_is_fused() {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24; minus (1 + 2^-11) leaves 2^-24 only when fused.
    let a = 0x3F80_0800;
    assert_eq!(
        eval32(Opcode::Fmad, ty(T::F), &[a, a, 0xBF80_1000]),
        0x3380_0000
    );
    let unfused = f2(Opcode::Fmul, ty(T::F), a, a);
    assert_eq!(unfused, 0x3F80_1000);
    // The product alone is a tie at .f precision.
    let expect = [
        0x3F80_1000,
        0x3F80_1000,
        0x3F80_1001,
        0x3F80_1000,
        0x3F80_1001,
    ];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            eval32(Opcode::Fmad, ty(T::F).rnd(*m), &[a, a, 0]),
            e,
            "{m:?}"
        );
    }
    assert_eq!(
        eval32(
            Opcode::Fmad,
            ty(T::F).dsat(),
            &[bits(2.0), bits(2.0), bits(-3.5)]
        ),
        bits(0.5)
    );
    assert_eq!(
        eval32(
            Opcode::Fmad,
            ty(T::F).dsat(),
            &[bits(2.0), bits(2.0), bits(-3.0)]
        ),
        ONE
    );
}

#[test]
fn fmul_full_widens() {
    let full = |t: DataType, m, a, b| {
        eval(
            Opcode::Fmul,
            ty(t).full().rnd(m),
            B32,
            &[Src::Reg(B16, a), Src::Reg(B16, b)],
        )
        .unwrap() as u32
    };
    assert_eq!(full(T::Hf, Re, 0x3C00, 0x3C00), ONE);
    // 65504^2 is exact in .f
    assert_eq!(full(T::Hf, Re, 0x7BFF, 0x7BFF), bits(65504.0 * 65504.0));
    assert_eq!(
        full(T::Hf, Re, 0x0001, 0x0001),
        0x2780_0000,
        "2^-48 is a normal .f"
    );
    // bf max * 2 overflows .f
    assert_eq!(full(T::Bf, Re, 0x7F7F, 0x4000), INF);
    assert_eq!(full(T::Bf, Rz, 0x7F7F, 0x4000), MAX);
    assert_eq!(full(T::Bf, Re, 0x4000, 0x4040), bits(6.0));
}

#[test]
fn division_and_square_root() {
    let third = [
        0x3EAA_AAAB,
        0x3EAA_AAAA,
        0x3EAA_AAAB,
        0x3EAA_AAAA,
        0x3EAA_AAAB,
    ];
    for (m, e) in MODES.iter().zip(third) {
        assert_eq!(
            f2(Opcode::Fdiv, ty(T::F).rnd(*m), ONE, bits(3.0)),
            e,
            "{m:?}"
        );
    }
    assert_eq!(f2(Opcode::Fdiv, ty(T::F), ONE, 0), INF);
    assert_eq!(f2(Opcode::Fdiv, ty(T::F), bits(-1.0), 0), NINF);
    assert_eq!(
        f2(Opcode::Fdiv, ty(T::F).fast(), ONE, bits(3.0)),
        0x3EAA_AAAB
    );
    assert_eq!(
        evalt(Opcode::Fdiv, ty(T::Hf).fast(), B16, &[0x3C00, 0x4200]),
        0x3555
    );
    let e = eval(
        Opcode::Fdiv,
        ty(T::Hf),
        B16,
        &[Src::Reg(B16, 0x3C00), Src::Reg(B16, 0x4200)],
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { .. }),
        "fdiv.hf needs .fast: {e:?}"
    );

    let sqrt2 = [
        0x3FB5_04F3,
        0x3FB5_04F3,
        0x3FB5_04F4,
        0x3FB5_04F3,
        0x3FB5_04F3,
    ];
    for (m, e) in MODES.iter().zip(sqrt2) {
        assert_eq!(f1(Opcode::Fsqrt, ty(T::F).rnd(*m), bits(2.0)), e, "{m:?}");
    }
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F), bits(4.0)), bits(2.0));
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F), bits(-1.0)), QNAN);
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F), 0x8000_0000), 0x8000_0000);
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F), INF), INF);
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F), NINF), QNAN);
    assert_eq!(
        f1(Opcode::Fsqrt, ty(T::F), 1),
        0x1A35_04F3,
        "sqrt(2^-149) = 2^-74.5"
    );
    assert_eq!(f1(Opcode::Fsqrt, ty(T::F).ftz(), 1), 0);
    // sqrt(2) in .df is rounded up to nearest; .rd/.rz give the ulp below.
    let d = |m| {
        evalt(
            Opcode::Fsqrt,
            ty(T::Df).rnd(m),
            B64,
            &[2f64.to_bits() as u128],
        )
    };
    assert_eq!(d(Re), 0x3FF6_A09E_667F_3BCD);
    assert_eq!(d(Ru), 0x3FF6_A09E_667F_3BCD);
    assert_eq!(d(Rd), 0x3FF6_A09E_667F_3BCC);
    assert_eq!(d(Rz), 0x3FF6_A09E_667F_3BCC);
    assert_eq!(
        evalt(Opcode::Fsqrt, ty(T::Hf).fast(), B16, &[0x4400]),
        0x4000,
        "sqrt(4) = 2 in .hf"
    );
}

#[test]
fn min_and_max_follow_ieee_minimum_number() {
    let min = |q: Quals, a, b| f2(Opcode::Fmin, q, a, b);
    let max = |q: Quals, a, b| f2(Opcode::Fmax, q, a, b);
    assert_eq!(min(ty(T::F), 0x8000_0000, 0), 0x8000_0000);
    assert_eq!(min(ty(T::F), 0, 0x8000_0000), 0x8000_0000);
    assert_eq!(max(ty(T::F), 0x8000_0000, 0), 0);
    assert_eq!(max(ty(T::F), 0, 0x8000_0000), 0);
    assert_eq!(min(ty(T::F), QNAN, ONE), ONE);
    assert_eq!(
        min(ty(T::F), ONE, 0x7F80_0001),
        ONE,
        "a signaling NaN is ignored too"
    );
    assert_eq!(max(ty(T::F), 0xFFC0_0001, bits(-3.0)), bits(-3.0));
    assert_eq!(min(ty(T::F), 0x7FC0_0005, 0x7FC0_0006), 0x7FC0_0005);
    assert_eq!(min(ty(T::F), 0x7F80_0005, 0x7FC0_0006), 0x7FC0_0005);
    assert_eq!(min(ty(T::F).nanp(), QNAN, ONE), QNAN);
    assert_eq!(min(ty(T::F).nanp(), ONE, 0x7F80_0001), 0x7FC0_0001);
    assert_eq!(max(ty(T::F).nanp(), bits(5.0), 0xFFC0_0002), 0xFFC0_0002);
    assert_eq!(max(ty(T::F), NINF, bits(3.0)), bits(3.0));
    assert_eq!(min(ty(T::F), NINF, bits(3.0)), NINF);
    assert_eq!(max(ty(T::F).dsat(), bits(2.0), bits(3.0)), ONE);
    assert_eq!(min(ty(T::F).dsat(), bits(-2.0), bits(3.0)), 0);
    assert_eq!(
        min(ty(T::F).ftz(), 0x8000_0001, 1),
        0x8000_0000,
        "flushed: -0 < +0"
    );
    assert_eq!(min(ty(T::F), 0x8000_0001, 1), 0x8000_0001);
    assert_eq!(
        evalt(Opcode::Fmax, ty(T::Hf), B16, &[0x3C00, 0x4000]),
        0x4000
    );
    assert_eq!(
        evalt(Opcode::Fmin, ty(T::Df), B64, &[0x8000_0000_0000_0000, 0]),
        0x8000_0000_0000_0000
    );
}

#[test]
fn abs_and_neg() {
    assert_eq!(f1(Opcode::Fabs, ty(T::F), 0x8000_0000), 0);
    assert_eq!(f1(Opcode::Fabs, ty(T::F), bits(-2.5)), bits(2.5));
    assert_eq!(
        f1(Opcode::Fabs, ty(T::F), 0xFF80_0001),
        0x7FC0_0001,
        "quiet NaN with the sign cleared"
    );
    assert_eq!(f1(Opcode::Fabs, ty(T::F).ftz(), 0x8000_0001), 0);
    assert_eq!(f1(Opcode::Fabs, ty(T::F), 0x8000_0001), 1);
    assert_eq!(f1(Opcode::Fneg, ty(T::F), 0), 0x8000_0000);
    assert_eq!(f1(Opcode::Fneg, ty(T::F), QNAN), 0xFFC0_0000);
    assert_eq!(f1(Opcode::Fneg, ty(T::F).ftz(), 1), 0x8000_0000);
    assert_eq!(evalt(Opcode::Fneg, ty(T::Hf), B16, &[0x3C00]), 0xBC00);
    assert_eq!(
        evalt(Opcode::Fabs, ty(T::Df), B64, &[0xBFF0_0000_0000_0000]),
        0x3FF0_0000_0000_0000
    );
    assert_eq!(
        evalt(Opcode::Fabs, ty(T::Hfx2), V2B16, &[0xBC00_8001]),
        0x3C00_0001
    );
}

#[test]
fn fraction() {
    assert_eq!(f1(Opcode::Frc, ty(T::F), bits(1.25)), bits(0.25));
    assert_eq!(f1(Opcode::Frc, ty(T::F), bits(-1.25)), bits(0.75));
    assert_eq!(f1(Opcode::Frc, ty(T::F), bits(3.0)), 0);
    assert_eq!(f1(Opcode::Frc, ty(T::F), 0x8000_0000), 0);
    // -2^-30 - floor(-2^-30) = 1 - 2^-30, which rounds to 1.0
    assert_eq!(f1(Opcode::Frc, ty(T::F), 0xB080_0000), ONE);
    assert_eq!(f1(Opcode::Frc, ty(T::F), INF), QNAN);
    assert_eq!(f1(Opcode::Frc, ty(T::F), 0x7FC0_0003), 0x7FC0_0003);
    let e = eval(Opcode::Frc, ty(T::Hf), B16, &[Src::Reg(B16, 0x3C00)]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }));
}

#[test]
fn reciprocal_and_reciprocal_square_root() {
    assert_eq!(f1(Opcode::Frcp, ty(T::F), bits(2.0)), bits(0.5));
    assert_eq!(f1(Opcode::Frcp, ty(T::F), bits(3.0)), 0x3EAA_AAAB);
    assert_eq!(f1(Opcode::Frcp, ty(T::F), 0), INF);
    assert_eq!(f1(Opcode::Frcp, ty(T::F), 0x8000_0000), NINF);
    assert_eq!(f1(Opcode::Frcp, ty(T::F), INF), 0);
    let rs = |x| f1(Opcode::Frsqrt, ty(T::F).fast(), x);
    assert_eq!(rs(bits(4.0)), bits(0.5));
    assert_eq!(rs(0), INF);
    assert_eq!(rs(0x8000_0000), NINF);
    assert_eq!(rs(bits(-1.0)), QNAN);
    assert_eq!(rs(INF), 0);
    assert_eq!(rs(bits(2.0)), 0x3F35_04F3);
    // 1/sqrt(2) correctly rounded in .df (a naive 1.0 / sqrt(2.0) gives ...BCC)
    let d = evalt(
        Opcode::Frsqrt,
        ty(T::Df).fast(),
        B64,
        &[2f64.to_bits() as u128],
    );
    assert_eq!(d, 0x3FE6_A09E_667F_3BCD);
}

#[test]
fn transcendentals() {
    let f = |op, x: f32| f1(op, ty(T::F), bits(x));
    assert_eq!(f(Opcode::Fsin, 0.0), 0);
    assert_eq!(f(Opcode::Fsin, -0.0), 0x8000_0000);
    assert_eq!(f(Opcode::Fsin, 1.0), 0x3F57_6AA4);
    assert_eq!(f(Opcode::Fcos, 0.0), ONE);
    assert_eq!(f(Opcode::Fcos, 1.0), 0x3F0A_5140);
    assert_eq!(f1(Opcode::Fsin, ty(T::F), INF), QNAN);
    assert_eq!(f(Opcode::Fexp2, 3.0), bits(8.0));
    assert_eq!(f(Opcode::Fexp2, 0.5), 0x3FB5_04F3);
    assert_eq!(f1(Opcode::Fexp2, ty(T::F), NINF), 0);
    assert_eq!(f1(Opcode::Fexp2, ty(T::F), INF), INF);
    assert_eq!(f(Opcode::Fexp2, 200.0), INF);
    assert_eq!(f(Opcode::Flog2, 8.0), bits(3.0));
    assert_eq!(f(Opcode::Flog2, 3.0), 0x3FCA_E00D);
    assert_eq!(f(Opcode::Flog2, 1.0), 0);
    assert_eq!(f(Opcode::Flog2, 0.0), NINF);
    assert_eq!(f(Opcode::Flog2, -1.0), QNAN);
    assert_eq!(f(Opcode::Ftanh, 0.5), 0x3EEC_9A9F);
    assert_eq!(f(Opcode::Ftanh, 100.0), ONE);
    assert_eq!(f1(Opcode::Ftanh, ty(T::F), NINF), bits(-1.0));
    assert_eq!(evalt(Opcode::Fsin, ty(T::Hf), B16, &[0x3C00]), 0x3ABB);
    assert_eq!(
        evalt(Opcode::Fsin, ty(T::Hfx2), V2B16, &[0x3C00_0000]),
        0x3ABB_0000
    );
    assert_eq!(
        evalt(Opcode::Fexp2, ty(T::Bf), B16, &[0x4040]),
        0x4100,
        "2^3 = 8 in .bf"
    );
    let e = eval(Opcode::Fsin, ty(T::Df), B64, &[Src::Reg(B64, 0)]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }));
}

#[test]
fn packed_operations_work_per_element() {
    // (1.0, 2.0) + (0.5, 0.25) in .hf
    assert_eq!(
        evalt(
            Opcode::Fadd,
            ty(T::Hfx2),
            V2B16,
            &[0x4000_3C00, 0x3400_3800]
        ),
        0x4080_3E00
    );
    // (2.0, 3.0) * (0.5, 0.5) in .bf
    assert_eq!(
        evalt(
            Opcode::Fmul,
            ty(T::Bfx2),
            V2B16,
            &[0x4040_4000, 0x3F00_3F00]
        ),
        0x3FC0_3F80
    );
    // .dsat per element: (2.0, -1.0) + 0 -> (1.0, 0)
    assert_eq!(
        evalt(Opcode::Fadd, ty(T::Hfx2).dsat(), V2B16, &[0xBC00_4000, 0]),
        0x0000_3C00
    );
    // rounding per element: (1 + 2^-11, 1 + 2^-11) under .ru
    assert_eq!(
        evalt(
            Opcode::Fadd,
            ty(T::Hfx2).rnd(Ru),
            V2B16,
            &[0x3C00_3C00, 0x1000_1000]
        ),
        0x3C01_3C01
    );
    assert_eq!(
        evalt(
            Opcode::Fmax,
            ty(T::Bfx2),
            V2B16,
            &[0x7FC0_3F80, 0x4000_4000]
        ),
        0x4000_4000
    );
    assert_eq!(
        evalt(
            Opcode::Fmad,
            ty(T::Hfx2),
            V2B16,
            &[0x4000_4000, 0x4000_4200, 0x3C00_BC00]
        ),
        0x4500_4500
    );
}

/// Runs `op` over many operand pairs in one dispatch (one work-item per pair).
fn batch(op: Opcode, q: Quals, width: u32, pairs: &[(u64, u64)]) -> Vec<u64> {
    let t = RegType::Scalar(Bits::from_bits(width).unwrap());
    let rows: Vec<Vec<u128>> = pairs
        .iter()
        .map(|&(a, b)| vec![a as u128, b as u128])
        .collect();
    map_rows(op, q, t, &[t, t], &rows)
        .into_iter()
        .map(|v| v as u64)
        .collect()
}

/// Random bit patterns biased toward interesting exponents.
fn operands32(rng: &mut Rng, n: usize) -> Vec<(u64, u64)> {
    let special = [
        0u32,
        0x8000_0000,
        1,
        0x807F_FFFF,
        0x0080_0000,
        ONE,
        MAX,
        INF,
        NINF,
        0x3380_0000,
        0x4B80_0000,
    ];
    (0..n)
        .map(|i| {
            let mut pick = |j: usize| -> u32 {
                let v = rng.next();
                match v % 4 {
                    0 => special[(v >> 8) as usize % special.len()],
                    1 => (v >> 16) as u32 & 0x807F_FFFF | 0x3F00_0000 | ((j as u32 & 1) << 23),
                    _ => (v >> 16) as u32,
                }
            };
            (pick(i) as u64, pick(i + 1) as u64)
        })
        .collect()
}

#[test]
fn single_precision_matches_the_host_fpu() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let pairs = operands32(&mut rng, 3000);
    type HostOp = fn(f32, f32) -> f32;
    let cases: [(Opcode, HostOp); 4] = [
        (Opcode::Fadd, |a, b| a + b),
        (Opcode::Fsub, |a, b| a - b),
        (Opcode::Fmul, |a, b| a * b),
        (Opcode::Fdiv, |a, b| a / b),
    ];
    for (op, host) in cases {
        let got = batch(op, ty(T::F), 32, &pairs);
        for (&(a, b), &g) in pairs.iter().zip(&got) {
            let want = host(f32::from_bits(a as u32), f32::from_bits(b as u32));
            if want.is_nan() {
                assert!(f32::from_bits(g as u32).is_nan(), "{op:?} {a:#x} {b:#x}");
            } else {
                assert_eq!(g as u32, want.to_bits(), "{op:?} {a:#x} {b:#x}");
            }
        }
    }
}

#[test]
fn double_precision_matches_the_host_fpu() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let pairs: Vec<(u64, u64)> = (0..3000)
        .map(|_| {
            let mut pick = || {
                let v = rng.next();
                if v.is_multiple_of(3) {
                    (v & 0x800F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000
                } else {
                    v
                }
            };
            (pick(), pick())
        })
        .collect();
    type HostOp = fn(f64, f64) -> f64;
    let cases: [(Opcode, HostOp); 4] = [
        (Opcode::Fadd, |a, b| a + b),
        (Opcode::Fsub, |a, b| a - b),
        (Opcode::Fmul, |a, b| a * b),
        (Opcode::Fdiv, |a, b| a / b),
    ];
    for (op, host) in cases {
        let got = batch(op, ty(T::Df), 64, &pairs);
        for (&(a, b), &g) in pairs.iter().zip(&got) {
            let want = host(f64::from_bits(a), f64::from_bits(b));
            if want.is_nan() {
                assert!(f64::from_bits(g).is_nan(), "{op:?} {a:#x} {b:#x}");
            } else {
                assert_eq!(g, want.to_bits(), "{op:?} {a:#x} {b:#x}");
            }
        }
    }
}

#[test]
fn directed_rounding_brackets_the_exact_product() {
    // The product of two .f values is exact in f64: .rd/.ru must be the neighbours around it.
    let mut rng = Rng(42);
    let pairs = operands32(&mut rng, 2000);
    let rd = batch(Opcode::Fmul, ty(T::F).rnd(Rd), 32, &pairs);
    let ru = batch(Opcode::Fmul, ty(T::F).rnd(Ru), 32, &pairs);
    let rz = batch(Opcode::Fmul, ty(T::F).rnd(Rz), 32, &pairs);
    for (i, &(a, b)) in pairs.iter().enumerate() {
        let exact = f32::from_bits(a as u32) as f64 * f32::from_bits(b as u32) as f64;
        let (d, u, z) = (
            f32::from_bits(rd[i] as u32),
            f32::from_bits(ru[i] as u32),
            f32::from_bits(rz[i] as u32),
        );
        if exact.is_nan() || exact.is_infinite() || exact == 0.0 {
            continue;
        }
        assert!((d as f64) <= exact && exact <= (u as f64), "{a:#x} {b:#x}");
        if (d as f64) == exact {
            assert_eq!(d, u);
        } else if d.is_finite() && u.is_finite() {
            assert_eq!(
                u.to_bits() as i64 - d.to_bits() as i64,
                if exact > 0.0 { 1 } else { -1 },
                "{a:#x} {b:#x}"
            );
        }
        assert_eq!(z, if exact > 0.0 { d } else { u }, "{a:#x} {b:#x}");
    }
}

#[test]
fn half_and_bfloat_match_f32_rounded_once() {
    // For + - * / of 11- or 8-bit-precision values, computing in f32 (24 bits >= 2p + 2) and
    // rounding to nearest once more gives the correctly rounded result.
    let mut rng = Rng(7);
    let pairs: Vec<(u64, u64)> = (0..2000)
        .map(|_| (rng.next() & 0xFFFF, rng.next() & 0xFFFF))
        .collect();
    type HostOp = fn(f32, f32) -> f32;
    let cases: [(Opcode, HostOp); 4] = [
        (Opcode::Fadd, |a, b| a + b),
        (Opcode::Fsub, |a, b| a - b),
        (Opcode::Fmul, |a, b| a * b),
        (Opcode::Fdiv, |a, b| a / b),
    ];
    for (op, host) in cases {
        let q = if op == Opcode::Fdiv {
            ty(T::Hf).fast()
        } else {
            ty(T::Hf)
        };
        let got = batch(op, q, 16, &pairs);
        for (&(a, b), &g) in pairs.iter().zip(&got) {
            let want = half::f16::from_f32(host(
                half::f16::from_bits(a as u16).to_f32(),
                half::f16::from_bits(b as u16).to_f32(),
            ));
            if want.is_nan() {
                assert!(
                    half::f16::from_bits(g as u16).is_nan(),
                    "{op:?} {a:#x} {b:#x}"
                );
            } else {
                assert_eq!(g as u16, want.to_bits(), "hf {op:?} {a:#x} {b:#x}");
            }
        }
        let q = if op == Opcode::Fdiv {
            ty(T::Bf).fast()
        } else {
            ty(T::Bf)
        };
        let got = batch(op, q, 16, &pairs);
        for (&(a, b), &g) in pairs.iter().zip(&got) {
            let want = half::bf16::from_f32(host(
                half::bf16::from_bits(a as u16).to_f32(),
                half::bf16::from_bits(b as u16).to_f32(),
            ));
            if want.is_nan() {
                assert!(
                    half::bf16::from_bits(g as u16).is_nan(),
                    "{op:?} {a:#x} {b:#x}"
                );
            } else {
                assert_eq!(g as u16, want.to_bits(), "bf {op:?} {a:#x} {b:#x}");
            }
        }
    }
}
