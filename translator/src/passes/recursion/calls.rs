//! Calls inside a cycle: a direct call of a member becomes a frame push and a jump; a call
//! through a register becomes a chain of comparisons with its candidates' addresses, each
//! such a jump (a member) or an ordinary call (any other function); direct calls that leave
//! the cycle stay calls.

use super::liveness::Live;
use super::machine::Machine;
use super::text::{op_text, slot_size};
use super::{bug, err};
use crate::diag::Diagnostic;
use crate::ir::{FuncId, Function, Inst, LabelId, Opcode, Operand, RegId, RegType};
use crate::memcheck::Site;
use crate::span::Span;

/// What a `call` in a member's body is to the state machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CallKind {
    /// A direct call of the member with this index: a jump.
    Member(usize),
    /// A call through a register: a chain of comparisons of the address with each
    /// candidate's (the function and, for a member, its index), each a jump or an
    /// ordinary call. (Even with no member among them: left to the back end, the call
    /// would be an edge from the state machine to every function whose address is taken,
    /// the members' wrappers among them.)
    Indirect(Vec<(FuncId, Option<usize>)>),
    /// Any other call: stays a call.
    Other,
}

/// What a call inside a member needs of the member's body.
pub(super) struct CallCx<'a, 'm> {
    /// The member.
    pub(super) g: &'m Function,
    /// Its first register in the state machine.
    pub(super) base: u32,
    /// The start of each member's body.
    pub(super) starts: &'a [LabelId],
    /// The overflow path.
    pub(super) ovf_l: LabelId,
}

impl<'m> Machine<'m> {
    /// What `inst` (an instruction of member `g`, its operands not yet renumbered) is.
    pub(super) fn call_kind(&self, g: &Function, inst: &Inst) -> CallKind {
        if inst.op != Opcode::Call {
            return CallKind::Other;
        }
        let first = usize::from(inst.q.cond);
        match inst.ops.get(first + 1) {
            Some(Operand::Func(f)) => match self.members.iter().position(|m| m == f) {
                Some(c) => CallKind::Member(c),
                None => CallKind::Other,
            },
            Some(Operand::Reg { .. }) => {
                CallKind::Indirect(self.indirect_targets(g, &inst.ops[first..]))
            }
            _ => CallKind::Other,
        }
    }

    /// The functions a call through a register (`ops`: retval, target, arguments, of
    /// member `g`) may reach: as the back end's chain has them, those whose address is
    /// taken, with a body, not kernels, whose parameter and return types are the call's.
    fn indirect_targets(&self, g: &Function, ops: &[Operand]) -> Vec<(FuncId, Option<usize>)> {
        let ty = |op: &Operand| match *op {
            Operand::Reg { reg, swizzle: None } => g.regs.get(reg.0 as usize).map(|r| r.ty),
            _ => None,
        };
        let ret = ops.first().and_then(|o| match o {
            Operand::Reg { .. } => ty(o),
            _ => None,
        });
        let args: Vec<Option<RegType>> = ops.iter().skip(2).map(ty).collect();
        self.module
            .functions
            .iter()
            .enumerate()
            .filter(|&(i, h)| {
                self.taken.get(i).copied().unwrap_or(false)
                    && !h.is_kernel()
                    && h.body.is_some()
                    && h.ret == ret
                    && h.reg_params.len() == args.len()
                    && h.reg_params
                        .iter()
                        .zip(&args)
                        .all(|(p, t)| Some(h.regs[p.0 as usize].ty) == *t)
            })
            .map(|(i, _)| {
                let f = FuncId(i as u32);
                (f, self.members.iter().position(|&m| m == f))
            })
            .collect()
    }

