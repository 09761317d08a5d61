//! Conversions (isa-4): `f2i i2f fext ftrunc ftrunc2 frnd pf2i`, expected values derived by
//! hand from isa-4's tables.

mod common;
use common::*;
use RoundingMode::*;

const MODES: [RoundingMode; 5] = [Re, Rd, Ru, Rz, Rna];

fn f(x: f32) -> u128 {
    x.to_bits() as u128
}

fn d(x: f64) -> u128 {
    x.to_bits() as u128
}

fn f2i(to: DataType, from: DataType, m: RoundingMode, x: u128) -> u128 {
    let (dt, st) = (reg_of(to), reg_of(from));
    eval(
        Opcode::F2i,
        q().to(to).from(from).rnd(m),
        dt,
        &[Src::Reg(st, x)],
    )
    .unwrap()
}

fn reg_of(t: DataType) -> RegType {
    match t.bits() {
        8 => B8,
        16 => B16,
        32 => B32,
        64 => B64,
        _ => B128,
    }
}

#[test]
fn f2i_rounds_in_every_mode() {
    let s = |m, x| f2i(T::S32, T::F, m, f(x)) as u32 as i32;
    let expect = [2, 2, 3, 2, 3];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(s(*m, 2.5), e, "{m:?}");
    }
    let expect = [-2, -3, -2, -2, -3];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(s(*m, -2.5), e, "{m:?}");
    }
    assert_eq!(s(Re, 3.5), 4);
    assert_eq!(s(Re, -0.4), 0);
}

#[test]
fn f2i_saturates_and_maps_nan_to_zero() {
    let s32 = |x: u128| f2i(T::S32, T::F, Re, x);
    assert_eq!(s32(0x7FC0_0000), 0);
    assert_eq!(s32(0x7F80_0001), 0);
    assert_eq!(s32(0x7F80_0000), 0x7FFF_FFFF);
    assert_eq!(s32(0xFF80_0000), 0x8000_0000);
    assert_eq!(s32(f(3e9)), 0x7FFF_FFFF);
    assert_eq!(s32(f(-3e9)), 0x8000_0000);
    assert_eq!(s32(f(-2147483648.0)), 0x8000_0000);
    let u32_ = |m, x| f2i(T::U32, T::F, m, x);
    assert_eq!(u32_(Re, f(-0.5)), 0, "-0.5 rounds to -0");
    assert_eq!(u32_(Re, f(-0.7)), 0, "-0.7 rounds to -1, clamped");
    assert_eq!(u32_(Rz, f(-0.7)), 0);
    assert_eq!(u32_(Re, f(-1.0)), 0);
    assert_eq!(u32_(Re, f(-0.0)), 0);
    assert_eq!(u32_(Re, f(4.3e9)), 0xFFFF_FFFF);
    assert_eq!(u32_(Re, 0x7F80_0000), 0xFFFF_FFFF);
    assert_eq!(u32_(Re, 0xFF80_0000), 0);
    assert_eq!(u32_(Re, 0x7FC0_0000), 0);
    assert_eq!(
        f2i(T::U8, T::F, Re, f(255.5)),
        255,
        "256 after rounding, clamped"
    );
    assert_eq!(f2i(T::U8, T::F, Rz, f(255.5)), 255);
    assert_eq!(f2i(T::U8, T::F, Re, f(300.0)), 255);
    assert_eq!(f2i(T::S8, T::F, Re, f(-129.0)), 0x80);
    assert_eq!(f2i(T::S8, T::F, Re, f(127.4)), 127);
    assert_eq!(f2i(T::S16, T::F, Re, f(-40000.0)), 0x8000);
    assert_eq!(f2i(T::U16, T::F, Re, f(65535.4)), 0xFFFF);
    assert_eq!(f2i(T::S64, T::Df, Re, d(9.3e18)), 0x7FFF_FFFF_FFFF_FFFF);
    assert_eq!(
        f2i(T::S64, T::Df, Re, d(-(2f64.powi(63)))),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        f2i(T::U64, T::Df, Re, d(1.8446744073709552e19)),
        u64::MAX as u128
    );
    assert_eq!(f2i(T::U64, T::Hf, Re, 0x7BFF), 65504);
    assert_eq!(f2i(T::S32, T::Bf, Rz, 0x4049), 3, "3.140625");
    assert_eq!(f2i(T::S32, T::Hf, Re, 0xFC00), 0x8000_0000);
}

