//! Logic and shift (isa-3), expected values derived by hand from the semantics blocks.

mod common;
use common::*;
use pisa_reference::Error;

/// A shift of a `t`-register by a 32-bit register.
fn shift(op: Opcode, t: DataType, rt: RegType, v: u128, by: u32) -> u128 {
    eval(op, ty(t), rt, &[Src::Reg(rt, v), Src::Reg(B32, by as u128)]).unwrap()
}

#[test]
fn shifts_use_the_low_six_bits_of_src1() {
    let shl = |v, by| shift(Opcode::Shl, T::B32, B32, v, by);
    assert_eq!(shl(1, 0), 1);
    assert_eq!(shl(1, 15), 0x8000);
    assert_eq!(shl(1, 16), 0x1_0000);
    assert_eq!(shl(1, 31), 0x8000_0000);
    assert_eq!(shl(1, 32), 0);
    assert_eq!(shl(1, 63), 0);
    assert_eq!(shl(1, 64), 1, "src1[5:0] of 64 is 0");
    assert_eq!(shl(1, 65), 2);
    assert_eq!(shl(1, 0x100), 1);
    assert_eq!(shl(0xFFFF_FFFF, 4), 0xFFFF_FFF0);

    let shr = |v, by| shift(Opcode::Shr, T::B32, B32, v, by);
    assert_eq!(shr(0x8000_0000, 31), 1);
    assert_eq!(shr(0x8000_0000, 32), 0);
    assert_eq!(shr(0x8000_0000, 63), 0);
    assert_eq!(shr(0x8000_0000, 64), 0x8000_0000);
    assert_eq!(shr(0xFFFF_FFFF, 16), 0xFFFF);

    let asr = |v, by| shift(Opcode::Asr, T::B32, B32, v, by);
    assert_eq!(asr(0x8000_0000, 31), 0xFFFF_FFFF);
    assert_eq!(asr(0x8000_0000, 32), 0xFFFF_FFFF);
    assert_eq!(asr(0x8000_0000, 63), 0xFFFF_FFFF);
    assert_eq!(asr(0x8000_0000, 64), 0x8000_0000);
    assert_eq!(asr(0x4000_0000, 32), 0);
    assert_eq!(asr(0x8000_0000, 1), 0xC000_0000);
    assert_eq!(asr(0x7FFF_FFFF, 30), 1);

    assert_eq!(shift(Opcode::Shl, T::B16, B16, 1, 15), 0x8000);
    assert_eq!(shift(Opcode::Shl, T::B16, B16, 1, 16), 0);
    assert_eq!(shift(Opcode::Shr, T::B16, B16, 0x8000, 15), 1);
    assert_eq!(shift(Opcode::Shr, T::B16, B16, 0x8000, 16), 0);
    assert_eq!(shift(Opcode::Asr, T::B16, B16, 0x8000, 16), 0xFFFF);
    assert_eq!(shift(Opcode::Asr, T::B16, B16, 0x8000, 15), 0xFFFF);
    assert_eq!(shift(Opcode::Asr, T::B16, B16, 0x4000, 16), 0);

    assert_eq!(
        shift(Opcode::Shl, T::B64, B64, 1, 63),
        0x8000_0000_0000_0000
    );
    assert_eq!(shift(Opcode::Shl, T::B64, B64, 1, 64), 1);
    assert_eq!(shift(Opcode::Shl, T::B64, B64, 1, 32), 0x1_0000_0000);
    assert_eq!(
        shift(Opcode::Shr, T::B64, B64, 0x8000_0000_0000_0000, 63),
        1
    );
    assert_eq!(
        shift(Opcode::Asr, T::B64, B64, 0x8000_0000_0000_0000, 63),
        u64::MAX as u128
    );
}

#[test]
fn packed_shifts_use_bits_5_0_and_21_16() {
    assert_eq!(
        shift(Opcode::Shl, T::B16x2, V2B16, 0x0001_0001, 0x0004_0003),
        0x0010_0008
    );
    assert_eq!(
        shift(Opcode::Shl, T::B16x2, V2B16, 0x0001_0001, 0x0010_0010),
        0
    );
    assert_eq!(
        shift(Opcode::Shl, T::B16x2, V2B16, 0x0001_0001, 0x0040_0001),
        0x0001_0002
    );
    assert_eq!(
        shift(Opcode::Asr, T::B16x2, V2B16, 0x8000_8000, 0x000F_0010),
        0xFFFF_FFFF
    );
    assert_eq!(
        shift(Opcode::Asr, T::B16x2, V2B16, 0x8000_4000, 0x0001_0010),
        0xC000_0000
    );
    assert_eq!(
        shift(Opcode::Shr, T::B16x2, V2B16, 0x8000_8000, 0x000F_0001),
        0x0001_4000
    );
}

