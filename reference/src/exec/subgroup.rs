//! Sub-group communication (isa-7): `shfl ired fred redfirstidx`, executed for all the
//! work-items of a sub-group that execute the instruction together (`%activemask`).
//!
//! Every executing work-item's operands are read first, then every result is computed from
//! those values ("the values all lanes have before the instruction"), then written. A
//! work-item outside the participation mask (`mask & %activemask`) keeps its `dst`.

use crate::bits::{mask, pack, sext, unpack};
use crate::error::{undefined, Result};
use crate::lane::{Env, Lane};
use crate::memory::GlobalMemory;
use crate::operand::LaneCtx;
use crate::softfloat::{self as sf, Fmt, Mode};
use pisa_translator::ir::{AtomOp, DataType, Inst, Opcode, ShflOp};

use DataType as T;

/// What one executing work-item contributes.
struct Input {
    lane: u32,
    /// `src0`.
    value: u128,
    /// `src1` of `shfl`.
    control: u128,
    /// The participation mask operand, already and-ed with `%activemask`.
    participating: u32,
    /// The participation mask operand as written.
    raw: u32,
}

/// Executes a sub-group instruction for the work-items `executing` of `lanes`.
pub(crate) fn exec(
    env: &Env,
    lanes: &mut [Lane],
    executing: &[usize],
    shared: &mut Vec<u8>,
    global: &mut GlobalMemory,
    active_mask: u32,
    inst: &Inst,
) -> Result<()> {
    let mut inputs = Vec::with_capacity(executing.len());
    for &i in executing {
        let ctx = LaneCtx::new(
            env,
            &mut lanes[i],
            &mut *shared,
            &mut *global,
            active_mask,
            inst.span,
        );
        inputs.push(read_input(&ctx, inst)?);
    }
    if let Some(san) = env.san.filter(|s| s.borrow().opts.sync) {
        check_mask(lanes, executing, &inputs, active_mask, san);
    }
    let mut results = Vec::with_capacity(inputs.len());
    for input in &inputs {
        results.push(compute(inst, input, &inputs)?);
    }
    for (&i, r) in executing.iter().zip(results) {
        if let Some(v) = r {
            let mut ctx = LaneCtx::new(
                env,
                &mut lanes[i],
                &mut *shared,
                &mut *global,
                active_mask,
                inst.span,
            );
            let dst = ctx.op(inst, 0)?;
            ctx.write(dst, v)?;
        }
    }
    Ok(())
}

/// The barrier checker: a participation mask that names lanes of the sub-group (`lanes`)
/// that do not execute the instruction (not in `%activemask`). Lanes beyond the sub-group's
/// size do not exist and are not reported (a partial last sub-group with mask 0xffffffff).
fn check_mask(
    lanes: &[Lane],
    executing: &[usize],
    inputs: &[Input],
    active_mask: u32,
    san: &std::cell::RefCell<crate::sanitize::State>,
) {
    use crate::sanitize::{Check, Report, Target, Who};
    let exists = if lanes.len() >= 32 {
        u32::MAX
    } else {
        (1u32 << lanes.len()) - 1
    };
    let Some((pos, input)) = inputs
        .iter()
        .enumerate()
        .find(|(_, i)| i.raw & exists & !active_mask != 0)
    else {
        return;
    };
    let lane = &lanes[executing[pos]];
    let top = lane.top();
    let who = Who {
        item: lane.linear,
        local: lane.local_id,
        func: top.func.0,
        pc: top.pc as u32,
    };
    let absent = input.raw & exists & !active_mask;
    let mut state = san.borrow_mut();
    let missing = lanes
        .iter()
        .filter(|l| absent >> l.lane_id & 1 != 0)
        .map(|l| state.running_item(l.local_id))
        .collect();
    state.report((Check::Sync, (who.func, who.pc), (u32::MAX, 1)), |s| {
        Report {
            check: Check::Sync,
            message: format!(
                "sub-group operation with participation mask {:#010x} naming lanes that are not \
             active (%activemask {active_mask:#010x})",
                input.raw
            ),
            first: s.event(&who, None),
            second: None,
            target: Target::None,
            missing,
            count: 1,
        }
    });
}

