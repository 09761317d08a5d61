//! Depth-first orders and predecessor lists of a CFG, and the subtree intervals of a tree
//! given by parent links (the dominator tree, the loop-nesting forest).
//!
//! Owns: one iterative depth-first search from the entry (preorder numbers, the last preorder
//! number of each subtree, reverse post-order) and the predecessors of the reachable blocks,
//! stored flat. Everything is linear in blocks plus edges.
//!
//! Must not: know what a loop or a dominator is.

use super::{Block, BlockId, NONE};

/// The depth-first view of a CFG: orders and predecessors of the blocks reachable from block 0.
pub struct Graph {
    /// Preorder number of each block; `NONE` when it is unreachable.
    pub pre: Vec<u32>,
    /// The largest preorder number in each block's depth-first subtree.
    pub last: Vec<u32>,
    /// The reachable blocks in preorder.
    pub preorder: Vec<BlockId>,
    /// The reachable blocks in reverse post-order.
    pub rpo: Vec<BlockId>,
    /// Parent of each reachable block in the depth-first tree (the entry's is itself).
    pub dfs_parent: Vec<BlockId>,
    pred_start: Vec<u32>,
    pred_list: Vec<BlockId>,
}

impl Graph {
    /// Searches `blocks` from block 0.
    pub fn new(blocks: &[Block]) -> Graph {
        let n = blocks.len();
        let mut pre = vec![NONE; n];
        let mut last = vec![NONE; n];
        let mut preorder = Vec::with_capacity(n);
        let mut post = Vec::with_capacity(n);
        let mut dfs_parent = vec![0; n];
        // (block, how many of its successors were looked at)
        let mut stack: Vec<(BlockId, u8)> = Vec::new();
        if n > 0 {
            pre[0] = 0;
            preorder.push(0);
            stack.push((0, 0));
        }
        while let Some(top) = stack.last_mut() {
            let (b, i) = *top;
            match blocks[b].term.succs().nth(i as usize) {
                Some(s) => {
                    top.1 += 1;
                    if pre[s] == NONE {
                        pre[s] = preorder.len() as u32;
                        preorder.push(s);
                        dfs_parent[s] = b;
                        stack.push((s, 0));
                    }
                }
                None => {
                    last[b] = preorder.len() as u32 - 1;
                    post.push(b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        // Predecessors from reachable blocks only, counted then filled (no per-block vector).
        let mut pred_start = vec![0u32; n + 1];
        for &b in &preorder {
            for s in blocks[b].term.succs() {
                pred_start[s + 1] += 1;
            }
        }
        for i in 0..n {
            pred_start[i + 1] += pred_start[i];
        }
        let mut fill = pred_start.clone();
        let mut pred_list = vec![0; pred_start[n] as usize];
        for &b in &preorder {
            for s in blocks[b].term.succs() {
                pred_list[fill[s] as usize] = b;
                fill[s] += 1;
            }
        }
        Graph {
            pre,
            last,
            preorder,
            rpo: post,
            dfs_parent,
            pred_start,
            pred_list,
        }
    }

    /// The reachable predecessors of `b` (one per edge).
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        &self.pred_list[self.pred_start[b] as usize..self.pred_start[b + 1] as usize]
    }

    /// Whether `b` is in the depth-first subtree of `a` (`a` itself included); both reachable.
    pub fn in_subtree(&self, a: BlockId, b: BlockId) -> bool {
        self.pre[a] <= self.pre[b] && self.pre[b] <= self.last[a]
    }
}

/// Preorder intervals of a forest given by parent links, for constant-time ancestor tests.
pub struct Intervals {
    /// Preorder number of each node (`NONE` for nodes outside the forest).
    pub pre: Vec<u32>,
    /// The largest preorder number in each node's subtree.
    pub last: Vec<u32>,
}

impl Intervals {
    /// Numbers the forest whose node `v` has parent `parent[v]` (`NONE` for roots and for
    /// nodes left out, see `member`). `topo` lists the members with every parent before its
    /// children.
    pub fn new(parent: &[u32], topo: impl DoubleEndedIterator<Item = usize> + Clone) -> Self {
        let n = parent.len();
        let mut size = vec![1u32; n];
        for v in topo.clone().rev() {
            if parent[v] != NONE {
                size[parent[v] as usize] += size[v];
            }
        }
        let mut pre = vec![NONE; n];
        let mut last = vec![NONE; n];
        // Next free number for the children of each node, and for the roots.
        let mut next = vec![0u32; n];
        let mut next_root = 0u32;
        for v in topo {
            let p = parent[v];
            let slot = if p == NONE {
                &mut next_root
            } else {
                &mut next[p as usize]
            };
            pre[v] = *slot;
            *slot += size[v];
            last[v] = pre[v] + size[v] - 1;
            next[v] = pre[v] + 1;
        }
        Intervals { pre, last }
    }

    /// Whether `b` is in the subtree of `a` (`a` itself included).
    pub fn contains(&self, a: usize, b: usize) -> bool {
        let p = self.pre[b];
        p != NONE && self.pre[a] <= p && p <= self.last[a]
    }
}
