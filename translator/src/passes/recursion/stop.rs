//! A work-item that overflows its stack stops at once: the overflow path sets the module's
//! *stop flag* ([`STOP_FLAG`], a 4-byte `.private` module variable, so one per work-item),
//! and every call that may reach a state machine is followed by a test of it that returns
//! (a kernel's return ends the work-item; a state machine goes to its exit instead, so its
//! wrapper still finds a value where it looks). Each kernel that may reach a state machine
//! clears the flag first (Private memory starts undefined). Nothing after the overflowing
//! call runs: no store of a caller lands, whatever it computed.

use super::bug;
use super::text::asm;
use crate::diag::Diagnostic;
use crate::ir::{
    AddrBase, Bits, FuncId, Function, GlobalId, GlobalVar, Inst, LabelId, Linkage, LocalId,
    MemSpace, Module, Opcode, Operand, RegType, VarRef,
};
use crate::mid::calls::{address_taken, CallGraph};
use crate::span::Span;

/// The name of the stop flag: a `.private` module variable (4 bytes) the lowering adds, in
/// the private arena, never in the reflection's globals.
pub const STOP_FLAG: &str = "__pisa_stack_stop";

/// The stop flag's variable, appended to `module`'s globals (after every other, so the
/// reflection's indices of the others do not move).
pub(super) fn add_flag(module: &mut Module) -> GlobalId {
    let id = GlobalId(module.globals.len() as u32);
    module.globals.push(GlobalVar {
        name: STOP_FLAG.to_string(),
        space: MemSpace::Private,
        size: 4,
        align: 4,
        init: None,
        linkage: Linkage::Internal,
        section: None,
        host_access: None,
        span: Span::default(),
    });
    id
}

/// `text` assembled over `f`'s registers, its `@stack` accesses made accesses to the stop
/// flag `flag`.
pub(super) fn flag_asm(
    f: &Function,
    text: &str,
    span: Span,
    flag: GlobalId,
    label: Option<LabelId>,
) -> Result<Vec<Inst>, Vec<Diagnostic>> {
    let mut insts = asm(&f.regs, f.ret, text, span, (LocalId(0), flag), label)?;
    for inst in &mut insts {
        for op in inst.ops.iter_mut() {
            if let Operand::Addr(a) = op {
                if let AddrBase::Var(VarRef::Local(_)) = a.base {
                    a.base = AddrBase::Var(VarRef::Global(flag));
                }
            }
        }
    }
    Ok(insts)
}

/// Adds the tests of the stop flag `flag` after every call that may reach one of the
/// `machines` (with the exit label of each), and its clearing at each kernel's start.
pub(super) fn add_tests(
    module: &mut Module,
    machines: &[(FuncId, LabelId)],
    flag: GlobalId,
) -> Result<(), Vec<Diagnostic>> {
    let graph = CallGraph::new(module);
    let mut is_machine = vec![false; module.functions.len()];
    for &(m, _) in machines {
        is_machine[m.0 as usize] = true;
    }
    let reach = graph.reaching(&is_machine);
    let taken = address_taken(module);
    let any_reaches = taken.iter().zip(&reach).any(|(&t, &r)| t && r);
    let reaches = |inst: &Inst| {
        if inst.op != Opcode::Call {
            return false;
        }
        match inst.ops.get(usize::from(inst.q.cond) + 1) {
            Some(Operand::Func(g)) => reach.get(g.0 as usize).copied().unwrap_or(false),
            _ => any_reaches,
        }
    };
    for (i, f) in module.functions.iter_mut().enumerate() {
        if !reach[i] || f.body.is_none() {
            continue;
        }
        let exit = machines
            .iter()
            .find(|(m, _)| m.0 as usize == i)
            .map(|&(_, l)| l);
        rewrite(f, exit, flag, &reaches)?;
    }
    Ok(())
}

/// `f`'s body with a test of the flag after each call `reaches` says may reach a state
/// machine (a jump to `exit` in a state machine, else a return) and, in a kernel, the
/// flag's clearing first.
fn rewrite(
    f: &mut Function,
    exit: Option<LabelId>,
    flag: GlobalId,
    reaches: &dyn Fn(&Inst) -> bool,
) -> Result<(), Vec<Diagnostic>> {
    let span = f.span;
    let b32 = RegType::Scalar(Bits::B32);
    let t = f.push_reg("stop.t", b32, span).0;
    let q = f.push_reg("stop.q", RegType::Pred, span).0;
    // A non-void snippet must end with its return (the validator's rule): the last
    // instruction is assembled and dropped.
    let (leave, drop_last) = match (exit, f.ret) {
        (Some(_), _) => (format!("goto.cond %r{q}, L;"), false),
        (None, None) => (format!("return.cond %r{q};"), false),
        (None, Some(ty)) => {
            let v = f.push_reg("stop.value", ty, span).0;
            (format!("return.cond %r{q}, %r{v};\nreturn %r{v};"), true)
        }
    };
    let test = format!("ld.private.32b %r{t}, [@stack];\nucmp.ne.32b %r{q}, %r{t}, 0;\n{leave}");
    let body = f
        .body
        .take()
        .ok_or_else(|| bug("a function without a body"))?;
    let mut out = Vec::with_capacity(body.len() + 8);
    // new_at[k]: where old instruction k (or the end, k = len) went.
    let mut new_at = Vec::with_capacity(body.len() + 1);
    if f.kind == crate::ir::FunctionKind::Kernel {
        out.extend(flag_asm(
            f,
            &format!("mov.32b %r{t}, 0;\nst.private.32b [@stack], %r{t};"),
            span,
            flag,
            None,
        )?);
    }
    for inst in body {
        new_at.push(out.len());
        let after = reaches(&inst);
        let call_span = inst.span;
        out.push(inst);
        if after {
            let mut insts = flag_asm(f, &test, call_span, flag, exit)?;
            if drop_last {
                insts.pop();
            }
            out.extend(insts);
        }
    }
    new_at.push(out.len());
    for l in &mut f.labels {
        if let Some(&n) = new_at.get(l.target) {
            l.target = n;
        }
    }
    f.body = Some(out);
    Ok(())
}
