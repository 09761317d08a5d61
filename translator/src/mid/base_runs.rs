//! Runs of `.global`/`.const` accesses through one base register: the accesses of a block
//! whose addresses are `[%r]` or `[%r + imm]` for one 64-bit register `%r` that nothing
//! writes between the first and the last of them, with no call between them. Every address
//! of a run is known at its first access (the register's value plus a constant), so the
//! checked translation ([`crate::back::spirv::checked`]) checks them all there, once, and
//! each access only reads its verdict. The search of the allocation table and the record of
//! a violation then exist once per run rather than once per access (what made a checked
//! kernel's compile time grow with its accesses, issue 28).
//!
//! A run only groups accesses the checker would check against the table one by one:
//! non-atomic `ld`/`st` declared `.global` or `.const` (a generic access may resolve to
//! another space at run time; an atomic keeps its own check) of at most
//! [`SCRATCH_SIZE`] bytes. Runs of one access are
//! left out: nothing is shared.

use crate::ir::MemSpace;
use crate::ir::{AddrBase, AddrOffset, AddrSpace, Address, DataType, Function, Inst, MemOrder};
use crate::ir::{Opcode, Operand, RegId, RegType};
use crate::memcheck::{block::SCRATCH_SIZE, required_alignment};
use crate::mid::cfg::{Cfg, Code};
use crate::mid::uniformity::writes;
use std::collections::HashMap;

/// The most accesses one run holds; a longer sequence starts a new run (the checked
/// translation keeps a run's verdicts as bits of one 64-bit word).
pub const MAX_MEMBERS: usize = 64;

/// One access of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its instruction's index in the function's body.
    pub inst: usize,
    /// The immediate offset from the base register.
    pub offset: i64,
    /// Bytes it touches (a vector access is one access).
    pub bytes: u32,
    /// The alignment prog-5 §5.1 requires of it.
    pub align: u32,
    /// Whether it is a `st` (else a `ld`).
    pub store: bool,
    /// Its space: `.global` or `.const`.
    pub space: MemSpace,
}

/// Accesses through one base register within one block, in program order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The 64-bit register every address of the run starts from.
    pub base: RegId,
    /// At least two.
    pub members: Vec<Member>,
}

impl Run {
    /// The bytes the run touches relative to its base: from the lowest offset to the
    /// highest end (offset plus size); `None` when that is not a range of fewer than 2^63
    /// bytes (then the run is not formed).
    pub fn span(&self) -> Option<(i64, u64)> {
        let low = self.members.iter().map(|m| m.offset as i128).min()?;
        let high = self
            .members
            .iter()
            .map(|m| m.offset as i128 + m.bytes as i128)
            .max()?;
        let len = u64::try_from(high - low).ok().filter(|&l| l < 1 << 63)?;
        Some((low as i64, len))
    }
}

/// The runs of a function and where each access of them is.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// The runs.
    pub runs: Vec<Run>,
    /// By instruction index in the body: its run and its position in that run.
    pub of_inst: HashMap<usize, (u32, u32)>,
    /// By CFG block: whether the block holds a run.
    pub in_block: Vec<bool>,
}

/// A non-atomic `ld`/`st` declared `.global` or `.const`, addressed through a 64-bit
/// register, of at most [`SCRATCH_SIZE`] bytes (a failing one runs at the check block's
/// scratch): what runs and counted loops ([`crate::mid::loop_ranges`]) check together.
pub struct GlobalAccess {
    /// Its address operand.
    pub addr: Address,
    /// The register the address starts from.
    pub base: RegId,
    /// `.global` or `.const`.
    pub space: MemSpace,
    /// Bytes it touches (a vector access is one access).
    pub bytes: u32,
    /// The alignment prog-5 §5.1 requires of it.
    pub align: u32,
    /// Whether it is a `st` (else a `ld`).
    pub store: bool,
}

/// `inst` as a [`GlobalAccess`], when it is one.
pub fn global_access(f: &Function, inst: &Inst) -> Option<GlobalAccess> {
    let q = &inst.q;
    let addr_op = match inst.op {
        Opcode::Ld => inst.ops.get(1)?,
        Opcode::St => inst.ops.first()?,
        _ => return None,
    };
    if q.order.is_some_and(|o| o != MemOrder::Weak) {
        return None;
    }
    let space = match q.space {
        Some(AddrSpace::Global) => MemSpace::Global,
        Some(AddrSpace::Const) => MemSpace::Const,
        _ => return None,
    };
    let Operand::Addr(addr) = *addr_op else {
        return None;
    };
    let AddrBase::Reg(base) = addr.base else {
        return None;
    };
    let is_64 = matches!(
        f.regs.get(base.0 as usize).map(|r| r.ty),
        Some(t @ RegType::Scalar(_)) if t.total_bits() == 64
    );
    let (bits, count) = (
        q.ty.unwrap_or(DataType::B32).bits(),
        q.vec.unwrap_or(1) as u32,
    );
    let bytes = bits / 8 * count;
    if addr.bits != 64 || !is_64 || bytes as u64 > SCRATCH_SIZE {
        return None;
    }
    Some(GlobalAccess {
        addr,
        base,
        space,
        bytes,
        align: required_alignment(bits, count),
        store: inst.op == Opcode::St,
    })
}

