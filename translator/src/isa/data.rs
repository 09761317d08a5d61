//! isa-4: data movement and conversion.

use super::values::*;
use super::Kind::*;
use super::Width::*;
use super::{dst, form, fsrc, opt, req, src, Form, InstrDef, OperandRule, Slot, Values, Q};
use crate::ir::{AddrSpace as A, DataType::*, Opcode};

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

const RND_: Slot = opt("rndmode", RND);
const FTZ_: Slot = opt("ftz", FTZ);
const DSAT_: Slot = opt("dsat", DSAT);
const INDEX: Slot = Slot {
    name: "index",
    required: true,
    values: Values::Index,
};
const DYNAMIC: Slot = req("dynamic", &[("dynamic", Q::Dynamic)]);
const D32: OperandRule = dst(Reg, Bits(32));

/// `addrcast.to.from dst, src0`: specific to generic, and generic to specific.
pub const ADDRCAST: InstrDef = def(
    Opcode::Addrcast,
    &[
        form(
            "specific to generic",
            &[
                req("to", &[("generic", Q::SpaceTo(A::Generic))]),
                req(
                    "from",
                    &[
                        ("private", Q::SpaceFrom(A::Private)),
                        ("shared", Q::SpaceFrom(A::Shared)),
                        ("global", Q::SpaceFrom(A::Global)),
                        ("const", Q::SpaceFrom(A::Const)),
                    ],
                ),
            ],
            &[dst(Reg, Bits(64)), src("src0", RegOrVar, AddrFrom)],
        ),
        form(
            "generic to specific",
            &[
                req(
                    "to",
                    &[
                        ("global", Q::SpaceTo(A::Global)),
                        ("private", Q::SpaceTo(A::Private)),
                        ("shared", Q::SpaceTo(A::Shared)),
                    ],
                ),
                req("from", &[("generic", Q::SpaceFrom(A::Generic))]),
            ],
            &[dst(Reg, AddrTo), src("src0", Reg, Bits(64))],
        ),
    ],
);

/// `addrof.type dst, src0`: of a memory variable, and of a function.
pub const ADDROF: InstrDef = def(
    Opcode::Addrof,
    &[
        form(
            "memory variable",
            &[req("type", I32_64)],
            &[dst(Reg, Type), src("src0", MemVar, Type)],
        ),
        form(
            "function",
            &[req("type", I64)],
            &[dst(Reg, Bits(64)), src("src0", Func, Any)],
        ),
    ],
);

/// `extract.dynamic.vec.type`, `extract.index.type`, `extract.index.vec.type`.
pub const EXTRACT: InstrDef = def(
    Opcode::Extract,
    &[
        form(
            "dynamic",
            &[DYNAMIC, req("vec", VEC_ALL), req("type", I32)],
            &[D32, src("src0", Vector, Type), src("index", Reg, Bits(32))],
        ),
        form(
            "scalar",
            &[INDEX, req("type", I32)],
            &[D32, src("src0", Vector, Type)],
        ),
        form(
            "subvector",
            &[INDEX, req("vec", VEC_ALL), req("type", I32)],
            &[dst(Vector, Type), src("src0", Vector, Type)],
        ),
    ],
);

/// `insert.dynamic.vec.type`, `insert.index.type`, `insert.index.vec.type`.
pub const INSERT: InstrDef = def(
    Opcode::Insert,
    &[
        form(
            "dynamic",
            &[DYNAMIC, req("vec", VEC_ALL), req("type", I32)],
            &[
                dst(Vector, Type),
                src("src0", Reg, Bits(32)),
                src("index", Reg, Bits(32)),
            ],
        ),
        form(
            "scalar",
            &[INDEX, req("type", I32)],
            &[dst(Vector, Type), src("src0", Reg, Bits(32))],
        ),
        form(
            "subvector",
            &[INDEX, req("vec", VEC_ALL), req("type", I32)],
            &[dst(Vector, Type), src("src0", Vector, Type)],
        ),
    ],
);

/// `f2i.to.from<.rndmode> dst, src0`
pub const F2I: InstrDef = def(
    Opcode::F2i,
    &[form(
        "default",
        &[req("to", TO_INT), req("from", FROM_F4), RND_],
        &[dst(Reg, To), fsrc("src0", RegImm, From)],
    )],
);

/// `fext.to.from dst, src0`
pub const FEXT: InstrDef = def(
    Opcode::Fext,
    &[form(
        "default",
        &[
            req("to", &[("f", Q::To(F)), ("df", Q::To(Df))]),
            req(
                "from",
                &[("bf", Q::From(Bf)), ("hf", Q::From(Hf)), ("f", Q::From(F))],
            ),
        ],
        &[dst(Reg, To), fsrc("src0", RegImm, From)],
    )],
);

