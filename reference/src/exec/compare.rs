//! Comparison and selection (isa-5): `scmp ucmp fcmp` with a predicate or a 32-bit register
//! destination (`~0`/`0`), packed `ucmp.16bx2` and `fcmp.hfx2/.bfx2`, and `sel` with a
//! register or predicate selector.

use super::lanes_of;
use crate::bits::{mask, pack, sext, unpack, MAX_PACKED};
use crate::error::Result;
use crate::operand::LaneCtx;
use crate::softfloat::{self as sf, Fmt};
use pisa_translator::ir::{CmpOp, DataType, Inst, Opcode};

use DataType as T;

fn int_compare(op: CmpOp, a: i128, b: i128) -> bool {
    op.holds(a, b)
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let ty = ctx.ty(inst)?;
    let dst = ctx.op(inst, 0)?;
    if inst.op == Opcode::Sel {
        if !matches!(ty, T::B16 | T::B32 | T::B64) {
            return Err(ctx.bad_type(inst, ty));
        }
        let w = ty.bits();
        let (a, b) = (ctx.src(ctx.op(inst, 1)?, w)?, ctx.src(ctx.op(inst, 2)?, w)?);
        let selector = ctx.op(inst, 3)?;
        let take_a = if ctx.is_pred(selector)? {
            ctx.pred(selector)?
        } else {
            ctx.src(selector, w)? != 0
        };
        return ctx.write(dst, if take_a { a } else { b });
    }
    let cop = q
        .cop
        .ok_or_else(|| ctx.malformed("comparison without .cop"))?;
    let allowed: &[DataType] = match inst.op {
        Opcode::Scmp => &[T::B16, T::B32, T::B64],
        Opcode::Ucmp => &[T::B16, T::B32, T::B64, T::B16x2],
        _ => &[T::Bf, T::Hf, T::F, T::Df, T::Bfx2, T::Hfx2],
    };
    if !allowed.contains(&ty) {
        return Err(ctx.bad_type(inst, ty));
    }
    let (w, n) = lanes_of(ty);
    let a = unpack(ctx.src(ctx.op(inst, 1)?, w * n)?, w, n);
    let b = unpack(ctx.src(ctx.op(inst, 2)?, w * n)?, w, n);
    let test = |x: u128, y: u128| -> bool {
        match inst.op {
            Opcode::Scmp => int_compare(cop, sext(x, w), sext(y, w)),
            Opcode::Ucmp => int_compare(cop, x as i128, y as i128),
            _ => {
                let fmt = Fmt::of(ty).unwrap_or(Fmt::F);
                sf::compare(fmt, cop, x as u64, y as u64, q.ftz)
            }
        }
    };
    if n > 1 {
        // Packed: each element becomes ~0 or 0 of its width.
        let elems: [u128; MAX_PACKED] =
            std::array::from_fn(|i| if test(a[i], b[i]) { mask(w) } else { 0 });
        return ctx.write(dst, pack(&elems[..n as usize], w));
    }
    let result = test(a[0], b[0]);
    if ctx.is_pred(dst)? {
        ctx.write(dst, u128::from(result))
    } else {
        ctx.write(dst, if result { mask(32) } else { 0 })
    }
}
