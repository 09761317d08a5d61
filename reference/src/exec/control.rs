//! Control flow (isa-6): `goto`, `call` (direct and through a register holding a function
//! address: the function's id plus one) and `return`, with their `.cond` forms whose first
//! operand is the (possibly negated) predicate.

use super::Effect;
use crate::error::{undefined, unsupported, Result};
use crate::layout::reg_size;
use crate::operand::LaneCtx;
use pisa_translator::ir::{FuncId, Inst, Opcode, Operand};

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
