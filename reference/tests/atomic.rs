//! Atomics (isa-8 `iatom`, `fatom`, atomic `ld`/`st`).

mod common;
use common::*;
use pisa_reference::{Error, Launch};

/// Runs `iatom/fatom.global.op.t` once on a global word holding `init`; returns
/// `(returned old value, memory afterwards)`.
fn atom(
    op: Opcode,
    a: AtomOp,
    t: DataType,
    init: u128,
    srcs: &[u128],
) -> Result<(u128, u128), Error> {
    atom_in(op, a, t, AddrSpace::Global, init, srcs)
}

fn atom_in(
    op: Opcode,
    a: AtomOp,
    t: DataType,
    space: AddrSpace,
    init: u128,
    srcs: &[u128],
) -> Result<(u128, u128), Error> {
    let bits = Bits::from_bits(t.bits()).unwrap();
    let rt = RegType::Scalar(bits);
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (d, mem) = (k.reg(rt), k.reg(rt));
    let mut ops = vec![r(d)];
    let s = k.local(MemSpace::Shared, 16, 16);
    let g = k.reg(B64);
    let target = match space {
        AddrSpace::Global => at64(ptr),
        AddrSpace::Shared => addr(AddrBase::Var(VarRef::Local(s)), AddrOffset::None, 32),
        _ => {
            k.i(
                Opcode::Addrcast,
                q().casts(AddrSpace::Generic, AddrSpace::Global),
                vec![r(g), r(ptr)],
            );
            at64(g)
        }
    };
    // initialise the memory word through a register
    k.set(mem, init);
    let st_q = if t.bits() == 128 {
        ty(T::B128).space(space).order(MemOrder::Relaxed)
    } else {
        ty(bits_type(bits)).space(space)
    };
    k.i(Opcode::St, st_q.clone(), vec![target, r(mem)]);
    ops.push(target);
    for &v in srcs {
        let reg = k.reg(rt);
        k.set(reg, v);
        ops.push(r(reg));
    }
    k.i(op, ty(t).space(space).atom(a), ops);
    let ld_q = if t.bits() == 128 {
        ty(T::B128).space(space).order(MemOrder::Relaxed)
    } else {
        ty(bits_type(bits)).space(space)
    };
    k.i(Opcode::Ld, ld_q, vec![r(mem), target]);
    k.store(ptr, 0, d);
    k.store(ptr, 16, mem);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(32);
    run.dispatch("k", Launch::linear(1, 1), &[buf])?;
    let b = run.read_bytes(buf, 32);
    Ok((
        u128::from_le_bytes(b[..16].try_into().unwrap()),
        u128::from_le_bytes(b[16..].try_into().unwrap()),
    ))
}

fn i32op(a: AtomOp, init: u32, srcs: &[u32]) -> (u32, u32) {
    let s: Vec<u128> = srcs.iter().map(|&x| x as u128).collect();
    let (o, m) = atom(Opcode::Iatom, a, T::B32, init as u128, &s).unwrap();
    (o as u32, m as u32)
}

#[test]
fn every_integer_operation_returns_the_old_value() {
    use AtomOp::*;
    assert_eq!(i32op(Add, 5, &[3]), (5, 8));
    assert_eq!(i32op(Add, 0xFFFF_FFFF, &[1]), (0xFFFF_FFFF, 0));
    assert_eq!(i32op(Sub, 5, &[7]), (5, 0xFFFF_FFFE));
    assert_eq!(i32op(Inc, 0xFFFF_FFFF, &[]), (0xFFFF_FFFF, 0));
    assert_eq!(i32op(Dec, 0, &[]), (0, 0xFFFF_FFFF));
    assert_eq!(i32op(Incwrap, 4, &[5]), (4, 5));
    assert_eq!(i32op(Incwrap, 5, &[5]), (5, 0));
    assert_eq!(i32op(Incwrap, 9, &[5]), (9, 0));
    assert_eq!(i32op(Decwrap, 3, &[5]), (3, 2));
    assert_eq!(i32op(Decwrap, 0, &[5]), (0, 5));
    assert_eq!(i32op(Decwrap, 9, &[5]), (9, 5));
    assert_eq!(i32op(Smin, 5, &[0xFFFF_FFFF]), (5, 0xFFFF_FFFF));
    assert_eq!(i32op(Smax, 5, &[0xFFFF_FFFF]), (5, 5));
    assert_eq!(i32op(Umin, 5, &[0xFFFF_FFFF]), (5, 5));
    assert_eq!(i32op(Umax, 5, &[0xFFFF_FFFF]), (5, 0xFFFF_FFFF));
    assert_eq!(i32op(And, 0b1100, &[0b1010]), (0b1100, 0b1000));
    assert_eq!(i32op(Or, 0b1100, &[0b1010]), (0b1100, 0b1110));
    assert_eq!(i32op(Xor, 0b1100, &[0b1010]), (0b1100, 0b0110));
    assert_eq!(i32op(Xchg, 1, &[2]), (1, 2));
    assert_eq!(i32op(Cas, 7, &[7, 9]), (7, 9));
    assert_eq!(i32op(Cas, 7, &[8, 9]), (7, 7));
}

