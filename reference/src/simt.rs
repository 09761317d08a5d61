//! The execution model of one work-group: sub-groups in SIMT lock-step, divergence and
//! reconvergence, calls and returns, and `barrier.workgroup`.
//!
//! **Sub-groups.** Work-items with linear local ids `k*S .. k*S+S-1` (linear id =
//! `x + y*lx + z*lx*ly` over this group's `%localsize`, `S` = `%subgroupsize`) form sub-group
//! `k`; `%laneid` = linear id mod `S`.
//!
//! **Lock-step with divergence.** Each work-item has its own call stack and pc. At each step
//! of a sub-group, the runnable work-items whose position is smallest run the instruction at
//! that position together; they are `%activemask`. A position is the call stack read from the
//! kernel down: for every frame `(function, pc)`, where a caller's pc is its `call`; positions
//! compare lexicographically, a prefix first. Forward branches therefore wait for the
//! work-items behind them and loops run until every work-item has left them: the
//! reconvergence of a structured program.
//!
//! **Scheduling.** Sub-groups take turns of [`QUANTUM`] steps, so that each makes progress
//! (arch-1: sub-groups have independent forward progress). A work-item at a
//! `barrier.workgroup` stops; when no work-item of the work-group can run and some wait, they
//! must all wait at the same barrier (else [`Error::BarrierDivergence`]) and are released
//! together. Work-items that returned from the kernel do not hold a barrier. Every step
//! counts against the dispatch's step limit.

use crate::error::{Error, Result};
use crate::exec::{self, Effect};
use crate::lane::{Env, Lane, LaneState};
use crate::memory::GlobalMemory;
use crate::operand::LaneCtx;
use crate::sanitize::{Check, Report, State, Target, Who};
use pisa_translator::ir::{FuncId, Opcode};
use pisa_translator::Span;
use std::cell::RefCell;
use std::cmp::Ordering;

/// Steps a sub-group runs before the next one gets its turn.
pub(crate) const QUANTUM: u32 = 64;

/// The step counter of a dispatch.
pub(crate) struct Steps {
    /// Steps taken so far.
    pub taken: u64,
    /// The limit ([`crate::Config::step_limit`]).
    pub limit: u64,
}

