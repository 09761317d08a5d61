//! The accesses of counted loops ([`crate::mid::loop_ranges`]) checked once per entry into
//! their loop: before the loop's construct opens, the entry computes each member's range of
//! addresses over every iteration and checks it as one access of that size is checked
//! (allocation table, read-only entries, wrap-around), with the alignment of its first
//! address and of its stride, and the obligations that make the range exact; a bit per
//! member says it passed. In each iteration a member whose bit is set runs without a check;
//! one whose bit is clear checks itself as a lone access is checked, and records what it
//! finds, so verdicts and reports are the per-access check's (spec-notes §114).
//!
//! Members are formed only where a work-item is one invocation (not on virtual lanes), as
//! runs are.

use super::Access;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::Scalar;
use crate::back::spirv::ops_float::emit::Emit;
use crate::ir::Inst;
use crate::memcheck::{block, Site};
use crate::mid::cfg::BlockId;
use crate::mid::loop_ranges::{Affine, Counted, Entry, Leaf, Obligation};
use rspirv::spirv::Word;

impl FnCx<'_> {
    /// At the entry of the loop headed by `h`, in a checked translation: checks the ranges
    /// of its members and keeps their verdicts for its accesses. Nothing for other loops.
    pub fn loop_entry_checks(&mut self, h: BlockId) -> EResult {
        if !self.is_checked() {
            return Ok(());
        }
        let Some(&k) = self.loop_ranges.of_header.get(&h) else {
            return Ok(());
        };
        let l = self.loop_ranges.loops[k].clone();
        let u64t = self.m.uint(64);
        let verdict = match self.loop_vars.get(&k) {
            Some(&v) => v,
            None => {
                let v = self.local_var(u64t)?;
                self.loop_vars.insert(k, v);
                v
            }
        };
        let (last_j, counted_ok) = self.counting(&l)?;
        let mut bits = self.m.ku(64, 0);
        for (j, m) in l.members.iter().enumerate() {
            let mut ok = counted_ok;
            for ob in &m.obligations {
                let holds = self.obligation(ob, last_j)?;
                ok = self.m.land(ok, holds)?;
            }
            let whole = Obligation::Fits {
                value: m.addr.clone(),
                bits: 64,
            };
            let fits = self.obligation(&whole, last_j)?;
            ok = self.m.land(ok, fits)?;
            let (p, q) = (self.entry(&m.addr.p)?, self.entry(&m.addr.q)?);
            let lo = self.addr_add(p, 64, m.offset as u64)?;
            let last = self.at(p, q, last_j)?;
            let last = self.addr_add(last, 64, m.offset as u64)?;
            let last = self.addr_add(last, 64, m.bytes as u64)?;
            let (found, ro) = self.table_lookup(lo, last, m.store, None)?;
            let mut pass = self.no_wrap(found, lo, last);
            let ro = self.writes_read_only(ro, m.store);
            let bt = self.m.ty(Scalar::Bool);
            let writable = self.m.b.logical_not(bt, None, ro);
            pass = self.m.land(pass, writable)?;
            if m.align > 1 {
                let mask = self.m.ku(64, m.align as u64 - 1);
                let zero = self.m.ku(64, 0);
                for x in [lo, q] {
                    let low = self.m.and(64, x, mask)?;
                    let aligned = self.m.ieq(low, zero)?;
                    pass = self.m.land(pass, aligned)?;
                }
            }
            pass = self.m.land(pass, ok)?;
            let bit = self.m.ku(64, 1 << j);
            let zero = self.m.ku(64, 0);
            let b = self.m.select(u64t, pass, bit, zero)?;
            bits = self.m.or(64, bits, b)?;
        }
        self.m.b.store(verdict, bits, None, []);
        Ok(())
    }

    /// The loop's counting at its entry: the index `J` of its last iteration (u64), and
    /// whether that bound holds (bool): no update of the induction register wraps around,
    /// and the loop does not count for ever (a step of 0 with a test that holds).
    fn counting(&mut self, l: &Counted) -> EResult<(Word, Word)> {
        let v0 = self.entry(&Entry::Reg(l.iv))?;
        let n = self.leaf(l.bound)?;
        let s = self.leaf(l.step)?;
        let u64t = self.m.uint(64);
        let one = self.m.ku(64, 1);
        let zero = self.m.ku(64, 0);
        // The largest value the latch's test lets an iteration start with: n - 1 (`<`,
        // none beyond the first when n is 0) or n (`<=`); the first starts with v0.
        let top = if l.inclusive {
            n
        } else {
            self.m.isub(64, n, one)?
        };
        let above = self.m.ult(v0, top)?;
        let mut vmax = self.m.select(u64t, above, top, v0)?;
        // Whether the test holds for `v0` itself (with a step of 0 it then always holds).
        let mut holds = self.m.uge(top, v0)?;
        if !l.inclusive {
            let none = self.m.ieq(n, zero)?;
            vmax = self.m.select(u64t, none, v0, vmax)?;
            let some = self.m.lnot(none)?;
            holds = self.m.land(holds, some)?;
        }
        let after = self.m.iadd(64, vmax, s)?;
        let limit = self.m.ku(64, 1 << 32);
        let no_wrap = self.m.ult(after, limit)?;
        let still = self.m.ieq(s, zero)?;
        let forever = self.m.land(still, holds)?;
        let finite = self.m.lnot(forever)?;
        let ok = self.m.land(no_wrap, finite)?;
        // J = (vmax - v0) / s (vmax >= v0), 0 for a step of 0 (then the loop is refused
        // when its test holds, and has one iteration when it does not).
        let span = self.m.isub(64, vmax, v0)?;
        let divisor = self.m.select(u64t, still, one, s)?;
        let j = self.m.udiv(64, span, divisor)?;
        let last_j = self.m.select(u64t, still, zero, j)?;
        Ok((last_j, ok))
    }

    /// A step or bound as a u64.
    fn leaf(&mut self, l: Leaf) -> EResult<Word> {
        match l {
            Leaf::Imm(k) => Ok(self.m.ku(64, k as u64)),
            Leaf::Reg(r) => self.entry(&Entry::Reg(r)),
        }
    }

    /// `p + q j` (u64, wrapping).
    fn at(&mut self, p: Word, q: Word, j: Word) -> EResult<Word> {
        let t = self.m.imul(64, q, j)?;
        self.m.iadd(64, p, t)
    }

    /// Whether an obligation holds (bool) in every iteration up to the last, `last_j` (u64).
    fn obligation(&mut self, ob: &Obligation, last_j: Word) -> EResult<Word> {
        let limit = self.m.ku(64, 1 << 32);
        match ob {
            Obligation::Below32(e) => {
                let x = self.entry(e)?;
                self.m.ult(x, limit)
            }
            Obligation::Fits {
                value: Affine { p, q },
                bits,
            } => {
                let (p, q) = (self.entry(p)?, self.entry(q)?);
                // q below 2^32 makes q J exact (J < 2^32); the sum must not carry out, and a
                // 32-bit value must stay below 2^32.
                let q_ok = self.m.ult(q, limit)?;
                let s = self.at(p, q, last_j)?;
                let no_carry = self.m.uge(s, p)?;
                let mut ok = self.m.land(q_ok, no_carry)?;
                if *bits == 32 {
                    let below = self.m.ult(s, limit)?;
                    ok = self.m.land(ok, below)?;
                }
                Ok(ok)
            }
        }
    }

    /// The value of `e` at the loop's entry (u64).
    fn entry(&mut self, e: &Entry) -> EResult<Word> {
        Ok(match e {
            Entry::Imm(k) => self.m.ku(64, *k),
            Entry::Reg(r) => {
                let t = self.reg_type(*r);
                let v = self.m.b.load(t, None, self.reg_var(*r), None, []);
                let bits = self.f.regs[r.0 as usize].ty.total_bits();
                self.resize(v, bits, 64)?
            }
            Entry::Add(a, b) => {
                let (a, b) = (self.entry(a)?, self.entry(b)?);
                self.m.iadd(64, a, b)?
            }
            Entry::Mul(a, b) => {
                let (a, b) = (self.entry(a)?, self.entry(b)?);
                self.m.imul(64, a, b)?
            }
            Entry::Shl(a, k) => {
                let a = self.entry(a)?;
                let k = self.m.ku(64, *k as u64);
                self.m.shl(64, a, k)?
            }
        })
    }

    /// The member `j` of loop `k` whose range its loop's entry checked (`verdict`):
    /// `access` runs without a check where the range passed, and otherwise after the lone
    /// access's check, which records a violation; without a branch around the access (a
    /// failing access runs at the check block's scratch, a load then yielding 0), as a
    /// run's accesses do.
    pub(super) fn loop_member_access(
        &mut self,
        inst: &Inst,
        a: Access,
        (verdict, j): (Word, usize),
        site: Site,
        access: impl FnOnce(&mut Self, Word, Option<Word>) -> EResult,
    ) -> EResult {
        let site = self.push_site(site)?;
        let (u64t, bt) = (self.m.uint(64), self.m.ty(Scalar::Bool));
        let bits = self.m.b.load(u64t, None, verdict, None, []);
        let bit = self.m.ku(64, 1 << j);
        let b = self.m.and(64, bits, bit)?;
        let zero = self.m.ku(64, 0);
        let proven = self.m.ine(b, zero)?;
        let ok_var = self.local_var(bt)?;
        let yes = self.m.const_bool(true);
        self.m.b.store(ok_var, yes, None, []);
        let unproven = self.m.lnot(proven)?;
        let position = self.position_in_block(inst);
        self.if_then(unproven, |cx| {
            let (ok, failure) = cx.check(&a)?;
            cx.m.b.store(ok_var, ok, None, []);
            let fail = cx.m.lnot(ok)?;
            cx.if_then(fail, |cx| cx.record(site, &failure, ok, &a, position))
        })?;
        let ok = self.m.b.load(bt, None, ok_var, None, []);
        let blk = self.check_block()?;
        let scratch = self.addr_add(blk, 64, block::SCRATCH)?;
        let at = self.m.b.select(u64t, None, ok, a.addr, scratch);
        access(self, at, Some(ok))
    }

    /// The loop verdict and position of `inst` when it is a member of a counted loop whose
    /// entry was emitted.
    pub(super) fn loop_member(&self, inst: &Inst) -> Option<(Word, usize)> {
        let at = self.body_index(inst)?;
        let &(k, j) = self.loop_ranges.of_inst.get(&at)?;
        Some((*self.loop_vars.get(&k)?, j))
    }
}
