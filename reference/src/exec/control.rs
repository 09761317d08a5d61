//! Control flow (isa-6): `goto`, `call` (direct and through a register holding a function
//! address: the function's id plus one) and `return`, with their `.cond` forms whose first
//! operand is the (possibly negated) predicate.

use super::Effect;
use crate::error::{undefined, unsupported, Error, Result};
use crate::layout::reg_size;
use crate::operand::LaneCtx;
use pisa_translator::ir::{FuncId, Inst, Opcode, Operand};
use pisa_translator::memcheck::{Site, WorkItem};
use pisa_translator::passes::recursion::StackOverflow;

pub(super) fn exec(ctx: &mut LaneCtx, inst: &Inst) -> Result<Effect> {
    // `.cond`: the predicate comes first; a false condition falls through.
    let first = if inst.q.cond {
        if !ctx.pred(ctx.op(inst, 0)?)? {
            return Ok(Effect::Next);
        }
        1
    } else {
        0
    };
    let ops = &inst.ops[first.min(inst.ops.len())..];
    match inst.op {
        Opcode::Goto => {
            let Some(Operand::Label(l)) = ops.first() else {
                return Err(ctx.malformed("goto without a label"));
            };
            let label = ctx
                .func()
                .labels
                .get(l.0 as usize)
                .ok_or_else(|| ctx.malformed("unknown label"))?;
            let len = ctx.func().body.as_ref().map_or(0, |b| b.len());
            if label.target > len {
                return Err(ctx.malformed("label beyond the end of the body"));
            }
            Ok(Effect::Jump(label.target))
        }
        Opcode::Return => {
            let f = ctx.func();
            let value = match (f.ret, ops.first()) {
                (Some(ty), Some(op)) => Some(ctx.read_bytes(op, reg_size(ty))?),
                (None, Some(_)) => {
                    return Err(ctx.malformed("return with a value from a void function or kernel"))
                }
                (_, None) => None,
            };
            Ok(Effect::Return(value))
        }
        Opcode::Call => call(ctx, ops),
        _ => Err(ctx.malformed("not a control-flow instruction")),
    }
}

/// `call retval, target(args...)` after the predicate.
fn call(ctx: &mut LaneCtx, ops: &[Operand]) -> Result<Effect> {
    let [retval, target, args @ ..] = ops else {
        return Err(ctx.malformed("call without a return value and target"));
    };
    let functions = &ctx.env.prepared.module.functions;
    let callee = match *target {
        Operand::Func(f) => f,
        Operand::Reg { .. } => {
            let id = ctx.src(target, 64)?;
            if id == 0 || id > functions.len() as u128 {
                return Err(undefined(
                    ctx.span,
                    format!("call through {id:#x}, which is not a function address"),
                ));
            }
            FuncId(id as u32 - 1)
        }
        _ => return Err(ctx.malformed("call target is neither a function nor a register")),
    };
    let f = functions
        .get(callee.0 as usize)
        .ok_or_else(|| ctx.malformed("unknown function"))?;
    if f.is_kernel() {
        return Err(undefined(ctx.span, format!("call of kernel @{}", f.name)));
    }
    if f.body.is_none() {
        return Err(unsupported(
            ctx.span,
            format!(
                "call of imported function @{} (the module was not linked)",
                f.name
            ),
        ));
    }
    // Through an address, a function whose return differs from the call's is not one the
    // call can reach (spec-notes §32: the device calls nothing).
    if matches!(target, Operand::Reg { .. }) {
        let wanted = match *retval {
            Operand::Void => Some(None),
            Operand::Reg { reg, swizzle: None } => {
                Some(ctx.func().regs.get(reg.0 as usize).map(|r| reg_size(r.ty)))
            }
            _ => None,
        };
        if wanted.is_some_and(|w| w != f.ret.map(reg_size)) {
            return Err(undefined(
                ctx.span,
                format!(
                    "call through the address of @{}, whose return type differs from the call's",
                    f.name
                ),
            ));
        }
    }
    if args.len() != f.reg_params.len() {
        return Err(undefined(
            ctx.span,
            format!(
                "call of @{} with {} arguments; it has {} parameters",
                f.name,
                args.len(),
                f.reg_params.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(args.len());
    for (arg, p) in args.iter().zip(&f.reg_params) {
        let ty = f
            .regs
            .get(p.0 as usize)
            .ok_or_else(|| ctx.malformed("unknown parameter register"))?
            .ty;
        bytes.push(ctx.read_bytes(arg, reg_size(ty))?);
    }
    check_stack_depth(ctx, callee)?;
    let ret_to = match retval {
        Operand::Void => None,
        r @ Operand::Reg { .. } => Some(*r),
        _ => return Err(ctx.malformed("call retval is neither a register nor void")),
    };
    Ok(Effect::Call {
        callee,
        args: bytes,
        ret_to,
    })
}

/// A call into a call cycle may not nest more than [`crate::Config::stack_depth`]
/// activations of the cycle's functions in the work-item (the device's explicit stack has
/// that many frames): counted over the work-item's frames, the caller's included.
fn check_stack_depth(ctx: &LaneCtx, callee: FuncId) -> Result<()> {
    let cycles = ctx.env.cycles;
    let Some(cycle) = cycles.get(callee.0 as usize).copied().flatten() else {
        return Ok(());
    };
    if ctx.lane.cycle_frames(cycle) < ctx.env.stack_depth {
        return Ok(());
    }
    let env = ctx.env;
    let enqueued = env.launch.local_size.map(u64::from);
    Err(Error::StackOverflow(Box::new(StackOverflow {
        kernel: env.prepared.module.functions[env.kernel.0 as usize]
            .name
            .clone(),
        site: Site {
            function: ctx.func().name.clone(),
            span: (ctx.span.start, ctx.span.end),
            align: 0,
            variable: None,
            location: None,
        },
        work_item: WorkItem::new(
            env.group_id,
            ctx.lane.local_id,
            enqueued,
            env.launch.global_offset,
        ),
        depth: env.stack_depth,
        further: 0,
    })))
}
