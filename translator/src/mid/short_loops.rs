//! Loops that end by themselves within a few iterations, which a cancellable translation
//! leaves without a cancel check (spec-notes §109).
//!
//! A loop is *short* when an exit test that runs in every iteration compares an *induction
//! register* with an immediate, the register changes the same way once per iteration, and
//! together they end the loop within a bound known at translation, whatever the register
//! held on entry. Recognised, for `w` the width of the compare and of the register:
//!
//! - `iadd.Wb r, r, c` (an immediate `c`, 1 ≤ c < 2^(w-1) as a signed value, no `.dsat`)
//!   with the loop staying while `ucmp` finds `r < K` or `r <= K` (an immediate `K`, in
//!   either operand order, the branch on the predicate or its negation): at most
//!   ⌊K / c⌋ + 3 iterations when `r + c` cannot wrap past `K` (K − 1 + c < 2^w, or
//!   K + c < 2^w for `<=`); only the update before the first test can wrap, and it lands
//!   below `K`;
//! - `shr.Wb r, r, c` (1 ≤ c < w) with the loop staying while a compare (`ucmp` or `scmp`)
//!   of `r` with an immediate holds that is false for `r = 0`: after ⌈w / c⌉ updates `r` is
//!   0, so at most ⌈w / c⌉ + 2 iterations.
//!
//! "Once per iteration": the test's block and the update's block belong to the loop and to
//! no loop inside it, and each dominates every latch (a block with an edge back to the
//! header), so every iteration runs each exactly once; the register has no other write in
//! the loop (calls' results and partial writes of vectors count as writes). A loop with a
//! `call` is short only when no callee it may reach can run a loop ([`CallBounds`]: a
//! callee's own short loops would multiply the bound unseen, a recursive one has no bound).
//! Inner loops multiply: a loop is short when each loop inside it is, and its bound times
//! one plus the work of its inner loops is at most [`SHORT_LOOP_WORK`] iterations.
//!
//! The cost a short loop saves is the cancel check itself (docs/performance.md): on lavapipe
//! a strip's counter and exit cost a small loop body half as much again. What it gives up is
//! nothing: a short loop ends within [`SHORT_LOOP_WORK`] iterations of its body, each
//! without a call that may loop (its calls run straight-line code, as a kernel without
//! loops does), and the loop around it (or the kernel's return) is the next check.
//!
//! Must not: emit SPIR-V; call a loop short on a pattern it has not proved.

use super::calls::CallGraph;
use super::cfg::{BlockId, Cfg, Code, Cond, Term};
use super::uniformity::writes;
use crate::ir::{CmpOp, Function, Inst, Module, Opcode, Operand, RegId, RegType};
use std::collections::HashMap;

/// The most iterations (the loop's own times those of the loops inside it) a short loop
/// may run between two cancel checks.
pub const SHORT_LOOP_WORK: u128 = 256;

/// Which calls may run a loop: a function whose body jumps back to an earlier instruction or
/// to itself (every cycle of a flat body has such a jump), one in a call cycle, or one that
/// calls such a function, directly or through an address.
pub struct CallBounds {
    /// By function.
    may_loop: Vec<bool>,
    /// Whether some function other than a kernel may loop (what a call through a register
    /// may reach).
    through_address: bool,
}

impl CallBounds {
    /// The bounds of `module`'s calls; linear in its size.
    pub fn new(module: &Module) -> CallBounds {
        let graph = CallGraph::new(module);
        let cycles = graph.cycles();
        let loops: Vec<bool> = module
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| jumps_back(f) || cycles.of.get(i).is_some_and(|c| c.is_some()))
            .collect();
        let may_loop = graph.reaching(&loops);
        // Any function a register may hold the address of: every one that is not a kernel,
        // not only those whose address the call graph sees taken (an address can also sit
        // in an initializer the graph does not read).
        let through_address = module
            .functions
            .iter()
            .zip(&may_loop)
            .any(|(f, &l)| l && !f.is_kernel());
        CallBounds {
            may_loop,
            through_address,
        }
    }

    /// Whether `call` (a `call` instruction) may run a loop before it returns.
    fn may_loop(&self, call: &Inst) -> bool {
        let target = call.ops.iter().find_map(|o| match *o {
            Operand::Func(g) => Some(g.0 as usize),
            _ => None,
        });
        match target {
            Some(g) => self.may_loop.get(g).copied().unwrap_or(true),
            None => self.through_address,
        }
    }
}

