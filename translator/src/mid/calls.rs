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
/// module variable. A call through a register may reach exactly these.
pub fn address_taken(module: &Module) -> Vec<bool> {
    let mut taken = vec![false; module.functions.len()];
    for g in &module.globals {
        for item in g.init.iter().flatten() {
            if let InitItem::Symbol {
                symbol: SymbolRef::Function(f),
                ..
            } = item
            {
                taken[f.0 as usize] = true;
            }
        }
    }
    for f in &module.functions {
        for inst in f.body.iter().flatten() {
            if inst.op == Opcode::Addrof {
                if let Some(Operand::Func(g)) = inst.ops.get(1) {
                    taken[g.0 as usize] = true;
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
                callees[i].push(target.unwrap_or(any));
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
}
