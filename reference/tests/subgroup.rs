//! Sub-group instructions (isa-7): `shfl` with the examples of the specification, `ired`,
//! `fred` and `redfirstidx` with participation masks and divergence.

mod common;
use common::*;
use pisa_reference::{Config, Error, Launch};

/// Runs `n` work-items (one work-group) whose body is built by `body(k, lid, out_slot)` and
/// returns one word per work-item.
fn run(
    n: u32,
    config: Config,
    body: impl FnOnce(&mut Fb, RegId, RegId),
) -> Result<Vec<u32>, Error> {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (lid, off, slot) = (k.reg(B32), k.reg(B64), k.reg(B64));
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(lid)],
    );
    k.i(Opcode::Shl, ty(T::B64), vec![r(off), r(off), imm(2)]);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(slot), r(ptr), r(off)]);
    body(&mut k, lid, slot);
    let mut run = Run::with_config(&module(vec![k.build()], vec![]), config);
    let buf = run.buffer(4 * n as u64);
    run.dispatch("k", Launch::linear(n as u64, n), &[buf])?;
    Ok(run.read_words(buf, n as usize))
}

fn st(k: &mut Fb, slot: RegId, v: RegId) {
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(slot), r(v)],
    );
}

/// `%a = 1000 + 10 * lane`
fn lane_value(k: &mut Fb, lid: RegId) -> RegId {
    let a = k.reg(B32);
    k.i(
        Opcode::Umad,
        ty(T::B32),
        vec![r(a), r(lid), imm(10), imm(1000)],
    );
    a
}

fn a(lane: u32) -> u32 {
    1000 + 10 * lane
}

fn shfl_q(op: ShflOp, sg: bool) -> Quals {
    ty(T::B32).with(|q| {
        q.shfl = Some(op);
        q.sg = sg
    })
}

/// Every work-item runs `shfl.op dst, %a, src1, src2` once, `dst` starting at 0xDEAD.
fn shfl_all(op: ShflOp, sg: bool, src1: u32, src2: u32) -> Vec<u32> {
    run(32, Config::default(), |k, lid, slot| {
        let (av, d) = (lane_value(k, lid), k.reg(B32));
        k.set(d, 0xDEAD);
        k.i(
            Opcode::Shfl,
            shfl_q(op, sg),
            vec![r(d), r(av), imm(src1 as u128), imm(src2 as u128)],
        );
        st(k, slot, d);
    })
    .unwrap()
}

#[test]
fn shfl_segment_example_with_clamp_value() {
    // isa-7: shfl.dn.sg.32b %r, %a, 0x00181d02, 0xffffffff (offset 2, cval 0b11101,
    // segmask 0b11000): in each 8-lane segment the first four lanes read two lanes down,
    // the last four are out of bounds and keep their own value.
    let w = shfl_all(ShflOp::Dn, true, 0x0018_1D02, 0xFFFF_FFFF);
    for lane in 0..32 {
        let expect = if lane % 8 < 4 { a(lane + 2) } else { a(lane) };
        assert_eq!(w[lane as usize], expect, "lane {lane}");
    }
}

#[test]
fn shfl_segment_example_without_clamp_value_follows_the_semantics_block() {
    // isa-7: shfl.dn.sg.32b %r, %a, 0x00180002, 0xffffffff (cval 0). The spec's diagram
    // shows the same shift as above with lanes 6, 7 of each segment out of bounds, but the
    // semantics block gives clampLane = segment base | (cval & ~segmask) = segment base, so
    // every source lane (lane + 2) is beyond the clamp and each lane keeps its own value.
    // The reference follows the semantics block (recorded as a spec conflict).
    let w = shfl_all(ShflOp::Dn, true, 0x0018_0002, 0xFFFF_FFFF);
    let own: Vec<u32> = (0..32).map(a).collect();
    assert_eq!(w, own);
    // cval 0b11111 in the same segments gives the diagram's picture.
    let w = shfl_all(ShflOp::Dn, true, 0x0018_1F02, 0xFFFF_FFFF);
    for lane in 0..32 {
        let expect = if lane % 8 < 6 { a(lane + 2) } else { a(lane) };
        assert_eq!(w[lane as usize], expect, "lane {lane}");
    }
}

