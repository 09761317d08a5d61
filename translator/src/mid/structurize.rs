//! The structurizer: turns a reducible [`Cfg`] into a structured program, a flat sequence of
//! [`Event`]s in which labelled blocks, loops and one-armed branches open and close like
//! brackets, and which maps one-to-one onto SPIR-V selection and loop constructs.
//!
//! The method follows Ramsey, "Beyond Relooper" (ICFP 2022): walk the dominator tree; a
//! block with two or more forward predecessors (a *merge* block) becomes the label at the
//! end of a labelled block wrapped around the code of its immediate dominator, and every
//! jump to it is a [`Event::Break`]; a loop header opens a loop and every back edge is a
//! [`Event::Continue`]; every other block is placed inline where its only predecessor
//! branches to it ([`Cfg::placement`]). A block that leaves a loop is *hoisted* after the
//! loop even when it has a single predecessor, so that the work-items of a loop reconverge
//! when they leave it, before anything that follows the loop (a barrier, a sub-group
//! operation) runs; the innermost such exit is fused with the loop. Neither arm of a
//! two-way branch falls through, so the branch is one-armed: the arm with fewer events goes
//! inside, the other follows, and branches nest O(log n) deep. (Blocks with many merges are
//! sequenced before this, see `cfg::junctions`.)
//!
//! The walk keeps its own stack of pending steps, so it runs in O(blocks + edges) steps and
//! constant call depth whatever the shape. Every reachable block's code appears exactly
//! once: nothing is duplicated.
//!
//! Must not: emit SPIR-V or look inside instructions.

use super::cfg::{BlockId, Cfg, Cond, Placement, Term};
use crate::ir::Operand;

/// One step of a structured program, in program order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// The straight-line code of a block.
    Code(BlockId),
    /// Opens a labelled block; a [`Event::Break`] with this label jumps to its end.
    BeginBlock(BlockId),
    /// Closes the labelled block: control continues at the merge block of that label.
    EndBlock(BlockId),
    /// Opens the loop headed by `header`; a [`Event::Continue`] with it jumps back. With an
    /// `exit`, the loop is also the labelled block of that label (its innermost hoisted
    /// exit), so that breaking to it is leaving the loop.
    BeginLoop {
        /// The loop header.
        header: BlockId,
        /// The label of the block the loop is fused with.
        exit: Option<BlockId>,
    },
    /// Closes the loop (and its fused block: control continues at `exit`).
    EndLoop {
        /// The loop header.
        header: BlockId,
        /// The label of the block the loop is fused with.
        exit: Option<BlockId>,
    },
    /// Opens a one-armed branch taken when `cond` (negated when `negate`) holds. The arm
    /// never falls through; the other arm of the two-way branch follows [`Event::EndIf`].
    BeginIf {
        /// The condition.
        cond: Cond,
        /// Take the arm when the condition is false.
        negate: bool,
    },
    /// Closes the one-armed branch.
    EndIf,
    /// Jumps to the end of the enclosing labelled block with this label.
    Break(BlockId),
    /// Jumps to the start of the enclosing loop with this header.
    Continue(BlockId),
    /// Returns, with an optional value.
    Return(Option<Operand>),
}

/// Which events of a structured program a lowering reaches: after a jump or a return,
/// the events up to the end of the construct they are in are unreachable and skipped (the
/// constructs opened there with them).
#[derive(Debug, Default)]
pub struct Reach {
    /// Control cannot reach the current position.
    dead: bool,
    /// How many constructs opened in skipped code are still open.
    skipped: usize,
}

impl Reach {
    /// Whether `ev` is in unreachable code (skip it).
    pub fn skips(&mut self, ev: Event) -> bool {
        if !self.dead {
            return false;
        }
        match ev {
            Event::BeginBlock(_) | Event::BeginLoop { .. } | Event::BeginIf { .. } => {
                self.skipped += 1;
                true
            }
            Event::EndBlock(_) | Event::EndLoop { .. } | Event::EndIf if self.skipped > 0 => {
                self.skipped -= 1;
                true
            }
            Event::Code(_) | Event::Break(_) | Event::Continue(_) | Event::Return(_) => true,
            _ => false,
        }
    }

    /// Whether control reaches the current position.
    pub fn live(&self) -> bool {
        !self.dead
    }

    /// Sets whether control reaches the current position (false after a jump or a return,
    /// true again at the end of a construct control reaches).
    pub fn set_live(&mut self, live: bool) {
        self.dead = !live;
    }

    /// Whether every construct opened in skipped code was closed.
    pub fn balanced(&self) -> bool {
        self.skipped == 0
    }
}

