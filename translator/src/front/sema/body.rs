//! Function bodies: scopes and the names they declare (prog-1 §1.2, prog-2 §2.2-2.4), labels,
//! and the flat instruction list of the IR.
//!
//! Scope rule: a name declared in a scope is visible throughout that scope (also before its
//! declaration) and in nested scopes, where it may be shadowed; labels are function-wide.

use super::decl::{local_var, reg_type};
use super::literal::parse_int;
use super::{select, Ctx};
use crate::front::ast::{Block, FuncDecl, Inst, RegName, Stmt};
use crate::ir::{
    FuncId, Function, FunctionKind, Label, LabelId, LocalId, LocalVar, MemSpace, ParamId, RegDecl,
    RegId, RegType, SpecialReg,
};
use crate::span::Span;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// Most registers one range declaration may create.
pub const MAX_RANGE: u64 = 65536;
/// Most registers one function may declare.
pub const MAX_REGS: usize = 1 << 20;

/// What a `%name` means in a scope.
#[derive(Clone, Copy, Debug)]
pub enum RegLocal {
    /// A register or predicate.
    Reg(RegId),
    /// A kernel parameter.
    Param(ParamId),
}

/// One scope's names.
#[derive(Default)]
pub struct Scope<'a> {
    /// `%` names.
    pub regs: FxHashMap<Cow<'a, str>, RegLocal>,
    /// `@` names.
    pub vars: FxHashMap<&'a str, LocalId>,
}

/// The state of one function while its body is checked.
pub struct FnCx<'a, 'c, 'd> {
    /// Module-wide state.
    pub cx: &'c mut Ctx<'a, 'd>,
    /// The function being checked.
    pub id: FuncId,
    /// Kernel or function.
    pub kind: FunctionKind,
    /// Its return type.
    pub ret: Option<RegType>,
    /// Its registers.
    pub regs: Vec<RegDecl>,
    /// Its memory variables.
    pub locals: Vec<LocalVar>,
    /// Kernel parameters: name and size.
    pub params: Vec<(String, u32)>,
    /// Its labels.
    pub labels: Vec<Label>,
    /// Label names.
    pub label_map: FxHashMap<&'a str, LabelId>,
    /// Open scopes, innermost last.
    pub scopes: Vec<Scope<'a>>,
    /// Whether "undeclared register/label" errors are suppressed (a statement failed to parse
    /// or a register declaration was refused).
    pub quiet: bool,
    /// Whether "undeclared symbol" errors are suppressed (a memory variable was refused).
    pub quiet_syms: bool,
    /// A reusable buffer for the resolved operands of one instruction.
    pub op_buf: Vec<super::operand::ROp<'a>>,
}

impl<'a> FnCx<'a, '_, '_> {
    /// Reports an error.
    pub fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.cx.error(span, msg);
    }

    /// Looks up a `%` name through the open scopes.
    pub fn lookup_reg(&self, name: &str) -> Option<RegLocal> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.regs.get(name).copied())
    }

    /// Looks up an `@` name through the open scopes (not module scope).
    pub fn lookup_var(&self, name: &str) -> Option<LocalId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.vars.get(name).copied())
    }

    fn declare_reg(&mut self, name: Cow<'a, str>, ty: RegType, span: Span) -> bool {
        if SpecialReg::ALL.iter().any(|s| s.as_str() == name.as_ref()) {
            self.error(
                span,
                format!("`%{name}` is a special register and cannot be declared"),
            );
            return false;
        }
        if self.regs.len() >= MAX_REGS {
            self.error(
                span,
                format!("too many registers in one function (more than {MAX_REGS})"),
            );
            return false;
        }
        let scope = self.scopes.last_mut().expect("a scope is open");
        if scope.regs.contains_key(name.as_ref()) {
            self.error(span, format!("`%{name}` is already declared in this scope"));
            return false;
        }
        let id = RegId(self.regs.len() as u32);
        self.regs.push(RegDecl {
            name: name.to_string(),
            ty,
            span,
        });
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .regs
            .insert(name, RegLocal::Reg(id));
        true
    }

    fn declare_names(&mut self, ty: RegType, names: &[RegName<'a>]) {
        for n in names {
            let Some((a, b)) = &n.range else {
                self.declare_reg(Cow::Borrowed(n.name.text), ty, n.name.span);
                continue;
            };
            let (Some(lo), Some(hi)) = (parse_int(a.text), parse_int(b.text)) else {
                self.error(
                    n.span,
                    "register range bounds must be non-negative integers",
                );
                continue;
            };
            if lo.neg || hi.neg || lo.mag > u32::MAX as u128 || hi.mag > u32::MAX as u128 {
                self.error(
                    n.span,
                    "register range bounds must be non-negative 32-bit integers",
                );
                continue;
            }
            let (lo, hi) = (lo.mag as u64, hi.mag as u64);
            if hi <= lo {
                self.error(
                    n.span,
                    format!(
                        "register range `%{}<{}~{}>` is empty",
                        n.name.text, a.text, b.text
                    ),
                );
                continue;
            }
            if hi - lo > MAX_RANGE {
                self.error(
                    n.span,
                    format!("register range of {} registers is too large (at most {MAX_RANGE} per declaration)", hi - lo),
                );
                continue;
            }
            for i in lo..hi {
                if !self.declare_reg(Cow::Owned(format!("{}{i}", n.name.text)), ty, n.span) {
                    break;
                }
            }
        }
    }

    fn declare_block(&mut self, b: &Block<'a>) {
        for s in &b.stmts {
            match s {
                Stmt::Reg { ty, names, .. } => {
                    let rt = match ty {
                        Some(t) => match reg_type(self.cx, t) {
                            Some(rt) => rt,
                            None => {
                                self.quiet = true;
                                continue;
                            }
                        },
                        None => RegType::Pred,
                    };
                    self.declare_names(rt, names);
                }
                Stmt::Var(v) => {
                    let Some(local) = local_var(self.cx, v) else {
                        self.quiet_syms = true;
                        continue;
                    };
                    let scope = self.scopes.last_mut().expect("a scope is open");
                    if scope.vars.contains_key(v.name.text) {
                        self.error(
                            v.name.span,
                            format!("`@{}` is already declared in this scope", v.name.text),
                        );
                        continue;
                    }
                    let id = LocalId(self.locals.len() as u32);
                    self.locals.push(local);
                    self.scopes
                        .last_mut()
                        .expect("a scope is open")
                        .vars
                        .insert(v.name.text, id);
                }
                _ => {}
            }
        }
    }

    fn collect_labels(&mut self, b: &Block<'a>, count: &mut usize) {
        for s in &b.stmts {
            match s {
                Stmt::Inst(_) => *count += 1,
                Stmt::Scope(inner) => self.collect_labels(inner, count),
                Stmt::Label(n) => {
                    if self.label_map.contains_key(n.text) {
                        self.error(
                            n.span,
                            format!("label `{}` is already defined in this function", n.text),
                        );
                        continue;
                    }
                    let id = LabelId(self.labels.len() as u32);
                    self.labels.push(Label {
                        name: n.text.to_string(),
                        target: *count,
                        span: n.span,
                    });
                    self.label_map.insert(n.text, id);
                }
                _ => {}
            }
        }
    }

    fn block(
        &mut self,
        b: &'a Block<'a>,
        out: &mut Vec<crate::ir::Inst>,
        last: &mut Option<&'a Inst<'a>>,
    ) {
        self.scopes.push(Scope::default());
        self.declare_block(b);
        for s in &b.stmts {
            match s {
                Stmt::Inst(i) => {
                    *last = Some(i);
                    if let Some(inst) = select::instruction(self, i) {
                        out.push(inst);
                    }
                }
                Stmt::Scope(inner) => self.block(inner, out, last),
                _ => {}
            }
        }
        self.scopes.pop();
    }
}

