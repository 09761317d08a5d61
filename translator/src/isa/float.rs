//! isa-2: floating point.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, fsrc, opt, req, Form, InstrDef, OperandRule, Slot};
use crate::ir::Opcode;

const R: OperandRule = dst(Reg, Type);
const S0: OperandRule = fsrc("src0", RegImm, Type);
const S1: OperandRule = fsrc("src1", RegImm, Type);
const S2: OperandRule = fsrc("src2", RegImm, Type);
const P: OperandRule = dst(Packed, Type);
const P0: OperandRule = fsrc("src0", Packed, Type);
const P1: OperandRule = fsrc("src1", Packed, Type);
const P2: OperandRule = fsrc("src2", Packed, Type);

const UNARY: &[OperandRule] = &[R, S0];
const BINARY: &[OperandRule] = &[R, S0, S1];
const TERNARY: &[OperandRule] = &[R, S0, S1, S2];
const PUNARY: &[OperandRule] = &[P, P0];
const PBINARY: &[OperandRule] = &[P, P0, P1];
const PTERNARY: &[OperandRule] = &[P, P0, P1, P2];

const RND_: Slot = opt("rndmode", RND);
const FTZ_: Slot = opt("ftz", FTZ);
const DSAT_: Slot = opt("dsat", DSAT);
const NANP_: Slot = opt("nanp", NANP);
const FAST_: Slot = req("fast", FAST);

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

/// `op<.ftz>.type dst, src0` over `types`, plus the packed form.
macro_rules! ftz_unary {
    ($op:ident, $types:ident) => {
        def(
            Opcode::$op,
            &[
                form("default", &[FTZ_, req("type", $types)], UNARY),
                form("packed", &[FTZ_, req("type", PF)], PUNARY),
            ],
        )
    };
}

/// `fabs<.ftz>.type dst, src0`
pub const FABS: InstrDef = ftz_unary!(Fabs, F4);
/// `fneg<.ftz>.type dst, src0`
pub const FNEG: InstrDef = ftz_unary!(Fneg, F4);
/// `fcos<.ftz>.type dst, src0`
pub const FCOS: InstrDef = ftz_unary!(Fcos, F3);
/// `fsin<.ftz>.type dst, src0`
pub const FSIN: InstrDef = ftz_unary!(Fsin, F3);
/// `fexp2<.ftz>.type dst, src0`
pub const FEXP2: InstrDef = ftz_unary!(Fexp2, F3);
/// `flog2<.ftz>.type dst, src0`
pub const FLOG2: InstrDef = ftz_unary!(Flog2, F3);
/// `frcp<.ftz>.type dst, src0`
pub const FRCP: InstrDef = ftz_unary!(Frcp, F3);
/// `ftanh<.ftz>.type dst, src0`
pub const FTANH: InstrDef = ftz_unary!(Ftanh, F3);

/// `fadd<.rndmode><.ftz><.dsat>.type dst, src0, src1`, and packed.
pub const FADD: InstrDef = def(
    Opcode::Fadd,
    &[
        form("default", &[RND_, FTZ_, DSAT_, req("type", F4)], BINARY),
        form("packed", &[RND_, FTZ_, DSAT_, req("type", PF)], PBINARY),
    ],
);

/// `fsub<.rndmode><.ftz><.dsat>.type dst, src0, src1`, and packed.
pub const FSUB: InstrDef = def(
    Opcode::Fsub,
    &[
        form("default", &[RND_, FTZ_, DSAT_, req("type", F4)], BINARY),
        form("packed", &[RND_, FTZ_, DSAT_, req("type", PF)], PBINARY),
    ],
);

/// `fmad<.rndmode><.ftz><.dsat>.type dst, src0, src1, src2`, and packed.
pub const FMAD: InstrDef = def(
    Opcode::Fmad,
    &[
        form("default", &[RND_, FTZ_, DSAT_, req("type", F4)], TERNARY),
        form("packed", &[RND_, FTZ_, DSAT_, req("type", PF)], PTERNARY),
    ],
);

/// `fdiv<.rndmode><.ftz>.type` and `fdiv<.ftz>.fast.type`.
pub const FDIV: InstrDef = def(
    Opcode::Fdiv,
    &[
        form("default", &[RND_, FTZ_, req("type", F_DF)], BINARY),
        form("fast", &[FTZ_, FAST_, req("type", F4)], BINARY),
    ],
);

/// `fmax<.ftz><.dsat><.nanp>.type dst, src0, src1`, and packed.
pub const FMAX: InstrDef = def(
    Opcode::Fmax,
    &[
        form("default", &[FTZ_, DSAT_, NANP_, req("type", F4)], BINARY),
        form("packed", &[FTZ_, DSAT_, NANP_, req("type", PF)], PBINARY),
    ],
);

/// `fmin<.ftz><.dsat><.nanp>.type dst, src0, src1`, and packed.
pub const FMIN: InstrDef = def(
    Opcode::Fmin,
    &[
        form("default", &[FTZ_, DSAT_, NANP_, req("type", F4)], BINARY),
        form("packed", &[FTZ_, DSAT_, NANP_, req("type", PF)], PBINARY),
    ],
);

/// `fmul.precision...` (widening), `fmul<.rndmode><.ftz><.dsat>.type`, and packed.
pub const FMUL: InstrDef = def(
    Opcode::Fmul,
    &[
        form(
            "widening",
            &[
                req("precision", FULL),
                RND_,
                FTZ_,
                DSAT_,
                req("type", BF_HF),
            ],
            &[dst(Reg, Twice), S0, S1],
        ),
        form("default", &[RND_, FTZ_, DSAT_, req("type", F4)], BINARY),
        form("packed", &[RND_, FTZ_, DSAT_, req("type", PF)], PBINARY),
    ],
);

/// `frc<.ftz>.f dst, src0`
pub const FRC: InstrDef = def(
    Opcode::Frc,
    &[form(
        "default",
        &[FTZ_, req("type", F_ONLY)],
        &[dst(Reg, Bits(32)), fsrc("src0", RegImm, Type)],
    )],
);

/// `frsqrt<.ftz>.fast.type dst, src0`, and packed.
pub const FRSQRT: InstrDef = def(
    Opcode::Frsqrt,
    &[
        form("default", &[FTZ_, FAST_, req("type", F4)], UNARY),
        form("packed", &[FTZ_, FAST_, req("type", PF)], PUNARY),
    ],
);

/// `fsqrt<.rndmode><.ftz>.type`, `fsqrt<.ftz>.fast.type`, and packed fast.
pub const FSQRT: InstrDef = def(
    Opcode::Fsqrt,
    &[
        form("default", &[RND_, FTZ_, req("type", F_DF)], UNARY),
        form("fast", &[FTZ_, FAST_, req("type", F4)], UNARY),
        form("packed", &[FTZ_, FAST_, req("type", PF)], PUNARY),
    ],
);
