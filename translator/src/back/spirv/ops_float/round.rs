//! Exact rounding in any PISA rounding mode, emulated with error-free transformations and
//! integer bit manipulation (the driver's own rounding is only ever to nearest even).
//!
//! - [`FnCx::two_sum`]: `s = RN(a + b)` and the exact error `e = a + b - s` (Knuth's TwoSum,
//!   six operations, exact in binary floating point without overflow).
//! - [`FnCx::to_odd`]: a nearest-rounded `f64` and its exact error turned into the
//!   round-to-odd `f64` (the last bit set when the result is inexact). Rounding that value
//!   once more to a format of at most 51 bits of precision, in any mode, gives the correctly
//!   rounded result of the exact value (Boldo and Melquiond, "Emulation of FMA and correctly
//!   rounded sums: proved algorithms using rounding to odd", 2008).
//! - [`FnCx::round_f64_to`]: an `f64` rounded to `.f`, `.hf` or `.bf` in any mode with
//!   integer arithmetic on its bits (denormal results, overflow per [`Overflow`]).
//! - [`FnCx::direct_f64`]: a nearest-rounded `f64` result and the sign of its exact error
//!   turned into the result of a directed mode (one step to the neighbouring float).

use super::emit::Emit;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::ir::RoundingMode;
use rspirv::spirv::Word;

/// What a finite result too large for the destination becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// IEEE arithmetic: infinity when the mode rounds away from zero, else the largest
    /// finite value.
    Ieee,
    /// Conversions (`ftrunc`, `i2f`): infinity in every mode (isa-4).
    Inf,
    /// Conversions with `.dsat`: the largest finite value; an infinite source too.
    Sat,
}

impl FKind {
    /// Significand precision in bits (implicit bit included).
    pub fn precision(self) -> u32 {
        match self {
            FKind::Half => 11,
            FKind::Bf16 => 8,
            FKind::F32 => 24,
            FKind::F64 => 53,
        }
    }

    /// Exponent bias.
    pub fn bias(self) -> i64 {
        match self {
            FKind::Half => 15,
            FKind::Bf16 | FKind::F32 => 127,
            FKind::F64 => 1023,
        }
    }
}

