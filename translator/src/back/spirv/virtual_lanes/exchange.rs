//! The cross-lane primitives on virtual lanes, which `ops_subgroup.rs` calls in place of the
//! hardware's: a ballot of each invocation's K lanes, a shuffle from slot `src % K` of
//! invocation `src / K`, and the fold of an invocation's lanes before a reduction.

use super::super::builder::Builder;
use super::super::function::FnCx;
use super::super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::AtomOp;
use rspirv::spirv::{Capability, Word};

impl FnCx<'_> {
    /// A ballot on virtual lanes: each invocation's K bits of `preds` (for active lanes)
    /// shifted to its lanes `hw·K ..`, OR-ed over the hardware sub-group (over its cluster
    /// when clustered, `hw` then the lane within it).
    pub(in crate::back::spirv) fn ballot_on_lanes(&mut self, preds: &[Word]) -> EResult<Word> {
        self.m.capability(Capability::GroupNonUniformArithmetic);
        let cur = self.load_cur()?;
        let mine = self.lanes_where(cur, |cx| Ok(preds[cx.lane as usize]))?;
        let hw = self.cluster_lane()?;
        let shift = self.mul_const(hw, self.lane_count())?;
        let placed = self.u32_op(Builder::shift_left_logical, mine, shift)?;
        self.reduce_hw(AtomOp::Or, placed)
    }

    /// Each lane's value of `values` from PISA lane `from[l]`: slot `from % K` of hardware
    /// lane `from / K`. When lane `l` wants the same slot in every invocation of the
    /// sub-group (shifts, rotations, a broadcast: `OpGroupNonUniformAllEqual`), each
    /// invocation picks that slot of its own values and one shuffle moves it; otherwise K
    /// shuffles, one per slot, and a select. With `same_slots` the translator knows the
    /// former statically: no vote.
    pub(in crate::back::spirv) fn shuffle_on_lanes(
        &mut self,
        values: &[Word],
        from: &[Word],
        same_slots: bool,
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
                    let is = cx.m.b.i_equal(bt, None, slot, jc);
                    got = cx.sel(32, is, v, got)?;
                }
                Ok(got)
            };
            if same_slots || k == 1 {
                let mine = pick(self, values)?;
                out.push(self.shuffle_hw(mine, hw)?);
                continue;
            }
            let same = self.m.b.group_non_uniform_all_equal(bt, None, scope, slot);
            let var = self.local_var(u32t)?;
            self.if_else(
                same,
                |cx| {
                    let mine = pick(cx, values)?;
                    let v = cx.shuffle_hw(mine, hw)?;
                    Ok(cx.m.b.store(var, v, None, []))
                },
                |cx| {
                    let mut there = Vec::with_capacity(values.len());
                    for &v in values {
                        there.push(cx.shuffle_hw(v, hw)?);
                    }
                    let v = pick(cx, &there)?;
                    Ok(cx.m.b.store(var, v, None, []))
                },
            )?;
            out.push(self.m.b.load(u32t, None, var, None, []));
        }
        Ok(out)
    }

    /// `x op y` on u32, for folding the lanes of an invocation before a sub-group reduction.
    pub(in crate::back::spirv) fn fold_lanes(
        &mut self,
        op: AtomOp,
        x: Word,
        y: Word,
    ) -> EResult<Word> {
        let glsl = |cx: &mut Self, n: u32| {
            let u32t = cx.m.uint(32);
            let set = cx.m.glsl;
            Ok(cx.m.b.ext_inst(
                u32t,
                None,
                set,
                n,
                [rspirv::dr::Operand::IdRef(x), rspirv::dr::Operand::IdRef(y)],
            ))
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
}
