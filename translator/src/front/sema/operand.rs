//! Operand resolution: register, variable, function and parameter names to ids (prog-3), with the
//! swizzle rule for names that contain dots and the special registers of arch-4.
//!
//! The result, [`ROp`], still carries literals unconverted: how an immediate is read depends on
//! the instruction form, which is chosen afterwards ([`super::select`]).

use super::body::{FnCx, RegLocal};
use super::Symbol;
use crate::front::ast::{AddrTerm, CallTarget, Name, Number, Operand};
use crate::ir::{FuncId, GlobalId, MemSpace, ParamId, RegId, RegType, SpecialReg, Swizzle, VarRef};
use crate::span::Span;

/// The special register named `name` (without `%`), if any.
pub fn special_reg(name: &str) -> Option<SpecialReg> {
    use SpecialReg::*;
    Some(match name {
        "activemask" => ActiveMask,
        "enqueuedlocalsize" => EnqueuedLocalSize,
        "globaloffset" => GlobalOffset,
        "globalsize" => GlobalSize,
        "groupcount" => GroupCount,
        "groupid" => GroupId,
        "laneid" => LaneId,
        "localid" => LocalId,
        "localsize" => LocalSize,
        "printfbuffer" => PrintfBuffer,
        "subgroupsize" => SubgroupSize,
        "workdim" => WorkDim,
        _ => return None,
    })
}

/// A resolved operand.
#[derive(Clone, Copy, Debug)]
pub enum ROp<'a> {
    /// A register or predicate, maybe through a swizzle, maybe negated.
    Reg {
        /// The register.
        id: RegId,
        /// Its declared type.
        ty: RegType,
        /// The swizzle.
        swz: Option<Swizzle>,
        /// `!` written.
        neg: bool,
        /// The name as written (without `%`).
        name: &'a str,
        /// Where.
        span: Span,
    },
    /// A special register (vector ones always with a component).
    Special {
        /// The register.
        reg: SpecialReg,
        /// `.x`/`.y`/`.z` of vector ones.
        comp: Option<u8>,
        /// `!` written.
        neg: bool,
        /// Where.
        span: Span,
    },
    /// A literal.
    Imm(Number<'a>),
    /// A memory variable.
    Var {
        /// The variable.
        var: VarRef,
        /// Its space.
        space: MemSpace,
        /// The name as written.
        name: &'a str,
        /// Where.
        span: Span,
    },
    /// A function.
    Func {
        /// The function.
        id: FuncId,
        /// Where.
        span: Span,
    },
    /// A kernel parameter named outside an address.
    Param {
        /// The parameter.
        id: ParamId,
        /// Where.
        span: Span,
    },
    /// An address operand.
    Addr {
        /// The base.
        base: Term<'a>,
        /// The offset.
        offset: Option<Term<'a>>,
        /// Where.
        span: Span,
    },
    /// A bare word (label or `void`).
    Word(Name<'a>),
    /// Something that could not be resolved (already reported); matches any operand kind.
    Bad(Span),
}

/// A resolved address term.
#[derive(Clone, Copy, Debug)]
pub enum Term<'a> {
    /// A scalar register.
    Reg {
        /// The register.
        id: RegId,
        /// Its type.
        ty: RegType,
        /// Its name.
        name: &'a str,
        /// Where.
        span: Span,
    },
    /// A memory variable.
    Var {
        /// The variable.
        var: VarRef,
        /// Its space.
        space: MemSpace,
        /// Its name.
        name: &'a str,
        /// Where.
        span: Span,
    },
    /// A kernel parameter.
    Param {
        /// The parameter.
        id: ParamId,
        /// Its name.
        name: &'a str,
        /// Where.
        span: Span,
    },
    /// An integer.
    Imm(Number<'a>),
    /// Unusable (already reported).
    Bad(Span),
}

impl Term<'_> {
    /// Where the term is.
    pub fn span(&self) -> Span {
        match self {
            Term::Reg { span, .. }
            | Term::Var { span, .. }
            | Term::Param { span, .. }
            | Term::Bad(span) => *span,
            Term::Imm(n) => n.span,
        }
    }
}

