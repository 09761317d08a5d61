//! isa-9: synchronization.

use super::values::*;
use super::{form, opt, req, Form, InstrDef, Q};
use crate::ir::{AddrSpace as A, MemScope, Opcode};

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

/// `barrier.workgroup`
pub const BARRIER: InstrDef = def(
    Opcode::Barrier,
    &[form(
        "default",
        &[req(
            "scope",
            &[("workgroup", Q::Scope(MemScope::Workgroup))],
        )],
        &[],
    )],
);

/// `fence<.addrspace><.memorder>.memscope` (shared or generic), `fence.global<.memorder>.memscope`
/// and `fence.subgroup`.
pub const FENCE: InstrDef = def(
    Opcode::Fence,
    &[
        form(
            "shared or generic",
            &[
                opt(
                    "addrspace",
                    &[space("shared", A::Shared), space("generic", A::Generic)],
                ),
                opt("memorder", ORDER_FENCE),
                req("memscope", SCOPE2),
            ],
            &[],
        ),
        form(
            "global",
            &[
                req("addrspace", &[space("global", A::Global)]),
                opt("memorder", ORDER_FENCE),
                req("memscope", SCOPE3),
            ],
            &[],
        ),
        form("sub-group", &[req("memscope", SCOPE_SG)], &[]),
    ],
);
