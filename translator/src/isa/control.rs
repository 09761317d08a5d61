//! isa-6: control flow.

use super::Kind::*;
use super::Width::*;
use super::{form, req, src, Form, InstrDef, OperandRule, Slot, Q};
use crate::ir::Opcode;

const fn def(op: Opcode, f: &'static [Form]) -> InstrDef {
    InstrDef {
        opcode: op,
        forms: f,
    }
}

const COND: Slot = req("cond", &[("cond", Q::Cond)]);
const PRED: OperandRule = src("pred", PredNeg, Any);
const RETVAL: OperandRule = OperandRule {
    role: "retval",
    kind: RetVal,
    width: Any,
    float: false,
    write: true,
    optional: false,
};
const TARGET: OperandRule = src("target", CallTarget, Bits(64));
const ARGS: OperandRule = src("args", Args, Any);

/// `call retval, target(args)` and `call.cond <!>pred, retval, target(args)`.
pub const CALL: InstrDef = def(
    Opcode::Call,
    &[
        form("unconditional", &[], &[RETVAL, TARGET, ARGS]),
        form("conditional", &[COND], &[PRED, RETVAL, TARGET, ARGS]),
    ],
);

/// `goto label` and `goto.cond <!>pred, label`.
pub const GOTO: InstrDef = def(
    Opcode::Goto,
    &[
        form("unconditional", &[], &[src("label", Label, Any)]),
        form("conditional", &[COND], &[PRED, src("label", Label, Any)]),
    ],
);

/// `return <retval>` and `return.cond <!>pred, retval`.
pub const RETURN: InstrDef = def(
    Opcode::Return,
    &[
        form("unconditional", &[], &[src("retval", RetImm, Any).opt()]),
        form(
            "conditional",
            &[COND],
            &[PRED, src("retval", RetImm, Any).opt()],
        ),
    ],
);
