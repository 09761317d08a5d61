//! Repair of irreducible control flow without duplicating any block.
//!
//! Every cycle with more than one entry gets a *hub*: a balanced search tree of comparisons
//! of the function's one dispatch variable that branches to the cycle's entries (nested
//! log2(entries) deep, so that the structured code nests no deeper). Every edge into a block `x` that
//! enters an irreducible cycle (from outside it, or back from inside it) is replaced by a
//! *setter* block that stores `x`'s dispatch value and jumps to the hub of the outermost
//! cycle `x` enters; from there the hubs of the nested cycles `x` also enters pass it inward.
//! Dispatch values are numbered so that the blocks of each cycle, nested cycles included,
//! form one contiguous range: a hub's leaves are its cycle's own entries and the nested
//! cycles that hold entries, each a range of values. The hubs hold one leaf per
//! (entry, innermost cycle) pair and per nested cycle, the setters one block per redirected
//! edge: the repair adds O(blocks + edges) blocks and time, at any nesting depth, and every
//! cycle afterwards is entered through its hub alone (the caller checks that the result is
//! reducible).
//!
//! Barriers and sub-group instructions stay where the producer put them: no code moves.
//!
//! Must not: analyse the graph (`cycles` does) or emit SPIR-V.

use super::cycles::Cycles;
use super::order::Graph;
use super::{Block, BlockId, Code, Cond, Term, NONE};

/// Where a hub test sends control.
#[derive(Clone, Copy)]
enum Dest {
    Block(BlockId),
    Hub(u32),
}

/// Makes every cycle of `blocks` single-entry, given the analyses of the graph as it is;
/// returns whether it changed anything (and so uses the dispatch variable).
pub fn repair(blocks: &mut Vec<Block>, g: &Graph, cy: &Cycles) -> bool {
    let depth = cy.depth();
    let shape = Shape::of(g, cy, &depth);
    if !shape.irreducible.contains(&true) {
        return false;
    }
    let (first, value) = dispatch_values(blocks.len(), g, cy, &shape);
    let mut tests = hub_tests(g, cy, &depth, &shape, &first, &value);
    let entry = build_hubs(blocks, cy, &shape.irreducible, &mut tests);
    // Every edge into an entry of an irreducible cycle goes through a setter to the hub.
    for &p in &g.preorder {
        let mut term = blocks[p].term;
        for slot in term.targets_mut() {
            let x = *slot;
            let t = cy.outermost_entered[x];
            if t != NONE && shape.irreducible[t as usize] {
                *slot = blocks.len();
                blocks.push(Block {
                    code: Code::SetDispatch(value[x]),
                    term: Term::Jump(entry[t as usize]),
                });
            }
        }
        blocks[p].term = term;
    }
    true
}

/// Per cycle: whether it is irreducible, the smallest depth of a cycle entered inside it,
/// and its number of blocks (its own, and with its nested cycles).
struct Shape {
    irreducible: Vec<bool>,
    entry_at: Vec<u32>,
    own: Vec<u32>,
    size: Vec<u32>,
}

impl Shape {
    /// The shape of every cycle of `cy`, whose depths are `depth`.
    fn of(g: &Graph, cy: &Cycles, depth: &[u32]) -> Shape {
        let nc = cy.header.len();
        // Per cycle, over its blocks and nested cycles: the smallest depth of the outermost
        // cycle entered by any block other than its header (a non-header entry makes a cycle
        // irreducible), and by any block at all (the cycle holds an entry of that depth).
        let mut irreducible_at = vec![u32::MAX; nc];
        let mut entry_at = vec![u32::MAX; nc];
        let mut own = vec![0u32; nc];
        for &x in &g.preorder {
            let inner = cy.innermost[x];
            if inner == NONE {
                continue;
            }
            own[inner as usize] += 1;
            let t = cy.outermost_entered[x];
            if t == NONE {
                continue;
            }
            let d = depth[t as usize];
            let inner = inner as usize;
            entry_at[inner] = entry_at[inner].min(d);
            let start = if cy.header[inner] == x {
                cy.parent[inner]
            } else {
                inner as u32
            };
            if start != NONE {
                let s = start as usize;
                irreducible_at[s] = irreducible_at[s].min(d);
            }
        }
        let mut size = own.clone();
        for c in 0..nc {
            let p = cy.parent[c];
            if p != NONE {
                let p = p as usize;
                irreducible_at[p] = irreducible_at[p].min(irreducible_at[c]);
                entry_at[p] = entry_at[p].min(entry_at[c]);
                size[p] += size[c];
            }
        }
        let irreducible: Vec<bool> = (0..nc).map(|c| irreducible_at[c] <= depth[c]).collect();
        Shape {
            irreducible,
            entry_at,
            own,
            size,
        }
    }
}

