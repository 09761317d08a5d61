//! Function bodies: scopes and the names they declare (prog-1 §1.2, prog-2 §2.2-2.4), labels,
//! and the flat instruction list of the IR.
//!
//! Scope rule: a name declared in a scope is visible throughout that scope (also before its
//! declaration) and in nested scopes, where it may be shadowed; labels are function-wide.
//!
//! The `%` names of all open scopes share one hash table ([`RegNames`]): a name maps to its
//! innermost binding, and each binding remembers the one it shadows, so a lookup hashes the name
//! once whatever the nesting, and closing a scope restores the shadowed bindings. The table keeps
//! no strings of its own: a binding's name is the register's name in the IR (a range of the
//! function's one string of register names) or the kernel parameter's in the source.

use super::decl::{local_var, reg_type};
use super::literal::parse_int;
use super::operand::special_reg;
use super::{select, Ctx};
use crate::front::ast::{self, Block, FuncDecl, Inst, RegName, Stmt};
use crate::ir::{
    FuncId, Function, FunctionKind, Label, LabelId, LocalId, LocalVar, MemSpace, NameRange,
    ParamId, RegDecl, RegId, RegType,
};
use crate::span::Span;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

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

/// One scope's `@` names (its `%` names are in [`RegNames`]).
#[derive(Default)]
pub struct Scope<'a> {
    /// `@` names.
    pub vars: FxHashMap<&'a str, LocalId>,
}

/// The lists and maps of a function's check that are kept in [`Ctx`] and reused from function
/// to function, so that checking a function allocates only what its IR keeps.
#[derive(Default)]
pub struct FnBufs<'a> {
    params: Vec<(&'a str, u32)>,
    label_map: FxHashMap<&'a str, LabelId>,
    scopes: Vec<Scope<'a>>,
    spare: Vec<Scope<'a>>,
}

/// No binding.
const NONE: u32 = u32::MAX;

/// One `%` name declared in one scope.
#[derive(Clone, Copy, Debug)]
struct Binding {
    /// What it names.
    local: RegLocal,
    /// The depth of its scope (0: the parameters' scope).
    depth: u32,
    /// The binding of the same name it shadows, or [`NONE`].
    prev: u32,
}

/// The `%` names of the open scopes of a function: one hash table from a name to its innermost
/// binding (by index), and the bindings in declaration order (a stack: closing a scope pops its
/// bindings). Kept in [`Ctx`] and reused from function to function.
#[derive(Default)]
pub struct RegNames {
    table: Table,
    bindings: Vec<Binding>,
}

impl RegNames {
    fn clear(&mut self) {
        self.table.clear();
        self.bindings.clear();
    }
}

/// An empty slot of a [`Table`].
const EMPTY: u32 = u32::MAX;
/// A slot of a [`Table`] whose entry was removed.
const GONE: u32 = u32::MAX - 1;

/// The hash table of [`RegNames`]: open addressing with linear probing, each slot the upper
/// half of a name's hash (which also places it) and a binding index. The comparison of a
/// lookup runs only for slots with the same hash half, and inlines into the lookup.
#[derive(Default)]
struct Table {
    /// A power of two of slots (or none), at most three quarters of them not [`EMPTY`].
    slots: Vec<(u32, u32)>,
    /// The slots that are not [`EMPTY`].
    used: usize,
}

impl Table {
    /// Largest table kept from one function to the next.
    const KEEP: usize = 1024;

    fn clear(&mut self) {
        if self.slots.len() > Self::KEEP {
            self.slots = Vec::new();
        } else {
            self.slots.fill((0, EMPTY));
        }
        self.used = 0;
    }