/// A step still to take.
enum Step {
    /// The events of the emission subtree rooted at a block.
    Tree(BlockId),
    /// The events of the edge `from -> to`.
    Edge(BlockId, BlockId),
    /// One event.
    Emit(Event),
}

/// Structures a reducible CFG. Fails (with an internal error message) only if the CFG's
/// analyses contradict each other.
pub fn structurize(cfg: &Cfg) -> Result<Vec<Event>, String> {
    let rpo = cfg.rpo();
    let placement = cfg.placement();
    let (start, merges) = placement.merges(rpo);
    let Placement { parent, labelled } = placement;
    // Events of each emission subtree, to put the lighter arm of a branch inside it: arms
    // nested inside branches then halve at each level, so branches nest O(log n) deep.
    let edge_size = |size: &[u64], from: BlockId, to: BlockId| {
        if cfg.is_back_edge(from, to) || labelled[to] {
            1
        } else {
            size[to]
        }
    };
    let mut size = vec![0u64; cfg.blocks.len()];
    for &x in rpo.iter().rev() {
        let ms = &merges[start[x]..start[x + 1]];
        let mut s = 3 + ms.iter().map(|&m| 2 + size[m]).sum::<u64>();
        s += match cfg.blocks[x].term {
            Term::Jump(t) => edge_size(&size, x, t),
            Term::Branch { then, els, .. } => {
                2 + edge_size(&size, x, then) + edge_size(&size, x, els)
            }
            Term::Return(_) => 1,
        };
        size[x] = s;
    }
    let mut out = Vec::with_capacity(3 * rpo.len());
    let mut steps = vec![Step::Tree(0)];
    let mut placed = 0usize;
    while let Some(step) = steps.pop() {
        match step {
            Step::Emit(e) => out.push(e),
            Step::Edge(from, to) => {
                if cfg.is_back_edge(from, to) {
                    out.push(Event::Continue(to));
                } else if labelled[to] {
                    out.push(Event::Break(to));
                } else if parent[to] == from {
                    steps.push(Step::Tree(to));
                } else {
                    return Err(format!(
                        "internal error: block {to} is neither a merge nor placed after block {from}"
                    ));
                }
            }
            Step::Tree(x) => {
                placed += 1;
                // Ramsey's nesting, the merges in ascending reverse post-order (the first is
                // the innermost block): [outside merges opened] [loop opened] [inside merges
                // opened] code, terminator, {close inside merge, its tree}, [loop closed],
                // {close outside merge, its tree}. A loop's merges outside it wrap the loop,
                // the innermost of them fused with it.
                let ms = &merges[start[x]..start[x + 1]];
                let is_loop = cfg.is_loop_header(x);
                let inside = |m: &&BlockId| !is_loop || cfg.in_loop(x, **m);
                let outside = |m: &&BlockId| is_loop && !cfg.in_loop(x, **m);
                let exit = ms.iter().find(outside).copied();
                for &m in ms.iter().rev().filter(outside) {
                    if Some(m) != exit {
                        out.push(Event::BeginBlock(m));
                    }
                }
                if is_loop {
                    out.push(Event::BeginLoop { header: x, exit });
                }
                for &m in ms.iter().rev().filter(inside) {
                    out.push(Event::BeginBlock(m));
                }
                out.push(Event::Code(x));
                // The rest, pushed last-first.
                for &m in ms.iter().rev().filter(outside) {
                    steps.push(Step::Tree(m));
                    if Some(m) != exit {
                        steps.push(Step::Emit(Event::EndBlock(m)));
                    }
                }
                if is_loop {
                    steps.push(Step::Emit(Event::EndLoop { header: x, exit }));
                }
                for &m in ms.iter().rev().filter(inside) {
                    steps.push(Step::Tree(m));
                    steps.push(Step::Emit(Event::EndBlock(m)));
                }
                match cfg.blocks[x].term {
                    Term::Jump(t) => steps.push(Step::Edge(x, t)),
                    Term::Branch { cond, then, els } => {
                        // Neither arm falls through: the lighter one goes inside a one-armed
                        // branch, the heavier one follows it.
                        let negate = edge_size(&size, x, els) < edge_size(&size, x, then);
                        let (inner, after) = if negate { (els, then) } else { (then, els) };
                        steps.push(Step::Edge(x, after));
                        steps.push(Step::Emit(Event::EndIf));
                        steps.push(Step::Edge(x, inner));
                        steps.push(Step::Emit(Event::BeginIf { cond, negate }));
                    }
                    Term::Return(v) => steps.push(Step::Emit(Event::Return(v))),
                }
            }
        }
    }
    if placed != rpo.len() {
        return Err(format!(
            "internal error: the structured program places {placed} of {} blocks",
            rpo.len()
        ));
    }
    Ok(out)
}
