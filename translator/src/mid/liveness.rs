//! Which registers are live at the start of some block of a function: read, on some path
//! from that start, before they are written.
//!
//! The lowering on virtual lanes (spec-notes §88) runs register-only code for every lane of
//! an invocation and puts back the registers of the lanes that were not active. An inactive
//! lane resumes at the start of a block (a merge, a loop header, a branch target) or never,
//! so a register live at no block start (a temporary written before it is read in every
//! block that reads it) need not be put back.
//!
//! Classic backward dataflow on the [`Cfg`] with bit sets: `in(b) = use(b) ∪ (out(b) \
//! def(b))`, `out(b) = ∪ in(succ)`, iterated in reverse post-order to a fixed point. A
//! definition kills a register only when it writes all of it (a whole scalar register or a
//! predicate); a partial write (a swizzle, a vector element) reads the rest, so it counts as
//! a use, and so does the destination of an instruction that may leave it as it was (`shfl`,
//! `ired`, `fred` outside the participation mask, a `call.cond` that does not call).

use crate::ir::{AddrBase, AddrOffset, Function, Inst, Opcode, Operand, RegId, RegType};
use crate::isa;
use crate::mid::cfg::{Cfg, Code, Cond, Term};

/// A set of registers, one bit each.
#[derive(Clone, PartialEq)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }

    fn insert(&mut self, r: RegId) {
        let i = r.0 as usize;
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    fn remove(&mut self, r: RegId) {
        let i = r.0 as usize;
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}

/// The registers `op` reads when it is read (addresses' registers included).
pub(crate) fn operand_reads(op: &Operand, mut f: impl FnMut(RegId)) {
    match *op {
        Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => f(reg),
        Operand::Addr(a) => {
            if let AddrBase::Reg(r) = a.base {
                f(r);
            }
            if let AddrOffset::Reg(r) = a.offset {
                f(r);
            }
        }
        _ => {}
    }
}

/// Whether `inst` may leave its destination as it was: the cross-lane instructions keep `dst`
/// in a lane outside the participation mask, and a conditional call writes its result only
/// when it calls. Their destinations count as read.
fn may_keep_dst(inst: &Inst) -> bool {
    matches!(inst.op, Opcode::Shfl | Opcode::Ired | Opcode::Fred) || inst.q.cond
}

/// The register operand `k` of `inst` writes whole, if it does: a scalar register without a
/// swizzle or a predicate, written by an instruction that cannot leave it as it was. Any other
/// write (a swizzle, a vector element, a destination that may be kept) also reads the rest.
pub(crate) fn whole_write(f: &Function, inst: &Inst, k: usize) -> Option<RegId> {
    let rules = isa::def(inst.op).form(inst.form).operands;
    if may_keep_dst(inst) || !rules.get(k).is_some_and(|r| r.write) {
        return None;
    }
    match *inst.ops.get(k)? {
        Operand::Reg { reg, swizzle: None }
            if matches!(f.regs.get(reg.0 as usize)?.ty, RegType::Scalar(_)) =>
        {
            Some(reg)
        }
        Operand::Pred { reg, .. } => Some(reg),
        _ => None,
    }
}

/// The registers `inst` reads: every operand but its whole writes ([`whole_write`]),
/// addresses' registers included.
pub(crate) fn reads(f: &Function, inst: &Inst, mut each: impl FnMut(RegId)) {
    for (k, op) in inst.ops.iter().enumerate() {
        if whole_write(f, inst, k).is_none() {
            operand_reads(op, &mut each);
        }
    }
}

/// Applies `inst` backwards to `live`: its whole writes leave, everything it reads comes in
/// (a destination it may leave as it was included).
fn step_back(f: &Function, inst: &Inst, live: &mut Set) {
    for k in 0..inst.ops.len() {
        if let Some(r) = whole_write(f, inst, k) {
            live.remove(r);
        }
    }
    reads(f, inst, |r| live.insert(r));
}

/// For each register of `f` (by index), whether it is live at the start of some block of
/// `cfg` (`f`'s CFG).
pub fn live_at_some_block(f: &Function, cfg: &Cfg) -> Vec<bool> {
    let n = f.regs.len();
    let body = f.body.as_deref().unwrap_or(&[]);
    let blocks = cfg.blocks.len();
    let mut live_in = vec![Set::new(n); blocks];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo().iter().rev() {
            let block = &cfg.blocks[b];
            let mut live = Set::new(n);
            for s in block.term.succs() {
                for (w, x) in live.0.iter_mut().zip(&live_in[s].0) {
                    *w |= x;
                }
            }
            match block.term {
                Term::Branch {
                    cond: Cond::Pred { reg, .. },
                    ..
                } => live.insert(reg),
                Term::Return(Some(ref op)) => operand_reads(op, |r| live.insert(r)),
                _ => {}
            }
            if let Code::Insts(ref range) = block.code {
                for inst in body.get(range.clone()).unwrap_or(&[]).iter().rev() {
                    step_back(f, inst, &mut live);
                }
            }
            if live != live_in[b] {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|i| live_in.iter().any(|s| s.contains(i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::live_at_some_block;
    use crate::mid::cfg::Cfg;

    fn analyze(body: &str) -> Vec<(String, bool)> {
        let src =
            format!(".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {{\n{body}\n}}\n");
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let module = crate::check(&file).expect("valid");
        let f = &module.functions[0];
        let cfg = Cfg::build(f).expect("cfg");
        let live = live_at_some_block(f, &cfg);
        live.into_iter()
            .enumerate()
            .map(|(i, l)| (f.reg_name(crate::ir::RegId(i as u32)).to_string(), l))
            .collect()
    }

    #[test]
    fn temporaries_of_a_loop_are_live_nowhere_and_its_counters_at_the_header() {
        // %t and %more are written before they are read in every block; %v and %n are read
        // at the loop's header before the body writes them.
        let live = analyze(
            ".reg .32b %v, %t, %n;\n.reg .64b %w;\n.pred %more;\nmov.32b %v, 1;\nmov.32b %n, 0;\n\
             loop:\nshr.32b %t, %v, 3;\nxor.32b %v, %v, %t;\niadd.32b %n, %n, 1;\n\
             ucmp.lt.32b %more, %n, 10;\ngoto.cond %more, loop;\n\
             ld.param.64b %w, [%out];\nst.global.32b [%w], %v;",
        );
        let get = |name: &str| live.iter().find(|(n, _)| n == name).map(|x| x.1);
        assert_eq!(get("t"), Some(false));
        assert_eq!(get("more"), Some(false));
        assert_eq!(get("v"), Some(true));
        assert_eq!(get("n"), Some(true));
    }
}
