//! Virtual lanes (spec-notes §88): PISA's sub-groups of N lanes on hardware sub-groups of
//! H < N lanes, and partial sub-groups for any work-group size.
//!
//! A function lowered on virtual lanes runs K = N/H PISA work-items in each invocation
//! (K = 1 when the widths agree): lane `l` of hardware lane `hw` of hardware sub-group `s` is
//! the work-item of linear local id `s·N + hw·K + l`, so one hardware sub-group carries one
//! whole PISA sub-group. Where the hardware is wider (H > N, spec-notes §115), K = 1 and
//! hardware sub-group `s` carries the H/N PISA sub-groups from work-item `s·H`, one per
//! aligned N-lane cluster; the cross-lane primitives then work within the cluster (the
//! clustered mapping of §53), and control flow stays uniform over the whole hardware
//! sub-group. Every register, the dispatch and junction variables of the CFG and
//! the private arena exist once per lane ([`FnCx::lane`] selects them); special registers
//! are computed per lane.
//!
//! Control flow is the structurizer's ([`crate::mid::structurize`]) under a lane mask `cur`
//! (bit `l` for lane `l`), and it is *sub-group-uniform*: a branch arm runs when some lane of
//! the hardware sub-group takes it (`OpGroupNonUniformAny`), a loop repeats while some lane
//! continues, and a jump only moves lanes between masks (`break` to the pending mask of its
//! label, `continue` to its loop's, `return` retires them). Straight-line code runs once per
//! active lane, each lane's instructions in program order inside `if cur & (1 << l)`: a load
//! that could fault, a store, an atomic happen for active lanes only. A block that every
//! live lane runs together ([`crate::mid::uniformity`]) starts from the function's first mask
//! ([`Lanes::entry`]): in a kernel whose work-groups are whole sub-groups, the driver folds it
//! to every lane once it specializes the work-group size, and the guards vanish. Cross-lane
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

//!
//! Files: this one holds the lane state, the lane masks and the work-items' ids; `control`
//! lowers the structured events under the mask, `code` the straight-line code and calls,
//! `exchange` the cross-lane primitives (ballot, shuffle, fold) the isa-7 lowerings use,
//! `retire` the barriers that sub-groups whose lanes all returned keep serving.

mod code;
mod control;
mod exchange;
mod retire;

pub(crate) use retire::{declare as declare_barrier_service, BarrierService, SERVICE_BYTES};

use super::builder::Builder;
use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::{AtomOp, GlobalId, Operand, VarRef};
use crate::mid::cfg::{BlockId, Cfg, Code, Term};
use crate::mid::structurize::Event;
use crate::mid::uniformity::Uniformity;
use rspirv::spirv::{BuiltIn, Capability, Word};
use rustc_hash::FxHashMap;

/// A mask of the `n` low bits (`n` up to 32).
fn low_bits(n: u32) -> u32 {
    u32::MAX.checked_shr(32 - n.min(32)).unwrap_or(0)
}

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
    /// The function's first mask, when it is the mask of every block that every live lane
    /// runs together (no lane retires before another goes on, and no cancel word ends lanes
    /// at a back edge): such a block starts from it instead of the mask variable, so that
    /// the guards of a kernel whose sub-groups are all full fold away once the driver
    /// specializes the work-group size ([`FnCx::existing_lanes`]).
    entry: Option<Word>,
    /// `%activemask` at the function's start, with [`Lanes::entry`], when some block run
    /// together reads it: one ballot for all of them.
    entry_active: Option<Word>,
    /// By register: whether it is live at the start of some block
    /// ([`crate::mid::liveness`]), so that an inactive lane's value must be kept.
    live: Vec<bool>,
    /// Which registers are uniform and which blocks every live lane runs together
    /// ([`crate::mid::uniformity`]): uniform registers are one variable for all lanes,
    /// computed once; a branch on one needs no vote; a block run together puts back no
    /// register (its inactive lanes have retired).
    uni: Uniformity,
    /// The blocks the lowering may pass through with no lane in the mask: those whose code
    /// follows an exit (`break`, `continue`, `return`) before that exit's target (every
    /// lane may have taken it at once) ([`blocks_after_exits`]).
    may_empty: rustc_hash::FxHashSet<BlockId>,
    /// In a kernel whose finished sub-groups serve barriers ([`retire`]): the `Function u32`
    /// mask of the lanes that returned so far, and the kernel's first mask.
    returned: Option<(Word, Word)>,
}

