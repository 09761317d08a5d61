//! Virtual lanes (spec-notes §88): PISA's sub-groups of N lanes on hardware sub-groups of
//! H < N lanes, and partial sub-groups for any work-group size.
//!
//! A function lowered on virtual lanes runs K = N/H PISA work-items in each invocation
//! (K = 1 when the widths agree): lane `l` of hardware lane `hw` of hardware sub-group `s` is
//! the work-item of linear local id `s·N + hw·K + l`, so one hardware sub-group carries one
//! whole PISA sub-group. Every register, the dispatch and junction variables of the CFG and
//! the private arena exist once per lane ([`FnCx::lane`] selects them); special registers
//! are computed per lane.
//!
//! Control flow is the structurizer's ([`crate::mid::structurize`]) under a lane mask `cur`
//! (bit `l` for lane `l`), and it is *sub-group-uniform*: a branch arm runs when some lane of
//! the hardware sub-group takes it (`OpGroupNonUniformAny`), a loop repeats while some lane
//! continues, and a jump only moves lanes between masks (`break` to the pending mask of its
//! label, `continue` to its loop's, `return` retires them). Straight-line code runs once per
//! active lane, each lane's instructions in program order inside `if cur & (1 << l)`: a load
//! that could fault, a store, an atomic happen for active lanes only. Cross-lane
//! instructions, calls and `barrier.workgroup` run once for all lanes, outside those guards,
//! so every invocation of the sub-group executes the SPIR-V group operations together:
//! no reconvergence is asked of the device. This is the reconvergence of the native path
//! (the structured constructs' merges), so `%activemask` agrees with it and with the
//! reference interpreter on structured programs.
//!
//! Calls: a function reached from a kernel on virtual lanes gets a second SPIR-V function
//! (`name.lanes`) that takes the callers' lane mask, then each parameter once per lane, and
//! returns an array of K values; a call through a function address calls each candidate
//! in turn with the lanes whose address names it (in function order, as the reference
//! orders frames).
//!
//! Must not: decide instruction semantics (the `ops_*` modules do, per lane).

use super::builder::Builder;
use super::function::{bug, CfgVar, EResult, FnCx};
use super::module::Scalar;
use crate::ir::{AtomOp, Bits, FuncId, Inst, Opcode, Operand, RegId, RegType, SpecialReg};
use crate::mid::cfg::{BlockId, Cfg, Code};
use crate::mid::structurize::Event;
use rspirv::spirv::{self, BuiltIn, Capability, Word};
use rustc_hash::FxHashMap;

/// Most SPIR-V constructs the lowering on virtual lanes keeps open at once (as
/// `function::MAX_NESTING`, with room for the per-lane guards and the instructions' own).
const MAX_NESTING: usize = 900;

/// The state of a function being lowered on virtual lanes.
pub(crate) struct Lanes {
    /// Lanes per invocation (K).
    pub k: u32,
    /// `Function u32`: the mask of this invocation's lanes that execute here.
    pub cur: Word,
    /// `Function u32` masks of the lanes waiting at the end of a labelled block (`false`) or
    /// at the continue of a loop (`true`), by block.
    waiting: FxHashMap<(bool, BlockId), Word>,
    /// `Function` array of K return values, for a function that returns one.
    ret: Option<Word>,
    /// `%activemask` of the code being lowered, computed before its per-lane guards.
    pub active: Option<Word>,
}

/// An open construct of the lowering.
enum Open {
    /// A branch arm: its merge block and the mask of the lanes that did not take it.
    Arm { merge: Word, others: Word },
    /// A loop: header, continue and merge blocks.
    Loop {
        header: Word,
        cont: Word,
        merge: Word,
    },
    /// A labelled block (no SPIR-V construct).
    Block,
}

/// Whether `inst` runs once for all lanes of an invocation rather than once per lane.
fn for_all_lanes(inst: &Inst) -> bool {
    matches!(
        inst.op,
        Opcode::Shfl | Opcode::Ired | Opcode::Fred | Opcode::Redfirstidx | Opcode::Barrier
    ) || inst.op == Opcode::Call
}

