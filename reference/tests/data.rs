//! Data movement (isa-4): `mov` and swizzles, `sext zext trunc`, `extract insert`.

mod common;
use common::*;
use pisa_reference::{Error, Launch};

/// Runs a kernel built by `body` (given the output pointer) and returns 4 words of output.
fn run(body: impl FnOnce(&mut Fb, RegId)) -> Result<Vec<u32>, Error> {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    body(&mut k, ptr);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(32);
    run.dispatch("k", Launch::linear(1, 1), &[buf])?;
    Ok(run.read_words(buf, 8))
}

#[test]
fn mov_with_swizzles_moves_bit_ranges() {
    let w = run(|k, ptr| {
        let (r64, v) = (k.reg(B64), k.reg(V2B32));
        let (lo, hi) = (k.reg(B32), k.reg(B32));
        k.set(r64, 0x1122_3344_5566_7788);
        k.i(Opcode::Mov, ty(T::B64), vec![sw(v, Swizzle::XY), r(r64)]);
        k.i(Opcode::Mov, ty(T::B32), vec![r(lo), sw(v, Swizzle::X)]);
        k.i(Opcode::Mov, ty(T::B32), vec![r(hi), sw(v, Swizzle::Y)]);
        k.store(ptr, 0, lo);
        k.store(ptr, 4, hi);
        // vector to vector: .zw of a v4 from .xy of a v2
        let v4 = k.reg(V4B32);
        k.i(
            Opcode::Mov,
            ty(T::B64),
            vec![sw(v4, Swizzle::ZW), sw(v, Swizzle::XY)],
        );
        k.store(ptr, 8, v4);
    })
    .unwrap();
    assert_eq!(
        w,
        vec![
            0x5566_7788,
            0x1122_3344,
            0,
            0,
            0x5566_7788,
            0x1122_3344,
            0,
            0
        ]
    );
}

#[test]
fn mov_128_bit_and_packed_registers() {
    let w = run(|k, ptr| {
        let (r128, v4) = (k.reg(B128), k.reg(V4B32));
        k.set(r128, 0x0403_0201_0807_0605_0C0B_0A09_100F_0E0D);
        k.i(
            Opcode::Mov,
            ty(T::B128),
            vec![sw(v4, Swizzle::XYZW), r(r128)],
        );
        k.store(ptr, 0, v4);
        let (h, s) = (k.reg(V2B16), k.reg(B32));
        k.i(
            Opcode::Mov,
            ty(T::B32),
            vec![sw(h, Swizzle::XY), imm(0xBEEF_CAFE)],
        );
        k.i(Opcode::Mov, ty(T::B16), vec![r(s), sw(h, Swizzle::Y)]);
        k.store(ptr, 16, h);
    });
    // mov.16b into a 32-bit register is malformed: the destination must have 2 bytes.
    assert!(matches!(w, Err(Error::Malformed { .. })), "{w:?}");
    let w = run(|k, ptr| {
        let (r128, v4) = (k.reg(B128), k.reg(V4B32));
        k.set(r128, 0x0403_0201_0807_0605_0C0B_0A09_100F_0E0D);
        k.i(
            Opcode::Mov,
            ty(T::B128),
            vec![sw(v4, Swizzle::XYZW), r(r128)],
        );
        k.store(ptr, 0, v4);
        let (h, s) = (k.reg(V2B16), k.reg(B16));
        k.i(
            Opcode::Mov,
            ty(T::B32),
            vec![sw(h, Swizzle::XY), imm(0xBEEF_CAFE)],
        );
        k.i(Opcode::Mov, ty(T::B16), vec![r(s), sw(h, Swizzle::Y)]);
        k.store(ptr, 16, s);
    })
    .unwrap();
    assert_eq!(
        w[..5],
        [0x100F_0E0D, 0x0C0B_0A09, 0x0807_0605, 0x0403_0201, 0xBEEF]
    );
}