/// `frnd.rndmode<.ftz>.type dst, src0`
pub const FRND: InstrDef = def(
    Opcode::Frnd,
    &[form(
        "default",
        &[req("rndmode", RND), FTZ_, req("type", F4)],
        &[dst(Reg, Type), fsrc("src0", RegImm, Type)],
    )],
);

/// `ftrunc.to.from<.rndmode><.ftz><.dsat> dst, src0`
pub const FTRUNC: InstrDef = def(
    Opcode::Ftrunc,
    &[form(
        "default",
        &[
            req(
                "to",
                &[("bf", Q::To(Bf)), ("hf", Q::To(Hf)), ("f", Q::To(F))],
            ),
            req("from", &[("f", Q::From(F)), ("df", Q::From(Df))]),
            RND_,
            FTZ_,
            DSAT_,
        ],
        &[dst(Reg, To), fsrc("src0", RegImm, From)],
    )],
);

/// `ftrunc2.to<.rndmode><.ftz><.dsat> dst, src0, src1`
pub const FTRUNC2: InstrDef = def(
    Opcode::Ftrunc2,
    &[form(
        "default",
        &[
            req("to", &[("bfx2", Q::To(Bfx2)), ("hfx2", Q::To(Hfx2))]),
            RND_,
            FTZ_,
            DSAT_,
        ],
        &[
            dst(Packed, To),
            src("src0", Reg, Bits(32)),
            src("src1", Reg, Bits(32)),
        ],
    )],
);

/// `i2f.to.from<.rndmode><.dsat> dst, src0`
pub const I2F: InstrDef = def(
    Opcode::I2f,
    &[form(
        "default",
        &[req("to", TO_F4), req("from", FROM_INT), RND_, DSAT_],
        &[dst(Reg, To), src("src0", RegImm, From)],
    )],
);

/// `isaddr.addrspace dst, src0`
pub const ISADDR: InstrDef = def(
    Opcode::Isaddr,
    &[form(
        "default",
        &[req(
            "addrspace",
            &[
                ("private", Q::SpaceTo(A::Private)),
                ("shared", Q::SpaceTo(A::Shared)),
                ("global", Q::SpaceTo(A::Global)),
            ],
        )],
        &[D32, src("src0", Reg, Bits(64))],
    )],
);

/// `mov.type`: scalar to scalar, scalar to vector, vector to scalar, vector to vector.
pub const MOV: InstrDef = def(
    Opcode::Mov,
    &[
        form(
            "scalar to scalar",
            &[req("type", I8_128)],
            &[dst(Plain, Type), src("src0", PlainImm, Type)],
        ),
        form(
            "scalar to vector",
            &[req("type", I8_128)],
            &[dst(Swizzled, Type), src("src0", Plain, Type)],
        ),
        form(
            "vector to scalar",
            &[req("type", I8_128)],
            &[dst(Plain, Type), src("src0", Swizzled, Type)],
        ),
        form(
            "vector to vector",
            &[req("type", I8_128)],
            &[dst(Swizzled, Type), src("src0", Swizzled, Type)],
        ),
    ],
);

/// `pf2i.to.from<.rndmode> dst, src0`
pub const PF2I: InstrDef = def(
    Opcode::Pf2i,
    &[form(
        "default",
        &[
            req("to", &[("u16x2", Q::To(U16x2)), ("s16x2", Q::To(S16x2))]),
            req("from", &[("bfx2", Q::From(Bfx2)), ("hfx2", Q::From(Hfx2))]),
            RND_,
        ],
        &[dst(Packed, To), src("src0", Packed, From)],
    )],
);

const EXT_TO: Vals = &[
    ("16b", Q::To(B16)),
    ("32b", Q::To(B32)),
    ("64b", Q::To(B64)),
];
const EXT_FROM: Vals = &[
    ("8b", Q::From(B8)),
    ("16b", Q::From(B16)),
    ("32b", Q::From(B32)),
];

/// `sext.to.from dst, src0`
pub const SEXT: InstrDef = def(
    Opcode::Sext,
    &[form(
        "default",
        &[req("to", EXT_TO), req("from", EXT_FROM)],
        &[dst(Reg, To), src("src0", RegImm, From)],
    )],
);

/// `zext.to.from dst, src0`
pub const ZEXT: InstrDef = def(
    Opcode::Zext,
    &[form(
        "default",
        &[req("to", EXT_TO), req("from", EXT_FROM)],
        &[dst(Reg, To), src("src0", RegImm, From)],
    )],
);

/// `trunc.to.from dst, src0`
pub const TRUNC: InstrDef = def(
    Opcode::Trunc,
    &[form(
        "default",
        &[
            req(
                "to",
                &[("8b", Q::To(B8)), ("16b", Q::To(B16)), ("32b", Q::To(B32))],
            ),
            req(
                "from",
                &[
                    ("16b", Q::From(B16)),
                    ("32b", Q::From(B32)),
                    ("64b", Q::From(B64)),
                ],
            ),
        ],
        &[dst(Reg, To), src("src0", RegImm, From)],
    )],
);