    /// A call of kind `kind` (not [`CallKind::Other`]) with the renumbered operands `rest`
    /// (retval, target, arguments; no predicate) and the registers live after it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cycle_call(
        &mut self,
        cx: &CallCx<'_, 'm>,
        inst: &Inst,
        rest: &[Operand],
        after: &Live,
        kind: CallKind,
        resumes: &mut Vec<LabelId>,
        sites: &mut Vec<Site>,
    ) -> Result<(), Vec<Diagnostic>> {
        let targets = match kind {
            CallKind::Member(c) => {
                return self.member_call(cx, inst, rest, after, c, resumes, sites)
            }
            CallKind::Indirect(t) => t,
            CallKind::Other => return Err(bug("an ordinary call taken for a cycle's")),
        };
        // The chain: compare the address with each candidate's; no match does nothing
        // (undefined in PISA), as the back end's chain.
        let target = rest
            .get(1)
            .and_then(op_text)
            .ok_or_else(|| bug("a call through a register without its register"))?;
        let q = self.q.0;
        let done = self.label(inst.span);
        for (f, member) in targets {
            let next = self.label(inst.span);
            let addr = crate::layout::function_address(f);
            self.emit(
                &format!("ucmp.ne.64b %r{q}, {target}, {addr};\ngoto.cond %r{q}, L;"),
                inst.span,
                Some(next),
            )?;
            match member {
                Some(c) => self.member_call(cx, inst, rest, after, c, resumes, sites)?,
                None => {
                    let mut call = inst.clone();
                    call.q.cond = false;
                    call.ops = rest.iter().copied().collect();
                    call.ops[1] = Operand::Func(f);
                    self.body.push(call);
                }
            }
            self.emit("goto L;", inst.span, Some(done))?;
            self.place(next);
        }
        self.place(done);
        Ok(())
    }

    /// A call of member `callee`: save the registers live after it (but its destination),
    /// name its site, push and jump ([`Machine::call`]).
    #[allow(clippy::too_many_arguments)]
    fn member_call(
        &mut self,
        cx: &CallCx<'_, 'm>,
        inst: &Inst,
        rest: &[Operand],
        after: &Live,
        callee: usize,
        resumes: &mut Vec<LabelId>,
        sites: &mut Vec<Site>,
    ) -> Result<(), Vec<Diagnostic>> {
        let dst = match rest.first() {
            Some(Operand::Reg {
                reg, swizzle: None, ..
            }) => Some(*reg),
            _ => None,
        };
        let saved: Vec<RegId> = (0..cx.g.regs.len() as u32)
            .filter(|&r| after[r as usize / 64] >> (r % 64) & 1 == 1)
            .map(|r| RegId(r + cx.base))
            .filter(|&r| Some(r) != dst)
            .collect();
        let local_site = resumes.len() as u32;
        let resume = self.label(inst.span);
        resumes.push(resume);
        sites.push(Site {
            function: cx.g.name.clone(),
            span: (inst.span.start, inst.span.end),
            align: 0,
            variable: None,
            location: None,
        });
        self.call(
            inst.span,
            local_site,
            callee,
            rest,
            &saved,
            cx.starts[callee],
            cx.ovf_l,
            resume,
        )
    }

    /// A call inside the cycle: check the depth, push a frame of the `saved` registers and
    /// the return point, pass the arguments, jump to the callee; at `resume`, pop the frame
    /// and write `retval`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        span: Span,
        site: u32,
        callee: usize,
        ops: &[Operand],
        saved: &[RegId],
        start: LabelId,
        ovf_l: LabelId,
        resume: LabelId,
    ) -> Result<(), Vec<Diagnostic>> {
        let (sp, nfr, q, rp, addr) = (self.sp.0, self.nfr.0, self.q.0, self.rp.0, self.addr.0);
        let [retval, _target, args @ ..] = ops else {
            return Err(bug("a call without its operands"));
        };
        // The frame: each saved register at a multiple of its alignment, then the return
        // point.
        let mut off = 0u64;
        let mut slots = Vec::new();
        for &r in saved {
            let ty = self.f.regs[r.0 as usize].ty;
            let (size, align) = slot_size(ty);
            off = off.div_ceil(align) * align;
            slots.push((r, ty, off));
            off += size;
        }
        let frame = (off + 4).div_ceil(self.align) * self.align;
        self.largest_frame = self.largest_frame.max(frame);
        self.emit(
            &format!(
                "mov.32b %r{rp}, {site};\nucmp.ge.32b %r{q}, %r{nfr}, {};\ngoto.cond %r{q}, L;",
                self.depth.max(1) - 1
            ),
            span,
            Some(ovf_l),
        )?;
        let mut text =
            format!("addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n");
        for &(r, ty, o) in &slots {
            let st = self.slot(ty, &format!("%r{}", r.0), &format!("%r{addr}"), o, true);
            text.push_str(&st);
        }
        text.push_str(&format!(
            "st.private.32b [%r{addr}+{}], %r{rp};\niadd.32b %r{sp}, %r{sp}, {frame};\n\
             iadd.32b %r{nfr}, %r{nfr}, 1;",
            frame - 4
        ));
        self.emit(&text, span, None)?;
        // Arguments: into fresh registers first (an argument may be a parameter of the
        // callee, in a self call), then into the callee's parameters.
        let g = &self.module.functions[self.members[callee].0 as usize];
        if args.len() != g.reg_params.len() {
            return Err(err(span, "call with the wrong number of arguments"));
        }
        let params: Vec<(RegId, RegType)> = g
            .reg_params
            .iter()
            .map(|p| (RegId(p.0 + self.reg_base[callee]), g.regs[p.0 as usize].ty))
            .collect();
        let mut temps = Vec::new();
        for (a, &(_, ty)) in args.iter().zip(&params) {
            let tmp = self.f.push_reg("cycle.arg", ty, span);
            let src = op_text(a).ok_or_else(|| bug("a call argument"))?;
            self.mov(ty, &format!("%r{}", tmp.0), &src, span)?;
            temps.push(tmp);
        }
        for (&tmp, &(p, ty)) in temps.iter().zip(&params) {
            self.mov(ty, &format!("%r{}", p.0), &format!("%r{}", tmp.0), span)?;
        }
        self.emit("goto L;", span, Some(start))?;
        // The resume point.
        self.place(resume);
        let mut text = format!(
            "isub.32b %r{sp}, %r{sp}, {frame};\nisub.32b %r{nfr}, %r{nfr}, 1;\n\
             addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n"
        );
        for &(r, ty, o) in &slots {
            let ld = self.slot(ty, &format!("%r{}", r.0), &format!("%r{addr}"), o, false);
            text.push_str(&ld);
        }
        self.emit(&text, span, None)?;
        if let (Operand::Reg { .. } | Operand::Pred { .. }, Some((r, ty))) =
            (retval, self.retreg_of(callee))
        {
            let dst = op_text(retval).ok_or_else(|| bug("a call's retval"))?;
            self.mov(ty, &dst, &format!("%r{}", r.0), span)?;
        }
        Ok(())
    }
}
