//! The state machine of one call cycle: its registers, locals and stack, the prologue
//! that enters a member, the common return, the overflow path and the exit.

use super::text::{asm, movable, slot_text, type_text, SCRATCH};
use super::{bug, err, record};
use crate::diag::Diagnostic;
use crate::ir::{
    Bits, FuncId, Function, FunctionKind, GlobalId, Inst, KernelAttrs, Label, LabelId, Linkage,
    LocalId, MemSpace, Module, RegId, RegType,
};
use crate::memcheck::Site;
use crate::span::Span;

/// Where a member's `.private` variables live: in its activation's region of the stack
/// (each activation has its own copy), `L` bytes just below the stack pointer while the
/// activation runs.
#[derive(Clone, Debug, Default)]
pub(super) struct FrameLocals {
    /// Per local of the member: its offset in the region (`.private`) or its id among the
    /// state machine's locals (every other space).
    pub(super) place: Vec<LocalPlace>,
    /// The region's size, a multiple of the stack's alignment.
    pub(super) size: u64,
}

/// Where one local variable of a member went.
#[derive(Clone, Copy, Debug)]
pub(super) enum LocalPlace {
    /// A `.private` variable: its offset in the activation's region.
    Frame(u64),
    /// Any other: the state machine's local.
    Machine(LocalId),
}

/// Places `g`'s locals: `.private` ones at aligned offsets of its activation's region,
/// the others appended to `locals` (the state machine's).
pub(super) fn place_locals(
    g: &Function,
    locals: &mut Vec<crate::ir::LocalVar>,
    align: u64,
) -> FrameLocals {
    let mut out = FrameLocals::default();
    for l in &g.locals {
        if l.space == MemSpace::Private {
            let a = l.align.max(1);
            let off = out.size.div_ceil(a) * a;
            out.place.push(LocalPlace::Frame(off));
            out.size = off + l.size;
        } else {
            out.place
                .push(LocalPlace::Machine(LocalId(locals.len() as u32)));
            locals.push(l.clone());
        }
    }
    out.size = out.size.div_ceil(align) * align;
    out
}

/// The state machine of one cycle being built.
pub(super) struct Machine<'m> {
    pub(super) module: &'m Module,
    pub(super) members: &'m [FuncId],
    /// Which functions of the module have their address taken (the candidates of a call
    /// through a register, [`crate::mid::calls::address_taken`]).
    pub(super) taken: &'m [bool],
    pub(super) record: GlobalId,
    pub(super) depth: u32,
    pub(super) id: FuncId,
    /// The state machine's return type: the members' common one, or `.32b` (the private
    /// address of the scratch holding the value) when they differ or cannot be returned
    /// in a register ([`Machine::slot_return`]).
    pub(super) ret: Option<RegType>,
    /// Whether the result leaves through the scratch (see `ret`).
    pub(super) slot_return: bool,
    pub(super) f: Function,
    pub(super) body: Vec<Inst>,
    /// The first register of each member in the machine.
    pub(super) reg_base: Vec<u32>,
    /// Each member's `.private` variables and other locals.
    pub(super) frame_locals: Vec<FrameLocals>,
    /// The stack's alignment (frames and regions are multiples of it).
    pub(super) align: u64,
    /// Bytes of scratch at the start of the stack (0 or [`SCRATCH`]).
    pub(super) scratch: u64,
    pub(super) stack: LocalId,
    pub(super) entry: RegId,
    pub(super) sp: RegId,
    pub(super) nfr: RegId,
    pub(super) rp: RegId,
    pub(super) addr: RegId,
    t32: RegId,
    pub(super) q: RegId,
    /// One return register per distinct return type of the members.
    pub(super) retregs: Vec<(RegType, RegId)>,
    /// A `.v2.64b` register for saving 128-bit registers (created on first use).
    pub(super) wide: Option<RegId>,
    pub(super) largest_frame: u64,
    /// The stop flag ([`super::stop`]).
    pub(super) flag: GlobalId,
    /// The exit's label, once built.
    pub(super) exit: Option<LabelId>,
}

