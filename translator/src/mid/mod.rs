//! The middle of the translator: analyses of the typed IR that know nothing of SPIR-V,
//! shared by the SPIR-V back end, the memory checker, the memory layout and (where useful)
//! the reference interpreter.
//!
//! - [`argkinds`]: how each kernel parameter is used (an address, an integer, a float), what
//!   a host checks arguments against.
//! - [`calls`]: the call graph (direct calls and calls through function addresses), which
//!   functions each kernel can reach.
//! - [`cfg`](mod@cfg): a function's control-flow graph: blocks, depth-first orders,
//!   loop-nesting forest, irreducible repair, dominators, placement and merge junctions.
//! - [`structurize`]: the structured program (events) a structured back end lowers.
//! - [`provenance`]: which address space a register's address provably points into.
//! - [`constants`]: which registers may hold a driver-visible constant.
//! - [`lanes`]: which kernels are sub-group kernels and how each function numbers lanes.
//! - [`retire`]: kernels in which a work-item may return before a barrier others reach.
//! - [`liveness`]: which registers are live at the start of some block (what virtual lanes
//!   put back for inactive lanes).
//! - [`short_loops`]: loops that end by themselves within a few iterations, which need no
//!   cancel check.
//! - [`base_runs`]: runs of `.global` accesses through one base register, which the
//!   checked translation checks together.
//! - [`loop_ranges`]: accesses of counted loops whose addresses are affine in the loop's
//!   counter, which the checked translation checks once, at the loop's entry.
//! - [`verify`](mod@verify): the IR verifier every stage after the link stands on.
//!
//! Each analysis is a pure function of the IR, iterative (no recursion whose depth grows with
//! the program) and linear or O(n log n) in its size (docs/architecture.md, "Control flow").

pub mod argkinds;
pub mod base_runs;
pub mod calls;
pub mod cfg;
pub mod constants;
pub mod lanes;
pub mod liveness;
pub mod loop_ranges;
pub mod provenance;
pub mod retire;
pub mod short_loops;
pub mod structurize;
pub mod uniformity;
pub mod verify;

/// For the analyses' unit tests: checks `src` and calls `f` with the file, its kernel `@k`
/// and that kernel's CFG.
#[cfg(test)]
pub(crate) fn with_kernel_k<R>(
    src: &str,
    f: impl FnOnce(&crate::SourceFile, &crate::ir::Function, &cfg::Cfg) -> R,
) -> R {
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
    let module = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
    let k = module
        .functions
        .iter()
        .find(|g| g.name == "k")
        .expect("a kernel @k");
    let cfg = cfg::Cfg::build(k).expect("its CFG");
    f(&file, k, &cfg)
}
