//! The accesses of a run ([`crate::mid::base_runs`]: `.global`/`.const` `ld`/`st` of one
//! block through one base register plus constants) checked together, at the first of them
//! (the run's *head*), so that the search of the allocation table and the record of a
//! violation exist once per run and not once per access:
//!
//! - the head compares the span the run covers, `[base + lowest offset, base + highest
//!   end)`, with the hot entries, and the base with each alignment the run needs: when one
//!   entry holds the span, every access is aligned and none writes a read-only entry, every
//!   access passes (the verdict [`FnCx::table_bounds`] and the alignment test give each);
//! - otherwise (a base outside the launch's arguments, a run that leaves its allocation, a
//!   misaligned base) one loop over the run's accesses checks each one as a lone access is
//!   checked (hot entries, then the search), sets a bit per failing access, and records the
//!   first failure and the count ([`FnCx::note_violations`], with the failing access's
//!   [position](super::Pending::position));
//! - each access then reads its bit and runs without a branch ([`FnCx::checked_access`]).
//!
//! Verdicts and records are the per-access check's (spec-notes §70 and §106). The head's
//! variables belong to one emission of one block ([`FnCx::begin_block_runs`] forgets them),
//! so a head is emitted, and runs, before the accesses that read it. Runs are formed only
//! where a work-item is one invocation (not on virtual lanes).

use super::Violations;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::Scalar;
use crate::ir::{Inst, MemSpace};
use crate::memcheck::{code, AccessKind, Site};
use crate::mid::base_runs::{Member, Run};
use crate::mid::cfg::BlockId;
use rspirv::spirv::Word;

/// The Function variable a run's head fills: `u64`, bit j set when access j of the run
/// fails its check.
#[derive(Clone, Copy, Debug)]
pub struct RunVars {
    failed: Word,
}