impl<'a> ROp<'a> {
    /// Where the operand is.
    pub fn span(&self) -> Span {
        match self {
            ROp::Reg { span, .. }
            | ROp::Special { span, .. }
            | ROp::Var { span, .. }
            | ROp::Func { span, .. }
            | ROp::Param { span, .. }
            | ROp::Addr { span, .. }
            | ROp::Bad(span) => *span,
            ROp::Imm(n) => n.span,
            ROp::Word(n) => n.span,
        }
    }
}

impl<'a> FnCx<'a, '_, '_> {
    /// Resolves `%name` (with `!` when `neg`).
    pub fn resolve_reg(&mut self, name: &'a str, neg: bool, span: Span) -> ROp<'a> {
        match self.lookup_reg(name) {
            Some(RegLocal::Reg(id)) => {
                let ty = self.regs[id.0 as usize].ty;
                return ROp::Reg {
                    id,
                    ty,
                    swz: None,
                    neg,
                    name,
                    span,
                };
            }
            Some(RegLocal::Param(id)) => return ROp::Param { id, span },
            None => {}
        }
        if let Some(reg) = special_reg(name) {
            if matches!(reg.ty(), RegType::Vector(..)) {
                self.error(
                    span,
                    format!("special register `%{name}` must be used with `.x`, `.y` or `.z`"),
                );
                return ROp::Bad(span);
            }
            return ROp::Special {
                reg,
                comp: None,
                neg,
                span,
            };
        }
        if let Some((base, sfx)) = name.rsplit_once('.') {
            if let Some(swz) = Swizzle::parse(sfx) {
                if let Some(op) = self.swizzled(base, sfx, swz, neg, name, span) {
                    return op;
                }
            } else if self.lookup_reg(base).is_some() || special_reg(base).is_some() {
                // prog-3 §3.4: `%v.yz` is neither a declared name nor a swizzle.
                if !self.quiet {
                    self.error(
                        span,
                        format!(
                            "undeclared register `%{name}`, and `.{sfx}` is not a swizzle of \
                         `%{base}` (`.x`, `.y`, `.z`, `.w`; `.xy`, `.zw`, `.xyzw` in `mov`)"
                        ),
                    );
                }
                return ROp::Bad(span);
            }
        }
        if !self.quiet {
            self.error(span, format!("undeclared register `%{name}`"));
        }
        ROp::Bad(span)
    }

    fn swizzled(
        &mut self,
        base: &'a str,
        sfx: &str,
        swz: Swizzle,
        neg: bool,
        name: &'a str,
        span: Span,
    ) -> Option<ROp<'a>> {
        if let Some(RegLocal::Reg(id)) = self.lookup_reg(base) {
            let ty = self.regs[id.0 as usize].ty;
            return Some(match ty {
                RegType::Vector(_, n) => {
                    let (first, count) = swz.range();
                    if first + count > n {
                        self.error(
                            span,
                            format!(
                                "swizzle `.{sfx}` is out of range for `%{base}` ({})",
                                super::select::type_name(ty)
                            ),
                        );
                        ROp::Bad(span)
                    } else {
                        ROp::Reg {
                            id,
                            ty,
                            swz: Some(swz),
                            neg,
                            name,
                            span,
                        }
                    }
                }
                _ => {
                    self.error(
                        span,
                        format!("`%{base}` is not a vector register; swizzle `.{sfx}` needs one"),
                    );
                    ROp::Bad(span)
                }
            });
        }
        let reg = special_reg(base)?;
        Some(match (reg.ty(), swz) {
            (RegType::Vector(..), Swizzle::X | Swizzle::Y | Swizzle::Z) => ROp::Special {
                reg,
                comp: Some(swz.range().0),
                neg,
                span,
            },
            (RegType::Vector(..), _) => {
                self.error(
                    span,
                    format!(
                        "special register `%{base}` supports only the `.x`, `.y` and `.z` swizzles"
                    ),
                );
                ROp::Bad(span)
            }
            _ => {
                self.error(
                    span,
                    format!("special register `%{base}` is a scalar and has no swizzle `.{sfx}`"),
                );
                ROp::Bad(span)
            }
        })
    }

