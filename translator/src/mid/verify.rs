//! The IR verifier: checks that a linked [`Module`] is well formed, so the stages after it
//! (the passes of this middle stage, the SPIR-V back end, the memory layout, the reference
//! interpreter) can trust it instead of re-checking (naga's `valid/` is the model).
//!
//! What it checks, per function: every register, variable, parameter, function and label id
//! is in range; every label points into (or just past) its body; every instruction's form
//! exists in the instruction table ([`crate::isa`]) and its operand count is one the form
//! allows; each operand has the kind its rule says (a predicate where a predicate goes, an
//! address where an address goes, a label, a function, `void` only as a call's result) and
//! registers named as predicates are predicates; registers, special registers and variables
//! are as wide as the rule's width under the instruction's qualifiers (packed operands the
//! vector register of their packed type); address arithmetic is 32 or 64 bits; a
//! direct call passes as many arguments as its callee has register parameters and returns
//! into a register exactly when the callee returns something; a kernel returns nothing;
//! every function has a body (the link left no import). For the module: symbol initializers
//! name existing variables and functions.
//!
//! The front end builds the IR so that none of this can fail; a failure is an internal error
//! of the stage that produced the IR (the front end, the linker or a pass), reported with the
//! instruction's position. [`verify`] runs after the link and after every pass in debug
//! builds and tests ([`verify_in_debug`]).

use crate::diag::Diagnostic;
use crate::ir::{
    AddrBase, AddrOffset, Bits, Function, FunctionKind, InitItem, Inst, Module, Opcode, Operand,
    RegType, SymbolRef, VarRef,
};
use crate::isa::{self, Kind, OperandRule, Width};
use crate::span::Span;

/// Checks `module`; every problem found, as internal-error diagnostics naming the stage
/// `after` ("the link", a pass's name) and the function.
pub fn verify(module: &Module, after: &str) -> Result<(), Vec<Diagnostic>> {
    let mut v = Verifier {
        module,
        after,
        errors: Vec::new(),
    };
    v.symbols();
    for f in &module.functions {
        v.function(f);
    }
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

/// [`verify`] where debug assertions are on (debug builds, the test suites); nothing in
/// release builds, where the IR's producers are trusted. A failure is returned as the
/// caller's error.
pub fn verify_in_debug(module: &Module, after: &str) -> Result<(), Vec<Diagnostic>> {
    if cfg!(debug_assertions) {
        verify(module, after)
    } else {
        Ok(())
    }
}

struct Verifier<'m> {
    module: &'m Module,
    after: &'m str,
    errors: Vec<Diagnostic>,
}

impl<'m> Verifier<'m> {
    fn error(&mut self, span: Span, what: String) {
        self.errors.push(Diagnostic::error(
            span,
            format!(
                "internal error: the IR verifier after {}: {what} (please report this)",
                self.after
            ),
        ));
    }

    /// Symbol initializers name existing variables and functions.
    fn symbols(&mut self) {
        let (globals, functions) = (self.module.globals.len(), self.module.functions.len());
        for g in &self.module.globals {
            for item in g.init.iter().flatten() {
                if let InitItem::Symbol { symbol, .. } = item {
                    let ok = match *symbol {
                        SymbolRef::Global(id) => (id.0 as usize) < globals,
                        SymbolRef::Function(id) => (id.0 as usize) < functions,
                    };
                    if !ok {
                        self.error(
                            g.span,
                            format!(
                                "`@{}` initializer names a symbol that does not exist",
                                g.name
                            ),
                        );
                    }
                }
            }
        }
    }

    fn function(&mut self, f: &Function) {
        let Some(body) = &f.body else {
            self.error(
                f.span,
                format!(
                    "function `@{}` has no body (an import left unlinked)",
                    f.name
                ),
            );
            return;
        };
        if f.kind == FunctionKind::Kernel && f.ret.is_some() {
            self.error(f.span, format!("kernel `@{}` returns a value", f.name));
        }
        for r in &f.reg_params {
            if r.0 as usize >= f.regs.len() {
                self.error(
                    f.span,
                    format!("`@{}`: parameter register {} out of range", f.name, r.0),
                );
            }
        }
        for l in &f.labels {
            if l.target > body.len() {
                self.error(
                    l.span,
                    format!("`@{}`: label `{}` points past the body", f.name, l.name),
                );
            }
        }
        for inst in body {
            self.instruction(f, inst);
        }
    }

