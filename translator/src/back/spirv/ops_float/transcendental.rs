//! `fsin fcos fexp2 flog2 ftanh frcp frsqrt` for `.f`, `.hf` and `.bf` (and packed forms).
//!
//! The value is widened exactly to `f64`, the function is evaluated there with this
//! module's own range reductions and polynomials (relative error about 2^-50, far inside
//! the 2^-24 of an `f32` ULP), and the `f64` result is rounded once to nearest into the type
//! with [`FnCx::round_f64_to`]. The results are therefore within 0.5 ULP plus about 2^-26
//! ULP of the exact values, like the reference interpreter's (spec-notes §47; measured in
//! `docs/float-accuracy.md`). No GLSL.std.450 transcendental is used (their accuracy is not
//! guaranteed and they have no `f64` forms). The only `.df` form, `frsqrt.fast.df`, is
//! [`FnCx::rsqrt_df`] (integer square root and residual, within 0.5 ULP + 2^-49 ULP).
//!
//! Range reductions: `exp2` splits off the nearest integer (exact) and scales with `Ldexp`;
//! `log2` splits the exponent and uses `atanh` of `(m-1)/(m+1)`; `sin`/`cos` use a
//! three-part Cody–Waite reduction by pi/2 below 2^24, and above it a Payne–Hanek reduction
//! in integer arithmetic with 256 bits of 2/pi (exact for every `f32`).

use super::emit::Emit;
use super::round::Overflow;
use super::FKind;
use crate::back::spirv::function::{bug, EResult, FnCx};
use crate::ir::{Inst, Opcode, RoundingMode};
use rspirv::spirv::Word;

/// 2/pi's fraction bits, 32 a word, after a zero word (the integer part).
const TWO_OVER_PI: [u32; 10] = [
    0, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
    0xdebbc561, 0xb7246e3a,
];
/// pi/2 in three parts: 28 bits, 28 bits, 53 bits (Cody–Waite).
const PIO2: [u64; 3] = [0x3ff921fb54000000, 0x3e110b4610000000, 0x3c5a62633145c06e];

