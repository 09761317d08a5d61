//! Which memory space a generic address provably points to.
//!
//! A generic access tests the address's tag at run time ([`super::memory`]), one branch per
//! space the module has. Most generic addresses, though, come from one `addrcast` (or one
//! global variable's `addrof`) plus offsets: then the space is known statically and the
//! access is lowered as one to that space, with 32-bit address arithmetic for shared and
//! private memory. This module finds those registers.
//!
//! The analysis is flow-insensitive, per function: a register's provenance is the join of
//! the values of every instruction that writes it, computed to a fixed point over a worklist
//! of the instructions reading a register whose provenance grew (each register grows at most
//! three times, so the work is linear in the instructions). Values:
//!
//! - `addrcast.generic.S` gives an address in S (`.global` and `.const`: global); `addrof`
//!   of a `.global`/`.const` variable and `%printfbuffer` give global addresses;
//! - immediates, special registers and arithmetic on them give plain integers (`Int`);
//! - `mov` and `sel` keep their sources' provenance; `iadd`/`isub` of an address and
//!   integers keep the address's; `umad`/`smad` keep the addend's when the factors are
//!   integers;
//! - loads, atomics, calls, function parameters, and anything else that mixes addresses,
//!   are `Unknown`: such a register is accessed through the run-time tag test.
//!
//! An integer merged with an address (`mov %p, 0` before a loop that sets `%p` from an
//! `addrcast`) keeps the address's space: a generic access through a plain integer is
//! undefined unless the integer is one of the implementation's generic addresses, which a
//! program cannot obtain but through those instructions (spec-notes §31). A register used
//! as an address that only ever holds integers stays on the tag test.

use crate::ir::{
    AddrSpace, Function, MemSpace, Module, Opcode, Operand, RegId, SpecialReg, VarRef,
};
use crate::isa;

/// What a register may hold, as far as generic addresses go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Never written (yet).
    Unwritten,
    /// Plain integers only.
    Int,
    /// Generic addresses into this space (plain integers too, possibly).
    Space(MemSpace),
    /// Anything.
    Unknown,
}

impl Provenance {
    /// The least upper bound: the register holds either.
    fn join(self, other: Provenance) -> Provenance {
        use Provenance::*;
        match (self, other) {
            (Unwritten, x) | (x, Unwritten) => x,
            (Int, x) | (x, Int) => x,
            (Space(a), Space(b)) if a == b => Space(a),
            _ => Unknown,
        }
    }

    /// The provenance of a sum: an address plus integers stays in the address's space.
    fn sum(self, other: Provenance) -> Provenance {
        use Provenance::*;
        match (self, other) {
            (Unwritten | Int, x) => x.join(Int),
            (x, Unwritten | Int) => x,
            _ => Unknown,
        }
    }

    fn is_int(self) -> bool {
        matches!(self, Provenance::Unwritten | Provenance::Int)
    }
}

/// The provenance of every register of `f` (by [`RegId`]).
pub fn analyze(module: &Module, f: &Function) -> Vec<Provenance> {
    let n = f.regs.len();
    let mut prov = vec![Provenance::Unwritten; n];
    for &r in &f.reg_params {
        prov[r.0 as usize] = Provenance::Unknown;
    }
    let body = f.body.as_deref().unwrap_or(&[]);
    // The instructions reading each register.
    let mut uses: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, inst) in body.iter().enumerate() {
        for (op, write) in operands(inst) {
            if !write {
                for r in regs_of(op) {
                    if let Some(u) = uses.get_mut(r.0 as usize) {
                        if u.last() != Some(&(i as u32)) {
                            u.push(i as u32);
                        }
                    }
                }
            }
        }
    }
    let mut work: Vec<u32> = (0..body.len() as u32).rev().collect();
    let mut queued = vec![true; body.len()];
    while let Some(i) = work.pop() {
        queued[i as usize] = false;
        let inst = &body[i as usize];
        let value = value_of(module, f, inst, &prov);
        for (op, write) in operands(inst) {
            let Operand::Reg { reg, .. } = op else {
                continue;
            };
            let Some(p) = prov.get_mut(reg.0 as usize) else {
                continue;
            };
            if !write {
                continue;
            }
            let grown = p.join(value);
            if grown != *p {
                *p = grown;
                for &u in &uses[reg.0 as usize] {
                    if !std::mem::replace(&mut queued[u as usize], true) {
                        work.push(u);
                    }
                }
            }
        }
    }
    prov
}

