//! The structurizer: turns a reducible [`Cfg`] into a tree of structured constructs that
//! maps one-to-one onto SPIR-V selection and loop constructs.
//!
//! The method follows Ramsey, "Beyond Relooper" (ICFP 2022): walk the dominator tree; a
//! block with two or more forward predecessors (a *merge* block) becomes the label at the
//! end of a [`Node::Block`] wrapped around the code of its immediate dominator, and every
//! jump to it is a [`Node::Break`]; a loop header becomes a [`Node::Loop`] and every back
//! edge a [`Node::Continue`]; every other block is placed inline where its only predecessor
//! branches to it. One change for GPUs: a block that leaves a loop is *hoisted* after the
//! loop (it becomes a merge label outside the loop) even when it has a single predecessor,
//! so that the work-items of a loop reconverge when they leave it, before anything that
//! follows the loop (a barrier, a sub-group operation) runs.
//!
//! Must not: emit SPIR-V or look inside instructions.

use super::cfg::{BlockId, Cfg, Cond, Term};
use crate::ir::Operand;

/// A structured construct.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// The straight-line code of a block.
    Code(BlockId),
    /// A labelled block; `Break(label)` jumps to the end of it.
    Block {
        /// The merge block that follows (breaks target it).
        label: BlockId,
        /// Contents.
        body: Vec<Node>,
    },
    /// A loop; `Continue(header)` jumps back to its start.
    Loop {
        /// The loop header.
        header: BlockId,
        /// Contents.
        body: Vec<Node>,
    },
    /// A two-way branch; neither arm falls through (each ends in a jump or return).
    If {
        /// The condition.
        cond: Cond,
        /// When true.
        then: Vec<Node>,
        /// When false.
        els: Vec<Node>,
    },
    /// Jump to the end of the enclosing `Block` labelled so.
    Break(BlockId),
    /// Jump to the start of the enclosing `Loop` with this header.
    Continue(BlockId),
    /// Return, with an optional value.
    Return(Option<Operand>),
}

struct Ctx<'a> {
    cfg: &'a Cfg,
    /// Emission parent of each block (the immediate dominator, or the header a loop exit is
    /// hoisted to).
    parent: Vec<BlockId>,
    /// Whether a block is only ever reached by `Break` (merge or hoisted).
    labelled: Vec<bool>,
    /// Emission children of each block, in reverse post-order.
    children: Vec<Vec<BlockId>>,
}

/// Structures a reducible CFG.
pub fn structurize(cfg: &Cfg) -> Vec<Node> {
    let n = cfg.blocks.len();
    let mut parent = vec![usize::MAX; n];
    let mut labelled = vec![false; n];
    for &b in cfg.rpo.iter().skip(1) {
        let idom = cfg.idom[b];
        let mut p = idom;
        let mut hoisted = false;
        // Outermost loop that contains the idom but not b: hoist b to its header.
        let mut h = idom;
        // Walk up the dominator tree from the idom looking at loop headers.
        loop {
            if cfg.loops[h].is_some() && cfg.in_loop(h, idom) && !cfg.in_loop(h, b) {
                p = h;
                hoisted = true;
            }
            if h == 0 {
                break;
            }
            h = cfg.idom[h];
        }
        parent[b] = p;
        let forward_preds = cfg.preds[b]
            .iter()
            .filter(|&&q| !cfg.is_back_edge(q, b))
            .count();
        labelled[b] = hoisted || forward_preds >= 2;
    }
    let mut children = vec![Vec::new(); n];
    for &b in cfg.rpo.iter().skip(1) {
        children[parent[b]].push(b);
    }
    let cx = Ctx {
        cfg,
        parent,
        labelled,
        children,
    };
    cx.do_tree(0)
}

impl Ctx<'_> {
    fn do_tree(&self, x: BlockId) -> Vec<Node> {
        let merges: Vec<BlockId> = self.children[x]
            .iter()
            .copied()
            .filter(|&c| self.labelled[c])
            .collect();
        if self.cfg.loops[x].is_some() {
            let (inside, outside): (Vec<BlockId>, Vec<BlockId>) =
                merges.into_iter().partition(|&c| self.cfg.in_loop(x, c));
            let looped = vec![Node::Loop {
                header: x,
                body: self.node_within(x, &inside),
            }];
            self.wrap(looped, &outside)
        } else {
            self.node_within(x, &merges)
        }
    }

    /// Wraps `inner` in blocks for `ys` (ascending RPO: the first is innermost), each
    /// followed by its own tree.
    fn wrap(&self, inner: Vec<Node>, ys: &[BlockId]) -> Vec<Node> {
        let mut seq = inner;
        for &y in ys {
            let mut out = vec![Node::Block {
                label: y,
                body: seq,
            }];
            out.extend(self.do_tree(y));
            seq = out;
        }
        seq
    }

    fn node_within(&self, x: BlockId, ys: &[BlockId]) -> Vec<Node> {
        let mut inner = vec![Node::Code(x)];
        match self.cfg.blocks[x].term {
            Term::Jump(t) => inner.extend(self.do_branch(x, t)),
            Term::Branch { cond, then, els } => inner.push(Node::If {
                cond,
                then: self.do_branch(x, then),
                els: self.do_branch(x, els),
            }),
            Term::Return(v) => inner.push(Node::Return(v)),
        }
        self.wrap(inner, ys)
    }

    fn do_branch(&self, from: BlockId, to: BlockId) -> Vec<Node> {
        if self.cfg.is_back_edge(from, to) {
            vec![Node::Continue(to)]
        } else if self.labelled[to] {
            vec![Node::Break(to)]
        } else {
            debug_assert_eq!(self.parent[to], from);
            self.do_tree(to)
        }
    }
}
