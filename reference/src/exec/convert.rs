//! Conversions (isa-4): `f2i i2f fext ftrunc ftrunc2 frnd pf2i`, computed by
//! [`crate::softfloat`] with the rules of isa-4's tables.

use crate::bits::{pack, sext, unpack};
use crate::error::{unsupported, Result};
use crate::operand::LaneCtx;
use crate::softfloat::{self as sf, Fmt, Mode};
use pisa_translator::ir::{DataType, Inst, Opcode};

use DataType as T;

/// `(bits, signed)` of a conversion integer type (`.u8` ... `.s64`).
fn int_type(t: DataType) -> Option<(u32, bool)> {
    Some(match t {
        T::U8 => (8, false),
        T::S8 => (8, true),
        T::U16 => (16, false),
        T::S16 => (16, true),
        T::U32 => (32, false),
        T::S32 => (32, true),
        T::U64 => (64, false),
        T::S64 => (64, true),
        _ => return None,
    })
}

/// A scalar floating-point type.
fn float_type(t: DataType) -> Option<Fmt> {
    match t {
        T::Hf | T::Bf | T::F | T::Df => Fmt::of(t),
        _ => None,
    }
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let mode = Mode {
        rnd: q.rounding(),
        ftz: q.ftz,
        dsat: q.dsat,
    };
    let name = || {
        let t = |d: Option<DataType>| d.map_or(String::new(), |d| format!(".{}", d.as_str()));
        format!("{}{}{}{}", inst.op.as_str(), t(q.to), t(q.from), t(q.ty))
    };
    let bad = || {
        unsupported(
            ctx.span,
            format!("{} (not a form of the specification)", name()),
        )
    };
    let dst = ctx.op(inst, 0)?;
    let r: u128 = match inst.op {
        Opcode::Frnd => {
            let fmt = q.ty.and_then(float_type).ok_or_else(bad)?;
            let x = ctx.src(ctx.op(inst, 1)?, fmt.bits())? as u64;
            sf::round_integral(fmt, x, mode) as u128
        }
        Opcode::F2i => {
            let (bits, signed) = q.to.and_then(int_type).ok_or_else(bad)?;
            let from = q.from.and_then(float_type).ok_or_else(bad)?;
            let x = ctx.src(ctx.op(inst, 1)?, from.bits())? as u64;
            sf::to_int(from, x, q.rounding(), signed, bits)
        }
        Opcode::I2f => {
            let to = q.to.and_then(float_type).ok_or_else(bad)?;
            let (bits, signed) = q.from.and_then(int_type).ok_or_else(bad)?;
            let v = ctx.src(ctx.op(inst, 1)?, bits)?;
            let v = if signed { sext(v, bits) } else { v as i128 };
            sf::from_int(to, v, q.rounding(), q.dsat) as u128
        }
        Opcode::Fext => {
            let to = q.to.and_then(float_type).ok_or_else(bad)?;
            let from = q.from.and_then(float_type).ok_or_else(bad)?;
            if !matches!(to, Fmt::F | Fmt::Df) || from == Fmt::Df || to.bits() <= from.bits() {
                return Err(bad());
            }
            let x = ctx.src(ctx.op(inst, 1)?, from.bits())? as u64;
            sf::extend(from, to, x) as u128
        }
        Opcode::Ftrunc => {
            let to = q.to.and_then(float_type).ok_or_else(bad)?;
            let from = q.from.and_then(float_type).ok_or_else(bad)?;
            if to == Fmt::Df || !matches!(from, Fmt::F | Fmt::Df) || to.bits() >= from.bits() {
                return Err(bad());
            }
            let x = ctx.src(ctx.op(inst, 1)?, from.bits())? as u64;
            sf::truncate(from, to, x, mode) as u128
        }
        Opcode::Ftrunc2 => {
            let to = match q.to {
                Some(T::Hfx2) => Fmt::Hf,
                Some(T::Bfx2) => Fmt::Bf,
                _ => return Err(bad()),
            };
            let lo = ctx.src(ctx.op(inst, 1)?, 32)? as u64;
            let hi = ctx.src(ctx.op(inst, 2)?, 32)? as u64;
            let lo = sf::truncate(Fmt::F, to, lo, mode) as u128;
            let hi = sf::truncate(Fmt::F, to, hi, mode) as u128;
            pack(&[lo, hi], 16)
        }
        Opcode::Pf2i => {
            let signed = match q.to {
                Some(T::S16x2) => true,
                Some(T::U16x2) => false,
                _ => return Err(bad()),
            };
            let from = match q.from {
                Some(T::Hfx2) => Fmt::Hf,
                Some(T::Bfx2) => Fmt::Bf,
                _ => return Err(bad()),
            };
            let e = unpack(ctx.src(ctx.op(inst, 1)?, 32)?, 16, 2);
            let conv = |x: u128| sf::to_int(from, x as u64, q.rounding(), signed, 16);
            pack(&[conv(e[0]), conv(e[1])], 16)
        }
        _ => return Err(ctx.malformed("not a conversion instruction")),
    };
    ctx.write(dst, r)
}
