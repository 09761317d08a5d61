//! isa-8: memory and atomics.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, fsrc, opt, req, src, Form, InstrDef, OperandRule, Slot};
use crate::ir::{AddrSpace as A, AtomOp, Opcode};

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

const ADDR: OperandRule = src("addr", Addr, Any);
const ATOM_SPACE: Slot = req(
    "addrspace",
    &[
        space("global", A::Global),
        space("generic", A::Generic),
        space("shared", A::Shared),
    ],
);

/// `fatom.addrspace<.memorder><.memscope><.cc>.op.type dst, [addr], src0 <, src1>`
pub const FATOM: InstrDef = def(
    Opcode::Fatom,
    &[form(
        "default",
        &[
            ATOM_SPACE,
            opt("memorder", ORDER_RMW),
            opt("memscope", SCOPE3),
            opt("cc", CC_ATOM),
            req(
                "op",
                &[
                    atom("add", AtomOp::Add),
                    atom("sub", AtomOp::Sub),
                    atom("min", AtomOp::Min),
                    atom("max", AtomOp::Max),
                    atom("cas", AtomOp::Cas),
                ],
            ),
            req("type", F4),
        ],
        &[
            dst(Reg, Type),
            ADDR,
            fsrc("src0", Reg, Type),
            fsrc("src1", Reg, Type).opt(),
        ],
    )],
);

/// `iatom.addrspace<.memorder><.memscope><.cc>.op.type dst, [addr] <, src0> <, src1>`
pub const IATOM: InstrDef = def(
    Opcode::Iatom,
    &[form(
        "default",
        &[
            ATOM_SPACE,
            opt("memorder", ORDER_RMW),
            opt("memscope", SCOPE3),
            opt("cc", CC_ATOM),
            req(
                "op",
                &[
                    atom("add", AtomOp::Add),
                    atom("sub", AtomOp::Sub),
                    atom("smin", AtomOp::Smin),
                    atom("smax", AtomOp::Smax),
                    atom("umin", AtomOp::Umin),
                    atom("umax", AtomOp::Umax),
                    atom("and", AtomOp::And),
                    atom("or", AtomOp::Or),
                    atom("xor", AtomOp::Xor),
                    atom("xchg", AtomOp::Xchg),
                    atom("cas", AtomOp::Cas),
                    atom("inc", AtomOp::Inc),
                    atom("dec", AtomOp::Dec),
                    atom("incwrap", AtomOp::Incwrap),
                    atom("decwrap", AtomOp::Decwrap),
                ],
            ),
            req("type", I16_128),
        ],
        &[
            dst(Reg, Type),
            ADDR,
            src("src0", Reg, Type).opt(),
            src("src1", Reg, Type).opt(),
        ],
    )],
);

/// `ld` non-atomic, atomic, and `ld.param`.
pub const LD: InstrDef = def(
    Opcode::Ld,
    &[
        form(
            "non-atomic",
            &[
                opt(
                    "addrspace",
                    &[
                        space("global", A::Global),
                        space("generic", A::Generic),
                        space("shared", A::Shared),
                        space("private", A::Private),
                        space("const", A::Const),
                    ],
                ),
                opt("memorder", ORDER_WEAK),
                opt("cc", CC_LD),
                opt("vec", VEC_MEM),
                req("type", I8_64),
            ],
            &[dst(Data, Type), ADDR],
        ),
        form(
            "atomic",
            &[
                opt(
                    "addrspace",
                    &[
                        space("global", A::Global),
                        space("generic", A::Generic),
                        space("shared", A::Shared),
                    ],
                ),
                req("memorder", ORDER_LD),
                opt("memscope", SCOPE3),
                opt("cc", CC_ATOM),
                req("type", I16_128),
            ],
            &[dst(Reg, Type), ADDR],
        ),
        form(
            "param",
            &[
                req("addrspace", &[space("param", A::Param)]),
                opt("vec", VEC_MEM),
                req("type", I8_64),
            ],
            &[dst(Data, Type), src("vaddr", ParamAddr, Any)],
        ),
    ],
);

/// `st` non-atomic and atomic.
pub const ST: InstrDef = def(
    Opcode::St,
    &[
        form(
            "non-atomic",
            &[
                opt(
                    "addrspace",
                    &[
                        space("global", A::Global),
                        space("generic", A::Generic),
                        space("shared", A::Shared),
                        space("private", A::Private),
                    ],
                ),
                opt("memorder", ORDER_WEAK),
                opt("cc", CC_ST),
                opt("vec", VEC_MEM),
                req("type", I8_64),
            ],
            &[ADDR, src("src0", Data, Type)],
        ),
        form(
            "atomic",
            &[
                opt(
                    "addrspace",
                    &[
                        space("global", A::Global),
                        space("generic", A::Generic),
                        space("shared", A::Shared),
                    ],
                ),
                req("memorder", ORDER_ST),
                opt("memscope", SCOPE3),
                opt("cc", CC_ATOM),
                req("type", I16_128),
            ],
            &[ADDR, src("src0", Reg, Type)],
        ),
    ],
);
