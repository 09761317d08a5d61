//! Linking: the modules of a program (prog-1 §1.1) into one typed-IR module.
//!
//! Owns: binding every `.import` to the one `.export` of its name in the set (prog-2 §2.5.2,
//! prog-4 §4.3.1), the checks of that binding, and the merge of the modules' IR into one
//! [`ir::Module`] whose later stages (layout, the SPIR-V back end, the reference interpreter)
//! see one module: one globals arena, one function-id space, one kernel namespace.
//! Must not: parse, validate instructions, lay out memory or emit SPIR-V.
//!
//! Vulkan has no dynamic linking, so the program is linked before translation: each module
//! is checked once by the front end, the linker renumbers the definitions of module `k` after
//! those of modules `0..k`, drops the imports and points every use of an import at its export
//! (one pass over every instruction), and the back end translates the linked module once. An
//! imported variable is therefore the exported variable itself (one storage, initialized
//! from the export), and an imported function is the exported function (a direct
//! `OpFunctionCall`; its address, the small id of [`crate::layout::function_address`], is one
//! id in the whole program, so function pointers cross modules).
//!
//! Spans stay meaningful: module `k`'s spans are moved by the base of its file in the
//! program's [`SourceMap`], so a diagnostic of any later stage names the right file.
//!
//! Errors, at the import (or the second definition) with a note at the export (or the first):
//! an unresolved import, a name exported twice, a variable import whose space, size or
//! alignment differs from its export, a function import whose parameter or return types
//! differ, an import that names a kernel or a symbol of the other kind, two kernels of one
//! name, and one `.host_access` name given to two variables (or two names to one).

use crate::diag::{Diagnostic, Diagnostics};
use crate::front::sema::select::type_name;
use crate::ir::{
    self, AddrBase, FuncId, Function, GlobalId, GlobalVar, InitItem, Linkage, Operand, SymbolRef,
    VarRef,
};
use crate::span::{SourceFile, SourceMap, Span};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A linked program: its modules as one IR module, and the files its spans point into.
#[derive(Clone, Debug)]
pub struct Program {
    /// The linked module: every definition of every module, imports bound to their exports.
    pub module: ir::Module,
    /// The source files, in link order.
    pub sources: SourceMap,
}

/// Checks each file with the front end, then links them (in this order) into one program.
/// A single file is linked too, so that an import nothing exports is refused rather than left
/// undefined. All front-end errors of every file are reported; the link is checked only when
/// every file is valid.
///
/// Cost: the front end of each file (linear in its size), a pass over the modules'
/// declarations and the memory layout; no I/O. Errors: no file, or more than 4 GiB of source in all; every
/// front-end diagnostic of every file; else every link error (an import nothing exports or
/// that names a kernel, declarations that differ, a name exported twice, a kernel defined
/// twice, clashing `.host_access` names); else the memory layout's limits
/// ([`crate::layout::layout`]: a globals arena past [`crate::layout::MAX_ARENA`], shared or
/// private memory past 32-bit addresses).
pub fn link(files: &[Arc<SourceFile>]) -> Result<Program, Diagnostics> {
    let _span = tracing::debug_span!("link", files = files.len()).entered();
    let Some(sources) = SourceMap::new(files) else {
        let (file, message) = match files.first() {
            Some(f) => (f.clone(), "the program's source files exceed 4 GiB in all"),
            None => (
                Arc::new(SourceFile::new("<program>", "")),
                "a program needs at least one module",
            ),
        };
        let error = Diagnostic::error(Span::default(), message);
        return Err(Diagnostics::new(file, vec![error]));
    };
    let mut modules = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for (k, file) in files.iter().enumerate() {
        match crate::front::check(file) {
            Ok(m) => modules.push(m),
            Err(d) => {
                let base = sources.base(k);
                errors.extend(d.errors.into_iter().map(|e| e.shifted(base)));
            }
        }
    }
    if errors.is_empty() {
        match link_modules(&sources, modules) {
            // The memory layout's limits are the program's: `check` reports them too.
            Ok(module) => match crate::layout::check_limits(&module) {
                Ok(()) => return Ok(Program { module, sources }),
                Err(e) => errors = vec![Diagnostic::error(e.span, e.message)],
            },
            Err(e) => errors = e,
        }
    }
    Err(Diagnostics { sources, errors })
}

