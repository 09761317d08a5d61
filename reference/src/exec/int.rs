//! Integer arithmetic (isa-1): `dp4a iabs iadd ineg isub sdiv smad smax smin smul uaddc udiv
//! umad umax umin umul`, scalar and packed, with `.dsat` signed saturation and `.full`
//! widening.
//!
//! Every value is computed exactly in `i128`/`u128` and then wrapped or saturated to the
//! element width, so the code reads like the semantics blocks.

use super::lanes_of;
use crate::bits::{field, mask, pack, saturate_signed, sext, unpack, MAX_PACKED};
use crate::error::{undefined, Result};
use crate::operand::LaneCtx;
use pisa_translator::ir::{DataType, Inst, Opcode};

use DataType as T;

/// Applies `f(srcs of element i)` to every element of packed (or scalar) sources (at most
/// three sources).
fn elementwise(srcs: &[u128], w: u32, n: u32, f: impl Fn(&[u128]) -> Result<u128>) -> Result<u128> {
    if n == 1 {
        return Ok(f(srcs)? & mask(w));
    }
    let mut split = [[0u128; MAX_PACKED]; 3];
    for (s, &v) in split.iter_mut().zip(srcs) {
        *s = unpack(v, w, n);
    }
    let mut out = [0u128; MAX_PACKED];
    for (i, o) in out.iter_mut().enumerate().take(n as usize) {
        let args = [split[0][i], split[1][i], split[2][i]];
        *o = f(&args[..srcs.len().min(3)])?;
    }
    Ok(pack(&out[..n as usize], w))
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let ty = ctx.ty(inst)?;
    let (w, n) = lanes_of(ty);
    let total = w * n;
    let allowed: &[DataType] = match inst.op {
        Opcode::Dp4a | Opcode::Uaddc => &[T::B32],
        Opcode::Iadd | Opcode::Smax | Opcode::Smin => &[T::B16, T::B32, T::B64, T::B8x4, T::B16x2],
        Opcode::Isub | Opcode::Smad | Opcode::Smul | Opcode::Umax | Opcode::Umin => {
            &[T::B16, T::B32, T::B64, T::B16x2]
        }
        _ => &[T::B16, T::B32, T::B64],
    };
    if !allowed.contains(&ty) || (q.full && !matches!(ty, T::B16 | T::B32)) {
        return Err(ctx.bad_type(inst, ty));
    }
    let dst = ctx.op(inst, 0)?;
    // Source widths: `.full` forms take a double-width addend (`src2`).
    let src = |i: usize, bits: u32| -> Result<u128> { ctx.src(ctx.op(inst, i)?, bits) };
    let s = |v: u128| sext(v, w);
    let wrap = |v: i128| (v as u128) & mask(w);
    let sat_or_wrap = |v: i128| {
        if q.dsat {
            saturate_signed(v, w)
        } else {
            wrap(v)
        }
    };
    let span = ctx.span;
    let result = match inst.op {
        Opcode::Iadd => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(sat_or_wrap(s(a[0]) + s(a[1])))
        })?,
        Opcode::Isub => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(sat_or_wrap(s(a[0]) - s(a[1])))
        })?,
        Opcode::Ineg => wrap(-s(src(1, w)?)),
        Opcode::Iabs => wrap(s(src(1, w)?).abs()),
        Opcode::Smax => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(if s(a[0]) > s(a[1]) { a[0] } else { a[1] })
        })?,
        Opcode::Smin => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(if s(a[0]) < s(a[1]) { a[0] } else { a[1] })
        })?,
        Opcode::Umax => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(a[0].max(a[1]))
        })?,
        Opcode::Umin => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(a[0].min(a[1]))
        })?,
        Opcode::Smul | Opcode::Umul if q.full => {
            let (a, b) = (src(1, w)?, src(2, w)?);
            if inst.op == Opcode::Smul {
                (s(a) * s(b)) as u128 & mask(2 * w)
            } else {
                (a * b) & mask(2 * w)
            }
        }
        Opcode::Smul | Opcode::Umul => elementwise(&[src(1, total)?, src(2, total)?], w, n, |a| {
            Ok(wrap(s(a[0]).wrapping_mul(s(a[1]))))
        })?,
        Opcode::Smad | Opcode::Umad if q.full => {
            let (a, b, c) = (src(1, w)?, src(2, w)?, src(3, 2 * w)?);
            let product = if inst.op == Opcode::Smad {
                (s(a) * s(b)) as u128
            } else {
                a * b
            };
            product.wrapping_add(c) & mask(2 * w)
        }
        Opcode::Smad | Opcode::Umad => elementwise(
            &[src(1, total)?, src(2, total)?, src(3, total)?],
            w,
            n,
            |a| Ok(a[0].wrapping_mul(a[1]).wrapping_add(a[2]) & mask(w)),
        )?,
        Opcode::Sdiv | Opcode::Udiv => {
            let (a, b) = (src(1, w)?, src(2, w)?);
            if b == 0 {
                return Err(undefined(span, format!("{} by zero", inst.op.as_str())));
            }
            // Rust's `/` and `%` on i128 truncate toward zero and give the remainder the
            // sign of the dividend, as C does; INT_MIN / -1 = 2^(w-1) wraps to INT_MIN.
            match (inst.op, q.rem) {
                (Opcode::Sdiv, false) => wrap(s(a) / s(b)),
                (Opcode::Sdiv, true) => wrap(s(a) % s(b)),
                (_, false) => a / b,
                (_, true) => a % b,
            }
        }
        Opcode::Uaddc => return uaddc(ctx, inst),
        Opcode::Dp4a => dp4a(ctx, inst)?,
        _ => return Err(ctx.malformed("not an integer arithmetic instruction")),
    };
    ctx.write(dst, result)
}

