//! Logic and shift (isa-3): `and asr bfi bfn bfrev cbit fbh fbl not or sbfe shr shl shf ubfe
//! xor`, each written as its semantics block.

use super::lanes_of;
use crate::bits::{field, mask, pack, sext, unpack};
use crate::error::{unsupported, Result};
use crate::operand::LaneCtx;
use pisa_translator::ir::{DataType, Inst, Opcode};

use DataType as T;

/// `src0 << shift` of a `w`-bit value; a shift of `w` or more gives 0.
fn shl(v: u128, shift: u32, w: u32) -> u128 {
    if shift >= w {
        0
    } else {
        (v << shift) & mask(w)
    }
}

/// `src0 >> shift` (logical) of a `w`-bit value; a shift of `w` or more gives 0.
fn shr(v: u128, shift: u32, w: u32) -> u128 {
    if shift >= w {
        0
    } else {
        v >> shift
    }
}

/// `src0 >> shift` (arithmetic) of a `w`-bit value; a shift of `w` or more fills with the
/// sign.
fn asr(v: u128, shift: u32, w: u32) -> u128 {
    ((sext(v, w) >> shift.min(w - 1)) as u128) & mask(w)
}

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<()> {
    let ty = ctx.ty(inst)?;
    let allowed: &[DataType] = match inst.op {
        Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not => &[T::B16, T::B32, T::B64],
        Opcode::Shl | Opcode::Shr | Opcode::Asr => &[T::B16, T::B32, T::B64, T::B16x2],
        Opcode::Cbit | Opcode::Fbh | Opcode::Fbl => &[T::B16, T::B32],
        _ => &[T::B32],
    };
    if !allowed.contains(&ty) {
        return Err(ctx.bad_type(inst, ty));
    }
    let (w, n) = lanes_of(ty);
    let bits = w * n;
    let src = |i: usize| -> Result<u128> { ctx.src(ctx.op(inst, i)?, bits) };
    let r = match inst.op {
        Opcode::And => src(1)? & src(2)?,
        Opcode::Or => src(1)? | src(2)?,
        Opcode::Xor => src(1)? ^ src(2)?,
        Opcode::Not => !src(1)? & mask(bits),
        Opcode::Shl | Opcode::Shr | Opcode::Asr => {
            let v = src(1)?;
            // src1 is a 32-bit operand whatever the type.
            let s1 = ctx.src(ctx.op(inst, 2)?, 32)?;
            let f = match inst.op {
                Opcode::Shl => shl,
                Opcode::Shr => shr,
                _ => asr,
            };
            if n == 2 {
                // .16bx2: shiftl = src1[5:0], shifth = src1[21:16]
                let e = unpack(v, w, 2);
                let (shiftl, shifth) = (field(s1, 0, 6) as u32, field(s1, 16, 6) as u32);
                pack(&[f(e[0], shiftl, w), f(e[1], shifth, w)], w)
            } else {
                f(v, field(s1, 0, 6) as u32, w)
            }
        }
        Opcode::Bfi => {
            let (src0, src1, src2, src3) = (src(1)?, src(2)?, src(3)?, src(4)?);
            let offset = field(src3, 0, 5) as u32;
            let width = (field(src2, 0, 6) as u32).min(w);
            let width = width.min(w - offset);
            let mask_w = if width < w {
                (1u128 << width) - 1
            } else {
                mask(w)
            };
            let m = (mask_w << offset) & mask(w);
            (src0 & !m) | ((src1 << offset) & m)
        }
        Opcode::Sbfe | Opcode::Ubfe => {
            let (src0, src1, src2) = (src(1)?, src(2)?, src(3)?);
            let offset = field(src2, 0, 5) as u32;
            let width = (field(src1, 0, 6) as u32).min(w);
            let lastpos = (offset + width).min(w);
            let width = lastpos - offset;
            if width == 0 {
                0
            } else {
                let shifted = (src0 << (w - lastpos)) & mask(w);
                if inst.op == Opcode::Sbfe {
                    asr(shifted, w - width, w)
                } else {
                    shifted >> (w - width)
                }
            }
        }
        Opcode::Bfn => {
            let op = inst
                .q
                .bfn
                .ok_or_else(|| ctx.malformed("bfn without an operation"))?;
            if op == 0x00 || op == 0xFF {
                return Err(unsupported(
                    ctx.span,
                    format!("bfn.{op:#04x} (an invalid operation in the Bfn table)"),
                ));
            }
            let (a, b, c) = (src(1)?, src(2)?, src(3)?);
            bfn(op, a, b, c, w)
        }
        Opcode::Bfrev => {
            let v = src(1)?;
            (0..w).fold(0, |acc, i| acc | (((v >> (w - i - 1)) & 1) << i))
        }
        Opcode::Cbit => src(1)?.count_ones() as u128,
        Opcode::Fbh | Opcode::Fbl => {
            let v = src(1)?;
            if v == 0 {
                !v & mask(w)
            } else if inst.op == Opcode::Fbh {
                (0..w).find(|&d| v & (1 << (w - 1 - d)) != 0).unwrap_or(w) as u128
            } else {
                (0..w).find(|&d| v & (1 << d) != 0).unwrap_or(w) as u128
            }
        }
        Opcode::Shf => {
            let (src0, src1, src2) = (src(1)?, src(2)?, src(3)?);
            let num = (src0 << 32) | src1;
            let shift = field(src2, 0, 5) as u32;
            if inst.q.shf_left {
                ((num << shift) & mask(64)) >> 32
            } else {
                (num >> shift) & mask(32)
            }
        }
        _ => return Err(ctx.malformed("not a logic instruction")),
    };
    ctx.write(ctx.op(inst, 0)?, r)
}

/// `bfn`: bit `i` of the result is bit `(c_i << 2 | b_i << 1 | a_i)` of `op`, the truth
/// table the operation encodes (`src0` = 0xaa, `src1` = 0xcc, `src2` = 0xf0).
fn bfn(op: u8, a: u128, b: u128, c: u128, w: u32) -> u128 {
    (0..w).fold(0, |acc, i| {
        let idx = ((a >> i) & 1) | ((b >> i) & 1) << 1 | ((c >> i) & 1) << 2;
        acc | (((op as u128 >> idx) & 1) << i)
    })
}
