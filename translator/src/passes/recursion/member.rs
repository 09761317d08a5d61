//! A member's body inside the state machine: renumbered, its returns and its calls into
//! the cycle lowered to jumps and frames, its `.private` variables moved to the stack.

use super::bug;
use super::calls::{CallCx, CallKind};
use super::liveness::live_after;
use super::machine::{LocalPlace, Machine};
use super::text::op_text;
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
        let region = self.frame_locals[j].size;
        let label_base = self.f.labels.len() as u32;
        let at = self.member_labels(g, label_base);
        let renumber = Renumber {
            base,
            label_base,
            places: self.frame_locals[j].place.clone(),
        };
        let mut next_label = 0;
        let live = if body.iter().any(|i| self.call_kind(g, i) != CallKind::Other) {
            live_after(g)
        } else {
            Vec::new()
        };
        let remap = |op: &Operand| renumber.operand(op);
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
                    if inst.op == Opcode::Return || self.call_kind(g, inst) != CallKind::Other =>
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
                Opcode::Call if self.call_kind(g, inst) != CallKind::Other => {
                    let cx = CallCx {
                        g,
                        base,
                        starts,
                        ovf_l,
                    };
                    let kind = self.call_kind(g, inst);
                    self.cycle_call(&cx, inst, rest, &live[i], kind, resumes, sites)?;
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

    /// Adds member `g`'s labels to the machine (numbered from `label_base`, placed later);
    /// returns them by their target position in `g`.
    fn member_labels(&mut self, g: &crate::ir::Function, label_base: u32) -> Vec<(usize, u32)> {
        for l in &g.labels {
            self.f.labels.push(Label {
                name: l.name.clone(),
                target: usize::MAX,
                span: l.span,
            });
        }
        let mut at: Vec<(usize, u32)> = g
            .labels
            .iter()
            .enumerate()
            .map(|(k, l)| (l.target, label_base + k as u32))
            .collect();
        at.sort_unstable();
        at
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
}

/// How a member's registers, `.private` variables and labels are numbered in the machine.
struct Renumber {
    /// The machine's register number of the member's register 0.
    base: u32,
    /// The machine's label number of the member's label 0.
    label_base: u32,
    /// Where each of the member's locals lives.
    places: Vec<LocalPlace>,
}

impl Renumber {
    fn reg(&self, r: RegId) -> RegId {
        RegId(r.0 + self.base)
    }

    fn local(&self, l: LocalId) -> LocalId {
        match self.places.get(l.0 as usize) {
            Some(LocalPlace::Machine(m)) => *m,
            _ => l,
        }
    }

    /// `op` as the machine names it.
    fn operand(&self, op: &Operand) -> Operand {
        match *op {
            Operand::Reg { reg, swizzle } => Operand::Reg {
                reg: self.reg(reg),
                swizzle,
            },
            Operand::Pred { reg, negated } => Operand::Pred {
                reg: self.reg(reg),
                negated,
            },
            Operand::Addr(mut a) => {
                a.base = match a.base {
                    AddrBase::Reg(r) => AddrBase::Reg(self.reg(r)),
                    AddrBase::Var(VarRef::Local(l)) => AddrBase::Var(VarRef::Local(self.local(l))),
                    b => b,
                };
                if let AddrOffset::Reg(r) = a.offset {
                    a.offset = AddrOffset::Reg(self.reg(r));
                }
                Operand::Addr(a)
            }
            Operand::Var(VarRef::Local(l)) => Operand::Var(VarRef::Local(self.local(l))),
            Operand::Label(l) => Operand::Label(LabelId(l.0 + self.label_base)),
            o => o,
        }
    }
}
