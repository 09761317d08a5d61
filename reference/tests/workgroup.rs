//! The NDRange, special registers, work-group barriers and shared memory (arch-1, arch-4,
//! isa-9).

mod common;
use common::*;
use pisa_reference::{Config, Error, Launch};

/// `%r = sr.c` (32-bit; 64-bit registers are truncated).
fn read_special(k: &mut Fb, sr: SpecialReg, c: Option<u8>) -> RegId {
    let d = k.reg(B32);
    if matches!(sr, SpecialReg::GlobalSize | SpecialReg::GlobalOffset) {
        let w = k.reg(B64);
        k.i(Opcode::Mov, ty(T::B64), vec![r(w), special(sr, c)]);
        k.i(Opcode::Trunc, q().to(T::B32).from(T::B64), vec![r(d), r(w)]);
    } else {
        k.i(Opcode::Mov, ty(T::B32), vec![r(d), special(sr, c)]);
    }
    d
}

/// A kernel that stores, for each work-item, the listed special registers at
/// `out[(global linear id) * n + i]`, the global id computed as in OpenCL from
/// `%groupid * %enqueuedlocalsize + %localid` in x and y (over `row` work-items per row).
fn special_dump(regs: &[(SpecialReg, Option<u8>)], row: u32) -> Function {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let mut gid = [RegId(0); 2];
    for (d, g) in gid.iter_mut().enumerate() {
        let c = Some(d as u8);
        let (grp, enq, lid) = (
            read_special(&mut k, SpecialReg::GroupId, c),
            read_special(&mut k, SpecialReg::EnqueuedLocalSize, c),
            read_special(&mut k, SpecialReg::LocalId, c),
        );
        let v = k.reg(B32);
        k.i(Opcode::Umad, ty(T::B32), vec![r(v), r(grp), r(enq), r(lid)]);
        *g = v;
    }
    let linear = k.reg(B32);
    k.i(
        Opcode::Umad,
        ty(T::B32),
        vec![r(linear), r(gid[1]), imm(row as u128), r(gid[0])],
    );
    let off = k.reg(B64);
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(linear)],
    );
    k.i(
        Opcode::Umul,
        ty(T::B64),
        vec![r(off), r(off), imm(4 * regs.len() as u128)],
    );
    k.i(Opcode::Iadd, ty(T::B64), vec![r(ptr), r(ptr), r(off)]);
    for (i, &(sr, c)) in regs.iter().enumerate() {
        let v = read_special(&mut k, sr, c);
        k.store(ptr, 4 * i as i64, v);
    }
    k.build()
}

#[test]
fn partial_last_work_group() {
    use SpecialReg::*;
    let regs = [
        (GroupId, Some(0)),
        (LocalId, Some(0)),
        (LocalSize, Some(0)),
        (EnqueuedLocalSize, Some(0)),
        (GroupCount, Some(0)),
        (GlobalSize, Some(0)),
        (WorkDim, None),
        (LaneId, None),
    ];
    let m = module(vec![special_dump(&regs, 10)], vec![]);
    let mut run = Run::new(&m);
    let buf = run.buffer(4 * 8 * 10);
    run.dispatch("k", Launch::linear(10, 4), &[buf]).unwrap();
    let w = run.read_words(buf, 80);
    for gid in 0..10u32 {
        let row = &w[gid as usize * 8..][..8];
        let group = gid / 4;
        let local_size = if group == 2 { 2 } else { 4 };
        assert_eq!(
            row,
            [group, gid % 4, local_size, 4, 3, 10, 1, gid % 4],
            "work-item {gid}"
        );
    }
}

#[test]
fn two_dimensional_launch_and_sub_group_lanes() {
    use SpecialReg::*;
    let regs = [
        (GroupId, Some(1)),
        (LocalId, Some(1)),
        (LocalSize, Some(0)),
        (LocalSize, Some(1)),
        (LaneId, None),
        (SubgroupSize, None),
        (GroupCount, Some(1)),
    ];
    // global 5 x 3, local 4 x 2: groups 2 x 2, the last ones partial in both dimensions.
    let launch = Launch {
        global_size: [5, 3, 1],
        local_size: [4, 2, 1],
        global_offset: [0; 3],
        work_dim: 2,
    };
    let m = module(vec![special_dump(&regs, 5)], vec![]);
    let mut run = Run::with_config(
        &m,
        Config {
            subgroup_size: 4,
            ..Config::default()
        },
    );
    let buf = run.buffer(4 * 7 * 15);
    run.dispatch("k", launch, &[buf]).unwrap();
    let w = run.read_words(buf, 7 * 15);
    for y in 0..3u32 {
        for x in 0..5u32 {
            let row = &w[((y * 5 + x) * 7) as usize..][..7];
            let (lx, ly) = (if x < 4 { 4 } else { 1 }, if y < 2 { 2 } else { 1 });
            // linear local id over this group's %localsize
            let linear = (x % 4) + (y % 2) * lx;
            assert_eq!(row, [y / 2, y % 2, lx, ly, linear % 4, 4, 2], "({x}, {y})");
        }
    }
}

