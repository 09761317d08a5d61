//! The call graph of a module, for the decisions that depend on which functions a kernel can
//! reach: the shared-memory layout (each kernel reserves only the `.shared` variables it can
//! reach, [`crate::layout`]) and which kernels are sub-group kernels (`mid::lanes`).
//!
//! A direct `call` is an edge to its callee. A call through a register may reach any
//! function whose address is taken (`addrof`, or a symbol initializer); rather than an edge
//! to each of them from each such call (quadratic), the graph has one extra node standing
//! for "any address-taken function", with an edge to each. Every walk is linear in the
//! functions and edges it visits.
//!
//! Must not: decide layouts or lowering; it only answers reachability questions.

use crate::ir::{FuncId, InitItem, Module, Opcode, Operand, SymbolRef};

/// The call graph: node `i < len()` is function `i`; node `len()` is "any address-taken
/// function".
#[derive(Clone, Debug)]
pub struct CallGraph {
    callees: Vec<Vec<u32>>,
}

/// Which functions have their address taken: by `addrof` or in a symbol initializer of a
/// module variable or of a body-scope `.const` variable. A call through a register may
/// reach exactly these.
pub fn address_taken(module: &Module) -> Vec<bool> {
    let mut taken = vec![false; module.functions.len()];
    let initializers = module.globals.iter().map(|g| &g.init).chain(
        module
            .functions
            .iter()
            .flat_map(|f| f.locals.iter().map(|l| &l.init)),
    );
    for init in initializers {
        for item in init.iter().flatten() {
            if let InitItem::Symbol {
                symbol: SymbolRef::Function(f),
                ..
            } = item
            {
                if let Some(t) = taken.get_mut(f.0 as usize) {
                    *t = true;
                }
            }
        }
    }
    for f in &module.functions {
        for inst in f.body.iter().flatten() {
            if inst.op == Opcode::Addrof {
                if let Some(Operand::Func(g)) = inst.ops.get(1) {
                    if let Some(t) = taken.get_mut(g.0 as usize) {
                        *t = true;
                    }
                }
            }
        }
    }
    taken
}

impl CallGraph {
    /// The call graph of `module`.
    pub fn new(module: &Module) -> CallGraph {
        let n = module.functions.len();
        let any = n as u32;
        let mut callees: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
        for (i, f) in module.functions.iter().enumerate() {
            for inst in f.body.iter().flatten().filter(|x| x.op == Opcode::Call) {
                let target = inst.ops.iter().find_map(|o| match o {
                    Operand::Func(g) => Some(g.0),
                    _ => None,
                });
                // A target out of range (unverified IR: the reference interpreter's own
                // tests feed it such) has no node; the verifier reports it where it matters.
                match target {
                    Some(t) if t < any => callees[i].push(t),
                    Some(_) => {}
                    None => callees[i].push(any),
                }
            }
            callees[i].sort_unstable();
            callees[i].dedup();
        }
        callees[n] = address_taken(module)
            .iter()
            .enumerate()
            .filter(|(_, &t)| t)
            .map(|(f, _)| f as u32)
            .collect();
        CallGraph { callees }
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.callees.len() - 1
    }

    /// Whether the module has no function.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Marks every function reachable from `roots` (the roots included).
    pub fn reachable_from(&self, roots: impl IntoIterator<Item = FuncId>) -> Vec<bool> {
        let mut seen = vec![false; self.callees.len()];
        let mut work: Vec<u32> = roots.into_iter().map(|f| f.0).collect();
        while let Some(v) = work.pop() {
            if !std::mem::replace(&mut seen[v as usize], true) {
                work.extend(&self.callees[v as usize]);
            }
        }
        seen.truncate(self.len());
        seen
    }

    /// Marks every function from which one of `targets` is reachable (the targets included).
    pub fn reaching(&self, targets: &[bool]) -> Vec<bool> {
        let mut callers: Vec<Vec<u32>> = vec![Vec::new(); self.callees.len()];
        for (f, cs) in self.callees.iter().enumerate() {
            for &c in cs {
                callers[c as usize].push(f as u32);
            }
        }
        let mut seen = vec![false; self.callees.len()];
        let mut work: Vec<u32> = (0..targets.len() as u32)
            .filter(|&f| targets[f as usize])
            .collect();
        while let Some(v) = work.pop() {
            if !std::mem::replace(&mut seen[v as usize], true) {
                work.extend(&callers[v as usize]);
            }
        }
        seen.truncate(self.len());
        seen
    }

