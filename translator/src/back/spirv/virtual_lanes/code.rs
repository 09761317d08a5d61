//! Straight-line code on virtual lanes: runs of per-lane instructions (register-only runs
//! for every lane with inactive lanes' registers put back, the others inside a guard per
//! lane) and the instructions that run once for all lanes (cross-lane operations, calls,
//! `barrier.workgroup`); calls of the `.lanes` functions, direct and through addresses.

use super::super::function::{CfgVar, FnCx};
use super::super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::{FuncId, Inst, Opcode, Operand, RegId, SpecialReg};
use crate::mid::cfg::{BlockId, Cfg, Code};
use crate::mid::uniformity::{pure, writes};
use rspirv::spirv::Word;

/// Whether `inst` runs once for all lanes of an invocation rather than once per lane.
fn for_all_lanes(inst: &Inst) -> bool {
    matches!(
        inst.op,
        Opcode::Shfl | Opcode::Ired | Opcode::Fred | Opcode::Redfirstidx | Opcode::Barrier
    ) || inst.op == Opcode::Call
}

/// Whether `inst` reads `%activemask` or is a cross-lane instruction (which reads it).
pub(super) fn needs_active(inst: &Inst) -> bool {
    crate::mid::lanes::cross_lane(inst)
        || inst.ops.iter().any(|o| {
            matches!(
                o,
                Operand::Special {
                    reg: SpecialReg::ActiveMask,
                    ..
                }
            )
        })
}

impl<'a> FnCx<'a> {
    /// The straight-line code of a block: runs of per-lane instructions once per active lane,
    /// the others once for all lanes.
    pub(super) fn code_on_lanes(&mut self, cfg: &Cfg, b: BlockId) -> EResult {
        self.begin_block_runs(b)?;
        let together = self.vl.as_ref().is_some_and(|v| v.uni.together(b));
        let may_empty = self.vl.as_ref().is_some_and(|v| v.may_empty.contains(&b));
        // A block every live lane runs together is run by all of them or, after an exit
        // every lane took (a uniform `return`, `break` or `continue` before it, whose target
        // is after it), by none: the lowering still passes through it then, with no lane in
        // any mask, and must not run its code (its uniform and unguarded runs write
        // registers for every lane, and it would start from the function's first mask).
        // Whether any lane is here is the same in the whole work-group; the sub-group's vote
        // sees it (each hardware sub-group holds a live lane whenever one runs the block:
        // lanes retire only together unless some return diverges, and then a sub-group
        // whose lanes all retired skips the block as they would). Barriers run either way.
        // A block every live lane runs together starts from the function's first mask when
        // that is known to be its mask (`Lanes::entry`).
        let entry = self
            .vl
            .as_ref()
            .filter(|v| v.uni.together(b))
            .and_then(|v| v.entry.map(|e| (e, v.entry_active)));
        let guarded = together && may_empty;
        let loaded = match guarded || entry.is_none() {
            true => Some(self.load_cur()?),
            false => None,
        };
        let live = match (guarded, loaded) {
            (true, Some(c)) => Some(self.any_lane(c)?),
            _ => None,
        };
        let cur = match entry {
            Some((e, _)) => {
                // Where no lane is here, the mask stays empty for the code after the block.
                let now = match (live, loaded) {
                    (Some(l), Some(c)) => {
                        let u32t = self.m.uint(32);
                        self.m.b.select(u32t, None, l, e, c)
                    }
                    _ => e,
                };
                self.store_cur(now)?;
                e
            }
            None => match loaded {
                Some(c) => c,
                None => self.load_cur()?,
            },
        };
        // One guard around the whole block, unless a barrier must run outside it.
        let barrier = self
            .block_insts(cfg, b)?
            .is_some_and(|insts| insts.iter().any(|i| i.op == Opcode::Barrier));
        match (live, barrier) {
            (Some(l), false) => self.if_then(l, |cx| cx.block_code(cfg, b, cur, entry, None)),
            _ => self.block_code(cfg, b, cur, entry, live),
        }
    }

