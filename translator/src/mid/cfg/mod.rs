//! The control-flow graph of a function body: basic blocks split at labels and at
//! `goto`/`return`, the repair of irreducible regions, dominators, natural loops, and the
//! placement of blocks for the structurizer.
//!
//! Owns: turning the flat instruction list into blocks with two-way terminators (a
//! conditional `goto` whose target is the next instruction is a plain jump: its two edges
//! are one), and the analyses the structurizer asks about, each answered in constant or
//! logarithmic time. Every pass is iterative and O((blocks + edges) log blocks) at worst:
//! the depth-first orders (`order`), the loop-nesting forest (`cycles`), the irreducible
//! repair (`reducible`), which gives multi-entry cycles a dispatch hub and never duplicates
//! a block, so barriers and sub-group instructions stay where the producer put them,
//! Lengauer-Tarjan dominators (`dominators`) and merge sequencing (`junctions`).
//!
//! Must not: emit SPIR-V.

mod cycles;
mod dominators;
mod junctions;
mod order;
mod reducible;
#[cfg(test)]
mod tests;

use crate::diag::Diagnostic;
use crate::ir::{Function, Inst, Opcode, Operand};
use order::{Graph, Intervals};

/// Index of a block in [`Cfg::blocks`].
pub type BlockId = usize;

/// "No block / no cycle / unnumbered" in the analyses' `u32` tables.
const NONE: u32 = u32::MAX;

/// The condition of a two-way branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// A predicate register, possibly negated.
    Pred {
        /// The predicate.
        reg: crate::ir::RegId,
        /// `!` written.
        negated: bool,
    },
    /// The dispatch variable (irreducible-region repair) is below this value.
    DispatchBelow(u32),
    /// The junction variable (merge sequencing, see `junctions`) equals this value.
    Junction(u32),
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// Unconditional jump.
    Jump(BlockId),
    /// Two-way branch to two different blocks.
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
    /// Set the dispatch variable to this value.
    SetDispatch(u32),
    /// Set the junction variable to this value.
    SetJunction(u32),
}

impl Code {
    /// Whether this is the code of a setter block (it only sets a variable of the
    /// structurizer's own).
    pub fn is_setter(&self) -> bool {
        matches!(self, Code::SetDispatch(_) | Code::SetJunction(_))
    }
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
    /// Successor blocks (none, one, or two different ones).
    pub fn succs(&self) -> impl Iterator<Item = BlockId> {
        let (targets, n) = match *self {
            Term::Jump(t) => ([t, t], 1),
            Term::Branch { then, els, .. } => ([then, els], 2),
            Term::Return(_) => ([0, 0], 0),
        };
        targets.into_iter().take(n)
    }

    /// The successor slots, to retarget edges.
    fn targets_mut(&mut self) -> impl Iterator<Item = &mut BlockId> {
        match self {
            Term::Jump(t) => [Some(t), None],
            Term::Branch { then, els, .. } => [Some(then), Some(els)],
            Term::Return(_) => [None, None],
        }
        .into_iter()
        .flatten()
    }
}

/// A function's reducible CFG with its analyses.
pub struct Cfg {
    /// Blocks; block 0 is the entry, an empty block that no edge targets.
    pub blocks: Vec<Block>,
    /// Whether the irreducible repair added a dispatch variable.
    pub dispatch: bool,
    /// Whether merge sequencing added a junction variable.
    pub junction: bool,
    graph: Graph,
    idom: Vec<BlockId>,
    dom: Intervals,
    loops: cycles::Loops,
}

fn is_terminator(i: &Inst) -> bool {
    matches!(i.op, Opcode::Goto | Opcode::Return)
}

impl Cfg {
    /// Builds the CFG of `f`'s body and makes it reducible. Malformed IR (a label or
    /// condition operand of the wrong kind, a label outside the body) is an error at the
    /// instruction, never a guess.
    pub fn build(f: &Function) -> Result<Cfg, Diagnostic> {
        let mut blocks = split(f)?;
        let mut graph = Graph::new(&blocks);
        let mut cycles = cycles::Cycles::new(&blocks, &graph);
        let dispatch = reducible::repair(&mut blocks, &graph, &cycles);
        if dispatch {
            graph = Graph::new(&blocks);
            cycles = cycles::Cycles::new(&blocks, &graph);
        }
        let mut cfg = Cfg::analyze(f, blocks, graph, cycles)?;
        cfg.dispatch = dispatch;
        if let Some(blocks) = junctions::sequence(&cfg) {
            let graph = Graph::new(&blocks);
            let cycles = cycles::Cycles::new(&blocks, &graph);
            cfg = Cfg::analyze(f, blocks, graph, cycles)?;
            cfg.dispatch = dispatch;
            cfg.junction = true;
        }
        Ok(cfg)
    }

