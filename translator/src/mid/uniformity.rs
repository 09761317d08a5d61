//! Which registers hold the same value in every work-item of a function's activation, and
//! which blocks every live work-item of it runs together: the divergence analysis the
//! lowering on virtual lanes stands on (spec-notes §88).
//!
//! A block is *divergent* when one live work-item of the activation may run it while
//! another does not: it is control dependent (through the post-dominator tree) on a branch
//! whose condition is varying, or on a branch in a divergent block. In a block that is not
//! divergent, every lane that does not run it has retired (or never entered the
//! activation), so its registers are never read again.
//!
//! A register is *varying* unless every one of its definitions is a *uniform instruction*
//! (it computes registers from registers, immediates and special registers that are the
//! same in every work-item of a work-group, or it is a kernel's `ld.param`) whose operands
//! are uniform, in a block that is not divergent. A uniform register then holds the same
//! value in every work-item that reads it, so it needs only one copy per invocation, and a
//! branch on it sends the whole sub-group the same way. The values of loops with a varying
//! exit are varying: every block of such a loop is control dependent on its exit. Where
//! lanes leaving a varying branch in a loop can meet again only after the loop's back edge
//! (a per-lane `continue` in a loop whose exit comes after the branch's post-dominator),
//! they reach that meeting point in different iterations: every block of the loop is
//! divergent ("temporal divergence"; the control-flow lowering makes lanes meet at the
//! loop's continue, not at the post-dominator).
//!
//! Post-dominators by Cooper, Harvey and Kennedy ("A simple, fast dominance algorithm",
//! 2001) on the reversed CFG with a virtual exit; control dependence by walking the
//! post-dominator tree from each successor of a branch up to the branch's immediate
//! post-dominator (Ferrante, Ottenstein and Warren). A function with a block that cannot
//! reach a `return`, or an analysis past its work budget, gets the conservative answer:
//! every block divergent, every register varying.

use crate::ir::{Function, Inst, Opcode, Operand, RegId, SpecialReg};
use crate::isa;
use crate::mid::cfg::{BlockId, Cfg, Code, Cond, Term};
use crate::mid::liveness::operand_reads;

/// "No immediate post-dominator (yet)".
const UNDEF: usize = usize::MAX;

/// Most steps of the control-dependence walks and of the fixed point before the analysis
/// gives the conservative answer (the walks are quadratic in the nesting depth at worst).
const BUDGET: usize = 50_000_000;

/// The divergence facts of one function.
#[derive(Clone, Debug)]
pub struct Uniformity {
    /// By block: some live work-item may skip it while another runs it.
    pub divergent: Vec<bool>,
    /// By register: two work-items may hold different values in it.
    pub varying: Vec<bool>,
    /// By register: its value modulo any power of two up to 32 is the same in two lanes
    /// whose `%laneid`s agree modulo it (a uniform value, `%laneid`, or sums, products and
    /// bitwise combinations of them: what a `shfl` source operand needs to read the same
    /// slot of every invocation on virtual lanes).
    pub lane_affine: Vec<bool>,
}

impl Uniformity {
    /// Whether register `r` holds the same value in every work-item of the activation.
    pub fn uniform(&self, r: RegId) -> bool {
        !self.varying.get(r.0 as usize).copied().unwrap_or(true)
    }

    /// Whether register `r` is uniform or lane-affine (see [`Uniformity::lane_affine`]).
    pub fn lane_affine(&self, r: RegId) -> bool {
        self.lane_affine.get(r.0 as usize).copied().unwrap_or(false)
    }

    /// Whether every live work-item of the activation runs block `b` together.
    pub fn together(&self, b: BlockId) -> bool {
        !self.divergent.get(b).copied().unwrap_or(true)
    }

    /// Whether `inst` (of `f`) computes uniform registers only: it is a uniform instruction
    /// and every register it writes is uniform (so are its operands, then).
    pub fn uniform_inst(&self, f: &Function, inst: &Inst) -> bool {
        let mut written = writes(inst).peekable();
        capable(f, inst) && written.peek().is_some() && written.all(|r| self.uniform(r))
    }

    /// The conservative answer: every block divergent, every register varying.
    fn everything_varies(f: &Function, cfg: &Cfg) -> Uniformity {
        Uniformity {
            divergent: vec![true; cfg.blocks.len()],
            varying: vec![true; f.regs.len()],
            lane_affine: vec![false; f.regs.len()],
        }
    }
}

