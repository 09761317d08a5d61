//! Lowering of the sub-group communication instructions (isa-7): `shfl`, `ired`, `fred`,
//! `redfirstidx`, exactly as their semantics blocks say, for a sub-group of the width the
//! kernel is translated for, and of `%laneid` and `%activemask` (which [`super::special`]
//! asks for here).
//!
//! This module alone maps PISA sub-groups onto hardware sub-groups
//! ([`SubgroupMapping`](super::SubgroupMapping)): natively one PISA sub-group of N lanes is
//! one hardware sub-group; clustered, it is one aligned N-lane cluster of a hardware
//! sub-group of H lanes (PISA's 32 lanes as half of a wave64); on virtual lanes
//! ([`super::virtual_lanes`]) each of the H invocations of a hardware sub-group carries K =
//! N/H PISA lanes, lane `hw·K + l` being lane `l` of hardware lane `hw`. Only the lane,
//! mask and scope plumbing differs, in four helpers: [`pisa_lane`](FnCx::pisa_lane)
//! (`%laneid` = hardware lane `& (N-1)`, or `hw·K + l`), [`ballot`](FnCx::ballot) (the
//! cluster's N bits of the hardware ballot, or the OR over the sub-group of each
//! invocation's K bits shifted to `hw·K`; `%activemask` is a ballot), `shuffle` (reads
//! hardware lane `base | pisa_lane`; on virtual lanes K shuffles per lane, one per slot, and
//! a select) and `reduce` (`ClusteredReduce` with `ClusterSize` N instead of `Reduce`; on
//! virtual lanes a fold over the K lanes first). Instructions are written over the lanes of
//! one invocation ([`FnCx::each_lane`]: one natively), so every mapping shares them.
//!
//! Every active invocation executes the SPIR-V group operations (none is skipped by a
//! branch; on virtual lanes every invocation of the sub-group does, with its lane mask), so
//! a shuffle only ever reads a lane that executes it; a work-item outside the
//! participation mask (`mask & %activemask`) then keeps its `dst` through a select.
//!
//! - `shfl`: the source lane is computed as in the specification (signed 32-bit lane
//!   arithmetic, clamp and segment mask), then `OpGroupNonUniformShuffle` reads it when it
//!   is in bounds and in the participation mask, the own lane otherwise.
//! - `ired`: `OpGroupNonUniform{IAdd,SMin,…}` `Reduce` on 32-bit values, to which a lane
//!   outside the mask contributes the identity of the operation; 16-bit values are
//!   sign- or zero-extended as the operation needs, `.absmax` reduces `|x|` unsigned.
//! - `fred`: each float (each element of a packed pair) is mapped to a 32-bit integer key
//!   in IEEE total order (`-0 < +0`), reduced with `SMin`/`SMax` (NaNs and non-participants
//!   contribute the identity) and mapped back: exact, whatever order the device reduces
//!   in. A NaN result is the first NaN in `%laneid` order, made quiet (what the reference's
//!   in-order fold gives), found with a ballot and read with a shuffle; it is the result
//!   when any participant has one with `.nanp`, or when every participant has one without.
//! - `redfirstidx`: `FindILsb(src0 & %activemask)`.
//!
//! The participation mask must be sub-group-uniform (the specification says so); with a
//! non-uniform mask a reduction combines the lanes that are in their own mask.

use super::builder::Builder;
use super::function::FnCx;
use super::module::Scalar;
use super::ops_int::int_shape;
use crate::back::spirv::error::EResult;
use crate::ir::{AtomOp, DataType, Inst, Opcode, ShflOp};
use rspirv::spirv::{BuiltIn, Capability, GroupOperation, Scope, Word};

/// One lane's part of `shfl` ([`FnCx::shfl_source`]).
struct ShflLane {
    old: Word,
    value: Word,
    ok: Word,
    me: Word,
    from: Word,
}

