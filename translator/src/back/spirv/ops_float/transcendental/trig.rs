//! `fsin`/`fcos` in `f32`: a reduction by pi/2 to `r` in [-pi/4, pi/4] and the quadrant
//! `q`, then one polynomial, chosen by `q`: `sin(x) = ±sin(r)` or `±cos(r)`, and
//! `cos(x) = sin(x + pi/2)` (quadrant `q + 1`).
//!
//! Below 400 (`k = RN(x·2/pi)` < 256): Cody–Waite with pi/2 in three `f32` parts, the
//! first two of 16 bits (so `k·P1` and `k·P2` are exact), `x - k·P1` exact (Sterbenz),
//! the second subtraction's error recovered exactly (Fast2Sum) into `r_lo` with `k·P3`.
//! From 400 on (finite), in a branch taken only by the lanes that need it: Payne–Hanek
//! in integers, the product of the 24-bit significand with a 128-bit window of 2/pi's
//! bits, whose fraction (94 bits) is normalized and multiplied by pi/2 in integers
//! (relative error below 2^-29 before the final rounding).
//!
//! The polynomials (minimax, `scripts/remez.py`): `sin r = r + r·z·S(z)` and
//! `cos r = 1 + z·C(z)`, `z = r^2`, `S` and `C` of degree 3; with `a = r` (sine) or 1
//! (cosine) both are `a + a·z·P(z)`, so the quadrant selects the coefficients, and the
//! correction `r_lo` enters as `+r_lo` (sine) or `-r·r_lo` (cosine).

use super::super::emit::Emit;
use super::{INF, QNAN};
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use rspirv::dr::Operand as SpvOperand;
use rspirv::spirv::Word;

/// 2/pi's fraction bits, 32 a word, after a zero word (the integer part).
const TWO_OVER_PI: [u32; 10] = [
    0, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
    0xdebbc561, 0xb7246e3a,
];
/// `f32` 2/pi.
const TWO_OVER_PI_F: u32 = 0x3f22_f983;
/// pi/2 in three `f32` parts: 16 bits, 16 bits, 24 bits (Cody–Waite).
const PIO2: [u32; 3] = [0x3fc9_0f00, 0x37da_a200, 0x2e85_a309];
/// |x| from which the Payne–Hanek reduction is used (400.0: k < 256).
const CW_LIMIT: u64 = 0x43c8_0000;
/// pi/2·2^31, rounded (the integer multiplier of the Payne–Hanek fraction).
const PIO2_FIX: u64 = 0xC90F_DAA2;
/// `sin r = r + r z S(z)`: S's coefficients.
const SIN: [u32; 4] = [0xbe2aaaab, 0x3c0888ba, 0xb9502caa, 0x363e1627];
/// `cos r = 1 + z C(z)`: C's coefficients.
const COS: [u32; 4] = [0xbf000000, 0x3d2aaaa5, 0xbab60614, 0x37ccf406];