/// The registers and predicates `inst` writes.
pub fn writes(inst: &Inst) -> impl Iterator<Item = RegId> + '_ {
    let rules = isa::def(inst.op).form(inst.form).operands;
    inst.ops
        .iter()
        .enumerate()
        .filter_map(move |(k, op)| match *op {
            Operand::Reg { reg, .. } | Operand::Pred { reg, .. }
                if rules.get(k).is_some_and(|r| r.write) =>
            {
                Some(reg)
            }
            _ => None,
        })
}

/// Whether `inst` only computes registers from registers, immediates and special registers
/// (no memory, call, cross-lane operation or barrier) and writes only scalar registers and
/// predicates: running it for a lane that does not execute it, and putting that lane's
/// registers back, is the same as not running it.
pub fn register_only(f: &Function, inst: &Inst) -> bool {
    use crate::ir::{Bits, RegType};
    use Opcode::*;
    let opaque = matches!(
        inst.op,
        Ld | St | Iatom | Fatom | Call | Shfl | Ired | Fred | Redfirstidx | Barrier | Fence
    );
    !opaque
        && !inst
            .ops
            .iter()
            .any(|o| matches!(o, Operand::Addr(_) | Operand::Var(_)))
        && writes(inst).all(|r| {
            matches!(
                f.regs.get(r.0 as usize).map(|r| r.ty),
                Some(RegType::Pred | RegType::Scalar(Bits::B8 | Bits::B16 | Bits::B32 | Bits::B64))
            )
        })
}

/// Whether a special register holds the same value in every work-item of a work-group.
fn uniform_special(reg: SpecialReg) -> bool {
    !matches!(
        reg,
        SpecialReg::LaneId | SpecialReg::LocalId | SpecialReg::ActiveMask
    )
}

/// Whether `inst` computes registers without a side effect and cannot fault: it is
/// [`register_only`], or a kernel's `ld.param` into a scalar register (the launch's
/// arguments, which every work-item may read).
pub fn pure(f: &Function, inst: &Inst) -> bool {
    register_only(f, inst)
        || (inst.op == Opcode::Ld
            && f.is_kernel()
            && inst.q.space == Some(crate::ir::AddrSpace::Param)
            && writes(inst).all(|r| {
                matches!(
                    f.regs.get(r.0 as usize).map(|r| r.ty),
                    Some(crate::ir::RegType::Scalar(_))
                )
            }))
}

/// Whether `inst` may be a uniform instruction: [`pure`], and no special register it reads
/// differs between work-items.
fn capable(f: &Function, inst: &Inst) -> bool {
    pure(f, inst)
        && !inst.ops.iter().any(|o| match *o {
            Operand::Special { reg, .. } => !uniform_special(reg),
            _ => false,
        })
}

/// The divergence facts of `f`, whose CFG is `cfg`.
pub fn analyze(f: &Function, cfg: &Cfg) -> Uniformity {
    let Some(ipdom) = post_dominators(cfg) else {
        return Uniformity::everything_varies(f, cfg);
    };
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut u = Uniformity {
        divergent: vec![false; cfg.blocks.len()],
        varying: vec![false; f.regs.len()],
        lane_affine: Vec::new(),
    };
    if !f.is_kernel() {
        for &r in &f.reg_params {
            if let Some(v) = u.varying.get_mut(r.0 as usize) {
                *v = true;
            }
        }
    }
    let mut budget = BUDGET;
    let mut reach = Reach::new(cfg.blocks.len());
    loop {
        let mut changed = false;
        // Registers, given the divergent blocks.
        let mut again = true;
        while again {
            again = false;
            for &b in cfg.rpo() {
                let Code::Insts(ref range) = cfg.blocks[b].code else {
                    continue;
                };
                for inst in body.get(range.clone()).unwrap_or(&[]) {
                    budget = budget.saturating_sub(1);
                    if writes(inst).all(|r| !u.uniform(r)) {
                        continue;
                    }
                    let varies = u.divergent[b] || !capable(f, inst) || reads_varying(inst, &u);
                    if varies {
                        for r in writes(inst) {
                            if let Some(v) = u.varying.get_mut(r.0 as usize) {
                                again |= !*v;
                                *v = true;
                            }
                        }
                    }
                }
            }
            changed |= again;
            if budget == 0 {
                return Uniformity::everything_varies(f, cfg);
            }
        }
        // Blocks, given the varying registers.
        for &b in cfg.rpo() {
            let Term::Branch { cond, .. } = cfg.blocks[b].term else {
                continue;
            };
            let varies = u.divergent[b]
                || match cond {
                    Cond::Pred { reg, .. } => !u.uniform(reg),
                    Cond::DispatchBelow(_) | Cond::Junction(_) => true,
                };
            if !varies {
                continue;
            }
            for s in cfg.blocks[b].term.succs() {
                let mut runner = s;
                while runner != ipdom[b] {
                    budget = budget.saturating_sub(1);
                    if runner == UNDEF || runner >= u.divergent.len() || budget == 0 {
                        return Uniformity::everything_varies(f, cfg);
                    }
                    changed |= !u.divergent[runner];
                    u.divergent[runner] = true;
                    runner = ipdom[runner];
                }
            }
            // Lanes that meet again only after a back edge (spec-notes §88, "Lanes a loop
            // carries apart").
            let mut header = cfg.innermost_loop(b);
            while let Some(h) = header {
                let join = ipdom[b];
                if join < cfg.blocks.len()
                    && join != h
                    && cfg.in_loop(h, join)
                    && reach.avoiding(cfg, b, h, join, &mut budget)
                {
                    for &x in cfg.rpo() {
                        if cfg.in_loop(h, x) && !u.divergent[x] {
                            u.divergent[x] = true;
                            changed = true;
                        }
                    }
                }
                if budget == 0 {
                    return Uniformity::everything_varies(f, cfg);
                }
                header = cfg.parent_loop(h);
            }
        }
        if !changed {
            break;
        }
    }
    u.lane_affine = lane_affine(f, cfg, &u, &mut budget);
    if budget == 0 {
        return Uniformity::everything_varies(f, cfg);
    }
    u
}

