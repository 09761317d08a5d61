//! Where an address register's value comes from, by two flow-insensitive analyses over one
//! lattice ([`Origin`]):
//!
//! - [`analyze`]: which memory space a generic address provably points to. A generic access
//!   tests the address's tag at run time ([`super::memory`]), one branch per space the
//!   module has. Most generic addresses, though, come from one `addrcast` (or one global
//!   variable's `addrof`) plus offsets: then the space is known statically and the access
//!   is lowered as one to that space, with 32-bit address arithmetic for shared and private
//!   memory.
//! - [`argument_slots`]: which 8-byte kernel argument an address comes from (`ld.param`
//!   plus offsets), for the checked translation, which then compares the access with that
//!   argument's allocation alone before anything else ([`super::checked`]). A hint only: a
//!   wrong one costs time, never a wrong verdict.
//!
//! Each is computed per function to a fixed point over a worklist of the instructions
//! reading a register whose origin grew (each register grows at most three times, so the
//! work is linear in the instructions). Both follow values the same way:
//!
//! - immediates, special registers and arithmetic on them give plain integers (`Int`);
//! - `mov` and `sel` keep their sources' origin; `iadd`/`isub` of an address and integers
//!   keep the address's; `umad`/`smad` keep the addend's when the factors are integers;
//! - loads, atomics, calls, function parameters, and anything else that mixes addresses,
//!   are `Unknown`;
//!
//! and differ in where an address starts: for spaces, `addrcast.generic.S` gives an
//! address in S (`.global` and `.const`: global), and `addrof` of a `.global`/`.const`
//! variable and `%printfbuffer` give global addresses; for arguments, `ld.param.64b` of
//! the kernel's k-th 8-byte parameter gives slot k (a narrower parameter is an integer).
//!
//! An integer merged with an address (`mov %p, 0` before a loop that sets `%p` from an
//! `addrcast`) keeps the address's origin: a generic access through a plain integer is
//! undefined unless the integer is one of the implementation's generic addresses, which a
//! program cannot obtain but through those instructions (spec-notes §31). A register used
//! as an address that only ever holds integers stays on the tag test.

use crate::ir::{
    AddrBase, AddrOffset, AddrSpace, Function, Inst, MemSpace, Module, Opcode, Operand, RegId,
    SpecialReg, VarRef,
};
use crate::isa;

/// What a register may hold, as far as where addresses come from goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin<T> {
    /// Never written (yet).
    Unwritten,
    /// Plain integers only.
    Int,
    /// Addresses from this origin (plain integers too, possibly).
    From(T),
    /// Anything.
    Unknown,
}

/// The space a generic address points to ([`analyze`]).
pub type Provenance = Origin<MemSpace>;

/// The 8-byte kernel argument an address comes from, by its index among the kernel's
/// 8-byte parameters ([`argument_slots`]).
pub type ArgumentSlot = Origin<u32>;

impl<T: Copy + Eq> Origin<T> {
    /// The least upper bound: the register holds either.
    fn join(self, other: Self) -> Self {
        use Origin::*;
        match (self, other) {
            (Unwritten, x) | (x, Unwritten) => x,
            (Int, x) | (x, Int) => x,
            (From(a), From(b)) if a == b => From(a),
            _ => Unknown,
        }
    }

    /// The origin of a sum: an address plus integers keeps the address's origin.
    fn sum(self, other: Self) -> Self {
        use Origin::*;
        match (self, other) {
            (Unwritten | Int, x) => x.join(Int),
            (x, Unwritten | Int) => x,
            _ => Unknown,
        }
    }

    fn is_int(self) -> bool {
        matches!(self, Origin::Unwritten | Origin::Int)
    }
}

/// The provenance of every register of `f` (by [`RegId`]).
pub fn analyze(module: &Module, f: &Function) -> Vec<Provenance> {
    solve(
        f,
        |_| Origin::Unknown,
        |inst, prov| match space_start(module, f, inst) {
            Some(v) => v,
            None => follow(inst, prov, |op| match *op {
                Operand::Special {
                    reg: SpecialReg::PrintfBuffer,
                    ..
                } => Some(Origin::From(MemSpace::Global)),
                _ => None,
            }),
        },
    )
}