/// One lane's part of a `fred` element ([`FnCx::fred_key`]).
struct FredLane {
    x32: Word,
    nan_here: Word,
    counts: Word,
    contribution: Word,
}

/// A two-operand builder method (`bitwise_and`, `i_add`, ...).
type BinaryOp = fn(&mut Builder, Word, Option<Word>, Word, Word) -> Word;

/// Bit layout of a floating-point format: sign bit, exponent mask, quiet bit.
struct FloatBits {
    width: u32,
    exp_mask: u32,
    quiet: u32,
}

impl FloatBits {
    fn of(ty: DataType) -> Option<FloatBits> {
        let (width, exp_bits, frac_bits) = match ty {
            DataType::F => (32, 8, 23),
            DataType::Hf | DataType::Hfx2 => (16, 5, 10),
            DataType::Bf | DataType::Bfx2 => (16, 8, 7),
            _ => return None,
        };
        Some(FloatBits {
            width,
            exp_mask: ((1u32 << exp_bits) - 1) << frac_bits,
            quiet: 1 << (frac_bits - 1),
        })
    }

    fn sign(&self) -> u32 {
        1 << (self.width - 1)
    }
}

impl FnCx<'_> {
    /// Lowers `shfl`, `ired`, `fred` and `redfirstidx`.
    pub fn subgroup_inst(&mut self, inst: &Inst) -> EResult {
        self.m.capability(Capability::GroupNonUniform);
        self.m.capability(Capability::GroupNonUniformBallot);
        match inst.op {
            Opcode::Shfl => self.shfl(inst),
            Opcode::Ired => self.ired(inst),
            Opcode::Fred => self.fred(inst),
            Opcode::Redfirstidx => self.redfirstidx(inst),
            _ => Err(self.err(format!(
                "`{}` is not a sub-group instruction",
                inst.op.as_str()
            ))),
        }
    }

    pub(super) fn scope(&mut self) -> Word {
        self.m.const_u32(Scope::Subgroup as u32)
    }

    /// `a op b` on u32 values with a builder method.
    pub(super) fn u32_op(&mut self, f: BinaryOp, a: Word, b: Word) -> EResult<Word> {
        let t = self.m.uint(32);
        Ok(f(&mut self.m.b, t, None, a, b))
    }

    pub(super) fn and32(&mut self, a: Word, b: Word) -> EResult<Word> {
        self.u32_op(Builder::bitwise_and, a, b)
    }

    pub(super) fn and_const(&mut self, a: Word, k: u32) -> EResult<Word> {
        let k = self.m.const_u32(k);
        self.and32(a, k)
    }

    /// `(mask >> lane) & 1 != 0` for `lane` below 32.
    fn mask_has(&mut self, mask: Word, lane: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        let s = self.u32_op(Builder::shift_right_logical, mask, lane)?;
        let one = self.and_const(s, 1)?;
        let zero = self.m.const_u32(0);
        Ok(self.m.b.i_not_equal(bt, None, one, zero))
    }

    fn bool_and(&mut self, a: Word, b: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        Ok(self.m.b.logical_and(bt, None, a, b))
    }

    fn bool_not(&mut self, a: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        Ok(self.m.b.logical_not(bt, None, a))
    }

    /// `SubgroupLocalInvocationId`: this invocation's lane in the hardware sub-group.
    pub(super) fn hardware_lane(&mut self) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniform);
        let var = self.m.builtin(BuiltIn::SubgroupLocalInvocationId, false);
        let u32t = self.m.uint(32);
        Ok(self.m.b.load(u32t, None, var, None, []))
    }

    /// `%laneid`: the hardware lane, within its cluster when clustered (`lane & (N-1)`);
    /// on virtual lanes `hw·K + l` for the lane `l` being emitted (K = 1 when clustered).
    pub(super) fn pisa_lane(&mut self) -> EResult<Word> {
        let lane = self.cluster_lane()?;
        match self.virtual_k() {
            Some(k) if k > 1 => {
                let first = self.mul_const(lane, k)?;
                let l = self.m.const_u32(self.lane);
                self.u32_op(Builder::i_add, first, l)
            }
            _ => Ok(lane),
        }
    }

    /// This invocation's hardware lane within its PISA sub-group's lanes: `lane & (N-1)`
    /// when clustered, else the hardware lane.
    pub(super) fn cluster_lane(&mut self) -> EResult<Word> {
        let hw = self.hardware_lane()?;
        if self.subgroups.clustered() {
            self.and_const(hw, self.subgroups.width - 1)
        } else {
            Ok(hw)
        }
    }

    /// The hardware lane of this invocation's cluster's lane 0 (`lane & !(N-1)`); only
    /// called when clustered.
    fn cluster_base(&mut self) -> EResult<Word> {
        let lane = self.hardware_lane()?;
        self.and_const(lane, !(self.subgroups.width - 1))
    }

    /// `OpGroupNonUniformBallot(pred)` as a PISA lane mask: the lanes of this invocation's
    /// PISA sub-group whose `pred` is true, bit `i` for `%laneid` `i`. Natively (N ≤ 32) that
    /// is word 0 of the ballot; clustered, the N bits of the cluster: word `base >> 5`,
    /// shifted right by `base & 31`, masked to N bits.
    pub(super) fn ballot(&mut self, preds: &[Word]) -> EResult<Word> {
        if self.virtual_k().is_some() {
            return self.ballot_on_lanes(preds);
        }
        let pred = preds[0];
        self.m.capability(Capability::GroupNonUniformBallot);
        let u32t = self.m.uint(32);
        let v4 = self.m.vector(u32t, 4);
        let scope = self.scope();
        let b = self.m.b.group_non_uniform_ballot(v4, None, scope, pred);
        if !self.subgroups.clustered() {
            return Ok(self.m.b.composite_extract(u32t, None, b, [0]));
        }
        let base = self.cluster_base()?;
        // Word `base >> 5` of the ballot: a chain of selects over the words the hardware
        // width uses (one for H ≤ 32, two for wave64, four for 128 lanes).
        let words = self.subgroups.hardware.div_ceil(32).min(4);
        let mut w = self.m.b.composite_extract(u32t, None, b, [0]);
        if words > 1 {
            let bt = self.m.ty(Scalar::Bool);
            let index = self.shr_const(base, 32, 5)?;
            for i in 1..words {
                let wi = self.m.b.composite_extract(u32t, None, b, [i]);
                let k = self.m.const_u32(i);
                let here = self.m.b.i_equal(bt, None, index, k);
                w = self.sel(32, here, wi, w)?;
            }
        }
        if self.subgroups.width < 32 {
            let shift = self.and_const(base, 31)?;
            let w = self.u32_op(Builder::shift_right_logical, w, shift)?;
            self.and_const(w, (1u32 << self.subgroups.width) - 1)
        } else {
            Ok(w)
        }
    }

    /// Each lane's u32 from PISA lane `from[l]` of the values `values` (one per lane of this
    /// invocation) of its PISA sub-group.
    /// `same_slots`: each lane's source slot (`from % K` on virtual lanes) is known to be the
    /// same in every invocation of the sub-group.
    fn shuffle(&mut self, values: &[Word], from: &[Word], same_slots: bool) -> EResult<Vec<Word>> {
        if self.virtual_k().is_some() {
            return self.shuffle_on_lanes(values, from, same_slots);
        }
        Ok(vec![self.shuffle_hw(values[0], from[0])?])
    }

    /// `OpGroupNonUniformShuffle` of a u32 from PISA lane `lane` of this invocation's PISA
    /// sub-group (hardware lane `base | lane` when clustered; `lane` is below N there).
    pub(super) fn shuffle_hw(&mut self, value: Word, lane: Word) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniformShuffle);
        let lane = if self.subgroups.clustered() {
            let base = self.cluster_base()?;
            self.u32_op(Builder::bitwise_or, base, lane)?
        } else {
            lane
        };
        let u32t = self.m.uint(32);
        let scope = self.scope();
        Ok(self
            .m
            .b
            .group_non_uniform_shuffle(u32t, None, scope, value, lane))
    }

    /// `%activemask`: the lanes of this invocation's PISA sub-group that execute here.
    pub(super) fn active_mask(&mut self) -> EResult<Word> {
        if let Some(a) = self.vl.as_ref().and_then(|v| v.active) {
            return Ok(a);
        }
        let t = self.m.const_bool(true);
        let all = vec![t; self.lane_count() as usize];
        self.ballot(&all)
    }

    /// `FindILsb` of a u32 (all ones for 0).
    pub(super) fn find_lsb(&mut self, x: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let glsl = self.m.glsl;
        Ok(self
            .m
            .b
            .ext_inst(u32t, None, glsl, 73, [rspirv::dr::Operand::IdRef(x)]))
    }

    /// `%laneid`, and whether this lane is in `mask_operand & %activemask` (that value too).
    fn participation(&mut self, inst: &Inst, i: usize) -> EResult<(Word, Word, Word)> {
        let lane = self.pisa_lane()?;
        let active = self.active_mask()?;
        let mask = self.read_uint(&inst.ops[i], 32)?;
        let p = self.and32(mask, active)?;
        let me = self.mask_has(p, lane)?;
        Ok((lane, p, me))
    }

    fn check_ty(&self, inst: &Inst, ok: &[DataType]) -> EResult<DataType> {
        match inst.q.ty {
            Some(t) if ok.contains(&t) => Ok(t),
            t => Err(self.err(format!(
                "`{}` does not take the type {}",
                inst.op.as_str(),
                t.map_or("(none)".to_string(), |t| format!(".{}", t.as_str()))
            ))),
        }
    }

    fn redfirstidx(&mut self, inst: &Inst) -> EResult {
        self.check_ty(inst, &[DataType::B32])?;
        let active = self.active_mask()?;
        self.each_lane(|cx| {
            let mask = cx.read_uint(&inst.ops[1], 32)?;
            let p = cx.and32(mask, active)?;
            // No participating lane: the specification's loop does not end (undefined); this
            // gives all ones.
            let r = cx.find_lsb(p)?;
            let r = cx.keep_if_inactive(&inst.ops[0], r)?;
            cx.write_uint(&inst.ops[0], 32, r)
        })?;
        Ok(())
    }

    fn shfl(&mut self, inst: &Inst) -> EResult {
        self.check_ty(inst, &[DataType::B32])?;
        let op = inst
            .q
            .shfl
            .ok_or_else(|| self.err("`shfl` without an operation (.up .dn .xor .idx)"))?;
        let lanes = self.each_lane(|cx| cx.shfl_source(inst, op))?;
        let values: Vec<Word> = lanes.iter().map(|l| l.value).collect();
        let from: Vec<Word> = lanes.iter().map(|l| l.from).collect();
        // With a uniform source operand, lane `l`'s source slot is the same in every
        // invocation for every mode (`shfl_source`: `(l ∓ offset) % K`, `(l ^ offset) % K`, or
        // the low bits of `l & seg | offset & !seg`); with a lane-affine one (its low bits
        // those of a uniform value and `%laneid`) too, except for `.idx.sg`, whose segment
        // comes from the operand's high bits.
        let src = &inst.ops[2];
        let same_slots = self.uniform_operand(src)
            || (self.lane_affine_operand(src) && !(inst.q.sg && op == ShflOp::Idx));
        let got = self.shuffle(&values, &from, same_slots)?;
        self.each_lane(|cx| {
            let l = &lanes[cx.lane as usize];
            let got = cx.sel(32, l.ok, got[cx.lane as usize], l.value)?;
            let r = cx.sel(32, l.me, got, l.old)?;
            cx.write_uint(&inst.ops[0], 32, r)
        })?;
        Ok(())
    }

    /// One lane's part of `shfl` before the exchange: its operands, whether it takes part,
    /// and the lane it reads (its own when the source is out of bounds or not taking part).
    fn shfl_source(&mut self, inst: &Inst, op: ShflOp) -> EResult<ShflLane> {
        let bt = self.m.ty(Scalar::Bool);
        let u32t = self.m.uint(32);
        let old = self.read_uint(&inst.ops[0], 32)?;
        let value = self.read_uint(&inst.ops[1], 32)?;
        let src1 = self.read_uint(&inst.ops[2], 32)?;
        let (lane, p, me) = self.participation(inst, 3)?;
        let offset = self.and_const(src1, 0x1F)?;
        let (cval, seg) = if inst.q.sg {
            let c = self.shr_const(src1, 32, 8)?;
            let c = self.and_const(c, 0x1F)?;
            let s = self.shr_const(src1, 32, 16)?;
            let s = self.and_const(s, 0x1F)?;
            (c, s)
        } else {
            let c = if op == ShflOp::Up { 0 } else { 0x1F };
            (self.m.const_u32(c), self.m.const_u32(0))
        };
        let not_seg = self.m.b.not(u32t, None, seg);
        let min_lane = self.and32(lane, seg)?;
        let c_part = self.and32(cval, not_seg)?;
        let clamp = self.u32_op(Builder::bitwise_or, min_lane, c_part)?;
        let src_lane = match op {
            ShflOp::Up => self.u32_op(Builder::i_sub, lane, offset)?,
            ShflOp::Dn => self.u32_op(Builder::i_add, lane, offset)?,
            ShflOp::Xor => self.u32_op(Builder::bitwise_xor, lane, offset)?,
            ShflOp::Idx => {
                let o = self.and32(offset, not_seg)?;
                self.u32_op(Builder::bitwise_or, min_lane, o)?
            }
        };
        // Lane numbers are small, so the signed comparisons see `lane - offset < 0` as such.
        let in_bounds = if op == ShflOp::Up {
            self.m.b.s_greater_than_equal(bt, None, src_lane, clamp)
        } else {
            self.m.b.s_less_than_equal(bt, None, src_lane, clamp)
        };
        let c32 = self.m.const_u32(32);
        let in_range = self.m.b.u_less_than(bt, None, src_lane, c32);
        let lane5 = self.and_const(src_lane, 0x1F)?;
        let src_in = self.mask_has(p, lane5)?;
        let ok = self.bool_and(in_bounds, in_range)?;
        let ok = self.bool_and(ok, src_in)?;
        // A lane in the mask is active, so the shuffle reads a lane that executes it.
        let own = match self.virtual_k() {
            // On virtual lanes a lane that reads nothing reads its own invocation at the
            // source's slot, so that every lane's slot stays the same across the sub-group
            // (one shuffle per lane, `shuffle_on_lanes`); the value is not used.
            Some(k) => {
                let hw = self.and_const(lane, !(k - 1))?;
                let slot = self.and_const(src_lane, k - 1)?;
                self.u32_op(Builder::bitwise_or, hw, slot)?
            }
            None => lane,
        };
        let from = self.sel(32, ok, src_lane, own)?;
        Ok(ShflLane {
            old,
            value,
            ok,
            me,
            from,
        })
    }

    /// `op` over the u32 contributions `xs` (one per lane of this invocation) of this
    /// invocation's PISA sub-group; on virtual lanes the K lanes are folded first.
    fn reduce(&mut self, op: AtomOp, xs: &[Word]) -> EResult<Word> {
        let mut x = xs[0];
        for &y in &xs[1..] {
            x = self.fold_lanes(op, x, y)?;
        }
        self.reduce_hw(op, x)
    }

    /// `OpGroupNonUniform<op>` of a u32 over the active lanes of this invocation's PISA
    /// sub-group: `Reduce` natively, `ClusteredReduce` with `ClusterSize` N when clustered.
    pub(super) fn reduce_hw(&mut self, op: AtomOp, x: Word) -> EResult<Word> {
        self.reduce_over(op, x, self.subgroups.clustered())
    }

    /// `OpGroupNonUniform<op>` of a u32 over the active invocations of the whole hardware
    /// sub-group, every cluster of it.
    pub(super) fn reduce_whole_hw(&mut self, op: AtomOp, x: Word) -> EResult<Word> {
        self.reduce_over(op, x, false)
    }

    /// `op` over the cluster of N lanes (`clustered`) or the whole hardware sub-group.
    fn reduce_over(&mut self, op: AtomOp, x: Word, clustered: bool) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniformArithmetic);
        let (r, cluster) = if clustered {
            self.m.capability(Capability::GroupNonUniformClustered);
            let n = self.m.const_u32(self.subgroups.width);
            (GroupOperation::ClusteredReduce, Some(n))
        } else {
            (GroupOperation::Reduce, None)
        };
        let t = self.m.uint(32);
        let s = self.scope();
        let b = &mut self.m.b;
        Ok(match op {
            AtomOp::Sum => b.group_non_uniform_i_add(t, None, s, r, x, cluster),
            AtomOp::Smin => b.group_non_uniform_s_min(t, None, s, r, x, cluster),
            AtomOp::Smax => b.group_non_uniform_s_max(t, None, s, r, x, cluster),
            AtomOp::Umin => b.group_non_uniform_u_min(t, None, s, r, x, cluster),
            AtomOp::Umax | AtomOp::Absmax => b.group_non_uniform_u_max(t, None, s, r, x, cluster),
            AtomOp::And => b.group_non_uniform_bitwise_and(t, None, s, r, x, cluster),
            AtomOp::Or => b.group_non_uniform_bitwise_or(t, None, s, r, x, cluster),
            AtomOp::Xor => b.group_non_uniform_bitwise_xor(t, None, s, r, x, cluster),
            _ => return Err(self.err(format!("no sub-group reduction for .{op:?}"))),
        })
    }

    fn ired(&mut self, inst: &Inst) -> EResult {
        let ty = self.check_ty(inst, &[DataType::B16, DataType::B32])?;
        let w = ty.bits();
        let op = match inst.q.atom {
            Some(
                op @ (AtomOp::Sum
                | AtomOp::Smin
                | AtomOp::Smax
                | AtomOp::Umin
                | AtomOp::Umax
                | AtomOp::And
                | AtomOp::Or
                | AtomOp::Xor
                | AtomOp::Absmax),
            ) => op,
            other => {
                return Err(self.err(format!(
                    "`ired` does not support the operation {}",
                    other.map_or("(none)".to_string(), |o| format!(".{o:?}").to_lowercase())
                )))
            }
        };
        let lanes = self.each_lane(|cx| cx.ired_contribution(inst, op, w))?;
        let xs: Vec<Word> = lanes.iter().map(|l| l.2).collect();
        let r = self.reduce(op, &xs)?;
        let r = self.resize(r, 32, w)?;
        self.each_lane(|cx| {
            let (old, me, _) = lanes[cx.lane as usize];
            let r = cx.sel(w, me, r, old)?;
            cx.write_uint(&inst.ops[0], w, r)
        })?;
        Ok(())
    }

    /// One lane's `dst`, whether it takes part, and what it gives the reduction of `ired`.
    fn ired_contribution(
        &mut self,
        inst: &Inst,
        op: AtomOp,
        w: u32,
    ) -> EResult<(Word, Word, Word)> {
        let bt = self.m.ty(Scalar::Bool);
        let old = self.read_uint(&inst.ops[0], w)?;
        let x = self.read_uint(&inst.ops[1], w)?;
        let (_, _, me) = self.participation(inst, 2)?;
        let signed = matches!(op, AtomOp::Smin | AtomOp::Smax | AtomOp::Absmax);
        let x32 = if signed {
            self.sresize(x, w, 32)?
        } else {
            self.resize(x, w, 32)?
        };
        let x32 = if op == AtomOp::Absmax {
            // |x| as unsigned: |INT_MIN| is 2^(w-1), the largest.
            let zero = self.m.const_u32(0);
            let neg = self.m.b.s_less_than(bt, None, x32, zero);
            let n = self.u32_op(Builder::i_sub, zero, x32)?;
            self.sel(32, neg, n, x32)?
        } else {
            x32
        };
        let identity = match op {
            AtomOp::Smin => i32::MAX as u32,
            AtomOp::Smax => i32::MIN as u32,
            AtomOp::Umin | AtomOp::And => u32::MAX,
            _ => 0,
        };
        let identity = self.m.const_u32(identity);
        let contribution = self.sel(32, me, x32, identity)?;
        Ok((old, me, contribution))
    }

    fn fred(&mut self, inst: &Inst) -> EResult {
        use DataType as T;
        let ty = self.check_ty(inst, &[T::Bf, T::Hf, T::F, T::Bfx2, T::Hfx2])?;
        let op = match inst.q.atom {
            Some(op @ (AtomOp::Min | AtomOp::Max | AtomOp::Absmax)) => op,
            other => {
                return Err(self.err(format!(
                    "`fred` does not support the operation {}",
                    other.map_or("(none)".to_string(), |o| format!(".{o:?}").to_lowercase())
                )))
            }
        };
        let fb = FloatBits::of(ty).ok_or_else(|| self.err("`fred`: not a float type"))?;
        let (w, n) = int_shape(Some(ty));
        let lanes = self.each_lane(|cx| {
            let old = cx.src_elems(inst, 0, w, n)?;
            let xs = cx.src_elems(inst, 1, w, n)?;
            let (lane, _, me) = cx.participation(inst, 2)?;
            Ok((old, xs, lane, me))
        })?;
        let ids: Vec<Word> = lanes.iter().map(|l| l.2).collect();
        let mes: Vec<Word> = lanes.iter().map(|l| l.3).collect();
        let mut out = vec![Vec::with_capacity(n as usize); lanes.len()];
        for e in 0..lanes[0].1.len() {
            let xs: Vec<Word> = lanes.iter().map(|l| l.1[e]).collect();
            let rs = self.fred_elem(op, inst.q.nanp, &fb, &xs, &ids, &mes)?;
            for (l, r) in rs.into_iter().enumerate() {
                let r = self.resize(r, 32, w)?;
                out[l].push(self.sel(w, mes[l], r, lanes[l].0[e])?);
            }
        }
        self.each_lane(|cx| cx.dst_elems(inst, w, &out[cx.lane as usize]))?;
        Ok(())
    }

    /// One element of `fred` over the lanes of this invocation: each lane's `x` of
    /// `fb.width` bits, `%laneid` and whether it takes part; each lane's result as a u32.
    fn fred_elem(
        &mut self,
        op: AtomOp,
        nanp: bool,
        fb: &FloatBits,
        xs: &[Word],
        lanes: &[Word],
        mes: &[Word],
    ) -> EResult<Vec<Word>> {
        let bt = self.m.ty(Scalar::Bool);
        let mut per = Vec::with_capacity(xs.len());
        for (&x, &me) in xs.iter().zip(mes) {
            per.push(self.fred_key(op, fb, x, me)?);
        }
        let rop = if op == AtomOp::Min {
            AtomOp::Smin
        } else {
            AtomOp::Smax
        };
        let contributions: Vec<Word> = per.iter().map(|p| p.contribution).collect();
        let rk = self.reduce(rop, &contributions)?;
        let numeric = self.total_key(rk)?;
        let mask = self.m.const_u32(u32::MAX >> (32 - fb.width));
        let numeric = self.and32(numeric, mask)?;
        // The first NaN in lane order, quiet.
        let nan_here: Vec<Word> = per.iter().map(|p| p.nan_here).collect();
        let nan_lanes = self.ballot(&nan_here)?;
        let zero = self.m.const_u32(0);
        let use_nan = if nanp {
            self.m.b.i_not_equal(bt, None, nan_lanes, zero)
        } else {
            let counts: Vec<Word> = per.iter().map(|p| p.counts).collect();
            let num_lanes = self.ballot(&counts)?;
            self.m.b.i_equal(bt, None, num_lanes, zero)
        };
        let first = self.find_lsb(nan_lanes)?;
        let some_nan = self.m.b.i_not_equal(bt, None, nan_lanes, zero);
        let read_nan = self.bool_and(use_nan, some_nan)?;
        let mut from = Vec::with_capacity(lanes.len());
        for &lane in lanes {
            from.push(self.sel(32, read_nan, first, lane)?);
        }
        let x32s: Vec<Word> = per.iter().map(|p| p.x32).collect();
        let nans = self.shuffle(&x32s, &from, false)?;
        let quiet = self.m.const_u32(fb.quiet);
        let mut out = Vec::with_capacity(nans.len());
        for nan in nans {
            let nan = self.u32_op(Builder::bitwise_or, nan, quiet)?;
            out.push(self.sel(32, use_nan, nan, numeric)?);
        }
        Ok(out)
    }

    /// One lane's part of a `fred` element before the reduction: its value as a u32 (made
    /// `|x|` for `.absmax`), whether it is a NaN that takes part, whether it counts as a
    /// number, and its total-order key or the identity.
    fn fred_key(&mut self, op: AtomOp, fb: &FloatBits, x: Word, me: Word) -> EResult<FredLane> {
        let bt = self.m.ty(Scalar::Bool);
        let x32 = self.resize(x, fb.width, 32)?;
        let mag = self.and_const(x32, !fb.sign() & (u32::MAX >> (32 - fb.width)))?;
        let exp = self.m.const_u32(fb.exp_mask);
        let is_nan = self.m.b.u_greater_than(bt, None, mag, exp);
        let quiet = self.m.const_u32(fb.quiet);
        // `.absmax` reduces fabs(x): sign cleared, a NaN made quiet.
        let x32 = if op == AtomOp::Absmax {
            let q = self.u32_op(Builder::bitwise_or, mag, quiet)?;
            self.sel(32, is_nan, q, mag)?
        } else {
            x32
        };
        // Total-order key: x itself when positive, x ^ 0x7FFFFFFF (sign-extended) when
        // negative; the map is its own inverse.
        let s = self.sresize(x, fb.width, 32)?;
        let s = if op == AtomOp::Absmax { x32 } else { s };
        let key = self.total_key(s)?;
        let num = self.bool_not(is_nan)?;
        let counts = self.bool_and(me, num)?;
        let identity = self.m.const_u32(if op == AtomOp::Min {
            i32::MAX as u32
        } else {
            i32::MIN as u32
        });
        let contribution = self.sel(32, counts, key, identity)?;
        let nan_here = self.bool_and(me, is_nan)?;
        Ok(FredLane {
            x32,
            nan_here,
            counts,
            contribution,
        })
    }

    /// `s ^ ((s >> 31 arithmetic) >> 1 logical)`: flips the magnitude of negative values
    /// so that signed integer order is IEEE total order.
    fn total_key(&mut self, s: Word) -> EResult<Word> {
        let c31 = self.m.const_u32(31);
        let sign = self.u32_op(Builder::shift_right_arithmetic, s, c31)?;
        let flip = self.shr_const(sign, 32, 1)?;
        self.u32_op(Builder::bitwise_xor, s, flip)
    }
}