#[test]
fn bitwise_operations() {
    let b = |op, a, c| evalt(op, ty(T::B32), B32, &[a, c]);
    assert_eq!(b(Opcode::And, 0xF0F0_1234, 0xFF00_FF00), 0xF000_1200);
    assert_eq!(b(Opcode::Or, 0xF0F0_1234, 0x0F00_0001), 0xFFF0_1235);
    assert_eq!(b(Opcode::Xor, 0xFFFF_0000, 0xFF00_FF00), 0x00FF_FF00);
    assert_eq!(
        evalt(Opcode::Not, ty(T::B32), B32, &[0x0F0F_0000]),
        0xF0F0_FFFF
    );
    assert_eq!(evalt(Opcode::Not, ty(T::B16), B16, &[0]), 0xFFFF);
    assert_eq!(
        evalt(Opcode::Not, ty(T::B64), B64, &[1]),
        0xFFFF_FFFF_FFFF_FFFE
    );
    assert_eq!(
        evalt(
            Opcode::And,
            ty(T::B64),
            B64,
            &[u64::MAX as u128, 0x8000_0000_0000_0001]
        ),
        0x8000_0000_0000_0001
    );
}

#[test]
fn bfi_inserts_and_clamps() {
    let bfi = |s0, s1, width, offset| eval32(Opcode::Bfi, ty(T::B32), &[s0, s1, width, offset]);
    assert_eq!(bfi(0xFFFF_FFFF, 0, 8, 4), 0xFFFF_F00F);
    assert_eq!(bfi(0x1234_5678, 0xFFFF_FFFF, 0, 4), 0x1234_5678);
    assert_eq!(bfi(0x1234_5678, 0xCAFE_BABE, 32, 0), 0xCAFE_BABE);
    assert_eq!(
        bfi(0x1234_5678, 0xCAFE_BABE, 40, 0),
        0xCAFE_BABE,
        "width is min(src2[5:0], 32)"
    );
    assert_eq!(
        bfi(0, 0xFF, 8, 28),
        0xF000_0000,
        "bits beyond the MSB are ignored"
    );
    assert_eq!(bfi(0, 1, 1, 36), 0x10, "offset is src3[4:0]");
    assert_eq!(bfi(0, 0xF, 0x44, 0), 0xF, "width is src2[5:0]: 0x44 -> 4");
}

#[test]
fn bit_field_extract() {
    let sbfe = |s0, width, offset| eval32(Opcode::Sbfe, ty(T::B32), &[s0, width, offset]);
    let ubfe = |s0, width, offset| eval32(Opcode::Ubfe, ty(T::B32), &[s0, width, offset]);
    assert_eq!(sbfe(0x0000_0F00, 4, 8), 0xFFFF_FFFF);
    assert_eq!(ubfe(0x0000_0F00, 4, 8), 0xF);
    assert_eq!(sbfe(0x0000_0700, 4, 8), 7);
    assert_eq!(sbfe(0x1234_5678, 0, 8), 0);
    assert_eq!(ubfe(0x1234_5678, 0, 8), 0);
    assert_eq!(
        sbfe(0x8000_0000, 8, 30),
        0xFFFF_FFFE,
        "width clamped to 2 bits: 0b10"
    );
    assert_eq!(ubfe(0x8000_0000, 8, 30), 2);
    assert_eq!(sbfe(0x8765_4321, 32, 0), 0x8765_4321);
    assert_eq!(ubfe(0x8765_4321, 32, 0), 0x8765_4321);
    assert_eq!(ubfe(0x8765_4321, 16, 16), 0x8765);
    assert_eq!(sbfe(0x8765_4321, 16, 16), 0xFFFF_8765);
    assert_eq!(ubfe(0x8765_4321, 4, 32 + 4), 2, "offset is src2[4:0]");
}