    fn instruction(&mut self, f: &Function, inst: &Inst) {
        let def = isa::def(inst.op);
        let Some(form) = def.forms.get(inst.form as usize) else {
            self.error(
                inst.span,
                format!(
                    "`{}` has form {}, the table has {}",
                    inst.op.as_str(),
                    inst.form,
                    def.forms.len()
                ),
            );
            return;
        };
        let rules = form.operands;
        let required = rules.iter().filter(|r| !r.optional).count();
        let variadic = rules.iter().any(|r| r.kind == Kind::Args);
        let n = inst.ops.len();
        if n < required.saturating_sub(usize::from(variadic)) || (!variadic && n > rules.len()) {
            self.error(
                inst.span,
                format!(
                    "`{}` ({} form) has {n} operands, the form takes {}..={}",
                    inst.op.as_str(),
                    form.name,
                    required,
                    rules.len()
                ),
            );
            return;
        }
        for (k, op) in inst.ops.iter().enumerate() {
            // Operands past the form's rules are a call's further arguments.
            let kind = rules.get(k).map_or(Kind::Args, |r| r.kind);
            self.operand(f, inst, k, op, kind);
            if let Some(rule) = rules.get(k) {
                self.width(f, inst, k, op, rule);
            }
        }
        if inst.op == Opcode::Call {
            self.call(f, inst);
        }
    }

    /// Ids in range, and the operand's shape as its rule's kind allows.
    fn operand(&mut self, f: &Function, inst: &Inst, k: usize, op: &Operand, kind: Kind) {
        let m = self.module;
        let reg_ok = |r: crate::ir::RegId| (r.0 as usize) < f.regs.len();
        let var_ok = |v: VarRef| match v {
            VarRef::Global(g) => (g.0 as usize) < m.globals.len(),
            VarRef::Local(l) => (l.0 as usize) < f.locals.len(),
        };
        let what = |s: &str| format!("`{}` operand {k}: {s}", inst.op.as_str());
        match *op {
            Operand::Reg { reg, .. } => {
                if !reg_ok(reg) {
                    return self.error(inst.span, what("register out of range"));
                }
                let is_pred = f.regs[reg.0 as usize].ty == RegType::Pred;
                if matches!(
                    kind,
                    Kind::Addr | Kind::ParamAddr | Kind::Label | Kind::Func | Kind::MemVar
                ) {
                    self.error(
                        inst.span,
                        what(&format!("a register where {} goes", kind.describe())),
                    );
                } else if is_pred
                    && !matches!(
                        kind,
                        Kind::Pred | Kind::PredNeg | Kind::Args | Kind::RetVal | Kind::RetImm
                    )
                {
                    self.error(
                        inst.span,
                        what("a predicate register where a data register goes"),
                    );
                }
            }
            Operand::Pred { reg, negated } => {
                if !reg_ok(reg) {
                    return self.error(inst.span, what("predicate out of range"));
                }
                if f.regs[reg.0 as usize].ty != RegType::Pred {
                    self.error(inst.span, what("a data register used as a predicate"));
                }
                if negated && kind == Kind::Pred {
                    self.error(
                        inst.span,
                        what("a negated predicate where `!` is not allowed"),
                    );
                }
            }
            Operand::Var(v) => {
                if !var_ok(v) {
                    self.error(inst.span, what("variable out of range"));
                }
            }
            Operand::Func(id) => {
                if id.0 as usize >= m.functions.len() {
                    self.error(inst.span, what("function out of range"));
                }
            }
            Operand::Label(l) => {
                if l.0 as usize >= f.labels.len() {
                    self.error(inst.span, what("label out of range"));
                } else if kind != Kind::Label {
                    self.error(inst.span, what("a label where a label does not go"));
                }
            }
            Operand::Addr(a) => {
                if !matches!(kind, Kind::Addr | Kind::ParamAddr) {
                    self.error(inst.span, what("an address where an address does not go"));
                }
                if a.bits != 32 && a.bits != 64 {
                    self.error(
                        inst.span,
                        what(&format!("{}-bit address arithmetic", a.bits)),
                    );
                }
                let base_ok = match a.base {
                    AddrBase::Reg(r) => reg_ok(r),
                    AddrBase::Var(v) => var_ok(v),
                    AddrBase::Param(p) => (p.0 as usize) < f.params.len(),
                    AddrBase::Imm(_) => true,
                };
                let offset_ok = match a.offset {
                    AddrOffset::Reg(r) => reg_ok(r),
                    _ => true,
                };
                if !base_ok || !offset_ok {
                    self.error(inst.span, what("address base or offset out of range"));
                }
            }
            Operand::Void => {
                if kind != Kind::RetVal {
                    self.error(inst.span, what("`void` outside a call's result"));
                }
            }
            Operand::Imm(_) | Operand::Special { .. } => {}
        }
    }

