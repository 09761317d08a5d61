//! Exact binary64 arithmetic in 64-bit integers: `fmul fdiv fsqrt` `.df` in the directed
//! modes and `.rna`, `fmad.df` in every mode, and `frsqrt.fast.df` (spec-notes §45–§47).
//!
//! No device float operation can round these correctly in a mode other than to nearest,
//! and no Vulkan driver guarantees a fused `f64` fma (lavapipe's is not fused), so the
//! finite, nonzero cases are computed on the operands' integer significands:
//!
//! - operands are unpacked to a sign, a significand normalized to bit 52 (denormals
//!   included, with `FindUMsb` on the 32-bit halves) and an unbiased exponent;
//! - the exact result becomes a 62-bit significand with its leading one at bit 61 and a
//!   sticky bit folded into bit 0: a product from the 128-bit product of the significands
//!   (four 32×32-bit partial products, no `OpUMulExtended`), a quotient by long division in
//!   11-bit steps (`OpUDiv`/`OpUMod` on `u64`), a square root from the device's `f64` root
//!   corrected to the integer floor with its exact remainder, `fmad` by adding the aligned
//!   addend to the 128-bit product (the shifted-out bits kept as a sticky bit);
//! - [`FnCx::round_sig`] (shared with the narrower types) rounds it once to binary64 in
//!   the mode: gradual underflow to denormals, overflow to infinity or the largest finite
//!   value as IEEE says for the mode.
//!
//! Zeros, infinities and NaNs take the device's own result (exact whatever the rounding
//! mode), except `fmad` with finite factors and an infinite addend (the addend: the
//! device's unfused product could overflow) and `fmad` with a zero, which goes through the
//! integer path for IEEE's sign of an exact zero sum.

use super::emit::Emit;
use super::exact::{Parts, ZERO_EXP};
use super::round::Overflow;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::ir::{Opcode, RoundingMode};
use rspirv::spirv::Word;

