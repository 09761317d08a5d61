//! Data movement (isa-4): `mov` (with swizzles), `sext zext trunc`, `extract insert` (static
//! and dynamic), and the address instructions `addrof addrcast isaddr` (generic address
//! representation: [`crate::memory`]).

use crate::bits::{mask, sext};
use crate::error::{undefined, unsupported, Result};
use crate::memory::{
    decode_generic, generic_from_global, generic_from_local, Generic, NULL32, PRIVATE_TAG,
    SHARED_TAG, TAG_MASK,
};
use crate::operand::LaneCtx;
use pisa_translator::ir::{AddrSpace, DataType, Inst, Opcode, Operand, RegType};

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    match inst.op {
        Opcode::Mov => {
            // dst[D_S, D_E] = src0[S_S, S_E]: the swizzles select the bit ranges; .type says
            // how many bytes move.
            let n = (ctx.ty(inst)?.bits() / 8) as usize;
            let bytes = ctx.read_bytes(ctx.op(inst, 1)?, n)?;
            ctx.write_bytes(ctx.op(inst, 0)?, &bytes)
        }
        Opcode::Sext | Opcode::Zext | Opcode::Trunc => {
            let (to, from) = conversion_types(ctx, inst)?;
            let widening = inst.op != Opcode::Trunc;
            if !is_int(to) || !is_int(from) || (to.bits() > from.bits()) != widening {
                return Err(unsupported(
                    ctx.span,
                    format!("{}.{}.{}", inst.op.as_str(), to.as_str(), from.as_str()),
                ));
            }
            let v = ctx.src(ctx.op(inst, 1)?, from.bits())?;
            let r = match inst.op {
                Opcode::Sext => sext(v, from.bits()) as u128 & mask(to.bits()),
                _ => v & mask(to.bits()),
            };
            ctx.write(ctx.op(inst, 0)?, r)
        }
        Opcode::Extract | Opcode::Insert => extract_insert(ctx, inst),
        Opcode::Addrof => {
            let v = ctx.read(ctx.op(inst, 1)?)?;
            ctx.write(ctx.op(inst, 0)?, v)
        }
        Opcode::Addrcast => addrcast(ctx, inst),
        Opcode::Isaddr => {
            let space = inst
                .q
                .space_to
                .or(inst.q.space)
                .ok_or_else(|| ctx.malformed("isaddr without a space"))?;
            let g = ctx.src(ctx.op(inst, 1)?, 64)? as u64;
            let tag = match space {
                AddrSpace::Global => 0,
                AddrSpace::Private => PRIVATE_TAG,
                AddrSpace::Shared => SHARED_TAG,
                _ => {
                    return Err(unsupported(
                        ctx.span,
                        "isaddr of a space other than .global, .private, .shared",
                    ))
                }
            };
            let r = if g & TAG_MASK == tag { mask(32) } else { 0 };
            ctx.write(ctx.op(inst, 0)?, r)
        }
        _ => Err(ctx.malformed("not a data movement instruction")),
    }
}

fn is_int(t: DataType) -> bool {
    matches!(
        t,
        DataType::B8 | DataType::B16 | DataType::B32 | DataType::B64
    )
}

fn conversion_types(ctx: &LaneCtx, inst: &Inst) -> Result<(DataType, DataType)> {
    match (inst.q.to, inst.q.from) {
        (Some(t), Some(f)) => Ok((t, f)),
        _ => Err(ctx.malformed(format!("{} without .to and .from", inst.op.as_str()))),
    }
}

/// `extract`/`insert`, with a static `.index` or `.dynamic`, of one element or of a
/// sub-vector of `.vec` elements.
fn extract_insert(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let q = &inst.q;
    let eb = (ctx.ty(inst)?.bits() / 8) as usize;
    let extract = inst.op == Opcode::Extract;
    // The vector operand: src0 of extract, dst of insert.
    let (vec_op, other) = if extract {
        (ctx.op(inst, 1)?, ctx.op(inst, 0)?)
    } else {
        (ctx.op(inst, 0)?, ctx.op(inst, 1)?)
    };
    let Operand::Reg { reg, swizzle: None } = *vec_op else {
        return Err(ctx.malformed("extract/insert needs a whole vector register"));
    };
    let RegType::Vector(bits, count) = ctx.reg_type(reg)? else {
        return Err(ctx.malformed("extract/insert on a register that is not a vector"));
    };
    if bits.bytes() as usize != eb {
        return Err(ctx.malformed("extract/insert element size differs from .type"));
    }
    let (index, elems) = if q.dynamic {
        let i = ctx.src(ctx.op(inst, 2)?, 32)?;
        (i, 1)
    } else {
        let i = q
            .index
            .ok_or_else(|| ctx.malformed("extract/insert without an index"))?
            as u128;
        // The sub-vector form has `.vec`; the scalar form has none.
        (i, q.vec.map_or(1, |v| v as usize))
    };
    if index + elems as u128 > count as u128 {
        return Err(undefined(
            ctx.span,
            format!(
                "{} index {index} out of bounds of a {count}-element vector",
                inst.op.as_str()
            ),
        ));
    }
    // Only the elements concerned are read or written (the initialization checker sees
    // exactly those bytes).
    let start = index as usize * eb;
    if extract {
        let part = ctx.read_reg_part(reg, start, elems * eb)?;
        ctx.write_bytes(other, &part)
    } else {
        let part = ctx.read_bytes(other, elems * eb)?;
        ctx.write_reg_part(reg, start, &part)
    }
}

/// `addrcast.to.from`: between a specific space and the generic one.
fn addrcast(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let (to, from) = match (inst.q.space_to, inst.q.space_from) {
        (Some(t), Some(f)) => (t, f),
        _ => return Err(ctx.malformed("addrcast without .to and .from")),
    };
    let src = ctx.op(inst, 1)?;
    if let Operand::Var(v) = *src {
        let (_, space) = ctx.var_address(v)?;
        if from.mem_space() != Some(space) {
            return Err(undefined(
                ctx.span,
                "addrcast of a variable from another address space",
            ));
        }
    }
    let r = match (to, from) {
        (AddrSpace::Generic, AddrSpace::Global | AddrSpace::Const) => {
            generic_from_global(ctx.src(src, 64)? as u64)
        }
        (AddrSpace::Generic, AddrSpace::Private | AddrSpace::Shared) => {
            generic_from_local(ctx.src(src, 32)? as u32, from == AddrSpace::Shared)
        }
        (AddrSpace::Global | AddrSpace::Private | AddrSpace::Shared, AddrSpace::Generic) => {
            let g = ctx.src(src, 64)? as u64;
            match (decode_generic(g), to) {
                (Generic::Null, AddrSpace::Global) => 0,
                (Generic::Null, _) => NULL32,
                (Generic::Global(a), AddrSpace::Global) => a,
                (Generic::Private(a), AddrSpace::Private)
                | (Generic::Shared(a), AddrSpace::Shared) => a as u64,
                _ => {
                    return Err(undefined(
                        ctx.span,
                        format!(
                            "addrcast of generic address {g:#x} to a space it does not point into"
                        ),
                    ))
                }
            }
        }
        _ => {
            return Err(unsupported(
                ctx.span,
                "addrcast between two specific address spaces",
            ))
        }
    };
    ctx.write(ctx.op(inst, 0)?, r as u128)
}
