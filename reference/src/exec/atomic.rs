//! Atomics (isa-8): `iatom` and `fatom`, every operation and type of the specification's
//! tables, returning the old value. Work-items run one at a time, so each read-modify-write
//! is trivially atomic; memory orders and scopes need no action.
//!
//! `fatom.cas` compares bit patterns (as hardware compare-and-swap does), so a NaN can be
//! swapped and -0 does not match +0. `fatom.add/.sub` round to nearest even and keep
//! denormals; `fatom.min/.max` are `fmin`/`fmax` (minimumNumber/maximumNumber).

use crate::access::Access;
use crate::bits::{from_le, mask, sext, to_le};
use crate::error::{unsupported, Result};
use crate::operand::LaneCtx;
use crate::softfloat::{self as sf, Arith, Fmt, Mode};
use pisa_translator::ir::{AddrBase, AddrSpace, AtomOp, DataType, Inst, Opcode, Operand};
use pisa_translator::memcheck::AccessKind;

use AtomOp as A;

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let ty = ctx.ty(inst)?;
    let a = q
        .atom
        .ok_or_else(|| ctx.malformed("atomic without an operation"))?;
    let space = q.space.unwrap_or(AddrSpace::Generic);
    if !pisa_translator::isa::atomic_supported(inst.op, space, a, ty) {
        return Err(unsupported(
            ctx.span,
            format!(
                "{}.{:?}.{:?}.{} (not in the specification's table)",
                inst.op.as_str(),
                space,
                a,
                ty.as_str()
            ),
        ));
    }
    let w = ty.bits();
    let n = (w / 8) as usize;
    let Operand::Addr(addr) = ctx.op(inst, 1)? else {
        return Err(ctx.malformed("atomic without an address operand"));
    };
    let at = ctx.address(addr)?;
    let place = ctx.place(&Access {
        space,
        addr: at,
        len: n,
        align: n,
        kind: AccessKind::Atomic,
        var: match addr.base {
            AddrBase::Var(v) => Some(v),
            _ => None,
        },
    })?;
    if let Some(san) = ctx.env.san {
        let (who, order, scope) = (ctx.lane.linear, q.order, q.scope);
        // An atomic without an order is relaxed.
        let order = order.or(Some(pisa_translator::ir::MemOrder::Relaxed));
        san.borrow_mut().order(who, order, scope, true);
        let var = match addr.base {
            AddrBase::Var(v) => Some(v),
            _ => None,
        };
        // an exchange's new value does not depend on the old: a store for the initialization
        // checker (the old value it returns is not tracked)
        ctx.observe(place, n, true, true, a != A::Xchg, var);
        san.borrow_mut().order(who, order, scope, false);
    }
    let takes_src0 = !matches!(a, A::Inc | A::Dec);
    let src0 = if takes_src0 {
        ctx.src(ctx.op(inst, 2)?, w)?
    } else {
        0
    };
    let src1 = if a == A::Cas {
        ctx.src(ctx.op(inst, 3)?, w)?
    } else {
        0
    };
    let float = inst.op == Opcode::Fatom;
    let old = ctx.update(place, n, |old| {
        let old = from_le(old);
        let new = if float {
            float_op(ty, a, old, src0, src1)
        } else {
            int_op(a, w, old, src0, src1)
        };
        Ok(to_le(new, n))
    })?;
    ctx.write(ctx.op(inst, 0)?, from_le(&old))
}

/// The new value of an `iatom` (isa-8 semantics block).
fn int_op(a: AtomOp, w: u32, old: u128, src0: u128, src1: u128) -> u128 {
    let m = mask(w);
    let s = |v: u128| sext(v, w);
    let new = match a {
        A::Cas => {
            if old == src0 {
                src1
            } else {
                old
            }
        }
        A::Add => old.wrapping_add(src0),
        A::Sub => old.wrapping_sub(src0),
        A::Inc => old.wrapping_add(1),
        A::Dec => old.wrapping_sub(1),
        A::Incwrap => {
            if old >= src0 {
                0
            } else {
                old + 1
            }
        }
        A::Decwrap => {
            if old == 0 || old > src0 {
                src0
            } else {
                old - 1
            }
        }
        A::Smin => {
            if s(old) <= s(src0) {
                old
            } else {
                src0
            }
        }
        A::Smax => {
            if s(old) >= s(src0) {
                old
            } else {
                src0
            }
        }
        A::Umin => old.min(src0),
        A::Umax => old.max(src0),
        A::And => old & src0,
        A::Or => old | src0,
        A::Xor => old ^ src0,
        A::Xchg => src0,
        // Excluded by `supported`.
        A::Sum | A::Min | A::Max | A::Absmax => old,
    };
    new & m
}

/// The new value of an `fatom`.
fn float_op(ty: DataType, a: AtomOp, old: u128, src0: u128, src1: u128) -> u128 {
    let fmt = Fmt::of(ty).unwrap_or(Fmt::F);
    let (o, s0) = (old as u64, src0 as u64);
    let mode = Mode::default();
    (match a {
        A::Cas => {
            if old == src0 {
                src1 as u64
            } else {
                o
            }
        }
        A::Add => sf::arith(fmt, Arith::Add, &[o, s0], mode),
        A::Sub => sf::arith(fmt, Arith::Sub, &[o, s0], mode),
        A::Min => sf::min_max(fmt, false, o, s0, false, mode),
        A::Max => sf::min_max(fmt, true, o, s0, false, mode),
        _ => o,
    }) as u128
}
