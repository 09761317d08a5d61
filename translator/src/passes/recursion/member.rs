//! A member's body inside the state machine: renumbered, its returns and its calls into
//! the cycle lowered to jumps and frames, its `.private` variables moved to the stack.

use super::liveness::live_after;
use super::machine::{LocalPlace, Machine};
use super::text::{op_text, slot_size};
use super::{bug, err};
use crate::diag::Diagnostic;
use crate::ir::{
    AddrBase, AddrOffset, Bits, Inst, Label, LabelId, LocalId, Opcode, Operand, RegId, RegType,
    VarRef,
};
use crate::memcheck::Site;
use crate::span::Span;

impl Machine<'_> {
    /// Member `j`'s body, its registers, locals and labels renumbered, its calls into the
    /// cycle and its returns lowered.
    pub(super) fn member(
        &mut self,
        j: usize,
        starts: &[LabelId],
        ret_l: LabelId,
        ovf_l: LabelId,
        resumes: &mut Vec<LabelId>,
        sites: &mut Vec<Site>,
    ) -> Result<(), Vec<Diagnostic>> {
        let g = &self.module.functions[self.members[j].0 as usize];
        let body = g.body.as_deref().unwrap_or(&[]);
        let base = self.reg_base[j];
        let places = self.frame_locals[j].place.clone();
        let region = self.frame_locals[j].size;
        let local = |l: LocalId| match places.get(l.0 as usize) {
            Some(LocalPlace::Machine(m)) => *m,
            _ => l,
        };
        let label_base = self.f.labels.len() as u32;
        for l in &g.labels {
            self.f.labels.push(Label {
                name: l.name.clone(),
                target: usize::MAX,
                span: l.span,
            });
        }
        // Labels by their target position.
        let mut at: Vec<(usize, u32)> = g
            .labels
            .iter()
            .enumerate()
            .map(|(k, l)| (l.target, label_base + k as u32))
            .collect();
        at.sort_unstable();
        let mut next_label = 0;
        let live = if body.iter().any(|i| self.calls_member(i).is_some()) {
            live_after(g)
        } else {
            Vec::new()
        };
        let remap_reg = |r: RegId| RegId(r.0 + base);
        let remap = |op: &Operand| -> Operand {
            match *op {
                Operand::Reg { reg, swizzle } => Operand::Reg {
                    reg: remap_reg(reg),
                    swizzle,
                },
                Operand::Pred { reg, negated } => Operand::Pred {
                    reg: remap_reg(reg),
                    negated,
                },
                Operand::Addr(mut a) => {
                    a.base = match a.base {
                        AddrBase::Reg(r) => AddrBase::Reg(remap_reg(r)),
                        AddrBase::Var(VarRef::Local(l)) => AddrBase::Var(VarRef::Local(local(l))),
                        b => b,
                    };
                    if let AddrOffset::Reg(r) = a.offset {
                        a.offset = AddrOffset::Reg(remap_reg(r));
                    }
                    Operand::Addr(a)
                }
                Operand::Var(VarRef::Local(l)) => Operand::Var(VarRef::Local(local(l))),
                Operand::Label(l) => Operand::Label(LabelId(l.0 + label_base)),
                o => o,
            }
        };
        // The activation's .private variables: its region of the stack.
        let sp = self.sp.0;
        if region > 0 {
            self.emit(&format!("iadd.32b %r{sp}, %r{sp}, {region};"), g.span, None)?;
        }
        let free = if region > 0 {
            format!("isub.32b %r{sp}, %r{sp}, {region};\ngoto L;")
        } else {
            "goto L;".to_string()
        };
        for (i, inst) in body.iter().enumerate() {
            while next_label < at.len() && at[next_label].0 <= i {
                self.place(LabelId(at[next_label].1));
                next_label += 1;
            }
            let ops: Vec<Operand> = inst.ops.iter().map(remap).collect();
            let Some(ops) = self.frame_refs(j, inst, ops)? else {
                continue;
            };
            let (pred, rest) = if inst.q.cond {
                (ops.first().copied(), &ops[1.min(ops.len())..])
            } else {
                (None, &ops[..])
            };
            let skip = match (inst.op, pred) {
                (Opcode::Return, Some(p)) | (Opcode::Call, Some(p))
                    if inst.op == Opcode::Return || self.calls_member(inst).is_some() =>
                {
                    let l = self.label(inst.span);
                    let Operand::Pred { reg, negated } = p else {
                        return Err(bug("a conditional without a predicate"));
                    };
                    let not = op_text(&Operand::Pred {
                        reg,
                        negated: !negated,
                    })
                    .unwrap_or_default();
                    self.emit(&format!("goto.cond {not}, L;"), inst.span, Some(l))?;
                    Some(l)
                }
                _ => None,
            };
            match inst.op {
                Opcode::Return => {
                    if let (Some(v), Some((r, t))) = (rest.first(), self.retreg_of(j)) {
                        let src = op_text(v).ok_or_else(|| bug("a return value"))?;
                        self.mov(t, &format!("%r{}", r.0), &src, inst.span)?;
                    }
                    self.emit(&free, inst.span, Some(ret_l))?;
                }
                Opcode::Call if self.calls_member(inst).is_some() => {
                    let callee = self.calls_member(inst).unwrap_or(0);
                    let mut saved: Vec<RegId> = Vec::new();
                    let after = &live[i];
                    let dst = match rest.first() {
                        Some(Operand::Reg {
                            reg, swizzle: None, ..
                        }) => Some(*reg),
                        _ => None,
                    };
                    for r in 0..g.regs.len() as u32 {
                        if after[r as usize / 64] >> (r % 64) & 1 == 1
                            && Some(RegId(r + base)) != dst
                        {
                            saved.push(RegId(r + base));
                        }
                    }
                    let local_site = resumes.len() as u32;
                    let resume = self.label(inst.span);
                    resumes.push(resume);
                    sites.push(Site {
                        function: g.name.clone(),
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
                        starts[callee],
                        ovf_l,
                        resume,
                    )?;
                }
                _ => {
                    let mut copy = inst.clone();
                    copy.ops = ops.iter().copied().collect();
                    self.body.push(copy);
                }
            }
            if let Some(l) = skip {
                self.place(l);
            }
        }
        while next_label < at.len() {
            self.place(LabelId(at[next_label].1));
            next_label += 1;
        }
        // Falling off the body returns (the validator allows it only for void functions).
        self.emit(&free, g.span, Some(ret_l))?;
        Ok(())
    }

    /// Rewrites the references of `inst` (its operands already renumbered, `ops`) to member
    /// `j`'s `.private` variables into addresses in the activation's region: an address
    /// operand's base and an `addrcast` source become a register computed just before; an
    /// `addrof` becomes that computation into its destination (`None`: nothing left to
    /// copy).
    pub(super) fn frame_refs(
        &mut self,
        j: usize,
        inst: &Inst,
        mut ops: Vec<Operand>,
    ) -> Result<Option<Vec<Operand>>, Vec<Diagnostic>> {
        let places = &self.frame_locals[j].place;
        let frame_off = |v: &VarRef| match v {
            VarRef::Local(l) => match places.get(l.0 as usize) {
                Some(LocalPlace::Frame(o)) => Some(*o),
                _ => None,
            },
            VarRef::Global(_) => None,
        };
        let mut refs = Vec::new();
        for (k, op) in inst.ops.iter().enumerate() {
            let off = match op {
                Operand::Var(v) => frame_off(v),
                Operand::Addr(a) => match &a.base {
                    AddrBase::Var(v) => frame_off(v),
                    _ => None,
                },
                _ => None,
            };
            if let Some(o) = off {
                refs.push((k, o));
            }
        }
        if inst.op == Opcode::Addrof {
            if let [(1, off)] = refs[..] {
                let dst = op_text(&ops[0]).ok_or_else(|| bug("addrof's destination"))?;
                self.frame_addr(j, &dst, off, inst.span)?;
                return Ok(None);
            }
        }
        for (k, off) in refs {
            let t = self
                .f
                .push_reg("cycle.local", RegType::Scalar(Bits::B32), inst.span);
            self.frame_addr(j, &format!("%r{}", t.0), off, inst.span)?;
            ops[k] = match ops[k] {
                Operand::Addr(mut a) => {
                    a.base = AddrBase::Reg(t);
                    a.bits = 32;
                    Operand::Addr(a)
                }
                _ => Operand::Reg {
                    reg: t,
                    swizzle: None,
                },
            };
        }
        Ok(Some(ops))
    }

    /// `dst = ` the private address of byte `off` of member `j`'s activation region (the
    /// region is the `size` bytes below the stack pointer).
    pub(super) fn frame_addr(
        &mut self,
        j: usize,
        dst: &str,
        off: u64,
        span: Span,
    ) -> Result<(), Vec<Diagnostic>> {
        let below = self.frame_locals[j].size - off;
        let sp = self.sp.0;
        self.emit(
            &format!(
                "addrof.32b {dst}, @stack;\niadd.32b {dst}, {dst}, %r{sp};\nisub.32b {dst}, {dst}, {below};"
            ),
            span,
            None,
        )
    }

    /// The member a `call` inside the cycle reaches, by its index among the members.
    pub(super) fn calls_member(&self, inst: &Inst) -> Option<usize> {
        if inst.op != Opcode::Call {
            return None;
        }
        let target = inst.ops.iter().find_map(|o| match o {
            Operand::Func(f) => Some(*f),
            _ => None,
        })?;
        self.members.iter().position(|&m| m == target)
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
