//! Integer arithmetic (isa-1), with expected values derived by hand from the semantics blocks.

mod common;
use common::*;
use pisa_reference::Error;

fn bin(op: Opcode, q: Quals, t: RegType, a: u128, b: u128) -> u128 {
    evalt(op, q, t, &[a, b])
}

#[test]
fn iadd_wraps_and_saturates() {
    let add = |q: Quals, t, a, b| bin(Opcode::Iadd, q, t, a, b);
    assert_eq!(add(ty(T::B32), B32, 1, 2), 3);
    assert_eq!(add(ty(T::B32), B32, 0xFFFF_FFFF, 1), 0);
    assert_eq!(add(ty(T::B32), B32, 0x7FFF_FFFF, 1), 0x8000_0000);
    assert_eq!(add(ty(T::B32).dsat(), B32, 0x7FFF_FFFF, 1), 0x7FFF_FFFF);
    assert_eq!(
        add(ty(T::B32).dsat(), B32, 0x8000_0000, 0xFFFF_FFFF),
        0x8000_0000
    );
    assert_eq!(add(ty(T::B32), B32, 0x8000_0000, 0xFFFF_FFFF), 0x7FFF_FFFF);
    assert_eq!(
        add(ty(T::B32).dsat(), B32, 0xFFFF_FFFF, 0xFFFF_FFFF),
        0xFFFF_FFFE
    );
    assert_eq!(add(ty(T::B16).dsat(), B16, 0x7FFF, 1), 0x7FFF);
    assert_eq!(add(ty(T::B16).dsat(), B16, 0x8000, 0x8000), 0x8000);
    assert_eq!(add(ty(T::B16), B16, 0x8000, 0x8000), 0);
    assert_eq!(
        add(ty(T::B64).dsat(), B64, 0x7FFF_FFFF_FFFF_FFFF, 1),
        0x7FFF_FFFF_FFFF_FFFF
    );
    assert_eq!(
        add(ty(T::B64), B64, 0x7FFF_FFFF_FFFF_FFFF, 1),
        0x8000_0000_0000_0000
    );
}

#[test]
fn iadd_packed() {
    // elements low to high: 0xFF+0x01, 0x01+0x01, 0x80+0xFF, 0x7F+0x01
    assert_eq!(
        bin(Opcode::Iadd, ty(T::B8x4), V4B8, 0x7F80_01FF, 0x01FF_0101),
        0x807F_0200
    );
    assert_eq!(
        bin(
            Opcode::Iadd,
            ty(T::B8x4).dsat(),
            V4B8,
            0x7F80_01FF,
            0x01FF_0101
        ),
        0x7F80_0200
    );
    assert_eq!(
        bin(Opcode::Iadd, ty(T::B16x2), V2B16, 0x7FFF_0001, 0x0001_FFFF),
        0x8000_0000
    );
    assert_eq!(
        bin(
            Opcode::Iadd,
            ty(T::B16x2).dsat(),
            V2B16,
            0x7FFF_0001,
            0x0001_FFFF
        ),
        0x7FFF_0000
    );
}

#[test]
fn isub_ineg_iabs() {
    assert_eq!(bin(Opcode::Isub, ty(T::B32), B32, 0, 1), 0xFFFF_FFFF);
    assert_eq!(
        bin(Opcode::Isub, ty(T::B32), B32, 0x8000_0000, 1),
        0x7FFF_FFFF
    );
    assert_eq!(
        bin(Opcode::Isub, ty(T::B32).dsat(), B32, 0x8000_0000, 1),
        0x8000_0000
    );
    assert_eq!(
        bin(
            Opcode::Isub,
            ty(T::B32).dsat(),
            B32,
            0x7FFF_FFFF,
            0xFFFF_FFFF
        ),
        0x7FFF_FFFF
    );
    assert_eq!(
        bin(Opcode::Isub, ty(T::B16x2), V2B16, 0x8000_0005, 0x0001_0007),
        0x7FFF_FFFE
    );
    assert_eq!(
        bin(
            Opcode::Isub,
            ty(T::B16x2).dsat(),
            V2B16,
            0x8000_0005,
            0x0001_0007
        ),
        0x8000_FFFE
    );
    let un = |op, t: DataType, rt, v| evalt(op, ty(t), rt, &[v]);
    assert_eq!(un(Opcode::Ineg, T::B32, B32, 0x8000_0000), 0x8000_0000);
    assert_eq!(un(Opcode::Ineg, T::B32, B32, 1), 0xFFFF_FFFF);
    assert_eq!(un(Opcode::Ineg, T::B32, B32, 0), 0);
    assert_eq!(un(Opcode::Ineg, T::B64, B64, 1), u64::MAX as u128);
    assert_eq!(un(Opcode::Ineg, T::B16, B16, 0x8000), 0x8000);
    assert_eq!(un(Opcode::Iabs, T::B32, B32, 0x8000_0000), 0x8000_0000);
    assert_eq!(un(Opcode::Iabs, T::B32, B32, 0xFFFF_FFFF), 1);
    assert_eq!(un(Opcode::Iabs, T::B32, B32, 5), 5);
    assert_eq!(un(Opcode::Iabs, T::B16, B16, 0x8000), 0x8000);
    assert_eq!(un(Opcode::Iabs, T::B16, B16, 0xFFFE), 2);
    assert_eq!(
        un(Opcode::Iabs, T::B64, B64, 0x8000_0000_0000_0000),
        0x8000_0000_0000_0000
    );
}