    /// Dominators and loops of a graph made reducible, checked to be so.
    fn analyze(
        f: &Function,
        blocks: Vec<Block>,
        graph: Graph,
        cycles: cycles::Cycles,
    ) -> Result<Cfg, Diagnostic> {
        let idom = dominators::idoms(&graph);
        let dom = dominators::tree(&graph, &idom);
        let cfg = Cfg {
            blocks,
            dispatch: false,
            junction: false,
            graph,
            idom,
            dom,
            loops: cycles::Loops::new(cycles),
        };
        // Reducible: every edge to a depth-first ancestor goes to a dominator.
        for &b in &cfg.graph.rpo {
            for s in cfg.blocks[b].term.succs() {
                if cfg.graph.in_subtree(s, b) && !cfg.dominates(s, b) {
                    return Err(Diagnostic::error(
                        f.span,
                        format!(
                            "internal error: the control flow of @{} is still irreducible \
                             after its repair (edge into block {s})",
                            f.name
                        ),
                    ));
                }
            }
        }
        Ok(cfg)
    }

    /// The blocks reachable from the entry, in reverse post-order.
    pub fn rpo(&self) -> &[BlockId] {
        &self.graph.rpo
    }

    /// The reachable predecessors of `b`, one per edge.
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.graph.preds(b)
    }

    /// The immediate dominator of a reachable block (the entry's is itself).
    pub fn idom(&self, b: BlockId) -> BlockId {
        self.idom[b]
    }

    /// Whether `a` dominates `b` (both reachable).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom.contains(a, b)
    }

    /// Whether the edge `from -> to` is a back edge (`to` dominates `from`).
    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> bool {
        self.dominates(to, from)
    }

    /// Whether `h` heads a loop.
    pub fn is_loop_header(&self, h: BlockId) -> bool {
        self.loops.is_header(h)
    }

    /// Whether block `b` belongs to the natural loop headed by `h`.
    pub fn in_loop(&self, h: BlockId, b: BlockId) -> bool {
        self.loops.in_loop(h, b)
    }

    /// The header of the innermost loop that contains `b`, if any.
    pub fn innermost_loop(&self, b: BlockId) -> Option<BlockId> {
        self.loops.innermost(b)
    }

    /// The header of the loop that immediately encloses the loop headed by `h`, if any.
    pub fn parent_loop(&self, h: BlockId) -> Option<BlockId> {
        self.loops.parent(h)
    }

    /// The header of the outermost loop that contains `a` but not `b`, if any.
    pub fn outermost_loop_left(&self, a: BlockId, b: BlockId) -> Option<BlockId> {
        self.loops.outermost_left(a, b)
    }

    /// Where the structurizer places each block (Ramsey's rules with loop exits hoisted).
    pub fn placement(&self) -> Placement {
        let n = self.blocks.len();
        let mut parent = vec![usize::MAX; n];
        let mut labelled = vec![false; n];
        for &b in self.rpo().iter().skip(1) {
            let idom = self.idom(b);
            // A setter only sets a private variable: it stays with its predecessor, in the
            // loop, so that it is never one more exit to hoist.
            let hoisted_to = if self.blocks[b].code.is_setter() {
                None
            } else {
                self.outermost_loop_left(idom, b)
            };
            parent[b] = hoisted_to.unwrap_or(idom);
            let forward = self
                .preds(b)
                .iter()
                .filter(|&&q| !self.is_back_edge(q, b))
                .count();
            labelled[b] = hoisted_to.is_some() || forward >= 2;
        }
        Placement { parent, labelled }
    }
}

/// Where the structurizer places each block.
pub struct Placement {
    /// The block each reachable block is emitted under: its immediate dominator, or the
    /// header of the outermost loop it leaves (it is *hoisted* after that loop, so that the
    /// loop's work-items reconverge before it runs); `usize::MAX` for the entry.
    pub parent: Vec<BlockId>,
    /// Whether a block is reached only by a break: a *merge* (two or more forward
    /// predecessors) or a hoisted loop exit; it becomes the label of a block construct
    /// wrapped around its parent's code. Every other block is placed inline where its only
    /// forward predecessor branches to it.
    pub labelled: Vec<bool>,
}