#[test]
fn global_offset_is_reported() {
    use SpecialReg::*;
    let regs = [(GlobalOffset, Some(0)), (GlobalOffset, Some(1))];
    let launch = Launch {
        global_size: [2, 1, 1],
        local_size: [2, 1, 1],
        global_offset: [100, 7, 0],
        work_dim: 1,
    };
    let mut run = Run::new(&module(vec![special_dump(&regs, 2)], vec![]));
    let buf = run.buffer(16);
    run.dispatch("k", launch, &[buf]).unwrap();
    assert_eq!(run.read_words(buf, 4), vec![100, 7, 100, 7]);
}

/// Tree reduction of `lid + 1` over the work-group in shared memory, with barriers.
fn shared_reduction(items: u32) -> Function {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let s = k.local(MemSpace::Shared, 4 * items as u64, 4);
    let (lid, v, a, stride, pr, other, oa) = (
        k.reg(B32),
        k.reg(B32),
        k.reg(B32),
        k.reg(B32),
        k.reg(PRED),
        k.reg(B32),
        k.reg(B32),
    );
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(Opcode::Iadd, ty(T::B32), vec![r(v), r(lid), imm(1)]);
    k.i(
        Opcode::Addrof,
        ty(T::B32),
        vec![r(a), Operand::Var(VarRef::Local(s))],
    );
    k.i(Opcode::Umad, ty(T::B32), vec![r(a), r(lid), imm(4), r(a)]);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Shared),
        vec![at32(a), r(v)],
    );
    k.i(Opcode::Barrier, q(), vec![]);
    k.set(stride, items as u128 / 2);
    let (top, skip, end) = (k.label(), k.label(), k.label());
    k.bind(top);
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Eq),
        vec![p(pr), r(stride), imm(0)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(end)]);
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ge),
        vec![p(pr), r(lid), r(stride)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(skip)]);
    k.i(
        Opcode::Umad,
        ty(T::B32),
        vec![r(oa), r(stride), imm(4), r(a)],
    );
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Shared),
        vec![r(other), at32(oa)],
    );
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Shared),
        vec![r(v), at32(a)],
    );
    k.i(Opcode::Iadd, ty(T::B32), vec![r(v), r(v), r(other)]);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Shared),
        vec![at32(a), r(v)],
    );
    k.bind(skip);
    k.i(Opcode::Barrier, q(), vec![]);
    k.i(Opcode::Shr, ty(T::B32), vec![r(stride), r(stride), imm(1)]);
    k.i(Opcode::Goto, q(), vec![Operand::Label(top)]);
    k.bind(end);
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ne),
        vec![p(pr), r(lid), imm(0)],
    );
    k.i(Opcode::Return, q().cond(), vec![p(pr)]);
    let grp = k.reg(B32);
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(grp), special(SpecialReg::GroupId, Some(0))],
    );
    let off = k.reg(B64);
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(grp)],
    );
    k.i(Opcode::Shl, ty(T::B64), vec![r(off), r(off), imm(2)]);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(ptr), r(ptr), r(off)]);
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Shared),
        vec![r(v), at32(a)],
    );
    k.store(ptr, 0, v);
    k.build()
}

#[test]
fn barrier_and_shared_memory_reduction() {
    // 3 work-groups of 64 (2 sub-groups each): every group sums 1..=64 = 2080 in its own
    // shared memory.
    let mut run = Run::new(&module(vec![shared_reduction(64)], vec![]));
    let buf = run.buffer(12);
    run.dispatch("k", Launch::linear(192, 64), &[buf]).unwrap();
    assert_eq!(run.read_words(buf, 3), vec![2080, 2080, 2080]);
    // Sub-groups of 8 (8 per group) give the same result.
    let mut run = Run::with_config(
        &module(vec![shared_reduction(64)], vec![]),
        Config {
            subgroup_size: 8,
            ..Config::default()
        },
    );
    let buf = run.buffer(4);
    run.dispatch("k", Launch::linear(64, 64), &[buf]).unwrap();
    assert_eq!(run.read_words(buf, 1), vec![2080]);
}

