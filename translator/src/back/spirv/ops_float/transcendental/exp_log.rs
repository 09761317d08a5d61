//! `fexp2`, `flog2` and `ftanh` in `f32`.
//!
//! - `exp2`: `x = n + f`, `n = RN(x)` and `f` in [-1/2, 1/2] exactly; `2^f = 1 + f·E(f)`
//!   (degree 6), and `2^n` applied to the result's bits ([`FnCx::scale_bits`]: denormal
//!   results rounded once, overflow to infinity; `x` is clamped to [-151, 129] first).
//! - `log2`: `x = m·2^e` with `m` in [sqrt(1/2), sqrt(2)) ([`FnCx::split_exp`], denormals
//!   included), `t = m - 1` exact; `log2(1+t) = t·L + t^2·V(t)` (`V` of degree 8) with
//!   `t·L` as an exact product of 12-bit halves plus small terms, and `e` added by
//!   Fast2Sum so that the large and small parts are rounded once together.
//! - `tanh`: `|x| < 0.875`: `x + x·z·T(z)`, `z = x^2` (`T` of degree 5); above:
//!   `1 - 2/(1 + 2^(2|x| log2 e))` with the `exp2` core and [`FnCx::recip_core`] (`|x|`
//!   clamped to 9.5, where the result is 1 in `f32`); the sign of `x` restored.
//!
//! Coefficients: minimax, rounded to `f32` (`scripts/remez.py`).

use super::super::emit::Emit;
use super::{INF, QNAN};
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use rspirv::spirv::Word;

/// `2^f = 1 + f E(f)` on [-1/2, 1/2]: E's coefficients.
const EXP2: [u32; 6] = [
    0x3f317218, 0x3e75fdca, 0x3d6357cf, 0x3c1db40b, 0x3aaf7a6e, 0x390bccfa,
];
/// `log2(1+t) = t/ln 2 + t^2 V(t)` on [sqrt(1/2) - 1, sqrt(2) - 1]: V's coefficients.
const LOG2: [u32; 9] = [
    0xbf38aa38, 0x3ef6388d, 0xbeb8addb, 0x3e93aeb9, 0xbe751fea, 0x3e53d763, 0xbe481cdc, 0x3e31b6d6,
    0xbdabc8bb,
];
/// `tanh x = x + x z T(z)` on [0, 0.875]: T's coefficients.
const TANH: [u32; 6] = [
    0xbeaaaa8c, 0x3e088253, 0xbd5c3463, 0x3cac27b6, 0xbbe564a7, 0x3ab3869f,
];
/// Where `tanh` leaves the polynomial for the exponential form.
const TANH_SMALL: f64 = 0.875;
/// `f32` 2·log2(e).
const TWO_LOG2E: u32 = 0x4038_aa3b;