#[test]
fn division_truncates_like_c() {
    let div = |q: Quals, t, a, b| bin(Opcode::Sdiv, q, t, a, b);
    assert_eq!(div(ty(T::B32), B32, 7, 2), 3);
    assert_eq!(
        div(ty(T::B32), B32, (-7i32) as u32 as u128, 2),
        (-3i32) as u32 as u128
    );
    assert_eq!(div(ty(T::B32).rem(), B32, 7, (-2i32) as u32 as u128), 1);
    assert_eq!(
        div(ty(T::B32).rem(), B32, (-7i32) as u32 as u128, 2),
        0xFFFF_FFFF
    );
    assert_eq!(div(ty(T::B32), B32, 0x8000_0000, 0xFFFF_FFFF), 0x8000_0000);
    assert_eq!(div(ty(T::B32).rem(), B32, 0x8000_0000, 0xFFFF_FFFF), 0);
    assert_eq!(div(ty(T::B16), B16, 0x8000, 0xFFFF), 0x8000);
    assert_eq!(
        div(ty(T::B64), B64, 0x8000_0000_0000_0000, u64::MAX as u128),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        bin(Opcode::Udiv, ty(T::B32), B32, 0xFFFF_FFFF, 2),
        0x7FFF_FFFF
    );
    assert_eq!(bin(Opcode::Udiv, ty(T::B32).rem(), B32, 0xFFFF_FFFF, 10), 5);
    assert_eq!(bin(Opcode::Udiv, ty(T::B16), B16, 0xFFFF, 0x100), 0xFF);
}

#[test]
fn division_by_zero_is_undefined_behaviour() {
    for op in [Opcode::Sdiv, Opcode::Udiv] {
        for q in [ty(T::B32), ty(T::B32).rem()] {
            let e = eval(op, q, B32, &[Src::Reg(B32, 5), Src::Reg(B32, 0)]).unwrap_err();
            assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
        }
    }
}

#[test]
fn multiply_and_multiply_add() {
    let mad = |q: Quals, a, b, c| evalt(Opcode::Smad, q, B32, &[a, b, c]);
    assert_eq!(mad(ty(T::B32), 3, (-2i32) as u32 as u128, 10), 4);
    let full = |op, t: DataType, st, dt, a, b, c| {
        eval(
            op,
            ty(t).full(),
            dt,
            &[Src::Reg(st, a), Src::Reg(st, b), Src::Reg(dt, c)],
        )
        .unwrap()
    };
    assert_eq!(
        full(Opcode::Smad, T::B32, B32, B64, 0x8000_0000, 0x8000_0000, 1),
        0x4000_0000_0000_0001
    );
    assert_eq!(
        full(Opcode::Smad, T::B32, B32, B64, 0xFFFF_FFFF, 2, 0),
        0xFFFF_FFFF_FFFF_FFFE
    );
    assert_eq!(
        full(
            Opcode::Umad,
            T::B32,
            B32,
            B64,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF_FFFF_FFFF
        ),
        0xFFFF_FFFE_0000_0000
    );
    assert_eq!(
        full(Opcode::Smad, T::B16, B16, B32, 0x8000, 0x7FFF, 0),
        0xC000_8000
    );
    assert_eq!(
        evalt(
            Opcode::Smad,
            ty(T::B16x2),
            V2B16,
            &[0xFFFF_0002, 0x0003_0003, 0x0001_0001]
        ),
        0xFFFE_0007
    );
    assert_eq!(
        evalt(Opcode::Umad, ty(T::B64), B64, &[u64::MAX as u128, 2, 3]),
        1
    );

    let mul_full = |op, t: DataType, st, dt, a, b| {
        eval(op, ty(t).full(), dt, &[Src::Reg(st, a), Src::Reg(st, b)]).unwrap()
    };
    assert_eq!(
        mul_full(Opcode::Smul, T::B16, B16, B32, 0x8000, 0x8000),
        0x4000_0000
    );
    assert_eq!(
        mul_full(Opcode::Smul, T::B16, B16, B32, 0xFFFF, 2),
        0xFFFF_FFFE
    );
    assert_eq!(
        mul_full(Opcode::Umul, T::B32, B32, B64, 0xFFFF_FFFF, 0xFFFF_FFFF),
        0xFFFF_FFFE_0000_0001
    );
    assert_eq!(
        mul_full(Opcode::Umul, T::B16, B16, B32, 0xFFFF, 0xFFFF),
        0xFFFE_0001
    );
    assert_eq!(bin(Opcode::Smul, ty(T::B32), B32, 0x1_0000, 0x1_0000), 0);
    assert_eq!(
        bin(Opcode::Smul, ty(T::B32), B32, 0xFFFF_FFFF, 0xFFFF_FFFF),
        1
    );
    assert_eq!(
        bin(Opcode::Smul, ty(T::B16x2), V2B16, 0x0100_FFFF, 0x0100_0002),
        0x0000_FFFE
    );
    assert_eq!(
        bin(Opcode::Umul, ty(T::B64), B64, u64::MAX as u128, 2),
        0xFFFF_FFFF_FFFF_FFFE
    );
}