#[test]
fn extensions_and_truncation() {
    let conv = |op, to: DataType, from: DataType, dt, st, v| {
        eval(op, q().to(to).from(from), dt, &[Src::Reg(st, v)]).unwrap()
    };
    assert_eq!(
        conv(Opcode::Sext, T::B32, T::B16, B32, B16, 0x8000),
        0xFFFF_8000
    );
    assert_eq!(conv(Opcode::Sext, T::B32, T::B16, B32, B16, 0x7FFF), 0x7FFF);
    assert_eq!(conv(Opcode::Zext, T::B32, T::B16, B32, B16, 0x8000), 0x8000);
    assert_eq!(
        conv(Opcode::Sext, T::B64, T::B8, B64, B8, 0x80),
        0xFFFF_FFFF_FFFF_FF80
    );
    assert_eq!(
        conv(Opcode::Zext, T::B64, T::B32, B64, B32, 0xFFFF_FFFF),
        0xFFFF_FFFF
    );
    assert_eq!(
        conv(Opcode::Sext, T::B64, T::B32, B64, B32, 0xFFFF_FFFF),
        u64::MAX as u128
    );
    assert_eq!(
        conv(Opcode::Trunc, T::B16, T::B32, B16, B32, 0x1234_5678),
        0x5678
    );
    assert_eq!(
        conv(Opcode::Trunc, T::B8, T::B64, B8, B64, 0x1234_5678_9ABC_DEF0),
        0xF0
    );
    assert_eq!(
        conv(
            Opcode::Trunc,
            T::B32,
            T::B64,
            B32,
            B64,
            0x1234_5678_9ABC_DEF0
        ),
        0x9ABC_DEF0
    );
    let bad = eval(
        Opcode::Sext,
        q().to(T::B16).from(T::B32),
        B16,
        &[Src::Reg(B32, 1)],
    )
    .unwrap_err();
    assert!(matches!(bad, Error::Unsupported { .. }));
}

#[test]
fn extract_and_insert() {
    let w = run(|k, ptr| {
        let (v, e1, sub, idx, dy) = (
            k.reg(V4B32),
            k.reg(B32),
            k.reg(V2B32),
            k.reg(B32),
            k.reg(B32),
        );
        k.set(v, 0x4444_4444_3333_3333_2222_2222_1111_1111);
        k.i(
            Opcode::Extract,
            ty(T::B32).with(|q| q.index = Some(1)),
            vec![r(e1), r(v)],
        );
        k.i(
            Opcode::Extract,
            ty(T::B32).with(|q| q.index = Some(2)).vec(2),
            vec![r(sub), r(v)],
        );
        k.set(idx, 3);
        k.i(
            Opcode::Extract,
            ty(T::B32).vec(4).with(|q| q.dynamic = true),
            vec![r(dy), r(v), r(idx)],
        );
        k.store(ptr, 0, e1);
        k.store(ptr, 4, sub);
        k.store(ptr, 12, dy);
        // insert 0xAAAA into element 0, the sub-vector (5, 6) at 2, 7 at dynamic index 1
        let src = k.reg(B32);
        k.set(src, 0xAAAA);
        k.i(
            Opcode::Insert,
            ty(T::B32).with(|q| q.index = Some(0)),
            vec![r(v), r(src)],
        );
        k.set(sub, 0x0000_0006_0000_0005);
        k.i(
            Opcode::Insert,
            ty(T::B32).with(|q| q.index = Some(2)).vec(2),
            vec![r(v), r(sub)],
        );
        k.set(idx, 1);
        k.set(src, 7);
        k.i(
            Opcode::Insert,
            ty(T::B32).vec(4).with(|q| q.dynamic = true),
            vec![r(v), r(src), r(idx)],
        );
        k.store(ptr, 16, v);
    })
    .unwrap();
    assert_eq!(
        w,
        vec![
            0x2222_2222,
            0x3333_3333,
            0x4444_4444,
            0x4444_4444,
            0xAAAA,
            7,
            5,
            6
        ]
    );
}

#[test]
fn dynamic_index_out_of_bounds_is_undefined_behaviour() {
    let e = run(|k, _| {
        let (v, d, idx) = (k.reg(V4B32), k.reg(B32), k.reg(B32));
        k.set(idx, 4);
        k.i(
            Opcode::Extract,
            ty(T::B32).vec(4).with(|q| q.dynamic = true),
            vec![r(d), r(v), r(idx)],
        );
    })
    .unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
    let e = run(|k, _| {
        let (v, s, idx) = (k.reg(V2B32), k.reg(B32), k.reg(B32));
        k.set(idx, 0xFFFF_FFFF);
        k.i(
            Opcode::Insert,
            ty(T::B32).vec(2).with(|q| q.dynamic = true),
            vec![r(v), r(s), r(idx)],
        );
    })
    .unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
}

#[test]
fn registers_start_at_zero() {
    let w = run(|k, ptr| {
        let (a, v) = (k.reg(B32), k.reg(V2B32));
        k.store(ptr, 0, a);
        k.store(ptr, 4, v);
    })
    .unwrap();
    assert_eq!(w[..3], [0, 0, 0]);
}