impl FnCx<'_> {
    /// `op` (`fmul fdiv fsqrt fmad`) on `f64` values `s`, correctly rounded in `mode`.
    pub fn df_exact(&mut self, op: Opcode, s: &[Word], mode: RoundingMode) -> EResult<Word> {
        let m = &mut *self.m;
        let dt = m.f(64);
        let mut nonfinite = Vec::new();
        let mut zero = Vec::new();
        for &x in s {
            let i = m.isinf(x)?;
            let n = m.isnan(x)?;
            nonfinite.push(m.lor(i, n)?);
            let z = m.kf(64, 0.0);
            zero.push(m.feq(x, z)?);
        }
        let any_of = |m: &mut crate::back::spirv::module::ModuleCx, v: &[Word]| {
            let mut r = v[0];
            for &x in &v[1..] {
                r = m.lor(r, x)?;
            }
            EResult::<Word>::Ok(r)
        };
        let (exact, native, special) = match op {
            Opcode::Fmul | Opcode::Fdiv => {
                let mul = op == Opcode::Fmul;
                let r = if mul {
                    self.df_mul(s[0], s[1], mode)?
                } else {
                    self.df_div(s[0], s[1], mode)?
                };
                let nat = if mul {
                    self.m.fmul(64, s[0], s[1])?
                } else {
                    // Its zero and infinite cases from the bits: lavapipe's shortcuts for a
                    // constant zero operand (spec-notes §113).
                    let q = self.m.fdiv(64, s[0], s[1])?;
                    self.div_specials(64, q, s[0], s[1])?
                };
                let m = &mut *self.m;
                let a = any_of(m, &nonfinite)?;
                let b = any_of(m, &zero)?;
                (r, nat, m.lor(a, b)?)
            }
            Opcode::Fsqrt => {
                let r = self.df_sqrt(s[0], mode)?;
                let m = &mut *self.m;
                let nat = m.glsl(64, 31, &[s[0]])?;
                let z = m.kf(64, 0.0);
                let neg = m.flt(s[0], z)?;
                let a = m.lor(nonfinite[0], zero[0])?;
                (r, nat, m.lor(a, neg)?)
            }
            Opcode::Fmad => {
                let r = self.df_fma(s, mode)?;
                let m = &mut *self.m;
                // Finite factors and an infinite addend: the addend (the device's unfused
                // product could overflow and meet an infinity of the other sign).
                let p = m.fmul(64, s[0], s[1])?;
                let sum = m.fadd(64, p, s[2])?;
                let ab_fin = {
                    let x = m.lor(nonfinite[0], nonfinite[1])?;
                    m.lnot(x)?
                };
                let c_inf = m.isinf(s[2])?;
                let take_c = m.land(ab_fin, c_inf)?;
                let nat = m.select(dt, take_c, s[2], sum)?;
                (r, nat, any_of(m, &nonfinite)?)
            }
            _ => return Err(self.err(format!("`{}` has no exact .df form", op.as_str()))),
        };
        let m = &mut *self.m;
        m.select(dt, special, native, exact)
    }

    /// Unpacks a finite `f64` ([`FnCx::unpack`] of its bits).
    fn unpack64(&mut self, x: Word) -> EResult<Parts> {
        let b = self.m.bits(64, x)?;
        self.unpack(FKind::F64, b)
    }

    /// The 128-bit product of two `u64` as `(hi, lo)`.
    fn mul128(&mut self, a: Word, b: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let mask = m.ku(64, 0xFFFF_FFFF);
        let k32 = m.ku(64, 32);
        let a0 = m.and(64, a, mask)?;
        let a1 = m.shr(64, a, k32)?;
        let b0 = m.and(64, b, mask)?;
        let b1 = m.shr(64, b, k32)?;
        let p00 = m.imul(64, a0, b0)?;
        let p01 = m.imul(64, a0, b1)?;
        let p10 = m.imul(64, a1, b0)?;
        let p11 = m.imul(64, a1, b1)?;
        let p00h = m.shr(64, p00, k32)?;
        let p01l = m.and(64, p01, mask)?;
        let p10l = m.and(64, p10, mask)?;
        let mid = m.iadd(64, p00h, p01l)?;
        let mid = m.iadd(64, mid, p10l)?;
        let p00l = m.and(64, p00, mask)?;
        let midl = m.shl(64, mid, k32)?;
        let lo = m.or(64, p00l, midl)?;
        let p01h = m.shr(64, p01, k32)?;
        let p10h = m.shr(64, p10, k32)?;
        let midh = m.shr(64, mid, k32)?;
        let hi = m.iadd(64, p11, p01h)?;
        let hi = m.iadd(64, hi, p10h)?;
        let hi = m.iadd(64, hi, midh)?;
        Ok((hi, lo))
    }

    /// `(hi, lo) >> s` for `s` in 0..=127, and whether a set bit was shifted out.
    fn shr128(&mut self, hi: Word, lo: Word, s: Word) -> EResult<(Word, Word, Word)> {
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let k63 = m.ku(64, 63);
        let k64 = m.ku(64, 64);
        let small = m.ult(s, k64)?;
        let s1 = m.and(64, s, k63)?;
        let inv = m.isub(64, k64, s1)?;
        let inv = m.and(64, inv, k63)?;
        let s1z = m.ieq(s1, zero)?;
        let full = m.shl(64, one, s1)?;
        let low_mask = m.isub(64, full, one)?;
        // s < 64
        let lo_a = m.shr(64, lo, s1)?;
        let carry = m.shl(64, hi, inv)?;
        let carry = m.select(u64t, s1z, zero, carry)?;
        let lo_a = m.or(64, lo_a, carry)?;
        let hi_a = m.shr(64, hi, s1)?;
        let lost_a = m.and(64, lo, low_mask)?;
        // s >= 64
        let lo_b = hi_a;
        let hl = m.and(64, hi, low_mask)?;
        let lost_b = m.or(64, lo, hl)?;
        let lo_r = m.select(u64t, small, lo_a, lo_b)?;
        let hi_r = m.select(u64t, small, hi_a, zero)?;
        let lost = m.select(u64t, small, lost_a, lost_b)?;
        let sticky = m.ine(lost, zero)?;
        Ok((hi_r, lo_r, sticky))
    }

    /// Rounds `sig * 2^(te - 1023 - 61)` (`sig`'s leading one at bit 61, sticky in bit 0)
    /// with sign `sign` (`u64` 0 or 1) to binary64 bits, returned as an `f64`.
    fn pack64(&mut self, sign: Word, te: Word, sig: Word, mode: RoundingMode) -> EResult<Word> {
        let m = &mut *self.m;
        let zero = m.ku(64, 0);
        let neg = m.ine(sign, zero)?;
        let mag = self.round_sig(FKind::F64, neg, te, sig, 61, mode, Overflow::Ieee)?;
        let m = &mut *self.m;
        let k63 = m.ku(64, 63);
        let sb = m.shl(64, sign, k63)?;
        let r = m.or(64, mag, sb)?;
        m.float(64, r)
    }

    /// `te = e + 1023` (`e` signed `u64`).
    fn biased(&mut self, e: Word) -> EResult<Word> {
        let k = self.m.ku(64, 1023);
        self.m.iadd(64, e, k)
    }

    /// `a * b` for finite nonzero `a`, `b`.
    fn df_mul(&mut self, a: Word, b: Word, mode: RoundingMode) -> EResult<Word> {
        let ua = self.unpack64(a)?;
        let ub = self.unpack64(b)?;
        let m = &mut *self.m;
        let k11 = m.ku(64, 11);
        let k10 = m.ku(64, 10);
        let am = m.shl(64, ua.m, k11)?;
        let bm = m.shl(64, ub.m, k10)?;
        let (hi, lo) = self.mul128(am, bm)?;
        // hi in [2^61, 2^63): the product's leading one at bit 125 or 126.
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let k62 = m.ku(64, 1u64 << 62);
        let top = m.uge(hi, k62)?;
        let h1 = m.shr(64, hi, one)?;
        let hb = m.and(64, hi, one)?;
        let h1 = m.or(64, h1, hb)?;
        let sig = m.select(u64t, top, h1, hi)?;
        let lnz = m.ine(lo, zero)?;
        let st = m.select(u64t, lnz, one, zero)?;
        let sig = m.or(64, sig, st)?;
        let inc = m.select(u64t, top, one, zero)?;
        let e = m.iadd(64, ua.e, ub.e)?;
        let e = m.iadd(64, e, inc)?;
        let sign = m.xor(64, ua.sign, ub.sign)?;
        let te = self.biased(e)?;
        self.pack64(sign, te, sig, mode)
    }

    /// `a / b` for finite nonzero `a`, `b`: long division, 11 quotient bits a step.
    fn df_div(&mut self, a: Word, b: Word, mode: RoundingMode) -> EResult<Word> {
        let ua = self.unpack64(a)?;
        let ub = self.unpack64(b)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let lt = m.ult(ua.m, ub.m)?;
        let a2 = m.shl(64, ua.m, one)?;
        let am = m.select(u64t, lt, a2, ua.m)?;
        let dec = m.select(u64t, lt, one, zero)?;
        // am / bm in [1, 2): the first quotient bit is 1.
        let mut q = one;
        let mut r = m.isub(64, am, ub.m)?;
        let k11 = m.ku(64, 11);
        for _ in 0..5 {
            let rs = m.shl(64, r, k11)?;
            let d = m.udiv(64, rs, ub.m)?;
            r = m.umod(64, rs, ub.m)?;
            let qs = m.shl(64, q, k11)?;
            q = m.or(64, qs, d)?;
        }
        // q has 56 bits; the remainder is the sticky bit.
        let k6 = m.ku(64, 6);
        let sig = m.shl(64, q, k6)?;
        let rnz = m.ine(r, zero)?;
        let st = m.select(u64t, rnz, one, zero)?;
        let sig = m.or(64, sig, st)?;
        let e = m.isub(64, ua.e, ub.e)?;
        let e = m.isub(64, e, dec)?;
        let sign = m.xor(64, ua.sign, ub.sign)?;
        let te = self.biased(e)?;
        self.pack64(sign, te, sig, mode)
    }

    /// For a finite positive `x`: `Y = floor(sqrt(X))` and `D = X - Y^2` with
    /// `X = m' * 2^52` in [2^104, 2^106) (`m'` the significand, doubled when the exponent
    /// is odd), and `floor(e / 2)`: `sqrt(x) = sqrt(X) * 2^(floor(e/2) - 52)`.
    ///
    /// `Y` starts from the device's `f64` root of `X` and is corrected by one unit either
    /// way with the exact remainder (computed modulo 2^64, where it is small): correct for
    /// a device root within one ULP.
    fn isqrt_parts(&mut self, x: Word) -> EResult<(Word, Word, Word)> {
        let ux = self.unpack64(x)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let dt = m.f(64);
        let one = m.ku(64, 1);
        let zero = m.ku(64, 0);
        let odd = m.and(64, ux.e, one)?;
        let mm = m.shl(64, ux.m, odd)?;
        let half_e = m.sar(64, ux.e, one)?;
        let mf = m.b.convert_u_to_f(dt, None, mm);
        let scale = m.kf(64, 2f64.powi(52));
        let xf = m.fmul(64, mf, scale)?;
        let y0 = m.glsl(64, 31, &[xf])?;
        let mut y = m.b.convert_f_to_u(u64t, None, y0);
        let k52 = m.ku(64, 52);
        let xl = m.shl(64, mm, k52)?;
        let yy = m.imul(64, y, y)?;
        let mut d = m.isub(64, xl, yy)?;
        // Too large: Y - 1, D + 2Y - 1.
        let neg = m.slt(d, zero)?;
        let y2 = m.iadd(64, y, y)?;
        let d_dn = m.iadd(64, d, y2)?;
        let d_dn = m.isub(64, d_dn, one)?;
        let y_dn = m.isub(64, y, one)?;
        d = m.select(u64t, neg, d_dn, d)?;
        y = m.select(u64t, neg, y_dn, y)?;
        // Too small: D >= 2Y + 1 gives Y + 1, D - 2Y - 1.
        let y2 = m.iadd(64, y, y)?;
        let y21 = m.iadd(64, y2, one)?;
        let up = m.sge(d, y21)?;
        let d_up = m.isub(64, d, y21)?;
        let y_up = m.iadd(64, y, one)?;
        d = m.select(u64t, up, d_up, d)?;
        y = m.select(u64t, up, y_up, y)?;
        Ok((y, d, half_e))
    }

    /// `sqrt(x)` for finite positive `x`.
    fn df_sqrt(&mut self, x: Word, mode: RoundingMode) -> EResult<Word> {
        let (y, d, half_e) = self.isqrt_parts(x)?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        // Above the midpoint Y + 1/2 exactly when D > Y (a root is never a midpoint).
        let bt = m.bool_t();
        let guard = m.b.u_greater_than(bt, None, d, y);
        let g = m.select(u64t, guard, one, zero)?;
        let dnz = m.ine(d, zero)?;
        let st = m.select(u64t, dnz, one, zero)?;
        let k9 = m.ku(64, 9);
        let k8 = m.ku(64, 8);
        let sig = m.shl(64, y, k9)?;
        let g = m.shl(64, g, k8)?;
        let sig = m.or(64, sig, g)?;
        let sig = m.or(64, sig, st)?;
        let te = self.biased(half_e)?;
        self.pack64(zero, te, sig, mode)
    }

    /// `a * b + c`, rounded once, for finite `a`, `b`, `c`.
    fn df_fma(&mut self, s: &[Word], mode: RoundingMode) -> EResult<Word> {
        let ua = self.unpack64(s[0])?;
        let ub = self.unpack64(s[1])?;
        let uc = self.unpack64(s[2])?;
        let m = &mut *self.m;
        let u64t = m.u(64);
        let zero = m.ku(64, 0);
        let one = m.ku(64, 1);
        let k11 = m.ku(64, 11);
        let k10 = m.ku(64, 10);
        let k9 = m.ku(64, 9);
        let am = m.shl(64, ua.m, k11)?;
        let bm = m.shl(64, ub.m, k10)?;
        let (ph, pl) = self.mul128(am, bm)?;
        // Product: leading one at bit 125 or 126, bit 125 weighs 2^(ea + eb). Addend:
        // leading one at bit 125, which weighs 2^ec.
        let m = &mut *self.m;
        let pzero = m.lor(ua.zero, ub.zero)?;
        let ep = m.iadd(64, ua.e, ub.e)?;
        let ze = m.ku(64, ZERO_EXP as u64);
        let ep = m.select(u64t, pzero, ze, ep)?;
        let ch = m.shl(64, uc.m, k9)?;
        let ec = uc.e;
        let d = m.isub(64, ep, ec)?;
        let dneg = m.slt(d, zero)?;
        let nd = m.isub(64, zero, d)?;
        let k127 = m.ku(64, 127);
        let dc = m.select(u64t, dneg, zero, d)?;
        let dp = m.select(u64t, dneg, nd, zero)?;
        let big_c = m.slt(k127, dc)?;
        let dc = m.select(u64t, big_c, k127, dc)?;
        let big_p = m.slt(k127, dp)?;
        let dp = m.select(u64t, big_p, k127, dp)?;
        let e = m.select(u64t, dneg, ec, ep)?;
        let (ph, pl, ps) = self.shr128(ph, pl, dp)?;
        let (ch, cl, cs) = self.shr128(ch, zero, dc)?;
        let m = &mut *self.m;
        let psv = m.select(u64t, ps, one, zero)?;
        let pl = m.or(64, pl, psv)?;
        let csv = m.select(u64t, cs, one, zero)?;
        let cl = m.or(64, cl, csv)?;
        let sp = m.xor(64, ua.sign, ub.sign)?;
        let sc = uc.sign;
        let sub = m.ine(sp, sc)?;
        // Sum (both below 2^127) or difference, larger minus smaller.
        let sl = m.iadd(64, pl, cl)?;
        let carry = m.ult(sl, pl)?;
        let cv = m.select(u64t, carry, one, zero)?;
        let sh = m.iadd(64, ph, ch)?;
        let sh = m.iadd(64, sh, cv)?;
        let hgt = {
            let bt = m.bool_t();
            m.b.u_greater_than(bt, None, ph, ch)
        };
        let heq = m.ieq(ph, ch)?;
        let lge = m.uge(pl, cl)?;
        let t = m.land(heq, lge)?;
        let p_ge = m.lor(hgt, t)?;
        let (xh, xl, yh, yl) = (
            m.select(u64t, p_ge, ph, ch)?,
            m.select(u64t, p_ge, pl, cl)?,
            m.select(u64t, p_ge, ch, ph)?,
            m.select(u64t, p_ge, cl, pl)?,
        );
        let dl = m.isub(64, xl, yl)?;
        let borrow = m.ult(xl, yl)?;
        let bv = m.select(u64t, borrow, one, zero)?;
        let dh = m.isub(64, xh, yh)?;
        let dh = m.isub(64, dh, bv)?;
        let rh = m.select(u64t, sub, dh, sh)?;
        let rl = m.select(u64t, sub, dl, sl)?;
        let dsign = m.select(u64t, p_ge, sp, sc)?;
        let sign = m.select(u64t, sub, dsign, sp)?;
        // An exact zero: -0 only for two -0 addends, or with .rd for opposite signs.
        let hz = m.ieq(rh, zero)?;
        let lz = m.ieq(rl, zero)?;
        let rzero = m.land(hz, lz)?;
        let zs = if mode == RoundingMode::Rd {
            m.or(64, sp, sc)?
        } else {
            m.and(64, sp, sc)?
        };
        let k63 = m.ku(64, 63);
        let zb = m.shl(64, zs, k63)?;
        // Normalize: leading one at position pos, then 62 bits with the rest as sticky.
        let hnz = m.ine(rh, zero)?;
        let hsafe = m.select(u64t, hnz, rh, one)?;
        let lsafe = m.select(u64t, lz, one, rl)?;
        let mh = self.msb64(hsafe)?;
        let ml = self.msb64(lsafe)?;
        let m = &mut *self.m;
        let k64 = m.ku(64, 64);
        let mh = m.iadd(64, mh, k64)?;
        let pos = m.select(u64t, hnz, mh, ml)?;
        let k61 = m.ku(64, 61);
        let above = m.uge(pos, k61)?;
        let rs = m.isub(64, pos, k61)?;
        let rs = m.select(u64t, above, rs, zero)?;
        let (_, nl, ns) = self.shr128(rh, rl, rs)?;
        let m = &mut *self.m;
        let nsv = m.select(u64t, ns, one, zero)?;
        let down = m.or(64, nl, nsv)?;
        let ls = m.isub(64, k61, pos)?;
        let ls = m.select(u64t, above, zero, ls)?;
        let upv = m.shl(64, rl, ls)?;
        let sig = m.select(u64t, above, down, upv)?;
        // te = e + pos - 125 + 1023.
        let e = m.iadd(64, e, pos)?;
        let k125 = m.ku(64, 125);
        let e = m.isub(64, e, k125)?;
        let te = self.biased(e)?;
        let r = self.pack64(sign, te, sig, mode)?;
        let m = &mut *self.m;
        let zf = m.float(64, zb)?;
        let dt = m.f(64);
        m.select(dt, rzero, zf, r)
    }

    /// `frsqrt.fast.df`: `1/sqrt(x)` within 0.5 ULP + 2^-49 ULP (to nearest).
    ///
    /// With `X`, `Y = floor(sqrt(X))` and `D = X - Y^2` of `FnCx::isqrt_parts`,
    /// `sqrt(X) = Y + f`, `f ≈ D / 2Y`. `Q = RN(2^105 / Y)` in (2^52, 2^53] has the exact
    /// residual `R = 2^105 - Q Y` (small, computed modulo 2^64); then
    /// `2^105 / sqrt(X) = Q + (R - Q f) / Y` up to terms below 2^-51, and that sum is
    /// rounded once in `f64`, then scaled by `2^(-53 - floor(e/2))` on the exponent bits
    /// (the result is normal for every positive finite `x`).
    pub fn rsqrt_df(&mut self, x: Word) -> EResult<Word> {
        let (y, d, half_e) = self.isqrt_parts(x)?;
        let m = &mut *self.m;
        let dt = m.f(64);
        let u64t = m.u(64);
        let yf = m.b.convert_u_to_f(dt, None, y);
        let df = m.b.convert_u_to_f(dt, None, d);
        let two = m.kf(64, 2.0);
        let y2 = m.fmul(64, yf, two)?;
        let f = m.fdiv(64, df, y2)?;
        let p105 = m.kf(64, 2f64.powi(105));
        let qf = m.fdiv(64, p105, yf)?;
        let q = m.b.convert_f_to_u(u64t, None, qf);
        let qy = m.imul(64, q, y)?;
        let zero = m.ku(64, 0);
        let r = m.isub(64, zero, qy)?;
        let rf = m.b.convert_s_to_f(dt, None, r);
        let qfv = m.fmul(64, qf, f)?;
        let num = m.fsub(64, rf, qfv)?;
        let c = m.fdiv(64, num, yf)?;
        let z = m.fadd(64, qf, c)?;
        // z in [2^52, 2^53]: scale by 2^(-53 - half_e) on the exponent field.
        let zb = m.bits(64, z)?;
        let k53 = m.ku(64, 53);
        let sc = m.iadd(64, k53, half_e)?;
        let k52 = m.ku(64, 52);
        let sc = m.shl(64, sc, k52)?;
        let rb = m.isub(64, zb, sc)?;
        let res = m.float(64, rb)?;
        // Zeros, infinities, NaNs and negative values: the device's 1/sqrt (exact there).
        let s = m.glsl(64, 31, &[x])?;
        let one = m.kf(64, 1.0);
        let nat = m.fdiv(64, one, s)?;
        let i = m.isinf(x)?;
        let n = m.isnan(x)?;
        let zf = m.kf(64, 0.0);
        let le = {
            let bt = m.bool_t();
            m.b.f_ord_less_than_equal(bt, None, x, zf)
        };
        let sp = m.lor(i, n)?;
        let sp = m.lor(sp, le)?;
        m.select(dt, sp, nat, res)
    }
}
