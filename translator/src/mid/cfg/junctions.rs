//! Merge sequencing: a block with many merge children gets a chain of junctions instead of
//! one nested block construct per merge.
//!
//! In Ramsey's scheme the merge children `y1 < y2 < ... < yk` (reverse post-order) of a
//! block `x` become `k` labelled blocks nested around `x`'s code, the tree of `yi` inside the
//! blocks of `yi+1..yk`, because any of them may jump to a later merge. A loop with a
//! thousand exits, or a fall-through switch of a thousand cases, would nest a thousand
//! constructs deep, past SPIR-V's limit of 1023 (and the validator's time grows with the
//! cube of the depth). Where `k >= 3`, every forward edge into `yj` from the part of `x`'s
//! subtree before it — `x`'s own region (segment 0) or the tree of `yi` (segment i < j) —
//! instead stores `j` in the junction variable and goes to junction `Ti+1`; junction `Ti`
//! tests the variable and goes on to `yi` or to `Ti+1` (`Tk` is `yk` itself, and segment
//! `k-1` jumps to `yk` directly). Each junction then has one merge child, the next one, and
//! every work-item still passes each merge point where the others reconverge: those bound
//! for a later merge skip the trees in between. The cost is one setter per redirected edge
//! and one test per merge.
//!
//! Must not: change what the program computes, or move code.

use super::order::Intervals;
use super::{Block, BlockId, Cfg, Code, Cond, Term, NONE};

/// Fewest merge children of one block (on one side of a loop) sequenced by junctions.
const MIN_MERGES: usize = 3;

/// The CFG with junctions, or `None` when no block has `MIN_MERGES` merge children.
pub fn sequence(cfg: &Cfg) -> Option<Vec<Block>> {
    let rpo = cfg.rpo();
    let n = cfg.blocks.len();
    let placement = cfg.placement();
    let (start, merges) = placement.merges(rpo);
    // The groups: the merges of a block, split into those inside and outside its loop.
    let mut groups: Vec<Vec<BlockId>> = Vec::new();
    let mut group_of = vec![(NONE, 0u32); n];
    for &x in rpo {
        let ms = &merges[start[x]..start[x + 1]];
        let is_loop = cfg.is_loop_header(x);
        for outside in [false, true] {
            if outside && !is_loop {
                break;
            }
            let side: Vec<BlockId> = ms
                .iter()
                .copied()
                .filter(|&m| is_loop && !cfg.in_loop(x, m) == outside || !is_loop)
                .collect();
            if side.len() >= MIN_MERGES {
                for (j, &y) in side.iter().enumerate() {
                    group_of[y] = (groups.len() as u32, j as u32 + 1);
                }
                groups.push(side);
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    // The emission tree: a block's segment is found from its position in it.
    let parent: Vec<u32> = placement
        .parent
        .iter()
        .map(|&p| if p == usize::MAX { NONE } else { p as u32 })
        .collect();
    let tree = Intervals::new(&parent, rpo.iter().copied());
    let mut blocks = cfg.blocks.clone();
    // Junction Ti of group g (i = 1..k-1) is block first[g] + i - 1.
    let mut first = Vec::with_capacity(groups.len());
    for ys in &groups {
        let k = ys.len();
        first.push(blocks.len());
        for i in 1..k {
            let next = if i + 1 < k {
                blocks.len() + 1
            } else {
                ys[k - 1]
            };
            blocks.push(Block {
                code: Code::Insts(0..0),
                term: Term::Branch {
                    cond: Cond::Junction(i as u32),
                    then: ys[i - 1],
                    els: next,
                },
            });
        }
    }
    for &p in rpo {
        let mut term = blocks[p].term;
        for slot in term.targets_mut() {
            let y = *slot;
            let (g, j) = group_of[y];
            if g == NONE || cfg.is_back_edge(p, y) {
                continue;
            }
            let ys = &groups[g as usize];
            let k = ys.len();
            // The segment of `p`: the merge among ys whose emission subtree holds it, by
            // binary search on the preorder numbers (ys are siblings in that order).
            let at = ys.partition_point(|&m| tree.pre[m] <= tree.pre[p]);
            let seg = if at > 0 && tree.contains(ys[at - 1], p) {
                at
            } else {
                0
            };
            if j as usize == k && seg == k - 1 {
                continue;
            }
            *slot = blocks.len();
            blocks.push(Block {
                code: Code::SetJunction(j),
                term: Term::Jump(first[g as usize] + seg),
            });
        }
        blocks[p].term = term;
    }
    Some(blocks)
}