/// Links checked modules, module `k` being file `k` of `sources`: the linked module, or every
/// link error (spans in `sources`' space). What [`link()`] does after the front end; linear in
/// the modules' size.
pub fn link_modules(
    sources: &SourceMap,
    modules: Vec<ir::Module>,
) -> Result<ir::Module, Vec<Diagnostic>> {
    let bases: Vec<u32> = (0..modules.len()).map(|k| sources.base(k)).collect();
    let mut plan = Plan::new(&modules, &bases)?;
    let mut out = ir::Module {
        version: modules.first().map_or((0, 1), |m| m.version),
        target: modules
            .iter()
            .map(|m| m.target)
            .max()
            .unwrap_or(ir::Target::T100),
        globals: Vec::with_capacity(plan.host_access.len()),
        functions: Vec::with_capacity(plan.functions),
    };
    for (k, m) in modules.into_iter().enumerate() {
        let remap = Remap {
            globals: &plan.globals[k],
            funcs: &plan.funcs[k],
            base: bases[k],
        };
        let identity = remap.is_identity();
        for mut g in m.globals {
            if g.linkage == Linkage::Import {
                continue;
            }
            if !identity {
                remap.global_var(&mut g);
            }
            g.host_access = std::mem::take(&mut plan.host_access[out.globals.len()]);
            out.globals.push(g);
        }
        for mut f in m.functions {
            if f.linkage == Linkage::Import {
                continue;
            }
            if !identity {
                remap.function(&mut f);
            }
            out.functions.push(f);
        }
    }
    Ok(out)
}

/// The unresolved-import error of an import named `name` at `span` (also what the back end
/// and the reference interpreter say of a module that was not linked).
pub fn unresolved(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        span,
        format!("unresolved import `@{name}`: no module of the program exports it"),
    )
}

/// The [`unresolved`] errors of every import left in `module` (none once it is linked).
pub fn unresolved_imports(module: &ir::Module) -> Vec<Diagnostic> {
    let globals = module.globals.iter().map(|g| (g.linkage, &g.name, g.span));
    let funcs = module
        .functions
        .iter()
        .map(|f| (f.linkage, &f.name, f.span));
    globals
        .chain(funcs)
        .filter(|(l, _, _)| *l == Linkage::Import)
        .map(|(_, name, span)| unresolved(name, span))
        .collect()
}

/// Marks an id of [`Plan`] whose import could not be bound (an error was reported).
const UNBOUND: u32 = u32::MAX;

/// Where everything goes: the linked id of each module's globals and functions (imports
/// mapped to their export's), and the `.host_access` name of each linked variable.
struct Plan {
    globals: Vec<Vec<u32>>,
    funcs: Vec<Vec<u32>>,
    host_access: Vec<Option<String>>,
    /// How many functions the linked module has.
    functions: usize,
}

/// A definition that other modules may bind to.
#[derive(Clone, Copy)]
enum Def {
    /// Module, variable.
    Global(usize, usize),
    /// Module, function.
    Func(usize, usize),
}

/// The linker's tables while it plans.
struct Linker<'a> {
    modules: &'a [ir::Module],
    bases: &'a [u32],
    errors: Vec<Diagnostic>,
    /// Exported names: the definition and where it is.
    exports: FxHashMap<&'a str, (Def, Span)>,
    /// Kernel names: where the kernel is.
    kernels: FxHashMap<&'a str, Span>,
    /// The `.host_access` name of each linked variable, and where it is given.
    host_access: Vec<Option<(String, Span)>>,
    globals: Vec<Vec<u32>>,
    funcs: Vec<Vec<u32>>,
    /// The linked id of the next function defined.
    next_func: u32,
}