/// The operands of `inst` with whether the instruction writes them (from the instruction
/// table: `dst`, `retval`, ...).
fn operands(inst: &crate::ir::Inst) -> impl Iterator<Item = (&Operand, bool)> {
    let rules = isa::def(inst.op).form(inst.form).operands;
    inst.ops.iter().enumerate().map(move |(i, op)| {
        let write = rules
            .get(i)
            .or(rules.last())
            .is_some_and(|r| r.write && i < rules.len());
        (op, write)
    })
}

/// The registers an operand reads (address operands included).
fn regs_of(op: &Operand) -> impl Iterator<Item = RegId> {
    let (a, b) = match *op {
        Operand::Reg { reg, .. } => (Some(reg), None),
        Operand::Addr(addr) => {
            let base = match addr.base {
                crate::ir::AddrBase::Reg(r) => Some(r),
                _ => None,
            };
            let offset = match addr.offset {
                crate::ir::AddrOffset::Reg(r) => Some(r),
                _ => None,
            };
            (base, offset)
        }
        _ => (None, None),
    };
    a.into_iter().chain(b)
}

/// The provenance of a source operand's value.
fn source(op: &Operand, prov: &[Provenance]) -> Provenance {
    match *op {
        Operand::Reg { reg, .. } => prov
            .get(reg.0 as usize)
            .copied()
            .unwrap_or(Provenance::Unknown),
        Operand::Special {
            reg: SpecialReg::PrintfBuffer,
            ..
        } => Provenance::Space(MemSpace::Global),
        Operand::Imm(_) | Operand::Special { .. } | Operand::Pred { .. } => Provenance::Int,
        _ => Provenance::Unknown,
    }
}

