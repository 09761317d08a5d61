//! What is left of a member function: a wrapper calling the state machine with its index.

use super::bug;
use super::machine::Machine;
use super::text::{asm, slot_text};
use crate::diag::Diagnostic;
use crate::ir::{Bits, FuncId, Function, LocalId, Operand, RegType};
use crate::span::SourceFile;
use std::sync::Arc;

impl Machine<'_> {
    /// Member `j`'s new body: call the state machine with its index and its parameters.
    pub(super) fn wrapper(&mut self, j: usize, id: FuncId) -> Result<Function, Vec<Diagnostic>> {
        let g = &self.module.functions[id.0 as usize];
        let mut f = g.clone();
        f.locals.clear();
        f.labels.clear();
        let span = g.span;
        let b32 = RegType::Scalar(Bits::B32);
        let e = f.push_reg("cycle.entry", b32, span);
        let mut args = vec![Operand::Reg {
            reg: e,
            swizzle: None,
        }];
        for (k, &m) in self.members.iter().enumerate() {
            let h = &self.module.functions[m.0 as usize];
            for &p in &h.reg_params {
                let r = if k == j {
                    p
                } else {
                    f.push_reg("cycle.unused", h.regs[p.0 as usize].ty, span)
                };
                let op = match h.regs[p.0 as usize].ty {
                    RegType::Pred => Operand::Pred {
                        reg: r,
                        negated: false,
                    },
                    _ => Operand::Reg {
                        reg: r,
                        swizzle: None,
                    },
                };
                args.push(op);
            }
        }
        let result = self.ret.map(|t| f.push_reg("cycle.result", t, span));
        let ids = (LocalId(0), self.record);
        let mut body = asm(
            &f.regs,
            None,
            &format!("mov.32b %r{}, {j};", e.0),
            span,
            ids,
            None,
        )?;
        // The call: its form and qualifiers from a parsed one.
        let tmpl = ".version 0.1;\n.target 100;\n.function void @g() { return; }\n\
                    .function void @t() {\n  call void, @g();\n}\n";
        let file = Arc::new(SourceFile::new("<call cycle>", tmpl));
        let m = crate::check(&file).map_err(|d| bug(d.render()))?;
        let mut call = m.functions[1]
            .body
            .as_ref()
            .and_then(|b| b.first().cloned())
            .ok_or_else(|| bug("no call template"))?;
        call.span = span;
        call.ops.clear();
        call.ops.push(match (result, self.ret) {
            (Some(r), Some(RegType::Pred)) => Operand::Pred {
                reg: r,
                negated: false,
            },
            (Some(r), _) => Operand::Reg {
                reg: r,
                swizzle: None,
            },
            _ => Operand::Void,
        });
        call.ops.push(Operand::Func(self.id));
        call.ops.extend(args);
        body.push(call);
        let ret_text = match (g.ret, result) {
            (Some(t), Some(r)) if self.slot_return => {
                // The machine returned the address of the value.
                let v = f.push_reg("cycle.value", t, span);
                let t32 = f.push_reg("cycle.t", RegType::Scalar(Bits::B32), span);
                let wide = match t {
                    RegType::Scalar(Bits::B128) => {
                        f.push_reg("cycle.wide", RegType::Vector(Bits::B64, 2), span)
                            .0
                    }
                    _ => 0,
                };
                let (value, addr) = (format!("%r{}", v.0), format!("%r{}", r.0));
                let load = slot_text(t, &value, &addr, 0, false, t32.0, wide);
                format!("{load}return %r{};", v.0)
            }
            (Some(_), Some(r)) => format!("return %r{};", r.0),
            _ => "return;".to_string(),
        };
        body.extend(asm(&f.regs, g.ret, &ret_text, span, ids, None)?);
        f.body = Some(body);
        Ok(f)
    }
}