fn i2f(to: DataType, from: DataType, m: RoundingMode, dsat: bool, x: u128) -> u128 {
    let mut qq = q().to(to).from(from).rnd(m);
    if dsat {
        qq = qq.dsat();
    }
    eval(Opcode::I2f, qq, reg_of(to), &[Src::Reg(reg_of(from), x)]).unwrap()
}

#[test]
fn i2f_rounds_in_every_mode() {
    // 2^24 + 1 is a tie between 2^24 and 2^24 + 2
    let expect = [
        0x4B80_0000,
        0x4B80_0000,
        0x4B80_0001,
        0x4B80_0000,
        0x4B80_0001,
    ];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(i2f(T::F, T::S32, *m, false, 16_777_217), e, "{m:?}");
    }
    let neg = (-16_777_217i32) as u32 as u128;
    let expect = [
        0xCB80_0000,
        0xCB80_0001,
        0xCB80_0000,
        0xCB80_0000,
        0xCB80_0001,
    ];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(i2f(T::F, T::S32, *m, false, neg), e, "{m:?}");
    }
    assert_eq!(i2f(T::F, T::U32, Re, false, 0xFFFF_FFFF), 0x4F80_0000);
    assert_eq!(i2f(T::F, T::S32, Re, false, 0xFFFF_FFFF), f(-1.0));
    assert_eq!(i2f(T::F, T::U64, Re, false, u64::MAX as u128), 0x5F80_0000);
    assert_eq!(
        i2f(T::Df, T::S64, Re, false, 0x8000_0000_0000_0000),
        0xC3E0_0000_0000_0000
    );
    assert_eq!(i2f(T::Hf, T::S8, Re, false, 0x80), 0xD800);
    assert_eq!(i2f(T::Bf, T::U32, Re, false, 0xFFFF_FFFF), 0x4F80);
    assert_eq!(i2f(T::Bf, T::U32, Rz, false, 0xFFFF_FFFF), 0x4F7F);
    assert_eq!(i2f(T::Hf, T::U16, Re, false, 0), 0);
}

#[test]
fn i2f_overflow_gives_infinity_or_saturates() {
    // 65519 rounds to 65504; 65520 is the midpoint to 65536, which overflows .hf.
    assert_eq!(i2f(T::Hf, T::U32, Re, false, 65519), 0x7BFF);
    assert_eq!(i2f(T::Hf, T::U32, Re, false, 65520), 0x7C00);
    assert_eq!(i2f(T::Hf, T::U32, Re, true, 65520), 0x7BFF);
    assert_eq!(
        i2f(T::Hf, T::U32, Rz, false, 65535),
        0x7BFF,
        "rounds to 65504 without overflow"
    );
    assert_eq!(
        i2f(T::Hf, T::U32, Rz, false, 70000),
        0x7C00,
        "overflow is infinity in every mode"
    );
    assert_eq!(i2f(T::Hf, T::U32, Rz, true, 70000), 0x7BFF);
    assert_eq!(
        i2f(T::Hf, T::S32, Re, false, (-70000i32) as u32 as u128),
        0xFC00
    );
    assert_eq!(
        i2f(T::Hf, T::S32, Re, true, (-70000i32) as u32 as u128),
        0xFBFF
    );
}

#[test]
fn fext_is_exact() {
    let ext = |to: DataType, from: DataType, x| {
        eval(
            Opcode::Fext,
            q().to(to).from(from),
            reg_of(to),
            &[Src::Reg(reg_of(from), x)],
        )
        .unwrap()
    };
    assert_eq!(ext(T::F, T::Hf, 0x3C00), f(1.0));
    assert_eq!(
        ext(T::F, T::Hf, 0x0001),
        0x3380_0000,
        "a .hf denormal is a normal .f"
    );
    assert_eq!(ext(T::F, T::Hf, 0x8000), 0x8000_0000);
    assert_eq!(ext(T::F, T::Hf, 0xFC00), 0xFF80_0000);
    assert_eq!(
        ext(T::F, T::Hf, 0x7E01),
        0x7FC0_2000,
        "NaN payload moves to the top of the fraction"
    );
    assert_eq!(
        ext(T::F, T::Hf, 0x7C01),
        0x7FC0_2000,
        "signaling NaN becomes quiet"
    );
    assert_eq!(ext(T::F, T::Bf, 0x3F80), f(1.0));
    assert_eq!(
        ext(T::F, T::Bf, 0x0001),
        0x0001_0000,
        "a .bf denormal stays a .f denormal"
    );
    assert_eq!(ext(T::Df, T::F, 0x3F80_0000), d(1.0));
    assert_eq!(ext(T::Df, T::F, 0x0000_0001), 0x36A0_0000_0000_0000);
    assert_eq!(ext(T::Df, T::F, 0xFFC0_0001), 0xFFF8_0000_2000_0000);
    assert_eq!(ext(T::Df, T::Hf, 0xBC00), d(-1.0));
}