/// The state machine's function, before its body: named after the cycle's first member,
/// its first parameter the entry index, then every member's registers (renamed
/// `member.reg`) and register parameters. Returns it, the entry register, and each member's
/// first register.
fn cycle_function(funcs: &[&Function], ret: Option<RegType>) -> (Function, RegId, Vec<u32>) {
    let mut f = Function {
        name: format!("{}.cycle", funcs[0].name),
        kind: FunctionKind::Function,
        linkage: Linkage::Internal,
        ret,
        params: Vec::new(),
        reg_params: Vec::new(),
        attrs: KernelAttrs::default(),
        regs: Vec::new(),
        reg_names: String::new(),
        locals: Vec::new(),
        labels: Vec::new(),
        body: Some(Vec::new()),
        span: funcs[0].span,
    };
    let span = funcs[0].span;
    let entry = f.push_reg("cycle.entry", RegType::Scalar(Bits::B32), span);
    f.reg_params.push(entry);
    let mut reg_base = Vec::new();
    for g in funcs {
        reg_base.push(f.regs.len() as u32);
        for (k, r) in g.regs.iter().enumerate() {
            let name = format!("{}.{}", g.name, g.reg_name(RegId(k as u32)));
            f.push_reg(&name, r.ty, r.span);
        }
        for &p in &g.reg_params {
            f.reg_params.push(RegId(p.0 + *reg_base.last().unwrap()));
        }
    }
    (f, entry, reg_base)
}