/// The registers and predicates `inst` writes.
fn writes(inst: &Inst) -> impl Iterator<Item = RegId> + '_ {
    let rules = crate::isa::def(inst.op).form(inst.form).operands;
    inst.ops
        .iter()
        .enumerate()
        .filter_map(move |(k, op)| match *op {
            Operand::Reg { reg, .. } | Operand::Pred { reg, .. }
                if rules.get(k).is_some_and(|r| r.write) =>
            {
                Some(reg)
            }
            _ => None,
        })
}

/// Whether `inst` only computes registers from registers, immediates and special registers
/// (no memory, call, cross-lane operation or barrier) and writes only scalar registers and
/// predicates: then running it for an inactive lane and putting its registers back is the
/// same as not running it.
fn register_only(f: &crate::ir::Function, inst: &Inst) -> bool {
    use Opcode::*;
    let opaque = matches!(
        inst.op,
        Ld | St | Iatom | Fatom | Call | Shfl | Ired | Fred | Redfirstidx | Barrier | Fence
    );
    !opaque
        && !inst
            .ops
            .iter()
            .any(|o| matches!(o, Operand::Addr(_) | Operand::Var(_)))
        && writes(inst).all(|r| {
            matches!(
                f.regs[r.0 as usize].ty,
                RegType::Pred | RegType::Scalar(Bits::B8 | Bits::B16 | Bits::B32 | Bits::B64)
            )
        })
}

/// Whether `inst` reads `%activemask`.
fn reads_active_mask(inst: &Inst) -> bool {
    inst.ops.iter().any(|o| {
        matches!(
            o,
            Operand::Special {
                reg: SpecialReg::ActiveMask,
                ..
            }
        )
    })
}

