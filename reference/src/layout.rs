//! Where everything of a loaded module lives: the address of each module variable and of each
//! body-scope `.const` variable, the offset of each `.shared` variable in the work-group arena,
//! the offset of each `.private` variable in a work-item's arena, and for each function the
//! layout of its register file.
//!
//! `.shared` and `.private` variables get module-wide static offsets: every function's
//! variables in declaration order, functions in module order, each at its alignment, from 0.
//! A function activation that is not recursive uses those offsets directly; a recursive
//! activation gets a fresh copy of the function's region at the end of the private arena (see
//! [`crate::lane::Lane::push_frame`]). Addresses are implementation-defined; this layout
//! gives the same ones as a static layout of the same order would.
//!
//! This module only places things; it executes nothing.

use crate::bits::to_le;
use crate::error::{malformed, unsupported, Result};
use crate::memory::{GlobalMemory, NULL32};
use pisa_translator::ir::{self, InitItem, Linkage, MemSpace, RegType, SymbolRef};
use pisa_translator::memcheck::{self, Allocation, AllocationKind};
use pisa_translator::Span;

/// Module variables larger than this are refused (the interpreter keeps every byte).
const MAX_VARIABLE: u64 = 1 << 36;

/// A module placed in a machine's memory.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The module itself.
    pub module: ir::Module,
    /// Address of each module variable; `None` for imported ones.
    pub globals: Vec<Option<u64>>,
    /// Layout of each function, by [`ir::FuncId`].
    pub funcs: Vec<FuncLayout>,
    /// Bytes of the per-work-group shared arena.
    pub shared_size: u32,
    /// Bytes of the static part of each work-item's private arena.
    pub private_size: u32,
}

/// Where a body-scope memory variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalPlace {
    /// At this offset from the base of the activation's private frame (the module-wide
    /// static offset; the base is 0 unless the activation is recursive).
    Private(u32),
    /// At this shared address (one instance per work-group, whatever the call depth).
    Shared(u32),
    /// At this global address (allocated and initialised at load).
    Const(u64),
}

/// The register file and private frame of one function.
#[derive(Debug)]
pub(crate) struct FuncLayout {
    /// Byte offset of each register in the frame's register bytes.
    pub reg_offset: Vec<usize>,
    /// Byte size of each register (a predicate takes one byte).
    pub reg_size: Vec<usize>,
    /// Total bytes of the register file.
    pub reg_bytes: usize,
    /// Place of each body-scope memory variable.
    pub locals: Vec<LocalPlace>,
    /// Static private offsets `start..end` of the function's `.private` variables.
    pub private_span: (u32, u32),
    /// The largest alignment of its `.private` variables.
    pub private_align: u32,
}

/// Byte size of a register of type `ty`.
pub(crate) fn reg_size(ty: RegType) -> usize {
    match ty {
        RegType::Pred => 1,
        t => (t.total_bits() / 8) as usize,
    }
}

fn align_up(v: u64, align: u64) -> u64 {
    v.div_ceil(align.max(1)) * align.max(1)
}

impl Prepared {
    /// Allocates every variable of `module` in `mem` and writes the initializers. A module
    /// with imports is refused: a program of several modules is loaded linked
    /// (`pisa_translator::link`), as one module.
    pub fn new(module: &ir::Module, mem: &mut GlobalMemory) -> Result<Prepared> {
        let imports = module.globals.iter().map(|g| (g.linkage, &g.name, g.span));
        let imports = imports.chain(
            module
                .functions
                .iter()
                .map(|f| (f.linkage, &f.name, f.span)),
        );
        if let Some((_, name, span)) = imports.into_iter().find(|(l, _, _)| *l == Linkage::Import) {
            return Err(unsupported(
                span,
                format!("unresolved import @{name}: link the program's modules first (pisa_translator::link)"),
            ));
        }
        let mut globals = Vec::with_capacity(module.globals.len());
        for g in &module.globals {
            if g.linkage == Linkage::Import {
                globals.push(None);
                continue;
            }
            check_size(g.size, g.span, &g.name)?;
            let kind = AllocationKind::Variable {
                name: g.name.clone(),
                function: None,
                space: g.space,
            };
            globals.push(Some(mem.alloc(
                g.size,
                g.align,
                g.space == MemSpace::Const,
                kind,
            )));
        }
        let (mut shared_end, mut private_end) = (0u64, 0u64);
        let mut funcs = Vec::with_capacity(module.functions.len());
        for f in &module.functions {
            funcs.push(layout_function(f, mem, &mut shared_end, &mut private_end)?);
        }
        if shared_end >= NULL32 {
            return Err(unsupported(
                Span::default(),
                "more than 4 GiB of .shared variables",
            ));
        }
        let prepared = Prepared {
            module: module.clone(),
            globals,
            funcs,
            shared_size: shared_end as u32,
            private_size: private_end as u32,
        };
        for (g, addr) in module.globals.iter().zip(&prepared.globals) {
            if let (Some(init), Some(addr)) = (&g.init, addr) {
                let bytes = prepared.init_bytes(init, g.size, g.span)?;
                mem.write(*addr, &bytes, false)
                    .map_err(|_| malformed(g.span, "initializer does not fit"))?;
            }
        }
        for (f, layout) in module.functions.iter().zip(&prepared.funcs) {
            for (v, place) in f.locals.iter().zip(&layout.locals) {
                if let (Some(init), LocalPlace::Const(addr)) = (&v.init, place) {
                    let bytes = prepared.init_bytes(init, v.size, v.span)?;
                    mem.write(*addr, &bytes, false)
                        .map_err(|_| malformed(v.span, "initializer does not fit"))?;
                }
            }
        }
        Ok(prepared)
    }