    /// Resolves `@name`: a body variable, then a module variable or function.
    pub fn resolve_sym(&mut self, name: &'a str, span: Span) -> ROp<'a> {
        if let Some(id) = self.lookup_var(name) {
            let space = self.locals[id.0 as usize].space;
            return ROp::Var {
                var: VarRef::Local(id),
                space,
                name,
                span,
            };
        }
        match self.cx.symbols.get(name).copied() {
            Some(Symbol::Global(GlobalId(g))) => {
                let space = self.cx.globals[g as usize].space;
                ROp::Var {
                    var: VarRef::Global(GlobalId(g)),
                    space,
                    name,
                    span,
                }
            }
            Some(Symbol::Func(id)) => ROp::Func { id, span },
            None => {
                if self.params.iter().any(|(p, _)| *p == name) {
                    self.error(
                        span,
                        format!("kernel parameter `%{name}` is named with `%`, not `@{name}`"),
                    );
                } else if !self.quiet_syms {
                    self.error(span, format!("undeclared symbol `@{name}`"));
                }
                ROp::Bad(span)
            }
        }
    }

    /// Resolves every operand of an instruction; a call's argument list is flattened after its
    /// target.
    pub fn resolve_operands(&mut self, ops: &'a [Operand<'a>], out: &mut Vec<ROp<'a>>) {
        for op in ops {
            match op {
                Operand::Call { target, args, .. } => {
                    out.push(match target {
                        CallTarget::Reg(n) => self.resolve_reg(n.text, false, n.span),
                        CallTarget::Sym(n) => self.resolve_sym(n.text, n.span),
                    });
                    for a in self.ast.args(*args) {
                        out.push(self.resolve_one(a));
                    }
                }
                other => out.push(self.resolve_one(other)),
            }
        }
    }

    fn resolve_one(&mut self, op: &'a Operand<'a>) -> ROp<'a> {
        match op {
            Operand::Reg {
                name,
                negated,
                span,
            } => self.resolve_reg(name.text, *negated, *span),
            Operand::Sym(n) => self.resolve_sym(n.text, n.span),
            Operand::Num(n) => ROp::Imm(*n),
            Operand::Word(n) => ROp::Word(*n),
            Operand::Call { span, .. } => {
                self.error(*span, "nested argument lists are not allowed");
                ROp::Bad(*span)
            }
            Operand::Addr { base, offset, span } => {
                let base = self.resolve_term(base);
                let offset = offset.as_ref().map(|t| self.resolve_term(t));
                ROp::Addr {
                    base,
                    offset,
                    span: *span,
                }
            }
        }
    }

    fn resolve_term(&mut self, t: &AddrTerm<'a>) -> Term<'a> {
        let op = match t {
            AddrTerm::Reg(n) => self.resolve_reg(n.text, false, n.span),
            AddrTerm::Sym(n) => self.resolve_sym(n.text, n.span),
            AddrTerm::Imm(n) => return Term::Imm(*n),
        };
        match op {
            ROp::Reg {
                swz: None,
                id,
                ty,
                name,
                span,
                ..
            } => Term::Reg { id, ty, name, span },
            ROp::Reg { span, .. } => {
                self.error(
                    span,
                    "an address register must be a scalar register, not a swizzled element",
                );
                Term::Bad(span)
            }
            ROp::Var {
                var,
                space,
                name,
                span,
            } => Term::Var {
                var,
                space,
                name,
                span,
            },
            ROp::Param { id, span } => {
                let name = match t {
                    AddrTerm::Reg(n) | AddrTerm::Sym(n) => n.text,
                    AddrTerm::Imm(n) => n.text,
                };
                Term::Param { id, name, span }
            }
            ROp::Special { span, .. } => {
                self.error(span, "special registers cannot be used in an address");
                Term::Bad(span)
            }
            ROp::Func { span, .. } => {
                self.error(span, "a function name cannot be used in an address");
                Term::Bad(span)
            }
            other => Term::Bad(other.span()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_registers_by_name() {
        for &r in SpecialReg::ALL {
            assert_eq!(special_reg(r.as_str()), Some(r));
        }
        assert_eq!(special_reg("localid.x"), None);
        assert_eq!(special_reg("LocalId"), None);
        assert_eq!(special_reg(""), None);
    }
}