#[test]
fn shfl_full_group_operations() {
    let w = shfl_all(ShflOp::Up, false, 1, 0xFFFF_FFFF);
    assert_eq!(w[0], a(0), "lane 0 is out of bounds: its own value");
    assert!((1..32).all(|l| w[l as usize] == a(l - 1)));
    let w = shfl_all(ShflOp::Dn, false, 3, 0xFFFF_FFFF);
    assert!((0..29).all(|l| w[l as usize] == a(l + 3)));
    assert!((29..32).all(|l| w[l as usize] == a(l)));
    let w = shfl_all(ShflOp::Xor, false, 16, 0xFFFF_FFFF);
    assert!((0..32).all(|l| w[l as usize] == a(l ^ 16)));
    let w = shfl_all(ShflOp::Idx, false, 5, 0xFFFF_FFFF);
    assert!(w.iter().all(|&x| x == a(5)), "broadcast of lane 5");
    // .sg idx: segments of 4 (segmask 0b11100), index 1 within each segment, cval 0b11111
    let w = shfl_all(ShflOp::Idx, true, 0x001C_1F01, 0xFFFF_FFFF);
    assert!((0..32).all(|l| w[l as usize] == a((l & !3) | 1)));
}

#[test]
fn shfl_participation_masks() {
    // isa-7 example: shfl.up.32b %dst, %src0, 1, 0xffff: lanes 0-15 participate; the others
    // keep their destination.
    let w = shfl_all(ShflOp::Up, false, 1, 0xFFFF);
    assert_eq!(w[0], a(0));
    assert!((1..16).all(|l| w[l as usize] == a(l - 1)));
    assert!(w[16..].iter().all(|&x| x == 0xDEAD));
    // Lane 2 does not participate: lane 3 reading it gets its own value.
    let w = shfl_all(ShflOp::Up, false, 1, !4);
    assert_eq!(w[2], 0xDEAD);
    assert_eq!(w[3], a(3));
    assert_eq!(w[4], a(3));
}

#[test]
fn shfl_under_divergence_sees_only_active_lanes() {
    // Lanes 0-15 run shfl.xor 16 in one branch, lanes 16-31 in the other: the partner is
    // never active, so everybody keeps its own value; shfl.xor 1 pairs inside each half.
    let w = run(32, Config::default(), |k, lid, slot| {
        let (av, d, e, pr) = (lane_value(k, lid), k.reg(B32), k.reg(B32), k.reg(PRED));
        let (hi, join) = (k.label(), k.label());
        k.i(
            Opcode::Ucmp,
            ty(T::B32).cop(CmpOp::Ge),
            vec![p(pr), r(lid), imm(16)],
        );
        k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(hi)]);
        k.i(
            Opcode::Shfl,
            shfl_q(ShflOp::Xor, false),
            vec![r(d), r(av), imm(16), imm(0xFFFF_FFFF)],
        );
        k.i(
            Opcode::Shfl,
            shfl_q(ShflOp::Xor, false),
            vec![r(e), r(av), imm(1), imm(0xFFFF_FFFF)],
        );
        k.i(Opcode::Goto, q(), vec![Operand::Label(join)]);
        k.bind(hi);
        k.i(
            Opcode::Shfl,
            shfl_q(ShflOp::Xor, false),
            vec![r(d), r(av), imm(16), imm(0xFFFF_FFFF)],
        );
        k.i(
            Opcode::Shfl,
            shfl_q(ShflOp::Xor, false),
            vec![r(e), r(av), imm(1), imm(0xFFFF_FFFF)],
        );
        k.bind(join);
        k.i(Opcode::Isub, ty(T::B32), vec![r(d), r(d), r(av)]);
        k.i(Opcode::Shl, ty(T::B32), vec![r(d), r(d), imm(16)]);
        k.i(Opcode::Or, ty(T::B32), vec![r(d), r(d), r(e)]);
        st(k, slot, d);
    })
    .unwrap();
    for l in 0..32 {
        assert_eq!(w[l as usize], a(l ^ 1), "lane {l}");
    }
}