#[test]
fn bfn_follows_the_table() {
    let (a, b, c) = (0x1234_5678u32, 0x9ABC_DEF0u32, 0x0F0F_3C3Cu32);
    let bfn = |op: u8| {
        eval32(
            Opcode::Bfn,
            ty(T::B32).with(|q| q.bfn = Some(op)),
            &[a, b, c],
        )
    };
    // The encoding itself: src0 = 0xaa, src1 = 0xcc, src2 = 0xf0 give the operation byte.
    for op in [0x01u8, 0x18, 0x80, 0xba, 0xe9, 0xfe] {
        let k = eval32(
            Opcode::Bfn,
            ty(T::B32).with(|q| q.bfn = Some(op)),
            &[0xaa, 0xcc, 0xf0],
        );
        assert_eq!(k & 0xFF, op as u32);
    }
    // Rows of the Bfn Operations table, written as in the table.
    assert_eq!(bfn(0x01), !a & !b & !c);
    assert_eq!(bfn(0x16), a ^ (a & b | b ^ c));
    assert_eq!(bfn(0x18), (a ^ c) & (b ^ c));
    assert_eq!(bfn(0x1e), (a | b) ^ c);
    assert_eq!(bfn(0x69), a ^ b ^ !c);
    assert_eq!(bfn(0x6a), a ^ b & c);
    assert_eq!(bfn(0x80), a & b & c);
    assert_eq!(bfn(0x96), a ^ b ^ c);
    assert_eq!(bfn(0xba), a | !b & c);
    assert_eq!(bfn(0xca), a & !c | b & c);
    assert_eq!(bfn(0xe8), a & b | (a | b) & c);
    assert_eq!(bfn(0xe9), a ^ !b & !c | b & c);
    assert_eq!(bfn(0xfe), a | b | c);
    for invalid in [0x00u8, 0xff] {
        let q = ty(T::B32).with(|q| q.bfn = Some(invalid));
        let e = eval(
            Opcode::Bfn,
            q,
            B32,
            &[Src::Imm(1), Src::Imm(2), Src::Imm(3)],
        )
        .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    }
}

#[test]
fn bit_counting_and_reversal() {
    let un = |op, t: DataType, rt, v| evalt(op, ty(t), rt, &[v]);
    assert_eq!(un(Opcode::Bfrev, T::B32, B32, 1), 0x8000_0000);
    assert_eq!(un(Opcode::Bfrev, T::B32, B32, 0x1234_5678), 0x1E6A_2C48);
    assert_eq!(un(Opcode::Bfrev, T::B32, B32, 0xFFFF_0000), 0x0000_FFFF);
    assert_eq!(un(Opcode::Cbit, T::B32, B32, 0), 0);
    assert_eq!(un(Opcode::Cbit, T::B32, B32, 0xFFFF_FFFF), 32);
    assert_eq!(un(Opcode::Cbit, T::B32, B32, 0x8000_0001), 2);
    assert_eq!(un(Opcode::Cbit, T::B16, B16, 0xFFFF), 16);
    assert_eq!(un(Opcode::Fbh, T::B32, B32, 0), 0xFFFF_FFFF);
    assert_eq!(un(Opcode::Fbh, T::B32, B32, 1), 31);
    assert_eq!(un(Opcode::Fbh, T::B32, B32, 0x8000_0000), 0);
    assert_eq!(un(Opcode::Fbh, T::B32, B32, 0x0001_0000), 15);
    assert_eq!(un(Opcode::Fbh, T::B16, B16, 0), 0xFFFF);
    assert_eq!(un(Opcode::Fbh, T::B16, B16, 1), 15);
    assert_eq!(un(Opcode::Fbl, T::B32, B32, 0), 0xFFFF_FFFF);
    assert_eq!(un(Opcode::Fbl, T::B32, B32, 1), 0);
    assert_eq!(un(Opcode::Fbl, T::B32, B32, 0x8000_0000), 31);
    assert_eq!(un(Opcode::Fbl, T::B32, B32, 0x0001_0000), 16);
    assert_eq!(un(Opcode::Fbl, T::B16, B16, 0x8000), 15);
    assert_eq!(un(Opcode::Fbl, T::B16, B16, 0), 0xFFFF);
}

#[test]
fn funnel_shift() {
    let l = ty(T::B32).with(|q| q.shf_left = true);
    let rq = ty(T::B32);
    assert_eq!(
        eval32(Opcode::Shf, l.clone(), &[0x1234_5678, 0x9ABC_DEF0, 8]),
        0x3456_789A
    );
    assert_eq!(
        eval32(Opcode::Shf, rq.clone(), &[0x1234_5678, 0x9ABC_DEF0, 8]),
        0x789A_BCDE
    );
    assert_eq!(
        eval32(Opcode::Shf, l.clone(), &[0x1234_5678, 0x9ABC_DEF0, 0]),
        0x1234_5678
    );
    assert_eq!(
        eval32(Opcode::Shf, rq.clone(), &[0x1234_5678, 0x9ABC_DEF0, 0]),
        0x9ABC_DEF0
    );
    assert_eq!(
        eval32(Opcode::Shf, l.clone(), &[0x1234_5678, 0x9ABC_DEF0, 32]),
        0x1234_5678,
        "src2[4:0]"
    );
    assert_eq!(
        eval32(Opcode::Shf, l.clone(), &[0x1234_5678, 0x9ABC_DEF0, 31]),
        0x4D5E_6F78
    );
    // rotate by duplicating the operand
    assert_eq!(
        eval32(Opcode::Shf, l, &[0x8000_0001, 0x8000_0001, 1]),
        0x0000_0003
    );
    assert_eq!(
        eval32(Opcode::Shf, rq, &[0x8000_0001, 0x8000_0001, 1]),
        0xC000_0000
    );
}