    /// Calls `visit` once for each function reachable from `root` (itself included).
    /// `stamps` (one per node, [`CallGraph::stamps`]) and a `stamp` that differs from every
    /// earlier walk's let repeated walks (one per kernel) cost only what they visit.
    pub fn walk(
        &self,
        root: FuncId,
        stamps: &mut [u32],
        stamp: u32,
        mut visit: impl FnMut(FuncId),
    ) {
        let mut work = vec![root.0];
        while let Some(v) = work.pop() {
            if std::mem::replace(&mut stamps[v as usize], stamp) == stamp {
                continue;
            }
            if (v as usize) < self.len() {
                visit(FuncId(v));
            }
            work.extend(&self.callees[v as usize]);
        }
    }

    /// Fresh stamps for [`CallGraph::walk`] (stamp 0 is taken by no walk).
    pub fn stamps(&self) -> Vec<u32> {
        vec![0; self.callees.len()]
    }

    /// The call cycles: for each function, the index of the strongly connected component
    /// of the graph it belongs to when that component is a cycle (two or more functions,
    /// or one that calls itself), else `None`; and for each such component whether it
    /// holds the "any address-taken function" node (a cycle through a call of a register).
    /// Components are numbered in the order of their lowest function. Tarjan's algorithm
    /// with an explicit stack: linear in nodes and edges, any call-chain length.
    pub fn cycles(&self) -> Cycles {
        let nodes = self.callees.len();
        const NONE: u32 = u32::MAX;
        let mut index = vec![NONE; nodes];
        let mut low = vec![0u32; nodes];
        let mut on_stack = vec![false; nodes];
        let mut stack: Vec<u32> = Vec::new();
        let mut comp = vec![NONE; nodes];
        let mut comps: Vec<Vec<u32>> = Vec::new();
        let mut next = 0u32;
        for root in 0..nodes as u32 {
            if index[root as usize] != NONE {
                continue;
            }
            let mut frames: Vec<(u32, usize)> = vec![(root, 0)];
            index[root as usize] = next;
            low[root as usize] = next;
            next += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&mut (v, ref mut i)) = frames.last_mut() {
                if let Some(&w) = self.callees[v as usize].get(*i) {
                    *i += 1;
                    if index[w as usize] == NONE {
                        index[w as usize] = next;
                        low[w as usize] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w as usize] = true;
                        frames.push((w, 0));
                    } else if on_stack[w as usize] {
                        low[v as usize] = low[v as usize].min(index[w as usize]);
                    }
                    continue;
                }
                frames.pop();
                if let Some(&(u, _)) = frames.last() {
                    low[u as usize] = low[u as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    let mut members = Vec::new();
                    loop {
                        let w = stack.pop().expect("Tarjan's stack holds the component");
                        on_stack[w as usize] = false;
                        comp[w as usize] = comps.len() as u32;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comps.push(members);
                }
            }
        }
        let any = self.len() as u32;
        let mut cyclic: Vec<(u32, Vec<FuncId>, bool)> = Vec::new();
        for (c, members) in comps.iter().enumerate() {
            let is_cycle =
                members.len() > 1 || self.callees[members[0] as usize].contains(&members[0]);
            if !is_cycle {
                continue;
            }
            let mut funcs: Vec<FuncId> = members
                .iter()
                .filter(|&&w| w != any)
                .map(|&w| FuncId(w))
                .collect();
            funcs.sort_unstable();
            cyclic.push((c as u32, funcs, members.contains(&any)));
        }
        cyclic.sort_by_key(|(_, f, _)| f.first().map_or(u32::MAX, |f| f.0));
        let mut of = vec![None; self.len()];
        let mut members = Vec::new();
        let mut indirect = Vec::new();
        for (k, (_, funcs, through_any)) in cyclic.into_iter().enumerate() {
            for f in &funcs {
                of[f.0 as usize] = Some(k as u32);
            }
            members.push(funcs);
            indirect.push(through_any);
        }
        Cycles {
            of,
            members,
            indirect,
        }
    }
}

/// The call cycles of a module ([`CallGraph::cycles`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cycles {
    /// For each function, the cycle it belongs to.
    pub of: Vec<Option<u32>>,
    /// The functions of each cycle, in id order.
    pub members: Vec<Vec<FuncId>>,
    /// Whether each cycle passes through a call of a register (a function address).
    pub indirect: Vec<bool>,
}