/// Whether `f`'s body has a `goto` to its own position or an earlier one (or `f` has no
/// body here: what it runs is unknown).
fn jumps_back(f: &Function) -> bool {
    let Some(body) = f.body.as_deref() else {
        return true;
    };
    body.iter().enumerate().any(|(i, inst)| {
        inst.op == Opcode::Goto
            && inst.ops.iter().any(|o| match *o {
                Operand::Label(l) => f.labels.get(l.0 as usize).is_none_or(|l| l.target <= i),
                _ => false,
            })
    })
}

/// For each block of `cfg` (`f`'s), whether it heads a short loop; `calls` says which of
/// its calls may run a loop.
pub fn short_loops(f: &Function, cfg: &Cfg, calls: &CallBounds) -> Vec<bool> {
    let n = cfg.blocks.len();
    let mut short = vec![false; n];
    let Some(body) = f.body.as_deref() else {
        return short;
    };
    let mut defs: HashMap<RegId, Vec<(BlockId, usize)>> = HashMap::new();
    // Whether each loop (by header) holds a call that may loop, its directly nested loops,
    // and the blocks it holds outside them.
    let mut looping_call = vec![false; n];
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    let mut direct: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for &b in cfg.rpo() {
        if let Some(h) = cfg.innermost_loop(b) {
            direct[h].push(b);
        }
        if let Code::Insts(range) = &cfg.blocks[b].code {
            for i in range.clone() {
                let inst = &body[i];
                if inst.op == Opcode::Call && calls.may_loop(inst) {
                    if let Some(h) = cfg.innermost_loop(b) {
                        looping_call[h] = true;
                    }
                }
                for r in writes(inst) {
                    defs.entry(r).or_default().push((b, i));
                }
            }
        }
        if cfg.is_loop_header(b) {
            if let Some(p) = cfg.parent_loop(b) {
                children[p].push(b);
            }
        }
    }
    let loops = Loops {
        f,
        body,
        cfg,
        defs: &defs,
    };
    let mut work = vec![0u128; n];
    // Inner loops come after their outer loop's header in reverse post-order: backwards,
    // every inner loop is decided before the loop around it.
    for &h in cfg.rpo().iter().rev() {
        if !cfg.is_loop_header(h) {
            continue;
        }
        let kids = &children[h];
        if kids.iter().any(|&c| looping_call[c]) {
            looping_call[h] = true;
        }
        if looping_call[h] || kids.iter().any(|&c| !short[c]) {
            continue;
        }
        let inner: u128 = kids.iter().map(|&c| work[c]).sum();
        let Some(bound) = loops.bound(h, &direct[h]) else {
            continue;
        };
        let w = bound.saturating_mul(1 + inner);
        if w <= SHORT_LOOP_WORK {
            short[h] = true;
            work[h] = w;
        }
    }
    short
}

/// What the search for a loop's bound reads.
struct Loops<'a> {
    f: &'a Function,
    body: &'a [Inst],
    cfg: &'a Cfg,
    /// Every write of each register: its block and instruction.
    defs: &'a HashMap<RegId, Vec<(BlockId, usize)>>,
}

impl Loops<'_> {
    /// The fewest iterations any exit test of the loop headed by `h` proves, if one does;
    /// `direct` are its blocks outside its inner loops.
    fn bound(&self, h: BlockId, direct: &[BlockId]) -> Option<u128> {
        let cfg = self.cfg;
        let latches: Vec<BlockId> = cfg
            .preds(h)
            .iter()
            .copied()
            .filter(|&p| cfg.in_loop(h, p))
            .collect();
        // Runs exactly once in every iteration.
        let every_iteration = |b: BlockId| {
            cfg.innermost_loop(b) == Some(h) && latches.iter().all(|&l| cfg.dominates(b, l))
        };
        direct
            .iter()
            .filter(|&&b| every_iteration(b))
            .filter_map(|&b| self.test_bound(h, b, &every_iteration))
            .min()
    }

    /// The bound the exit test ending block `b` proves for the loop headed by `h`.
    fn test_bound(
        &self,
        h: BlockId,
        b: BlockId,
        every_iteration: &dyn Fn(BlockId) -> bool,
    ) -> Option<u128> {
        let cfg = self.cfg;
        let Term::Branch {
            cond: Cond::Pred { reg: p, negated },
            then,
            els,
        } = cfg.blocks[b].term
        else {
            return None;
        };
        let stays_on_then = cfg.in_loop(h, then);
        if stays_on_then == cfg.in_loop(h, els) {
            return None;
        }
        // The branch stays in the loop when the predicate is `stay`.
        let stay = stays_on_then != negated;
        let Code::Insts(range) = &cfg.blocks[b].code else {
            return None;
        };
        let cmp = self.body[range.clone()]
            .iter()
            .rev()
            .find(|i| writes(i).any(|r| r == p))?;
        let (r, k, op, w) = compare(cmp)?;
        let op = if stay { op } else { negate(op) };
        if self.f.regs.get(r.0 as usize).map(|d| d.ty) != Some(scalar(w)?) {
            return None;
        }
        let mut in_loop = self
            .defs
            .get(&r)?
            .iter()
            .filter(|&&(d, _)| cfg.in_loop(h, d));
        let (d, i) = *in_loop.next()?;
        if in_loop.next().is_some() || !every_iteration(d) {
            return None;
        }
        update_bound(&self.body[i], r, w, cmp.op == Opcode::Scmp, op, k)
    }
}

