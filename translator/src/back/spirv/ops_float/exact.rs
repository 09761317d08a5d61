//! Exact `.f`, `.hf` and `.bf` arithmetic in integers: products, `fmad`, quotients, roots
//! and integer-to-float conversions rounded once in any mode, with no float type wider than
//! the operands' (docs/spec-notes.md §55).
//!
//! This is the portable lowering: it assumes nothing of the device beyond 64-bit integers
//! (which the runtime requires anyway), so a kernel that uses it needs no `Float64` and no
//! fused `Fma`. Finite nonzero operands are unpacked to a sign, an integer significand with
//! its leading one at bit `p - 1` (denormals normalized with `FindUMsb`) and an unbiased
//! exponent; the exact result becomes a significand with its leading one at a known bit and
//! every lost bit folded into a sticky bit 0:
//!
//! - a product is the exact 2p-bit product of the significands;
//! - `fmad` adds the addend to the exact product, both placed with their leading ones at
//!   bit 61 of a `u64`, the one with the smaller exponent shifted right with its lost bits as
//!   a sticky bit (a shift that loses bits leaves at most one bit of cancellation, so the
//!   sticky bit stays far below the rounding position);
//! - a quotient is `(ma << s) / mb` with the remainder as the sticky bit;
//! - a root is the integer floor of the root of the significand scaled to an even exponent,
//!   from a float estimate, one integer Newton step and a final correction by its exact
//!   remainder, which is the sticky bit.
//!
//! [`FnCx::round_sig`] rounds that once to the type. Zeros, infinities and NaNs are built
//! from the operands' bits here too (no device float operation decides a special case, so
//! no driver folding of a constant operand can change them).

use super::emit::Emit;
use super::round::Overflow;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::ModuleCx;
use crate::ir::{Opcode, RoundingMode};
use rspirv::spirv::Word;

/// The exponent given to a zero operand: far below any nonzero value, so that an alignment
/// shifts it out entirely.
pub(super) const ZERO_EXP: i64 = -100_000;

/// A finite operand of a narrow type, unpacked (all `u64`).
pub struct Parts {
    /// The sign bit (0 or 1).
    pub sign: Word,
    /// The significand, its leading one at bit `p - 1` (0 for a zero).
    pub m: Word,
    /// The unbiased exponent of bit `p - 1`, signed ([`ZERO_EXP`] for a zero).
    pub e: Word,
    /// Whether the operand is ±0 (`bool`).
    pub zero: Word,
    /// Whether it is infinite (`bool`).
    pub inf: Word,
    /// Whether it is a NaN (`bool`).
    pub nan: Word,
}

/// An exact magnitude ready for [`FnCx::round_sig`]: `sig * 2^(e - lead)` with `sig`'s
/// leading one at bit `lead` and any lost bits folded into bit 0.
pub struct Wide {
    /// Negative (`bool`).
    pub neg: Word,
    /// The unbiased exponent of bit `lead` (`u64`, signed).
    pub e: Word,
    /// The significand (`u64`).
    pub sig: Word,
    /// Position of its leading one (at most 61).
    pub lead: u64,
}