impl FnCx<'_> {
    /// Knuth's TwoSum on `w`-bit floats: `(RN(a + b), a + b - RN(a + b))`, both exact.
    pub fn two_sum(&mut self, w: u32, a: Word, b: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let s = m.fadd(w, a, b)?;
        let bb = m.fsub(w, s, a)?;
        let ab = m.fsub(w, s, bb)?;
        let db = m.fsub(w, b, bb)?;
        let da = m.fsub(w, a, ab)?;
        let e = m.fadd(w, da, db)?;
        Ok((s, e))
    }

    /// Round-to-odd of `s + e` where `s = RN(s + e)` (`w`-bit floats): when `e` is not zero
    /// and `s` has an even last bit, `s` moves one unit toward `s + e`. Infinite or NaN `s`
    /// (whose `e` is NaN) is left as is.
    pub fn to_odd(&mut self, w: u32, s: Word, e: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let zero = m.kf(w, 0.0);
        let inexact = m.fne(e, zero)?;
        let sb = m.bits(w, s)?;
        let one = m.ku(w, 1);
        let lsb = m.and(w, sb, one)?;
        let z = m.ku(w, 0);
        let even = m.ieq(lsb, z)?;
        let fix = m.land(inexact, even)?;
        // Away from zero (bits + 1) when e has the sign of s, else toward zero (bits - 1).
        let epos = m.fgt(e, zero)?;
        let spos = m.fgt(s, zero)?;
        let bt = m.bool_t();
        let away = m.b.logical_equal(bt, None, epos, spos);
        let up = m.iadd(w, sb, one)?;
        let down = m.isub(w, sb, one)?;
        let ut = m.u(w);
        let moved = m.select(ut, away, up, down)?;
        let r = m.select(ut, fix, moved, sb)?;
        m.float(w, r)
    }

    /// Rounds the `f64` value `v` to `k` (`.f`, `.hf` or `.bf`); see [`FnCx::round_float_to`].
    pub fn round_f64_to(
        &mut self,
        k: FKind,
        v: Word,
        mode: RoundingMode,
        overflow: Overflow,
    ) -> EResult<Word> {
        self.round_float_to(FKind::F64, k, v, mode, overflow)
    }

    /// Rounds the value `v` of the compute float of `from` (`f64` or `f32`) to the narrower
    /// `to` in `mode`, exactly, with integer arithmetic on its bits; returns the raw bits
    /// (`to.bits()` wide). NaNs keep their sign and the top of their payload and become quiet.
    /// `v` must be exact or rounded to odd (at least two bits more precise than `to`).
    pub fn round_float_to(
        &mut self,
        from: FKind,
        to: FKind,
        v: Word,
        mode: RoundingMode,
        overflow: Overflow,
    ) -> EResult<Word> {
        debug_assert!(matches!(from, FKind::F32 | FKind::F64) && to.bits() < from.bits());
        let w = from.bits();
        let b = self.m.bits(w, v)?;
        let b = self.resize(b, w, 64)?;
        let fbs = from.precision() as u64 - 1;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let kfb = m.ku(64, fbs);
        let ksign = m.ku(64, w as u64 - 1);
        let sign = m.shr(64, b, ksign)?;
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let neg = m.ine(sign, zero)?;
        let absmask = m.ku(64, (1u64 << (w - 1)) - 1);
        let a = m.and(64, b, absmask)?;
        let e = m.shr(64, a, kfb)?;
        let fracmask = m.ku(64, (1u64 << fbs) - 1);
        let frac = m.and(64, a, fracmask)?;
        let e_is0 = m.ieq(e, zero)?;
        let implicit = m.ku(64, 1u64 << fbs);
        let imp = m.select(u64t, e_is0, zero, implicit)?;
        let sig = m.or(64, frac, imp)?;
        let e1 = m.select(u64t, e_is0, one, e)?;
        // te = e1 - from's bias + to's bias: the biased exponent in `to` (signed, as u64 bits).
        let off = m.ku(64, (to.bias() - from.bias()) as u64);
        let te = m.iadd(64, e1, off)?;
        let r = self.round_sig(to, neg, te, sig, fbs, mode, overflow)?;
        let m = &mut *self.m;
        let fb = to.precision() as u64 - 1;
        let inf_bits = (2 * to.bias() as u64 + 1) << fb;
        let infb = m.ku(64, inf_bits);
        let maxb = m.ku(64, inf_bits - 1);
        // Infinities and NaNs.
        let emax = m.ku(64, 2 * from.bias() as u64 + 1);
        let special = m.ieq(e, emax)?;
        let fnz = m.ine(frac, zero)?;
        let is_nan = m.land(special, fnz)?;
        let sh = m.ku(64, fbs - fb);
        let payload = m.shr(64, frac, sh)?;
        let qn = m.ku(64, inf_bits | (1u64 << (fb - 1)));
        let nan = m.or(64, payload, qn)?;
        let infv = if overflow == Overflow::Sat {
            maxb
        } else {
            infb
        };
        let sp = m.select(u64t, is_nan, nan, infv)?;
        let r = m.select(u64t, special, sp, r)?;
        let sshift = m.ku(64, to.bits() as u64 - 1);
        let sbit = m.shl(64, sign, sshift)?;
        let r = m.or(64, r, sbit)?;
        self.resize(r, 64, to.bits())
    }

    /// Rounds the exact magnitude `sig * 2^(te - bias - lead)` to `k` in `mode` with integer
    /// arithmetic; `sig` (`u64`, below 2^(lead+1)) has its leading one at bit `lead` (or is
    /// a denormal `f64` significand with `lead` 52), `te` (`u64`, signed) is the biased
    /// exponent in `k` of bit `lead`. Bits below the rounding position only matter through
    /// their value, so a caller folds a sticky bit into bit 0. Gradual underflow gives
    /// denormals; overflow follows `overflow`. Returns the magnitude's raw bits (`u64`, no
    /// sign; `neg` only chooses the direction of `.ru`/`.rd`). `lead` is at most 61.
    #[allow(clippy::too_many_arguments)]
    pub fn round_sig(
        &mut self,
        k: FKind,
        neg: Word,
        te: Word,
        sig: Word,
        lead: u64,
        mode: RoundingMode,
        overflow: Overflow,
    ) -> EResult<Word> {
        debug_assert!(lead <= 61);
        let p = k.precision() as u64;
        let fb = p - 1;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let normal = m.sge(te, one)?;
        // shift = lead + 1 - p (normal) or lead + 2 - p - te (denormal), at most 63.
        let base_shift = lead + 1 - p;
        let ks = m.ku(64, base_shift + 1);
        let dshift = m.isub(64, ks, te)?;
        let k63s = m.ku(64, 63);
        let big = m.slt(k63s, dshift)?;
        let dshift = m.select(u64t, big, k63s, dshift)?;
        let ns = m.ku(64, base_shift);
        let shift = m.select(u64t, normal, ns, dshift)?;
        let kept = m.shr(64, sig, shift)?;
        let full = m.shl(64, one, shift)?;
        let rmask = m.isub(64, full, one)?;
        let rem = m.and(64, sig, rmask)?;
        let half = m.shr(64, full, one)?;
        let inexact = m.ine(rem, zero)?;
        let inc = match mode {
            RoundingMode::Re => {
                let bt = m.bool_t();
                let gt = m.b.u_greater_than(bt, None, rem, half);
                let gt = gt;
                let eq = m.ieq(rem, half)?;
                let odd = m.and(64, kept, one)?;
                let odd = m.ine(odd, zero)?;
                let tie = m.land(eq, odd)?;
                m.lor(gt, tie)?
            }
            RoundingMode::Rna => m.uge(rem, half)?,
            RoundingMode::Rz => m.const_bool(false),
            RoundingMode::Ru => {
                let pos = m.lnot(neg)?;
                m.land(inexact, pos)?
            }
            RoundingMode::Rd => m.land(inexact, neg)?,
        };
        let incv = m.select(u64t, inc, one, zero)?;
        let kept = m.iadd(64, kept, incv)?;
        let kfb = m.ku(64, fb);
        let tem1 = m.isub(64, te, one)?;
        let base = m.shl(64, tem1, kfb)?;
        let base = m.select(u64t, normal, base, zero)?;
        let r = m.iadd(64, base, kept)?;
        // Overflow: the exponent field reached all ones (or te was far beyond it, in which
        // case the shift above wrapped: test te directly too).
        let inf_bits = (2 * k.bias() as u64 + 1) << fb;
        let infb = m.ku(64, inf_bits);
        let maxb = m.ku(64, inf_bits - 1);
        let over1 = m.uge(r, infb)?;
        let te_lim = m.ku(64, 2 * k.bias() as u64 + 1);
        let over2 = m.sge(te, te_lim)?;
        let over = m.lor(over1, over2)?;
        let away = match (overflow, mode) {
            (Overflow::Inf, _) => m.const_bool(true),
            (Overflow::Sat, _) => m.const_bool(false),
            (Overflow::Ieee, RoundingMode::Re | RoundingMode::Rna) => m.const_bool(true),
            (Overflow::Ieee, RoundingMode::Rz) => m.const_bool(false),
            (Overflow::Ieee, RoundingMode::Ru) => m.lnot(neg)?,
            (Overflow::Ieee, RoundingMode::Rd) => neg,
        };
        let ovv = m.select(u64t, away, infb, maxb)?;
        m.select(u64t, over, ovv, r)
    }

    /// The result of a directed (or ties-away) mode from `s = RN(x)` and the exact error
    /// `e = x - s` (`w`-bit floats; `e` NaN or `s` infinite leave `s`, except for an
    /// overflow, `overflowed`, which becomes the largest finite value in the modes rounding
    /// toward zero).
    pub fn direct(
        &mut self,
        w: u32,
        s: Word,
        e: Word,
        mode: RoundingMode,
        overflowed: Option<Word>,
    ) -> EResult<Word> {
        if mode == RoundingMode::Re {
            return Ok(s);
        }
        let m = &mut *self.m;
        let ut = m.u(w);
        let zero = m.kf(w, 0.0);
        let sb = m.bits(w, s)?;
        let one = m.ku(w, 1);
        let epos = m.fgt(e, zero)?;
        let eneg = m.flt(e, zero)?;
        let spos = m.fgt(s, zero)?;
        let sneg = m.flt(s, zero)?;
        let same_e_s = {
            let a = m.land(epos, spos)?;
            let b = m.land(eneg, sneg)?;
            m.lor(a, b)?
        };
        let opp_e_s = {
            let a = m.land(epos, sneg)?;
            let b = m.land(eneg, spos)?;
            m.lor(a, b)?
        };
        // Steps: away from zero (bits + 1) or toward zero (bits - 1).
        let (step, away) = match mode {
            RoundingMode::Ru => (epos, spos),
            RoundingMode::Rd => (eneg, sneg),
            RoundingMode::Rz => (opp_e_s, m.const_bool(false)),
            RoundingMode::Rna => {
                // A tie that RN broke toward the even neighbour nearer zero: |e| is half
                // the distance from |s| to the next float away from zero.
                let absmask = m.ku(w, (1u64 << (w - 1)) - 1);
                let ab = m.and(w, sb, absmask)?;
                let nb = m.iadd(w, ab, one)?;
                let an = m.float(w, ab)?;
                let nf = m.float(w, nb)?;
                let ulp = m.fsub(w, nf, an)?;
                let halfk = m.kf(w, 0.5);
                let hu = m.fmul(w, ulp, halfk)?;
                let ae = m.glsl(w, 4, &[e])?;
                let tie = m.feq(ae, hu)?;
                (m.land(tie, same_e_s)?, m.const_bool(true))
            }
            RoundingMode::Re => unreachable!("returned above"),
        };
        let up = m.iadd(w, sb, one)?;
        let down = m.isub(w, sb, one)?;
        let moved = m.select(ut, away, up, down)?;
        let mut r = m.select(ut, step, moved, sb)?;
        if let Some(ov) = overflowed {
            let toward = match mode {
                RoundingMode::Rz => m.const_bool(true),
                RoundingMode::Ru => sneg,
                RoundingMode::Rd => spos,
                _ => m.const_bool(false),
            };
            let t = m.land(ov, toward)?;
            let maxed = m.isub(w, sb, one)?;
            r = m.select(ut, t, maxed, r)?;
        }
        m.float(w, r)
    }
}
