//! isa-7: sub-group communication.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::Q;
use super::{dst, form, opt, req, src, Form, InstrDef};
use crate::ir::{AtomOp, Opcode, ShflOp};

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

const FRED_OP: Vals = &[
    atom("min", AtomOp::Min),
    atom("max", AtomOp::Max),
    atom("absmax", AtomOp::Absmax),
];

/// `fred.op<.nanp>.type dst, src0, src1`, and packed.
pub const FRED: InstrDef = def(
    Opcode::Fred,
    &[
        form(
            "default",
            &[req("op", FRED_OP), opt("nanp", NANP), req("type", F3)],
            &[
                dst(Reg, Type),
                src("src0", Reg, Type),
                src("src1", RegImm, Bits(32)),
            ],
        ),
        form(
            "packed",
            &[req("op", FRED_OP), opt("nanp", NANP), req("type", PF)],
            &[
                dst(Packed, Type),
                src("src0", Packed, Type),
                src("src1", RegImm, Bits(32)),
            ],
        ),
    ],
);

/// `ired.op.type dst, src0, src1`
pub const IRED: InstrDef = def(
    Opcode::Ired,
    &[form(
        "default",
        &[
            req(
                "op",
                &[
                    atom("sum", AtomOp::Sum),
                    atom("smin", AtomOp::Smin),
                    atom("smax", AtomOp::Smax),
                    atom("umin", AtomOp::Umin),
                    atom("umax", AtomOp::Umax),
                    atom("and", AtomOp::And),
                    atom("or", AtomOp::Or),
                    atom("xor", AtomOp::Xor),
                    atom("absmax", AtomOp::Absmax),
                ],
            ),
            req("type", I16_32),
        ],
        &[
            dst(Reg, Type),
            src("src0", Reg, Type),
            src("src1", RegImm, Bits(32)),
        ],
    )],
);

/// `redfirstidx.type dst, src0`
pub const REDFIRSTIDX: InstrDef = def(
    Opcode::Redfirstidx,
    &[form(
        "default",
        &[req("type", I32)],
        &[dst(Reg, Bits(32)), src("src0", RegImm, Bits(32))],
    )],
);

/// `shfl.op<.sg>.type dst, src0, src1, src2`
pub const SHFL: InstrDef = def(
    Opcode::Shfl,
    &[form(
        "default",
        &[
            req(
                "op",
                &[
                    ("up", Q::Shfl(ShflOp::Up)),
                    ("dn", Q::Shfl(ShflOp::Dn)),
                    ("xor", Q::Shfl(ShflOp::Xor)),
                    ("idx", Q::Shfl(ShflOp::Idx)),
                ],
            ),
            opt("sg", &[("sg", Q::Sg)]),
            req("type", I32),
        ],
        &[
            dst(Reg, Bits(32)),
            src("src0", Reg, Bits(32)),
            src("src1", RegImm, Bits(32)),
            src("src2", RegImm, Bits(32)),
        ],
    )],
);