    /// A register, special register or variable operand is as wide as `rule` says under the
    /// instruction's qualifiers (the front end's check, which every pass must keep).
    fn width(&mut self, f: &Function, inst: &Inst, k: usize, op: &Operand, rule: &OperandRule) {
        let m = self.module;
        if rule.kind == Kind::Packed {
            let packed = match rule.width {
                Width::Type => inst.q.ty,
                Width::To => inst.q.to,
                Width::From => inst.q.from,
                _ => None,
            }
            .and_then(|t| t.packed());
            let want = packed.and_then(|(e, n)| Some(RegType::Vector(Bits::from_bits(e)?, n)));
            if let (Operand::Reg { reg, .. }, Some(want)) = (op, want) {
                let ty = f.regs.get(reg.0 as usize).map(|r| r.ty);
                if ty.is_some_and(|t| t != want) {
                    let msg = format!(
                        "`{}` operand {k}: a packed operand that is no {want:?}",
                        inst.op.as_str()
                    );
                    self.error(inst.span, msg);
                }
            }
            return;
        }
        let Some(want) = rule.width.bits(&inst.q) else {
            return;
        };
        let actual = match *op {
            Operand::Reg { reg, swizzle } => match f.regs.get(reg.0 as usize) {
                Some(r) if r.ty != RegType::Pred => isa::register_bits(rule.kind, r.ty, swizzle),
                _ => return,
            },
            Operand::Special { reg, .. } => reg.ty().element().map_or(32, |b| b.bits()),
            Operand::Var(v) if matches!(rule.kind, Kind::MemVar | Kind::RegOrVar) => {
                let space = match v {
                    VarRef::Global(g) => m.globals.get(g.0 as usize).map(|g| g.space),
                    VarRef::Local(l) => f.locals.get(l.0 as usize).map(|l| l.space),
                };
                match space {
                    Some(s) => s.address_bits(),
                    None => return,
                }
            }
            _ => return,
        };
        if actual != want {
            let msg = format!(
                "`{}` operand {k} (`{}`): {actual} bits where the form takes {want}",
                inst.op.as_str(),
                rule.role
            );
            self.error(inst.span, msg);
        }
    }

