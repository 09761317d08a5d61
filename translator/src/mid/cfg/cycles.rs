//! The loop-nesting forest of a CFG, reducible or not, with the entries of every cycle.
//!
//! A *cycle* is a strongly connected region: the outermost ones are the non-trivial strongly
//! connected components of the graph; a cycle's header is its block first reached by the
//! depth-first search, and its children are the cycles of the region without its header.
//! An *entry* of a cycle is a block of it with a predecessor outside it (the function entry
//! counts as entered from outside); a cycle is reducible when its header is its only entry,
//! and then it is the natural loop of its header.
//!
//! The forest is found as in LLVM's `GenericCycleInfo` (after Havlak, "Nesting of reducible
//! and irreducible loops", TOPLAS 1997): candidate headers in reverse preorder; a header's
//! cycle is found by walking predecessors backwards from its back edges without leaving its
//! depth-first subtree, absorbing the cycles found before whole (union-find). Where LLVM
//! rescans the predecessors of every entry of an absorbed cycle at each level, the edges
//! that enter a cycle from outside wait in two leftist heaps keyed by the preorder number of
//! their source, and the edges whose source lies in the absorbing header's subtree are popped
//! off: each edge is pushed and popped at most once, so the whole is O(E log E), iterative,
//! whatever the nesting depth.
//!
//! Must not: change the graph (see `reducible`).

use super::order::{Graph, Intervals};
use super::{Block, BlockId, NONE};

/// The loop-nesting forest. Cycle indices: a child's index is smaller than its parent's.
pub struct Cycles {
    /// The innermost cycle containing each block (`NONE`: in no cycle).
    pub innermost: Vec<u32>,
    /// The header of each cycle.
    pub header: Vec<BlockId>,
    /// The cycle each block is the header of (`NONE`: none).
    pub headed: Vec<u32>,
    /// The enclosing cycle of each cycle (`NONE`: outermost).
    pub parent: Vec<u32>,
    /// For each block, the outermost cycle it is an entry of (`NONE`: it enters none). A block
    /// that enters a cycle enters every cycle between that one and its innermost.
    pub outermost_entered: Vec<u32>,
}

impl Cycles {
    /// Finds the cycles of the blocks reachable in `g`.
    pub fn new(blocks: &[Block], g: &Graph) -> Cycles {
        let n = blocks.len();
        let mut c = Cycles {
            innermost: vec![NONE; n],
            header: Vec::new(),
            headed: vec![NONE; n],
            parent: Vec::new(),
            outermost_entered: vec![NONE; n],
        };
        // Union-find over blocks; a set's representative is the header of the outermost cycle
        // found so far that contains it (or the block itself).
        let mut set: Vec<u32> = (0..n as u32).collect();
        // Predecessor edges of each block not yet inside a common cycle with their source; the
        // entry has one more, from outside the function.
        let mut open = vec![0u32; n];
        for &b in &g.preorder {
            open[b] = g.preds(b).len() as u32;
        }
        if n > 0 {
            open[0] += 1;
        }
        // Edges entering a set from outside: sources before its header's subtree in `below`
        // (popped largest preorder first), after it in `above` (smallest first).
        let mut heap = Heap::default();
        let mut below = vec![NIL; n];
        let mut above = vec![NIL; n];
        let mut seen = vec![NONE; n];
        let mut work: Vec<BlockId> = Vec::new();
        for &w in g.preorder.iter().rev() {
            work.extend(g.preds(w).iter().filter(|&&p| g.in_subtree(w, p)));
            if work.is_empty() {
                continue;
            }
            let cyc = c.header.len() as u32;
            c.header.push(w);
            c.parent.push(NONE);
            c.headed[w] = cyc;
            c.innermost[w] = cyc;
            seen[w] = w as u32;
            open[w] -= work.len() as u32;
            let (wpre, wlast) = (g.pre[w], g.last[w]);
            while let Some(b) = work.pop() {
                let r = find(&mut set, b);
                if r == w || seen[r] == w as u32 {
                    continue;
                }
                seen[r] = w as u32;
                set[r] = w as u32;
                let child = c.headed[r];
                if child != NONE {
                    // A cycle found before: it becomes a child; the edges entering it from
                    // inside `w`'s subtree now lie inside this cycle.
                    c.parent[child as usize] = cyc;
                    for (heap_of, bound) in [(&mut below, u32::MAX - wpre), (&mut above, wlast)] {
                        let mut root = heap_of[r];
                        while root != NIL && heap.key[root as usize] <= bound {
                            let (p, x) = heap.edge[root as usize];
                            root = heap.pop(root);
                            work.push(p as usize);
                            open[x as usize] -= 1;
                            if open[x as usize] == 0 {
                                c.outermost_entered[x as usize] = child;
                            }
                        }
                        heap_of[w] = heap.merge(heap_of[w], root);
                    }
                } else {
                    c.innermost[r] = cyc;
                    for &p in g.preds(r) {
                        if g.in_subtree(w, p) {
                            work.push(p);
                            open[r] -= 1;
                        } else {
                            push_entering(&mut heap, g, w, p, r, &mut below, &mut above);
                        }
                    }
                }
            }
            for &p in g.preds(w) {
                if !g.in_subtree(w, p) {
                    push_entering(&mut heap, g, w, p, w, &mut below, &mut above);
                }
            }
        }
        // Edges never inside a cycle with their target: it enters its outermost cycle.
        for &x in &g.preorder {
            if open[x] > 0 {
                let outer = c.headed[find(&mut set, x)];
                if outer != NONE {
                    c.outermost_entered[x] = outer;
                }
            }
        }
        c
    }