/// The argument slot of every register of `f` (by [`RegId`]): `From(k)` for an address
/// computed from the kernel's k-th 8-byte parameter (`ld.param.64b` of it, plus offsets).
pub fn argument_slots(f: &Function) -> Vec<ArgumentSlot> {
    // An 8-byte parameter loaded whole is an argument's slot; a narrower one is an integer.
    let slot = |p: crate::ir::ParamId| {
        let i = p.0 as usize;
        match f.params.get(i) {
            Some(param) if param.size == 8 => {
                Origin::From(f.params[..i].iter().filter(|q| q.size == 8).count() as u32)
            }
            Some(param) if param.size < 8 => Origin::Int,
            _ => Origin::Unknown,
        }
    };
    solve(
        f,
        |_| Origin::Unknown,
        |inst, prov| {
            let from_param = match (inst.op, inst.q.space, inst.ops.get(1)) {
                (Opcode::Ld, Some(AddrSpace::Param), Some(Operand::Addr(a))) => Some(match a {
                    crate::ir::Address {
                        base: AddrBase::Param(p),
                        offset: AddrOffset::None,
                        ..
                    } => slot(*p),
                    _ => Origin::Unknown,
                }),
                (Opcode::Addrcast | Opcode::Addrof, ..) => Some(Origin::Unknown),
                _ => None,
            };
            from_param.unwrap_or_else(|| follow(inst, prov, |_| None))
        },
    )
}

/// Which parameter a value comes from (plus integer offsets, moves, selections, address
/// conversions of one parameter's values), by index: for a kernel, the `.param` whose whole
/// value `ld.param` loaded; for a function, the `.reg` parameter (its register). What the
/// argument kinds ([`super::argkinds`]) follow from each parameter to its uses. Every other
/// instruction's result is `Int` here — a loaded value, a product, a call's result — since
/// the parameter reaches it only through an instruction the argument kinds see as a use of
/// it (a store of it, an operand); `Unknown` is a register that holds values of two
/// parameters. An `ld.param` of part of a parameter (an offset, a narrower width) is `Int`
/// (the argument kinds make that parameter unknown).
pub fn parameter_origins(f: &Function) -> Vec<Origin<u32>> {
    solve(
        f,
        |i| Origin::From(i as u32),
        |inst, prov| match (inst.op, inst.q.space, inst.ops.get(1)) {
            (Opcode::Ld, Some(AddrSpace::Param), Some(Operand::Addr(a))) => match a {
                crate::ir::Address {
                    base: AddrBase::Param(p),
                    offset: AddrOffset::None,
                    ..
                } if f
                    .params
                    .get(p.0 as usize)
                    .is_some_and(|param| inst.q.ty.is_some_and(|t| t.bits() == param.size * 8)) =>
                {
                    Origin::From(p.0)
                }
                _ => Origin::Int,
            },
            // A sum of values of one parameter is one of its values too: registers are not
            // SSA, so `iadd %q, %q, %p` after `%q` held an offset adds `%p` to itself here.
            (Opcode::Mov | Opcode::Sel | Opcode::Iadd | Opcode::Isub, ..) => operands(inst)
                .filter(|(_, write)| !write)
                .map(|(op, _)| source(op, prov, &|_| None))
                .fold(Origin::Unwritten, Origin::join),
            // The addend of a multiply-add, the source of an address conversion, moves on.
            (Opcode::Umad | Opcode::Smad, ..) => match inst.ops.get(3) {
                Some(op) => source(op, prov, &|_| None).join(Origin::Int),
                None => Origin::Int,
            },
            (Opcode::Addrcast, ..) => match inst.ops.get(1) {
                Some(op @ Operand::Reg { .. }) => source(op, prov, &|_| None),
                _ => Origin::Int,
            },
            // Anything else computes a new value (or loads one): what the parameter's value
            // becomes there is a use of it (the argument kinds record it), not the parameter.
            _ => Origin::Int,
        },
    )
}

