//! The control-flow graph of a function body: basic blocks split at labels and at
//! `goto`/`return`, dominators, natural loops, and the repair of irreducible regions.
//!
//! Owns: turning the flat instruction list into blocks with two-way terminators. An
//! irreducible region (a cycle entered at more than one block) gets a dispatch variable for
//! that region only: every edge into one of its entries instead sets the variable and jumps
//! to a new single header that branches on it. No block is ever duplicated, so barriers and
//! sub-group instructions stay where the producer put them.
//!
//! Must not: emit SPIR-V.

use crate::ir::{Function, Inst, Opcode, Operand, RegId};

/// Index of a block in [`Cfg::blocks`].
pub type BlockId = usize;

/// The condition of a two-way branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// A predicate register, possibly negated.
    Pred {
        /// The predicate.
        reg: RegId,
        /// `!` written.
        negated: bool,
    },
    /// Dispatch variable `var` equals `value` (irreducible-region repair).
    Dispatch {
        /// Which dispatch variable.
        var: u32,
        /// The value tested.
        value: u32,
    },
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// Unconditional jump.
    Jump(BlockId),
    /// Two-way branch.
    Branch {
        /// Condition.
        cond: Cond,
        /// Taken when true.
        then: BlockId,
        /// Taken when false.
        els: BlockId,
    },
    /// Return from the function (the kernel's work-item ends), with an optional value.
    Return(Option<Operand>),
}

/// Straight-line contents of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Code {
    /// Instructions `start..end` of the body (terminator excluded).
    Insts(std::ops::Range<usize>),
    /// Set dispatch variable `var` to `value`.
    SetDispatch {
        /// Variable.
        var: u32,
        /// Value.
        value: u32,
    },
}

/// A basic block.
#[derive(Clone, Debug)]
pub struct Block {
    /// Its straight-line code.
    pub code: Code,
    /// Its terminator.
    pub term: Term,
}

impl Term {
    /// Successor blocks.
    pub fn succs(&self) -> Vec<BlockId> {
        match *self {
            Term::Jump(t) => vec![t],
            Term::Branch { then, els, .. } => vec![then, els],
            Term::Return(_) => vec![],
        }
    }

    fn retarget(&mut self, from: BlockId, to: BlockId) {
        match self {
            Term::Jump(t) => {
                if *t == from {
                    *t = to
                }
            }
            Term::Branch { then, els, .. } => {
                if *then == from {
                    *then = to
                }
                if *els == from {
                    *els = to
                }
            }
            Term::Return(_) => {}
        }
    }
}

/// A function's CFG with its analyses.
#[derive(Clone, Debug)]
pub struct Cfg {
    /// Blocks; block 0 is the entry.
    pub blocks: Vec<Block>,
    /// Number of dispatch variables introduced by irreducibility repair.
    pub dispatch_vars: u32,
    /// Blocks reachable from the entry, in reverse post-order.
    pub rpo: Vec<BlockId>,
    /// Position of each block in `rpo` (`usize::MAX` when unreachable).
    pub rpo_index: Vec<usize>,
    /// Immediate dominator (the entry's is itself; unreachable: `usize::MAX`).
    pub idom: Vec<BlockId>,
    /// Predecessors (reachable ones only).
    pub preds: Vec<Vec<BlockId>>,
    /// For each loop header, the blocks of its natural loop.
    pub loops: Vec<Option<Vec<bool>>>,
}

fn is_terminator(i: &Inst) -> bool {
    matches!(i.op, Opcode::Goto | Opcode::Return)
}