/// The blocks whose code comes, in the structured program `events`, after an exit and
/// before the exit's target: the end of its labelled block for a `break`, the end of its
/// loop for a `continue`, the end of the function for a `return`. Elsewhere the lanes that
/// reached a construct's start all reach its code (a loop runs again only with lanes).
fn blocks_after_exits(events: &[Event]) -> rustc_hash::FxHashSet<BlockId> {
    #[derive(PartialEq)]
    enum Target {
        Block(BlockId),
        Loop(BlockId),
        Function,
    }
    let mut pending: Vec<Target> = Vec::new();
    let mut out = rustc_hash::FxHashSet::default();
    for e in events {
        match *e {
            Event::Code(b) if !pending.is_empty() => {
                out.insert(b);
            }
            Event::Break(l) => pending.push(Target::Block(l)),
            Event::Continue(h) => pending.push(Target::Loop(h)),
            Event::Return(_) => pending.push(Target::Function),
            Event::EndBlock(l) => pending.retain(|t| *t != Target::Block(l)),
            Event::EndLoop { header, exit } => pending.retain(|t| {
                *t != Target::Loop(header) && exit.is_none_or(|x| *t != Target::Block(x))
            }),
            _ => {}
        }
    }
    out
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

    /// Whether `op` is an immediate or a register that holds the same value in every lane
    /// (always false natively, where nothing asks).
    pub(super) fn uniform_operand(&self, op: &Operand) -> bool {
        match *op {
            Operand::Imm(_) => true,
            Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => {
                self.vl.as_ref().is_some_and(|v| v.uni.uniform(reg))
            }
            _ => false,
        }
    }

    /// Whether `op` is [`FnCx::uniform_operand`] or a lane-affine register
    /// ([`Uniformity::lane_affine`]).
    pub(super) fn lane_affine_operand(&self, op: &Operand) -> bool {
        match *op {
            Operand::Reg { reg, .. } => self.vl.as_ref().is_some_and(|v| v.uni.lane_affine(reg)),
            _ => self.uniform_operand(op),
        }
    }

    /// Whether lane `l` is in `cur`.
    fn lane_active(&mut self, l: u32) -> EResult<Word> {
        let cur = self.load_cur()?;
        self.bit_set(cur, l)
    }

    /// `(mask >> l) & 1 != 0`.
    pub(in crate::back::spirv) fn bit_set(&mut self, mask: Word, l: u32) -> EResult<Word> {
        let bit = self.and_const(mask, 1 << l)?;
        let zero = self.m.const_u32(0);
        let bt = self.m.ty(Scalar::Bool);
        Ok(self.m.b.i_not_equal(bt, None, bit, zero))
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
        Ok(self.m.b.load(u32t, None, v, None, []))
    }

    fn store_cur(&mut self, value: Word) -> EResult {
        let v = self.cur_var()?;
        Ok(self.m.b.store(v, value, None, []))
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
        let some = self.m.b.i_not_equal(bt, None, mask, zero);
        let scope = self.scope();
        Ok(self.m.b.group_non_uniform_any(bt, None, scope, some))
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

    /// The work-item's linear local id for lane `l`: `SubgroupId·K·H + hw·K + l` (K·H = N,
    /// or H when clustered with K = 1: cluster `c` of the hardware sub-group holds the
    /// work-items from `c·N`).
    pub(super) fn virtual_linear_id(&mut self) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniform);
        let var = self.m.builtin(BuiltIn::SubgroupId, false);
        let u32t = self.m.uint(32);
        let sg = self.m.b.load(u32t, None, var, None, []);
        let base = self.mul_const(sg, self.subgroups.items_per_hardware_subgroup())?;
        let lane = if self.subgroups.clustered() {
            self.hardware_lane()?
        } else {
            self.pisa_lane()?
        };
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

    /// Emits the body of the function on virtual lanes ([`FnCx::emit`] has declared its
    /// registers and parameters): `mask` is the callers' lane mask (a kernel starts with the
    /// lanes whose work-item exists). Ends the function.
    pub(super) fn emit_on_lanes(
        &mut self,
        cfg: &Cfg,
        events: &[Event],
        mask: Option<Word>,
        uni: Uniformity,
    ) -> EResult {
        self.m.capability(Capability::GroupNonUniform);
        // A kernel whose finished sub-groups serve barriers starts the service first, so
        // that a sub-group that fails the check below leaves the work-group as a finished
        // one does.
        let serving = mask.is_none() && self.serves_barriers();
        if serving {
            self.start_barrier_service()?;
        }
        if let (None, Some(record)) = (mask, self.m.subgroup_check) {
            self.check_subgroup(record)?;
        }
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
        // Lanes retire early only at a `return` some lanes take without the others, or when
        // the launch is cancelled.
        let keeps_entry = self.layout.launch.cancel.is_none()
            && cfg
                .blocks
                .iter()
                .enumerate()
                .all(|(b, blk)| !matches!(blk.term, Term::Return(_)) || uni.together(b));
        let entry_reads_active = keeps_entry && self.reads_active_together(cfg, &uni);
        self.vl = Some(Lanes {
            k,
            cur,
            waiting: FxHashMap::default(),
            ret,
            active: None,
            entry: None,
            entry_active: None,
            live: crate::mid::liveness::live_at_some_block(self.f, cfg),
            uni,
            may_empty: blocks_after_exits(events),
            returned: None,
        });
        let (start, full) = match mask {
            Some(m) => (m, None),
            None => {
                let (m, full) = self.existing_lanes()?;
                (m, Some(full))
            }
        };
        self.store_cur(start)?;
        let active = if entry_reads_active {
            let ballot = self.active_mask()?;
            Some(match full {
                Some(full) => {
                    let all = self.m.const_u32(low_bits(self.subgroups.width));
                    self.sel(32, full, all, ballot)?
                }
                None => ballot,
            })
        } else {
            None
        };
        if let Some(vl) = self.vl.as_mut() {
            vl.entry = keeps_entry.then_some(start);
            vl.entry_active = active;
        }
        if self.f.is_kernel() {
            self.kernel_prologue()?;
        }
        if serving {
            let returned = self.local_var(u32t)?;
            let zero = self.m.const_u32(0);
            self.m.b.store(returned, zero, None, []);
            if let Some(vl) = self.vl.as_mut() {
                vl.returned = Some((returned, start));
            }
        }
        self.lower_on_lanes(cfg, events)?;
        match (self.f.is_kernel(), ret) {
            (true, _) => self.emit_return(None)?,
            (false, Some(r)) => {
                let t = self.sigs_ret_ty();
                let v = self.m.b.load(t, None, r, None, []);
                self.m.b.ret_value(v);
            }
            (false, None) => self.m.b.ret(),
        }
        self.m.b.end_function();
        Ok(())
    }

    /// A kernel's first act on a pipeline without a required sub-group size (spec-notes
    /// §105): unless its hardware sub-group has `SubgroupSize` H (the width it was
    /// translated for) and all H invocations active (a sub-group-wide sum of 1), it stores
    /// both numbers in the record `record` and returns, before any other effect (but
    /// leaving the work-group first where finished sub-groups serve barriers: [`retire`]).
    fn check_subgroup(&mut self, record: GlobalId) -> EResult {
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let var = self.m.builtin(BuiltIn::SubgroupSize, false);
        let size = self.m.b.load(u32t, None, var, None, []);
        let one = self.m.const_u32(1);
        let active = self.reduce_whole_hw(AtomOp::Sum, one)?;
        let h = self.m.const_u32(self.subgroups.hardware);
        let size_ok = self.m.b.i_equal(bt, None, size, h);
        let full = self.m.b.i_equal(bt, None, active, h);
        let ok = self.m.b.logical_and(bt, None, size_ok, full);
        let (fail, merge) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(merge, rspirv::spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(ok, merge, fail, []);
        self.begin(fail)?;
        let (at, _) = self.var_address(VarRef::Global(record))?;
        self.global_store(at, 32, size)?;
        let at = self.addr_add(at, 64, 4)?;
        self.global_store(at, 32, active)?;
        self.leave_work_group()?;
        self.m.b.ret();
        self.begin(merge)
    }

    /// The return type of this function's virtual-lane signature.
    fn sigs_ret_ty(&self) -> Word {
        self.vsigs.get(self.fid.0 as usize).map_or(0, |s| s.ret_ty)
    }

    /// A kernel's first mask: the lanes whose linear local id is inside the work-group (the
    /// last PISA sub-group of a work-group may be partial, and clustered, the clusters after
    /// it empty); and whether every sub-group of the work-group is full (every hardware
    /// sub-group's work-items exist). The work-group size is a specialization constant:
    /// where it is a multiple of K·H, the driver folds the mask to all K lanes.
    fn existing_lanes(&mut self) -> EResult<(Word, Word)> {
        let [x, y, z] = self.m.local_size;
        let xy = self.u32_op(Builder::i_mul, x, y)?;
        let count = self.u32_op(Builder::i_mul, xy, z)?;
        let all = self.m.const_u32(u32::MAX);
        let bt = self.m.ty(Scalar::Bool);
        let some = self.lanes_where(all, |cx| {
            let id = cx.virtual_linear_id()?;
            Ok(cx.m.b.u_less_than(bt, None, id, count))
        })?;
        let rest = self.and_const(count, self.subgroups.items_per_hardware_subgroup() - 1)?;
        let zero = self.m.const_u32(0);
        let full = self.m.b.i_equal(bt, None, rest, zero);
        let every = self.m.const_u32(low_bits(self.lane_count()));
        Ok((self.sel(32, full, every, some)?, full))
    }

    /// Whether a block that every live lane runs together reads `%activemask` or holds a
    /// cross-lane instruction.
    fn reads_active_together(&self, cfg: &Cfg, uni: &Uniformity) -> bool {
        let body = self.f.body.as_deref().unwrap_or_default();
        cfg.blocks
            .iter()
            .enumerate()
            .any(|(b, blk)| match blk.code {
                Code::Insts(ref r) if uni.together(b) => body
                    .get(r.clone())
                    .unwrap_or_default()
                    .iter()
                    .any(code::needs_active),
                _ => false,
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