    /// The slot of the entry with `hash` whose binding satisfies `eq`.
    #[inline(always)]
    fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let tag = (hash >> 32) as u32;
        let mut i = tag as usize & mask;
        loop {
            let (t, b) = self.slots[i];
            if b == EMPTY {
                return None;
            }
            if t == tag && b != GONE && eq(b) {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds binding `b` for a name with `hash` that has no entry.
    fn insert(&mut self, hash: u64, b: u32) {
        if (self.used + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let tag = (hash >> 32) as u32;
        let mut i = tag as usize & mask;
        while !matches!(self.slots[i].1, EMPTY | GONE) {
            i = (i + 1) & mask;
        }
        if self.slots[i].1 == EMPTY {
            self.used += 1;
        }
        self.slots[i] = (tag, b);
    }

    /// Rebuilds the table with room for twice its entries (and no [`GONE`] slots).
    fn grow(&mut self) {
        let live: Vec<(u32, u32)> = self
            .slots
            .iter()
            .copied()
            .filter(|&(_, b)| b != EMPTY && b != GONE)
            .collect();
        let len = ((live.len() + 1) * 2).next_power_of_two().max(16);
        self.slots = vec![(0, EMPTY); len];
        self.used = live.len();
        let mask = len - 1;
        for (tag, b) in live {
            let mut i = tag as usize & mask;
            while self.slots[i].1 != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = (tag, b);
        }
    }
}

/// Appends `i` in decimal to `out` (`%h<0~5>` declares `h0` to `h4`), without `format!`.
fn push_number(out: &mut String, i: u64) {
    let mut digits = [0u8; 20];
    let mut n = i;
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| d as char));
}

/// The number of decimal digits of `n`.
fn decimal_digits(mut n: u128) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// The hash of a name.
fn hash_name(name: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(name);
    h.finish()
}

/// Whether two names are equal; register names are short, and a byte loop beats a call to
/// `memcmp` for them.
#[inline(always)]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The name a binding binds; `reg_names` holds the names of `regs`.
#[inline(always)]
fn name_of<'s>(
    regs: &[RegDecl],
    reg_names: &'s str,
    params: &[(&'s str, u32)],
    b: &Binding,
) -> &'s [u8] {
    match b.local {
        RegLocal::Reg(id) => {
            let n = regs[id.0 as usize].name;
            let start = n.start as usize;
            reg_names
                .as_bytes()
                .get(start..start + n.len as usize)
                .unwrap_or_default()
        }
        RegLocal::Param(id) => params[id.0 as usize].0.as_bytes(),
    }
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
    /// Their names, one after the other (see [`Function::reg_names`]).
    pub reg_names: String,
    /// Its memory variables.
    pub locals: Vec<LocalVar>,
    /// The syntax tree (for its arenas).
    pub ast: &'a ast::Module<'a>,
    /// Kernel parameters: name and size.
    pub params: Vec<(&'a str, u32)>,
    /// Its labels.
    pub labels: Vec<Label>,
    /// Label names.
    pub label_map: FxHashMap<&'a str, LabelId>,
    /// Open scopes, innermost last.
    pub scopes: Vec<Scope<'a>>,
    /// Closed scopes (their maps emptied), reused by the next scopes opened.
    spare: Vec<Scope<'a>>,
    /// The `%` names of the open scopes.
    names: RegNames,
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
        let name = name.as_bytes();
        self.find_binding(hash_name(name), name)
            .map(|i| self.names.bindings[i as usize].local)
    }

    /// The depth of the innermost open scope.
    fn depth(&self) -> u32 {
        self.scopes.len() as u32 - 1
    }

    /// Finds the visible binding of `name` (hashed to `hash`).
    #[inline(always)]
    fn find_binding(&self, hash: u64, name: &[u8]) -> Option<u32> {
        let (regs, params, bindings) = (&self.regs, &self.params, &self.names.bindings);
        let (reg_names, table) = (self.reg_names.as_str(), &self.names.table);
        table
            .find(hash, |i| {
                same_name(
                    name_of(regs, reg_names, params, &bindings[i as usize]),
                    name,
                )
            })
            .map(|slot| table.slots[slot].1)
    }

    /// Makes `local` (whose name, hashed to `hash`, is already where [`name_of`] finds it) the
    /// visible binding of its name in the innermost scope; `shadowed` is the binding it hides.
    fn bind(&mut self, hash: u64, local: RegLocal, shadowed: Option<u32>) {
        let depth = self.depth();
        let index = self.names.bindings.len() as u32;
        self.names.bindings.push(Binding {
            local,
            depth,
            prev: shadowed.unwrap_or(NONE),
        });
        match shadowed {
            Some(old) => {
                if let Some(slot) = self.names.table.find(hash, |i| i == old) {
                    self.names.table.slots[slot].1 = index;
                }
            }
            None => self.names.table.insert(hash, index),
        }
    }

    /// Opens a scope.
    fn push_scope(&mut self) {
        let scope = self.spare.pop().unwrap_or_default();
        self.scopes.push(scope);
    }

    /// Closes the innermost scope: its bindings go, the ones they shadowed come back.
    fn pop_scope(&mut self) {
        let depth = self.depth();
        while let Some(&b) = self.names.bindings.last() {
            if b.depth != depth {
                break;
            }
            let index = self.names.bindings.len() as u32 - 1;
            let hash = hash_name(name_of(&self.regs, &self.reg_names, &self.params, &b));
            if let Some(slot) = self.names.table.find(hash, |i| i == index) {
                self.names.table.slots[slot].1 = if b.prev == NONE { GONE } else { b.prev };
            }
            self.names.bindings.pop();
        }
        if let Some(mut scope) = self.scopes.pop() {
            scope.vars.clear();
            self.spare.push(scope);
        }
    }

    /// Looks up an `@` name through the open scopes (not module scope).
    pub fn lookup_var(&self, name: &str) -> Option<LocalId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.vars.get(name).copied())
    }

    /// Declares a register named `name` in the innermost scope.
    fn declare_reg(&mut self, name: &str, ty: RegType, span: Span) -> bool {
        let start = self.reg_names.len();
        self.reg_names.push_str(name);
        self.declare_pushed_reg(start, ty, span)
    }

    /// Declares a register in the innermost scope whose name is `self.reg_names` from byte
    /// `start` on (just appended); if the declaration is refused, the name is removed again.
    fn declare_pushed_reg(&mut self, start: usize, ty: RegType, span: Span) -> bool {
        let name = self.reg_names.get(start..).unwrap_or_default();
        let refused = if let Some(msg) = special_name(name) {
            Some(msg)
        } else if self.regs.len() >= MAX_REGS {
            Some(format!(
                "too many registers in one function (more than {MAX_REGS})"
            ))
        } else {
            None
        };
        let mut hash = 0;
        let mut shadowed = None;
        let refused = refused.or_else(|| {
            hash = hash_name(name.as_bytes());
            shadowed = self.find_binding(hash, name.as_bytes());
            shadowed
                .is_some_and(|b| self.names.bindings[b as usize].depth == self.depth())
                .then(|| format!("`%{name}` is already declared in this scope"))
        });
        if let Some(msg) = refused {
            self.reg_names.truncate(start);
            self.error(span, msg);
            return false;
        }
        let id = RegId(self.regs.len() as u32);
        self.regs.push(RegDecl {
            name: NameRange {
                start: start as u32,
                len: (self.reg_names.len() - start) as u32,
            },
            ty,
            span,
        });
        self.bind(hash, RegLocal::Reg(id), shadowed);
        true
    }

    /// Declares kernel parameter `id` (named `self.params[id].0`) in the innermost scope.
    fn declare_param(&mut self, id: ParamId, span: Span) {
        let name = self.params[id.0 as usize].0;
        if let Some(msg) = special_name(name) {
            self.error(span, msg);
            return;
        }
        let hash = hash_name(name.as_bytes());
        let shadowed = self.find_binding(hash, name.as_bytes());
        if shadowed.is_some_and(|b| self.names.bindings[b as usize].depth == self.depth()) {
            self.error(span, format!("`%{name}` is already declared in this scope"));
            return;
        }
        self.bind(hash, RegLocal::Param(id), shadowed);
    }

    fn declare_names(&mut self, ty: RegType, names: &'a [RegName<'a>]) {
        for n in names {
            let Some((a, b)) = &n.range else {
                self.declare_reg(n.name.text, ty, n.name.span);
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
                let start = self.reg_names.len();
                self.reg_names.push_str(n.name.text);
                push_number(&mut self.reg_names, i);
                if !self.declare_pushed_reg(start, ty, n.span) {
                    break;
                }
            }
        }
    }

    fn declare_block(&mut self, b: &Block) {
        let ast = self.ast;
        for s in ast.stmts(b.stmts) {
            match s {
                Stmt::Reg { ty, names, .. } => {
                    let names = ast.reg_names(*names);
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

    /// Defines the labels of `b` and its nested scopes; counts their instructions into `count`
    /// and, roughly, their registers into `regs` and the bytes of their names into
    /// `name_bytes` (to size the lists).
    fn collect_labels(
        &mut self,
        b: &Block,
        count: &mut usize,
        regs: &mut usize,
        name_bytes: &mut usize,
    ) {
        let ast = self.ast;
        for s in ast.stmts(b.stmts) {
            match s {
                Stmt::Inst(_) => *count += 1,
                Stmt::Scope(inner) => self.collect_labels(inner, count, regs, name_bytes),
                Stmt::Reg { names, .. } => {
                    for n in ast.reg_names(*names) {
                        let (k, digits) = match &n.range {
                            None => (1, 0),
                            Some((a, b)) => match (parse_int(a.text), parse_int(b.text)) {
                                (Some(lo), Some(hi)) if hi.mag > lo.mag => (
                                    (hi.mag - lo.mag).min(MAX_RANGE as u128) as usize,
                                    decimal_digits(hi.mag),
                                ),
                                _ => (0, 0),
                            },
                        };
                        *regs += k;
                        *name_bytes += k * (n.name.text.len() + digits);
                    }
                }
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
        b: &Block,
        out: &mut Vec<crate::ir::Inst>,
        last: &mut Option<&'a Inst<'a>>,
    ) {
        self.push_scope();
        self.block_in_scope(b, out, last);
        self.pop_scope();
    }

    /// Declares `b`'s names in the innermost open scope and checks its statements: a
    /// function's body shares the scope of its parameters (spec-notes §11: redeclaring a
    /// parameter at the body's top level is a duplicate), a nested `{ }` opens its own.
    fn block_in_scope(
        &mut self,
        b: &Block,
        out: &mut Vec<crate::ir::Inst>,
        last: &mut Option<&'a Inst<'a>>,
    ) {
        self.declare_block(b);
        let ast = self.ast;
        for s in ast.stmts(b.stmts) {
            match s {
                Stmt::Inst(i) => {
                    *last = Some(i);
                    select::instruction(self, i, out);
                }
                Stmt::Scope(inner) => self.block(inner, out, last),
                _ => {}
            }
        }
    }

    /// Declares a function's parameters in the outermost scope of its body: kernel
    /// parameters by id, register parameters as the signature declared them (`param_regs`),
    /// their names moved to this function's names.
    fn declare_params(&mut self, f: &'a FuncDecl<'a>, param_regs: &[RegDecl]) {
        for (i, p) in f.params.iter().enumerate() {
            match p {
                ast::Param::Kernel { name, .. } => {
                    self.declare_param(ParamId(i as u32), name.span);
                }
                ast::Param::Reg { name, .. } => {
                    // The signature's declaration, its name moved to this function's names.
                    let mut decl = param_regs[i];
                    match name {
                        Some(n) => {
                            if !self.declare_reg(n.text, decl.ty, n.span) {
                                decl.name = NameRange::push(&mut self.reg_names, n.text);
                                self.regs.push(decl);
                            }
                        }
                        None => {
                            decl.name = NameRange::default();
                            self.regs.push(decl);
                        }
                    }
                }
            }
        }
    }

    /// A non-void function must end with `return` (prog-4 §4.4).
    fn check_return(&mut self, f: &FuncDecl<'_>, rt: RegType, last: Option<&Inst<'_>>) {
        let ok = last.is_some_and(|i| i.mnemonic.text == "return");
        if !ok {
            let at = last.map_or(f.name.span, |i| i.span);
            let ty = super::select::type_name(rt);
            self.error(
                at,
                format!("`return` must be the last instruction of non-void function `@{}` (returns {ty})", f.name.text),
            );
        }
    }
}

/// Checks the body of function `id` and stores it (with its registers, locals and labels).
pub fn function<'a>(
    cx: &mut Ctx<'a, '_>,
    ast: &'a ast::Module<'a>,
    id: FuncId,
    f: &'a FuncDecl<'a>,
) {
    let Some(body) = &f.body else { return };
    let func: &mut Function = &mut cx.functions[id.0 as usize];
    let kind = func.kind;
    let ret = func.ret;
    // The signature's registers (the parameters) stay in the function while its body is
    // checked: a recursive call reads them.
    let param_regs = func.regs.clone();
    let FnBufs {
        mut params,
        mut label_map,
        mut scopes,
        spare,
    } = std::mem::take(&mut cx.fn_bufs);
    // Kernel parameters, in order: `signature` made one IR parameter of each.
    params.clear();
    params.extend(
        f.params
            .iter()
            .filter_map(|p| match p {
                ast::Param::Kernel { name, .. } => Some(name.text),
                ast::Param::Reg { .. } => None,
            })
            .zip(func.params.iter().map(|p| p.size)),
    );
    label_map.clear();
    scopes.clear();
    let quiet = f.body_errors || cx.quiet_undeclared;
    let mut names = std::mem::take(&mut cx.reg_names);
    names.clear();
    let op_buf = std::mem::take(&mut cx.op_buf);
    let mut fcx = FnCx {
        cx,
        id,
        kind,
        ret,
        regs: Vec::new(),
        reg_names: String::new(),
        locals: Vec::new(),
        ast,
        params,
        labels: Vec::new(),
        label_map,
        scopes,
        spare,
        names,
        quiet,
        quiet_syms: quiet,
        op_buf,
    };
    fcx.push_scope();
    fcx.declare_params(f, &param_regs);
    let (mut count, mut regs, mut name_bytes) = (0, 0, 0);
    fcx.collect_labels(body, &mut count, &mut regs, &mut name_bytes);
    fcx.regs.reserve(regs.min(MAX_REGS));
    fcx.reg_names.reserve(name_bytes.min(MAX_REGS * 8));
    let mut out = Vec::with_capacity(count);
    let mut last = None;
    fcx.block_in_scope(body, &mut out, &mut last);
    if let Some(rt) = ret {
        fcx.check_return(f, rt, last);
    }
    // The parameters' (and the body's) scope is still open; its map goes back empty like
    // the others.
    for mut scope in fcx.scopes.drain(..) {
        scope.vars.clear();
        fcx.spare.push(scope);
    }
    let FnCx {
        regs,
        reg_names,
        locals,
        labels,
        mut names,
        op_buf,
        params,
        label_map,
        scopes,
        spare,
        ..
    } = fcx;
    names.clear();
    cx.reg_names = names;
    cx.op_buf = op_buf;
    cx.fn_bufs = FnBufs {
        params,
        label_map,
        scopes,
        spare,
    };
    let func = &mut cx.functions[id.0 as usize];
    func.regs = regs;
    func.reg_names = reg_names;
    func.locals = locals;
    func.labels = labels;
    func.body = Some(out);
}

/// Why `%name` cannot be declared (spec-notes §21), if it names a special register or one of
/// its components: a dotted name wins over a swizzle (§1), so a declared `%localid.x` would
/// hide the read-only component.
fn special_name(name: &str) -> Option<String> {
    if special_reg(name).is_some() {
        return Some(format!(
            "`%{name}` is a special register and cannot be declared"
        ));
    }
    let (base, sfx) = name.rsplit_once('.')?;
    (special_reg(base).is_some() && crate::ir::Swizzle::parse(sfx).is_some()).then(|| {
        format!(
            "`%{name}` names a component of the special register `%{base}` and cannot be declared"
        )
    })
}

/// The address size of a memory space, as a register type.
pub fn space_bits(space: MemSpace) -> u32 {
    space.address_bits()
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_finds_inserts_and_forgets() {
        let mut t = super::Table::default();
        let hash = |k: u32| (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 << 40;
        for round in 0..3 {
            for k in 0..5000u32 {
                t.insert(hash(k), k);
            }
            for k in 0..5000u32 {
                assert_eq!(t.find(hash(k), |b| b == k).map(|s| t.slots[s].1), Some(k));
            }
            // Forget the odd ones, as a closed scope does.
            for k in (1..5000u32).step_by(2) {
                let s = t.find(hash(k), |b| b == k).expect("present");
                t.slots[s].1 = super::GONE;
            }
            for k in 0..5000u32 {
                assert_eq!(
                    t.find(hash(k), |b| b == k).is_some(),
                    k % 2 == 0,
                    "round {round}"
                );
            }
            t.clear();
            assert_eq!(t.find(hash(0), |_| true), None);
        }
    }

    #[test]
    fn numbered_names() {
        let numbered = |base: &str, i| {
            let mut s = base.to_string();
            super::push_number(&mut s, i);
            s
        };
        assert_eq!(numbered("h", 0), "h0");
        assert_eq!(numbered("t", 65535), "t65535");
        assert_eq!(numbered("", u64::MAX), u64::MAX.to_string());
        assert_eq!(super::decimal_digits(0), 1);
        assert_eq!(super::decimal_digits(10), 2);
        assert_eq!(super::decimal_digits(u128::MAX), 39);
    }
}