fn trunc(to: DataType, from: DataType, qq: Quals, x: u128) -> u128 {
    eval(
        Opcode::Ftrunc,
        qq.to(to).from(from),
        reg_of(to),
        &[Src::Reg(reg_of(from), x)],
    )
    .unwrap()
}

#[test]
fn ftrunc_follows_its_table() {
    assert_eq!(trunc(T::Hf, T::F, q(), f(1.0)), 0x3C00);
    assert_eq!(trunc(T::Hf, T::F, q(), f(65520.0)), 0x7C00);
    assert_eq!(trunc(T::Hf, T::F, q().dsat(), f(65520.0)), 0x7BFF);
    assert_eq!(trunc(T::Hf, T::F, q().rnd(Rz), f(65520.0)), 0x7BFF);
    assert_eq!(
        trunc(T::Hf, T::F, q().rnd(Rz), f(1e10)),
        0x7C00,
        "overflow is infinity in every mode"
    );
    assert_eq!(trunc(T::Hf, T::F, q().rnd(Rz).dsat(), f(1e10)), 0x7BFF);
    assert_eq!(trunc(T::Hf, T::F, q(), f(-1e10)), 0xFC00);
    assert_eq!(trunc(T::Hf, T::F, q().rnd(Rd), f(70000.0)), 0x7C00);
    assert_eq!(trunc(T::Hf, T::F, q().rnd(Ru), f(-70000.0)), 0xFC00);
    assert_eq!(
        trunc(T::Hf, T::F, q().rnd(Rd), f(65535.0)),
        0x7BFF,
        "rounds to 65504: no overflow"
    );
    assert_eq!(
        trunc(T::Hf, T::F, q().rnd(Rz), f(65536.0)),
        0x7C00,
        "2^16 overflows toward zero too"
    );
    assert_eq!(
        trunc(T::Bf, T::F, q().rnd(Rz), 0x7F7F_FFFF),
        0x7F7F,
        "no .f value overflows .bf toward zero"
    );
    assert_eq!(trunc(T::Bf, T::F, q(), 0x7F7F_FFFF), 0x7F80);
    assert_eq!(trunc(T::Hf, T::F, q(), 0x7F80_0000), 0x7C00);
    assert_eq!(trunc(T::Hf, T::F, q().dsat(), 0xFF80_0000), 0xFBFF);
    // Denormal sources become zero of their sign, whatever the rounding.
    assert_eq!(trunc(T::Hf, T::F, q().rnd(Ru), 0x0000_0001), 0);
    assert_eq!(trunc(T::Hf, T::F, q(), 0x8000_0001), 0x8000);
    assert_eq!(
        trunc(T::Bf, T::F, q(), 0x0040_0000),
        0,
        "even when .bf could hold it"
    );
    // 2^-25 is half of the smallest .hf denormal.
    let expect = [0, 0, 1, 0, 1];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(trunc(T::Hf, T::F, q().rnd(*m), 0x3300_0000), e, "{m:?}");
    }
    assert_eq!(
        trunc(T::Hf, T::F, q().rnd(Ru).ftz(), 0x3300_0000),
        0,
        ".ftz flushes the denormal result"
    );
    // 1 + 2^-8 is a tie in .bf
    let expect = [0x3F80, 0x3F80, 0x3F81, 0x3F80, 0x3F81];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(trunc(T::Bf, T::F, q().rnd(*m), 0x3F80_8000), e, "{m:?}");
    }
    // 1 + 2^-24 is a tie in .f
    let expect = [
        0x3F80_0000,
        0x3F80_0000,
        0x3F80_0001,
        0x3F80_0000,
        0x3F80_0001,
    ];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(
            trunc(T::F, T::Df, q().rnd(*m), 0x3FF0_0000_1000_0000),
            e,
            "{m:?}"
        );
    }
    assert_eq!(trunc(T::F, T::Df, q(), d(f64::MAX)), 0x7F80_0000);
    assert_eq!(trunc(T::F, T::Df, q().dsat(), d(f64::MAX)), 0x7F7F_FFFF);
    assert_eq!(trunc(T::F, T::Df, q(), 1), 0);
    assert_eq!(trunc(T::Hf, T::Df, q(), d(-2.0)), 0xC000);
    // NaN payloads keep their top bits, quiet.
    assert_eq!(trunc(T::Hf, T::F, q(), 0x7FC0_0001), 0x7E00);
    assert_eq!(trunc(T::Hf, T::F, q(), 0x7F80_2000), 0x7E01);
    assert_eq!(trunc(T::Hf, T::F, q().dsat(), 0xFFC0_0000), 0xFE00);
    assert_eq!(trunc(T::F, T::Df, q(), 0x7FF0_0000_0000_0001), 0x7FC0_0000);
}