impl Plan {
    fn new(modules: &[ir::Module], bases: &[u32]) -> Result<Plan, Vec<Diagnostic>> {
        let mut l = Linker {
            modules,
            bases,
            errors: Vec::new(),
            exports: FxHashMap::default(),
            kernels: FxHashMap::default(),
            host_access: Vec::new(),
            globals: Vec::with_capacity(modules.len()),
            funcs: Vec::with_capacity(modules.len()),
            next_func: 0,
        };
        // Definitions first: an import may name an export of a later module.
        for k in 0..modules.len() {
            l.define(k);
        }
        for k in 0..modules.len() {
            l.bind(k);
        }
        l.check_host_names();
        let mut errors = l.errors;
        if !errors.is_empty() {
            errors.sort_by_key(|d| (d.span.start, d.span.end));
            return Err(errors);
        }
        Ok(Plan {
            functions: l.next_func as usize,
            globals: l.globals,
            funcs: l.funcs,
            host_access: l
                .host_access
                .into_iter()
                .map(|h| h.map(|(n, _)| n))
                .collect(),
        })
    }
}

/// Records `name` at `span` in `seen`; the span of the earlier one when it was there.
fn first_of<'a>(seen: &mut FxHashMap<&'a str, Span>, name: &'a str, span: Span) -> Option<Span> {
    match seen.get(name) {
        Some(&first) => Some(first),
        None => {
            seen.insert(name, span);
            None
        }
    }
}

impl<'a> Linker<'a> {
    /// Numbers module `k`'s definitions after those of the modules before it, and records its
    /// exports, kernels and `.host_access` names.
    fn define(&mut self, k: usize) {
        let (m, base) = (&self.modules[k], self.bases[k]);
        let mut ids = Vec::with_capacity(m.globals.len());
        for (i, g) in m.globals.iter().enumerate() {
            if g.linkage == Linkage::Import {
                ids.push(UNBOUND);
                continue;
            }
            ids.push(self.host_access.len() as u32);
            let span = g.span.shifted(base);
            self.host_access
                .push(g.host_access.clone().map(|h| (h, span)));
            if g.linkage == Linkage::Export {
                self.export(&g.name, Def::Global(k, i), span);
            }
        }
        self.globals.push(ids);
        let mut ids = Vec::with_capacity(m.functions.len());
        for (i, f) in m.functions.iter().enumerate() {
            if f.linkage == Linkage::Import {
                ids.push(UNBOUND);
                continue;
            }
            ids.push(self.next_func);
            self.next_func += 1;
            let span = f.span.shifted(base);
            if f.linkage == Linkage::Export {
                self.export(&f.name, Def::Func(k, i), span);
            }
            if f.is_kernel() {
                if let Some(first) = first_of(&mut self.kernels, &f.name, span) {
                    self.errors.push(
                        Diagnostic::error(
                            span,
                            format!(
                                "kernel `@{}` is defined by two modules of the program; kernels \
                                 are dispatched by name",
                                f.name
                            ),
                        )
                        .with_related(first, "the other kernel of that name"),
                    );
                }
            }
        }
        self.funcs.push(ids);
    }

    /// Records an export, or reports the second export of a name.
    fn export(&mut self, name: &'a str, def: Def, span: Span) {
        if let Some(&(_, first)) = self.exports.get(name) {
            self.errors.push(
                Diagnostic::error(
                    span,
                    format!("`@{name}` is exported by two modules of the program"),
                )
                .with_related(first, "first exported here"),
            );
        } else {
            self.exports.insert(name, (def, span));
        }
    }