impl<'m> Machine<'m> {
    /// The state machine of the cycle `members` (the function `id`), before its body: its
    /// registers, locals, return convention and stack.
    pub(super) fn new(
        module: &'m Module,
        members: &'m [FuncId],
        taken: &'m [bool],
        (record, flag): (GlobalId, GlobalId),
        depth: u32,
        id: FuncId,
    ) -> Result<Machine<'m>, Vec<Diagnostic>> {
        let funcs: Vec<&Function> = members
            .iter()
            .map(|f| &module.functions[f.0 as usize])
            .collect();
        let mut rets: Vec<RegType> = Vec::new();
        for t in funcs.iter().filter_map(|f| f.ret) {
            if !rets.contains(&t) {
                rets.push(t);
            }
        }
        let slot_return = rets.len() > 1 || rets.iter().any(|&t| !movable(t));
        let ret = if slot_return {
            Some(RegType::Scalar(Bits::B32))
        } else {
            rets.first().copied()
        };
        let vector_params = funcs.iter().any(|g| {
            g.reg_params
                .iter()
                .any(|p| !movable(g.regs[p.0 as usize].ty))
        });
        let scratch_needed = slot_return || vector_params;
        let (mut f, entry, reg_base) = cycle_function(&funcs, ret);
        let span = funcs[0].span;
        let align = funcs
            .iter()
            .flat_map(|g| &g.locals)
            .filter(|l| l.space == MemSpace::Private)
            .map(|l| l.align.max(1).next_power_of_two())
            .fold(16, u64::max);
        // Locals: each member's .private ones in its activation's region, the others in
        // the state machine; then the stack (sized at the end).
        let scratch = if scratch_needed {
            SCRATCH.div_ceil(align) * align
        } else {
            0
        };
        let frame_locals: Vec<FrameLocals> = funcs
            .iter()
            .map(|g| place_locals(g, &mut f.locals, align))
            .collect();
        let b32 = RegType::Scalar(Bits::B32);
        let sp = f.push_reg("cycle.sp", b32, span);
        let nfr = f.push_reg("cycle.frames", b32, span);
        let rp = f.push_reg("cycle.return_point", b32, span);
        let addr = f.push_reg("cycle.addr", b32, span);
        let t32 = f.push_reg("cycle.t", b32, span);
        let q = f.push_reg("cycle.q", RegType::Pred, span);
        let retregs = rets
            .iter()
            .map(|&t| (t, f.push_reg("cycle.ret", t, span)))
            .collect();
        let stack = LocalId(f.locals.len() as u32);
        f.locals.push(crate::ir::LocalVar {
            name: "cycle.stack".to_string(),
            space: MemSpace::Private,
            size: 16,
            align,
            init: None,
            span,
        });
        Ok(Machine {
            module,
            members,
            taken,
            record,
            depth,
            id,
            ret,
            slot_return,
            f,
            body: Vec::new(),
            reg_base,
            frame_locals,
            align,
            scratch,
            stack,
            entry,
            sp,
            nfr,
            rp,
            addr,
            t32,
            q,
            retregs,
            wide: None,
            largest_frame: 0,
            flag,
            exit: None,
        })
    }

    /// The register member `j`'s returns go through, and its type (`None`: void).
    pub(super) fn retreg_of(&self, j: usize) -> Option<(RegId, RegType)> {
        let t = self.module.functions[self.members[j].0 as usize].ret?;
        self.retregs
            .iter()
            .find(|(u, _)| *u == t)
            .map(|&(u, r)| (r, u))
    }

    pub(super) fn label(&mut self, span: Span) -> LabelId {
        let id = LabelId(self.f.labels.len() as u32);
        self.f.labels.push(Label {
            name: format!("cycle.L{}", id.0),
            target: usize::MAX,
            span,
        });
        id
    }

    pub(super) fn place(&mut self, l: LabelId) {
        self.f.labels[l.0 as usize].target = self.body.len();
    }

    pub(super) fn emit(
        &mut self,
        text: &str,
        span: Span,
        label: Option<LabelId>,
    ) -> Result<(), Vec<Diagnostic>> {
        let insts = asm(
            &self.f.regs,
            self.ret,
            text,
            span,
            (self.stack, self.record),
            label,
        )?;
        self.body.extend(insts);
        Ok(())
    }

    /// `dst = src` for registers of type `ty` (predicates through a 32-bit select, vectors
    /// through the scratch at the stack's start).
    pub(super) fn mov(
        &mut self,
        ty: RegType,
        dst: &str,
        src: &str,
        span: Span,
    ) -> Result<(), Vec<Diagnostic>> {
        let t = self.t32.0;
        match ty {
            RegType::Pred => self.emit(
                &format!("sel.32b %r{t}, 1, 0, {src};\nucmp.ne.32b {dst}, %r{t}, 0;"),
                span,
                None,
            ),
            RegType::Scalar(b) => {
                self.emit(&format!("mov.{}b {dst}, {src};", b.bits()), span, None)
            }
            RegType::Vector(b, n) if src.starts_with('%') && self.scratch >= SCRATCH => self.emit(
                &format!(
                    "st.private.v{n}.{0}b [@stack], {src};\nld.private.v{n}.{0}b {dst}, [@stack];",
                    b.bits()
                ),
                span,
                None,
            ),
            t => Err(err(
                span,
                format!(
                    "recursion is not supported yet for {} values of this form ({src}) passed \
                     into or out of a call cycle",
                    type_text(t)
                ),
            )),
        }
    }

    /// [`slot_text`] with the state machine's temporaries.
    pub(super) fn slot(
        &mut self,
        ty: RegType,
        reg: &str,
        base: &str,
        off: u64,
        store: bool,
    ) -> String {
        let wide = match ty {
            RegType::Scalar(Bits::B128) => self.wide_reg(),
            _ => 0,
        };
        slot_text(ty, reg, base, off, store, self.t32.0, wide)
    }

    /// The `.v2.64b` register 128-bit values pass through on their way to memory.
    pub(super) fn wide_reg(&mut self) -> u32 {
        if self.wide.is_none() {
            let span = self.f.span;
            self.wide = Some(
                self.f
                    .push_reg("cycle.wide", RegType::Vector(Bits::B64, 2), span),
            );
        }
        self.wide.map_or(0, |r| r.0)
    }

    /// The state machine's exit: return the value in the return register; with a result
    /// through the scratch, store the entry member's value there and return its address.
    pub(super) fn exit(&mut self, span: Span) -> Result<(), Vec<Diagnostic>> {
        if !self.slot_return {
            return match self.retregs.first() {
                Some(&(_, r)) => self.emit(&format!("return %r{};", r.0), span, None),
                None => self.emit("return;", span, None),
            };
        }
        let (q, entry, addr) = (self.q.0, self.entry.0, self.addr.0);
        for j in 0..self.members.len() {
            let Some((r, ty)) = self.retreg_of(j) else {
                continue;
            };
            let skip = self.label(span);
            let store = self.slot(ty, &format!("%r{}", r.0), "@stack", 0, true);
            self.emit(
                &format!("ucmp.ne.32b %r{q}, %r{entry}, {j};\ngoto.cond %r{q}, L;"),
                span,
                Some(skip),
            )?;
            self.emit(&store, span, None)?;
            self.place(skip);
        }
        self.emit(
            &format!("addrof.32b %r{addr}, @stack;\nreturn %r{addr};"),
            span,
            None,
        )
    }

    /// The stack's size: the scratch, `depth - 1` frames of the largest frame and `depth`
    /// regions of the largest `.private` region; an error past 2 GiB.
    pub(super) fn stack_size(&self, span: Span) -> Result<u64, Vec<Diagnostic>> {
        let frames = u64::from(self.depth.max(1) - 1);
        let region = self.frame_locals.iter().map(|l| l.size).max().unwrap_or(0);
        let size = frames
            .saturating_mul(self.largest_frame)
            .saturating_add(u64::from(self.depth).saturating_mul(region))
            .saturating_add(self.scratch)
            .max(16);
        if size >= 1 << 31 {
            return Err(err(
                span,
                format!(
                    "the stack of the call cycle of @{} needs {size} bytes per work-item \
                     ({frames} frames of {} bytes, {} activations' .private variables of {region} \
                     bytes): lower the stack depth",
                    self.module.functions[self.members[0].0 as usize].name,
                    self.largest_frame,
                    self.depth
                ),
            ));
        }
        Ok(size)
    }

    /// The state machine: prologue, each member's body, the common return, the exit and the
    /// overflow path.
    pub(super) fn build(&mut self, sites: &mut Vec<Site>) -> Result<Function, Vec<Diagnostic>> {
        let span = self.f.span;
        let starts: Vec<LabelId> = (0..self.members.len()).map(|_| self.label(span)).collect();
        let ret_l = self.label(span);
        let exit_l = self.label(span);
        let ovf_l = self.label(span);
        let (sp, nfr, q, entry) = (self.sp.0, self.nfr.0, self.q.0, self.entry.0);
        self.emit(
            &format!("mov.32b %r{sp}, {};\nmov.32b %r{nfr}, 0;", self.scratch),
            span,
            None,
        )?;
        for (j, &l) in starts.iter().enumerate().skip(1) {
            self.emit(
                &format!("ucmp.eq.32b %r{q}, %r{entry}, {j};\ngoto.cond %r{q}, L;"),
                span,
                Some(l),
            )?;
        }
        self.emit("goto L;", span, Some(starts[0]))?;
        let site_base = sites.len() as u32;
        let mut resumes: Vec<LabelId> = Vec::new();
        for j in 0..self.members.len() {
            self.place(starts[j]);
            self.member(j, &starts, ret_l, ovf_l, &mut resumes, sites)?;
        }
        // The common return: pop a frame and resume its call, or leave.
        let (addr, rp) = (self.addr.0, self.rp.0);
        self.place(ret_l);
        self.emit(
            &format!("ucmp.eq.32b %r{q}, %r{nfr}, 0;\ngoto.cond %r{q}, L;"),
            span,
            Some(exit_l),
        )?;
        self.emit(
            &format!(
                "addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n\
                 isub.32b %r{addr}, %r{addr}, 4;\nld.private.32b %r{rp}, [%r{addr}];"
            ),
            span,
            None,
        )?;
        for (i, &l) in resumes.iter().enumerate() {
            self.emit(
                &format!("ucmp.eq.32b %r{q}, %r{rp}, {i};\ngoto.cond %r{q}, L;"),
                span,
                Some(l),
            )?;
        }
        self.emit("goto L;", span, Some(exit_l))?;
        // The overflow: stop the work-item, count it, record the first, leave.
        self.place(ovf_l);
        let t = self.t32.0;
        let stop = format!("mov.32b %r{t}, 1;\nst.private.32b [@stack], %r{t};");
        let stop = super::stop::flag_asm(&self.f, &stop, span, self.flag, None)?;
        self.body.extend(stop);
        self.emit(
            &format!(
                "mov.32b %r{t}, 1;\niatom.global.add.32b %r{addr}, [@rec], %r{t};\n\
                 iadd.32b %r{t}, %r{rp}, {};\nmov.32b %r{sp}, 0;\n\
                 iatom.global.cas.32b %r{addr}, [@rec+4], %r{sp}, %r{t};\n\
                 ucmp.ne.32b %r{q}, %r{addr}, 0;\ngoto.cond %r{q}, L;",
                site_base + 1
            ),
            span,
            Some(exit_l),
        )?;
        let mut ids = String::new();
        for (k, c) in ["x", "y", "z"].iter().enumerate() {
            ids.push_str(&format!(
                "mov.32b %r{t}, %groupid.{c};\nst.global.32b [@rec+{}], %r{t};\n\
                 mov.32b %r{t}, %localid.{c};\nst.global.32b [@rec+{}], %r{t};\n",
                record::GROUP + 4 * k as u64,
                record::LOCAL + 4 * k as u64
            ));
        }
        self.emit(&ids, span, None)?;
        self.place(exit_l);
        self.exit = Some(exit_l);
        self.exit(span)?;
        self.f.locals[self.stack.0 as usize].size = self.stack_size(span)?;
        let mut f = self.f.clone();
        f.body = Some(std::mem::take(&mut self.body));
        if f.labels.iter().any(|l| l.target == usize::MAX) {
            return Err(bug("a label was never placed"));
        }
        Ok(f)
    }
}
