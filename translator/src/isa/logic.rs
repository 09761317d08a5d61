//! isa-3: logic and shift.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, req, src, Form, InstrDef, OperandRule, Slot, Values, Q};
use crate::ir::Opcode;

const R: OperandRule = dst(Reg, Type);
const S0: OperandRule = src("src0", RegImm, Type);
const S1: OperandRule = src("src1", RegImm, Type);
const SH: OperandRule = src("src1", RegImm, Bits(32));
const D32: OperandRule = dst(Reg, Bits(32));
const fn s32(role: &'static str) -> OperandRule {
    src(role, RegImm, Bits(32))
}

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

const BITWISE: &[Form] = &[form("default", &[req("type", I16_64)], &[R, S0, S1])];

/// `and.type dst, src0, src1`
pub const AND: InstrDef = def(Opcode::And, BITWISE);
/// `or.type dst, src0, src1`
pub const OR: InstrDef = def(Opcode::Or, BITWISE);
/// `xor.type dst, src0, src1`
pub const XOR: InstrDef = def(Opcode::Xor, BITWISE);
/// `not.type dst, src0`
pub const NOT: InstrDef = def(
    Opcode::Not,
    &[form("default", &[req("type", I16_64)], &[R, S0])],
);

const SHIFT: &[Form] = &[
    form("default", &[req("type", I16_64)], &[R, S0, SH]),
    form(
        "packed",
        &[req("type", PI16)],
        &[dst(Packed, Type), src("src0", Packed, Type), SH],
    ),
];

/// `asr.type dst, src0, src1`, and packed.
pub const ASR: InstrDef = def(Opcode::Asr, SHIFT);
/// `shr.type dst, src0, src1`, and packed.
pub const SHR: InstrDef = def(Opcode::Shr, SHIFT);
/// `shl.type dst, src0, src1`, and packed.
pub const SHL: InstrDef = def(Opcode::Shl, SHIFT);

/// `bfi.type dst, src0, src1, src2, src3`
pub const BFI: InstrDef = def(
    Opcode::Bfi,
    &[form(
        "default",
        &[req("type", I32)],
        &[D32, s32("src0"), s32("src1"), s32("src2"), s32("src3")],
    )],
);

/// `bfn.operation.type dst, src0, src1, src2`
pub const BFN: InstrDef = def(
    Opcode::Bfn,
    &[form(
        "default",
        &[
            Slot {
                name: "operation",
                required: true,
                values: Values::BfnOp,
            },
            req("type", I32),
        ],
        &[D32, s32("src0"), s32("src1"), s32("src2")],
    )],
);

/// `bfrev.type dst, src0`
pub const BFREV: InstrDef = def(
    Opcode::Bfrev,
    &[form("default", &[req("type", I32)], &[D32, s32("src0")])],
);

const COUNT: &[Form] = &[form("default", &[req("type", I16_32)], &[R, S0])];
/// `cbit.type dst, src0`
pub const CBIT: InstrDef = def(Opcode::Cbit, COUNT);
/// `fbh.type dst, src0`
pub const FBH: InstrDef = def(Opcode::Fbh, COUNT);
/// `fbl.type dst, src0`
pub const FBL: InstrDef = def(Opcode::Fbl, COUNT);

const EXTRACT: &[Form] = &[form(
    "default",
    &[req("type", I32)],
    &[D32, s32("src0"), s32("src1"), s32("src2")],
)];
/// `sbfe.type dst, src0, src1, src2`
pub const SBFE: InstrDef = def(Opcode::Sbfe, EXTRACT);
/// `ubfe.type dst, src0, src1, src2`
pub const UBFE: InstrDef = def(Opcode::Ubfe, EXTRACT);

/// `shf.dir.type dst, src0, src1, src2`
pub const SHF: InstrDef = def(
    Opcode::Shf,
    &[form(
        "default",
        &[
            req("dir", &[("l", Q::ShfLeft(true)), ("r", Q::ShfLeft(false))]),
            req("type", I32),
        ],
        &[D32, s32("src0"), s32("src1"), s32("src2")],
    )],
);