#[test]
fn shfl_prefix_sum_example() {
    // isa-7's prefix-sum example over value = lane + 1. shfl.up copies a lane's own value
    // when out of bounds, so low lanes add themselves again: computed here step by step.
    let w = run(32, Config::default(), |k, lid, slot| {
        let (value, sum, tmp) = (k.reg(B32), k.reg(B32), k.reg(B32));
        k.i(Opcode::Iadd, ty(T::B32), vec![r(value), r(lid), imm(1)]);
        k.i(
            Opcode::Shfl,
            shfl_q(ShflOp::Up, false),
            vec![r(tmp), r(value), imm(1), imm(0xFFFF_FFFF)],
        );
        k.i(Opcode::Iadd, ty(T::B32), vec![r(sum), r(value), r(tmp)]);
        for s in [2, 4, 8, 16] {
            k.i(
                Opcode::Shfl,
                shfl_q(ShflOp::Up, false),
                vec![r(tmp), r(sum), imm(s), imm(0xFFFF_FFFF)],
            );
            k.i(Opcode::Iadd, ty(T::B32), vec![r(sum), r(sum), r(tmp)]);
        }
        k.i(Opcode::Isub, ty(T::B32), vec![r(sum), r(sum), r(value)]);
        st(k, slot, sum);
    })
    .unwrap();
    let value: Vec<u32> = (1..=32).collect();
    let mut tmp: Vec<u32> = (0..32)
        .map(|l| if l >= 1 { value[l - 1] } else { value[l] })
        .collect();
    let mut sum: Vec<u32> = (0..32).map(|l| value[l] + tmp[l]).collect();
    for s in [2, 4, 8, 16] {
        tmp = (0..32)
            .map(|l| if l >= s { sum[l - s] } else { sum[l] })
            .collect();
        sum = (0..32).map(|l| sum[l] + tmp[l]).collect();
    }
    let expect: Vec<u32> = (0..32).map(|l| sum[l] - value[l]).collect();
    assert_eq!(w, expect);
    // For lanes that never went out of bounds this is the exclusive prefix sum.
    assert_eq!(w[31], (1..=31).sum::<u32>());
}

#[test]
fn shfl_uniformity_check_example() {
    // isa-7's example: flag = (shfl.up(expr, 1) != expr) ? 0 : 1, summed with a xor butterfly.
    let check = |uniform: bool| {
        run(32, Config::default(), |k, lid, slot| {
            let expr = k.reg(B32);
            if uniform {
                k.set(expr, 42);
            } else {
                k.i(Opcode::Mov, ty(T::B32), vec![r(expr), r(lid)]);
            }
            let (r1, flag, pr) = (k.reg(B32), k.reg(B32), k.reg(PRED));
            k.i(
                Opcode::Shfl,
                shfl_q(ShflOp::Up, false),
                vec![r(r1), r(expr), imm(1), imm(0xFFFF_FFFF)],
            );
            k.i(
                Opcode::Ucmp,
                ty(T::B32).cop(CmpOp::Ne),
                vec![p(pr), r(r1), r(expr)],
            );
            k.i(
                Opcode::Sel,
                ty(T::B32),
                vec![r(flag), imm(0), imm(1), p(pr)],
            );
            let mut acc = flag;
            for s in [16, 8, 4, 2, 1] {
                let (t, n) = (k.reg(B32), k.reg(B32));
                k.i(
                    Opcode::Shfl,
                    shfl_q(ShflOp::Xor, false),
                    vec![r(t), r(acc), imm(s), imm(0xFFFF_FFFF)],
                );
                k.i(Opcode::Iadd, ty(T::B32), vec![r(n), r(t), r(acc)]);
                acc = n;
            }
            st(k, slot, acc);
        })
        .unwrap()
    };
    assert!(check(true).iter().all(|&x| x == 32));
    // only lane 0 (out of bounds: compares with itself) has flag 1
    assert!(check(false).iter().all(|&x| x == 1));
}

fn ired_q(op: AtomOp, t: DataType) -> Quals {
    ty(t).atom(op)
}

