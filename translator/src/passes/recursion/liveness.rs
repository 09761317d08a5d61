//! Which registers of a function are live after each instruction: what a call inside a
//! cycle must save in its frame.

use crate::ir::{AddrBase, AddrOffset, Function, Opcode, Operand, RegId};

/// Registers live at one point, a bit per register.
pub(super) type Live = [u64];

/// Registers live after each instruction of `f`'s body (as bit sets), by backward
/// dataflow over its jumps. An operand counts as read unless it is the whole destination
/// of an instruction that writes it entirely, so the sets may be larger than the truth,
/// never smaller.
pub(super) fn live_after(f: &Function) -> Vec<Vec<u64>> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let words = f.regs.len().div_ceil(64).max(1);
    let n = body.len();
    let mut uses = vec![vec![0u64; words]; n];
    let mut defs = vec![vec![0u64; words]; n];
    let set = |v: &mut Vec<u64>, r: RegId| v[r.0 as usize / 64] |= 1 << (r.0 % 64);
    let mut succ: Vec<[Option<usize>; 2]> = vec![[None, None]; n];
    for (i, inst) in body.iter().enumerate() {
        let writes_first = !inst.q.cond
            && !matches!(
                inst.op,
                Opcode::St
                    | Opcode::Goto
                    | Opcode::Return
                    | Opcode::Barrier
                    | Opcode::Fence
                    | Opcode::Insert
            );
        for (k, op) in inst.ops.iter().enumerate() {
            match *op {
                Operand::Reg {
                    reg, swizzle: None, ..
                }
                | Operand::Pred {
                    reg,
                    negated: false,
                } if k == 0 && writes_first => set(&mut defs[i], reg),
                Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => set(&mut uses[i], reg),
                Operand::Addr(a) => {
                    if let AddrBase::Reg(r) = a.base {
                        set(&mut uses[i], r);
                    }
                    if let AddrOffset::Reg(r) = a.offset {
                        set(&mut uses[i], r);
                    }
                }
                _ => {}
            }
        }
        let target = inst.ops.iter().find_map(|o| match o {
            Operand::Label(l) => f.labels.get(l.0 as usize).map(|l| l.target),
            _ => None,
        });
        let next = (i + 1 < n).then_some(i + 1);
        succ[i] = match inst.op {
            Opcode::Goto if inst.q.cond => [target.filter(|&t| t < n), next],
            Opcode::Goto => [target.filter(|&t| t < n), None],
            Opcode::Return if !inst.q.cond => [None, None],
            _ => [next, None],
        };
    }
    let mut live_in = vec![vec![0u64; words]; n];
    let mut out = vec![vec![0u64; words]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut o = vec![0u64; words];
            for s in succ[i].iter().flatten() {
                for (w, x) in o.iter_mut().zip(&live_in[*s]) {
                    *w |= x;
                }
            }
            let li: Vec<u64> = (0..words)
                .map(|w| uses[i][w] | (o[w] & !defs[i][w]))
                .collect();
            out[i] = o;
            if li != live_in[i] {
                live_in[i] = li;
                changed = true;
            }
        }
    }
    out
}