    /// Binds every import of module `k` to its export (or reports why it cannot be).
    fn bind(&mut self, k: usize) {
        let (m, base) = (&self.modules[k], self.bases[k]);
        for (i, g) in m.globals.iter().enumerate() {
            if g.linkage != Linkage::Import {
                continue;
            }
            let span = g.span.shifted(base);
            let bound = bind_global(self.modules, &self.exports, g, span);
            let (ek, ei) = match bound {
                Ok(to) => to,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            let linked = self.globals[ek][ei];
            self.globals[k][i] = linked;
            // An import may name its variable for the host where the export does not.
            if let Some(name) = &g.host_access {
                match &self.host_access[linked as usize] {
                    Some((other, at)) if other != name => self.errors.push(
                        Diagnostic::error(
                            span,
                            format!(
                                "`@{}` is given two `.host_access` names, `{name}` here and \
                                 `{other}`",
                                g.name
                            ),
                        )
                        .with_related(*at, format!("`.host_access(\"{other}\")` given here")),
                    ),
                    Some(_) => {}
                    None => self.host_access[linked as usize] = Some((name.clone(), span)),
                }
            }
        }
        for (i, f) in m.functions.iter().enumerate() {
            if f.linkage == Linkage::Import {
                let span = f.span.shifted(base);
                match bind_function(self.modules, &self.exports, f, span) {
                    Ok((ek, ei)) => self.funcs[k][i] = self.funcs[ek][ei],
                    Err(e) => self.errors.push(e),
                }
            }
        }
    }

    /// Reports a `.host_access` name given to two variables of the program.
    fn check_host_names(&mut self) {
        let mut seen: FxHashMap<&str, Span> = FxHashMap::default();
        for (name, span) in self.host_access.iter().flatten() {
            if let Some(first) = first_of(&mut seen, name, *span) {
                self.errors.push(
                    Diagnostic::error(
                        *span,
                        format!("`.host_access(\"{name}\")` names two variables of the program"),
                    )
                    .with_related(first, "the other variable of that name"),
                );
            }
        }
    }
}

/// An import error at `span` with the note "exported here" at `at`.
fn against_export(span: Span, at: Span, message: String) -> Diagnostic {
    Diagnostic::error(span, message).with_related(at, "exported here")
}

/// The export an imported variable binds to, or the error why none.
fn bind_global(
    modules: &[ir::Module],
    exports: &FxHashMap<&str, (Def, Span)>,
    g: &GlobalVar,
    span: Span,
) -> Result<(usize, usize), Diagnostic> {
    let Some(&(def, at)) = exports.get(g.name.as_str()) else {
        return Err(unresolved(&g.name, span));
    };
    let (k, i) = match def {
        Def::Global(k, i) => (k, i),
        Def::Func(k, i) => {
            let what = kind_of(&modules[k].functions[i]);
            let message = format!("imported variable `@{}` is exported as a {what}", g.name);
            return Err(against_export(span, at, message));
        }
    };
    let e = &modules[k].globals[i];
    let shape = |v: &GlobalVar| {
        format!(
            ".{}, {} bytes, .align {}",
            v.space.as_str(),
            v.size,
            v.align
        )
    };
    if (g.space, g.size, g.align) != (e.space, e.size, e.align) {
        let message = format!(
            "imported variable `@{}` ({}) does not match its export ({})",
            g.name,
            shape(g),
            shape(e)
        );
        return Err(against_export(span, at, message));
    }
    Ok((k, i))
}

/// The export an imported function binds to, or the error why none.
fn bind_function(
    modules: &[ir::Module],
    exports: &FxHashMap<&str, (Def, Span)>,
    f: &Function,
    span: Span,
) -> Result<(usize, usize), Diagnostic> {
    let Some(&(def, at)) = exports.get(f.name.as_str()) else {
        return Err(unresolved(&f.name, span));
    };
    let Def::Func(k, i) = def else {
        let message = format!("imported function `@{}` is exported as a variable", f.name);
        return Err(against_export(span, at, message));
    };
    let e = &modules[k].functions[i];
    if e.is_kernel() {
        return Err(Diagnostic::error(
            span,
            format!(
                "`@{}` is a kernel: a kernel cannot be imported (only the host invokes kernels)",
                f.name
            ),
        )
        .with_related(at, "the kernel is exported here"));
    }
    let (import, export) = (signature(f), signature(e));
    if import != export {
        let message = format!("imported function `{import}` does not match its export `{export}`");
        return Err(against_export(span, at, message));
    }
    Ok((k, i))
}

/// `kernel` or `function`.
fn kind_of(f: &Function) -> &'static str {
    if f.is_kernel() {
        "kernel"
    } else {
        "function"
    }
}