/// Every work-item runs `ired.op dst, %v, mask` with `%v = values[lane]`, `dst` at 0xDEAD.
fn ired_all(op: AtomOp, values: &[u32], mask: u32) -> Vec<u32> {
    let n = values.len() as u32;
    let vals = values.to_vec();
    run(n, Config::default(), move |k, lid, slot| {
        let (v, d) = (k.reg(B32), k.reg(B32));
        // v = values[lid], via a chain of selects on the lane id
        k.set(v, 0);
        for (i, &x) in vals.iter().enumerate() {
            let pr = k.reg(PRED);
            k.i(
                Opcode::Ucmp,
                ty(T::B32).cop(CmpOp::Eq),
                vec![p(pr), r(lid), imm(i as u128)],
            );
            k.i(
                Opcode::Sel,
                ty(T::B32),
                vec![r(v), imm(x as u128), r(v), p(pr)],
            );
        }
        k.set(d, 0xDEAD);
        k.i(
            Opcode::Ired,
            ired_q(op, T::B32),
            vec![r(d), r(v), imm(mask as u128)],
        );
        st(k, slot, d);
    })
    .unwrap()
}

#[test]
fn ired_operations() {
    let lanes: Vec<u32> = (0..32).collect();
    assert!(ired_all(AtomOp::Sum, &lanes, 0xFFFF_FFFF)
        .iter()
        .all(|&x| x == 496));
    let signed: Vec<u32> = (0..32).map(|l| (l - 16i32) as u32).collect();
    assert!(ired_all(AtomOp::Smin, &signed, !0)
        .iter()
        .all(|&x| x == (-16i32) as u32));
    assert!(ired_all(AtomOp::Smax, &signed, !0).iter().all(|&x| x == 15));
    assert!(ired_all(AtomOp::Umin, &signed, !0).iter().all(|&x| x == 0));
    assert!(ired_all(AtomOp::Umax, &signed, !0)
        .iter()
        .all(|&x| x == 0xFFFF_FFFF));
    let bits: Vec<u32> = (0..32).map(|l| 1 << l | 1).collect();
    assert!(ired_all(AtomOp::And, &bits, !0).iter().all(|&x| x == 1));
    assert!(ired_all(AtomOp::Or, &bits, !0)
        .iter()
        .all(|&x| x == 0xFFFF_FFFF));
    assert!(ired_all(AtomOp::Xor, &bits, !0)
        .iter()
        .all(|&x| x == 0xFFFF_FFFE));
    // absmax: |-7| = 7 beats 5; INT_MIN counts as the largest value
    let mut vals = vec![5u32, (-7i32) as u32, 3];
    assert!(ired_all(AtomOp::Absmax, &vals, !0).iter().all(|&x| x == 7));
    vals.push(0x8000_0000);
    assert!(ired_all(AtomOp::Absmax, &vals, !0)
        .iter()
        .all(|&x| x == 0x8000_0000));
}

#[test]
fn ired_mask_limits_participants() {
    let lanes: Vec<u32> = (0..32).collect();
    let w = ired_all(AtomOp::Sum, &lanes, 0xFFFF);
    assert!(w[..16].iter().all(|&x| x == 120));
    assert!(w[16..].iter().all(|&x| x == 0xDEAD));
    let w = ired_all(AtomOp::Umax, &lanes, 0x0000_00F0);
    assert!(w[4..8].iter().all(|&x| x == 7));
    assert_eq!(w[3], 0xDEAD);
}

#[test]
fn ired_with_divergence_reduces_over_the_active_lanes() {
    // Even lanes reduce in one branch, odd lanes in the other.
    let w = run(32, Config::default(), |k, lid, slot| {
        let (odd, pr, d) = (k.reg(B32), k.reg(PRED), k.reg(B32));
        let (other, join) = (k.label(), k.label());
        k.i(Opcode::And, ty(T::B32), vec![r(odd), r(lid), imm(1)]);
        k.i(
            Opcode::Ucmp,
            ty(T::B32).cop(CmpOp::Ne),
            vec![p(pr), r(odd), imm(0)],
        );
        k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(other)]);
        k.i(
            Opcode::Ired,
            ired_q(AtomOp::Sum, T::B32),
            vec![r(d), r(lid), imm(0xFFFF_FFFF)],
        );
        k.i(Opcode::Goto, q(), vec![Operand::Label(join)]);
        k.bind(other);
        k.i(
            Opcode::Ired,
            ired_q(AtomOp::Sum, T::B32),
            vec![r(d), r(lid), imm(0xFFFF_FFFF)],
        );
        k.bind(join);
        st(k, slot, d);
    })
    .unwrap();
    for (l, &x) in w.iter().enumerate() {
        assert_eq!(x, if l % 2 == 0 { 240 } else { 256 }, "lane {l}");
    }
}