/// Orders two work-items by position (see the module documentation).
fn position(a: &Lane, b: &Lane) -> Ordering {
    for (fa, fb) in a.frames.iter().zip(&b.frames) {
        match (fa.func, fa.pc).cmp(&(fb.func, fb.pc)) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.frames.len().cmp(&b.frames.len())
}

/// Runs the work-group `env` describes to completion.
pub(crate) fn run_group(env: &Env, global: &mut GlobalMemory, steps: &mut Steps) -> Result<()> {
    let [lx, ly, lz] = env.local_size.map(|v| v as usize);
    let count = lx * ly * lz;
    let sg = env.subgroup_size as usize;
    let mut lanes = Vec::with_capacity(count);
    for linear in 0..count {
        let local_id = [
            (linear % lx) as u32,
            ((linear / lx) % ly) as u32,
            (linear / (lx * ly)) as u32,
        ];
        lanes.push(Lane::new(
            env,
            local_id,
            (linear % sg) as u32,
            linear as u32,
        )?);
    }
    let mut shared = vec![0u8; env.prepared.shared_size as usize];
    if let Some(san) = env.san {
        san.borrow_mut().begin_group(env.group_id, shared.len());
    }
    loop {
        let mut ran = false;
        for start in (0..count).step_by(sg) {
            let end = (start + sg).min(count);
            for _ in 0..QUANTUM {
                if !step(env, &mut lanes[start..end], &mut shared, global)? {
                    break;
                }
                ran = true;
                steps.taken += 1;
                if steps.taken > steps.limit {
                    return Err(Error::StepLimit);
                }
            }
        }
        if !ran && !release_barrier(env, &mut lanes)? {
            return Ok(());
        }
    }
}

/// When nobody can run: releases the work-items waiting at a barrier (`true`), or reports
/// that the work-group is finished (`false`).
fn release_barrier(env: &Env, lanes: &mut [Lane]) -> Result<bool> {
    let mut at = None;
    for lane in lanes.iter().filter(|l| l.state == LaneState::AtBarrier) {
        let f = lane.top();
        let here = (f.func, f.pc);
        match at {
            None => at = Some(here),
            Some(first) if first != here => {
                if let Some(san) = env.san.filter(|s| s.borrow().opts.sync) {
                    report_divergent_wait(san, lanes, first);
                    break;
                }
                return Err(Error::BarrierDivergence {
                    at: span_of(env, lane),
                });
            }
            _ => {}
        }
    }
    if at.is_none() {
        return Ok(false);
    }
    for lane in lanes.iter_mut().filter(|l| l.state == LaneState::AtBarrier) {
        lane.state = LaneState::Running;
        lane.top_mut().pc += 1;
    }
    if let Some(san) = env.san {
        san.borrow_mut().barrier_released();
    }
    Ok(true)
}

/// The barrier checker: work-items wait at different barriers (the first at `first`). The
/// report names the first barrier, another one, and the work-items waiting elsewhere; the
/// caller then releases them all.
fn report_divergent_wait(san: &RefCell<State>, lanes: &[Lane], first: (FuncId, usize)) {
    let waiting = lanes.iter().filter(|l| l.state == LaneState::AtBarrier);
    let (at, elsewhere): (Vec<&Lane>, Vec<&Lane>) = waiting.partition(|l| {
        let f = l.top();
        (f.func, f.pc) == first
    });
    let (Some(a), Some(b)) = (at.first(), elsewhere.first()) else {
        return;
    };
    let who = |l: &Lane| Who {
        item: l.linear,
        local: l.local_id,
        func: l.top().func.0,
        pc: l.top().pc as u32,
    };
    let (wa, wb) = (who(a), who(b));
    let mut state = san.borrow_mut();
    let missing = elsewhere
        .iter()
        .map(|l| state.running_item(l.local_id))
        .collect();
    state.report((Check::Sync, (wa.func, wa.pc), (wb.func, wb.pc)), |s| {
        Report {
            check: Check::Sync,
            message: "work-items of a work-group wait at different barriers".into(),
            first: s.event(&wa, None),
            second: Some(s.event(&wb, None)),
            target: Target::None,
            missing,
            count: 1,
        }
    });
}

/// Whether `lane` is about to leave the kernel: its next instruction is an unconditional
/// `return` of the kernel or the end of the kernel's body. The barrier checker counts it as
/// exited (isa-9: an exited work-item need not reach a barrier).
fn at_exit(env: &Env, lane: &Lane) -> bool {
    if lane.frames.len() != 1 {
        return false;
    }
    let f = lane.top();
    let body = env.prepared.module.functions[f.func.0 as usize]
        .body
        .as_deref()
        .unwrap_or(&[]);
    body.get(f.pc)
        .is_none_or(|i| i.op == Opcode::Return && !i.q.cond)
}

/// The barrier checker at a `barrier.workgroup` that the work-items `executing` of the
/// sub-group `lanes` execute: the others that are still running (at another place, so they
/// skipped it) are missing, unless they are about to exit.
fn check_barrier(env: &Env, san: &RefCell<State>, lanes: &[Lane], executing: &[usize], at: Who) {
    let missing: Vec<&Lane> = lanes
        .iter()
        .enumerate()
        .filter(|(i, l)| l.state != LaneState::Done && !executing.contains(i) && !at_exit(env, l))
        .map(|(_, l)| l)
        .collect();
    if missing.is_empty() {
        return;
    }
    let mut state = san.borrow_mut();
    let missing = missing
        .iter()
        .map(|l| state.running_item(l.local_id))
        .collect();
    state.report((Check::Sync, (at.func, at.pc), (u32::MAX, 0)), |s| Report {
        check: Check::Sync,
        message: "barrier.workgroup in divergent control flow: work-items of the sub-group \
                  did not reach it with the others"
            .into(),
        first: s.event(&at, None),
        second: None,
        target: Target::None,
        missing,
        count: 1,
    });
}

fn span_of(env: &Env, lane: &Lane) -> Span {
    let f = lane.top();
    env.prepared.module.functions[f.func.0 as usize]
        .body
        .as_ref()
        .and_then(|b| b.get(f.pc))
        .map_or(Span::default(), |i| i.span)
}

/// One step of a sub-group; `false` when none of its work-items can run.
fn step(
    env: &Env,
    lanes: &mut [Lane],
    shared: &mut Vec<u8>,
    global: &mut GlobalMemory,
) -> Result<bool> {
    let mut first: Option<usize> = None;
    for (i, lane) in lanes.iter().enumerate() {
        if lane.state == LaneState::Running
            && first.is_none_or(|f| position(lane, &lanes[f]) == Ordering::Less)
        {
            first = Some(i);
        }
    }
    let Some(first) = first else {
        return Ok(false);
    };
    // The executing work-items (a sub-group has at most 32).
    let mut executing = [0usize; 32];
    let mut count = 0;
    let mut active_mask = 0u32;
    for i in first..lanes.len() {
        if lanes[i].state == LaneState::Running
            && position(&lanes[i], &lanes[first]) == Ordering::Equal
        {
            executing[count] = i;
            count += 1;
            active_mask |= 1 << lanes[i].lane_id;
        }
    }
    let executing = &executing[..count];
    let top = lanes[first].top();
    let func = &env.prepared.module.functions[top.func.0 as usize];
    let body = func.body.as_deref().unwrap_or(&[]);
    let Some(inst) = body.get(top.pc) else {
        // Running off the end of a body returns (without a value).
        for &i in executing {
            apply(
                env,
                &mut lanes[i],
                Effect::Return(None),
                Span::default(),
                shared,
                global,
            )?;
        }
        return Ok(true);
    };
    if inst.op == Opcode::Barrier {
        if let Some(san) = env.san.filter(|s| s.borrow().opts.sync) {
            let who = Who {
                item: lanes[first].linear,
                local: lanes[first].local_id,
                func: top.func.0,
                pc: top.pc as u32,
            };
            check_barrier(env, san, lanes, executing, who);
        }
    }
    if exec::is_subgroup(inst.op) {
        exec::subgroup::exec(env, lanes, executing, shared, global, active_mask, inst)?;
        for &i in executing {
            lanes[i].top_mut().pc += 1;
        }
        return Ok(true);
    }
    for &i in executing {
        let mut ctx = LaneCtx::new(env, &mut lanes[i], shared, global, active_mask, inst.span);
        let effect = exec::exec(&mut ctx, inst)?;
        apply(env, &mut lanes[i], effect, inst.span, shared, global)?;
    }
    Ok(true)
}

/// Applies an instruction's effect on a work-item's control flow.
fn apply(
    env: &Env,
    lane: &mut Lane,
    effect: Effect,
    at: Span,
    shared: &mut Vec<u8>,
    global: &mut GlobalMemory,
) -> Result<()> {
    match effect {
        Effect::Next => lane.top_mut().pc += 1,
        Effect::Jump(target) => lane.top_mut().pc = target,
        Effect::Barrier => lane.state = LaneState::AtBarrier,
        Effect::Call {
            callee,
            args,
            ret_to,
        } => {
            lane.push_frame(env, callee, ret_to, at)?;
            let func = &env.prepared.module.functions[callee.0 as usize];
            let layout = &env.prepared.funcs[callee.0 as usize];
            let frame = lane.top_mut();
            for (p, bytes) in func.reg_params.iter().zip(&args) {
                let off = layout.reg_offset[p.0 as usize];
                frame.regs[off..off + bytes.len()].copy_from_slice(bytes);
                // The initialization checker: a parameter is written by the call.
                if !frame.init.is_empty() {
                    frame.init[off..off + bytes.len()].fill(true);
                }
            }
        }
        Effect::Return(value) => {
            let Some(callee) = lane.pop_frame() else {
                return Ok(());
            };
            if lane.frames.is_empty() {
                lane.state = LaneState::Done;
                return Ok(());
            }
            if let (Some(dst), Some(bytes)) = (callee.ret_to, value) {
                // The caller is the running frame again: write its `retval`.
                LaneCtx::new(env, lane, shared, global, 0, at).write_bytes(&dst, &bytes)?;
            }
            lane.top_mut().pc += 1;
        }
    }
    Ok(())
}