#[test]
fn integer_widths_and_spaces() {
    use AtomOp::*;
    assert_eq!(
        atom(Opcode::Iatom, Add, T::B64, u64::MAX as u128, &[2]).unwrap(),
        (u64::MAX as u128, 1)
    );
    assert_eq!(
        atom(Opcode::Iatom, Add, T::B16, 0xFFFF, &[2]).unwrap(),
        (0xFFFF, 1)
    );
    assert_eq!(
        atom(Opcode::Iatom, Smax, T::B16, 0x8000, &[0x7FFF]).unwrap(),
        (0x8000, 0x7FFF)
    );
    assert_eq!(
        atom_in(Opcode::Iatom, Add, T::B16, AddrSpace::Shared, 0xFFFF, &[2]).unwrap(),
        (0xFFFF, 1)
    );
    assert_eq!(
        atom_in(Opcode::Iatom, Umax, T::B32, AddrSpace::Generic, 3, &[9]).unwrap(),
        (3, 9)
    );
    assert_eq!(
        atom_in(Opcode::Iatom, Cas, T::B64, AddrSpace::Shared, 1, &[1, 2]).unwrap(),
        (1, 2)
    );
    let big = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210u128;
    assert_eq!(
        atom(Opcode::Iatom, Cas, T::B128, big, &[big, 5]).unwrap(),
        (big, 5)
    );
    assert_eq!(
        atom(Opcode::Iatom, Cas, T::B128, big, &[big - 1, 5]).unwrap(),
        (big, big)
    );
    assert_eq!(
        atom_in(Opcode::Iatom, Xchg, T::B128, AddrSpace::Shared, big, &[7]).unwrap(),
        (big, 7)
    );
    assert_eq!(
        atom(Opcode::Iatom, Incwrap, T::B64, 10, &[10]).unwrap(),
        (10, 0)
    );
}