/// A function's signature as PISA writes it: `.32b @f(.reg .32b, .reg .v2.32b)`.
fn signature(f: &Function) -> String {
    let params: Vec<String> = f
        .reg_params
        .iter()
        .map(|r| {
            let ty = f
                .regs
                .get(r.0 as usize)
                .map_or(".?".into(), |d| type_name(d.ty));
            format!(".reg {ty}")
        })
        .collect();
    let ret = f.ret.map_or("void".to_string(), type_name);
    format!("{ret} @{}({})", f.name, params.join(", "))
}

/// The renumbering of one module: its ids to the linked program's, and its span base.
struct Remap<'a> {
    globals: &'a [u32],
    funcs: &'a [u32],
    base: u32,
}

impl Remap<'_> {
    /// Whether nothing moves: the first module, whose spans are at base 0, without imports,
    /// whose definitions keep their ids (what linking one module alone comes to).
    fn is_identity(&self) -> bool {
        self.base == 0
            && self.globals.iter().enumerate().all(|(i, &g)| g == i as u32)
            && self.funcs.iter().enumerate().all(|(i, &f)| f == i as u32)
    }

    fn span(&self, s: &mut Span) {
        *s = s.shifted(self.base);
    }

    fn global(&self, g: GlobalId) -> GlobalId {
        GlobalId(self.globals.get(g.0 as usize).copied().unwrap_or(UNBOUND))
    }

    fn func(&self, f: FuncId) -> FuncId {
        FuncId(self.funcs.get(f.0 as usize).copied().unwrap_or(UNBOUND))
    }

    fn var(&self, v: VarRef) -> VarRef {
        match v {
            VarRef::Global(g) => VarRef::Global(self.global(g)),
            local => local,
        }
    }

    fn init(&self, items: &mut [InitItem]) {
        for item in items {
            if let InitItem::Symbol { symbol, .. } = item {
                *symbol = match *symbol {
                    SymbolRef::Global(g) => SymbolRef::Global(self.global(g)),
                    SymbolRef::Function(f) => SymbolRef::Function(self.func(f)),
                };
            }
        }
    }

    fn global_var(&self, g: &mut GlobalVar) {
        self.span(&mut g.span);
        if let Some(init) = &mut g.init {
            self.init(init);
        }
    }

    fn function(&self, f: &mut Function) {
        self.span(&mut f.span);
        f.params.iter_mut().for_each(|p| self.span(&mut p.span));
        f.regs.iter_mut().for_each(|r| self.span(&mut r.span));
        f.labels.iter_mut().for_each(|l| self.span(&mut l.span));
        for v in &mut f.locals {
            self.span(&mut v.span);
            if let Some(init) = &mut v.init {
                self.init(init);
            }
        }
        for inst in f.body.iter_mut().flatten() {
            self.span(&mut inst.span);
            for op in inst.ops.iter_mut() {
                match op {
                    Operand::Var(v) => *v = self.var(*v),
                    Operand::Func(g) => *g = self.func(*g),
                    Operand::Addr(a) => {
                        if let AddrBase::Var(v) = &mut a.base {
                            *v = self.var(*v);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}