/// The access `inst` (at `index` in the body) and its base register, when it may be the
/// member of a run.
pub fn member(f: &Function, inst: &Inst, index: usize) -> Option<(RegId, Member)> {
    let g = global_access(f, inst)?;
    let offset = match g.addr.offset {
        AddrOffset::None => 0,
        AddrOffset::Imm(k) => k,
        AddrOffset::Reg(_) => return None,
    };
    let m = Member {
        inst: index,
        offset,
        bytes: g.bytes,
        align: g.align,
        store: g.store,
        space: g.space,
    };
    Some((g.base, m))
}

/// The runs of `f`, whose CFG is `cfg`.
pub fn analyze(f: &Function, cfg: &Cfg) -> Runs {
    let Some(body) = f.body.as_deref() else {
        return Runs::default();
    };
    let mut runs: Vec<(usize, Run)> = Vec::new();
    for (bi, b) in cfg.blocks.iter().enumerate() {
        let Code::Insts(range) = &b.code else {
            continue;
        };
        let mut open: HashMap<RegId, usize> = HashMap::new();
        for (i, inst) in body.iter().enumerate().take(range.end).skip(range.start) {
            if inst.op == Opcode::Call {
                open.clear();
            }
            if let Some((base, m)) = member(f, inst, i) {
                match open.get(&base) {
                    Some(&k) if runs[k].1.members.len() < MAX_MEMBERS => runs[k].1.members.push(m),
                    _ => {
                        open.insert(base, runs.len());
                        let members = vec![m];
                        runs.push((bi, Run { base, members }));
                    }
                }
            }
            for r in writes(inst) {
                open.remove(&r);
            }
        }
    }
    runs.retain(|(_, r)| r.members.len() > 1 && r.span().is_some());
    let mut of_inst = HashMap::new();
    let mut in_block = vec![false; cfg.blocks.len()];
    for (k, (b, r)) in runs.iter().enumerate() {
        in_block[*b] = true;
        for (j, m) in r.members.iter().enumerate() {
            of_inst.insert(m.inst, (k as u32, j as u32));
        }
    }
    let runs = runs.into_iter().map(|(_, r)| r).collect();
    Runs {
        runs,
        of_inst,
        in_block,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs of kernel `@k` in `body`: for each, the lines of its accesses (the body's
    /// first line is line 7).
    fn runs(body: &str) -> Vec<Vec<usize>> {
        let src = format!(
            ".version 0.1;\n.target 100;\n.global .align 8 @G[64];\n\
             .function void @f() {{\n}}\n.kernel @k(.param[8] %out) {{\n{body}\n}}\n"
        );
        crate::mid::with_kernel_k(&src, |file, f, cfg| {
            let body = f.body.as_deref().unwrap();
            analyze(f, cfg)
                .runs
                .iter()
                .map(|r| {
                    r.members
                        .iter()
                        .map(|m| file.line_col(body[m.inst].span.start as usize).0)
                        .collect()
                })
                .collect()
        })
    }

    const REGS: &str = ".reg .64b %p, %q, %o;\n.reg .32b %v;\n.pred %c;\nld.param.64b %p, [%out];";

    #[test]
    fn accesses_through_one_register_plus_constants_form_a_run() {
        let r = runs(&format!(
            "{REGS}\nld.global.32b %v, [%p];\nst.global.32b [%p + 8], %v;\n\
             ld.const.32b %v, [%p + -4];\nst.global.32b [%p + 12], %v;"
        ));
        assert_eq!(r, vec![vec![11, 12, 13, 14]]);
    }

    #[test]
    fn a_write_to_the_base_a_call_or_a_block_boundary_ends_a_run() {
        // A write to %p at line 13, a call at line 16, a branch target at line 19.
        let r = runs(&format!(
            "{REGS}\nld.global.32b %v, [%p];\nst.global.32b [%p + 4], %v;\n\
             iadd.64b %p, %p, 8;\nld.global.32b %v, [%p];\nld.global.32b %v, [%p + 4];\n\
             call void, @f();\nld.global.32b %v, [%p];\nld.global.32b %v, [%p + 4];\n\
             L:\nld.global.32b %v, [%p + 8];\nld.global.32b %v, [%p + 12];\n\
             ucmp.eq.32b %c, %v, 0;\ngoto.cond %c, L;"
        ));
        assert_eq!(
            r,
            vec![vec![11, 12], vec![14, 15], vec![17, 18], vec![20, 21]]
        );
    }

    #[test]
    fn other_accesses_are_not_members() {
        // Two registers interleaved form two runs; a register offset, a variable address,
        // a generic or shared access, an atomic, and a lone access form none.
        let r = runs(&format!(
            "{REGS}\nld.param.64b %q, [%out];\nmov.64b %o, 4;\n\
             ld.global.32b %v, [%p];\nld.global.32b %v, [%q];\nld.global.32b %v, [%p + 4];\n\
             ld.global.32b %v, [%q + 4];\nld.global.32b %v, [%p + %o];\n\
             ld.global.32b %v, [@G + 4];\nld.32b %v, [%p + 8];\n\
             iatom.global.add.32b %v, [%p + 8], %v;\nld.global.32b %v, [%o];"
        ));
        assert_eq!(r, vec![vec![13, 15], vec![14, 16]]);
    }

    #[test]
    fn a_run_holds_at_most_64_accesses() {
        let loads: String = (0..70)
            .map(|i| format!("ld.global.32b %v, [%p + {}];\n", 4 * i))
            .collect();
        let r = runs(&format!("{REGS}\n{loads}"));
        assert_eq!(r.iter().map(Vec::len).collect::<Vec<_>>(), [64, 6]);
    }
}
