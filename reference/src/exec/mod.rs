//! The semantics of each instruction for one work-item, one file per family of the
//! specification. An instruction either updates registers and memory and falls through, or
//! returns an [`Effect`] on the work-item's control flow, which [`crate::simt`] applies.
//!
//! The sub-group instructions (isa-7), which read the registers of other work-items, are
//! executed for all active work-items at once by [`subgroup::exec`].

mod atomic;
mod compare;
mod control;
mod convert;
mod data;
mod float;
mod int;
mod logic;
mod memory;
pub(crate) mod subgroup;

use crate::error::Result;
use crate::operand::LaneCtx;
use pisa_translator::ir::{FuncId, Inst, Opcode, Operand};

/// What an instruction does to the work-item's control flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Continue with the next instruction.
    Next,
    /// Continue at this instruction index of the running function.
    Jump(usize),
    /// Enter `callee` with `args` (the bytes of each parameter register); its return value
    /// goes to `ret_to`.
    Call {
        /// The function (it has a body).
        callee: FuncId,
        /// The bytes of each argument, in parameter order.
        args: Vec<Vec<u8>>,
        /// The caller's `retval` register, if not `void`.
        ret_to: Option<Operand>,
    },
    /// Leave the running function (or, in the kernel, end the work-item) with the bytes of
    /// the return value, if any.
    Return(Option<Vec<u8>>),
    /// Wait at this `barrier.workgroup`.
    Barrier,
}

/// Whether `op` is a sub-group instruction, executed by [`subgroup::exec`].
pub(crate) fn is_subgroup(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Shfl | Opcode::Ired | Opcode::Fred | Opcode::Redfirstidx
    )
}

/// Executes `inst` for the work-item of `ctx` (every instruction but the sub-group ones).
pub(crate) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<Effect> {
    use Opcode::*;
    let next = |r: Result<()>| r.map(|()| Effect::Next);
    match inst.op {
        Dp4a | Iabs | Iadd | Ineg | Isub | Sdiv | Smad | Smax | Smin | Smul | Uaddc | Udiv
        | Umad | Umax | Umin | Umul => next(int::exec(ctx, inst)),
        Fabs | Fadd | Fcos | Fdiv | Fexp2 | Flog2 | Fmad | Fmax | Fmin | Fmul | Fneg | Frc
        | Frcp | Frsqrt | Fsin | Fsqrt | Fsub | Ftanh => next(float::exec(ctx, inst)),
        And | Asr | Bfi | Bfn | Bfrev | Cbit | Fbh | Fbl | Not | Or | Sbfe | Shr | Shl | Shf
        | Ubfe | Xor => next(logic::exec(ctx, inst)),
        Addrcast | Addrof | Extract | Insert | Isaddr | Mov | Sext | Trunc | Zext => {
            next(data::exec(ctx, inst))
        }
        F2i | Fext | Frnd | Ftrunc | Ftrunc2 | I2f | Pf2i => next(convert::exec(ctx, inst)),
        Scmp | Ucmp | Fcmp | Sel => next(compare::exec(ctx, inst)),
        Call | Goto | Return => control::exec(ctx, inst),
        Ld | St => next(memory::exec(ctx, inst)),
        Iatom | Fatom => next(atomic::exec(ctx, inst)),
        // A fence orders memory accesses; this machine performs every access in program
        // order, one work-item at a time, so there is nothing to do.
        // The race checker counts it as a release and an acquire at its scope.
        Fence => {
            if let Some(san) = ctx.env.san {
                let (who, order, scope) = (ctx.lane.linear, inst.q.order, inst.q.scope);
                let mut state = san.borrow_mut();
                state.order(who, order, scope, true);
                state.order(who, order, scope, false);
            }
            Ok(Effect::Next)
        }
        Barrier => Ok(Effect::Barrier),
        Fred | Ired | Redfirstidx | Shfl => {
            Err(ctx.malformed("sub-group instruction outside a sub-group step"))
        }
    }
}

/// The element width and count of an instruction type: `(bits, 1)` for scalars, the packed
/// layout for packed types.
pub(crate) fn lanes_of(ty: pisa_translator::ir::DataType) -> (u32, u32) {
    match ty.packed() {
        Some((w, n)) => (w, n as u32),
        None => (ty.bits(), 1),
    }
}