#[test]
fn finished_work_items_do_not_block_a_barrier() {
    // Work-items 40.. return at once; the others store, wait at a barrier, then read the
    // neighbour's value (wrapping inside 0..40).
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let s = k.local(MemSpace::Shared, 4 * 64, 4);
    let (lid, a, pr, n, v) = (k.reg(B32), k.reg(B32), k.reg(PRED), k.reg(B32), k.reg(B32));
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ge),
        vec![p(pr), r(lid), imm(40)],
    );
    k.i(Opcode::Return, q().cond(), vec![p(pr)]);
    k.i(Opcode::Umul, ty(T::B32), vec![r(a), r(lid), imm(4)]);
    k.i(Opcode::Umul, ty(T::B32), vec![r(v), r(lid), imm(10)]);
    let base = |reg| addr(AddrBase::Var(VarRef::Local(s)), AddrOffset::Reg(reg), 32);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Shared),
        vec![base(a), r(v)],
    );
    k.i(Opcode::Barrier, q(), vec![]);
    k.i(Opcode::Iadd, ty(T::B32), vec![r(n), r(lid), imm(1)]);
    k.i(Opcode::Udiv, ty(T::B32).rem(), vec![r(n), r(n), imm(40)]);
    k.i(Opcode::Umul, ty(T::B32), vec![r(n), r(n), imm(4)]);
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Shared),
        vec![r(v), base(n)],
    );
    let off = k.reg(B64);
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(a)],
    );
    k.i(Opcode::Iadd, ty(T::B64), vec![r(ptr), r(ptr), r(off)]);
    k.store(ptr, 0, v);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(4 * 64);
    run.dispatch("k", Launch::linear(64, 64), &[buf]).unwrap();
    let w = run.read_words(buf, 64);
    for (i, &x) in w[..40].iter().enumerate() {
        assert_eq!(x, ((i as u32 + 1) % 40) * 10);
    }
    assert!(w[40..].iter().all(|&x| x == 0));
}

#[test]
fn different_barriers_are_reported() {
    let mut k = Fb::kernel("k");
    let (lid, pr) = (k.reg(B32), k.reg(PRED));
    let other = k.label();
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Lt),
        vec![p(pr), r(lid), imm(2)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(other)]);
    k.i(Opcode::Barrier, q(), vec![]);
    k.i(Opcode::Return, q(), vec![]);
    k.bind(other);
    k.i(Opcode::Barrier, q(), vec![]);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let e = run.dispatch("k", Launch::linear(4, 4), &[]).unwrap_err();
    assert!(matches!(e, Error::BarrierDivergence { .. }), "{e:?}");
}

#[test]
fn sub_groups_make_independent_progress() {
    // Sub-group 0 spins until sub-group 1 sets a shared flag: this needs the scheduler to
    // give sub-group 1 its turn while sub-group 0 is in its loop.
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let flag = k.local(MemSpace::Shared, 4, 4);
    let at = addr(AddrBase::Var(VarRef::Local(flag)), AddrOffset::None, 32);
    let (lid, pr, v) = (k.reg(B32), k.reg(PRED), k.reg(B32));
    let (spin, setter) = (k.label(), k.label());
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ge),
        vec![p(pr), r(lid), imm(32)],
    );
    k.i(
        Opcode::Goto,
        q().cond(),
        vec![p(pr), Operand::Label(setter)],
    );
    k.bind(spin);
    k.i(
        Opcode::Ld,
        ty(T::B32)
            .space(AddrSpace::Shared)
            .order(MemOrder::Acquire)
            .with(|q| q.scope = Some(MemScope::Workgroup)),
        vec![r(v), at],
    );
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Eq),
        vec![p(pr), r(v), imm(0)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(spin)]);
    k.store(ptr, 0, v);
    k.i(Opcode::Return, q(), vec![]);
    k.bind(setter);
    k.set(v, 5);
    k.i(
        Opcode::St,
        ty(T::B32)
            .space(AddrSpace::Shared)
            .order(MemOrder::Release)
            .with(|q| q.scope = Some(MemScope::Workgroup)),
        vec![at, r(v)],
    );
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let buf = run.buffer(4);
    run.dispatch("k", Launch::linear(64, 64), &[buf]).unwrap();
    assert_eq!(run.read_words(buf, 1), vec![5]);
}

#[test]
fn reqd_work_group_size_is_enforced() {
    let mut k = Fb::kernel("k");
    k.f.attrs.reqd_work_group_size = Some([8, 1, 1]);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    assert!(run.dispatch("k", Launch::linear(16, 8), &[]).is_ok());
    assert!(matches!(
        run.dispatch("k", Launch::linear(16, 4), &[]),
        Err(Error::InvalidLaunch { .. })
    ));
}