    /// The instructions of block `b` (`None` for a block that sets a CFG variable).
    fn block_insts(&self, cfg: &Cfg, b: BlockId) -> EResult<Option<&'a [Inst]>> {
        let Code::Insts(ref r) = cfg.blocks[b].code else {
            return Ok(None);
        };
        let f = self.f;
        match f.body.as_deref().and_then(|body| body.get(r.clone())) {
            Some(insts) => Ok(Some(insts)),
            None => Err(self.err("internal error: block outside the function body")),
        }
    }

    /// `f` where some lane runs the block (`live`), or unconditionally without `live`.
    fn where_live(&mut self, live: Option<Word>, f: impl FnOnce(&mut Self) -> EResult) -> EResult {
        match live {
            Some(l) => self.if_then(l, f),
            None => f(self),
        }
    }

    /// The code of block `b` with the lane mask `cur` (and the function's first mask and
    /// `%activemask` where it starts from them): everything but barriers only where `live`
    /// holds, when given.
    fn block_code(
        &mut self,
        cfg: &Cfg,
        b: BlockId,
        cur: Word,
        entry: Option<(Word, Option<Word>)>,
        live: Option<Word>,
    ) -> EResult {
        let insts = match cfg.blocks[b].code {
            Code::Insts(_) => self.block_insts(cfg, b)?.unwrap_or_default(),
            Code::SetDispatch(value) | Code::SetJunction(value) => {
                let which = match cfg.blocks[b].code {
                    Code::SetDispatch(_) => CfgVar::Dispatch,
                    _ => CfgVar::Junction,
                };
                let k = self.m.const_u32(value);
                let u32t = self.m.uint(32);
                return self.where_live(live, |cx| {
                    cx.each_lane(|cx| {
                        let var = cx.cfg_var(which)?;
                        let old = cx.m.b.load(u32t, None, var, None, []);
                        let active = cx.bit_set(cur, cx.lane)?;
                        let v = cx.sel(32, active, k, old)?;
                        Ok(cx.m.b.store(var, v, None, []))
                    })?;
                    Ok(())
                });
            }
        };
        // `%activemask` does not change inside a block: one ballot, before any guard (or
        // the function's first one, in a block run together).
        let needs_active = insts.iter().any(needs_active);
        if let Some(vl) = self.vl.as_mut() {
            vl.active = None;
        }
        if needs_active {
            let a = match entry {
                Some((_, Some(a))) => a,
                _ => self.active_mask()?,
            };
            if let Some(vl) = self.vl.as_mut() {
                vl.active = Some(a);
            }
        }
        let mut run = 0;
        for (i, inst) in insts.iter().enumerate() {
            if for_all_lanes(inst) {
                self.where_live(live, |cx| cx.run_per_lane(cur, b, &insts[run..i]))?;
                if inst.op == Opcode::Call {
                    self.where_live(live, |cx| {
                        cx.call_on_lanes(cur, inst).map_err(|mut d| {
                            if d.span == crate::span::Span::default() {
                                d.span = inst.span;
                            }
                            d
                        })
                    })?;
                } else if inst.op == Opcode::Barrier {
                    self.inst(inst)?;
                } else {
                    self.where_live(live, |cx| cx.inst(inst))?;
                }
                run = i + 1;
            }
        }
        self.where_live(live, |cx| cx.run_per_lane(cur, b, &insts[run..]))?;
        if let Some(vl) = self.vl.as_mut() {
            vl.active = None;
        }
        Ok(())
    }

    /// `insts` once per lane in `cur`, each lane's in program order: runs of uniform
    /// instructions ([`crate::mid::uniformity`]) once for all lanes; runs of instructions
    /// that only compute registers and cannot fault ([`pure`]) for every lane, an
    /// inactive lane's registers then put back unless every live lane runs block `b` (a
    /// select each: no branch); the others inside a guard per lane.
    fn run_per_lane(&mut self, cur: Word, b: BlockId, insts: &[Inst]) -> EResult {
        #[derive(Clone, Copy, PartialEq)]
        enum Run {
            Uniform,
            Registers,
            Guarded,
        }
        let f = self.f;
        let (uni, together) = match self.vl.as_ref() {
            Some(v) => (Some(&v.uni), v.uni.together(b)),
            None => (None, false),
        };
        let kinds: Vec<Run> = insts
            .iter()
            .map(|inst| {
                if uni.is_some_and(|u| u.uniform_inst(f, inst)) {
                    Run::Uniform
                } else if pure(f, inst) {
                    Run::Registers
                } else {
                    Run::Guarded
                }
            })
            .collect();
        let mut rest = insts;
        let mut kinds = kinds.as_slice();
        while let Some(&k) = kinds.first() {
            let n = kinds.iter().position(|&i| i != k).unwrap_or(kinds.len());
            let (run, after) = rest.split_at(n);
            kinds = &kinds[n..];
            match k {
                // Uniform instructions cannot fault and write one variable for all lanes:
                // every invocation runs them, so they agree across the sub-group.
                Run::Uniform => run.iter().try_for_each(|inst| self.inst(inst))?,
                Run::Registers => self.run_unguarded(cur, run, together)?,
                Run::Guarded => self.run_guarded(cur, run)?,
            }
            rest = after;
        }
        Ok(())
    }

    /// `insts` (registers from registers only) for every lane; unless `together` (every
    /// live lane runs this block), the registers they write keep their old values in lanes
    /// not in `cur` (a select each). (A second copy for the case where every lane is active
    /// doubled the driver's compile time of float-heavy kernels, which K copies already
    /// multiply, for no gain measurable on lavapipe.)
    fn run_unguarded(&mut self, cur: Word, insts: &[Inst], together: bool) -> EResult {
        // A register live at no block start is never read by a lane that resumes later.
        let live = self
            .vl
            .as_ref()
            .map(|v| v.live.as_slice())
            .unwrap_or_default();
        let mut written: Vec<RegId> = if together {
            Vec::new()
        } else {
            insts
                .iter()
                .flat_map(writes)
                .filter(|r| live.get(r.0 as usize).copied().unwrap_or(true))
                .collect()
        };
        written.sort_unstable_by_key(|r| r.0);
        written.dedup();
        for l in 0..self.lane_count() {
            self.lane = l;
            let r = (|| {
                let mut saved = Vec::with_capacity(written.len());
                for &r in &written {
                    let (t, v) = (self.reg_type(r), self.reg_var(r));
                    saved.push(self.m.b.load(t, None, v, None, []));
                }
                insts.iter().try_for_each(|inst| self.inst(inst))?;
                if written.is_empty() {
                    return Ok(());
                }
                let active = self.bit_set(cur, l)?;
                for (&r, old) in written.iter().zip(saved) {
                    let (t, v) = (self.reg_type(r), self.reg_var(r));
                    let now = self.m.b.load(t, None, v, None, []);
                    let keep = self.m.b.select(t, None, active, now, old);
                    self.m.b.store(v, keep, None, []);
                }
                Ok(())
            })();
            self.lane = 0;
            r?;
        }
        Ok(())
    }

    /// `insts` once per lane in `cur`, inside a guard per lane.
    fn run_guarded(&mut self, cur: Word, insts: &[Inst]) -> EResult {
        for l in 0..self.lane_count() {
            let active = self.bit_set(cur, l)?;
            self.if_then(active, |cx| {
                cx.lane = l;
                let r = insts.iter().try_for_each(|inst| cx.inst(inst));
                cx.lane = 0;
                r
            })?;
        }
        Ok(())
    }

    /// `call` on virtual lanes: the lanes in `cur` (and, for `call.cond`, whose predicate
    /// holds) call the target's virtual-lane function together; through a function
    /// address, each candidate in function order with the lanes whose address names it.
    fn call_on_lanes(&mut self, cur: Word, inst: &Inst) -> EResult {
        let first = usize::from(inst.q.cond);
        let callers = if inst.q.cond {
            self.lanes_where(cur, |cx| cx.read_pred(&inst.ops[0]))?
        } else {
            cur
        };
        let ret = inst.ops[first];
        let args = &inst.ops[first + 2..];
        match inst.ops[first + 1] {
            Operand::Func(f) => self.call_lanes(f, callers, ret, args),
            Operand::Reg { .. } => {
                let targets = self.each_lane(|cx| cx.read_uint(&inst.ops[first + 1], 64))?;
                let bt = self.m.ty(Scalar::Bool);
                // Only functions with a `.lanes` copy: those a kernel on virtual lanes may
                // reach (its address taken).
                let with_copy = self.lanes_reach;
                let u32t = self.m.uint(32);
                let mut matched = self.m.const_u32(0);
                for f in self.indirect_candidates(ret, args) {
                    if !with_copy.get(f.0 as usize).copied().unwrap_or(false) {
                        continue;
                    }
                    let addr = self.m.const_uint(64, crate::layout::function_address(f));
                    let mask = self.lanes_where(callers, |cx| {
                        let t = targets[cx.lane as usize];
                        Ok(cx.m.b.i_equal(bt, None, t, addr))
                    })?;
                    matched = self.m.b.bitwise_or(u32t, None, matched, mask);
                    self.call_lanes(f, mask, ret, args)?;
                }
                // Lanes whose address named no function: a checked translation reports
                // each (spec-notes §110).
                let Some(site) = self.bad_call_site(inst)? else {
                    return Ok(());
                };
                let none = self.m.b.not(u32t, None, matched);
                let unmatched = self.m.b.bitwise_and(u32t, None, callers, none);
                for l in 0..self.lane_count() {
                    let bad = self.bit_set(unmatched, l)?;
                    self.if_then(bad, |cx| {
                        cx.lane = l;
                        let r = cx.note_bad_call(inst, site, targets[l as usize]);
                        cx.lane = 0;
                        r
                    })?;
                }
                Ok(())
            }
            _ => Err(self.err("call target must be a function or a 64-bit register")),
        }
    }

    /// The lanes in `mask` call `f`'s virtual-lane function, when there are some in the
    /// hardware sub-group; each stores its result.
    fn call_lanes(&mut self, f: FuncId, mask: Word, ret: Operand, args: &[Operand]) -> EResult {
        let (module, vsigs) = (self.module, self.vsigs);
        let callee = &module.functions[f.0 as usize];
        if callee.body.is_none() {
            return Err(self.err(format!(
                "call of `@{}`, which has no body (an import the program was not linked with)",
                callee.name
            )));
        }
        let Some(sig) = vsigs.get(f.0 as usize) else {
            return Err(self.err("internal error: no virtual-lane function for a call"));
        };
        let (id, ret_ty) = (sig.id, sig.ret_ty);
        let any = self.any_lane(mask)?;
        self.if_then(any, |cx| {
            let mut vals = vec![mask];
            for (a, &r) in args.iter().zip(&callee.reg_params) {
                let ty = callee.regs[r.0 as usize].ty;
                vals.extend(cx.each_lane(|cx| cx.read_as_type(a, ty))?);
            }
            let r = cx.m.b.function_call(ret_ty, None, id, vals);
            if let (Operand::Reg { reg, .. }, Some(ty)) = (ret, callee.ret) {
                let t = cx.type_of(ty);
                for l in 0..cx.lane_count() {
                    let v = cx.m.b.composite_extract(t, None, r, [l]);
                    let called = cx.bit_set(mask, l)?;
                    cx.if_then(called, |cx| {
                        cx.lane = l;
                        let var = cx.reg_var(reg);
                        cx.lane = 0;
                        Ok(cx.m.b.store(var, v, None, []))
                    })?;
                }
            }
            Ok(())
        })
    }
}