impl FnCx<'_> {
    /// Where the code of block `b` starts: forgets the heads emitted so far and, in a block
    /// holding a run, marks the pending violation as one from before the block.
    pub fn begin_block_runs(&mut self, b: BlockId) -> EResult {
        self.run_vars.clear();
        self.run_block = self.base_runs.in_block.get(b).copied().unwrap_or(false);
        self.forget_position()
    }

    /// After a call in a block holding a run: a violation the callee recorded (with a
    /// position in its own block) came before what follows, as one from an earlier block.
    pub fn after_call_runs(&mut self) -> EResult {
        self.forget_position()
    }

    /// In a block holding a run, marks the pending violation as one from before the
    /// instructions that follow ([`super::Pending::position`] 0).
    fn forget_position(&mut self) -> EResult {
        if !self.run_block {
            return Ok(());
        }
        let Some(p) = self
            .m
            .checks
            .as_ref()
            .and_then(|c| c.pending.first().copied())
        else {
            return Err(self.err("internal error: a run outside a checked translation"));
        };
        let zero = self.m.const_u32(0);
        self.m.b.store(p.position, zero, None, []);
        Ok(())
    }

    /// The index of `inst` in the function's body, when it is one of its instructions.
    pub(super) fn body_index(&self, inst: &Inst) -> Option<usize> {
        let body = self.f.body.as_deref()?;
        let size = std::mem::size_of::<Inst>().max(1);
        let at = (inst as *const Inst as usize).wrapping_sub(body.as_ptr() as usize) / size;
        body.get(at).filter(|b| std::ptr::eq(*b, inst)).map(|_| at)
    }

    /// The run and position of `inst` when it is an access of a run of the function.
    pub(super) fn run_member(&self, inst: &Inst) -> Option<(u32, u32)> {
        let at = self.body_index(inst)?;
        self.base_runs.of_inst.get(&at).copied()
    }

    /// Whether access `member` of run `run` passes its check (bool): its bit of what the
    /// run's head found, the head emitted here first when this is the run's first access
    /// emitted in this block.
    pub(super) fn run_ok(&mut self, (run, member): (u32, u32), a: &super::Access) -> EResult<Word> {
        let vars = match self.run_vars.get(&run) {
            Some(&v) => v,
            None => {
                let v = self.run_head(run as usize, a.slot)?;
                self.run_vars.insert(run, v);
                v
            }
        };
        let (u64t, bt) = (self.m.uint(64), self.m.ty(Scalar::Bool));
        let failed = self.m.b.load(u64t, None, vars.failed, None, []);
        let bit = self.m.const_uint(64, 1 << member);
        let b = self.m.b.bitwise_and(u64t, None, failed, bit);
        let zero = self.m.const_uint(64, 0);
        Ok(self.m.b.i_equal(bt, None, b, zero))
    }

    /// The head of run `run` (`slot`: the kernel argument its base comes from,
    /// [`FnCx::address_slot`]): the span test and, when it fails, the loop over the accesses.
    fn run_head(&mut self, run: usize, slot: Option<u32>) -> EResult<RunVars> {
        let Some(r) = self.base_runs.runs.get(run).cloned() else {
            return Err(self.err("internal error: a run the function does not have"));
        };
        let Some((low, len)) = r.span() else {
            return Err(self.err("internal error: a run without a span"));
        };
        let site0 = self.run_sites(&r)?;
        let (u64t, bt) = (self.m.uint(64), self.m.ty(Scalar::Bool));
        let writes = r.members.iter().any(|m| m.store);
        let vars = RunVars {
            failed: self.local_var(u64t)?,
        };
        let t = self.reg_type(r.base);
        let base = self.m.b.load(t, None, self.reg_var(r.base), None, []);
        let lo = self.addr_add(base, 64, low as u64)?;
        let last = self.addr_add(lo, 64, len)?;
        let (hit, ro) = self.hot_lookup(lo, last, writes, slot)?;
        let mut pass = self.no_wrap(hit, lo, last);
        let ro = self.writes_read_only(ro, writes);
        let writable = self.m.b.logical_not(bt, None, ro);
        pass = self.m.b.logical_and(bt, None, pass, writable);
        let aligned = self.run_aligned(&r, base)?;
        pass = self.m.b.logical_and(bt, None, pass, aligned);
        let zero = self.m.const_uint(64, 0);
        self.m.b.store(vars.failed, zero, None, []);
        let fail = self.m.b.logical_not(bt, None, pass);
        self.if_then(fail, |cx| {
            cx.run_loop(&r, base, writes, (slot, site0), vars)
        })?;
        Ok(vars)
    }

    /// Adds the run's accesses to the table of checked instructions, consecutively; the
    /// first one's index.
    fn run_sites(&mut self, r: &Run) -> EResult<u32> {
        let mut first = None;
        for m in &r.members {
            let span = self
                .f
                .body
                .as_deref()
                .and_then(|b| b.get(m.inst))
                .map(|i| (i.span.start, i.span.end))
                .unwrap_or_default();
            let site = self.push_site(Site {
                function: self.f.name.clone(),
                span,
                align: m.align,
                variable: None,
                location: None,
            })?;
            first.get_or_insert(site);
        }
        first.ok_or_else(|| self.err("internal error: an empty run"))
    }

    /// Whether every access of `r` is aligned (bool), from its base alone: the accesses
    /// needing one alignment agree on the base's low bits, or cannot all be aligned.
    fn run_aligned(&mut self, r: &Run, base: Word) -> EResult<Word> {
        let (u64t, bt) = (self.m.uint(64), self.m.ty(Scalar::Bool));
        let mut aligned = self.m.const_bool(true);
        let mut needs: Vec<(u32, u64)> = r
            .members
            .iter()
            .filter(|m| m.align > 1)
            .map(|m| (m.align, (m.offset as u64) & (m.align as u64 - 1)))
            .collect();
        needs.sort_unstable();
        needs.dedup();
        for w in needs.windows(2) {
            if w[0].0 == w[1].0 {
                return Ok(self.m.const_bool(false));
            }
        }
        for (align, rest) in needs {
            let a = self.addr_add(base, 64, rest)?;
            let mask = self.m.const_uint(64, align as u64 - 1);
            let low = self.m.b.bitwise_and(u64t, None, a, mask);
            let zero = self.m.const_uint(64, 0);
            let is = self.m.b.i_equal(bt, None, low, zero);
            aligned = self.m.b.logical_and(bt, None, aligned, is);
        }
        Ok(aligned)
    }

    /// The loop of a run's head whose span test failed: each access checked alone (address,
    /// size, alignment, kind and space picked by a chain of selects on the loop index: an
    /// array indexed by it would live in memory, which lavapipe reaches lane by lane), its
    /// bit set in `vars.failed` when it fails, and the failures noted (the count, and the
    /// first one with its position).
    fn run_loop(
        &mut self,
        r: &Run,
        base: Word,
        writes: bool,
        (slot, site0): (Option<u32>, u32),
        vars: RunVars,
    ) -> EResult {
        let (u32t, u64t, bt) = (self.m.uint(32), self.m.uint(64), self.m.ty(Scalar::Bool));
        let i_var = self.local_var(u32t)?;
        let [first_var, code_var, size_var] = [(); 3].map(|_| self.local_var(u32t));
        let (first_var, code_var, size_var) = (first_var?, code_var?, size_var?);
        let addr_var = self.local_var(u64t)?;
        let zero = self.m.const_u32(0);
        let none = self.m.const_u32(u32::MAX);
        self.m.b.store(i_var, zero, None, []);
        self.m.b.store(first_var, none, None, []);
        self.do_until(|cx| {
            let i = cx.m.b.load(u32t, None, i_var, None, []);
            let pick = |cx: &mut Self, bits: u32, f: &dyn Fn(&Member) -> u64| {
                let values: Vec<u64> = r.members.iter().map(f).collect();
                cx.select_by_index(i, bits, &values)
            };
            let off = pick(cx, 64, &|m| m.offset as u64);
            let bytes = pick(cx, 64, &|m| m.bytes as u64);
            let mask = pick(cx, 64, &|m| m.align.max(1) as u64 - 1);
            let kind = pick(cx, 32, &|m| member_code(m.store, m.space) as u64);
            let addr = cx.m.b.i_add(u64t, None, base, off);
            let end = cx.m.b.i_add(u64t, None, addr, bytes);
            let (found, ro) = cx.table_lookup(addr, end, writes, slot)?;
            let inside = cx.no_wrap(found, addr, end);
            let low = cx.m.b.bitwise_and(u64t, None, addr, mask);
            let zero64 = cx.m.const_uint(64, 0);
            let aligned = cx.m.b.i_equal(bt, None, low, zero64);
            let zero = cx.m.const_u32(0);
            let store = cx.m.const_u32(member_code(true, MemSpace::Global));
            let kind_bits = cx.m.const_u32(0xff << code::ACCESS_SHIFT);
            let access = cx.m.b.bitwise_and(u32t, None, kind, kind_bits);
            let stores = cx.m.b.i_equal(bt, None, access, store);
            let ro = cx.m.b.logical_and(bt, None, ro, stores);
            // reason: misaligned, else out of bounds, else read-only (as `record`)
            let [oob, rof, mis] = [code::OUT_OF_BOUNDS, code::READ_ONLY, code::MISALIGNED]
                .map(|c| cx.m.const_u32(c << code::REASON_SHIFT));
            let reason = cx.m.b.select(u32t, None, ro, rof, zero);
            let reason = cx.m.b.select(u32t, None, inside, reason, oob);
            let reason = cx.m.b.select(u32t, None, aligned, reason, mis);
            let fails = cx.m.b.i_not_equal(bt, None, reason, zero);
            let one64 = cx.m.const_uint(64, 1);
            let i64 = cx.resize(i, 32, 64)?;
            let bit = cx.m.b.shift_left_logical(u64t, None, one64, i64);
            let bit = cx.m.b.select(u64t, None, fails, bit, zero64);
            let failed = cx.m.b.load(u64t, None, vars.failed, None, []);
            let was_clean = cx.m.b.i_equal(bt, None, failed, zero64);
            let failed = cx.m.b.bitwise_or(u64t, None, failed, bit);
            cx.m.b.store(vars.failed, failed, None, []);
            let first = cx.m.b.logical_and(bt, None, fails, was_clean);
            let code = cx.m.b.bitwise_or(u32t, None, kind, reason);
            let bytes32 = cx.resize(bytes, 64, 32)?;
            for (var, t, v) in [
                (first_var, u32t, i),
                (code_var, u32t, code),
                (size_var, u32t, bytes32),
                (addr_var, u64t, addr),
            ] {
                let old = cx.m.b.load(t, None, var, None, []);
                let new = cx.m.b.select(t, None, first, v, old);
                cx.m.b.store(var, new, None, []);
            }
            let one = cx.m.const_u32(1);
            let next = cx.m.b.i_add(u32t, None, i, one);
            cx.m.b.store(i_var, next, None, []);
            let n = cx.m.const_u32(r.members.len() as u32);
            Ok(cx.m.b.u_greater_than_equal(bt, None, next, n))
        })?;
        let failed = self.m.b.load(u64t, None, vars.failed, None, []);
        // OpBitCount of 32-bit words only (Vulkan)
        let low = self.resize(failed, 64, 32)?;
        let high = self.shr_const(failed, 64, 32)?;
        let high = self.resize(high, 64, 32)?;
        let [low, high] = [low, high].map(|w| self.m.b.bit_count(u32t, None, w));
        let count = self.m.b.i_add(u32t, None, low, high);
        let j = self.m.b.load(u32t, None, first_var, None, []);
        let s0 = self.m.const_u32(site0);
        let site = self.m.b.i_add(u32t, None, s0, j);
        let positions: Vec<u64> = r.members.iter().map(|m| m.inst as u64 + 1).collect();
        let position = self.select_by_index(j, 32, &positions);
        let v = Violations {
            count,
            site,
            code: self.m.b.load(u32t, None, code_var, None, []),
            size: self.m.b.load(u32t, None, size_var, None, []),
            address: self.m.b.load(u64t, None, addr_var, None, []),
            position: Some(position),
        };
        self.note_violations(&v)
    }
}