#[test]
fn ired_16_bit_wraps() {
    let w = run(32, Config::default(), |k, _, slot| {
        let (v, d, wide) = (k.reg(B16), k.reg(B16), k.reg(B32));
        k.set(v, 0x8001);
        k.i(
            Opcode::Ired,
            ired_q(AtomOp::Sum, T::B16),
            vec![r(d), r(v), imm(0xFFFF_FFFF)],
        );
        k.i(
            Opcode::Zext,
            q().to(T::B32).from(T::B16),
            vec![r(wide), r(d)],
        );
        st(k, slot, wide);
    })
    .unwrap();
    assert!(w.iter().all(|&x| x == 32), "32 * 0x8001 mod 2^16 = 32");
}

#[test]
fn sub_group_size_comes_from_the_config() {
    let w = run(
        32,
        Config {
            subgroup_size: 8,
            ..Config::default()
        },
        |k, lid, slot| {
            let (d, sz, lane) = (k.reg(B32), k.reg(B32), k.reg(B32));
            k.i(
                Opcode::Ired,
                ired_q(AtomOp::Sum, T::B32),
                vec![r(d), r(lid), imm(0xFFFF_FFFF)],
            );
            k.i(
                Opcode::Mov,
                ty(T::B32),
                vec![r(sz), special(SpecialReg::SubgroupSize, None)],
            );
            k.i(
                Opcode::Mov,
                ty(T::B32),
                vec![r(lane), special(SpecialReg::LaneId, None)],
            );
            k.i(
                Opcode::Umad,
                ty(T::B32),
                vec![r(d), r(sz), imm(1 << 16), r(d)],
            );
            k.i(
                Opcode::Umad,
                ty(T::B32),
                vec![r(d), r(lane), imm(1 << 24), r(d)],
            );
            st(k, slot, d);
        },
    )
    .unwrap();
    for l in 0..32u32 {
        let group = l / 8;
        let sum: u32 = (group * 8..group * 8 + 8).sum();
        assert_eq!(
            w[l as usize],
            sum | 8 << 16 | (l % 8) << 24,
            "work-item {l}"
        );
    }
}

/// Every work-item runs `fred.op<.nanp>.f dst, %v, mask` with `%v = values[lane]`.
fn fred_all(op: AtomOp, nanp: bool, values: &[u32], mask: u32) -> Vec<u32> {
    let n = values.len() as u32;
    let vals = values.to_vec();
    run(n, Config::default(), move |k, lid, slot| {
        let (v, d) = (k.reg(B32), k.reg(B32));
        for (i, &x) in vals.iter().enumerate() {
            let pr = k.reg(PRED);
            k.i(
                Opcode::Ucmp,
                ty(T::B32).cop(CmpOp::Eq),
                vec![p(pr), r(lid), imm(i as u128)],
            );
            k.i(
                Opcode::Sel,
                ty(T::B32),
                vec![r(v), imm(x as u128), r(v), p(pr)],
            );
        }
        let mut qq = ty(T::F).atom(op);
        if nanp {
            qq = qq.nanp();
        }
        k.i(Opcode::Fred, qq, vec![r(d), r(v), imm(mask as u128)]);
        st(k, slot, d);
    })
    .unwrap()
}

