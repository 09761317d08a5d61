//! isa-1: integer arithmetic.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, opt, out, req, src, Form, InstrDef, OperandRule, Q};
use crate::ir::{Dp4aSign, Opcode};

const R: OperandRule = dst(Reg, Type);
const S0: OperandRule = src("src0", RegImm, Type);
const S1: OperandRule = src("src1", RegImm, Type);
const S2: OperandRule = src("src2", RegImm, Type);
const P: OperandRule = dst(Packed, Type);
const P0: OperandRule = src("src0", Packed, Type);
const P1: OperandRule = src("src1", Packed, Type);
const P2: OperandRule = src("src2", Packed, Type);

const UNARY: &[OperandRule] = &[R, S0];
const BINARY: &[OperandRule] = &[R, S0, S1];
const TERNARY: &[OperandRule] = &[R, S0, S1, S2];
const PBINARY: &[OperandRule] = &[P, P0, P1];

const fn plain(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

/// `dp4a.signedness<.dsat>.type dst, src0, src1, src2`
pub const DP4A: InstrDef = plain(
    Opcode::Dp4a,
    &[form(
        "default",
        &[
            req(
                "signedness",
                &[
                    (
                        "ss",
                        Q::Sign(Dp4aSign {
                            src1_signed: true,
                            src2_signed: true,
                        }),
                    ),
                    (
                        "us",
                        Q::Sign(Dp4aSign {
                            src1_signed: false,
                            src2_signed: true,
                        }),
                    ),
                    (
                        "su",
                        Q::Sign(Dp4aSign {
                            src1_signed: true,
                            src2_signed: false,
                        }),
                    ),
                    (
                        "uu",
                        Q::Sign(Dp4aSign {
                            src1_signed: false,
                            src2_signed: false,
                        }),
                    ),
                ],
            ),
            opt("dsat", DSAT),
            req("type", I32),
        ],
        &[
            dst(Reg, Bits(32)),
            src("src0", RegImm, Bits(32)),
            src("src1", RegImm, Bits(32)),
            src("src2", RegImm, Bits(32)),
        ],
    )],
);

/// `iabs.type dst, src0`
pub const IABS: InstrDef = plain(
    Opcode::Iabs,
    &[form("default", &[req("type", I16_64)], UNARY)],
);

/// `iadd<.dsat>.type dst, src0, src1`, and the packed form.
pub const IADD: InstrDef = plain(
    Opcode::Iadd,
    &[
        form("default", &[opt("dsat", DSAT), req("type", I16_64)], BINARY),
        form("packed", &[opt("dsat", DSAT), req("type", PI8_16)], PBINARY),
    ],
);

/// `ineg.type dst, src0`
pub const INEG: InstrDef = plain(
    Opcode::Ineg,
    &[form("default", &[req("type", I16_64)], UNARY)],
);

/// `isub<.dsat>.type dst, src0, src1`, and the packed form.
pub const ISUB: InstrDef = plain(
    Opcode::Isub,
    &[
        form("default", &[opt("dsat", DSAT), req("type", I16_64)], BINARY),
        form("packed", &[opt("dsat", DSAT), req("type", PI16)], PBINARY),
    ],
);

const OUTPUT: &[(&str, Q)] = &[("quo", Q::Quo), ("rem", Q::Rem)];

/// `sdiv<.output>.type dst, src0, src1`
pub const SDIV: InstrDef = plain(
    Opcode::Sdiv,
    &[form(
        "default",
        &[opt("output", OUTPUT), req("type", I16_64)],
        BINARY,
    )],
);

/// `udiv<.output>.type dst, src0, src1`
pub const UDIV: InstrDef = plain(
    Opcode::Udiv,
    &[form(
        "default",
        &[opt("output", OUTPUT), req("type", I16_64)],
        BINARY,
    )],
);

const WIDE_MAD: Form = form(
    "widening",
    &[req("precision", FULL), req("type", I16_32)],
    &[
        dst(Reg, Twice),
        src("src0", RegImm, Type),
        src("src1", RegImm, Type),
        src("src2", RegImm, Twice),
    ],
);
const WIDE_MUL: Form = form(
    "widening",
    &[req("precision", FULL), req("type", I16_32)],
    &[
        dst(Reg, Twice),
        src("src0", RegImm, Type),
        src("src1", RegImm, Type),
    ],
);

/// `smad.precision.type`, `smad.type`, packed `smad.16bx2`.
pub const SMAD: InstrDef = plain(
    Opcode::Smad,
    &[
        WIDE_MAD,
        form("default", &[req("type", I16_64)], TERNARY),
        form("packed", &[req("type", PI16)], &[P, P0, P1, P2]),
    ],
);

/// `umad.precision.type`, `umad.type`.
pub const UMAD: InstrDef = plain(
    Opcode::Umad,
    &[WIDE_MAD, form("default", &[req("type", I16_64)], TERNARY)],
);

/// `smul.precision.type`, `smul.type`, packed `smul.16bx2`.
pub const SMUL: InstrDef = plain(
    Opcode::Smul,
    &[
        WIDE_MUL,
        form("default", &[req("type", I16_64)], BINARY),
        form("packed", &[req("type", PI16)], PBINARY),
    ],
);

/// `umul.precision.type`, `umul.type`.
pub const UMUL: InstrDef = plain(
    Opcode::Umul,
    &[WIDE_MUL, form("default", &[req("type", I16_64)], BINARY)],
);

/// `smax.type`, packed `.8bx4`/`.16bx2`.
pub const SMAX: InstrDef = plain(
    Opcode::Smax,
    &[
        form("default", &[req("type", I16_64)], BINARY),
        form("packed", &[req("type", PI8_16)], PBINARY),
    ],
);

/// `smin.type`, packed `.8bx4`/`.16bx2`.
pub const SMIN: InstrDef = plain(
    Opcode::Smin,
    &[
        form("default", &[req("type", I16_64)], BINARY),
        form("packed", &[req("type", PI8_16)], PBINARY),
    ],
);

/// `umax.type`, packed `.16bx2`.
pub const UMAX: InstrDef = plain(
    Opcode::Umax,
    &[
        form("default", &[req("type", I16_64)], BINARY),
        form("packed", &[req("type", PI16)], PBINARY),
    ],
);

/// `umin.type`, packed `.16bx2`.
pub const UMIN: InstrDef = plain(
    Opcode::Umin,
    &[
        form("default", &[req("type", I16_64)], BINARY),
        form("packed", &[req("type", PI16)], PBINARY),
    ],
);

const C_IN: OperandRule = src("carry-in", Pred, Any);
const C_OUT: OperandRule = out("carry-out", Pred, Any);
const D32: OperandRule = dst(Reg, Bits(32));
const A32: OperandRule = src("src0", RegImm, Bits(32));
const B32: OperandRule = src("src1", RegImm, Bits(32));

/// `uaddc.ci`, `uaddc.co`, `uaddc.ci.co`.
pub const UADDC: InstrDef = plain(
    Opcode::Uaddc,
    &[
        form(
            "carry-in",
            &[req("ci", &[("ci", Q::Ci)]), req("type", I32)],
            &[D32, A32, B32, C_IN],
        ),
        form(
            "carry-out",
            &[req("co", &[("co", Q::Co)]), req("type", I32)],
            &[D32, C_OUT, A32, B32],
        ),
        form(
            "carry-in and carry-out",
            &[
                req("ci", &[("ci", Q::Ci)]),
                req("co", &[("co", Q::Co)]),
                req("type", I32),
            ],
            &[D32, C_OUT, A32, B32, C_IN],
        ),
    ],
);
