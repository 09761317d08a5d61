//! Immediate dominators by Lengauer and Tarjan's algorithm ("A fast algorithm for finding
//! dominators in a flowgraph", TOPLAS 1979), simple version: semi-dominators over the
//! depth-first preorder, a link-eval forest with path compression, O(E log V).
//!
//! Owns: `idoms`. The path compression is iterative (an explicit stack), so no input depth
//! reaches the call stack.
//!
//! Must not: look at block contents.

use super::order::{Graph, Intervals};
use super::{BlockId, NONE};

/// The dominator tree of `idoms(g)` as intervals: `a` dominates `b` when
/// `tree(g, idom).contains(a, b)`.
pub fn tree(g: &Graph, idom: &[BlockId]) -> Intervals {
    let parent: Vec<u32> = (0..idom.len())
        .map(|b| match idom[b] {
            d if b == 0 || d == NONE as usize => NONE,
            d => d as u32,
        })
        .collect();
    Intervals::new(&parent, g.rpo.iter().copied())
}

/// The immediate dominator of every block reachable in `g` (the entry's is itself;
/// unreachable blocks get `NONE as usize`).
pub fn idoms(g: &Graph) -> Vec<BlockId> {
    let n = g.preorder.len();
    // Everything below is indexed by preorder number.
    let mut semi: Vec<u32> = (0..n as u32).collect();
    let mut label: Vec<u32> = (0..n as u32).collect();
    let mut ancestor = vec![NONE; n];
    let mut dom = vec![0u32; n];
    // Buckets as linked lists: head per vertex, next per member.
    let mut bucket = vec![NONE; n];
    let mut bucket_next = vec![NONE; n];
    let parent: Vec<u32> = g.preorder.iter().map(|&b| g.pre[g.dfs_parent[b]]).collect();
    let mut path = Vec::new();
    for w in (1..n).rev() {
        let wb = g.preorder[w];
        for &p in g.preds(wb) {
            let v = g.pre[p];
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let s = semi[w] as usize;
        bucket_next[w] = bucket[s];
        bucket[s] = w as u32;
        let pw = parent[w];
        ancestor[w] = pw;
        let mut v = std::mem::replace(&mut bucket[pw as usize], NONE);
        while v != NONE {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            dom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                pw
            };
            v = bucket_next[v as usize];
        }
    }
    for w in 1..n {
        if dom[w] != semi[w] {
            dom[w] = dom[dom[w] as usize];
        }
    }
    let mut idom = vec![NONE as usize; g.pre.len()];
    for (w, &b) in g.preorder.iter().enumerate() {
        idom[b] = g.preorder[dom[w] as usize];
    }
    idom
}

/// The vertex of minimal semi-dominator on the forest path above `v` (`v` when it is a root).
fn eval(v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32], path: &mut Vec<u32>) -> u32 {
    if ancestor[v as usize] == NONE {
        return v;
    }
    // Compress the path from `v` up to the child of its root, top first.
    path.clear();
    let mut x = v;
    while ancestor[ancestor[x as usize] as usize] != NONE {
        path.push(x);
        x = ancestor[x as usize];
    }
    while let Some(y) = path.pop() {
        let (y, a) = (y as usize, ancestor[y as usize] as usize);
        if semi[label[a] as usize] < semi[label[y] as usize] {
            label[y] = label[a];
        }
        ancestor[y] = ancestor[a];
    }
    label[v as usize]
}