#[test]
fn minimum_and_maximum() {
    assert_eq!(bin(Opcode::Smax, ty(T::B32), B32, 0xFFFF_FFFF, 1), 1);
    assert_eq!(
        bin(Opcode::Smin, ty(T::B32), B32, 0xFFFF_FFFF, 1),
        0xFFFF_FFFF
    );
    assert_eq!(
        bin(Opcode::Umax, ty(T::B32), B32, 0xFFFF_FFFF, 1),
        0xFFFF_FFFF
    );
    assert_eq!(bin(Opcode::Umin, ty(T::B32), B32, 0xFFFF_FFFF, 1), 1);
    assert_eq!(
        bin(
            Opcode::Smax,
            ty(T::B64),
            B64,
            0x8000_0000_0000_0000,
            0x7FFF_FFFF_FFFF_FFFF
        ),
        0x7FFF_FFFF_FFFF_FFFF
    );
    assert_eq!(bin(Opcode::Smin, ty(T::B16), B16, 0x8000, 0x7FFF), 0x8000);
    assert_eq!(
        bin(Opcode::Smax, ty(T::B8x4), V4B8, 0x807F_FF01, 0),
        0x007F_0001
    );
    assert_eq!(
        bin(Opcode::Smin, ty(T::B8x4), V4B8, 0x807F_FF01, 0),
        0x8000_FF00
    );
    assert_eq!(
        bin(Opcode::Smax, ty(T::B16x2), V2B16, 0x8000_0001, 0x0001_8000),
        0x0001_0001
    );
    assert_eq!(
        bin(Opcode::Umax, ty(T::B16x2), V2B16, 0xFFFF_0001, 0x0001_FFFF),
        0xFFFF_FFFF
    );
    assert_eq!(
        bin(Opcode::Umin, ty(T::B16x2), V2B16, 0xFFFF_0001, 0x0001_FFFF),
        0x0001_0001
    );
}

/// Runs `uaddc` and returns (dst, carry-out).
fn uaddc(ci: Option<bool>, co: bool, a: u32, b: u32) -> (u32, bool) {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (d, cout, s0, s1, cin) = (k.reg(B32), k.reg(PRED), k.reg(B32), k.reg(B32), k.reg(PRED));
    k.set(s0, a as u128);
    k.set(s1, b as u128);
    k.set(cin, ci.unwrap_or(false) as u128);
    let mut ops = vec![r(d)];
    if co {
        ops.push(p(cout));
    }
    ops.extend([r(s0), r(s1)]);
    if ci.is_some() {
        ops.push(p(cin));
    }
    let qual = ty(T::B32).with(|q| {
        q.ci = ci.is_some();
        q.co = co
    });
    k.i(Opcode::Uaddc, qual, ops);
    k.store(ptr, 0, d);
    k.store(ptr, 4, cout);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(8);
    run.dispatch("k", pisa_reference::Launch::linear(1, 1), &[buf])
        .unwrap();
    let w = run.read_words(buf, 2);
    (w[0], w[1] != 0)
}

#[test]
fn uaddc_carries() {
    assert_eq!(uaddc(None, true, 0xFFFF_FFFF, 1), (0, true));
    assert_eq!(uaddc(None, true, 1, 2), (3, false));
    assert_eq!(uaddc(Some(true), false, 1, 2), (4, false));
    assert_eq!(uaddc(Some(false), false, 1, 2), (3, false));
    assert_eq!(uaddc(Some(true), true, 0xFFFF_FFFF, 0), (0, true));
    assert_eq!(
        uaddc(Some(true), true, 0xFFFF_FFFF, 0xFFFF_FFFF),
        (0xFFFF_FFFF, true)
    );
    assert_eq!(
        uaddc(Some(false), true, 0xFFFF_FFFE, 1),
        (0xFFFF_FFFF, false)
    );
}