#[test]
fn combinations_outside_the_table_are_unsupported() {
    use AtomOp::*;
    for (a, t, space) in [
        (Add, T::B64, AddrSpace::Shared),
        (Add, T::B128, AddrSpace::Global),
        (Incwrap, T::B16, AddrSpace::Global),
        (Incwrap, T::B64, AddrSpace::Shared),
    ] {
        let srcs: &[u128] = &[1];
        let e = atom_in(Opcode::Iatom, a, t, space, 0, srcs).unwrap_err();
        assert!(
            matches!(e, Error::Unsupported { .. }),
            "{a:?} {t:?} {space:?}: {e:?}"
        );
    }
    let e = atom_in(Opcode::Fatom, Add, T::Df, AddrSpace::Shared, 0, &[1]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    let e = atom(Opcode::Fatom, Min, T::Df, 0, &[1]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
}

#[test]
fn float_atomics() {
    use AtomOp::*;
    let f = |x: f32| x.to_bits() as u128;
    assert_eq!(
        atom(Opcode::Fatom, Add, T::F, f(1.5), &[f(2.25)]).unwrap(),
        (f(1.5), f(3.75))
    );
    assert_eq!(
        atom(Opcode::Fatom, Sub, T::F, f(1.5), &[f(2.25)]).unwrap(),
        (f(1.5), f(-0.75))
    );
    assert_eq!(
        atom(Opcode::Fatom, Min, T::F, f(1.5), &[f(-2.0)]).unwrap(),
        (f(1.5), f(-2.0))
    );
    assert_eq!(
        atom(Opcode::Fatom, Max, T::F, 0x7FC0_0000, &[f(-2.0)]).unwrap(),
        (0x7FC0_0000, f(-2.0))
    );
    assert_eq!(
        atom(Opcode::Fatom, Max, T::F, 0x8000_0000, &[0]).unwrap(),
        (0x8000_0000, 0)
    );
    // cas compares bit patterns: a NaN matches itself, -0 does not match +0
    assert_eq!(
        atom(
            Opcode::Fatom,
            Cas,
            T::F,
            0x7FC0_0001,
            &[0x7FC0_0001, f(1.0)]
        )
        .unwrap(),
        (0x7FC0_0001, f(1.0))
    );
    assert_eq!(
        atom(Opcode::Fatom, Cas, T::F, 0x8000_0000, &[0, f(1.0)]).unwrap(),
        (0x8000_0000, 0x8000_0000)
    );
    let d = |x: f64| x.to_bits() as u128;
    assert_eq!(
        atom(Opcode::Fatom, Add, T::Df, d(0.1), &[d(0.2)]).unwrap(),
        (d(0.1), d(0.1 + 0.2))
    );
    assert_eq!(
        atom_in(
            Opcode::Fatom,
            Add,
            T::Hf,
            AddrSpace::Shared,
            0x3C00,
            &[0x3C00]
        )
        .unwrap(),
        (0x3C00, 0x4000)
    );
    assert_eq!(
        atom_in(
            Opcode::Fatom,
            Max,
            T::Bf,
            AddrSpace::Generic,
            0x3F80,
            &[0x4000]
        )
        .unwrap(),
        (0x3F80, 0x4000)
    );
    // denormals are kept
    assert_eq!(atom(Opcode::Fatom, Add, T::F, 1, &[1]).unwrap(), (1, 2));
}

#[test]
fn generic_atomics_into_private_memory_are_undefined_behaviour() {
    let mut k = Fb::kernel("k");
    let p = k.local(MemSpace::Private, 4, 4);
    let (g, d, s) = (k.reg(B64), k.reg(B32), k.reg(B32));
    k.i(
        Opcode::Addrcast,
        q().casts(AddrSpace::Generic, AddrSpace::Private),
        vec![r(g), Operand::Var(VarRef::Local(p))],
    );
    k.i(
        Opcode::Iatom,
        ty(T::B32).space(AddrSpace::Generic).atom(AtomOp::Add),
        vec![r(d), at64(g), r(s)],
    );
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let e = run.dispatch("k", Launch::linear(1, 1), &[]).unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
}

#[test]
fn atomic_counter_across_work_groups() {
    // 256 work-items in groups of 64 each take a ticket; every ticket 0..255 is handed out
    // once and the counter ends at 256.
    let mut k = Fb::kernel("k");
    let (pc, po) = (k.param(8), k.param(8));
    let (counter, out) = (k.load_ptr(pc), k.load_ptr(po));
    let (one, ticket, off) = (k.reg(B32), k.reg(B32), k.reg(B64));
    k.set(one, 1);
    k.i(
        Opcode::Iatom,
        ty(T::B32)
            .space(AddrSpace::Global)
            .atom(AtomOp::Add)
            .order(MemOrder::AcqRel)
            .with(|q| q.scope = Some(MemScope::Gpu)),
        vec![r(ticket), at64(counter), r(one)],
    );
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(ticket)],
    );
    k.i(Opcode::Shl, ty(T::B64), vec![r(off), r(off), imm(2)]);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(out), r(out), r(off)]);
    k.store(out, 0, one);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let (c, o) = (run.buffer(4), run.buffer(4 * 256));
    run.dispatch("k", Launch::linear(256, 64), &[c, o]).unwrap();
    assert_eq!(run.read_words(c, 1), vec![256]);
    assert!(run.read_words(o, 256).iter().all(|&x| x == 1));
}

#[test]
fn atomic_loads_and_stores() {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (v, w) = (k.reg(B64), k.reg(B64));
    k.set(v, 0x1122_3344_5566_7788);
    k.i(
        Opcode::St,
        ty(T::B64)
            .space(AddrSpace::Global)
            .order(MemOrder::SeqCst)
            .with(|q| q.scope = Some(MemScope::System)),
        vec![at64(ptr), r(v)],
    );
    k.i(
        Opcode::Fence,
        q().space(AddrSpace::Global)
            .order(MemOrder::AcqRel)
            .with(|q| q.scope = Some(MemScope::Gpu)),
        vec![],
    );
    k.i(
        Opcode::Ld,
        ty(T::B64)
            .space(AddrSpace::Global)
            .order(MemOrder::Acquire)
            .with(|q| q.scope = Some(MemScope::Gpu)),
        vec![r(w), at64(ptr)],
    );
    k.store(ptr, 8, w);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(16);
    run.dispatch("k", Launch::linear(1, 1), &[buf]).unwrap();
    assert_eq!(
        run.read_words(buf, 4),
        vec![0x5566_7788, 0x1122_3344, 0x5566_7788, 0x1122_3344]
    );
}
