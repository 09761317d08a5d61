//! Floating-point arithmetic (isa-2): `fabs fadd fcos fdiv fexp2 flog2 fmad fmax fmin fmul fneg
//! frc frcp frsqrt fsin fsqrt fsub ftanh`, scalar and packed (`.hfx2`, `.bfx2`), computed by
//! [`crate::softfloat`].

use super::lanes_of;
use crate::bits::{pack, unpack, MAX_PACKED};
use crate::error::Result;
use crate::operand::LaneCtx;
use crate::softfloat::{self as sf, Arith, Fmt, Func, Mode};
use pisa_translator::ir::{DataType, Inst, Opcode};

use DataType as T;

/// The types each form of `op` accepts (isa-2 syntax blocks).
fn allowed(op: Opcode, fast: bool, full: bool) -> &'static [DataType] {
    const ALL: &[DataType] = &[T::Bf, T::Hf, T::F, T::Df, T::Bfx2, T::Hfx2];
    const NO_DF: &[DataType] = &[T::Bf, T::Hf, T::F, T::Bfx2, T::Hfx2];
    const SCALAR: &[DataType] = &[T::Bf, T::Hf, T::F, T::Df];
    match op {
        Opcode::Fmul if full => &[T::Bf, T::Hf],
        Opcode::Fdiv if fast => SCALAR,
        Opcode::Fdiv => &[T::F, T::Df],
        Opcode::Fsqrt if fast => ALL,
        Opcode::Fsqrt => &[T::F, T::Df],
        Opcode::Frc => &[T::F],
        Opcode::Fcos
        | Opcode::Fsin
        | Opcode::Fexp2
        | Opcode::Flog2
        | Opcode::Ftanh
        | Opcode::Frcp => NO_DF,
        _ => ALL,
    }
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let ty = ctx.ty(inst)?;
    let fmt = Fmt::of(ty).ok_or_else(|| ctx.bad_type(inst, ty))?;
    if !allowed(inst.op, q.fast, q.full).contains(&ty) {
        return Err(ctx.bad_type(inst, ty));
    }
    let (w, n) = lanes_of(ty);
    let mode = Mode {
        rnd: q.rounding(),
        ftz: q.ftz,
        dsat: q.dsat,
    };
    let dst = ctx.op(inst, 0)?;
    if q.full {
        // fmul.full: the product of two .hf/.bf values as a .f value.
        let a = ctx.src(ctx.op(inst, 1)?, w)? as u64;
        let b = ctx.src(ctx.op(inst, 2)?, w)? as u64;
        let r = match inst.op {
            Opcode::Fmul => sf::mul_full(fmt, a, b, mode),
            _ => return Err(ctx.bad_type(inst, ty)),
        };
        return ctx.write(dst, r as u128);
    }
    let arity = match inst.op {
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fmax | Opcode::Fmin => {
            2
        }
        Opcode::Fmad => 3,
        _ => 1,
    };
    let mut srcs = [[0u128; MAX_PACKED]; 3];
    for (i, s) in srcs.iter_mut().enumerate().take(arity) {
        *s = unpack(ctx.src(ctx.op(inst, i + 1)?, w * n)?, w, n);
    }
    let mut out = [0u128; MAX_PACKED];
    for (e, o) in out.iter_mut().enumerate().take(n as usize) {
        let x = |i: usize| srcs[i][e] as u64;
        let r = match inst.op {
            Opcode::Fadd => sf::arith(fmt, Arith::Add, &[x(0), x(1)], mode),
            Opcode::Fsub => sf::arith(fmt, Arith::Sub, &[x(0), x(1)], mode),
            Opcode::Fmul => sf::arith(fmt, Arith::Mul, &[x(0), x(1)], mode),
            // `.fast` division and square root are correctly rounded to nearest.
            Opcode::Fdiv => sf::arith(fmt, Arith::Div, &[x(0), x(1)], mode),
            Opcode::Fmad => sf::arith(fmt, Arith::Fma, &[x(0), x(1), x(2)], mode),
            Opcode::Fmin => sf::min_max(fmt, false, x(0), x(1), q.nanp, mode),
            Opcode::Fmax => sf::min_max(fmt, true, x(0), x(1), q.nanp, mode),
            Opcode::Fabs => sf::abs(fmt, x(0), q.ftz),
            Opcode::Fneg => sf::neg(fmt, x(0), q.ftz),
            Opcode::Fsqrt => sf::sqrt(fmt, x(0), mode),
            Opcode::Frc => sf::fraction(fmt, x(0), q.ftz),
            Opcode::Frcp => sf::func(fmt, Func::Rcp, x(0), q.ftz),
            Opcode::Frsqrt => sf::func(fmt, Func::Rsqrt, x(0), q.ftz),
            Opcode::Fsin => sf::func(fmt, Func::Sin, x(0), q.ftz),
            Opcode::Fcos => sf::func(fmt, Func::Cos, x(0), q.ftz),
            Opcode::Fexp2 => sf::func(fmt, Func::Exp2, x(0), q.ftz),
            Opcode::Flog2 => sf::func(fmt, Func::Log2, x(0), q.ftz),
            Opcode::Ftanh => sf::func(fmt, Func::Tanh, x(0), q.ftz),
            _ => return Err(ctx.malformed("not a floating-point instruction")),
        };
        *o = r as u128;
    }
    ctx.write(dst, pack(&out[..n as usize], w))
}