/// `RegType` of a scalar register of `w` bits.
fn scalar(w: u32) -> Option<RegType> {
    use crate::ir::Bits::*;
    let bits = match w {
        8 => B8,
        16 => B16,
        32 => B32,
        64 => B64,
        _ => return None,
    };
    Some(RegType::Scalar(bits))
}

/// A compare of a whole register with an immediate, as `r OP k` (the operands swapped when
/// the immediate comes first), with its width.
fn compare(inst: &Inst) -> Option<(RegId, u128, CmpOp, u32)> {
    if !matches!(inst.op, Opcode::Ucmp | Opcode::Scmp) {
        return None;
    }
    let (op, ty) = (inst.q.cop?, inst.q.ty?);
    if ty.packed().is_some() || ty.is_float() || inst.ops.len() != 3 {
        return None;
    }
    let w = ty.bits();
    match (&inst.ops[1], &inst.ops[2]) {
        (&Operand::Reg { reg, swizzle: None }, &Operand::Imm(k)) => Some((reg, k & mask(w), op, w)),
        (&Operand::Imm(k), &Operand::Reg { reg, swizzle: None }) => {
            Some((reg, k & mask(w), mirror(op), w))
        }
        _ => None,
    }
}

/// The bound a loop staying while `r OP k` gets from `update`, the only write of `r` in it.
fn update_bound(update: &Inst, r: RegId, w: u32, signed: bool, op: CmpOp, k: u128) -> Option<u128> {
    let ty = update.q.ty?;
    if ty.packed().is_some() || ty.is_float() || ty.bits() != w || update.ops.len() != 3 {
        return None;
    }
    let is_r = |o: &Operand| matches!(*o, Operand::Reg { reg, swizzle: None } if reg == r);
    if !is_r(&update.ops[0]) {
        return None;
    }
    let imm = |o: &Operand| match *o {
        Operand::Imm(c) => Some(c & mask(w)),
        _ => None,
    };
    match update.op {
        Opcode::Iadd if !update.q.dsat && !signed => {
            let c = match (&update.ops[1], &update.ops[2]) {
                (a, b) if is_r(a) => imm(b)?,
                (a, b) if is_r(b) => imm(a)?,
                _ => return None,
            };
            // A step forward: 1 ≤ c < 2^(w-1).
            if c == 0 || c >> (w - 1) != 0 {
                return None;
            }
            let room = 1u128 << w;
            let fits = match op {
                CmpOp::Lt => k == 0 || k - 1 + c < room,
                CmpOp::Le => k + c < room,
                _ => false,
            };
            fits.then(|| k / c + 3)
        }
        Opcode::Shr if is_r(&update.ops[1]) => {
            let c = imm(&update.ops[2])?;
            let ends_at_zero = !holds(op, 0, k, w, signed);
            (c >= 1 && c < w as u128 && ends_at_zero).then(|| (w as u128).div_ceil(c) + 2)
        }
        _ => None,
    }
}

/// Whether `a OP b` holds for `w`-bit values, signed or not.
fn holds(op: CmpOp, a: u128, b: u128, w: u32, signed: bool) -> bool {
    let key = |x: u128| -> i128 {
        match signed && (x >> (w - 1)) & 1 == 1 {
            true => x as i128 - (1i128 << w),
            false => x as i128,
        }
    };
    op.holds(key(a), key(b))
}

/// The low `w` bits.
fn mask(w: u32) -> u128 {
    match w {
        128.. => u128::MAX,
        _ => (1u128 << w) - 1,
    }
}

/// `b OP a` as `a OP' b`.
fn mirror(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        o => o,
    }
}

/// `!(a OP b)` as `a OP' b`.
fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
    }
}

#[cfg(test)]
#[path = "short_loops_tests.rs"]
mod tests;