fn check_type(ctx: &LaneCtx, inst: &Inst) -> Result<DataType> {
    let ty = ctx.ty(inst)?;
    let ok = match inst.op {
        Opcode::Shfl | Opcode::Redfirstidx => ty == T::B32,
        Opcode::Ired => matches!(ty, T::B16 | T::B32),
        _ => matches!(ty, T::Bf | T::Hf | T::F | T::Bfx2 | T::Hfx2),
    };
    if ok {
        Ok(ty)
    } else {
        Err(ctx.bad_type(inst, ty))
    }
}

fn read_input(ctx: &LaneCtx, inst: &Inst) -> Result<Input> {
    let ty = check_type(ctx, inst)?;
    let lane = ctx.lane.lane_id;
    let m = ctx.active_mask;
    Ok(match inst.op {
        Opcode::Redfirstidx => Input {
            lane,
            value: 0,
            control: 0,
            participating: ctx.src(ctx.op(inst, 1)?, 32)? as u32 & m,
            raw: ctx.src(ctx.op(inst, 1)?, 32)? as u32,
        },
        Opcode::Shfl => Input {
            lane,
            value: ctx.src(ctx.op(inst, 1)?, 32)?,
            control: ctx.src(ctx.op(inst, 2)?, 32)?,
            participating: ctx.src(ctx.op(inst, 3)?, 32)? as u32 & m,
            raw: ctx.src(ctx.op(inst, 3)?, 32)? as u32,
        },
        _ => Input {
            lane,
            value: ctx.src(ctx.op(inst, 1)?, ty.bits())?,
            control: 0,
            participating: ctx.src(ctx.op(inst, 2)?, 32)? as u32 & m,
            raw: ctx.src(ctx.op(inst, 2)?, 32)? as u32,
        },
    })
}

fn bit(mask: u32, lane: i64) -> bool {
    (0..32).contains(&lane) && mask >> lane & 1 != 0
}

/// The new `dst` of one work-item, or `None` when it does not participate.
fn compute(inst: &Inst, me: &Input, all: &[Input]) -> Result<Option<u128>> {
    if inst.op == Opcode::Redfirstidx {
        if me.participating == 0 {
            return Err(undefined(
                inst.span,
                "redfirstidx with no participating work-item (the specification's loop does not end)",
            ));
        }
        return Ok(Some(me.participating.trailing_zeros() as u128));
    }
    if !bit(me.participating, me.lane as i64) {
        return Ok(None);
    }
    let value_of = |lane: u32| all.iter().find(|i| i.lane == lane).map(|i| i.value);
    match inst.op {
        Opcode::Shfl => Ok(Some(shfl(inst, me, &value_of)?)),
        Opcode::Ired => {
            let ty = inst.q.ty.unwrap_or(T::B32);
            let op = inst
                .q
                .atom
                .ok_or_else(|| crate::error::malformed(inst.span, "ired without an operation"))?;
            let values: Vec<u128> = participants(me.participating, &value_of);
            Ok(Some(
                ired(op, ty.bits(), &values).ok_or_else(|| bad_op(inst))?,
            ))
        }
        _ => {
            let ty = inst.q.ty.unwrap_or(T::F);
            let op = inst
                .q
                .atom
                .ok_or_else(|| crate::error::malformed(inst.span, "fred without an operation"))?;
            let values: Vec<u128> = participants(me.participating, &value_of);
            Ok(Some(
                fred(op, ty, inst.q.nanp, &values).ok_or_else(|| bad_op(inst))?,
            ))
        }
    }
}

fn bad_op(inst: &Inst) -> crate::Error {
    crate::error::unsupported(inst.span, format!("{}.{:?}", inst.op.as_str(), inst.q.atom))
}