/// The fixed point of `value_of` (the origin of what an instruction writes, given the
/// origins so far) over the registers of `f`; function parameter `i` starts as `param(i)`.
fn solve<T: Copy + Eq>(
    f: &Function,
    param: impl Fn(usize) -> Origin<T>,
    value_of: impl Fn(&Inst, &[Origin<T>]) -> Origin<T>,
) -> Vec<Origin<T>> {
    let n = f.regs.len();
    let mut prov = vec![Origin::Unwritten; n];
    for (i, &r) in f.reg_params.iter().enumerate() {
        prov[r.0 as usize] = param(i);
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
        let value = value_of(inst, &prov);
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
pub(crate) fn operands(inst: &Inst) -> impl Iterator<Item = (&Operand, bool)> {
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
pub(crate) fn regs_of(op: &Operand) -> impl Iterator<Item = RegId> {
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

/// The origin of a source operand's value; `special` gives that of the special registers
/// that hold addresses.
fn source<T: Copy>(
    op: &Operand,
    prov: &[Origin<T>],
    special: &impl Fn(&Operand) -> Option<Origin<T>>,
) -> Origin<T> {
    if let Some(v) = special(op) {
        return v;
    }
    match *op {
        Operand::Reg { reg, .. } => prov.get(reg.0 as usize).copied().unwrap_or(Origin::Unknown),
        Operand::Imm(_) | Operand::Special { .. } | Operand::Pred { .. } => Origin::Int,
        _ => Origin::Unknown,
    }
}

/// Where a generic address starts: `addrcast` and `addrof`; `None` for an instruction
/// that only passes origins on ([`follow`]).
fn space_start(module: &Module, f: &Function, inst: &Inst) -> Option<Provenance> {
    use Origin::*;
    Some(match inst.op {
        Opcode::Addrcast => match (inst.q.space_to, inst.q.space_from) {
            (Some(AddrSpace::Generic), Some(from)) => match from.mem_space() {
                Some(MemSpace::Global | MemSpace::Const) => From(MemSpace::Global),
                Some(s) => From(s),
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
                Some(MemSpace::Global | MemSpace::Const) => From(MemSpace::Global),
                _ => Int,
            }
        }
        _ => return None,
    })
}

/// The origin of the value `inst` writes when it only passes its sources' on (both
/// analyses): moves, selections, sums, multiply-adds into an address, integer arithmetic;
/// loads, atomics and calls are `Unknown`.
fn follow<T: Copy + Eq>(
    inst: &Inst,
    prov: &[Origin<T>],
    special: impl Fn(&Operand) -> Option<Origin<T>>,
) -> Origin<T> {
    use Origin::*;
    let sources: smallvec::SmallVec<[Origin<T>; 4]> = operands(inst)
        .filter(|(_, write)| !write)
        .map(|(op, _)| source(op, prov, &special))
        .collect();
    let all_int = sources.iter().all(|p| p.is_int());
    match inst.op {
        Opcode::Ld | Opcode::Iatom | Opcode::Fatom | Opcode::Call => Unknown,
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
    use super::Origin::*;
    use super::Provenance;
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
        assert_eq!(of(&p, "s"), From(Shared));
        assert_eq!(of(&p, "t"), From(Shared));
        assert_eq!(of(&p, "x"), From(Shared));
        assert_eq!(of(&p, "m"), From(Shared));
        assert_eq!(of(&p, "q"), From(Private));
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
        assert_eq!(of(&p, "w"), From(Global));
    }

    #[test]
    fn addresses_from_an_8_byte_parameter_keep_its_slot() {
        let src = ".version 0.1;\n.target 100;\n\
                   .kernel @k(.param[8] %a, .param[4] %n, .param[8] %b, .param[8] %c) {\n\
                   .reg .64b %pa, %pb, %pc, %q, %r, %s, %o, %x;\n.reg .32b %i, %m;\n.pred %p;\n\
                   ld.param.64b %pa, [%a];\nld.param.64b %pb, [%b];\nld.param.32b %m, [%n];\n\
                   mov.32b %i, %localid.x;\nzext.64b.32b %o, %i;\niadd.64b %q, %pa, %o;\n\
                   umad.64b %r, %o, 4, %pb;\nsel.64b %s, %pa, %pb, %p;\n\
                   ld.param.64b %pc, [%c];\nld.global.64b %x, [%pc];\n}\n";
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let module = crate::check(&file).expect("valid");
        let f = &module.functions[0];
        let slots = super::argument_slots(f);
        let of = |name: &str| {
            let i = (0..f.regs.len())
                .find(|&i| f.reg_name(crate::ir::RegId(i as u32)) == name)
                .unwrap();
            slots[i]
        };
        // %a is the first 8-byte parameter, %b the second (the 4-byte %n is not counted).
        assert_eq!(of("pa"), From(0));
        assert_eq!(of("q"), From(0));
        assert_eq!(of("pb"), From(1));
        assert_eq!(of("r"), From(1));
        assert_eq!(of("pc"), From(2));
        assert_eq!(of("o"), Int);
        // A 4-byte parameter is an integer.
        assert_eq!(of("m"), Int);
        // From two parameters, or loaded: no slot.
        assert_eq!(of("s"), Unknown);
        assert_eq!(of("x"), Unknown);
    }

    #[test]
    fn join_and_sum() {
        assert_eq!(Int.join(From(Shared)), From(Shared));
        assert_eq!(From(Shared).join(From(Private)), Unknown);
        assert_eq!(
            Provenance::Unwritten.join(Provenance::Unwritten),
            Provenance::Unwritten
        );
        assert_eq!(From(Shared).sum(Int), From(Shared));
        assert_eq!(Provenance::Unwritten.sum(Provenance::Unwritten), Int);
        assert_eq!(From(Shared).sum(From(Shared)), Unknown);
        assert_eq!(Provenance::Unknown.join(Int), Unknown);
    }
}
