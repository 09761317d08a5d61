//! Which registers of a function may hold a value that the driver's compiler sees as a
//! compile-time constant.
//!
//! Registers become SSA values in the driver, so a register written only from immediates
//! (directly or through other such registers) is a constant there, and drivers fold
//! `x + 0.0 → x` even under `SignedZeroInfNanPreserve` (lavapipe does, spec-notes §44). A
//! float sum needs the zero-sign fix-up only when an addend may be such a constant zero;
//! this analysis says which registers may be constants at all, conservatively (a register
//! with one constant definition and one that is not is counted as a possible constant).
//!
//! A definition is constant when its instruction computes only from its operands (no memory
//! read, call or cross-lane operation) and every operand it reads is an immediate, a
//! possibly-constant register, or a special register whose value the pipeline fixes
//! (`%localsize`, `%enqueuedlocalsize`, `%subgroupsize`: specialization constants or
//! literals). A worklist over the registers' readers makes it linear in the body.
//!
//! Some definitions are constant whatever their operands hold, through identities the
//! driver folds: an instruction that reads one register several times and nothing else
//! (`xor.32b %z, %x, %x`, `isub`, a compare of a register with itself), `and` or a
//! multiply by an immediate zero, and `isaddr` (which the translator often resolves
//! statically). Those count as possible constants from the start (differential seeds
//! 40005480 and 40006438 found the first and the last). So do the results of shifts,
//! extensions, truncations, bit-field extractions and `and`: the driver tracks which bits of
//! a value it knows, and those can make a value known zero whatever the input (`zext`, then
//! `shr` by 32, then `trunc` is 0: lavapipe then folds `0 - x` to `-x`, differential seed
//! 29937367019).

use crate::ir::{Function, Opcode, Operand, SpecialReg};
use crate::isa;

/// Whether an instruction's result depends on more than its operands.
fn opaque(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Ld | St | Iatom | Fatom | Call | Shfl | Ired | Fred | Redfirstidx | Barrier | Fence
    )
}

/// Whether an instruction can make bits of its result known zero whatever its operands hold
/// (so that the driver may know the whole result to be zero).
fn known_bits(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Shl | Shr | Asr | Shf | Zext | Sext | Trunc | Ubfe | Sbfe | And
    )
}

/// Whether a special register's value is fixed when the pipeline is built.
fn fixed_special(reg: SpecialReg) -> bool {
    matches!(
        reg,
        SpecialReg::LocalSize | SpecialReg::EnqueuedLocalSize | SpecialReg::SubgroupSize
    )
}

/// For each register of `f` (by index), whether it may hold a compile-time constant.
pub fn maybe_constant(f: &Function) -> Vec<bool> {
    let mut constant = vec![false; f.regs.len()];
    let Some(body) = &f.body else {
        return constant;
    };
    // For each instruction: how many of its read registers are not (yet) known to be
    // possibly constant; whether it can be constant at all; the registers it writes.
    let mut pending: Vec<u32> = vec![0; body.len()];
    let mut readers: Vec<Vec<u32>> = vec![Vec::new(); f.regs.len()];
    let mut ready: Vec<u32> = Vec::new();
    for (i, inst) in body.iter().enumerate() {
        if opaque(inst.op) {
            pending[i] = u32::MAX;
            continue;
        }
        let rules = isa::def(inst.op).form(inst.form).operands;
        let mut possible = true;
        let mut regs = 0;
        // The one register read so far, and whether every register read is it.
        let (mut only, mut one_reg) = (None, true);
        let mut zero_imm = false;
        for (k, op) in inst.ops.iter().enumerate() {
            if rules.get(k).is_some_and(|r| r.write) {
                continue;
            }
            match *op {
                Operand::Imm(v) => zero_imm |= v == 0,
                Operand::Void | Operand::Label(_) | Operand::Func(_) => {}
                Operand::Var(_) => {}
                Operand::Special { reg, .. } => possible &= fixed_special(reg),
                Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => {
                    readers[reg.0 as usize].push(i as u32);
                    regs += 1;
                    one_reg &= *only.get_or_insert(reg) == reg;
                }
                Operand::Addr(_) => possible = false,
            }
        }
        let identity = (possible && regs >= 2 && one_reg)
            || (zero_imm && matches!(inst.op, Opcode::Umul | Opcode::Smul))
            || inst.op == Opcode::Isaddr
            || known_bits(inst.op);
        pending[i] = if identity {
            0
        } else if possible {
            regs
        } else {
            u32::MAX
        };
        if pending[i] == 0 {
            ready.push(i as u32);
        }
    }
    while let Some(i) = ready.pop() {
        let inst = &body[i as usize];
        let rules = isa::def(inst.op).form(inst.form).operands;
        for (k, op) in inst.ops.iter().enumerate() {
            if !rules.get(k).is_some_and(|r| r.write) {
                continue;
            }
            if let Operand::Reg { reg, .. } | Operand::Pred { reg, .. } = *op {
                let r = reg.0 as usize;
                if std::mem::replace(&mut constant[r], true) {
                    continue;
                }
                for &j in &readers[r] {
                    let p = &mut pending[j as usize];
                    if *p != u32::MAX && *p > 0 {
                        *p -= 1;
                        if *p == 0 {
                            ready.push(j);
                        }
                    }
                }
            }
        }
    }
    constant
}