impl FnCx<'_> {
    /// `values[index]` (an integer of `bits` bits) for a u32 `index` below `values.len()`
    /// (the last value for a larger one): a chain of selects on `index >= k`, one for each k
    /// where the value changes. In registers, where an array indexed by `index` would live
    /// in memory, which lavapipe reaches lane by lane.
    fn select_by_index(&mut self, index: Word, bits: u32, values: &[u64]) -> Word {
        let (t, bt) = (self.m.uint(bits), self.m.ty(Scalar::Bool));
        let mut v = self
            .m
            .const_uint(bits, values.first().copied().unwrap_or(0));
        for (k, w) in values.windows(2).enumerate() {
            if w[1] != w[0] {
                let at = self.m.const_u32(k as u32 + 1);
                let ge = self.m.b.u_greater_than_equal(bt, None, index, at);
                let c = self.m.const_uint(bits, w[1]);
                v = self.m.b.select(t, None, ge, c, v);
            }
        }
        v
    }
}

/// The record code's access and space bits of a run's access ([`code`]): a `st` or `ld`
/// of `space`, not generic.
fn member_code(store: bool, space: MemSpace) -> u32 {
    let kind = if store {
        AccessKind::Store
    } else {
        AccessKind::Load
    };
    code::access(kind) << code::ACCESS_SHIFT | code::space(space)
}