#[test]
fn ftrunc2_packs_two_halves() {
    let t2 = |to: DataType, qq: Quals, a: f32, b: f32| {
        eval(
            Opcode::Ftrunc2,
            qq.to(to),
            V2B16,
            &[Src::Reg(B32, f(a)), Src::Reg(B32, f(b))],
        )
        .unwrap()
    };
    assert_eq!(t2(T::Hfx2, q(), 1.0, 2.0), 0x4000_3C00);
    assert_eq!(t2(T::Bfx2, q(), 1.0, -2.0), 0xC000_3F80);
    assert_eq!(t2(T::Hfx2, q().dsat(), 1e10, -1e10), 0xFBFF_7BFF);
    assert_eq!(
        t2(T::Hfx2, q().rnd(Ru), 1.0 + 1.0 / 2048.0, 1.0),
        0x3C00_3C01
    );
}

#[test]
fn frnd_rounds_to_integers() {
    let rnd = |m, x: f32| eval32(Opcode::Frnd, ty(T::F).rnd(m), &[x.to_bits()]);
    let expect = [2.0f32, 2.0, 3.0, 2.0, 3.0];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(rnd(*m, 2.5), e.to_bits(), "{m:?}");
    }
    let expect = [-2.0f32, -3.0, -2.0, -2.0, -3.0];
    for (m, e) in MODES.iter().zip(expect) {
        assert_eq!(rnd(*m, -2.5), e.to_bits(), "{m:?}");
    }
    assert_eq!(rnd(Re, 0.5), 0);
    assert_eq!(rnd(Re, -0.5), 0x8000_0000, "the sign of the source");
    assert_eq!(rnd(Ru, -0.5), 0x8000_0000);
    assert_eq!(rnd(Re, 1e30), 1e30f32.to_bits());
    assert_eq!(
        eval32(Opcode::Frnd, ty(T::F).rnd(Re), &[0x7F80_0001]),
        0x7FC0_0001
    );
    assert_eq!(
        eval32(Opcode::Frnd, ty(T::F).rnd(Ru), &[1]),
        0x3F80_0000,
        "ceil of a denormal is 1"
    );
    assert_eq!(
        eval32(Opcode::Frnd, ty(T::F).rnd(Ru).ftz(), &[1]),
        0,
        "unless flushed first"
    );
    assert_eq!(
        evalt(Opcode::Frnd, ty(T::Hf).rnd(Rna), B16, &[0x3E00]),
        0x4000,
        "1.5 -> 2 in .hf"
    );
    assert_eq!(
        evalt(Opcode::Frnd, ty(T::Df).rnd(Rd), B64, &[d(-0.1)]),
        d(-1.0)
    );
}

#[test]
fn pf2i_converts_each_half() {
    let pf = |to: DataType, from: DataType, m, x| {
        evalt(Opcode::Pf2i, q().to(to).from(from).rnd(m), V2B16, &[x])
    };
    // (1.5, -2.5) -> (2, -2)
    assert_eq!(pf(T::S16x2, T::Hfx2, Re, 0xC100_3E00), 0xFFFE_0002);
    assert_eq!(pf(T::S16x2, T::Hfx2, Rna, 0xC100_3E00), 0xFFFD_0002);
    // (-1.0, 65504) unsigned -> (0, 65504)
    assert_eq!(pf(T::U16x2, T::Hfx2, Re, 0x7BFF_BC00), 0xFFE0_0000);
    // (65504, NaN) signed -> (32767, 0)
    assert_eq!(pf(T::S16x2, T::Hfx2, Re, 0x7E00_7BFF), 0x0000_7FFF);
    // .bf (3.0, -inf)
    assert_eq!(pf(T::S16x2, T::Bfx2, Re, 0xFF80_4040), 0x8000_0003);
}