impl FnCx<'_> {
    /// Position of the highest set bit of a nonzero `u64` (as `u64`).
    pub(super) fn msb64(&mut self, x: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let u32t = m.u(32);
        let k32 = m.ku(64, 32);
        let hi = m.shr(64, x, k32)?;
        let hi = m.b.u_convert(u32t, None, hi);
        let lo = m.b.u_convert(u32t, None, x);
        let mh = find_msb(m, hi)?;
        let ml = find_msb(m, lo)?;
        let z = m.ku(32, 0);
        let hnz = m.ine(hi, z)?;
        let k32w = m.ku(32, 32);
        let mh = m.iadd(32, mh, k32w)?;
        let r = m.select(u32t, hnz, mh, ml)?;
        let u64t = m.u(64);
        Ok(m.b.u_convert(u64t, None, r))
    }

    /// Unpacks the raw bits of a value of `k` (`k.bits()` wide).
    pub fn unpack(&mut self, k: FKind, bits: Word) -> EResult<Parts> {
        let fb = k.precision() as u64 - 1;
        let x = self.resize(bits, k.bits(), 64)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let ks = m.ku(64, k.bits() as u64 - 1);
        let sign = m.shr(64, x, ks)?;
        let kfb = m.ku(64, fb);
        let ef = m.shr(64, x, kfb)?;
        let emax = 2 * k.bias() as u64 + 1;
        let kemax = m.ku(64, emax);
        let ef = m.and(64, ef, kemax)?;
        let fm = m.ku(64, (1u64 << fb) - 1);
        let frac = m.and(64, x, fm)?;
        let special = m.ieq(ef, kemax)?;
        let fnz = m.ine(frac, zero)?;
        let fz = m.lnot(fnz)?;
        let nan = m.land(special, fnz)?;
        let inf = m.land(special, fz)?;
        let den = m.ieq(ef, zero)?;
        let imp = m.ku(64, 1u64 << fb);
        let withimp = m.or(64, frac, imp)?;
        let sig = m.select(u64t, den, frac, withimp)?;
        let ef = m.select(u64t, den, one, ef)?;
        let is0 = m.ieq(sig, zero)?;
        let safe = m.select(u64t, is0, imp, sig)?;
        let p = if k == FKind::F64 {
            self.msb64(safe)?
        } else {
            // The significand fits 32 bits: one FindUMsb.
            let u32t = m.u(32);
            let s32 = m.b.u_convert(u32t, None, safe);
            let p = find_msb(m, s32)?;
            m.b.u_convert(u64t, None, p)
        };
        let m = &mut *self.m;
        let sh = m.isub(64, kfb, p)?;
        let sig = m.shl(64, sig, sh)?;
        let bias = m.ku(64, k.bias() as u64);
        let e = m.isub(64, ef, bias)?;
        let e = m.isub(64, e, sh)?;
        let ze = m.ku(64, ZERO_EXP as u64);
        let e = m.select(u64t, is0, ze, e)?;
        Ok(Parts {
            sign,
            m: sig,
            e,
            zero: is0,
            inf,
            nan,
        })
    }

    /// Rounds `w` once to `k` in `mode` (IEEE overflow); returns raw bits (`k.bits()` wide).
    pub fn pack_wide(&mut self, k: FKind, w: &Wide, mode: RoundingMode) -> EResult<Word> {
        self.pack_wide_with(k, w, mode, Overflow::Ieee)
    }

    /// [`FnCx::pack_wide`] with a chosen overflow rule.
    pub fn pack_wide_with(
        &mut self,
        k: FKind,
        w: &Wide,
        mode: RoundingMode,
        overflow: Overflow,
    ) -> EResult<Word> {
        let bias = self.m.ku(64, k.bias() as u64);
        let te = self.m.iadd(64, w.e, bias)?;
        // round_sig needs the significand at least as wide as the type's (a `.bf` product
        // rounded to `.f` is narrower): move its leading one up to bit 61.
        let (sig, lead) = if w.lead < k.precision() as u64 + 1 {
            let s = self.m.ku(64, 61 - w.lead);
            (self.m.shl(64, w.sig, s)?, 61)
        } else {
            (w.sig, w.lead)
        };
        let r = self.round_sig(k, w.neg, te, sig, lead, mode, overflow)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let sb = m.ku(64, 1u64 << (k.bits() - 1));
        let zero = m.ku(64, 0);
        let s = m.select(u64t, w.neg, sb, zero)?;
        let r = m.or(64, r, s)?;
        self.resize(r, 64, k.bits())
    }

    /// The exact product of finite nonzero `a` and `b`, its leading one at bit `2p - 1`.
    pub fn exact_mul(&mut self, k: FKind, a: &Parts, b: &Parts) -> EResult<Wide> {
        let lead = 2 * k.precision() as u64 - 1;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let p = m.imul(64, a.m, b.m)?;
        let klead = m.ku(64, 1u64 << lead);
        let top = m.uge(p, klead)?;
        let p2 = m.shl(64, p, one)?;
        let sig = m.select(u64t, top, p, p2)?;
        // Bit 2p - 2 of the product weighs 2^(ea + eb); bit 2p - 1 one more.
        let e = m.iadd(64, a.e, b.e)?;
        let inc = m.select(u64t, top, one, zero)?;
        let e = m.iadd(64, e, inc)?;
        let sign = m.xor(64, a.sign, b.sign)?;
        let neg = m.ine(sign, zero)?;
        Ok(Wide { neg, e, sig, lead })
    }

    /// `a * b + c` for finite `a`, `b`, `c`, exact, and whether it is an exact zero (whose
    /// sign IEEE fixes: -0 only for two -0 addends, or with `.rd` for opposite signs).
    pub fn exact_fma(
        &mut self,
        k: FKind,
        a: &Parts,
        b: &Parts,
        c: &Parts,
        mode: RoundingMode,
    ) -> EResult<(Wide, Word, Word)> {
        let fb = k.precision() as u64 - 1;
        let prod = self.exact_mul(k, a, b)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        // Both significands with their leading ones at bit 61.
        let kp = m.ku(64, 61 - prod.lead);
        let pm = m.shl(64, prod.sig, kp)?;
        let kc = m.ku(64, 61 - fb);
        let cm = m.shl(64, c.m, kc)?;
        let pzero = m.lor(a.zero, b.zero)?;
        let ze = m.ku(64, ZERO_EXP as u64);
        let ep = m.select(u64t, pzero, ze, prod.e)?;
        let pm = m.select(u64t, pzero, zero, pm)?;
        let ec = c.e;
        let sp = m.xor(64, a.sign, b.sign)?;
        let sc = c.sign;
        // Align the smaller exponent's operand to the larger, with a sticky bit.
        let d = m.isub(64, ep, ec)?;
        let cbig = m.slt(d, zero)?;
        let nd = m.isub(64, zero, d)?;
        let ad = m.select(u64t, cbig, nd, d)?;
        let k63 = m.ku(64, 63);
        let far = m.slt(k63, ad)?;
        let ad = m.select(u64t, far, k63, ad)?;
        let big = m.select(u64t, cbig, cm, pm)?;
        let small = m.select(u64t, cbig, pm, cm)?;
        let e = m.select(u64t, cbig, ec, ep)?;
        let sbig = m.select(u64t, cbig, sc, sp)?;
        let shifted = m.shr(64, small, ad)?;
        let full = m.shl(64, one, ad)?;
        let lowmask = m.isub(64, full, one)?;
        let lost = m.and(64, small, lowmask)?;
        let lnz = m.ine(lost, zero)?;
        let st = m.select(u64t, lnz, one, zero)?;
        let small = m.or(64, shifted, st)?;
        let sub = m.ine(sp, sc)?;
        let sum = m.iadd(64, big, small)?;
        let ge = m.uge(big, small)?;
        let d1 = m.isub(64, big, small)?;
        let d2 = m.isub(64, small, big)?;
        let diff = m.select(u64t, ge, d1, d2)?;
        let ssmall = m.select(u64t, cbig, sp, sc)?;
        let dsign = m.select(u64t, ge, sbig, ssmall)?;
        let r = m.select(u64t, sub, diff, sum)?;
        let sign = m.select(u64t, sub, dsign, sp)?;
        let rzero = m.ieq(r, zero)?;
        let zs = if mode == RoundingMode::Rd {
            m.or(64, sp, sc)?
        } else {
            m.and(64, sp, sc)?
        };
        let zneg = m.ine(zs, zero)?;
        // Normalize to bit 61: a carry to bit 62 shifts right (keeping the lost bit as
        // sticky); a cancellation shifts left.
        let safe = m.select(u64t, rzero, one, r)?;
        let pos = self.msb64(safe)?;
        let m = &mut *self.m;
        let k61 = m.ku(64, 61);
        let carry = m.ult(k61, pos)?;
        let r1 = m.shr(64, r, one)?;
        let rb = m.and(64, r, one)?;
        let r1 = m.or(64, r1, rb)?;
        let ls = m.isub(64, k61, pos)?;
        let ls = m.select(u64t, carry, zero, ls)?;
        let r2 = m.shl(64, r, ls)?;
        let sig = m.select(u64t, carry, r1, r2)?;
        let e = m.iadd(64, e, pos)?;
        let e = m.isub(64, e, k61)?;
        let neg = m.ine(sign, zero)?;
        Ok((
            Wide {
                neg,
                e,
                sig,
                lead: 61,
            },
            rzero,
            zneg,
        ))
    }

    /// `a / b` for finite nonzero `a`, `b`: one integer division, the remainder sticky.
    pub fn exact_div(&mut self, k: FKind, a: &Parts, b: &Parts) -> EResult<Wide> {
        let fb = k.precision() as u64 - 1;
        let s = 62 - fb;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let ks = m.ku(64, s);
        let n = m.shl(64, a.m, ks)?;
        let q = m.udiv(64, n, b.m)?;
        let r = m.umod(64, n, b.m)?;
        let rnz = m.ine(r, zero)?;
        let st = m.select(u64t, rnz, one, zero)?;
        let q = m.or(64, q, st)?;
        // q's leading one is at bit s when ma >= mb, else at s - 1.
        let klead = m.ku(64, 1u64 << s);
        let low = m.ult(q, klead)?;
        let q2 = m.shl(64, q, one)?;
        let sig = m.select(u64t, low, q2, q)?;
        let e = m.isub(64, a.e, b.e)?;
        let dec = m.select(u64t, low, one, zero)?;
        let e = m.isub(64, e, dec)?;
        let sign = m.xor(64, a.sign, b.sign)?;
        let neg = m.ine(sign, zero)?;
        Ok(Wide {
            neg,
            e,
            sig,
            lead: s,
        })
    }

    /// `sqrt(a)` for finite positive `a`: `Y = floor(sqrt(X))` for the significand scaled to
    /// `X` in [2^60, 2^62) with an even exponent; the remainder `X - Y^2` is the sticky bit.
    ///
    /// `Y` starts from an `f32` root of `X` (any error up to 2^-21 relative: Vulkan bounds
    /// `Sqrt` by a few ULP), then one integer Newton step `(Y + X / Y) / 2` brings it to the
    /// floor or one above, and the sign of the exact remainder fixes the last unit.
    pub fn exact_sqrt(&mut self, k: FKind, a: &Parts) -> EResult<Wide> {
        let fb = k.precision() as u64 - 1;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let f32t = m.f(32);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        // X = ma << t with t = 60 - fb or 61 - fb, so that e - fb - t is even.
        let k60 = m.ku(64, 60);
        let par = m.isub(64, a.e, k60)?;
        let par = m.and(64, par, one)?;
        let kt = m.ku(64, 60 - fb);
        let t = m.iadd(64, kt, par)?;
        let x = m.shl(64, a.m, t)?;
        let xf = m.b.convert_u_to_f(f32t, None, x);
        let y0 = m.glsl(32, rspirv::spirv::GlslStd450Op::Sqrt as u32, &[xf])?;
        let y0 = m.b.convert_f_to_u(u64t, None, y0);
        // The estimate is at least 2^29 (X >= 2^60), so the division is safe.
        let q = m.udiv(64, x, y0)?;
        let y = m.iadd(64, y0, q)?;
        let y = m.shr(64, y, one)?;
        let yy = m.imul(64, y, y)?;
        let d = m.isub(64, x, yy)?;
        let over = m.slt(d, zero)?;
        let y2 = m.iadd(64, y, y)?;
        let d_dn = m.iadd(64, d, y2)?;
        let d_dn = m.isub(64, d_dn, one)?;
        let y_dn = m.isub(64, y, one)?;
        let d = m.select(u64t, over, d_dn, d)?;
        let y = m.select(u64t, over, y_dn, y)?;
        let dnz = m.ine(d, zero)?;
        let st = m.select(u64t, dnz, one, zero)?;
        let ys = m.shl(64, y, one)?;
        let sig = m.or(64, ys, st)?;
        // sqrt(a) = Y * 2^((e - fb - t) / 2); bit 31 of sig (bit 30 of Y) weighs
        // 2^((e - fb - t) / 2 + 30).
        let kfb = m.ku(64, fb);
        let ex = m.isub(64, a.e, kfb)?;
        let ex = m.isub(64, ex, t)?;
        let ex = m.sar(64, ex, one)?;
        let k30 = m.ku(64, 30);
        let e = m.iadd(64, ex, k30)?;
        let neg = m.const_bool(false);
        Ok(Wide {
            neg,
            e,
            sig,
            lead: 31,
        })
    }

    /// The raw bits of `op` (`fmul fdiv fsqrt fmad`) on raw `.f`/`.hf`/`.bf` operands `s`
    /// (already flushed for `.ftz`), correctly rounded to `k` in `mode`, computed in
    /// integers. Special operands and results follow IEEE 754 and PISA's NaN rule (the
    /// first NaN operand, quieted; the canonical quiet NaN for an invalid operation).
    pub fn exact_op(
        &mut self,
        k: FKind,
        op: Opcode,
        s: &[Word],
        mode: RoundingMode,
    ) -> EResult<Word> {
        let mut parts = Vec::with_capacity(s.len());
        for &x in s {
            parts.push(self.unpack(k, x)?);
        }
        let w = k.bits();
        let (finite, special) = match op {
            Opcode::Fmul => {
                let r = self.exact_mul(k, &parts[0], &parts[1])?;
                let r = self.pack_wide(k, &r, mode)?;
                let special = self.mul_special(k, s, &parts[0], &parts[1])?;
                (r, special)
            }
            Opcode::Fdiv => {
                let r = self.exact_div(k, &parts[0], &parts[1])?;
                let r = self.pack_wide(k, &r, mode)?;
                let special = self.div_special(k, s, &parts[0], &parts[1])?;
                (r, special)
            }
            Opcode::Fsqrt => {
                let r = self.exact_sqrt(k, &parts[0])?;
                let r = self.pack_wide(k, &r, mode)?;
                let special = self.sqrt_special(k, s[0], &parts[0])?;
                (r, special)
            }
            Opcode::Fmad => {
                let (r, rzero, zneg) = self.exact_fma(k, &parts[0], &parts[1], &parts[2], mode)?;
                let r = self.pack_wide(k, &r, mode)?;
                let m = &mut *self.m;
                let t = m.u(w);
                let sb = m.ku(w, k.sign_mask());
                let z = m.ku(w, 0);
                let zb = m.select(t, zneg, sb, z)?;
                let r = m.select(t, rzero, zb, r)?;
                let special = self.fma_special(k, s, &parts)?;
                (r, special)
            }
            _ => return Err(self.err(format!("`{}` has no exact form", op.as_str()))),
        };
        let (is_special, value) = special;
        let t = self.m.u(w);
        self.m.select(t, is_special, value, finite)
    }

    /// The quieted first NaN among `s` (raw bits; `nan[i]` says whether `s[i]` is one), and
    /// whether any operand is a NaN.
    pub(super) fn first_nan(
        &mut self,
        k: FKind,
        s: &[Word],
        nan: &[Word],
    ) -> EResult<(Word, Word)> {
        let w = k.bits();
        let m = &mut *self.m;
        let t = m.u(w);
        let qb = m.ku(w, k.quiet_bit());
        let mut any = nan[nan.len() - 1];
        let mut v = m.or(w, s[s.len() - 1], qb)?;
        for i in (0..s.len() - 1).rev() {
            let q = m.or(w, s[i], qb)?;
            v = m.select(t, nan[i], q, v)?;
            any = m.lor(any, nan[i])?;
        }
        Ok((v, any))
    }

    /// An infinity (or a zero) of `k` with the sign bit `sign` (`u64` 0 or 1).
    fn signed_const(&mut self, k: FKind, sign: Word, magnitude: u64) -> EResult<Word> {
        let w = k.bits();
        let s = self.resize(sign, 64, w)?;
        let m = &mut *self.m;
        let ks = m.ku(w, w as u64 - 1);
        let s = m.shl(w, s, ks)?;
        let mag = m.ku(w, magnitude);
        m.or(w, s, mag)
    }

    fn inf_bits(k: FKind) -> u64 {
        k.exp_mask()
    }

    /// Special cases of `a * b`: NaN, `0 * inf` (invalid), infinities, zeros.
    fn mul_special(&mut self, k: FKind, s: &[Word], a: &Parts, b: &Parts) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let any_inf = m.lor(a.inf, b.inf)?;
        let any_zero = m.lor(a.zero, b.zero)?;
        let invalid = m.land(any_inf, any_zero)?;
        let special = m.lor(any_inf, any_zero)?;
        self.signed_special(k, s, a, b, any_inf, invalid, special)
    }

    /// Special cases of `a / b`: NaN, `0/0` and `inf/inf` (invalid), `x/0`, `inf/x`, `0/x`,
    /// `x/inf`.
    fn div_special(&mut self, k: FKind, s: &[Word], a: &Parts, b: &Parts) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let zz = m.land(a.zero, b.zero)?;
        let ii = m.land(a.inf, b.inf)?;
        let invalid = m.lor(zz, ii)?;
        let to_inf = m.lor(a.inf, b.zero)?;
        let any_inf = m.lor(a.inf, b.inf)?;
        let any_zero = m.lor(a.zero, b.zero)?;
        let special = m.lor(any_inf, any_zero)?;
        self.signed_special(k, s, a, b, to_inf, invalid, special)
    }

    /// The special result of a product or quotient of `a` and `b` (raw bits `s`): the first
    /// NaN operand quieted, else the canonical NaN when `invalid`, else an infinity (when
    /// `to_inf`) or a zero with the sign `a ^ b`; and whether it applies (`special`, or a
    /// NaN operand).
    #[allow(clippy::too_many_arguments)]
    fn signed_special(
        &mut self,
        k: FKind,
        s: &[Word],
        a: &Parts,
        b: &Parts,
        to_inf: Word,
        invalid: Word,
        special: Word,
    ) -> EResult<(Word, Word)> {
        let (nan, any_nan) = self.first_nan(k, &s[..2], &[a.nan, b.nan])?;
        let sign = self.m.xor(64, a.sign, b.sign)?;
        let inf = self.signed_const(k, sign, Self::inf_bits(k))?;
        let zero = self.signed_const(k, sign, 0)?;
        let w = k.bits();
        let m = &mut *self.m;
        let t = m.u(w);
        let qn = m.ku(w, k.qnan());
        let r = m.select(t, to_inf, inf, zero)?;
        let r = m.select(t, invalid, qn, r)?;
        let r = m.select(t, any_nan, nan, r)?;
        let sp = m.lor(special, any_nan)?;
        Ok((sp, r))
    }

    /// Special cases of `sqrt(a)`: NaN, negative (invalid), ±0, +inf.
    fn sqrt_special(&mut self, k: FKind, x: Word, a: &Parts) -> EResult<(Word, Word)> {
        let w = k.bits();
        let m = &mut *self.m;
        let t = m.u(w);
        let zero = m.ku(64, 0);
        let negative = m.ine(a.sign, zero)?;
        let nz = m.lnot(a.zero)?;
        let invalid = m.land(negative, nz)?;
        let qn = m.ku(w, k.qnan());
        let qb = m.ku(w, k.quiet_bit());
        let quiet = m.or(w, x, qb)?;
        // ±0 and +inf are their own roots; -inf is invalid (negative).
        let r = m.select(t, invalid, qn, x)?;
        let r = m.select(t, a.nan, quiet, r)?;
        let sp = m.lor(a.zero, a.inf)?;
        let sp = m.lor(sp, invalid)?;
        let sp = m.lor(sp, a.nan)?;
        Ok((sp, r))
    }

    /// Special cases of `a * b + c` with an infinite or NaN operand.
    fn fma_special(&mut self, k: FKind, s: &[Word], p: &[Parts]) -> EResult<(Word, Word)> {
        let (nan, any_nan) = self.first_nan(k, s, &[p[0].nan, p[1].nan, p[2].nan])?;
        let sp = self.m.xor(64, p[0].sign, p[1].sign)?;
        let pinf = self.signed_const(k, sp, Self::inf_bits(k))?;
        let w = k.bits();
        let m = &mut *self.m;
        let t = m.u(w);
        let qn = m.ku(w, k.qnan());
        let ab_inf = m.lor(p[0].inf, p[1].inf)?;
        let ab_zero = m.lor(p[0].zero, p[1].zero)?;
        let invalid_mul = m.land(ab_inf, ab_zero)?;
        // inf + (-inf): the product's infinity meets an addend of the other sign.
        let opposite = m.ine(sp, p[2].sign)?;
        let clash = m.land(ab_inf, p[2].inf)?;
        let clash = m.land(clash, opposite)?;
        let invalid = m.lor(invalid_mul, clash)?;
        // An infinite product wins; finite factors give an infinite addend.
        let r = m.select(t, ab_inf, pinf, s[2])?;
        let r = m.select(t, invalid, qn, r)?;
        let r = m.select(t, any_nan, nan, r)?;
        let sp = m.lor(ab_inf, p[2].inf)?;
        let sp = m.lor(sp, any_nan)?;
        Ok((sp, r))
    }

    /// The integer `x` (`w` bits, `signed` or not) rounded once to `to` in `mode`; overflow
    /// gives infinity (or the largest finite value with `dsat`). Raw bits of `to`.
    pub fn exact_int_to_float(
        &mut self,
        x: Word,
        w: u32,
        signed: bool,
        to: FKind,
        mode: RoundingMode,
        dsat: bool,
    ) -> EResult<Word> {
        let x = if signed {
            self.sresize(x, w, 64)?
        } else {
            self.resize(x, w, 64)?
        };
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let neg = if signed {
            m.slt(x, zero)?
        } else {
            m.const_bool(false)
        };
        let nx = m.isub(64, zero, x)?;
        let mag = m.select(u64t, neg, nx, x)?;
        let is0 = m.ieq(mag, zero)?;
        let safe = m.select(u64t, is0, one, mag)?;
        let pos = self.msb64(safe)?;
        let m = &mut *self.m;
        // Leading one to bit 61: right by 1 or 2 (sticky) for the widest values, else left.
        let k61 = m.ku(64, 61);
        let above = m.ult(k61, pos)?;
        let rs = m.isub(64, pos, k61)?;
        let rs = m.select(u64t, above, rs, zero)?;
        let shifted = m.shr(64, mag, rs)?;
        let full = m.shl(64, one, rs)?;
        let lowmask = m.isub(64, full, one)?;
        let lost = m.and(64, mag, lowmask)?;
        let lnz = m.ine(lost, zero)?;
        let st = m.select(u64t, lnz, one, zero)?;
        let down = m.or(64, shifted, st)?;
        let ls = m.isub(64, k61, pos)?;
        let ls = m.select(u64t, above, zero, ls)?;
        let up = m.shl(64, mag, ls)?;
        let sig = m.select(u64t, above, down, up)?;
        let wide = Wide {
            neg,
            e: pos,
            sig,
            lead: 61,
        };
        let ov = if dsat { Overflow::Sat } else { Overflow::Inf };
        let r = self.pack_wide_with(to, &wide, mode, ov)?;
        let tw = to.bits();
        let m = &mut *self.m;
        let t = m.u(tw);
        let z = m.ku(tw, 0);
        m.select(t, is0, z, r)
    }
}

/// `FindUMsb` of a `u32` (-1 for 0).
fn find_msb(m: &mut ModuleCx, v: Word) -> EResult<Word> {
    let u32t = m.u(32);
    let glsl = m.glsl;
    Ok(m.b.ext_inst(
        u32t,
        None,
        glsl,
        rspirv::spirv::GlslStd450Op::FindUMsb as u32,
        [rspirv::dr::Operand::IdRef(v)],
    ))
}