impl FnCx<'_> {
    /// `2^f` for `f` in [-1/2, 1/2] (`f32`, in [sqrt(1/2), sqrt(2)]).
    fn exp2_core(&mut self, f: Word) -> EResult<Word> {
        let e = self.horner32(f, &EXP2)?;
        let fe = self.m.fmul(32, f, e)?;
        let one = self.m.kf(32, 1.0);
        self.m.fadd(32, one, fe)
    }

    /// `2^x` of the `f32` `x`, as an `f32`.
    pub(super) fn exp2_f32(&mut self, x: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let f32t = m.f(32);
        let lo = m.kf(32, -151.0);
        let hi = m.kf(32, 129.0);
        let below = m.flt(x, lo)?;
        let above = m.fgt(x, hi)?;
        let xc = m.select(f32t, below, lo, x)?;
        let xc = m.select(f32t, above, hi, xc)?;
        let (nf, n) = self.nearest_int32(xc)?;
        let f = self.m.fsub(32, xc, nf)?;
        let p = self.exp2_core(f)?;
        let pb = self.m.bits(32, p)?;
        let r = self.scale_bits(pb, n)?;
        self.nan_passes(x, r)
    }

    /// `log2(x)` of the `f32` `x`, as an `f32` (`±0`: `-inf`; negative: the canonical NaN;
    /// `+inf`: `+inf`).
    pub(super) fn log2_f32(&mut self, x: Word) -> EResult<Word> {
        let xb = self.m.bits(32, x)?;
        let (mb, e) = self.split_exp(xb)?;
        let m = &mut *self.m;
        // m above sqrt(2): m/2 and e + 1.
        let sqrt2 = m.ku(32, 0x3fb5_04f3);
        let big = m.ult(sqrt2, mb)?;
        let one = m.ku(32, 1);
        let zero = m.ku(32, 0);
        let inc = self.sel(32, big, one, zero)?;
        let m = &mut *self.m;
        let e = m.iadd(32, e, inc)?;
        let k23 = m.ku(32, 23);
        let dec = m.shl(32, inc, k23)?;
        let mb = m.isub(32, mb, dec)?;
        let mf = m.float(32, mb)?;
        let onef = m.kf(32, 1.0);
        let t = m.fsub(32, mf, onef)?;
        // t·L = th·Lh (exact) + tl·Lh (exact) + t·Ll.
        let l = std::f64::consts::LOG2_E;
        let lh = (l * 2048.0).round() / 2048.0;
        let th = self.hi12(t)?;
        let m = &mut *self.m;
        let tl = m.fsub(32, t, th)?;
        let klh = m.kf(32, lh);
        let kll = m.kf(32, l - lh);
        let h = m.fmul(32, th, klh)?;
        let a = m.fmul(32, tl, klh)?;
        let b = m.fmul(32, t, kll)?;
        let v = self.horner32(t, &LOG2)?;
        let m = &mut *self.m;
        let tt = m.fmul(32, t, t)?;
        let c = m.fmul(32, tt, v)?;
        let lo = m.fadd(32, a, b)?;
        let lo = m.fadd(32, lo, c)?;
        // e + h by Fast2Sum (|e| >= 1 > |h|, or e = 0 and the error is 0).
        let f32t = m.f(32);
        let ef = m.b.convert_s_to_f(f32t, None, e);
        let s = m.fadd(32, ef, h)?;
        let d = m.fsub(32, s, ef)?;
        let err = m.fsub(32, h, d)?;
        let lo = m.fadd(32, err, lo)?;
        let r = m.fadd(32, s, lo)?;
        let rb = m.bits(32, r)?;
        // Specials.
        let absm = m.ku(32, 0x7FFF_FFFF);
        let ab = m.and(32, xb, absm)?;
        let is0 = m.ieq(ab, zero)?;
        let neg = m.ine(ab, xb)?;
        let inf = m.ku(32, INF);
        let is_inf = m.ieq(xb, inf)?;
        let ninf = m.ku(32, INF | 0x8000_0000);
        let qnan = m.ku(32, QNAN);
        let rb = self.sel(32, is_inf, inf, rb)?;
        let rb = self.sel(32, neg, qnan, rb)?;
        let rb = self.sel(32, is0, ninf, rb)?;
        self.nan_passes(x, rb)
    }

    /// `tanh(x)` of the `f32` `x`, as an `f32`.
    pub(super) fn tanh_f32(&mut self, x: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let f32t = m.f(32);
        let xb = m.bits(32, x)?;
        let absm = m.ku(32, 0x7FFF_FFFF);
        let ab = m.and(32, xb, absm)?;
        let ax = m.float(32, ab)?;
        // Small: ax + ax·z·T(z).
        let z = m.fmul(32, ax, ax)?;
        let tz = self.horner32(z, &TANH)?;
        let m = &mut *self.m;
        let zt = m.fmul(32, z, tz)?;
        let c = m.fmul(32, ax, zt)?;
        let small = m.fadd(32, ax, c)?;
        // Large: 1 - 2/(1 + 2^a), a = 2 ax log2(e) <= 27.4 (2^a normal).
        let cap = m.kf(32, 9.5);
        let over = m.fgt(ax, cap)?;
        let axc = m.select(f32t, over, cap, ax)?;
        let k = self.kbits(TWO_LOG2E);
        let a = self.m.fmul(32, axc, k)?;
        let (nf, n) = self.nearest_int32(a)?;
        let f = self.m.fsub(32, a, nf)?;
        let p = self.exp2_core(f)?;
        let pb = self.m.bits(32, p)?;
        let eb = self.add_exponent(pb, n)?;
        let m = &mut *self.m;
        let ex = m.float(32, eb)?;
        let one = m.kf(32, 1.0);
        let d = m.fadd(32, one, ex)?;
        let q = self.recip_core(d)?;
        let m = &mut *self.m;
        let q2 = m.fadd(32, q, q)?;
        let large = m.fsub(32, one, q2)?;
        let ks = m.kf(32, TANH_SMALL);
        let is_small = m.flt(ax, ks)?;
        let r = m.select(f32t, is_small, small, large)?;
        // The sign of x.
        let rb = m.bits(32, r)?;
        let sm = m.ku(32, 0x8000_0000);
        let sx = m.and(32, xb, sm)?;
        let rb = m.or(32, rb, sx)?;
        self.nan_passes(x, rb)
    }
}