impl FnCx<'_> {
    /// `sin` or `cos` of the `f32` `x`, as an `f32` (NaN passes, quieted; infinities give
    /// the canonical NaN; `sin(±0) = ±0`).
    pub(super) fn sin_cos_f32(&mut self, x: Word, cos: bool) -> EResult<Word> {
        let u32t = self.m.u(32);
        let f32t = self.m.f(32);
        let xb = self.m.bits(32, x)?;
        let absm = self.m.ku(32, 0x7FFF_FFFF);
        let ab = self.m.and(32, xb, absm)?;
        // Cody–Waite for every lane (its result is replaced where it does not hold).
        let tpi = self.kbits(TWO_OVER_PI_F);
        let t = self.m.fmul(32, x, tpi)?;
        let (kf, k) = self.nearest_int32(t)?;
        let [p1, p2, p3] = PIO2.map(|p| self.kbits(p));
        let m = &mut *self.m;
        let kp1 = m.fmul(32, kf, p1)?;
        let a1 = m.fsub(32, x, kp1)?;
        let w = m.fmul(32, kf, p2)?;
        let rh = m.fsub(32, a1, w)?;
        let d = m.fsub(32, a1, rh)?;
        let e = m.fsub(32, d, w)?;
        let kp3 = m.fmul(32, kf, p3)?;
        let rl = m.fsub(32, e, kp3)?;
        // Payne–Hanek where |x| >= CW_LIMIT (finite), in a branch.
        let lim = m.ku(32, CW_LIMIT);
        let inf = m.ku(32, INF);
        let big = m.uge(ab, lim)?;
        let fin = m.ult(ab, inf)?;
        let big = m.land(big, fin)?;
        let vq = self.local_var(u32t)?;
        let vr = self.local_var(f32t)?;
        let vl = self.local_var(f32t)?;
        for (v, val) in [(vq, k), (vr, rh), (vl, rl)] {
            self.m.b.store(v, val, None, []);
        }
        self.if_then(big, |cx| {
            let (q, r) = cx.payne_hanek(xb)?;
            let zero = cx.m.kf(32, 0.0);
            for (v, val) in [(vq, q), (vr, r), (vl, zero)] {
                cx.m.b.store(v, val, None, []);
            }
            Ok(())
        })?;
        let q = self.m.b.load(u32t, None, vq, None, []);
        let rh = self.m.b.load(f32t, None, vr, None, []);
        let rl = self.m.b.load(f32t, None, vl, None, []);
        let m = &mut *self.m;
        let q = if cos {
            let one = m.ku(32, 1);
            m.iadd(32, q, one)?
        } else {
            q
        };
        // Odd quadrant: the cosine polynomial.
        let one = m.ku(32, 1);
        let low = m.and(32, q, one)?;
        let zero = m.ku(32, 0);
        let odd = m.ine(low, zero)?;
        let mut sel = Vec::new();
        for (s, c) in SIN.into_iter().zip(COS) {
            let s = self.kbits(s);
            let c = self.kbits(c);
            sel.push(self.m.select(f32t, odd, c, s)?);
        }
        let m = &mut *self.m;
        let z = m.fmul(32, rh, rh)?;
        let mut p = sel[3];
        for &c in sel[..3].iter().rev() {
            let t = m.fmul(32, p, z)?;
            p = m.fadd(32, t, c)?;
        }
        let onef = m.kf(32, 1.0);
        let a = m.select(f32t, odd, onef, rh)?;
        let rr = m.fmul(32, rh, rl)?;
        let nrr = m.b.f_negate(f32t, None, rr);
        let b = m.select(f32t, odd, nrr, rl)?;
        let zp = m.fmul(32, z, p)?;
        let azp = m.fmul(32, a, zp)?;
        let s = m.fadd(32, b, azp)?;
        let res = m.fadd(32, a, s)?;
        // Quadrants 2 and 3: negated.
        let two = m.ku(32, 2);
        let q2 = m.and(32, q, two)?;
        let k30 = m.ku(32, 30);
        let sgn = m.shl(32, q2, k30)?;
        let rb = m.bits(32, res)?;
        let mut rb = m.xor(32, rb, sgn)?;
        if !cos {
            // sin(±0) = ±0 (the sum above gives +0 for -0).
            let zero = m.ku(32, 0);
            let is0 = m.ieq(ab, zero)?;
            rb = self.sel(32, is0, xb, rb)?;
        }
        let inf = self.m.ku(32, INF);
        let isinf = self.m.ieq(ab, inf)?;
        let qnan = self.m.ku(32, QNAN);
        let rb = self.sel(32, isinf, qnan, rb)?;
        self.nan_passes(x, rb)
    }

    /// `a`·pi/2 as an f32, for the 64-bit fixed-point fraction `a` of Payne-Hanek's reduction
    /// (weight 2^-64, `a` != 0: no f32 is a multiple of pi/2).
    fn fixed_times_pi_over_2(&mut self, a: Word) -> EResult<Word> {
        let glsl = self.m.glsl;
        let m = &mut *self.m;
        let (u64t, u32t, f32t) = (m.u(64), m.u(32), m.f(32));
        let k32 = m.ku(32, 32);
        let k32l = m.ku(64, 32);
        // Normalize: the leading one of a (a != 0: no f32 is a multiple of pi/2) to bit 63.
        let hi = m.shr(64, a, k32l)?;
        let hi = m.b.u_convert(u32t, None, hi);
        let lo = m.b.u_convert(u32t, None, a);
        let msb_hi = m.b.ext_inst(u32t, None, glsl, 75, [SpvOperand::IdRef(hi)]); // FindUMsb
        let msb_lo = m.b.ext_inst(u32t, None, glsl, 75, [SpvOperand::IdRef(lo)]);
        let zero = m.ku(32, 0);
        let has_hi = m.ine(hi, zero)?;
        let msb_hi = m.iadd(32, msb_hi, k32)?;
        let msb = m.select(u32t, has_hi, msb_hi, msb_lo)?;
        let k63 = m.ku(32, 63);
        let lz = m.isub(32, k63, msb)?;
        let lz = m.b.u_convert(u64t, None, lz);
        let an = m.shl(64, a, lz)?;
        let top = m.shr(64, an, k32l)?;
        // r = top·(pi/2·2^31)·2^(msb - 126): the product's top 32 bits, as an f32 (two
        // exact conversions and one rounded sum), scaled by 2^(msb - 94).
        let kpi = m.ku(64, PIO2_FIX);
        let pr = m.imul(64, top, kpi)?;
        let pr = m.shr(64, pr, k32l)?;
        let p32 = m.b.u_convert(u32t, None, pr);
        let k8 = m.ku(32, 8);
        let ph = m.shr(32, p32, k8)?;
        let kl = m.ku(32, 0xFF);
        let pl = m.and(32, p32, kl)?;
        let fhf = m.b.convert_u_to_f(f32t, None, ph);
        let flf = m.b.convert_u_to_f(f32t, None, pl);
        let k256 = m.kf(32, 256.0);
        let fhs = m.fmul(32, fhf, k256)?;
        let f = m.fadd(32, fhs, flf)?;
        let k33 = m.ku(32, 33);
        let eb = m.iadd(32, msb, k33)?;
        let k23 = m.ku(32, 23);
        let eb = m.shl(32, eb, k23)?;
        let scale = m.float(32, eb)?;
        let r = m.fmul(32, f, scale)?;
        Ok(r)
    }

    /// Payne–Hanek reduction of the finite `f32` with bits `xb` (`|x| >= 2^-7`): the
    /// quadrant (`u32`, the low two bits count) and the remainder `r` (`f32`, in
    /// [-pi/4, pi/4]) with `x = r + q·pi/2`, from the exact product of the 24-bit
    /// significand with a 128-bit window of 2/pi's bits.
    fn payne_hanek(&mut self, xb: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let u64t = m.u(64);
        let u32t = m.u(32);
        let f32t = m.f(32);
        let k23 = m.ku(32, 23);
        let e = m.shr(32, xb, k23)?;
        let kff = m.ku(32, 0xFF);
        let e = m.and(32, e, kff)?;
        let fm = m.ku(32, 0x7F_FFFF);
        let mant = m.and(32, xb, fm)?;
        let imp = m.ku(32, 0x80_0000);
        let mant = m.or(32, mant, imp)?;
        let mant = m.b.u_convert(u64t, None, mant);
        // x = mant·2^s, s = e - 150; the window starts at bit s + 30 of the table (bit 0
        // is the top of the integer-part word), so that its top bit has weight 2^1 in
        // x·2/pi.
        let k120 = m.ku(32, 120);
        let off = m.isub(32, e, k120)?;
        let k5 = m.ku(32, 5);
        let wi = m.shr(32, off, k5)?;
        let k31 = m.ku(32, 31);
        let sh = m.and(32, off, k31)?;
        let k32 = m.ku(32, 32);
        let rsh = m.isub(32, k32, sh)?;
        let rsh64 = m.b.u_convert(u64t, None, rsh);
        let mask32 = m.ku(64, 0xFFFF_FFFF);
        let mut p = Vec::new();
        for j in 0..4u64 {
            // pair = table[wi + j] << 32 | table[wi + j + 1], by a chain of selects.
            let kj = m.ku(32, j);
            let idx = m.iadd(32, wi, kj)?;
            let mut pair = m.ku(64, 0);
            for i in 0..TWO_OVER_PI.len() - 1 {
                let v = (TWO_OVER_PI[i] as u64) << 32 | TWO_OVER_PI[i + 1] as u64;
                let kv = m.ku(64, v);
                let ki = m.ku(32, i as u64);
                let is = m.ieq(idx, ki)?;
                pair = m.select(u64t, is, kv, pair)?;
            }
            let w = m.shr(64, pair, rsh64)?;
            let w = m.and(64, w, mask32)?;
            p.push(m.imul(64, mant, w)?);
        }
        let k32l = m.ku(64, 32);
        let c3 = m.shr(64, p[3], k32l)?;
        let t2 = m.iadd(64, p[2], c3)?;
        let c2 = m.shr(64, t2, k32l)?;
        let t1 = m.iadd(64, p[1], c2)?;
        let c1 = m.shr(64, t1, k32l)?;
        let t0 = m.iadd(64, p[0], c1)?;
        // t0 bits 31..30: the quadrant; then 30 + 32 + 32 fraction bits.
        let k30 = m.ku(64, 30);
        let qq = m.shr(64, t0, k30)?;
        let fmask = m.ku(64, 0x3FFF_FFFF);
        let fh = m.and(64, t0, fmask)?;
        let fh = m.shl(64, fh, k32l)?;
        let t1l = m.and(64, t1, mask32)?;
        let fr = m.or(64, fh, t1l)?;
        let t2l = m.and(64, t2, mask32)?;
        // Round the quadrant to nearest: a fraction of 1/2 or more counts from the next
        // one, and the fraction becomes negative.
        let halfb = m.ku(64, 1u64 << 61);
        let up = m.uge(fr, halfb)?;
        let one = m.ku(64, 1);
        let qn = m.iadd(64, qq, one)?;
        let qq = m.select(u64t, up, qn, qq)?;
        let full = m.ku(64, 1u64 << 62);
        let frn = m.isub(64, fr, full)?;
        let fr = m.select(u64t, up, frn, fr)?;
        // v = fraction·2^64 (signed): 62 bits and the next two.
        let k2 = m.ku(64, 2);
        let v = m.shl(64, fr, k2)?;
        let t2h = m.shr(64, t2l, k30)?;
        let v = m.iadd(64, v, t2h)?;
        let zero64 = m.ku(64, 0);
        let vneg = m.slt(v, zero64)?;
        let nv = m.isub(64, zero64, v)?;
        let a = m.select(u64t, vneg, nv, v)?;
        let r = self.fixed_times_pi_over_2(a)?;
        let m = &mut *self.m;
        let zero = m.ku(32, 0);
        // The sign: of the fraction, and of x (the reduction was of |x|).
        let qq = m.b.u_convert(u32t, None, qq);
        let k31 = m.ku(32, 31);
        let xneg = m.shr(32, xb, k31)?;
        let xneg = m.ine(xneg, zero)?;
        let nq = m.isub(32, zero, qq)?;
        let q = m.select(u32t, xneg, nq, qq)?;
        let bt = m.bool_t();
        let flip = m.b.logical_not_equal(bt, None, vneg, xneg);
        let nr = m.b.f_negate(f32t, None, r);
        let r = m.select(f32t, flip, nr, r)?;
        Ok((q, r))
    }
}