/// `src0` of every participating work-item, by ascending `%laneid`.
fn participants(mask: u32, value_of: &dyn Fn(u32) -> Option<u128>) -> Vec<u128> {
    (0..32)
        .filter(|&l| mask >> l & 1 != 0)
        .filter_map(value_of)
        .collect()
}

/// `shfl` exactly as its semantics block.
fn shfl(inst: &Inst, me: &Input, value_of: &dyn Fn(u32) -> Option<u128>) -> Result<u128> {
    let op = inst
        .q
        .shfl
        .ok_or_else(|| crate::error::malformed(inst.span, "shfl without an operation"))?;
    let src1 = me.control;
    let lane_id = me.lane as i64;
    let lane_offset = (src1 & 0x1F) as i64;
    let (cval, segmask) = if inst.q.sg {
        ((src1 >> 8 & 0x1F) as i64, (src1 >> 16 & 0x1F) as i64)
    } else {
        (if op == ShflOp::Up { 0 } else { 0x1F }, 0)
    };
    let clamp_lane = (lane_id & segmask) | (cval & !segmask);
    let min_lane = lane_id & segmask;
    let src_lane = match op {
        ShflOp::Up => lane_id - lane_offset,
        ShflOp::Dn => lane_id + lane_offset,
        ShflOp::Xor => lane_id ^ lane_offset,
        ShflOp::Idx => min_lane | (lane_offset & !segmask),
    };
    let in_bounds = if op == ShflOp::Up {
        src_lane >= clamp_lane
    } else {
        src_lane <= clamp_lane
    };
    if !in_bounds || !bit(me.participating, src_lane) {
        return Ok(me.value);
    }
    Ok(value_of(src_lane as u32).unwrap_or(me.value))
}

/// `ired`: the reduction of `values` (at least one) of `w` bits.
fn ired(op: AtomOp, w: u32, values: &[u128]) -> Option<u128> {
    let s = |v: u128| sext(v, w);
    let iabs = |v: u128| (s(v).unsigned_abs()) & mask(w);
    let first = *values.first()?;
    let fold = |f: &dyn Fn(u128, u128) -> u128| values[1..].iter().fold(first, |a, &b| f(a, b));
    Some(
        match op {
            AtomOp::Sum => fold(&|a, b| a.wrapping_add(b)),
            AtomOp::Smin => fold(&|a, b| if s(b) < s(a) { b } else { a }),
            AtomOp::Smax => fold(&|a, b| if s(b) > s(a) { b } else { a }),
            AtomOp::Umin => fold(&|a, b| a.min(b)),
            AtomOp::Umax => fold(&|a, b| a.max(b)),
            AtomOp::And => fold(&|a, b| a & b),
            AtomOp::Or => fold(&|a, b| a | b),
            AtomOp::Xor => fold(&|a, b| a ^ b),
            AtomOp::Absmax => values.iter().map(|&v| iabs(v)).max()?,
            _ => return None,
        } & mask(w),
    )
}

/// `fred`: the reduction of `values` (at least one), element-wise for packed types.
fn fred(op: AtomOp, ty: DataType, nanp: bool, values: &[u128]) -> Option<u128> {
    let fmt = Fmt::of(ty)?;
    let (w, n) = super::lanes_of(ty);
    let mode = Mode::default();
    let mut out = Vec::with_capacity(n as usize);
    for e in 0..n as usize {
        let mut elems = values.iter().map(|&v| unpack(v, w, n)[e] as u64);
        let prepare = |x: u64| {
            if op == AtomOp::Absmax {
                sf::abs(fmt, x, false)
            } else {
                x
            }
        };
        let first = prepare(elems.next()?);
        let r = elems.map(prepare).fold(first, |acc, x| match op {
            AtomOp::Min => sf::min_max(fmt, false, acc, x, nanp, mode),
            _ => sf::min_max(fmt, true, acc, x, nanp, mode),
        });
        if !matches!(op, AtomOp::Min | AtomOp::Max | AtomOp::Absmax) {
            return None;
        }
        out.push(if fmt.is_nan(r) { fmt.quiet(r) } else { r } as u128);
    }
    Some(pack(&out, w))
}