    /// A direct call matches its callee's signature.
    fn call(&mut self, f: &Function, inst: &Inst) {
        let first = usize::from(inst.q.cond);
        let (Some(ret), Some(Operand::Func(callee))) =
            (inst.ops.get(first), inst.ops.get(first + 1))
        else {
            return;
        };
        let Some(callee) = self.module.functions.get(callee.0 as usize) else {
            return;
        };
        let args = inst.ops.len().saturating_sub(first + 2);
        if callee.kind == FunctionKind::Kernel {
            self.error(
                inst.span,
                format!("`@{}` calls kernel `@{}`", f.name, callee.name),
            );
        }
        if args != callee.reg_params.len() {
            self.error(
                inst.span,
                format!(
                    "call of `@{}` with {args} arguments, it takes {}",
                    callee.name,
                    callee.reg_params.len()
                ),
            );
        }
        if (*ret == Operand::Void) != callee.ret.is_none() {
            self.error(
                inst.span,
                format!(
                    "call of `@{}`: its result and the call's destination disagree",
                    callee.name
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{LabelId, RegId};
    use crate::span::SourceFile;
    use std::sync::Arc;

    fn module(src: &str) -> Module {
        let file = Arc::new(SourceFile::new("v.pisa", src));
        crate::link(std::slice::from_ref(&file))
            .expect("valid")
            .module
    }

    const SRC: &str = ".version 0.1;\n.target 100;\n\
        .function .32b @id(.reg .32b %x) {\n return %x;\n}\n\
        .kernel @k(.param[8] %out) {\n.reg .64b %p;\n.reg .32b %v;\n.pred %q;\n\
        ld.param.64b %p, [%out];\nmov.32b %v, 1;\nucmp.lt.32b %q, %v, 2;\n\
        goto.cond %q, L;\ncall %v, @id(%v);\nL:\nst.global.32b [%p], %v;\n}\n";

    #[test]
    fn the_front_ends_ir_verifies() {
        assert!(verify(&module(SRC), "the test").is_ok());
    }

    fn kernel(m: &mut Module) -> &mut Function {
        m.functions.iter_mut().find(|f| f.name == "k").unwrap()
    }

    fn fails_with(m: &Module, needle: &str) {
        let errors = verify(m, "the test").expect_err("a broken IR");
        assert!(
            errors.iter().any(|e| e.message.contains(needle)),
            "{needle}: {:?}",
            errors.iter().map(|e| &e.message).collect::<Vec<_>>()
        );
    }

    #[test]
    fn ids_out_of_range_are_found() {
        let mut m = module(SRC);
        let body = kernel(&mut m).body.as_mut().unwrap();
        let mov = body.iter_mut().find(|i| i.op == Opcode::Mov).unwrap();
        mov.ops[0] = Operand::Reg {
            reg: RegId(99),
            swizzle: None,
        };
        fails_with(&m, "register out of range");

        let mut m = module(SRC);
        let body = kernel(&mut m).body.as_mut().unwrap();
        let goto = body.iter_mut().find(|i| i.op == Opcode::Goto).unwrap();
        let last = goto.ops.len() - 1;
        goto.ops[last] = Operand::Label(LabelId(7));
        fails_with(&m, "label out of range");
    }

    #[test]
    fn kinds_forms_and_calls_are_checked() {
        let mut m = module(SRC);
        let f = kernel(&mut m);
        let q = f.regs.iter().position(|r| r.ty == RegType::Pred).unwrap() as u32;
        let body = f.body.as_mut().unwrap();
        let mov = body.iter_mut().find(|i| i.op == Opcode::Mov).unwrap();
        mov.ops[0] = Operand::Reg {
            reg: RegId(q),
            swizzle: None,
        };
        fails_with(&m, "predicate register where a data register goes");

        let mut m = module(SRC);
        let body = kernel(&mut m).body.as_mut().unwrap();
        body.iter_mut().find(|i| i.op == Opcode::Mov).unwrap().form = 200;
        fails_with(&m, "has form 200");

        let mut m = module(SRC);
        let body = kernel(&mut m).body.as_mut().unwrap();
        body.iter_mut()
            .find(|i| i.op == Opcode::Call)
            .unwrap()
            .ops
            .pop();
        fails_with(&m, "with 0 arguments, it takes 1");

        let mut m = module(SRC);
        kernel(&mut m).labels[0].target = 1000;
        fails_with(&m, "points past the body");

        let mut m = module(SRC);
        m.functions[0].body = None;
        fails_with(&m, "has no body");
    }

    #[test]
    fn widths_follow_the_form_and_the_qualifiers() {
        // `mov.32b %v, 1` writing the 64-bit `%p`.
        let mut m = module(SRC);
        let f = kernel(&mut m);
        let p = f.regs.iter().position(|r| r.ty.total_bits() == 64).unwrap() as u32;
        let body = f.body.as_mut().unwrap();
        let mov = body.iter_mut().find(|i| i.op == Opcode::Mov).unwrap();
        mov.ops[0] = Operand::Reg {
            reg: RegId(p),
            swizzle: None,
        };
        fails_with(&m, "64 bits where the form takes 32");

        // `ucmp.lt.64b` on the 32-bit `%v`: the qualifier decides the width.
        let mut m = module(SRC);
        let body = kernel(&mut m).body.as_mut().unwrap();
        let cmp = body.iter_mut().find(|i| i.op == Opcode::Ucmp).unwrap();
        cmp.q.ty = Some(crate::ir::DataType::B64);
        fails_with(&m, "32 bits where the form takes 64");
    }
}