#[test]
fn fred_operations_and_nan_rules() {
    let f = |x: f32| x.to_bits();
    let vals = [f(1.5), f(-2.0), 0x7FC0_0001, f(7.25), f(-9.5)];
    assert!(
        fred_all(AtomOp::Max, false, &vals, !0)
            .iter()
            .all(|&x| x == f(7.25)),
        "NaN ignored"
    );
    assert!(fred_all(AtomOp::Min, false, &vals, !0)
        .iter()
        .all(|&x| x == f(-9.5)));
    assert!(fred_all(AtomOp::Absmax, false, &vals, !0)
        .iter()
        .all(|&x| x == f(9.5)));
    assert!(
        fred_all(AtomOp::Max, true, &vals, !0)
            .iter()
            .all(|&x| x == 0x7FC0_0001),
        ".nanp propagates"
    );
    let nans = [0x7F80_0001, 0xFFC0_0002];
    assert!(
        fred_all(AtomOp::Min, false, &nans, !0)
            .iter()
            .all(|&x| x == 0x7FC0_0001),
        "all NaN: a quiet NaN"
    );
    let one_snan = [0x7F80_0001];
    assert!(fred_all(AtomOp::Max, false, &one_snan, !0)
        .iter()
        .all(|&x| x == 0x7FC0_0001));
    let zeros = [0, 0x8000_0000];
    assert!(fred_all(AtomOp::Min, false, &zeros, !0)
        .iter()
        .all(|&x| x == 0x8000_0000));
    assert!(fred_all(AtomOp::Max, false, &zeros, !0)
        .iter()
        .all(|&x| x == 0));
    // mask 0b10011: lanes 0, 1, 4
    let w = fred_all(AtomOp::Max, false, &vals, 0b10011);
    assert_eq!(w, vec![f(1.5), f(1.5), 0, 0, f(1.5)]);
}

#[test]
fn fred_packed_half() {
    let w = run(4, Config::default(), |k, lid, slot| {
        // element 0 = lane, element 1 = -lane (as .hf): max gives (3.0, -0.0)
        let (x, v, d) = (k.reg(B32), k.reg(V2B16), k.reg(V2B16));
        let (h, hn) = (k.reg(B16), k.reg(B16));
        k.i(Opcode::I2f, q().to(T::Hf).from(T::U32), vec![r(h), r(lid)]);
        k.i(Opcode::Fneg, ty(T::Hf), vec![r(hn), r(h)]);
        k.i(Opcode::Mov, ty(T::B16), vec![sw(v, Swizzle::X), r(h)]);
        k.i(Opcode::Mov, ty(T::B16), vec![sw(v, Swizzle::Y), r(hn)]);
        k.i(
            Opcode::Fred,
            ty(T::Hfx2).atom(AtomOp::Max),
            vec![r(d), r(v), imm(0xF)],
        );
        k.i(Opcode::Mov, ty(T::B32), vec![r(x), sw(d, Swizzle::XY)]);
        st(k, slot, x);
    })
    .unwrap();
    assert!(w.iter().all(|&x| x == 0x8000_4200), "{w:x?}");
}

#[test]
fn redfirstidx_finds_the_first_participant() {
    let first = |mask: u32, from: u32| {
        run(32, Config::default(), move |k, lid, slot| {
            let (d, pr) = (k.reg(B32), k.reg(PRED));
            let skip = k.label();
            k.set(d, 0xDEAD);
            k.i(
                Opcode::Ucmp,
                ty(T::B32).cop(CmpOp::Lt),
                vec![p(pr), r(lid), imm(from as u128)],
            );
            k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(skip)]);
            k.i(
                Opcode::Redfirstidx,
                ty(T::B32),
                vec![r(d), imm(mask as u128)],
            );
            k.bind(skip);
            st(k, slot, d);
        })
    };
    let w = first(0xFFFF, 0).unwrap();
    assert!(w.iter().all(|&x| x == 0));
    let w = first(0xFFFF_FFFF, 16).unwrap();
    assert!(w[..16].iter().all(|&x| x == 0xDEAD));
    assert!(
        w[16..].iter().all(|&x| x == 16),
        "only lanes 16-31 are active"
    );
    let w = first(0x00F0, 0).unwrap();
    assert!(w.iter().all(|&x| x == 4));
    let e = first(0xFFFF, 16).unwrap_err();
    assert!(
        matches!(e, Error::UndefinedBehavior { .. }),
        "no participant: {e:?}"
    );
}