    /// The nesting depth of each cycle (outermost: 0).
    pub fn depth(&self) -> Vec<u32> {
        let mut depth = vec![0u32; self.header.len()];
        for c in (0..self.header.len()).rev() {
            let p = self.parent[c];
            if p != NONE {
                depth[c] = depth[p as usize] + 1;
            }
        }
        depth
    }
}

/// Records the edge `p -> x`, entering the set headed by `w` from outside `w`'s subtree.
fn push_entering(
    heap: &mut Heap,
    g: &Graph,
    w: BlockId,
    p: BlockId,
    x: BlockId,
    below: &mut [u32],
    above: &mut [u32],
) {
    let (heap_of, key) = if g.pre[p] < g.pre[w] {
        (below, u32::MAX - g.pre[p])
    } else {
        (above, g.pre[p])
    };
    let node = heap.node(key, (p as u32, x as u32));
    heap_of[w] = heap.merge(heap_of[w], node);
}

/// The set representative of `b`, with path halving.
fn find(set: &mut [u32], mut b: BlockId) -> BlockId {
    while set[b] as usize != b {
        let up = set[set[b] as usize];
        set[b] = up;
        b = up as usize;
    }
    b
}

const NIL: u32 = u32::MAX;

/// Leftist min-heaps of edges in one arena; merging walks right spines, which are O(log n)
/// long, with an explicit path.
#[derive(Default)]
struct Heap {
    key: Vec<u32>,
    edge: Vec<(u32, u32)>,
    left: Vec<u32>,
    right: Vec<u32>,
    rank: Vec<u32>,
    path: Vec<u32>,
}

impl Heap {
    fn node(&mut self, key: u32, edge: (u32, u32)) -> u32 {
        self.key.push(key);
        self.edge.push(edge);
        self.left.push(NIL);
        self.right.push(NIL);
        self.rank.push(1);
        self.key.len() as u32 - 1
    }

    fn rank_of(&self, h: u32) -> u32 {
        if h == NIL {
            0
        } else {
            self.rank[h as usize]
        }
    }

