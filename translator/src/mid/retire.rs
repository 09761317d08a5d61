//! Kernels in which a work-item may return while others of its work-group go on to a
//! `barrier.workgroup` (isa-9 §9.1 allows it: "a work-item that has already exited the kernel
//! via a return instruction is not required to reach the barrier"; spec-notes §83).
//!
//! Natively such a `return` is `OpReturn`, and the remaining invocations then execute
//! barriers the returned ones never reach, which SPIR-V leaves undefined: lavapipe loses the
//! whole work-group's results once two barriers follow. On virtual lanes a `return` only
//! retires lanes and every invocation still executes the barriers (a hardware sub-group whose
//! lanes all returned serves them: `back/spirv/virtual_lanes/retire.rs`), so where the device's
//! sub-groups are narrower than PISA's (virtual lanes cost nothing there,
//! docs/performance.md) such kernels go onto them.
//!
//! A kernel is such a kernel when a block that holds a barrier, or a call of a function that
//! can reach one, is reachable in its CFG from a branch from which a `return` is reachable
//! without passing that block: some `return` (other than one every path reaches after the
//! barrier) can end a work-item before the barrier that another still runs. Computed as:
//! some early return (not the one at the body's end) is not reachable from the barrier's
//! block, or it or the branch into it lies in a loop with that block.
//! Cost: a walk of the CFG per block that waits, within a budget past which the answer is
//! "yes" (the safe one: virtual lanes run any kernel).

use crate::ir::{Module, Opcode, Operand};
use crate::mid::calls::CallGraph;
use crate::mid::cfg::{Cfg, Code, Term};

/// By function: whether it is a kernel in which a work-item may return before a barrier
/// another work-item of its work-group reaches.
pub fn returns_before_barrier(module: &Module, graph: &CallGraph) -> Vec<bool> {
    let n = module.functions.len();
    let has_barrier: Vec<bool> = module
        .functions
        .iter()
        .map(|f| f.body.iter().flatten().any(|i| i.op == Opcode::Barrier))
        .collect();
    let reaches_barrier = graph.reaching(&has_barrier);
    let address_taken_reaches = {
        let taken = crate::mid::calls::address_taken(module);
        (0..n).any(|f| taken[f] && reaches_barrier[f])
    };
    module
        .functions
        .iter()
        .enumerate()
        .map(|(k, f)| {
            if !f.is_kernel() || !reaches_barrier.get(k).copied().unwrap_or(false) {
                return false;
            }
            let (Some(body), Ok(cfg)) = (f.body.as_deref(), Cfg::build(f)) else {
                return false;
            };
            // Blocks whose code holds a barrier, or a call that can reach one.
            let waits = |b: usize| match &cfg.blocks[b].code {
                Code::Insts(r) => body
                    .get(r.clone())
                    .unwrap_or(&[])
                    .iter()
                    .any(|i| match i.op {
                        Opcode::Barrier => true,
                        Opcode::Call => match i.ops.iter().find_map(|o| match o {
                            Operand::Func(g) => Some(g.0 as usize),
                            _ => None,
                        }) {
                            Some(g) => reaches_barrier.get(g).copied().unwrap_or(false),
                            None => address_taken_reaches,
                        },
                        _ => false,
                    }),
                _ => false,
            };
            // Early returns: not the one at the end of the body (which every work-item that
            // runs to the end reaches after everything else).
            let end = body.len();
            let returns: Vec<usize> = cfg
                .rpo()
                .iter()
                .copied()
                .filter(|&b| {
                    matches!(cfg.blocks[b].term, Term::Return(_))
                        && !matches!(&cfg.blocks[b].code, Code::Insts(r)
                            if r.end == end
                                || (r.end + 1 == end && body[end - 1].op == Opcode::Return))
                })
                .collect();
            let waiting: Vec<usize> = cfg.rpo().iter().copied().filter(|&b| waits(b)).collect();
            // One walk per waiting block: past a budget, the safe answer (virtual lanes).
            if waiting.len().saturating_mul(cfg.blocks.len()) > WALK_BUDGET {
                return true;
            }
            waiting.iter().any(|&b| {
                let after = reachable_from(&cfg, b);
                returns.iter().any(|&r| {
                    !after[r]
                        || std::iter::once(r)
                            .chain(cfg.preds(r).iter().copied())
                            .any(|x| in_a_common_loop(&cfg, b, x))
                })
            })
        })
        .collect()
}

