//! Loads and stores (isa-8): `ld` and `st` in every address space, scalar and vector,
//! non-atomic and atomic (an atomic access is a plain access here: work-items run one at a
//! time), and `ld.param` from the kernel argument block.
//!
//! Alignment (prog-5): an access must be aligned to the size of `.type`, or, when `.type` is
//! narrower than 32 bits, to the whole access size (element size times `.vec`). A misaligned
//! access is undefined behaviour and reported as such; `ld.param` is not checked (the
//! argument block has no addresses).

use crate::access::Access;
use crate::error::Result;
use crate::operand::LaneCtx;
use pisa_translator::ir::{AddrBase, AddrSpace, Inst, Opcode, Operand};
use pisa_translator::memcheck::AccessKind;

/// Bytes of `.type`, bytes of the whole access, and the alignment it needs.
fn sizes(ctx: &LaneCtx, inst: &Inst) -> Result<(usize, usize, usize)> {
    let ty = ctx.ty(inst)?;
    if ty.is_float() || ty.packed().is_some() {
        return Err(ctx.bad_type(inst, ty));
    }
    let elem = (ty.bits() / 8) as usize;
    let count = inst.q.vec.map_or(1, |v| v as usize);
    let total = elem * count;
    let align = if ty.bits() < 32 { total } else { elem };
    Ok((elem, total, align))
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let (_, total, align) = sizes(ctx, inst)?;
    let atomic = inst
        .q
        .order
        .is_some_and(|o| o != pisa_translator::ir::MemOrder::Weak);
    let space = inst.q.space.unwrap_or(AddrSpace::Generic);
    let (addr_op, data_op) = match inst.op {
        Opcode::Ld => (ctx.op(inst, 1)?, ctx.op(inst, 0)?),
        _ => (ctx.op(inst, 0)?, ctx.op(inst, 1)?),
    };
    let Operand::Addr(a) = addr_op else {
        return Err(ctx.malformed("memory instruction without an address operand"));
    };
    if space == AddrSpace::Param || matches!(a.base, AddrBase::Param(_)) {
        return ld_param(ctx, inst, total);
    }
    let addr = ctx.address(a)?;
    let kind = match (atomic, inst.op) {
        (true, _) => AccessKind::Atomic,
        (false, Opcode::Ld) => AccessKind::Load,
        _ => AccessKind::Store,
    };
    let place = ctx.place(&Access {
        space,
        addr,
        len: total,
        align,
        kind,
        var: match a.base {
            AddrBase::Var(v) => Some(v),
            _ => None,
        },
    })?;
    if ctx.env.san.is_some() {
        let var = match a.base {
            AddrBase::Var(v) => Some(v),
            _ => None,
        };
        let who = ctx.lane.linear;
        let write = inst.op != Opcode::Ld;
        let order = |ctx: &LaneCtx, before: bool| {
            if let (true, Some(san)) = (atomic, ctx.env.san) {
                san.borrow_mut()
                    .order(who, inst.q.order, inst.q.scope, before);
            }
        };
        order(ctx, true);
        ctx.observe(place, total, write, atomic, !write, var);
        order(ctx, false);
    }
    match inst.op {
        Opcode::Ld => {
            let bytes = ctx.load(place, total)?;
            ctx.write_bytes(data_op, &bytes)
        }
        _ => {
            let bytes = ctx.read_bytes(data_op, total)?;
            ctx.store(place, &bytes)
        }
    }
}

/// `ld.param [%p + off]`: bytes of the argument block at the parameter's offset plus `off`,
/// which must stay inside that parameter.
fn ld_param(ctx: &mut LaneCtx, inst: &Inst, total: usize) -> Result<()> {
    let Some(Operand::Addr(a)) = inst.ops.get(1) else {
        return Err(ctx.malformed("ld.param without an address"));
    };
    let AddrBase::Param(p) = a.base else {
        return Err(ctx.malformed("ld.param of something other than a parameter"));
    };
    if inst.op != Opcode::Ld {
        return Err(ctx.malformed("a store to a kernel parameter"));
    }
    let (start, size) = ctx.param(p)?;
    let at = ctx.address(a)?;
    let rel = at.wrapping_sub(start) & 0xFFFF_FFFF;
    let rel = rel as u32 as i32 as i64;
    if rel < 0 || rel as u64 + total as u64 > size {
        return Err(crate::Error::OutOfBounds {
            addr: at,
            len: total as u64,
            at: ctx.span,
        });
    }
    let begin = (start as i64 + rel) as usize;
    let bytes = ctx
        .env
        .args
        .get(begin..begin + total)
        .ok_or(crate::Error::OutOfBounds {
            addr: at,
            len: total as u64,
            at: ctx.span,
        })?
        .to_vec();
    ctx.write_bytes(ctx.op(inst, 0)?, &bytes)
}