/// Whether the low bits of `inst`'s result depend only on the low bits of its operands
/// (and the operands that do not are uniform): sums, differences, products, bitwise
/// operations, left shifts by a uniform amount, integer conversions, a select on a uniform
/// predicate.
fn keeps_low_bits(inst: &Inst, u: &Uniformity) -> bool {
    use Opcode::*;
    let uniform_at = |k: usize| match inst.ops.get(k) {
        Some(Operand::Imm(_)) => true,
        Some(Operand::Reg { reg, .. } | Operand::Pred { reg, .. }) => u.uniform(*reg),
        _ => false,
    };
    match inst.op {
        // Saturation clamps the whole value: its low bits no longer follow the operands'.
        Iadd | Isub if inst.q.dsat => false,
        Mov | Iadd | Isub | Ineg | Umul | Smul | Umad | Smad | And | Or | Xor | Not | Zext
        | Sext | Trunc => true,
        Shl => uniform_at(2),
        Sel => uniform_at(3),
        _ => false,
    }
}

/// The lane-affine registers of `f` (see [`Uniformity::lane_affine`]), given its divergence.
fn lane_affine(f: &Function, cfg: &Cfg, u: &Uniformity, budget: &mut usize) -> Vec<bool> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut affine: Vec<bool> = (0..f.regs.len()).map(|_| true).collect();
    if !f.is_kernel() {
        for &r in &f.reg_params {
            if let Some(a) = affine.get_mut(r.0 as usize) {
                *a = u.uniform(r);
            }
        }
    }
    let mut again = true;
    while again && *budget > 0 {
        again = false;
        for &b in cfg.rpo() {
            let Code::Insts(ref range) = cfg.blocks[b].code else {
                continue;
            };
            for inst in body.get(range.clone()).unwrap_or(&[]) {
                *budget = budget.saturating_sub(1);
                if u.uniform_inst(f, inst) {
                    continue;
                }
                let rules = isa::def(inst.op).form(inst.form).operands;
                let operands_affine = inst.ops.iter().enumerate().all(|(k, op)| {
                    if rules.get(k).is_some_and(|r| r.write) {
                        return !matches!(
                            op,
                            Operand::Reg {
                                swizzle: Some(_),
                                ..
                            }
                        );
                    }
                    match *op {
                        Operand::Imm(_) => true,
                        Operand::Special { reg, .. } => {
                            reg == SpecialReg::LaneId || uniform_special(reg)
                        }
                        Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => {
                            affine.get(reg.0 as usize).copied().unwrap_or(false)
                        }
                        _ => false,
                    }
                });
                let keeps = !u.divergent[b]
                    && register_only(f, inst)
                    && keeps_low_bits(inst, u)
                    && operands_affine;
                if !keeps {
                    for r in writes(inst) {
                        if let Some(a) = affine.get_mut(r.0 as usize) {
                            again |= *a;
                            *a = false;
                        }
                    }
                }
            }
        }
    }
    affine
}