/// Checks the body of function `id` and stores it (with its registers, locals and labels).
pub fn function<'a>(cx: &mut Ctx<'a, '_>, id: FuncId, f: &'a FuncDecl<'a>) {
    let Some(body) = &f.body else { return };
    let func: &mut Function = &mut cx.functions[id.0 as usize];
    let kind = func.kind;
    let ret = func.ret;
    let regs = std::mem::take(&mut func.regs);
    let params: Vec<(String, u32)> = func
        .params
        .iter()
        .map(|p| (p.name.clone(), p.size))
        .collect();
    let quiet = f.body_errors || cx.quiet_undeclared;
    let mut fcx = FnCx {
        cx,
        id,
        kind,
        ret,
        regs: Vec::new(),
        locals: Vec::new(),
        params,
        labels: Vec::new(),
        label_map: FxHashMap::default(),
        scopes: vec![Scope::default()],
        quiet,
        quiet_syms: quiet,
        op_buf: Vec::with_capacity(8),
    };
    // Parameters live in the outermost scope of the body.
    for (i, p) in f.params.iter().enumerate() {
        match p {
            crate::front::ast::Param::Kernel { name, .. } => {
                let scope = fcx.scopes.last_mut().expect("a scope is open");
                if scope.regs.contains_key(name.text) {
                    fcx.error(
                        name.span,
                        format!("`%{}` is already declared in this scope", name.text),
                    );
                } else {
                    scope
                        .regs
                        .insert(Cow::Borrowed(name.text), RegLocal::Param(ParamId(i as u32)));
                }
            }
            crate::front::ast::Param::Reg { name, .. } => {
                let decl = regs[i].clone();
                match name {
                    Some(n) => {
                        if !fcx.declare_reg(Cow::Borrowed(n.text), decl.ty, n.span) {
                            fcx.regs.push(decl);
                        }
                    }
                    None => fcx.regs.push(decl),
                }
            }
        }
    }
    let mut count = 0;
    fcx.collect_labels(body, &mut count);
    let mut out = Vec::with_capacity(count);
    let mut last = None;
    fcx.block(body, &mut out, &mut last);
    if let Some(rt) = ret {
        let ok = last.is_some_and(|i| i.mnemonic.text == "return");
        if !ok {
            let at = last.map_or(f.name.span, |i| i.span);
            let ty = super::select::type_name(rt);
            fcx.error(
                at,
                format!("`return` must be the last instruction of non-void function `@{}` (returns {ty})", f.name.text),
            );
        }
    }
    let FnCx {
        regs,
        locals,
        labels,
        ..
    } = fcx;
    let func = &mut cx.functions[id.0 as usize];
    func.regs = regs;
    func.locals = locals;
    func.labels = labels;
    func.body = Some(out);
}

/// The address size of a memory space, as a register type.
pub fn space_bits(space: MemSpace) -> u32 {
    space.address_bits()
}
