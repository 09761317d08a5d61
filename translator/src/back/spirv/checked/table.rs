//! A `.global`/`.const` address against the allocation table of the check block: the hot
//! entries first (the allocations of the launch's arguments, in Private variables), then,
//! only for a work-item that misses them, a binary search of the whole table.

use super::{Access, Verdict};
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::Scalar;
use crate::ir::MemSpace;
use crate::memcheck::{block, code, AccessKind};
use rspirv::spirv::Word;

impl FnCx<'_> {
    /// `[addr, addr + bytes)` (u64 `addr` of space `s`) inside one entry of the allocation
    /// table ([`FnCx::table_lookup`]), without wrapping past 2^64.
    pub(super) fn table_bounds(&mut self, addr: Word, a: &Access, s: MemSpace) -> EResult<Verdict> {
        let u64t = self.m.uint(64);
        let n = self.m.const_uint(64, a.bytes as u64);
        let last = self.m.b.i_add(u64t, None, addr, n);
        let writes = a.kind != AccessKind::Load;
        let (found, ro) = self.table_lookup(addr, last, writes, a.slot)?;
        let inside = self.no_wrap(found, addr, last);
        let read_only = self.writes_read_only(ro, writes);
        let space = self.m.const_u32(code::space(s));
        Ok(Verdict {
            inside,
            read_only,
            space,
        })
    }

    /// `found && last >= addr` (bool): the range does not wrap past 2^64.
    pub(super) fn no_wrap(&mut self, found: Word, addr: Word, last: Word) -> Word {
        let bt = self.m.ty(Scalar::Bool);
        let no_wrap = self.m.b.u_greater_than_equal(bt, None, last, addr);
        self.m.b.logical_and(bt, None, found, no_wrap)
    }

    /// `ro && writes` (bool): a write into a read-only place.
    pub(super) fn writes_read_only(&mut self, ro: Word, writes: bool) -> Word {
        let bt = self.m.ty(Scalar::Bool);
        let writes = self.m.const_bool(writes);
        self.m.b.logical_and(bt, None, ro, writes)
    }

    /// Whether `[addr, last)` (u64) lies in one entry of the allocation table, and whether
    /// that entry is read-only (computed only when `writes`; else false). First the [hot
    /// entries](block::HOT) ([`FnCx::hot_lookup`]); then, only for a work-item that has
    /// missed them all, the search of the whole table ([`FnCx::table_search`]), in a branch
    /// that lavapipe skips when no work-item of the SIMD group takes it. Wrapping is the
    /// caller's to check.
    pub(super) fn table_lookup(
        &mut self,
        addr: Word,
        last: Word,
        writes: bool,
        slot: Option<u32>,
    ) -> EResult<(Word, Word)> {
        let bt = self.m.ty(Scalar::Bool);
        let blk = self.check_block()?;
        let (hit, ro) = self.hot_lookup(addr, last, writes, slot)?;
        let found_v = self.local_var(bt)?;
        let ro_v = self.local_var(bt)?;
        self.m.b.store(found_v, hit, None, []);
        self.m.b.store(ro_v, ro, None, []);
        let miss = self.m.b.logical_not(bt, None, hit);
        self.if_then(miss, |cx| {
            let (inside, t_ro) = cx.table_search(blk, addr, last)?;
            let found = cx.m.b.logical_or(bt, None, hit, inside);
            let ro = cx.m.b.select(bt, None, hit, ro, t_ro);
            cx.m.b.store(found_v, found, None, []);
            Ok(cx.m.b.store(ro_v, ro, None, []))
        })?;
        let found = self.m.b.load(bt, None, found_v, None, []);
        let ro = self.m.b.load(bt, None, ro_v, None, []);
        Ok((found, ro))
    }

    /// Whether `[addr, last)` (u64) lies in one of the hot entries (with `slot`, the
    /// entry of that kernel argument alone: the search finds any other place), and whether
    /// the last entry holding it is read-only (computed only when `writes`; else false).
    /// Two comparisons per entry, no memory read but the Private copies.
    pub(super) fn hot_lookup(
        &mut self,
        addr: Word,
        last: Word,
        writes: bool,
        slot: Option<u32>,
    ) -> EResult<(Word, Word)> {
        let u64t = self.m.uint(64);
        let bt = self.m.ty(Scalar::Bool);
        let mut hit = self.m.const_bool(false);
        let mut ro = self.m.const_bool(false);
        let mut hot = self
            .m
            .checks
            .as_ref()
            .map(|c| c.hot.clone())
            .unwrap_or_default();
        if let Some(k) = slot {
            hot = hot.get(k as usize).copied().into_iter().collect();
        }
        for e in hot {
            let [start, end] = [e.start, e.end].map(|v| self.m.b.load(u64t, None, v, None, []));
            let inside = self.entry_holds(start, end, addr, last)?;
            hit = self.m.b.logical_or(bt, None, hit, inside);
            if writes {
                let e_ro = self.m.b.load(bt, None, e.read_only, None, []);
                ro = self.m.b.select(bt, None, inside, e_ro, ro);
            }
        }
        Ok((hit, ro))
    }

    /// A table entry's raw end split into the end and whether the
    /// [`READ_ONLY`](block::READ_ONLY) flag is set.
    pub(super) fn split_end(&mut self, raw: Word) -> EResult<(Word, Word)> {
        let u64t = self.m.uint(64);
        let bt = self.m.ty(Scalar::Bool);
        let not_flag = self.m.const_uint(64, !block::READ_ONLY);
        let end = self.m.b.bitwise_and(u64t, None, raw, not_flag);
        let flag = self.m.const_uint(64, block::READ_ONLY);
        let bits = self.m.b.bitwise_and(u64t, None, raw, flag);
        let zero = self.m.const_uint(64, 0);
        let read_only = self.m.b.i_not_equal(bt, None, bits, zero);
        Ok((end, read_only))
    }

    /// Whether the table entry `[start, end)` holds `[addr, last)`. Wrapping is the
    /// caller's to check.
    fn entry_holds(&mut self, start: Word, end: Word, addr: Word, last: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        let after = self.m.b.u_less_than_equal(bt, None, start, addr);
        let fits = self.m.b.u_less_than_equal(bt, None, last, end);
        Ok(self.m.b.logical_and(bt, None, after, fits))
    }

    /// The search of the whole allocation table in the check block `blk`: a branch-free
    /// binary search for the last entry starting at or below `addr` (entry 0, the sentinel
    /// `[0, 0)`, starts below everything), then [`FnCx::entry_holds`] on it; with whether
    /// that entry is read-only.
    fn table_search(&mut self, blk: Word, addr: Word, last: Word) -> EResult<(Word, Word)> {
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let len_at = self.addr_add(blk, 64, block::TABLE_LEN)?;
        let len = self.global_load(len_at, 32)?;
        let table = self.addr_add(blk, 64, block::TABLE)?;
        let lo_var = self.local_var(u32t)?;
        let n_var = self.local_var(u32t)?;
        let zero = self.m.const_u32(0);
        self.m.b.store(lo_var, zero, None, []);
        self.m.b.store(n_var, len, None, []);
        let one = self.m.const_u32(1);
        let several = self.m.b.u_greater_than(bt, None, len, one);
        self.if_then(several, |cx| {
            cx.do_until(|cx| {
                let lo = cx.m.b.load(u32t, None, lo_var, None, []);
                let n = cx.m.b.load(u32t, None, n_var, None, []);
                let half = cx.shr_const(n, 32, 1)?;
                let mid = cx.m.b.i_add(u32t, None, lo, half);
                let start = cx.table_word(table, mid, 0)?;
                let below = cx.m.b.u_less_than_equal(bt, None, start, addr);
                let lo = cx.m.b.select(u32t, None, below, mid, lo);
                cx.m.b.store(lo_var, lo, None, []);
                let n = cx.m.b.i_sub(u32t, None, n, half);
                cx.m.b.store(n_var, n, None, []);
                let one = cx.m.const_u32(1);
                Ok(cx.m.b.u_less_than_equal(bt, None, n, one))
            })
        })?;
        let lo = self.m.b.load(u32t, None, lo_var, None, []);
        let start = self.table_word(table, lo, 0)?;
        let raw = self.table_word(table, lo, 8)?;
        let (end, read_only) = self.split_end(raw)?;
        Ok((self.entry_holds(start, end, addr, last)?, read_only))
    }

    /// The u64 at byte `at` of table entry `index`.
    fn table_word(&mut self, table: Word, index: Word, at: u64) -> EResult<Word> {
        let u64t = self.m.uint(64);
        let i = self.resize(index, 32, 64)?;
        let off = self.shl_const(i, 64, 4)?;
        let p = self.m.b.i_add(u64t, None, table, off);
        let p = self.addr_add(p, 64, at)?;
        self.global_load(p, 64)
    }
}
