//! The analyses against their definitions, on random graphs small enough to compute those
//! by brute force: Lengauer-Tarjan against dominator sets, the loop-nesting forest against
//! the recursive strongly-connected-component definition (with each cycle's entries), and
//! the repair against reducibility.

use super::cycles::Cycles;
use super::order::{Graph, Intervals};
use super::{dominators, reducible, Block, Code, Cond, Term, NONE};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random graph of `n` blocks: jumps, two-way branches (to two different blocks) and
/// returns, anywhere.
fn random_graph(rng: &mut Rng, n: usize) -> Vec<Block> {
    let cond = Cond::DispatchBelow(0);
    (0..n)
        .map(|_| {
            let term = match rng.below(10) {
                0 => Term::Return(None),
                1..=3 => Term::Jump(rng.below(n)),
                _ => {
                    let then = rng.below(n);
                    let els = (then + 1 + rng.below(n - 1)) % n;
                    Term::Branch { cond, then, els }
                }
            };
            Block {
                code: Code::Insts(0..0),
                term,
            }
        })
        .collect()
}

/// Reachability within `within` (reflexive-transitive closure), brute force.
fn closure(blocks: &[Block], within: &[bool]) -> Vec<Vec<bool>> {
    let n = blocks.len();
    let mut r = vec![vec![false; n]; n];
    for a in (0..n).filter(|&a| within[a]) {
        r[a][a] = true;
        let mut work = vec![a];
        while let Some(x) = work.pop() {
            for s in blocks[x].term.succs().filter(|&s| within[s]) {
                if !std::mem::replace(&mut r[a][s], true) {
                    work.push(s);
                }
            }
        }
    }
    r
}

#[test]
fn lengauer_tarjan_gives_the_immediate_dominators() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..300 {
        let n = 2 + rng.below(40);
        let blocks = random_graph(&mut rng, n);
        let g = Graph::new(&blocks);
        let idom = dominators::idoms(&g);
        // a dominates b iff b is unreachable from the entry once a is removed.
        let dominates = |a: usize, b: usize| {
            if a == b {
                return true;
            }
            let within: Vec<bool> = (0..n).map(|x| x != a).collect();
            a == 0 || !closure(&blocks, &within)[0][b]
        };
        for &b in g.preorder.iter().skip(1) {
            let d = idom[b];
            assert!(d != b && dominates(d, b), "round {round}: idom({b}) = {d}");
            // Every strict dominator of b dominates its immediate dominator.
            for &a in &g.preorder {
                if a != b && dominates(a, b) {
                    assert!(
                        dominates(a, d),
                        "round {round}: {a} dom {b} but not idom {d}"
                    );
                }
            }
        }
    }
}

/// The cycles by the recursive definition: (header, members, parent index).
fn cycles_by_definition(blocks: &[Block], g: &Graph) -> Vec<(usize, Vec<bool>, usize)> {
    let n = blocks.len();
    let mut out = Vec::new();
    let reachable: Vec<bool> = (0..n).map(|b| g.pre[b] != NONE).collect();
    let mut todo = vec![(reachable, usize::MAX)];
    while let Some((set, parent)) = todo.pop() {
        let r = closure(blocks, &set);
        let mut done = vec![false; n];
        for a in (0..n).filter(|&a| set[a]) {
            if done[a] {
                continue;
            }
            let scc: Vec<bool> = (0..n).map(|b| set[b] && r[a][b] && r[b][a]).collect();
            (0..n).filter(|&b| scc[b]).for_each(|b| done[b] = true);
            let trivial =
                scc.iter().filter(|&&x| x).count() == 1 && !blocks[a].term.succs().any(|s| s == a);
            if trivial {
                continue;
            }
            let header = (0..n)
                .filter(|&b| scc[b])
                .min_by_key(|&b| g.pre[b])
                .unwrap();
            let mut rest = scc.clone();
            rest[header] = false;
            out.push((header, scc, parent));
            todo.push((rest, out.len() - 1));
        }
    }
    out
}

#[test]
fn the_loop_forest_and_its_entries_match_the_definition() {
    let mut rng = Rng(0x0fed_cba9_8765_4321);
    for round in 0..300 {
        let n = 2 + rng.below(30);
        let blocks = random_graph(&mut rng, n);
        let g = Graph::new(&blocks);
        let cy = Cycles::new(&blocks, &g);
        let want = cycles_by_definition(&blocks, &g);
        assert_eq!(
            cy.header.len(),
            want.len(),
            "round {round}: number of cycles"
        );
        let tree = Intervals::new(&cy.parent, (0..cy.header.len()).rev());
        let inside = |c: u32, b: usize| {
            let i = cy.innermost[b];
            i != NONE && tree.contains(c as usize, i as usize)
        };
        for (header, members, parent) in &want {
            let c = cy.headed[*header];
            assert!(c != NONE, "round {round}: {header} heads no cycle");
            let want_parent = if *parent == usize::MAX {
                NONE
            } else {
                cy.headed[want[*parent].0]
            };
            assert_eq!(cy.parent[c as usize], want_parent, "round {round}: parent");
            for b in 0..n {
                assert_eq!(
                    inside(c, b),
                    members[b],
                    "round {round}: {b} in cycle of {header}"
                );
                // An entry has a predecessor outside (the function entry counts).
                let entry = members[b] && (b == 0 || g.preds(b).iter().any(|&p| !members[p]));
                let t = cy.outermost_entered[b];
                let entered = t != NONE && members[b] && tree.contains(t as usize, c as usize);
                assert_eq!(
                    entered, entry,
                    "round {round}: {b} enters cycle of {header}"
                );
            }
        }
    }
}

#[test]
fn the_repair_leaves_every_graph_reducible_and_code_where_it_was() {
    let mut rng = Rng(0x5555_aaaa_3333_cccc);
    let mut repaired = 0;
    for round in 0..500 {
        let n = 2 + rng.below(40);
        let mut blocks = random_graph(&mut rng, n);
        // Entry without predecessors, as `split` makes it.
        blocks.insert(
            0,
            Block {
                code: Code::Insts(0..0),
                term: Term::Jump(1),
            },
        );
        for b in &mut blocks[1..] {
            for t in b.term.targets_mut() {
                *t += 1;
            }
        }
        let before = blocks.clone();
        let g = Graph::new(&blocks);
        let cy = Cycles::new(&blocks, &g);
        if !reducible::repair(&mut blocks, &g, &cy) {
            continue;
        }
        repaired += 1;
        // Original blocks keep their code; new ones are setters and empty hub tests.
        assert!(before.iter().zip(&blocks).all(|(a, b)| a.code == b.code));
        assert!(blocks[before.len()..]
            .iter()
            .all(|b| b.code.is_setter() || b.code == Code::Insts(0..0)));
        let g = Graph::new(&blocks);
        let dom = dominators::tree(&g, &dominators::idoms(&g));
        for &b in &g.rpo {
            for s in blocks[b].term.succs() {
                assert!(
                    !g.in_subtree(s, b) || dom.contains(s, b),
                    "round {round}: edge {b} -> {s} is still irreducible"
                );
            }
        }
    }
    assert!(repaired > 50, "only {repaired} irreducible graphs");
}