    /// The `.shared` or `.private` variable (at its static offset) nearest to
    /// `[addr, addr + len)`, else the arena of `arena` bytes as a whole: what a report of a bad
    /// access in that space names.
    pub fn local_nearest(
        &self,
        space: MemSpace,
        arena: u64,
        addr: u64,
        len: u64,
    ) -> Option<Allocation> {
        let mut vars = Vec::new();
        for (f, layout) in self.module.functions.iter().zip(&self.funcs) {
            for (v, place) in f.locals.iter().zip(&layout.locals) {
                let start = match (space, *place) {
                    (MemSpace::Shared, LocalPlace::Shared(o)) => o,
                    (MemSpace::Private, LocalPlace::Private(o)) => o,
                    _ => continue,
                };
                vars.push(Allocation {
                    start: start as u64,
                    size: v.size,
                    kind: AllocationKind::Variable {
                        name: v.name.clone(),
                        function: Some(f.name.clone()),
                        space,
                    },
                });
            }
        }
        memcheck::nearest(&vars, addr, len)
            .cloned()
            .or(Some(Allocation {
                start: 0,
                size: arena,
                kind: AllocationKind::Arena(space),
            }))
    }

    /// The name of the `.shared` or `.private` variable whose static bytes hold `addr`, as
    /// `name` (`name` in `@function` for a body-scope one): what a sanitizer report names.
    pub fn local_variable_at(&self, space: MemSpace, addr: u64) -> Option<String> {
        for (f, layout) in self.module.functions.iter().zip(&self.funcs) {
            for (v, place) in f.locals.iter().zip(&layout.locals) {
                let start = match (space, *place) {
                    (MemSpace::Shared, LocalPlace::Shared(o)) => o as u64,
                    (MemSpace::Private, LocalPlace::Private(o)) => o as u64,
                    _ => continue,
                };
                if (start..start + v.size).contains(&addr) {
                    return Some(format!("{} in @{}", v.name, f.name));
                }
            }
        }
        None
    }

    /// The bytes of an initializer list for a variable of `size` bytes (zero-padded).
    fn init_bytes(&self, items: &[InitItem], size: u64, span: Span) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for item in items {
            if out.len() as u64 + item.byte_len() > size {
                return Err(malformed(span, "initializer is longer than the variable"));
            }
            match *item {
                InitItem::Value { size, value } => out.extend(to_le(value as u128, size as usize)),
                InitItem::Zero(n) => out.resize(out.len() + n as usize, 0),
                InitItem::Symbol {
                    size,
                    symbol,
                    offset,
                } => {
                    let base = match symbol {
                        SymbolRef::Global(g) => {
                            let var = self.module.globals.get(g.0 as usize);
                            match self.globals.get(g.0 as usize) {
                                Some(Some(a)) => *a,
                                Some(None) => {
                                    let name = var.map_or("?", |v| v.name.as_str());
                                    return Err(unsupported(
                                        span,
                                        format!("initializer with the address of imported @{name}"),
                                    ));
                                }
                                None => {
                                    return Err(malformed(
                                        span,
                                        "initializer names an unknown variable",
                                    ))
                                }
                            }
                        }
                        SymbolRef::Function(f) => {
                            if f.0 as usize >= self.module.functions.len() {
                                return Err(malformed(
                                    span,
                                    "initializer names an unknown function",
                                ));
                            }
                            f.0 as u64 + 1
                        }
                    };
                    out.extend(to_le(
                        base.wrapping_add(offset as u64) as u128,
                        size as usize,
                    ));
                }
            }
        }
        out.resize(size as usize, 0);
        Ok(out)
    }
}

fn check_size(size: u64, span: Span, name: &str) -> Result<()> {
    if size > MAX_VARIABLE {
        return Err(unsupported(
            span,
            format!("variable @{name} of {size} bytes (the interpreter's limit is 2^36)"),
        ));
    }
    Ok(())
}

fn layout_function(
    f: &ir::Function,
    mem: &mut GlobalMemory,
    shared_end: &mut u64,
    private_end: &mut u64,
) -> Result<FuncLayout> {
    let mut reg_offset = Vec::with_capacity(f.regs.len());
    let mut reg_size_v = Vec::with_capacity(f.regs.len());
    let mut reg_bytes = 0usize;
    for r in &f.regs {
        let n = reg_size(r.ty);
        reg_offset.push(reg_bytes);
        reg_size_v.push(n);
        reg_bytes += n;
    }
    let mut locals = Vec::with_capacity(f.locals.len());
    let private_start = *private_end;
    let mut private_align = 1u64;
    for v in &f.locals {
        check_size(v.size, v.span, &v.name)?;
        let align = v.align.max(1);
        let place = match v.space {
            MemSpace::Private => {
                let off = align_up(*private_end, align);
                *private_end = off + v.size;
                private_align = private_align.max(align);
                LocalPlace::Private(off as u32)
            }
            MemSpace::Shared => {
                let off = align_up(*shared_end, align);
                *shared_end = off + v.size;
                LocalPlace::Shared(off as u32)
            }
            MemSpace::Const | MemSpace::Global => {
                let kind = AllocationKind::Variable {
                    name: v.name.clone(),
                    function: Some(f.name.clone()),
                    space: v.space,
                };
                LocalPlace::Const(mem.alloc(v.size, align, true, kind))
            }
        };
        locals.push(place);
    }
    if *private_end >= NULL32 || private_align >= NULL32 {
        return Err(unsupported(f.span, "more than 4 GiB of .private variables"));
    }
    Ok(FuncLayout {
        reg_offset,
        reg_size: reg_size_v,
        reg_bytes,
        locals,
        private_span: (private_start as u32, *private_end as u32),
        private_align: private_align as u32,
    })
}