/// Most block visits of the walks of one kernel before the analysis answers "yes" without
/// looking further (a kernel of thousands of barriers in thousands of blocks).
const WALK_BUDGET: usize = 4_000_000;

/// Whether blocks `a` and `b` lie in one loop (a work-item returning at one in some trip
/// misses the other in the next).
fn in_a_common_loop(cfg: &Cfg, a: usize, b: usize) -> bool {
    let mut h = cfg.innermost_loop(a);
    while let Some(l) = h {
        if cfg.in_loop(l, b) {
            return true;
        }
        h = cfg.parent_loop(l);
    }
    false
}

/// The blocks reachable from block `b` (`b` itself only through a cycle).
fn reachable_from(cfg: &Cfg, b: usize) -> Vec<bool> {
    let mut seen = vec![false; cfg.blocks.len()];
    let mut work: Vec<usize> = cfg.blocks[b].term.succs().collect();
    while let Some(x) = work.pop() {
        if !std::mem::replace(&mut seen[x], true) {
            work.extend(cfg.blocks[x].term.succs());
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the first kernel of `src` (after the header) returns before a barrier.
    fn kernel(src: &str) -> bool {
        let text = format!(".version 0.1;\n.target 100;\n{src}\n");
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
        let m = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
        let r = returns_before_barrier(&m, &CallGraph::new(&m));
        let k = m
            .functions
            .iter()
            .position(|f| f.is_kernel())
            .expect("a kernel");
        r[k]
    }

    const HEAD: &str = ".kernel @k(.param[4] %n) {\n.reg .32b %i, %c;\n.pred %p;\n\
        mov.32b %i, %localid.x;\nld.param.32b %c, [%n];\nucmp.ge.32b %p, %i, %c;\n";

    #[test]
    fn an_early_return_before_a_barrier_counts() {
        assert!(kernel(&format!(
            "{HEAD}return.cond %p;\nbarrier.workgroup;\n}}"
        )));
        // through a function that holds the barrier, called directly or by address
        let f = ".function void @w() {\nbarrier.workgroup;\n}\n";
        assert!(kernel(&format!(
            "{f}{HEAD}return.cond %p;\ncall void, @w();\n}}"
        )));
        assert!(kernel(&format!(
            "{f}{HEAD}.reg .64b %fp;\nreturn.cond %p;\naddrof.64b %fp, @w;\ncall void, %fp();\n}}"
        )));
    }

    #[test]
    fn a_return_in_the_loop_of_a_barrier_counts() {
        assert!(kernel(&format!(
            "{HEAD}loop:\nbarrier.workgroup;\nreturn.cond %p;\niadd.32b %i, %i, 1;\n\
             ucmp.lt.32b %p, %i, 4;\ngoto.cond %p, loop;\n}}"
        )));
    }

    #[test]
    fn returns_after_every_barrier_and_kernels_without_barriers_do_not() {
        // a loop of barriers that the kernel's end follows, with and without `return`
        for end in ["", "return;\n"] {
            assert!(!kernel(&format!(
                "{HEAD}loop:\nbarrier.workgroup;\niadd.32b %i, %i, 1;\n\
                 ucmp.lt.32b %p, %i, 4;\ngoto.cond %p, loop;\n{end}}}"
            )));
        }
        assert!(!kernel(&format!(
            "{HEAD}barrier.workgroup;\nreturn.cond %p;\nmov.32b %i, 1;\n}}"
        )));
        assert!(!kernel(&format!(
            "{HEAD}return.cond %p;\nmov.32b %i, 1;\n}}"
        )));
        assert!(!kernel(&format!(
            "{HEAD}barrier.workgroup;\nbarrier.workgroup;\n}}"
        )));
    }
}