impl FnCx<'_> {
    /// Lowers a transcendental or reciprocal instruction.
    pub fn transcendental(&mut self, inst: &Inst, k: FKind, n: u32) -> EResult {
        if k == FKind::F64 {
            if inst.op != Opcode::Frsqrt {
                return Err(self.err(format!(
                    "`{}.df` is not supported by the SPIR-V back end: no double-precision implementation within the specified ULP bound (spec-notes §47)",
                    inst.op.as_str()
                )));
            }
            let xs = self.float_elems(k, inst, 1, n, inst.q.ftz)?;
            let mut out = Vec::new();
            for x in xs {
                let r = self.rsqrt_df(x)?;
                out.push(self.finish_float(k, r, inst.q.ftz, false)?);
            }
            return self.dst_elems(inst, k.bits(), &out);
        }
        let ftz = inst.q.ftz;
        let xs = self.float_elems(k, inst, 1, n, ftz)?;
        let mut out = Vec::new();
        for x in xs {
            let r = match inst.op {
                Opcode::Fsin => self.sin_cos(x, false)?,
                Opcode::Fcos => self.sin_cos(x, true)?,
                Opcode::Fexp2 => {
                    let x = self.m.fconv(64, x)?;
                    self.exp2_f64(x)?
                }
                Opcode::Flog2 => {
                    let x = self.m.fconv(64, x)?;
                    self.log2_f64(x)?
                }
                Opcode::Ftanh => {
                    let x = self.m.fconv(64, x)?;
                    self.tanh_f64(x)?
                }
                Opcode::Frcp => {
                    let one = self.m.kf(32, 1.0);
                    self.odd_f64(Opcode::Fdiv, &[one, x], RoundingMode::Re)?
                }
                Opcode::Frsqrt => {
                    let x = self.m.fconv(64, x)?;
                    let s = self.m.glsl(64, 31, &[x])?;
                    let one = self.m.kf(64, 1.0);
                    self.m.fdiv(64, one, s)?
                }
                _ => return Err(self.err("not a transcendental instruction")),
            };
            let mut b = self.round_f64_to(k, r, RoundingMode::Re, Overflow::Ieee)?;
            if ftz {
                b = self.flush(k, b)?;
            }
            out.push(b);
        }
        self.dst_elems(inst, k.bits(), &out)
    }

    /// Horner evaluation of `c[0] + c[1] z + c[2] z^2 + ...` in `f64`.
    fn horner(&mut self, z: Word, c: &[f64]) -> EResult<Word> {
        let mut acc = self.m.kf(64, c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let t = self.m.fmul(64, acc, z)?;
            let k = self.m.kf(64, ci);
            acc = self.m.fadd(64, t, k)?;
        }
        Ok(acc)
    }

    /// `2^x` in `f64` (`x` any `f64`; results below 2^-1100 are 0, above 2^1100 infinite).
    pub fn exp2_f64(&mut self, x: Word) -> EResult<Word> {
        let lo = self.m.kf(64, -1100.0);
        let hi = self.m.kf(64, 1100.0);
        let xc = self.m.glsl(64, 43, &[x, lo, hi])?; // FClamp
        let n = self.m.glsl(64, 2, &[xc])?; // RoundEven
        let f = self.m.fsub(64, xc, n)?;
        let ln2 = self.m.kf(64, std::f64::consts::LN_2);
        let y = self.m.fmul(64, f, ln2)?;
        // e^y on |y| <= ln2/2: Taylor to degree 13 (remainder below 2^-58).
        let mut c = [0f64; 14];
        let mut fact = 1f64;
        for (i, ci) in c.iter_mut().enumerate() {
            if i > 0 {
                fact *= i as f64;
            }
            *ci = 1.0 / fact;
        }
        let p = self.horner(y, &c)?;
        let i32t = self.m.u(32);
        let ni = self.m.b.convert_f_to_s(i32t, None, n).map_err(bug)?;
        let r = self.m.glsl(64, 53, &[p, ni])?; // Ldexp
        let nan = self.m.isnan(x)?;
        let dt = self.m.f(64);
        self.m.select(dt, nan, x, r)
    }

    /// `log2(x)` in `f64` for `x` widened from a narrower type (never an `f64` denormal).
    fn log2_f64(&mut self, x: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let dt = m.f(64);
        let b = m.bits(64, x)?;
        let k52 = m.ku(64, 52);
        let e = m.shr(64, b, k52)?;
        let emask = m.ku(64, 0x7FF);
        let e = m.and(64, e, emask)?;
        let fm = m.ku(64, (1u64 << 52) - 1);
        let f = m.and(64, b, fm)?;
        let onee = m.ku(64, 1023u64 << 52);
        let mb = m.or(64, f, onee)?;
        let mant = m.float(64, mb)?;
        let sqrt2 = m.kf(64, std::f64::consts::SQRT_2);
        let big = m.fgt(mant, sqrt2)?;
        let halfk = m.kf(64, 0.5);
        let mh = m.fmul(64, mant, halfk)?;
        let mant = m.select(dt, big, mh, mant)?;
        let i64t = m.u(64);
        let ef = m.b.convert_s_to_f(dt, None, e).map_err(bug)?;
        let _ = i64t;
        let bias = m.kf(64, 1023.0);
        let ef = m.fsub(64, ef, bias)?;
        let one = m.kf(64, 1.0);
        let ef1 = m.fadd(64, ef, one)?;
        let ef = m.select(dt, big, ef1, ef)?;
        let num = m.fsub(64, mant, one)?;
        let den = m.fadd(64, mant, one)?;
        let s = m.fdiv(64, num, den)?;
        let z = m.fmul(64, s, s)?;
        let c: Vec<f64> = (0..12).map(|i| 1.0 / (2 * i + 1) as f64).collect();
        let p = self.horner(z, &c)?;
        let m = &mut *self.m;
        let at = m.fmul(64, s, p)?;
        let k = m.kf(64, 2.0 / std::f64::consts::LN_2);
        let l = m.fmul(64, at, k)?;
        let r = m.fadd(64, ef, l)?;
        // Specials: NaN, negative (NaN), zero (-inf), +inf.
        let zero = m.kf(64, 0.0);
        let qnan = m.kf(64, f64::NAN);
        let ninf = m.kf(64, f64::NEG_INFINITY);
        let is0 = m.feq(x, zero)?;
        let neg = m.flt(x, zero)?;
        let inf = m.isinf(x)?;
        let nan = m.isnan(x)?;
        let r = m.select(dt, inf, x, r)?;
        let r = m.select(dt, is0, ninf, r)?;
        let r = m.select(dt, neg, qnan, r)?;
        m.select(dt, nan, x, r)
    }

    /// `tanh(x)` in `f64`: `expm1(2|x|) / (expm1(2|x|) + 2)` by series below 1/2,
    /// `1 - 2 / (2^(2|x| log2 e) + 1)` up to 10, 1 beyond; the sign of `x` restored.
    fn tanh_f64(&mut self, x: Word) -> EResult<Word> {
        let dt = self.m.f(64);
        let ax = self.m.glsl(64, 4, &[x])?; // FAbs
        let two = self.m.kf(64, 2.0);
        let y = self.m.fmul(64, ax, two)?;
        // expm1(y) = y (1 + y/2 + y^2/6 + ...), y <= 1: degree 18 (remainder below 2^-60).
        let mut c = [0f64; 19];
        let mut fact = 1f64;
        for (i, ci) in c.iter_mut().enumerate() {
            fact *= (i + 1) as f64;
            *ci = 1.0 / fact;
        }
        let p = self.horner(y, &c)?;
        let em = self.m.fmul(64, y, p)?;
        let d = self.m.fadd(64, em, two)?;
        let small = self.m.fdiv(64, em, d)?;
        let l2e = self.m.kf(64, std::f64::consts::LOG2_E);
        let t = self.m.fmul(64, y, l2e)?;
        let ex = self.exp2_f64(t)?;
        let one = self.m.kf(64, 1.0);
        let d = self.m.fadd(64, ex, one)?;
        let q = self.m.fdiv(64, two, d)?;
        let mid = self.m.fsub(64, one, q)?;
        let half = self.m.kf(64, 0.5);
        let ten = self.m.kf(64, 10.0);
        let is_small = self.m.flt(ax, half)?;
        let is_big = self.m.fgt(ax, ten)?;
        let r = self.m.select(dt, is_small, small, mid)?;
        let r = self.m.select(dt, is_big, one, r)?;
        // copysign(r, x)
        let rb = self.m.bits(64, r)?;
        let xb = self.m.bits(64, x)?;
        let sm = self.m.ku(64, 1u64 << 63);
        let sx = self.m.and(64, xb, sm)?;
        let rb = self.m.or(64, rb, sx)?;
        let r = self.m.float(64, rb)?;
        let nan = self.m.isnan(x)?;
        self.m.select(dt, nan, x, r)
    }

    /// `sin` or `cos` of the `f32` compute float `x`, as an `f64`.
    fn sin_cos(&mut self, x32: Word, cos: bool) -> EResult<Word> {
        let dt = self.m.f(64);
        let u32t = self.m.u(32);
        let x = self.m.fconv(64, x32)?;
        let ax = self.m.glsl(64, 4, &[x])?;
        // Cody–Waite below 2^24: k = nearest(|x| 2/pi), r = |x| - k pi/2 in three parts.
        let tpi = self.m.kf(64, std::f64::consts::FRAC_2_PI);
        let t = self.m.fmul(64, ax, tpi)?;
        let kf = self.m.glsl(64, 2, &[t])?;
        let mut r = ax;
        for part in PIO2 {
            let p = self.m.kf(64, f64::from_bits(part));
            let kp = self.m.fmul(64, kf, p)?;
            r = self.m.fsub(64, r, kp)?;
        }
        let lim = self.m.kf(64, 8_388_608.0 * 2.0);
        let lim_ok = self.m.flt(ax, lim)?;
        // Out of range (NaN, infinity, big): a safe value for ConvertFToU, not used.
        let kc = self.m.kf(64, 0.0);
        let kf_safe = self.m.select(dt, lim_ok, kf, kc)?;
        let ki = self.m.b.convert_f_to_u(u32t, None, kf_safe).map_err(bug)?;
        let three = self.m.ku(32, 3);
        let q_cw = self.m.and(32, ki, three)?;
        let (q_ph, r_ph) = self.payne_hanek(x32)?;
        let r = self.m.select(dt, lim_ok, r, r_ph)?;
        let q = self.m.select(u32t, lim_ok, q_cw, q_ph)?;
        // Polynomials on |r| <= pi/4 (a little beyond at rounding boundaries).
        let z = self.m.fmul(64, r, r)?;
        let mut sc = [0f64; 10];
        let mut cc = [0f64; 10];
        let mut fact = 1f64;
        for i in 1..=19u32 {
            fact *= i as f64;
            let sign = if (i / 2) % 2 == 0 { 1.0 } else { -1.0 };
            if i % 2 == 1 {
                sc[(i / 2) as usize] = sign / fact;
            } else {
                cc[(i / 2) as usize] = sign / fact;
            }
        }
        cc[0] = 1.0;
        let ps = self.horner(z, &sc)?;
        let s = self.m.fmul(64, r, ps)?;
        let c = self.horner(z, &cc)?;
        let ns = self.m.b.f_negate(dt, None, s).map_err(bug)?;
        let nc = self.m.b.f_negate(dt, None, c).map_err(bug)?;
        // sin: q=0 s, 1 c, 2 -s, 3 -c; cos: q=0 c, 1 -s, 2 -c, 3 s.
        let vals = if cos { [c, ns, nc, s] } else { [s, c, ns, nc] };
        let mut res = vals[3];
        for (i, &v) in vals.iter().enumerate().take(3).rev() {
            let ki = self.m.ku(32, i as u64);
            let is = self.m.ieq(q, ki)?;
            res = self.m.select(dt, is, v, res)?;
        }
        if !cos {
            // sin(-x) = -sin(x), also for zeros.
            let rb = self.m.bits(64, res)?;
            let xb = self.m.bits(64, x)?;
            let sm = self.m.ku(64, 1u64 << 63);
            let sx = self.m.and(64, xb, sm)?;
            let rb = self.m.xor(64, rb, sx)?;
            res = self.m.float(64, rb)?;
        }
        let inf = self.m.isinf(x)?;
        let qnan = self.m.kf(64, f64::NAN);
        let res = self.m.select(dt, inf, qnan, res)?;
        let nan = self.m.isnan(x)?;
        self.m.select(dt, nan, x, res)
    }

    /// Payne–Hanek reduction of `|x|` (`f32` compute float, `|x| >= 2^24`): the quadrant
    /// (`u32`, 0..3) and the remainder in radians (`f64`, within pi/4), from the exact
    /// product of the 24-bit significand with a 128-bit window of 2/pi's bits.
    fn payne_hanek(&mut self, x32: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let u64t = m.u(64);
        let u32t = m.u(32);
        let dt = m.f(64);
        let xb = m.bits(32, x32)?;
        let k23 = m.ku(32, 23);
        let e = m.shr(32, xb, k23)?;
        let kff = m.ku(32, 0xFF);
        let e = m.and(32, e, kff)?;
        let fm = m.ku(32, 0x7F_FFFF);
        let mant = m.and(32, xb, fm)?;
        let imp = m.ku(32, 0x80_0000);
        let mant = m.or(32, mant, imp)?;
        let mant = m.b.u_convert(u64t, None, mant).map_err(bug)?;
        // x = mant 2^s with s = e - 150 >= 1; window starts at bit offset s + 30 of the
        // table (the leading zero word stands for 2/pi's integer part). Clamp for small
        // inputs, whose result is not used.
        let k151 = m.ku(32, 151);
        let lo = m.ult(e, k151)?;
        let e = m.select(u32t, lo, k151, e)?;
        let k120 = m.ku(32, 120); // e - 150 + 30
        let off = m.isub(32, e, k120)?;
        let k5 = m.ku(32, 5);
        let wi = m.shr(32, off, k5)?;
        let k31 = m.ku(32, 31);
        let sh = m.and(32, off, k31)?;
        let k32 = m.ku(32, 32);
        let rsh = m.isub(32, k32, sh)?;
        let mask32 = m.ku(64, 0xFFFF_FFFF);
        let mut words = Vec::new();
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
            let rsh64 = m.b.u_convert(u64t, None, rsh).map_err(bug)?;
            let w = m.shr(64, pair, rsh64)?;
            words.push(m.and(64, w, mask32)?);
        }
        let p: Vec<Word> = words
            .iter()
            .map(|&w| m.b.i_mul(u64t, None, mant, w).map_err(bug))
            .collect::<EResult<_>>()?;
        let k32l = m.ku(64, 32);
        let c3 = m.shr(64, p[3], k32l)?;
        let t2 = m.iadd(64, p[2], c3)?;
        let c2 = m.shr(64, t2, k32l)?;
        let t1 = m.iadd(64, p[1], c2)?;
        let c1 = m.shr(64, t1, k32l)?;
        let t0 = m.iadd(64, p[0], c1)?;
        let k30 = m.ku(64, 30);
        let qq = m.shr(64, t0, k30)?;
        let k3 = m.ku(64, 3);
        let qq = m.and(64, qq, k3)?;
        let fmask = m.ku(64, 0x3FFF_FFFF);
        let fh = m.and(64, t0, fmask)?;
        let fh = m.shl(64, fh, k32l)?;
        let t1l = m.and(64, t1, mask32)?;
        let fr = m.or(64, fh, t1l)?;
        let t2l = m.and(64, t2, mask32)?;
        // Round the quadrant to nearest: a fraction of 1/2 or more counts from the next one.
        let halfb = m.ku(64, 1u64 << 61);
        let up = m.uge(fr, halfb)?;
        let one = m.ku(64, 1);
        let qn = m.iadd(64, qq, one)?;
        let qq = m.select(u64t, up, qn, qq)?;
        let qq = m.and(64, qq, k3)?;
        let full = m.ku(64, 1u64 << 62);
        let frn = m.isub(64, fr, full)?;
        let fr = m.select(u64t, up, frn, fr)?;
        let frf = m.b.convert_s_to_f(dt, None, fr).map_err(bug)?;
        let lof = m.b.convert_u_to_f(dt, None, t2l).map_err(bug)?;
        let s62 = m.kf(64, 2f64.powi(-62));
        let s94 = m.kf(64, 2f64.powi(-94));
        let a = m.fmul(64, frf, s62)?;
        let b = m.fmul(64, lof, s94)?;
        let turns = m.fadd(64, a, b)?;
        let pio2 = m.kf(64, std::f64::consts::FRAC_PI_2);
        let r = m.fmul(64, turns, pio2)?;
        let q = m.b.u_convert(u32t, None, qq).map_err(bug)?;
        Ok((q, r))
    }
}