/// Dispatch values: cycle c owns `first[c]..first[c] + size[c]`; its own blocks come first,
/// then its children's ranges. Returns `first` and each block's value.
fn dispatch_values(n: usize, g: &Graph, cy: &Cycles, shape: &Shape) -> (Vec<u32>, Vec<u32>) {
    let nc = cy.header.len();
    let (own, size) = (&shape.own, &shape.size);
    let mut first = vec![0u32; nc];
    let mut next = vec![0u32; nc];
    let mut next_root = 0u32;
    for c in (0..nc).rev() {
        let p = cy.parent[c];
        let slot = if p == NONE {
            &mut next_root
        } else {
            &mut next[p as usize]
        };
        first[c] = *slot;
        *slot += size[c];
        next[c] = first[c] + own[c];
    }
    let mut value = vec![0u32; n];
    let mut fill = first.clone();
    for &x in &g.preorder {
        let c = cy.innermost[x];
        if c != NONE {
            value[x] = fill[c as usize];
            fill[c as usize] += 1;
        }
    }
    (first, value)
}

/// The leaves of each irreducible cycle's hub: (first value of its range, destination).
fn hub_tests(
    g: &Graph,
    cy: &Cycles,
    depth: &[u32],
    shape: &Shape,
    first: &[u32],
    value: &[u32],
) -> Vec<Vec<(u32, Dest)>> {
    let nc = cy.header.len();
    let (irreducible, entry_at) = (&shape.irreducible, &shape.entry_at);
    let mut tests: Vec<Vec<(u32, Dest)>> = vec![Vec::new(); nc];
    for &x in &g.preorder {
        let c = cy.innermost[x];
        let t = cy.outermost_entered[x];
        if c != NONE && t != NONE && irreducible[c as usize] {
            if depth[t as usize] <= depth[c as usize] {
                tests[c as usize].push((value[x], Dest::Block(x)));
            }
        }
    }
    for d in 0..nc {
        let c = cy.parent[d];
        if c == NONE || !irreducible[c as usize] || entry_at[d] > depth[c as usize] {
            continue;
        }
        let test = if irreducible[d] {
            (first[d], Dest::Hub(d as u32))
        } else {
            let h = cy.header[d];
            (value[h], Dest::Block(h))
        };
        tests[c as usize].push(test);
    }
    tests
}

/// Each hub is a balanced search tree over its tests' disjoint value ranges: the node that
/// splits the sorted tests at index `mid` is block `first_block[c] + mid - 1`. Appends the
/// hubs' blocks; returns each cycle's hub entry block.
fn build_hubs(
    blocks: &mut Vec<Block>,
    cy: &Cycles,
    irreducible: &[bool],
    tests: &mut [Vec<(u32, Dest)>],
) -> Vec<usize> {
    let nc = cy.header.len();
    let mut first_block = vec![0; nc];
    let mut entry = vec![0; nc];
    let mut next_block = blocks.len();
    for c in (0..nc).filter(|&c| irreducible[c]) {
        tests[c].sort_unstable_by_key(|t| t.0);
        let k = tests[c].len();
        first_block[c] = next_block;
        entry[c] = next_block + (k / 2).max(1) - 1;
        next_block += k.saturating_sub(1).max(1);
    }
    let mut ranges = Vec::new();
    for c in (0..nc).filter(|&c| irreducible[c]) {
        let t = &tests[c];
        let dest = |i: usize| match t[i].1 {
            Dest::Block(b) => b,
            Dest::Hub(d) => entry[d as usize],
        };
        if t.len() <= 1 {
            // A cycle's header always enters it, so the hub has at least that test.
            let only = if t.is_empty() { cy.header[c] } else { dest(0) };
            blocks.push(Block {
                code: Code::Insts(0..0),
                term: Term::Jump(only),
            });
            continue;
        }
        // The (lo, hi) test range of each node, by its split index.
        ranges.clear();
        ranges.resize(t.len(), (0, 0));
        let mut todo = vec![(0, t.len())];
        while let Some((lo, hi)) = todo.pop() {
            if hi - lo >= 2 {
                let mid = (lo + hi) / 2;
                ranges[mid] = (lo, hi);
                todo.extend([(lo, mid), (mid, hi)]);
            }
        }
        let node = |lo: usize, hi: usize| {
            if hi - lo == 1 {
                dest(lo)
            } else {
                first_block[c] + (lo + hi) / 2 - 1
            }
        };
        for &(lo, hi) in &ranges[1..] {
            let mid = (lo + hi) / 2;
            blocks.push(Block {
                code: Code::Insts(0..0),
                term: Term::Branch {
                    cond: Cond::DispatchBelow(t[mid].0),
                    then: node(lo, mid),
                    els: node(mid, hi),
                },
            });
        }
    }
    entry
}
