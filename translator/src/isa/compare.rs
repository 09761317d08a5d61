//! isa-5: comparison and selection.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, fsrc, opt, out, req, src, Form, InstrDef};
use crate::ir::Opcode;

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

/// `scmp.cop.type` with a predicate or a register destination.
pub const SCMP: InstrDef = def(
    Opcode::Scmp,
    &[
        form(
            "predicate destination",
            &[req("cop", COP), req("type", I16_64)],
            &[
                out("pred", Pred, Any),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
            ],
        ),
        form(
            "register destination",
            &[req("cop", COP), req("type", I16_64)],
            &[
                dst(Reg, Bits(32)),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
            ],
        ),
    ],
);

/// `ucmp.cop.type` with a predicate or a register destination, and packed.
pub const UCMP: InstrDef = def(
    Opcode::Ucmp,
    &[
        form(
            "predicate destination",
            &[req("cop", COP), req("type", I16_64)],
            &[
                out("pred", Pred, Any),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
            ],
        ),
        form(
            "register destination",
            &[req("cop", COP), req("type", I16_64)],
            &[
                dst(Reg, Bits(32)),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
            ],
        ),
        form(
            "packed",
            &[req("cop", COP), req("type", PI16)],
            &[
                dst(Packed, Type),
                src("src0", Packed, Type),
                src("src1", Packed, Type),
            ],
        ),
    ],
);

/// `fcmp.cop<.ftz>.type` with a predicate or a register destination, and packed.
pub const FCMP: InstrDef = def(
    Opcode::Fcmp,
    &[
        form(
            "predicate destination",
            &[req("cop", COP), opt("ftz", FTZ), req("type", F4)],
            &[
                out("pred", Pred, Any),
                fsrc("src0", RegImm, Type),
                fsrc("src1", RegImm, Type),
            ],
        ),
        form(
            "register destination",
            &[req("cop", COP), opt("ftz", FTZ), req("type", F4)],
            &[
                dst(Reg, Bits(32)),
                fsrc("src0", RegImm, Type),
                fsrc("src1", RegImm, Type),
            ],
        ),
        form(
            "packed",
            &[req("cop", COP), opt("ftz", FTZ), req("type", PF)],
            &[
                dst(Packed, Type),
                fsrc("src0", Packed, Type),
                fsrc("src1", Packed, Type),
            ],
        ),
    ],
);

/// `sel.type dst, src0, src1, src2` and `sel.type dst, src0, src1, <!>pred`.
pub const SEL: InstrDef = def(
    Opcode::Sel,
    &[
        form(
            "register selector",
            &[req("type", I16_64)],
            &[
                dst(Reg, Type),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
                src("src2", Reg, Type),
            ],
        ),
        form(
            "predicate selector",
            &[req("type", I16_64)],
            &[
                dst(Reg, Type),
                src("src0", RegImm, Type),
                src("src1", RegImm, Type),
                src("pred", PredNeg, Any),
            ],
        ),
    ],
);