impl FnCx<'_> {
    /// K when the function is lowered on virtual lanes.
    pub(super) fn virtual_k(&self) -> Option<u32> {
        self.vl.as_ref().map(|v| v.k)
    }

    /// The lanes of one invocation: K on virtual lanes, else 1.
    pub(super) fn lane_count(&self) -> u32 {
        self.virtual_k().unwrap_or(1)
    }

    /// Runs `f` once per lane of the invocation with [`FnCx::lane`] set to it.
    pub(super) fn each_lane<T>(
        &mut self,
        mut f: impl FnMut(&mut Self) -> EResult<T>,
    ) -> EResult<Vec<T>> {
        let n = self.lane_count();
        let mut out = Vec::with_capacity(n as usize);
        for l in 0..n {
            self.lane = l;
            let r = f(self);
            self.lane = 0;
            out.push(r?);
        }
        Ok(out)
    }

    /// `value` for an active lane, the current `dst` for an inactive one (virtual lanes; a
    /// lane that does not execute keeps its registers).
    pub(super) fn keep_if_inactive(&mut self, dst: &Operand, value: Word) -> EResult<Word> {
        if self.vl.is_none() {
            return Ok(value);
        }
        let old = self.read_uint(dst, 32)?;
        let active = self.lane_active(self.lane)?;
        self.sel(32, active, value, old)
    }

    /// Whether lane `l` is in `cur`.
    fn lane_active(&mut self, l: u32) -> EResult<Word> {
        let cur = self.load_cur()?;
        self.bit_set(cur, l)
    }

    /// `(mask >> l) & 1 != 0`.
    fn bit_set(&mut self, mask: Word, l: u32) -> EResult<Word> {
        let bit = self.and_const(mask, 1 << l)?;
        let zero = self.m.const_u32(0);
        let bt = self.m.ty(Scalar::Bool);
        self.m.b.i_not_equal(bt, None, bit, zero).map_err(bug)
    }

    /// `x * k` on u32.
    pub(super) fn mul_const(&mut self, x: Word, k: u32) -> EResult<Word> {
        let k = self.m.const_u32(k);
        self.u32_op(Builder::i_mul, x, k)
    }

    fn cur_var(&self) -> EResult<Word> {
        self.vl
            .as_ref()
            .map(|v| v.cur)
            .ok_or_else(|| self.err("internal error: no lane mask outside virtual lanes"))
    }

    fn load_cur(&mut self) -> EResult<Word> {
        let v = self.cur_var()?;
        let u32t = self.m.uint(32);
        self.m.b.load(u32t, None, v, None, []).map_err(bug)
    }

    fn store_cur(&mut self, value: Word) -> EResult {
        let v = self.cur_var()?;
        self.m.b.store(v, value, None, []).map_err(bug)
    }

    /// The mask of lanes waiting at the end of labelled block `block` (`is_loop` false) or
    /// at the continue of the loop it heads.
    fn waiting(&mut self, is_loop: bool, block: BlockId) -> EResult<Word> {
        if let Some(&v) = self
            .vl
            .as_ref()
            .and_then(|v| v.waiting.get(&(is_loop, block)))
        {
            return Ok(v);
        }
        let u32t = self.m.uint(32);
        let v = self.local_var(u32t)?;
        if let Some(vl) = self.vl.as_mut() {
            vl.waiting.insert((is_loop, block), v);
        }
        Ok(v)
    }

    /// Whether some lane of the hardware sub-group is in its invocation's `mask`.
    fn any_lane(&mut self, mask: Word) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniformVote);
        let bt = self.m.ty(Scalar::Bool);
        let zero = self.m.const_u32(0);
        let some = self.m.b.i_not_equal(bt, None, mask, zero).map_err(bug)?;
        let scope = self.scope();
        self.m
            .b
            .group_non_uniform_any(bt, None, scope, some)
            .map_err(bug)
    }

    /// The mask of lanes whose `pred(lane)` holds, among `within`.
    fn lanes_where(
        &mut self,
        within: Word,
        mut pred: impl FnMut(&mut Self) -> EResult<Word>,
    ) -> EResult<Word> {
        let bits = self.each_lane(|cx| {
            let p = pred(cx)?;
            let bit = cx.m.const_u32(1 << cx.lane);
            let zero = cx.m.const_u32(0);
            cx.sel(32, p, bit, zero)
        })?;
        let mut mask = self.m.const_u32(0);
        for b in bits {
            mask = self.u32_op(Builder::bitwise_or, mask, b)?;
        }
        self.and32(within, mask)
    }

    /// The work-item's linear local id for lane `l`: `SubgroupId·N + hw·K + l`.
    pub(super) fn virtual_linear_id(&mut self) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniform);
        let var = self.m.builtin(BuiltIn::SubgroupId, false);
        let u32t = self.m.uint(32);
        let sg = self.m.b.load(u32t, None, var, None, []).map_err(bug)?;
        let base = self.mul_const(sg, self.subgroups.width)?;
        let lane = self.pisa_lane()?;
        self.u32_op(Builder::i_add, base, lane)
    }

    /// `%localid` component `c` of the lane being emitted, from its linear id over
    /// `%localsize` (x fastest).
    pub(super) fn virtual_local_id(&mut self, c: u8) -> EResult<Word> {
        let id = self.virtual_linear_id()?;
        let [x, y, _] = self.m.local_size;
        match c {
            0 => self.u32_op(Builder::u_mod, id, x),
            1 => {
                let row = self.u32_op(Builder::u_div, id, x)?;
                self.u32_op(Builder::u_mod, row, y)
            }
            _ => {
                let plane = self.u32_op(Builder::i_mul, x, y)?;
                self.u32_op(Builder::u_div, id, plane)
            }
        }
    }

    /// A ballot on virtual lanes: each invocation's K bits of `preds` (for active lanes)
    /// shifted to its lanes `hw·K ..`, OR-ed over the hardware sub-group.
    pub(super) fn ballot_on_lanes(&mut self, preds: &[Word]) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniformArithmetic);
        let cur = self.load_cur()?;
        let mine = self.lanes_where(cur, |cx| Ok(preds[cx.lane as usize]))?;
        let hw = self.hardware_lane()?;
        let shift = self.mul_const(hw, self.lane_count())?;
        let placed = self.u32_op(Builder::shift_left_logical, mine, shift)?;
        self.reduce_hw(AtomOp::Or, placed)
    }

    /// Each lane's value of `values` from PISA lane `from[l]`: slot `from % K` of hardware
    /// lane `from / K`. When lane `l` wants the same slot in every invocation of the
    /// sub-group (shifts, rotations, a broadcast: `OpGroupNonUniformAllEqual`), each
    /// invocation picks that slot of its own values and one shuffle moves it; otherwise K
    /// shuffles, one per slot, and a select.
    pub(super) fn shuffle_on_lanes(
        &mut self,
        values: &[Word],
        from: &[Word],
    ) -> EResult<Vec<Word>> {
        self.m.capability(Capability::GroupNonUniformVote);
        let k = self.lane_count();
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let scope = self.scope();
        let mut out = Vec::with_capacity(from.len());
        for &src in from {
            let kc = self.m.const_u32(k);
            let hw = self.u32_op(Builder::u_div, src, kc)?;
            let slot = self.u32_op(Builder::u_mod, src, kc)?;
            // `vals[slot]`, by selects.
            let pick = |cx: &mut Self, vals: &[Word]| -> EResult<Word> {
                let mut got = vals[0];
                for (j, &v) in vals.iter().enumerate().skip(1) {
                    let jc = cx.m.const_u32(j as u32);
                    let is = cx.m.b.i_equal(bt, None, slot, jc).map_err(bug)?;
                    got = cx.sel(32, is, v, got)?;
                }
                Ok(got)
            };
            let same = self
                .m
                .b
                .group_non_uniform_all_equal(bt, None, scope, slot)
                .map_err(bug)?;
            let var = self.local_var(u32t)?;
            self.if_else(
                same,
                |cx| {
                    let mine = pick(cx, values)?;
                    let v = cx.shuffle_hw(mine, hw)?;
                    cx.m.b.store(var, v, None, []).map_err(bug)
                },
                |cx| {
                    let mut there = Vec::with_capacity(values.len());
                    for &v in values {
                        there.push(cx.shuffle_hw(v, hw)?);
                    }
                    let v = pick(cx, &there)?;
                    cx.m.b.store(var, v, None, []).map_err(bug)
                },
            )?;
            out.push(self.m.b.load(u32t, None, var, None, []).map_err(bug)?);
        }
        Ok(out)
    }

    /// `x op y` on u32, for folding the lanes of an invocation before a sub-group reduction.
    pub(super) fn fold_lanes(&mut self, op: AtomOp, x: Word, y: Word) -> EResult<Word> {
        let glsl = |cx: &mut Self, n: u32| {
            let u32t = cx.m.uint(32);
            let set = cx.m.glsl;
            cx.m.b
                .ext_inst(
                    u32t,
                    None,
                    set,
                    n,
                    [rspirv::dr::Operand::IdRef(x), rspirv::dr::Operand::IdRef(y)],
                )
                .map_err(bug)
        };
        match op {
            AtomOp::Sum => self.u32_op(Builder::i_add, x, y),
            AtomOp::Umin => glsl(self, 38),
            AtomOp::Smin => glsl(self, 39),
            AtomOp::Umax | AtomOp::Absmax => glsl(self, 41),
            AtomOp::Smax => glsl(self, 42),
            AtomOp::And => self.u32_op(Builder::bitwise_and, x, y),
            AtomOp::Or => self.u32_op(Builder::bitwise_or, x, y),
            AtomOp::Xor => self.u32_op(Builder::bitwise_xor, x, y),
            _ => Err(self.err(format!("no sub-group reduction for .{op:?}"))),
        }
    }

    /// Emits the body of the function on virtual lanes ([`FnCx::emit`] has declared its
    /// registers and parameters): `mask` is the callers' lane mask (a kernel starts with the
    /// lanes whose work-item exists). Ends the function.
    pub(super) fn emit_on_lanes(
        &mut self,
        cfg: &Cfg,
        events: &[Event],
        mask: Option<Word>,
    ) -> EResult {
        self.m.capability(Capability::GroupNonUniform);
        let u32t = self.m.uint(32);
        let cur = self.local_var(u32t)?;
        let k = self.subgroups.virtual_lanes;
        let ret = match (self.f.ret, self.f.is_kernel()) {
            (Some(ty), false) => {
                let t = self.type_of(ty);
                let arr = self.m.array(t, k);
                Some(self.local_var(arr)?)
            }
            _ => None,
        };
        self.vl = Some(Lanes {
            k,
            cur,
            waiting: FxHashMap::default(),
            ret,
            active: None,
        });
        let start = match mask {
            Some(m) => m,
            None => self.existing_lanes()?,
        };
        self.store_cur(start)?;
        if self.f.is_kernel() {
            self.kernel_prologue()?;
        }
        self.lower_on_lanes(cfg, events)?;
        match (self.f.is_kernel(), ret) {
            (true, _) => self.emit_return(None)?,
            (false, Some(r)) => {
                let t = self.sigs_ret_ty();
                let v = self.m.b.load(t, None, r, None, []).map_err(bug)?;
                self.m.b.ret_value(v).map_err(bug)?;
            }
            (false, None) => self.m.b.ret().map_err(bug)?,
        }
        self.m.b.end_function().map_err(bug)?;
        Ok(())
    }

    /// The return type of this function's virtual-lane signature.
    fn sigs_ret_ty(&self) -> Word {
        self.vsigs.get(self.fid.0 as usize).map_or(0, |s| s.ret_ty)
    }

    /// A kernel's first mask: the lanes whose linear local id is inside the work-group (the
    /// last PISA sub-group of a work-group may be partial).
    fn existing_lanes(&mut self) -> EResult<Word> {
        let [x, y, z] = self.m.local_size;
        let xy = self.u32_op(Builder::i_mul, x, y)?;
        let count = self.u32_op(Builder::i_mul, xy, z)?;
        let all = self.m.const_u32(u32::MAX);
        let bt = self.m.ty(Scalar::Bool);
        self.lanes_where(all, |cx| {
            let id = cx.virtual_linear_id()?;
            cx.m.b.u_less_than(bt, None, id, count).map_err(bug)
        })
    }

    /// Lowers the structured program under the lane mask (see the module documentation).
    fn lower_on_lanes(&mut self, cfg: &Cfg, events: &[Event]) -> EResult {
        let mut open: Vec<Open> = Vec::new();
        let mut live = true;
        let mut skipped = 0usize;
        // Events up to this index were lowered together with an earlier one.
        let mut consumed = 0usize;
        for (i, &ev) in events.iter().enumerate() {
            if i < consumed {
                continue;
            }
            if !live {
                match ev {
                    Event::BeginBlock(_) | Event::BeginLoop { .. } | Event::BeginIf { .. } => {
                        skipped += 1;
                        continue;
                    }
                    Event::EndBlock(_) | Event::EndLoop { .. } | Event::EndIf if skipped > 0 => {
                        skipped -= 1;
                        continue;
                    }
                    Event::Code(_) | Event::Break(_) | Event::Continue(_) | Event::Return(_) => {
                        continue
                    }
                    _ => {}
                }
            }
            if open.len() > MAX_NESTING {
                return Err(self.err(format!(
                    "control flow nested more than {MAX_NESTING} constructs deep on virtual \
                     lanes"
                )));
            }
            match ev {
                Event::Code(b) => self.code_on_lanes(cfg, b)?,
                Event::BeginBlock(label) => {
                    let w = self.waiting(false, label)?;
                    let zero = self.m.const_u32(0);
                    self.m.b.store(w, zero, None, []).map_err(bug)?;
                    open.push(Open::Block);
                }
                Event::EndBlock(label) => {
                    open.pop();
                    self.rejoin(false, label)?;
                    live = true;
                }
                Event::BeginLoop { header, exit } => {
                    if let Some(x) = exit {
                        let w = self.waiting(false, x)?;
                        let zero = self.m.const_u32(0);
                        self.m.b.store(w, zero, None, []).map_err(bug)?;
                    }
                    let [h, body, cont, merge] = [(); 4].map(|_| self.m.b.id());
                    self.m.b.branch(h).map_err(bug)?;
                    self.begin(h)?;
                    self.m
                        .b
                        .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
                        .map_err(bug)?;
                    self.m.b.branch(body).map_err(bug)?;
                    self.begin(body)?;
                    let w = self.waiting(true, header)?;
                    let zero = self.m.const_u32(0);
                    self.m.b.store(w, zero, None, []).map_err(bug)?;
                    open.push(Open::Loop {
                        header: h,
                        cont,
                        merge,
                    });
                }
                Event::EndLoop { header, exit } => {
                    let Some(Open::Loop {
                        header: h,
                        cont,
                        merge,
                    }) = open.pop()
                    else {
                        return Err(self.err("internal error: unbalanced loop on virtual lanes"));
                    };
                    if live {
                        // Falling off the end of the body continues the loop.
                        self.jump_lanes(true, header)?;
                    }
                    self.m.b.branch(cont).map_err(bug)?;
                    self.begin(cont)?;
                    let w = self.waiting(true, header)?;
                    let u32t = self.m.uint(32);
                    let again = self.m.b.load(u32t, None, w, None, []).map_err(bug)?;
                    self.store_cur(again)?;
                    let any = self.any_lane(again)?;
                    self.m
                        .b
                        .branch_conditional(any, h, merge, [])
                        .map_err(bug)?;
                    self.begin(merge)?;
                    if let Some(x) = exit {
                        self.rejoin(false, x)?;
                    }
                    live = true;
                }
                Event::BeginIf { cond, negate } => {
                    let cur = self.load_cur()?;
                    let taken = self.lanes_where(cur, |cx| {
                        let c = cx.cond_value(cond)?;
                        if negate {
                            let bt = cx.m.ty(Scalar::Bool);
                            cx.m.b.logical_not(bt, None, c).map_err(bug)
                        } else {
                            Ok(c)
                        }
                    })?;
                    let u32t = self.m.uint(32);
                    let not_taken = self.m.b.not(u32t, None, taken).map_err(bug)?;
                    let others = self.and32(cur, not_taken)?;
                    // An arm that is one jump (`goto.cond`, a loop's bottom test) only moves
                    // the lanes that take it: no construct, no vote.
                    let jump = match events.get(i + 1..i + 3) {
                        Some([Event::Continue(h), Event::EndIf]) => Some((true, *h)),
                        Some([Event::Break(l), Event::EndIf]) => Some((false, *l)),
                        _ => None,
                    };
                    if let Some((is_loop, target)) = jump {
                        self.store_cur(taken)?;
                        self.jump_lanes(is_loop, target)?;
                        self.store_cur(others)?;
                        consumed = i + 3;
                        continue;
                    }
                    let any = self.any_lane(taken)?;
                    let (arm, merge) = (self.m.b.id(), self.m.b.id());
                    self.m
                        .b
                        .selection_merge(merge, spirv::SelectionControl::NONE)
                        .map_err(bug)?;
                    self.m
                        .b
                        .branch_conditional(any, arm, merge, [])
                        .map_err(bug)?;
                    self.begin(arm)?;
                    self.store_cur(taken)?;
                    open.push(Open::Arm { merge, others });
                }
                Event::EndIf => {
                    let Some(Open::Arm { merge, others }) = open.pop() else {
                        return Err(self.err("internal error: unbalanced branch on virtual lanes"));
                    };
                    self.m.b.branch(merge).map_err(bug)?;
                    self.begin(merge)?;
                    // Lanes that fell through the arm (none when it ended in a jump) and lanes
                    // that did not take it; when no lane took it, `cur` is already `others`.
                    let cur = self.load_cur()?;
                    let both = self.u32_op(Builder::bitwise_or, cur, others)?;
                    self.store_cur(both)?;
                    live = true;
                }
                Event::Break(label) => {
                    self.jump_lanes(false, label)?;
                    live = false;
                }
                Event::Continue(header) => {
                    self.jump_lanes(true, header)?;
                    live = false;
                }
                Event::Return(v) => {
                    self.return_lanes(v)?;
                    live = false;
                }
            }
        }
        if !open.is_empty() || skipped > 0 {
            return Err(
                self.err("internal error: unbalanced structured control flow on virtual lanes")
            );
        }
        Ok(())
    }

    /// The lanes in `cur` jump: they wait at the end of the labelled block `block` or at the
    /// continue of the loop it heads; `cur` becomes empty.
    fn jump_lanes(&mut self, is_loop: bool, block: BlockId) -> EResult {
        let w = self.waiting(is_loop, block)?;
        let u32t = self.m.uint(32);
        let before = self.m.b.load(u32t, None, w, None, []).map_err(bug)?;
        let cur = self.load_cur()?;
        let now = self.u32_op(Builder::bitwise_or, before, cur)?;
        self.m.b.store(w, now, None, []).map_err(bug)?;
        let zero = self.m.const_u32(0);
        self.store_cur(zero)
    }

    /// The lanes waiting at the end of the labelled block `block` join `cur`.
    fn rejoin(&mut self, is_loop: bool, block: BlockId) -> EResult {
        let w = self.waiting(is_loop, block)?;
        let u32t = self.m.uint(32);
        let waiting = self.m.b.load(u32t, None, w, None, []).map_err(bug)?;
        let cur = self.load_cur()?;
        let now = self.u32_op(Builder::bitwise_or, cur, waiting)?;
        self.store_cur(now)
    }

    /// `return`: each lane in `cur` records its value (in a function that returns one) and
    /// retires.
    fn return_lanes(&mut self, value: Option<Operand>) -> EResult {
        let ret = self.vl.as_ref().and_then(|v| v.ret);
        if let (Some(v), Some(arr), Some(ty)) = (value, ret, self.f.ret) {
            let cur = self.load_cur()?;
            let t = self.type_of(ty);
            let p = self.m.ptr(spirv::StorageClass::Function, t);
            for l in 0..self.lane_count() {
                let active = self.bit_set(cur, l)?;
                self.if_then(active, |cx| {
                    cx.lane = l;
                    let val = cx.read_as_type(&v, ty);
                    cx.lane = 0;
                    let idx = cx.m.const_u32(l);
                    let slot = cx.m.b.access_chain(p, None, arr, [idx]).map_err(bug)?;
                    cx.m.b.store(slot, val?, None, []).map_err(bug)
                })?;
            }
        }
        let zero = self.m.const_u32(0);
        self.store_cur(zero)
    }

    /// The straight-line code of a block: runs of per-lane instructions once per active lane,
    /// the others once for all lanes.
    fn code_on_lanes(&mut self, cfg: &Cfg, b: BlockId) -> EResult {
        let cur = self.load_cur()?;
        let insts = match cfg.blocks[b].code {
            Code::Insts(ref r) => {
                let f = self.f;
                match f.body.as_deref().and_then(|body| body.get(r.clone())) {
                    Some(insts) => insts,
                    None => return Err(self.err("internal error: block outside the function body")),
                }
            }
            Code::SetDispatch(value) | Code::SetJunction(value) => {
                let which = match cfg.blocks[b].code {
                    Code::SetDispatch(_) => CfgVar::Dispatch,
                    _ => CfgVar::Junction,
                };
                let k = self.m.const_u32(value);
                let u32t = self.m.uint(32);
                self.each_lane(|cx| {
                    let var = cx.cfg_var(which)?;
                    let old = cx.m.b.load(u32t, None, var, None, []).map_err(bug)?;
                    let active = cx.bit_set(cur, cx.lane)?;
                    let v = cx.sel(32, active, k, old)?;
                    cx.m.b.store(var, v, None, []).map_err(bug)
                })?;
                return Ok(());
            }
        };
        // `%activemask` does not change inside a block: one ballot, before any guard.
        let needs_active = insts
            .iter()
            .any(|i| reads_active_mask(i) || crate::mid::lanes::cross_lane(i));
        if let Some(vl) = self.vl.as_mut() {
            vl.active = None;
        }
        if needs_active {
            let a = self.active_mask()?;
            if let Some(vl) = self.vl.as_mut() {
                vl.active = Some(a);
            }
        }
        let mut run = 0;
        for (i, inst) in insts.iter().enumerate() {
            if for_all_lanes(inst) {
                self.run_per_lane(cur, &insts[run..i])?;
                if inst.op == Opcode::Call {
                    self.call_on_lanes(cur, inst).map_err(|mut d| {
                        if d.span == crate::span::Span::default() {
                            d.span = inst.span;
                        }
                        d
                    })?;
                } else {
                    self.inst(inst)?;
                }
                run = i + 1;
            }
        }
        self.run_per_lane(cur, &insts[run..])?;
        if let Some(vl) = self.vl.as_mut() {
            vl.active = None;
        }
        Ok(())
    }

    /// `insts` once per lane in `cur`, each lane's in program order: runs of instructions
    /// that only compute registers from registers ([`register_only`]) for every lane, an
    /// inactive lane's registers then put back (a select each: no branch); the others inside
    /// a guard per lane.
    fn run_per_lane(&mut self, cur: Word, insts: &[Inst]) -> EResult {
        let mut rest = insts;
        while let Some(first) = rest.first() {
            let pure = register_only(self.f, first);
            let n = rest
                .iter()
                .position(|i| register_only(self.f, i) != pure)
                .unwrap_or(rest.len());
            let (run, after) = rest.split_at(n);
            if pure {
                self.run_unguarded(cur, run)?;
            } else {
                self.run_guarded(cur, run)?;
            }
            rest = after;
        }
        Ok(())
    }

    /// `insts` (registers from registers only) for every lane; the registers they write
    /// keep their old values in lanes not in `cur` (a select each). (A second copy for the
    /// case where every lane is active doubled the driver's compile time of float-heavy
    /// kernels, which K copies already multiply, for no gain measurable on lavapipe.)
    fn run_unguarded(&mut self, cur: Word, insts: &[Inst]) -> EResult {
        let mut written: Vec<RegId> = insts.iter().flat_map(|i| writes(i)).collect();
        written.sort_unstable_by_key(|r| r.0);
        written.dedup();
        for l in 0..self.lane_count() {
            self.lane = l;
            let r = (|| {
                let mut saved = Vec::with_capacity(written.len());
                for &r in &written {
                    let (t, v) = (self.reg_type(r), self.reg_var(r));
                    saved.push(self.m.b.load(t, None, v, None, []).map_err(bug)?);
                }
                insts.iter().try_for_each(|inst| self.inst(inst))?;
                let active = self.bit_set(cur, l)?;
                for (&r, old) in written.iter().zip(saved) {
                    let (t, v) = (self.reg_type(r), self.reg_var(r));
                    let now = self.m.b.load(t, None, v, None, []).map_err(bug)?;
                    let keep = self.m.b.select(t, None, active, now, old).map_err(bug)?;
                    self.m.b.store(v, keep, None, []).map_err(bug)?;
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
                for f in self.indirect_candidates(ret, args) {
                    let addr = self.m.const_uint(64, crate::layout::function_address(f));
                    let mask = self.lanes_where(callers, |cx| {
                        let t = targets[cx.lane as usize];
                        cx.m.b.i_equal(bt, None, t, addr).map_err(bug)
                    })?;
                    self.call_lanes(f, mask, ret, args)?;
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
            let r = cx.m.b.function_call(ret_ty, None, id, vals).map_err(bug)?;
            if let (Operand::Reg { reg, .. }, Some(ty)) = (ret, callee.ret) {
                let t = cx.type_of(ty);
                for l in 0..cx.lane_count() {
                    let v = cx.m.b.composite_extract(t, None, r, [l]).map_err(bug)?;
                    let called = cx.bit_set(mask, l)?;
                    cx.if_then(called, |cx| {
                        cx.lane = l;
                        let var = cx.reg_var(reg);
                        cx.lane = 0;
                        cx.m.b.store(var, v, None, []).map_err(bug)
                    })?;
                }
            }
            Ok(())
        })
    }

    /// The private arena word `word` of the lane being emitted (lane `l` owns the `l`-th
    /// copy of the arena).
    pub(super) fn private_word(&mut self, word: Word) -> EResult<Word> {
        match (self.vl.is_some(), self.m.virtual_lanes) {
            (true, Some(v)) if self.lane > 0 => {
                let off = self.m.const_u32(self.lane * v.private_lane_words);
                self.u32_op(Builder::i_add, word, off)
            }
            _ => Ok(word),
        }
    }
}