impl Cycles {
    /// Whether the module has no call cycle.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(src: &str) -> (Module, CallGraph) {
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let m = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
        let g = CallGraph::new(&m);
        (m, g)
    }

    fn names(m: &Module, marks: &[bool]) -> Vec<String> {
        let mut v: Vec<String> = m
            .functions
            .iter()
            .zip(marks)
            .filter(|(_, &x)| x)
            .map(|(f, _)| f.name.clone())
            .collect();
        v.sort();
        v
    }

    const SRC: &str = ".version 0.1;\n.target 100;\n\
        .function void @leaf() { return; }\n\
        .function void @mid() { call void, @leaf(); return; }\n\
        .function void @pointed() { return; }\n\
        .function void @unused() { return; }\n\
        .kernel @direct() { call void, @mid(); }\n\
        .kernel @indirect() {\n  .reg .64b %p;\n  addrof.64b %p, @pointed;\n  call void, %p();\n}\n";

    #[test]
    fn direct_and_indirect_calls_are_followed() {
        let (m, g) = graph(SRC);
        let id = |n: &str| FuncId(m.functions.iter().position(|f| f.name == n).unwrap() as u32);
        assert_eq!(
            names(&m, &g.reachable_from([id("direct")])),
            ["direct", "leaf", "mid"]
        );
        assert_eq!(
            names(&m, &g.reachable_from([id("indirect")])),
            ["indirect", "pointed"]
        );
        let mut leaf = vec![false; g.len()];
        leaf[id("leaf").0 as usize] = true;
        assert_eq!(names(&m, &g.reaching(&leaf)), ["direct", "leaf", "mid"]);
        let mut stamps = g.stamps();
        for (stamp, k) in [(1, "direct"), (2, "indirect"), (3, "direct")] {
            let mut seen = Vec::new();
            g.walk(id(k), &mut stamps, stamp, |f| {
                seen.push(m.functions[f.0 as usize].name.clone())
            });
            seen.sort();
            let want = g.reachable_from([id(k)]);
            assert_eq!(seen, names(&m, &want), "{k}");
        }
    }

    #[test]
    fn addresses_are_taken_by_addrof_and_by_module_and_body_scope_initializers() {
        let src = ".version 0.1;\n.target 100;\n\
            .function void @by_addrof() { return; }\n\
            .function void @in_module_table() { return; }\n\
            .function void @in_body_table() { return; }\n\
            .function void @called_only() { return; }\n\
            .const .align 8 @table[8] = { .64b @in_module_table };\n\
            .kernel @k() {\n  .const .align 8 @local[8] = { .64b @in_body_table };\n\
              .reg .64b %p;\n  addrof.64b %p, @by_addrof;\n  call void, @called_only();\n}\n";
        let (m, _) = graph(src);
        assert_eq!(
            names(&m, &address_taken(&m)),
            ["by_addrof", "in_body_table", "in_module_table"]
        );
    }

    #[test]
    fn cycles_are_the_strongly_connected_components() {
        let src = ".version 0.1;\n.target 100;\n\
            .function void @self() { call void, @self(); return; }\n\
            .function void @even() { call void, @odd(); return; }\n\
            .function void @odd() { call void, @even(); call void, @leaf(); return; }\n\
            .function void @leaf() { return; }\n\
            .function void @pointed() { .reg .64b %p;\n addrof.64b %p, @pointed;\n call void, %p();\n return; }\n\
            .kernel @k() { call void, @self(); call void, @even(); }\n";
        let (m, g) = graph(src);
        let c = g.cycles();
        let named = |k: usize| -> Vec<String> {
            c.members[k]
                .iter()
                .map(|f| m.functions[f.0 as usize].name.clone())
                .collect()
        };
        assert_eq!(c.members.len(), 3, "{c:?}");
        assert_eq!(named(0), ["self"]);
        assert_eq!(named(1), ["even", "odd"]);
        assert_eq!(named(2), ["pointed"]);
        assert_eq!(c.indirect, [false, false, true]);
        let id = |n: &str| m.functions.iter().position(|f| f.name == n).unwrap();
        assert_eq!(c.of[id("leaf")], None);
        assert_eq!(c.of[id("k")], None);
        assert_eq!(c.of[id("odd")], Some(1));
        let (m2, g2) = graph(SRC);
        assert!(g2.cycles().is_empty(), "{:?}", m2.functions.len());
    }
}