/// The provenance of the value `inst` writes.
fn value_of(
    module: &Module,
    f: &Function,
    inst: &crate::ir::Inst,
    prov: &[Provenance],
) -> Provenance {
    use Provenance::*;
    let sources: smallvec::SmallVec<[Provenance; 4]> = operands(inst)
        .filter(|(_, write)| !write)
        .map(|(op, _)| source(op, prov))
        .collect();
    let all_int = sources.iter().all(|p| p.is_int());
    match inst.op {
        Opcode::Ld | Opcode::Iatom | Opcode::Fatom | Opcode::Call => Unknown,
        Opcode::Addrcast => match (inst.q.space_to, inst.q.space_from) {
            (Some(AddrSpace::Generic), Some(from)) => match from.mem_space() {
                Some(MemSpace::Global | MemSpace::Const) => Space(MemSpace::Global),
                Some(s) => Space(s),
                None => Unknown,
            },
            _ => Int,
        },
        Opcode::Addrof => {
            let space = match inst.ops.get(1) {
                Some(Operand::Var(VarRef::Global(g))) => Some(module.globals[g.0 as usize].space),
                Some(Operand::Var(VarRef::Local(l))) => Some(f.locals[l.0 as usize].space),
                _ => None,
            };
            match space {
                Some(MemSpace::Global | MemSpace::Const) => Space(MemSpace::Global),
                _ => Int,
            }
        }
        Opcode::Mov | Opcode::Sel => sources.iter().fold(Unwritten, |a, &b| a.join(b)),
        Opcode::Iadd | Opcode::Isub => sources.iter().fold(Unwritten, |a, &b| a.sum(b)),
        Opcode::Umad | Opcode::Smad if sources.len() == 3 => {
            if sources[0].is_int() && sources[1].is_int() {
                sources[2].join(Int)
            } else {
                Unknown
            }
        }
        _ if all_int => Int,
        _ => Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::Provenance::{self, *};
    use crate::ir::MemSpace::*;

    fn analyze_kernel(body: &str) -> Vec<(String, Provenance)> {
        let src = format!(
            ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {{\n\
             .shared .align 4 @S[64];\n.private .align 4 @P[64];\n{body}\n}}\n"
        );
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", &src));
        let module = crate::check(&file).expect("valid");
        let f = &module.functions[0];
        let prov = super::analyze(&module, f);
        (0..f.regs.len())
            .map(|i| {
                let r = crate::ir::RegId(i as u32);
                (f.reg_name(r).to_string(), prov[i])
            })
            .collect()
    }

    fn of(all: &[(String, Provenance)], name: &str) -> Provenance {
        all.iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .unwrap()
    }

    #[test]
    fn addresses_from_one_addrcast_plus_offsets_keep_their_space() {
        let p = analyze_kernel(
            ".reg .64b %s, %t, %q, %r, %g, %x, %o, %m;\n.reg .32b %i, %a;\n.pred %c;\n\
             mov.32b %i, %localid.x;\nshl.32b %a, %i, 2;\nzext.64b.32b %o, %a;\n\
             addrcast.generic.shared %s, @S;\niadd.64b %t, %s, %o;\n\
             mov.64b %q, 0;\nloop:\niadd.64b %q, %q, 4;\naddrcast.generic.private %q, @P;\n\
             ucmp.lt.32b %c, %i, 3;\ngoto.cond %c, loop;\n\
             ld.param.64b %g, [%out];\nsel.64b %x, %s, %t, %c;\n\
             umad.64b %m, %o, 8, %t;\n\
             sel.64b %r, %s, %q, %c;",
        );
        assert_eq!(of(&p, "s"), Space(Shared));
        assert_eq!(of(&p, "t"), Space(Shared));
        assert_eq!(of(&p, "x"), Space(Shared));
        assert_eq!(of(&p, "m"), Space(Shared));
        assert_eq!(of(&p, "q"), Space(Private));
        assert_eq!(of(&p, "o"), Int);
        assert_eq!(of(&p, "i"), Int);
        // Loaded, or from two spaces: the tag decides at run time.
        assert_eq!(of(&p, "g"), Unknown);
        assert_eq!(of(&p, "r"), Unknown);
    }

    #[test]
    fn arithmetic_between_addresses_and_loaded_values_is_unknown() {
        let p = analyze_kernel(
            ".reg .64b %s, %t, %u, %v, %w, %o;\n\
             addrcast.generic.shared %s, @S;\nld.param.64b %o, [%out];\n\
             iadd.64b %t, %s, %o;\niadd.64b %u, %s, %s;\nand.64b %v, %s, 0xFFFFFFFFFFFFFFF8;\n\
             mov.64b %w, %printfbuffer;\niadd.64b %w, %w, 16;",
        );
        assert_eq!(of(&p, "t"), Unknown);
        assert_eq!(of(&p, "u"), Unknown);
        assert_eq!(of(&p, "v"), Unknown);
        assert_eq!(of(&p, "w"), Space(Global));
    }

    #[test]
    fn join_and_sum() {
        assert_eq!(Int.join(Space(Shared)), Space(Shared));
        assert_eq!(Space(Shared).join(Space(Private)), Unknown);
        assert_eq!(
            Provenance::Unwritten.join(Provenance::Unwritten),
            Provenance::Unwritten
        );
        assert_eq!(Space(Shared).sum(Int), Space(Shared));
        assert_eq!(Provenance::Unwritten.sum(Provenance::Unwritten), Int);
        assert_eq!(Space(Shared).sum(Space(Shared)), Unknown);
        assert_eq!(Unknown.join(Int), Unknown);
    }
}
