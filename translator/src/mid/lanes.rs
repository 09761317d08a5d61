//! Which kernels are sub-group kernels, and how the code of each function numbers its lanes
//! (spec-notes §60).
//!
//! A kernel that can reach a *cross-lane* operation — `shfl`, `ired`, `fred`, `redfirstidx`
//! or a read of `%activemask` — is a sub-group kernel: a PISA sub-group is a hardware
//! sub-group (or a cluster of one, spec-notes §53), `%laneid` is the hardware lane, and the
//! pipeline needs full sub-groups of a fixed size. Any other kernel can observe how its
//! work-group is divided into sub-groups only through `%laneid` and `%subgroupsize`, and the
//! virtual machine chooses that division (arch-1), so it gets the one every device can run:
//! by linear local id, `%laneid = (x + y·Lx + z·Lx·Ly) mod N` over `%localsize`, the same
//! division the reference interpreter makes; its pipeline needs nothing of the device's
//! sub-groups. `.subgroup`-scoped fences and atomics then use `Workgroup` scope, since a
//! PISA sub-group may span several hardware ones.
//!
//! One function's code serves every kernel that reaches it. A function reached by both kinds
//! of kernel that reads `%laneid` picks the numbering at run time from a Private flag that
//! every kernel sets at entry ([`LaneNumbering::PerKernel`]).

use crate::ir::{FuncId, Inst, Module, Opcode, Operand, SpecialReg};
use crate::mid::calls::CallGraph;

/// How the code of one function numbers lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LaneNumbering {
    /// Hardware lanes: the function is reached only by sub-group kernels (or is one).
    #[default]
    Hardware,
    /// By linear local id: the function is reached only by kernels without cross-lane
    /// operations (or by none).
    Linear,
    /// Reached by both kinds: `%laneid` reads the flag its kernel set at entry.
    PerKernel,
}

/// The lane decisions for a module, by function index.
#[derive(Clone, Debug)]
pub struct LanePlan {
    /// Whether the function is a kernel that can reach a cross-lane operation.
    pub subgroup_kernel: Vec<bool>,
    /// How the function numbers lanes.
    pub numbering: Vec<LaneNumbering>,
    /// Whether some function reads `%laneid` with [`LaneNumbering::PerKernel`], so that
    /// every kernel must set the flag.
    pub needs_flag: bool,
}

/// Whether `inst` is a cross-lane operation: an isa-7 instruction, or a read of
/// `%activemask` (which tells which hardware lanes run together).
pub fn cross_lane(inst: &Inst) -> bool {
    matches!(
        inst.op,
        Opcode::Shfl | Opcode::Ired | Opcode::Fred | Opcode::Redfirstidx
    ) || reads(inst, SpecialReg::ActiveMask)
}

fn reads(inst: &Inst, reg: SpecialReg) -> bool {
    inst.ops
        .iter()
        .any(|o| matches!(o, Operand::Special { reg: r, .. } if *r == reg))
}

/// Decides which kernels are sub-group kernels and how each function numbers lanes.
pub fn plan(module: &Module, graph: &CallGraph) -> LanePlan {
    let body = |f: usize| module.functions[f].body.iter().flatten();
    let n = module.functions.len();
    let cross: Vec<bool> = (0..n).map(|f| body(f).any(cross_lane)).collect();
    let reaches_cross = graph.reaching(&cross);
    let kernels: Vec<usize> = (0..n)
        .filter(|&f| module.functions[f].is_kernel() && module.functions[f].body.is_some())
        .collect();
    let mut subgroup_kernel = vec![false; n];
    for &k in &kernels {
        subgroup_kernel[k] = reaches_cross[k];
    }
    let from = |native: bool| {
        graph.reachable_from(
            kernels
                .iter()
                .filter(|&&k| subgroup_kernel[k] == native)
                .map(|&k| FuncId(k as u32)),
        )
    };
    let (by_native, by_linear) = (from(true), from(false));
    let numbering: Vec<LaneNumbering> = (0..n)
        .map(|f| {
            if module.functions[f].is_kernel() {
                // A kernel's own code runs only for itself (kernels cannot be called).
                return if subgroup_kernel[f] {
                    LaneNumbering::Hardware
                } else {
                    LaneNumbering::Linear
                };
            }
            match (by_native[f], by_linear[f]) {
                (true, true) => LaneNumbering::PerKernel,
                (true, false) => LaneNumbering::Hardware,
                (false, _) => LaneNumbering::Linear,
            }
        })
        .collect();
    let needs_flag = (0..n).any(|f| {
        numbering[f] == LaneNumbering::PerKernel && body(f).any(|i| reads(i, SpecialReg::LaneId))
    });
    LanePlan {
        subgroup_kernel,
        numbering,
        needs_flag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(src: &str) -> (Module, LanePlan) {
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let m = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
        let p = plan(&m, &CallGraph::new(&m));
        (m, p)
    }

    #[test]
    fn kernels_and_functions_are_classified_by_what_they_reach() {
        let (m, p) = plan_of(
            ".version 0.1;\n.target 100;\n\
             .function .32b @lane() {\n  .reg .32b %r;\n  mov.32b %r, %laneid;\n  return %r;\n}\n\
             .function .32b @mask() {\n  .reg .32b %r;\n  mov.32b %r, %activemask;\n  return %r;\n}\n\
             .kernel @plain() {\n  .reg .32b %x;\n  mov.32b %x, %subgroupsize;\n  call %x, @lane();\n}\n\
             .kernel @cross() {\n  .reg .32b %x;\n  call %x, @lane();\n  call %x, @mask();\n}\n\
             .kernel @shuffles() {\n  .reg .32b %x;\n  shfl.idx.32b %x, %x, 0, 0xffffffff;\n}\n",
        );
        let get = |name: &str| m.functions.iter().position(|f| f.name == name).unwrap();
        assert!(!p.subgroup_kernel[get("plain")]);
        assert!(p.subgroup_kernel[get("cross")]);
        assert!(p.subgroup_kernel[get("shuffles")]);
        assert!(!p.subgroup_kernel[get("lane")], "not a kernel");
        assert_eq!(p.numbering[get("plain")], LaneNumbering::Linear);
        assert_eq!(p.numbering[get("cross")], LaneNumbering::Hardware);
        assert_eq!(p.numbering[get("lane")], LaneNumbering::PerKernel);
        assert_eq!(p.numbering[get("mask")], LaneNumbering::Hardware);
        assert!(p.needs_flag);
    }

    #[test]
    fn a_module_of_one_kind_needs_no_flag() {
        let (m, p) = plan_of(
            ".version 0.1;\n.target 100;\n\
             .function .32b @lane() {\n  .reg .32b %r;\n  mov.32b %r, %laneid;\n  return %r;\n}\n\
             .kernel @a() {\n  .reg .32b %x;\n  call %x, @lane();\n}\n\
             .kernel @b() {\n  .reg .32b %x;\n  mov.32b %x, %laneid;\n}\n",
        );
        assert_eq!(p.subgroup_kernel.iter().filter(|&&k| k).count(), 0);
        assert!(p.numbering.iter().all(|&n| n == LaneNumbering::Linear));
        assert!(!p.needs_flag);
        assert_eq!(m.functions.len(), 3);
    }
}