/// Scratch of [`Reach::avoiding`]: a visit mark per block (stamped, so never cleared) and
/// a stack.
struct Reach {
    seen: Vec<u32>,
    stamp: u32,
    stack: Vec<BlockId>,
}

impl Reach {
    fn new(blocks: usize) -> Reach {
        Reach {
            seen: vec![0; blocks],
            stamp: 0,
            stack: Vec::new(),
        }
    }

    /// Whether loop header `h` is reachable from a successor of `b` through blocks of `h`'s
    /// loop without passing `join`: some lanes leaving `b` reach `join` only in a later
    /// iteration.
    fn avoiding(
        &mut self,
        cfg: &Cfg,
        b: BlockId,
        h: BlockId,
        join: BlockId,
        budget: &mut usize,
    ) -> bool {
        self.stamp += 1;
        self.stack.clear();
        self.stack.extend(cfg.blocks[b].term.succs());
        while let Some(x) = self.stack.pop() {
            *budget = budget.saturating_sub(1);
            if x == h {
                return true;
            }
            if x == join || self.seen[x] == self.stamp || !cfg.in_loop(h, x) || *budget == 0 {
                continue;
            }
            self.seen[x] = self.stamp;
            self.stack.extend(cfg.blocks[x].term.succs());
        }
        false
    }
}

/// Whether an operand `inst` reads (not one it writes) is a varying register or a special
/// register that differs between work-items.
fn reads_varying(inst: &Inst, u: &Uniformity) -> bool {
    let rules = isa::def(inst.op).form(inst.form).operands;
    inst.ops.iter().enumerate().any(|(k, op)| {
        let written = rules.get(k).is_some_and(|r| r.write);
        let mut varies = false;
        match *op {
            Operand::Special { reg, .. } => varies = !uniform_special(reg),
            // A partial write (a swizzle) keeps the rest of its destination.
            Operand::Reg {
                swizzle: Some(_), ..
            } if written => operand_reads(op, |r| varies |= !u.uniform(r)),
            _ if written => {}
            _ => operand_reads(op, |r| varies |= !u.uniform(r)),
        }
        varies
    })
}

/// The immediate post-dominator of every block reachable from the entry (the virtual exit
/// is `cfg.blocks.len()`), or `None` when such a block cannot reach a `return`.
fn post_dominators(cfg: &Cfg) -> Option<Vec<usize>> {
    let n = cfg.blocks.len();
    let exit = n;
    let returns: Vec<BlockId> = cfg
        .rpo()
        .iter()
        .copied()
        .filter(|&b| matches!(cfg.blocks[b].term, Term::Return(_)))
        .collect();
    // Post-order of the reversed graph from the exit (iterative depth-first search).
    let mut number = vec![UNDEF; n + 1];
    let mut order: Vec<usize> = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let preds = |x: usize| -> &[BlockId] {
        if x == exit {
            &returns
        } else {
            cfg.preds(x)
        }
    };
    let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
    seen[exit] = true;
    while let Some(top) = stack.last_mut() {
        let (x, i) = *top;
        if let Some(&p) = preds(x).get(i) {
            top.1 += 1;
            if !seen[p] {
                seen[p] = true;
                stack.push((p, 0));
            }
        } else {
            number[x] = order.len();
            order.push(x);
            stack.pop();
        }
    }
    if cfg.rpo().iter().any(|&b| !seen[b]) {
        return None;
    }
    let succs = |x: usize| -> [Option<usize>; 2] {
        match cfg.blocks[x].term {
            Term::Return(_) => [Some(exit), None],
            Term::Jump(t) => [Some(t), None],
            Term::Branch { then, els, .. } => [Some(then), Some(els)],
        }
    };
    let mut ipdom = vec![UNDEF; n + 1];
    ipdom[exit] = exit;
    let intersect = |ipdom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while number[a] < number[b] {
                a = ipdom[a];
            }
            while number[b] < number[a] {
                b = ipdom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &x in order.iter().rev().skip(1) {
            let mut new = UNDEF;
            for s in succs(x).into_iter().flatten() {
                if ipdom[s] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    s
                } else {
                    intersect(&ipdom, new, s)
                };
            }
            if new != ipdom[x] {
                ipdom[x] = new;
                changed = true;
            }
        }
    }
    Some(ipdom)
}

#[cfg(test)]
mod tests;
