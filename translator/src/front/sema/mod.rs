//! The validator and resolver: syntax tree to typed IR.
//!
//! Split by concern: [`header`] (`.version`/`.target`), [`decl`] (memory variables,
//! initializers, register types, kernel and function signatures), [`body`] (scopes, registers,
//! labels, instruction lists), [`operand`] (name resolution of operands), [`select`] (matching
//! an instruction against the forms of [`crate::isa`], operand kinds and widths, immediates),
//! [`restrict`] (the per-instruction restrictions of the spec) and [`literal`] (numbers).
//!
//! Every error is reported with its own message at the offending position; a failed item does
//! not stop the others from being checked. Where a declaration failed to parse, "undeclared"
//! errors that would follow from it are suppressed.

pub mod body;
pub mod convert;
pub mod decl;
pub mod header;
pub mod literal;
pub mod operand;
pub mod restrict;
pub mod select;
pub mod suggest;

use super::ast;
use crate::diag::Diagnostic;
use crate::ir::{self, FuncId, GlobalId, Target};
use crate::span::Span;
use rustc_hash::FxHashMap;

/// A module-scope symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A `.global`/`.const` variable.
    Global(GlobalId),
    /// A kernel or function.
    Func(FuncId),
}

/// Module-wide state of the validator.
pub struct Ctx<'a, 'd> {
    /// Where errors go.
    pub diags: &'d mut Vec<Diagnostic>,
    /// The declared target (100 when the header is broken).
    pub target: Target,
    /// Module-scope names.
    pub symbols: FxHashMap<&'a str, Symbol>,
    /// Whether "undeclared symbol" errors are suppressed (a module item failed to parse).
    pub quiet_undeclared: bool,
    /// By function id: whether it is a kernel (known before the signatures are checked, for
    /// initializers that name a function).
    pub is_kernel: Vec<bool>,
    /// Module variables, by id.
    pub globals: Vec<ir::GlobalVar>,
    /// Kernels and functions, by id (bodies filled in last).
    pub functions: Vec<ir::Function>,
    /// The `%` name table, reused from function to function.
    pub reg_names: body::RegNames,
    /// The resolved-operand buffer, reused from function to function.
    pub op_buf: Vec<operand::ROp<'a>>,
    /// The other buffers of a function's check, reused from function to function.
    pub fn_bufs: body::FnBufs<'a>,
    /// Mnemonic spellings seen so far, to their index in `mnemonic_infos`.
    pub mnemonics: FxHashMap<&'a str, u32>,
    /// What each mnemonic spelling seen so far means.
    pub mnemonic_infos: Vec<select::Mnemonic>,
}

impl Ctx<'_, '_> {
    /// Reports an error.
    pub fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }
}

/// Validates a parsed module; errors go to `diags`. The returned module is meaningful only when
/// no error was reported.
pub fn check<'a>(_src: &'a str, m: &'a ast::Module<'a>, diags: &mut Vec<Diagnostic>) -> ir::Module {
    let mut cx = Ctx {
        diags,
        target: Target::T100,
        symbols: FxHashMap::default(),
        quiet_undeclared: m.had_errors,
        is_kernel: Vec::new(),
        globals: Vec::new(),
        functions: Vec::new(),
        reg_names: body::RegNames::default(),
        op_buf: Vec::with_capacity(16),
        fn_bufs: body::FnBufs::default(),
        mnemonics: FxHashMap::default(),
        mnemonic_infos: Vec::new(),
    };
    let (version, target) = header::check(&mut cx, &m.items);
    cx.target = target;

    // Declare every module symbol first: initializers and calls may refer forward.
    let mut gid = 0u32;
    let mut fid = 0u32;
    for item in &m.items {
        let (name, sym) = match item {
            ast::Item::Var(v) => {
                gid += 1;
                (v.name, Symbol::Global(GlobalId(gid - 1)))
            }
            ast::Item::Func(f) => {
                fid += 1;
                cx.is_kernel.push(f.kind == ast::FuncKindWord::Kernel);
                (f.name, Symbol::Func(FuncId(fid - 1)))
            }
            _ => continue,
        };
        if cx.symbols.contains_key(name.text) {
            cx.error(
                name.span,
                format!("`@{}` is already declared in this module", name.text),
            );
        } else {
            cx.symbols.insert(name.text, sym);
        }
    }

    for item in &m.items {
        if let ast::Item::Var(v) = item {
            let g = decl::global_var(&mut cx, v);
            cx.globals.push(g);
        }
    }
    for item in &m.items {
        if let ast::Item::Func(f) = item {
            let func = decl::signature(&mut cx, f);
            cx.functions.push(func);
        }
    }
    let mut id = 0u32;
    for item in &m.items {
        if let ast::Item::Func(f) = item {
            body::function(&mut cx, m, FuncId(id), f);
            id += 1;
        }
    }
    ir::Module {
        version,
        target,
        globals: cx.globals,
        functions: cx.functions,
    }
}