impl Placement {
    /// The labelled children of every block in reverse post-order, flat: those of `x` are
    /// `list[start[x]..start[x + 1]]`.
    pub fn merges(&self, rpo: &[BlockId]) -> (Vec<usize>, Vec<BlockId>) {
        let n = self.parent.len();
        let mut start = vec![0usize; n + 1];
        for &b in rpo.iter().skip(1) {
            if self.labelled[b] {
                start[self.parent[b] + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut list = vec![0; start[n]];
        let mut fill = start.clone();
        for &b in rpo.iter().skip(1) {
            if self.labelled[b] {
                list[fill[self.parent[b]]] = b;
                fill[self.parent[b]] += 1;
            }
        }
        (start, list)
    }
}

/// Splits `f`'s body into blocks: block 0 is an empty entry that jumps to the first.
fn split(f: &Function) -> Result<Vec<Block>, Diagnostic> {
    let Some(body) = f.body.as_deref() else {
        return Err(Diagnostic::error(
            f.span,
            format!("internal error: @{} has no body to translate", f.name),
        ));
    };
    let n = body.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    // The end of the body is a block of its own: falling off the end returns.
    leader[n] = true;
    for l in &f.labels {
        if l.target > n {
            return Err(Diagnostic::error(
                l.span,
                format!(
                    "internal error: label `{}` is past the end of @{}",
                    l.name, f.name
                ),
            ));
        }
        leader[l.target] = true;
    }
    for (i, inst) in body.iter().enumerate() {
        if is_terminator(inst) {
            leader[i + 1] = true;
        }
    }
    let starts: Vec<usize> = (0..=n).filter(|&i| leader[i]).collect();
    let mut block_at = vec![0; n + 1];
    for (k, &s) in starts.iter().enumerate() {
        block_at[s] = k + 1;
    }
    let mut blocks = Vec::with_capacity(starts.len() + 1);
    blocks.push(Block {
        code: Code::Insts(0..0),
        term: Term::Jump(1),
    });
    // Conditional returns get a block of their own, after the others.
    let mut extra: Vec<Block> = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let Some(&end) = starts.get(k + 1) else {
            // The block at the end of the body.
            blocks.push(Block {
                code: Code::Insts(n..n),
                term: Term::Return(None),
            });
            continue;
        };
        let last = &body[end - 1];
        let fall = block_at[end];
        let operand = |i: usize| {
            last.ops
                .get(i)
                .ok_or_else(|| malformed(last, "an operand is missing"))
        };
        let label = |i: usize| match operand(i)? {
            Operand::Label(l) => f
                .labels
                .get(l.0 as usize)
                .map(|l| block_at[l.target])
                .ok_or_else(|| malformed(last, "its label is not one of the function's")),
            _ => Err(malformed(last, "its target is not a label")),
        };
        let pred = |i: usize| match *operand(i)? {
            Operand::Pred { reg, negated } => Ok(Cond::Pred { reg, negated }),
            _ => Err(malformed(last, "its condition is not a predicate")),
        };
        let (code_end, term) = match (last.op, last.q.cond) {
            (Opcode::Goto, false) => (end - 1, Term::Jump(label(0)?)),
            (Opcode::Goto, true) => {
                let (cond, then) = (pred(0)?, label(1)?);
                if then == fall {
                    // `goto.cond %p, L; L:` does the same whatever %p is.
                    (end - 1, Term::Jump(fall))
                } else {
                    let els = fall;
                    (end - 1, Term::Branch { cond, then, els })
                }
            }
            (Opcode::Return, false) => (end - 1, Term::Return(last.ops.first().copied())),
            (Opcode::Return, true) => {
                let cond = pred(0)?;
                let ret = starts.len() + 1 + extra.len();
                extra.push(Block {
                    code: Code::Insts(end..end),
                    term: Term::Return(last.ops.get(1).copied()),
                });
                let els = fall;
                (
                    end - 1,
                    Term::Branch {
                        cond,
                        then: ret,
                        els,
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
    Ok(blocks)
}

/// An internal error at a control-flow instruction the validator should have refused.
fn malformed(inst: &Inst, what: &str) -> Diagnostic {
    Diagnostic::error(
        inst.span,
        format!(
            "internal error: malformed `{}` instruction: {what}",
            inst.op.as_str()
        ),
    )
}
