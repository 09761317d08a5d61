//! Comparison and selection (isa-5).

mod common;
use common::*;
use CmpOp::*;

const OPS: [CmpOp; 6] = [Eq, Ne, Gt, Ge, Lt, Le];

fn cmp(op: Opcode, t: DataType, rt: RegType, c: CmpOp, pred: bool, a: u128, b: u128) -> u128 {
    let dst = if pred { PRED } else { B32 };
    eval(op, ty(t).cop(c), dst, &[Src::Reg(rt, a), Src::Reg(rt, b)]).unwrap()
}

/// The six results (eq ne gt ge lt le) as a bit string, predicate destination.
fn all(op: Opcode, t: DataType, rt: RegType, a: u128, b: u128) -> [u128; 6] {
    OPS.map(|c| cmp(op, t, rt, c, true, a, b))
}

#[test]
fn signed_and_unsigned_integer_comparisons() {
    // -1 vs 1
    assert_eq!(
        all(Opcode::Scmp, T::B32, B32, 0xFFFF_FFFF, 1),
        [0, 1, 0, 0, 1, 1]
    );
    assert_eq!(
        all(Opcode::Ucmp, T::B32, B32, 0xFFFF_FFFF, 1),
        [0, 1, 1, 1, 0, 0]
    );
    assert_eq!(all(Opcode::Scmp, T::B32, B32, 7, 7), [1, 0, 0, 1, 0, 1]);
    assert_eq!(
        all(Opcode::Scmp, T::B16, B16, 0x8000, 0x7FFF),
        [0, 1, 0, 0, 1, 1]
    );
    assert_eq!(
        all(Opcode::Ucmp, T::B16, B16, 0x8000, 0x7FFF),
        [0, 1, 1, 1, 0, 0]
    );
    assert_eq!(
        all(Opcode::Scmp, T::B64, B64, 0x8000_0000_0000_0000, 0),
        [0, 1, 0, 0, 1, 1]
    );
    // register destination: ~0 or 0 in 32 bits, whatever the type
    assert_eq!(cmp(Opcode::Scmp, T::B16, B16, Ge, false, 5, 5), 0xFFFF_FFFF);
    assert_eq!(cmp(Opcode::Ucmp, T::B64, B64, Lt, false, 5, 5), 0);
}

#[test]
fn packed_unsigned_comparison() {
    let c = |op, a, b| {
        eval(
            Opcode::Ucmp,
            ty(T::B16x2).cop(op),
            V2B16,
            &[Src::Reg(V2B16, a), Src::Reg(V2B16, b)],
        )
        .unwrap()
    };
    assert_eq!(c(Le, 0x0005_FFFF, 0x0005_0001), 0xFFFF_0000);
    assert_eq!(c(Gt, 0x0005_FFFF, 0x0005_0001), 0x0000_FFFF);
    assert_eq!(c(Ne, 0x0001_0002, 0x0001_0003), 0x0000_FFFF);
}

#[test]
fn float_comparisons_are_ordered_except_ne() {
    let f = |x: f32| x.to_bits() as u128;
    let nan = 0x7FC0_0000;
    assert_eq!(
        all(Opcode::Fcmp, T::F, B32, f(1.0), f(2.0)),
        [0, 1, 0, 0, 1, 1]
    );
    assert_eq!(
        all(Opcode::Fcmp, T::F, B32, f(0.0), f(-0.0)),
        [1, 0, 0, 1, 0, 1]
    );
    assert_eq!(
        all(Opcode::Fcmp, T::F, B32, nan, f(1.0)),
        [0, 1, 0, 0, 0, 0]
    );
    assert_eq!(all(Opcode::Fcmp, T::F, B32, nan, nan), [0, 1, 0, 0, 0, 0]);
    assert_eq!(
        all(Opcode::Fcmp, T::F, B32, 0xFF80_0000, f(-1e38)),
        [0, 1, 0, 0, 1, 1]
    );
    assert_eq!(
        all(Opcode::Fcmp, T::F, B32, 0x7F80_0000, 0x7F80_0000),
        [1, 0, 0, 1, 0, 1]
    );
    // denormals: distinct unless flushed
    assert_eq!(cmp(Opcode::Fcmp, T::F, B32, Eq, true, 1, 0), 0);
    let ftz = eval(
        Opcode::Fcmp,
        ty(T::F).cop(Eq).ftz(),
        PRED,
        &[Src::Reg(B32, 1), Src::Reg(B32, 0x8000_0000)],
    )
    .unwrap();
    assert_eq!(ftz, 1);
    assert_eq!(
        all(Opcode::Fcmp, T::Hf, B16, 0x3C00, 0xBC00),
        [0, 1, 1, 1, 0, 0]
    );
    assert_eq!(
        all(Opcode::Fcmp, T::Bf, B16, 0x3F80, 0x3F80),
        [1, 0, 0, 1, 0, 1]
    );
    assert_eq!(
        all(Opcode::Fcmp, T::Df, B64, 0xBFF0_0000_0000_0000, 0),
        [0, 1, 0, 0, 1, 1]
    );
    assert_eq!(
        cmp(Opcode::Fcmp, T::F, B32, Ne, false, nan, f(1.0)),
        0xFFFF_FFFF
    );
    // packed: (1.0, NaN) vs (1.0, 1.0)
    let c = |op, a, b| {
        eval(
            Opcode::Fcmp,
            ty(T::Hfx2).cop(op),
            V2B16,
            &[Src::Reg(V2B16, a), Src::Reg(V2B16, b)],
        )
        .unwrap()
    };
    assert_eq!(c(Eq, 0x7E00_3C00, 0x3C00_3C00), 0x0000_FFFF);
    assert_eq!(c(Ne, 0x7E00_3C00, 0x3C00_3C00), 0xFFFF_0000);
    assert_eq!(c(Le, 0x4000_3C00, 0x3C00_3C00), 0x0000_FFFF);
}

#[test]
fn select_by_register_or_predicate() {
    let sel = |t: DataType, rt, a, b, s: Src| {
        eval(
            Opcode::Sel,
            ty(t),
            rt,
            &[Src::Reg(rt, a), Src::Reg(rt, b), s],
        )
        .unwrap()
    };
    assert_eq!(sel(T::B32, B32, 1, 2, Src::Reg(B32, 0)), 2);
    assert_eq!(sel(T::B32, B32, 1, 2, Src::Reg(B32, 0x8000_0000)), 1);
    assert_eq!(
        sel(T::B64, B64, 1, 2, Src::Reg(B64, 0x1_0000_0000)),
        1,
        "all 64 bits are tested"
    );
    assert_eq!(sel(T::B16, B16, 1, 2, Src::Pred(true)), 1);
    assert_eq!(sel(T::B16, B16, 1, 2, Src::Pred(false)), 2);
    assert_eq!(sel(T::B32, B32, 1, 2, Src::NotPred(true)), 2);
    assert_eq!(sel(T::B32, B32, 1, 2, Src::NotPred(false)), 1);
    // register selector of a float -0: a bitwise test, so it selects src0
    assert_eq!(sel(T::B32, B32, 1, 2, Src::Reg(B32, 0x8000_0000)), 1);
    assert_eq!(
        eval(
            Opcode::Sel,
            ty(T::B32),
            B32,
            &[Src::Imm(7), Src::Imm(9), Src::Pred(true)]
        )
        .unwrap(),
        7
    );
}