impl Cfg {
    /// Builds the CFG of `f`'s body and makes it reducible.
    pub fn build(f: &Function) -> Cfg {
        let body: &[Inst] = f.body.as_deref().unwrap_or(&[]);
        let n = body.len();
        // Leaders.
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        // The end of the body is a block of its own: falling off the end returns.
        leader[n] = true;
        for l in &f.labels {
            leader[l.target.min(n)] = true;
        }
        for (i, inst) in body.iter().enumerate() {
            if is_terminator(inst) {
                leader[i + 1] = true;
            }
        }
        let starts: Vec<usize> = (0..=n).filter(|&i| leader[i]).collect();
        let mut block_at = vec![usize::MAX; n + 1];
        for (b, &s) in starts.iter().enumerate() {
            block_at[s] = b;
        }
        // The block starting at n (if any) is the implicit end: it returns.
        let mut blocks: Vec<Block> = Vec::new();
        let mut extra: Vec<Block> = Vec::new();
        let nblocks = starts.len();
        for (b, &s) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n + 1).min(n);
            if s >= n {
                blocks.push(Block {
                    code: Code::Insts(n..n),
                    term: Term::Return(None),
                });
                continue;
            }
            let last = &body[end - 1];
            let fall = block_at[end];
            let label_block = |op: &Operand| match op {
                Operand::Label(l) => block_at[f.labels[l.0 as usize].target.min(n)],
                _ => fall,
            };
            let (code_end, term) = match (last.op, last.q.cond) {
                (Opcode::Goto, false) => (end - 1, Term::Jump(label_block(&last.ops[0]))),
                (Opcode::Goto, true) => {
                    let cond = pred_cond(&last.ops[0]);
                    (
                        end - 1,
                        Term::Branch {
                            cond,
                            then: label_block(&last.ops[1]),
                            els: fall,
                        },
                    )
                }
                (Opcode::Return, false) => (end - 1, Term::Return(last.ops.first().copied())),
                (Opcode::Return, true) => {
                    let cond = pred_cond(&last.ops[0]);
                    let ret = nblocks + extra.len();
                    extra.push(Block {
                        code: Code::Insts(end..end),
                        term: Term::Return(last.ops.get(1).copied()),
                    });
                    (
                        end - 1,
                        Term::Branch {
                            cond,
                            then: ret,
                            els: fall,
                        },
                    )
                }
                _ => (end, Term::Jump(fall)),
            };
            blocks.push(Block {
                code: Code::Insts(s..code_end),
                term,
            });
        }
        blocks.extend(extra);
        let mut cfg = Cfg {
            blocks,
            dispatch_vars: 0,
            rpo: vec![],
            rpo_index: vec![],
            idom: vec![],
            preds: vec![],
            loops: vec![],
        };
        cfg.analyze();
        cfg.make_reducible();
        cfg
    }

    /// Recomputes RPO, predecessors, dominators and loops.
    pub fn analyze(&mut self) {
        let n = self.blocks.len();
        // Iterative DFS post-order.
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(BlockId, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            let succs = self.blocks[b].term.succs();
            if *i < succs.len() {
                let s = succs[*i];
                *i += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        self.rpo = post;
        self.rpo_index = vec![usize::MAX; n];
        for (i, &b) in self.rpo.iter().enumerate() {
            self.rpo_index[b] = i;
        }
        self.preds = vec![vec![]; n];
        for &b in &self.rpo {
            for s in self.blocks[b].term.succs() {
                if !self.preds[s].contains(&b) {
                    self.preds[s].push(b);
                }
            }
        }
        // Cooper-Harvey-Kennedy dominators.
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in self.rpo.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &self.preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        self.intersect(&idom, p, new)
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        self.idom = idom;
        // Natural loops.
        self.loops = vec![None; n];
        for &b in &self.rpo {
            for s in self.blocks[b].term.succs() {
                if self.dominates(s, b) {
                    let body = self.loops[s].get_or_insert_with(|| vec![false; n]);
                    body[s] = true;
                    let mut work = vec![b];
                    while let Some(x) = work.pop() {
                        if !body[x] {
                            body[x] = true;
                            work.extend(self.preds[x].iter().copied());
                        }
                    }
                }
            }
        }
    }

    fn intersect(&self, idom: &[usize], mut a: BlockId, mut b: BlockId) -> BlockId {
        while a != b {
            while self.rpo_index[a] > self.rpo_index[b] {
                a = idom[a];
            }
            while self.rpo_index[b] > self.rpo_index[a] {
                b = idom[b];
            }
        }
        a
    }

    /// Whether `a` dominates `b` (both reachable).
    pub fn dominates(&self, a: BlockId, mut b: BlockId) -> bool {
        loop {
            if a == b {
                return true;
            }
            if b == 0 || self.idom[b] == usize::MAX {
                return false;
            }
            b = self.idom[b];
        }
    }

    /// Whether `b` is reachable from the entry.
    pub fn reachable(&self, b: BlockId) -> bool {
        self.rpo_index[b] != usize::MAX
    }

    /// Whether the edge `from -> to` is a back edge (`to` dominates `from`).
    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> bool {
        self.dominates(to, from)
    }

    /// Whether block `b` belongs to the natural loop headed by `h`.
    pub fn in_loop(&self, h: BlockId, b: BlockId) -> bool {
        self.loops[h].as_ref().is_some_and(|l| l[b])
    }

    /// Repairs irreducible regions until every retreating edge is a back edge.
    fn make_reducible(&mut self) {
        // Each repair removes one multi-entry cycle; bound the work defensively.
        for _ in 0..self.blocks.len() * 4 + 8 {
            let Some(scc) = self.find_irreducible_scc() else {
                return;
            };
            self.add_dispatcher(&scc);
            self.analyze();
        }
    }

    /// A strongly connected region with more than one entry, if any: the smallest one that
    /// contains a retreating edge that is not a back edge.
    fn find_irreducible_scc(&self) -> Option<Vec<bool>> {
        let n = self.blocks.len();
        for &b in &self.rpo {
            for s in self.blocks[b].term.succs() {
                let retreating = self.rpo_index[s] <= self.rpo_index[b];
                if retreating && !self.dominates(s, b) {
                    // Nodes reachable from s and reaching b, without leaving the region
                    // dominated by idom(s)'s ... use plain SCC of s within reachable blocks.
                    let fwd = self.reach(s, false);
                    let bwd = self.reach(b, true);
                    let scc: Vec<bool> = (0..n).map(|i| fwd[i] && bwd[i]).collect();
                    return Some(scc);
                }
            }
        }
        None
    }

    fn reach(&self, from: BlockId, backwards: bool) -> Vec<bool> {
        let mut seen = vec![false; self.blocks.len()];
        let mut work = vec![from];
        while let Some(x) = work.pop() {
            if seen[x] || !self.reachable(x) {
                continue;
            }
            seen[x] = true;
            if backwards {
                work.extend(self.preds[x].iter().copied());
            } else {
                work.extend(self.blocks[x].term.succs());
            }
        }
        seen
    }

    fn add_dispatcher(&mut self, scc: &[bool]) {
        let entries: Vec<BlockId> = self
            .rpo
            .iter()
            .copied()
            .filter(|&b| scc[b] && (b == 0 || self.preds[b].iter().any(|&p| !scc[p])))
            .collect();
        let var = self.dispatch_vars;
        self.dispatch_vars += 1;
        // The new single header: a chain of tests `var == i`, one per entry but the last.
        let header = self.blocks.len();
        let k = entries.len();
        if k == 1 {
            self.blocks.push(Block {
                code: Code::Insts(0..0),
                term: Term::Jump(entries[0]),
            });
        }
        for i in 0..k.saturating_sub(1) {
            let els = if i + 2 < k {
                header + i + 1
            } else {
                entries[k - 1]
            };
            let cond = Cond::Dispatch {
                var,
                value: i as u32,
            };
            self.blocks.push(Block {
                code: Code::Insts(0..0),
                term: Term::Branch {
                    cond,
                    then: entries[i],
                    els,
                },
            });
        }
        // Redirect every edge into an entry (from outside or inside the region) through a
        // block that sets the variable.
        let preds: Vec<(BlockId, BlockId)> = entries
            .iter()
            .flat_map(|&e| self.preds[e].iter().map(move |&p| (p, e)))
            .filter(|&(p, _)| p < header)
            .collect();
        for (p, e) in preds {
            let value = entries.iter().position(|&x| x == e).unwrap_or(0) as u32;
            let setter = self.blocks.len();
            self.blocks.push(Block {
                code: Code::SetDispatch { var, value },
                term: Term::Jump(header),
            });
            self.blocks[p].term.retarget(e, setter);
        }
        if entries.contains(&0) {
            // The function entry itself is in the region: start through the dispatcher.
            // Move block 0's contents to a new block and make 0 set the variable.
            let moved = self.blocks.len();
            let old = self.blocks[0].clone();
            self.blocks.push(old);
            for b in 0..self.blocks.len() {
                if b != 0 {
                    self.blocks[b].term.retarget(0, moved);
                }
            }
            let value = entries.iter().position(|&x| x == 0).unwrap_or(0) as u32;
            self.blocks[0] = Block {
                code: Code::SetDispatch { var, value },
                term: Term::Jump(header),
            };
        }
    }
}

fn pred_cond(op: &Operand) -> Cond {
    match *op {
        Operand::Pred { reg, negated } => Cond::Pred { reg, negated },
        _ => Cond::Pred {
            reg: RegId(0),
            negated: false,
        },
    }
}