#[test]
fn uaddc_emulates_64_bit_addition_as_in_the_spec() {
    // isa-1 example: unpack with mov.64b %v.xy, add halves with carry, pack again.
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (dst, src0, src1) = (k.reg(B64), k.reg(B64), k.reg(B64));
    let (dv, s0v, s1v, p0) = (k.reg(V2B32), k.reg(V2B32), k.reg(V2B32), k.reg(PRED));
    k.set(src0, 0x0000_0001_FFFF_FFFF);
    k.set(src1, 0x0000_0000_0000_0001);
    k.i(Opcode::Mov, ty(T::B64), vec![sw(s0v, Swizzle::XY), r(src0)]);
    k.i(Opcode::Mov, ty(T::B64), vec![sw(s1v, Swizzle::XY), r(src1)]);
    let co = ty(T::B32).with(|q| q.co = true);
    let ci = ty(T::B32).with(|q| q.ci = true);
    k.i(
        Opcode::Uaddc,
        co,
        vec![
            sw(dv, Swizzle::X),
            p(p0),
            sw(s0v, Swizzle::X),
            sw(s1v, Swizzle::X),
        ],
    );
    k.i(
        Opcode::Uaddc,
        ci,
        vec![
            sw(dv, Swizzle::Y),
            sw(s0v, Swizzle::Y),
            sw(s1v, Swizzle::Y),
            p(p0),
        ],
    );
    k.i(Opcode::Mov, ty(T::B64), vec![r(dst), sw(dv, Swizzle::XY)]);
    k.store(ptr, 0, dst);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(8);
    run.dispatch("k", pisa_reference::Launch::linear(1, 1), &[buf])
        .unwrap();
    assert_eq!(run.read_words(buf, 2), vec![0, 2]);
}

#[test]
fn dp4a_every_signedness() {
    let dp = |s1: bool, s2: bool, dsat: bool, a: u32, b: u32, c: u32| {
        let q = ty(T::B32).with(|q| {
            q.signedness = Some(Dp4aSign {
                src1_signed: s1,
                src2_signed: s2,
            });
            q.dsat = dsat
        });
        eval32(Opcode::Dp4a, q, &[a, b, c])
    };
    // 10 + 4*8 + 3*7 + 2*6 + 1*5 = 80
    assert_eq!(dp(false, false, false, 10, 0x0102_0304, 0x0506_0708), 80);
    assert_eq!(
        dp(true, true, false, 0, 0xFFFF_FFFF, 0x0202_0202),
        (-8i32) as u32
    );
    assert_eq!(dp(false, false, false, 0, 0xFFFF_FFFF, 0x0202_0202), 2040);
    // .su: src1 signed (-1), src2 unsigned (255): 4 * -255
    assert_eq!(
        dp(true, false, false, 0, 0xFFFF_FFFF, 0xFFFF_FFFF),
        (-1020i32) as u32
    );
    // .us: src2 signed
    assert_eq!(
        dp(false, true, false, 0, 0xFFFF_FFFF, 0xFFFF_FFFF),
        (-1020i32) as u32
    );
    assert_eq!(
        dp(false, true, false, 0, 0x0000_00FF, 0x0000_0080),
        (-32640i32) as u32
    );
    // 0x7FFFFFFF + 4*127*127 overflows: wraps, or saturates with .dsat
    assert_eq!(
        dp(true, true, false, 0x7FFF_FFFF, 0x7F7F_7F7F, 0x7F7F_7F7F),
        0x8000_FC03
    );
    assert_eq!(
        dp(true, true, true, 0x7FFF_FFFF, 0x7F7F_7F7F, 0x7F7F_7F7F),
        0x7FFF_FFFF
    );
    assert_eq!(
        dp(true, true, true, 0x8000_0000, 0x8080_8080, 0x7F7F_7F7F),
        0x8000_0000
    );
    assert_eq!(
        dp(true, true, true, 5, 0x0000_00FE, 0x0000_0003),
        (-1i32) as u32
    );
}

#[test]
fn immediates_are_truncated_to_the_type() {
    let e = eval(
        Opcode::Iadd,
        ty(T::B16),
        B16,
        &[Src::Reg(B16, 0xFFFF), Src::Imm(1)],
    )
    .unwrap();
    assert_eq!(e, 0);
}

#[test]
fn types_outside_the_specification_are_unsupported() {
    let e = eval(
        Opcode::Iadd,
        ty(T::B8),
        B8,
        &[Src::Reg(B8, 1), Src::Reg(B8, 2)],
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    let e = eval(
        Opcode::Umax,
        ty(T::B8x4),
        V4B8,
        &[Src::Reg(V4B8, 1), Src::Reg(V4B8, 2)],
    )
    .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
}