    fn merge(&mut self, mut a: u32, mut b: u32) -> u32 {
        self.path.clear();
        let mut merged = loop {
            if a == NIL {
                break b;
            }
            if b == NIL {
                break a;
            }
            if self.key[b as usize] < self.key[a as usize] {
                std::mem::swap(&mut a, &mut b);
            }
            self.path.push(a);
            a = self.right[a as usize];
        };
        while let Some(x) = self.path.pop() {
            let x = x as usize;
            self.right[x] = merged;
            if self.rank_of(self.left[x]) < self.rank_of(self.right[x]) {
                (self.left[x], self.right[x]) = (self.right[x], self.left[x]);
            }
            self.rank[x] = self.rank_of(self.right[x]) + 1;
            merged = x as u32;
        }
        merged
    }

    fn pop(&mut self, root: u32) -> u32 {
        let (l, r) = (self.left[root as usize], self.right[root as usize]);
        self.merge(l, r)
    }
}

/// The loop-nesting forest of a reducible CFG, for constant-time membership tests and a
/// logarithmic search for the outermost loop an edge leaves.
pub struct Loops {
    cycles: Cycles,
    tree: Intervals,
    /// Skew-binary jump pointers (Myers, "An applicative random-access stack", 1983): an
    /// ancestor search visits O(log depth) cycles.
    jump: Vec<u32>,
}

impl Loops {
    /// Wraps the cycles of a reducible CFG (each is the natural loop of its header).
    pub fn new(cycles: Cycles) -> Loops {
        let nc = cycles.header.len();
        let depth = cycles.depth();
        let mut jump = vec![NONE; nc];
        // Parents (larger indices) first.
        for c in (0..nc).rev() {
            let p = cycles.parent[c];
            if p == NONE {
                continue;
            }
            let j1 = jump[p as usize];
            let j2 = if j1 == NONE { NONE } else { jump[j1 as usize] };
            jump[c] = if j2 != NONE
                && depth[p as usize] - depth[j1 as usize] == depth[j1 as usize] - depth[j2 as usize]
            {
                j2
            } else {
                p
            };
        }
        let tree = Intervals::new(&cycles.parent, (0..nc).rev());
        Loops { cycles, tree, jump }
    }

    /// Whether block `b` is in cycle `c`.
    fn contains(&self, c: u32, b: BlockId) -> bool {
        let inner = self.cycles.innermost[b];
        inner != NONE && self.tree.contains(c as usize, inner as usize)
    }

    /// Whether `h` heads a loop.
    pub fn is_header(&self, h: BlockId) -> bool {
        self.cycles.headed[h] != NONE
    }

    /// Whether `b` belongs to the loop headed by `h`.
    pub fn in_loop(&self, h: BlockId, b: BlockId) -> bool {
        let c = self.cycles.headed[h];
        c != NONE && self.contains(c, b)
    }

    /// The header of the innermost loop that contains `b`, if any.
    pub fn innermost(&self, b: BlockId) -> Option<BlockId> {
        let c = self.cycles.innermost[b];
        (c != NONE).then(|| self.cycles.header[c as usize])
    }

    /// The header of the loop that immediately encloses the loop headed by `h`, if any.
    pub fn parent(&self, h: BlockId) -> Option<BlockId> {
        let c = self.cycles.headed[h];
        let p = *self.cycles.parent.get(c as usize)?;
        (p != NONE).then(|| self.cycles.header[p as usize])
    }

    /// The header of the outermost loop that contains `a` but not `b`, if any.
    pub fn outermost_left(&self, a: BlockId, b: BlockId) -> Option<BlockId> {
        let mut c = self.cycles.innermost[a];
        if c == NONE || self.contains(c, b) {
            return None;
        }
        // Containing `b` is inherited by ancestors: skip whole runs of ancestors without it.
        loop {
            let j = self.jump[c as usize];
            let p = self.cycles.parent[c as usize];
            if j != NONE && !self.contains(j, b) {
                c = j;
            } else if p != NONE && !self.contains(p, b) {
                c = p;
            } else {
                return Some(self.cycles.header[c as usize]);
            }
        }
    }
}