/// `uaddc`: operands `dst, [carry-out,] src0, src1 [, carry-in]`.
fn uaddc(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let first_src = if q.co { 2 } else { 1 };
    let a = ctx.src(ctx.op(inst, first_src)?, 32)?;
    let b = ctx.src(ctx.op(inst, first_src + 1)?, 32)?;
    let cin = if q.ci {
        u128::from(ctx.pred(ctx.op(inst, first_src + 2)?)?)
    } else {
        0
    };
    let sum = a + b + cin;
    ctx.write(ctx.op(inst, 0)?, sum & mask(32))?;
    if q.co {
        ctx.write(ctx.op(inst, 1)?, u128::from(sum > mask(32)))?;
    }
    Ok(())
}

/// `dp4a`: `src0 + Σ src1[i] * src2[i]` over the four bytes. With `.dsat` the sum is
/// computed with `src0` signed and clamped to the signed 32-bit range (`.dsat` is only
/// allowed with a signed operand); without it, it wraps.
fn dp4a(ctx: &mut LaneCtx, inst: &Inst) -> Result<u128> {
    let sign = inst
        .q
        .signedness
        .ok_or_else(|| ctx.malformed("dp4a without signedness"))?;
    let src0 = ctx.src(ctx.op(inst, 1)?, 32)?;
    let src1 = ctx.src(ctx.op(inst, 2)?, 32)?;
    let src2 = ctx.src(ctx.op(inst, 3)?, 32)?;
    let byte = |v: u128, i: u32, signed: bool| -> i128 {
        let b = field(v, 8 * i, 8);
        if signed {
            sext(b, 8)
        } else {
            b as i128
        }
    };
    let dot: i128 = (0..4)
        .map(|i| byte(src1, i, sign.src1_signed) * byte(src2, i, sign.src2_signed))
        .sum();
    Ok(if inst.q.dsat {
        saturate_signed(sext(src0, 32) + dot, 32)
    } else {
        (src0 as i128 + dot) as u128 & mask(32)
    })
}
