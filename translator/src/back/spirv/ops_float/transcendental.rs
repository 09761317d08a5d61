//! `fsin fcos fexp2 flog2 ftanh frcp frsqrt` for `.f`, `.hf` and `.bf` (and packed forms),
//! in `f32` and 32/64-bit integer arithmetic only: no `Float64`, no fused multiply-add, no
//! GLSL.std.450 transcendental (spec-notes §47).
//!
//! Every function is evaluated on the `f32` compute value with IEEE `f32` additions and
//! multiplications (each rounded once, `NoContraction`), bit manipulation and integer
//! arithmetic, so that its result is the same on every conformant Vulkan device; the
//! results are within isa-2's bounds, measured over all 2^32 inputs (`docs/float-accuracy.md`).
//! `.hf`/`.bf` round that `f32` result once more to nearest even ([`FnCx::from_float`]).
//! The only `.df` form, `frsqrt.fast.df`, is [`FnCx::rsqrt_df`] (integer square root and
//! residual).
//!
//! By concern: [`trig`] (`sin`/`cos`: Cody–Waite and Payne–Hanek reductions), [`exp_log`]
//! (`exp2`, `log2`, `tanh`); this file holds the dispatch, `rcp`/`rsqrt` and the helpers
//! they share: Horner evaluation, rounding to an integer with the 1.5·2^23 shift,
//! exponent/significand split and the exact scaling by 2^n into denormals.
//! The polynomial coefficients are minimax approximations rounded to `f32`, computed by
//! `scripts/remez.py`.
//!
//! In the non-conforming fast-math model ([`crate::FloatModel::fast_math`], spec-notes §55)
//! they are the device's own GLSL.std.450 `Sin Cos Exp2 Log2 Tanh InverseSqrt` and `1/x`
//! by `OpFDiv` ([`FnCx::fast_transcendental`]): Vulkan bounds only some of them (`Exp2`,
//! `Log2` 3 ULP, `InverseSqrt` 2 ULP, `OpFDiv` 2.5 ULP; `Sin`/`Cos` by an absolute error,
//! `Tanh` not at all), docs/float-accuracy.md has what lavapipe gives.

mod exp_log;
mod trig;

use super::emit::Emit;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::ir::{Inst, Opcode};
use rspirv::spirv::{GlslStd450Op as GLOp, Word};

/// 1.5·2^23: `RN(v + MAGIC) - MAGIC` is `v` rounded to the nearest integer (ties to even)
/// for `|v| < 2^22`, and the low bits of `RN(v + MAGIC)` are that integer.
const MAGIC: u32 = 0x4B40_0000;
/// `f32` quiet bit.
const QUIET: u64 = 0x40_0000;
/// `f32` infinity bits.
const INF: u64 = 0x7F80_0000;
/// `f32` canonical quiet NaN.
const QNAN: u64 = 0x7FC0_0000;

impl FnCx<'_> {
    /// Lowers a transcendental or reciprocal instruction.
    pub fn transcendental(&mut self, inst: &Inst, k: FKind, n: u32) -> EResult {
        if k == FKind::F64 && inst.op != Opcode::Frsqrt {
            return Err(self.err(format!(
                "`{}.df` is not supported by the SPIR-V back end: no double-precision implementation within the specified ULP bound (spec-notes §47)",
                inst.op.as_str()
            )));
        }
        let ftz = inst.q.ftz;
        let xs = self.float_elems(k, inst, 1, n, ftz)?;
        let mut out = Vec::new();
        for x in xs {
            if self.m.float.fast_math {
                let w = if k == FKind::F64 { 64 } else { 32 };
                let r = self.fast_transcendental(inst.op, w, x)?;
                out.push(self.finish_float(k, r, ftz, false)?);
                continue;
            }
            if k == FKind::F64 {
                let r = self.rsqrt_df(x)?;
                out.push(self.finish_float(k, r, ftz, false)?);
                continue;
            }
            let r = match inst.op {
                Opcode::Fsin => self.sin_cos_f32(x, false)?,
                Opcode::Fcos => self.sin_cos_f32(x, true)?,
                Opcode::Fexp2 => self.exp2_f32(x)?,
                Opcode::Flog2 => self.log2_f32(x)?,
                Opcode::Ftanh => self.tanh_f32(x)?,
                Opcode::Frcp => self.rcp_f32(x)?,
                Opcode::Frsqrt => self.rsqrt_f32(x)?,
                _ => return Err(self.err("not a transcendental instruction")),
            };
            out.push(self.finish_float(k, r, ftz, false)?);
        }
        self.dst_elems(inst, k.bits(), &out)
    }

    /// The fast-math form of a transcendental or reciprocal of the `w`-bit compute value
    /// `x`: one GLSL.std.450 instruction, or `1/x` by `OpFDiv`.
    fn fast_transcendental(&mut self, op: Opcode, w: u32, x: Word) -> EResult<Word> {
        let glsl = match op {
            Opcode::Fsin => GLOp::Sin,
            Opcode::Fcos => GLOp::Cos,
            Opcode::Fexp2 => GLOp::Exp2,
            Opcode::Flog2 => GLOp::Log2,
            Opcode::Ftanh => GLOp::Tanh,
            Opcode::Frsqrt => GLOp::InverseSqrt,
            Opcode::Frcp => {
                let one = self.m.kf(w, 1.0);
                return self.m.fdiv(w, one, x);
            }
            _ => return Err(self.err("not a transcendental instruction")),
        };
        self.m.glsl(w, glsl as u32, &[x])
    }

    /// The `f32` constant with bits `b`.
    fn kbits(&mut self, b: u32) -> Word {
        let t = self.m.f(32);
        self.m.const_of(t, 32, b as u64)
    }

    /// Horner evaluation of `c[0] + c[1] v + c[2] v^2 + ...` (`f32`, coefficients as bits).
    fn horner32(&mut self, v: Word, c: &[u32]) -> EResult<Word> {
        let mut acc = self.kbits(c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let t = self.m.fmul(32, acc, v)?;
            let k = self.kbits(ci);
            acc = self.m.fadd(32, t, k)?;
        }
        Ok(acc)
    }

    /// `v` (`f32`, `|v| < 2^22`) rounded to the nearest integer, ties to even: the integer
    /// as an `f32` and as a `u32` (two's complement), exactly.
    fn nearest_int32(&mut self, v: Word) -> EResult<(Word, Word)> {
        let magic = self.kbits(MAGIC);
        let s = self.m.fadd(32, v, magic)?;
        let nf = self.m.fsub(32, s, magic)?;
        let sb = self.m.bits(32, s)?;
        let mb = self.m.ku(32, MAGIC as u64);
        let ni = self.m.isub(32, sb, mb)?;
        Ok((nf, ni))
    }

    /// The `f32` `v` with its low 12 significand bits cleared: 12 significant bits, so
    /// that the product of two such values is exact.
    fn hi12(&mut self, v: Word) -> EResult<Word> {
        let b = self.m.bits(32, v)?;
        let mask = self.m.ku(32, 0xFFFF_F000);
        let h = self.m.and(32, b, mask)?;
        self.m.float(32, h)
    }

    /// Splits the bits `ab` of a positive finite non-zero `f32` (denormals included) into
    /// the bits of its significand `m` in [1, 2) and its exponent `e` (`u32`, signed):
    /// `ab = m·2^e`. A denormal's significand is normalized by converting it to `f32`
    /// (exact below 2^24), whose exponent counts its leading zeros.
    fn split_exp(&mut self, ab: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let u32t = m.u(32);
        let f32t = m.f(32);
        let min_normal = m.ku(32, 0x80_0000);
        let den = m.ult(ab, min_normal)?;
        let df = m.b.convert_u_to_f(f32t, None, ab);
        let db = m.bits(32, df)?;
        let src = m.select(u32t, den, db, ab)?;
        let k_den = m.ku(32, 127 + 149);
        let k_norm = m.ku(32, 127);
        let off = m.select(u32t, den, k_den, k_norm)?;
        let k23 = m.ku(32, 23);
        let eb = m.shr(32, src, k23)?;
        let e = m.isub(32, eb, off)?;
        let fm = m.ku(32, 0x7F_FFFF);
        let frac = m.and(32, src, fm)?;
        let one = m.ku(32, 0x3F80_0000);
        let mb = m.or(32, frac, one)?;
        Ok((mb, e))
    }

    /// The bits of `r·2^n` for the bits `rb` of a positive normal `f32` and a signed `n`
    /// (`u32`), rounded to nearest even into the denormals; beyond the largest finite
    /// exponent, infinity.
    fn scale_bits(&mut self, rb: Word, n: Word) -> EResult<Word> {
        let m = &mut *self.m;
        let k23 = m.ku(32, 23);
        let er = m.shr(32, rb, k23)?;
        let e2 = m.iadd(32, er, n)?;
        let normal_bits = self.add_exponent(rb, n)?;
        let m = &mut *self.m;
        let k255 = m.ku(32, 255);
        let over = m.sge(e2, k255)?;
        let one = m.ku(32, 1);
        let normal = m.sge(e2, one)?;
        let fm = m.ku(32, 0x7F_FFFF);
        let frac = m.and(32, rb, fm)?;
        let imp = m.ku(32, 0x80_0000);
        let mant = m.or(32, frac, imp)?;
        // Denormal: the significand shifted right by 1 - e2 (at most 31), rounded.
        let s = m.isub(32, one, e2)?;
        let k31 = m.ku(32, 31);
        let s = self.min_u(s, k31)?;
        let kept = self.m.shr(32, mant, s)?;
        let den = self.round_shifted_dyn(mant, kept, s)?;
        let r = self.sel(32, normal, normal_bits, den)?;
        let inf = self.m.ku(32, INF);
        self.sel(32, over, inf, r)
    }

    /// `b + (n << 23)`: the `f32` bits `b` times 2^n (`n` signed), while that stays normal.
    fn add_exponent(&mut self, b: Word, n: Word) -> EResult<Word> {
        let k23 = self.m.ku(32, 23);
        let nsh = self.m.shl(32, n, k23)?;
        self.m.iadd(32, b, nsh)
    }

    /// The result bits `rb` of a function of `x` (`f32`), except a NaN `x`, which gives
    /// itself made quiet (as the reference interpreter does); returns the `f32`.
    fn nan_passes(&mut self, x: Word, rb: Word) -> EResult<Word> {
        let nan = self.m.isnan(x)?;
        let xb = self.m.bits(32, x)?;
        let q = self.m.ku(32, QUIET);
        let xq = self.m.or(32, xb, q)?;
        let r = self.sel(32, nan, xq, rb)?;
        self.m.float(32, r)
    }

    /// `1/d` for a normal `f32` `d` whose reciprocal is normal, within 0.5 ULP + 2^-10
    /// ULP: a seed `y0` (`OpFDiv`; any value within 2^-12 relative will do) cut to 12
    /// bits, the residual `e = 1 - d·y0` computed exactly (`d` split into two 12-bit
    /// halves: both partial products and the first difference are exact, the second is
    /// below 2^-10 and its rounding below 2^-35), then `y0 (1 + e + e^2)` (the `e^3` left
    /// out is below 2^-32 relative).
    fn recip_core(&mut self, d: Word) -> EResult<Word> {
        let one = self.m.kf(32, 1.0);
        let seed = self.m.fdiv(32, one, d)?;
        let y0 = self.hi12(seed)?;
        let dh = self.hi12(d)?;
        let m = &mut *self.m;
        let dl = m.fsub(32, d, dh)?;
        let p1 = m.fmul(32, dh, y0)?;
        let p2 = m.fmul(32, dl, y0)?;
        let e1 = m.fsub(32, one, p1)?;
        let e = m.fsub(32, e1, p2)?;
        let ee = m.fmul(32, e, e)?;
        let s = m.fadd(32, e, ee)?;
        let c = m.fmul(32, y0, s)?;
        m.fadd(32, y0, c)
    }

    /// `frcp`: `1/x` within 0.5 ULP + 2^-10 ULP for normal results and 0.75 ULP for
    /// denormal ones ([`FnCx::recip_core`] on the significand in [1, 2), scaled by
    /// [`FnCx::scale_bits`]); `1/±0 = ±inf`, `1/±inf = ±0`.
    fn rcp_f32(&mut self, x: Word) -> EResult<Word> {
        let xb = self.m.bits(32, x)?;
        let absm = self.m.ku(32, 0x7FFF_FFFF);
        let ab = self.m.and(32, xb, absm)?;
        let sm = self.m.ku(32, 0x8000_0000);
        let sign = self.m.and(32, xb, sm)?;
        let (mb, e) = self.split_exp(ab)?;
        let mf = self.m.float(32, mb)?;
        let y = self.recip_core(mf)?;
        let yb = self.m.bits(32, y)?;
        let zero = self.m.ku(32, 0);
        let ne = self.m.isub(32, zero, e)?;
        let r = self.scale_bits(yb, ne)?;
        let m = &mut *self.m;
        let is0 = m.ieq(ab, zero)?;
        let inf = m.ku(32, INF);
        let isinf = m.ieq(ab, inf)?;
        let r = self.sel(32, is0, inf, r)?;
        let r = self.sel(32, isinf, zero, r)?;
        let r = self.m.or(32, r, sign)?;
        self.nan_passes(x, r)
    }

    /// `frsqrt`: `1/sqrt(x)` within 0.5 ULP + 2^-9 ULP. `x = m·2^e` with `e` even and `m`
    /// in [1, 4); a seed `y0` (`InverseSqrt`; any value within 2^-12 relative will do) cut
    /// to 12 bits; the residual `e = 1 - m·y0^2` exactly (`y0^2` is exact, and `m` and
    /// `y0^2` split into 12-bit halves give four exact partial products); then
    /// `y0 (1 + e/2 + 3e^2/8)` and the exponent `-e/2` added to the bits (never denormal
    /// nor infinite). `-0` gives `-inf`, `+0` `+inf`, `+inf` `+0`, other negative values
    /// the canonical NaN.
    fn rsqrt_f32(&mut self, x: Word) -> EResult<Word> {
        let xb = self.m.bits(32, x)?;
        let (mb, e) = self.split_exp(xb)?;
        let m = &mut *self.m;
        // Odd exponent: m·2 in [2, 4), e - 1.
        let one = m.ku(32, 1);
        let odd = m.and(32, e, one)?;
        let k23 = m.ku(32, 23);
        let add = m.shl(32, odd, k23)?;
        let mb = m.iadd(32, mb, add)?;
        let e = m.isub(32, e, odd)?;
        let mf = m.float(32, mb)?;
        let seed = m.glsl(32, 32, &[mf])?; // InverseSqrt
        let y0 = self.hi12(seed)?;
        let mh = self.hi12(mf)?;
        let s = self.m.fmul(32, y0, y0)?;
        let sh = self.hi12(s)?;
        let m = &mut *self.m;
        let ml = m.fsub(32, mf, mh)?;
        let sl = m.fsub(32, s, sh)?;
        let onef = m.kf(32, 1.0);
        let p = m.fmul(32, mh, sh)?;
        let r = m.fsub(32, onef, p)?;
        let p = m.fmul(32, mh, sl)?;
        let r = m.fsub(32, r, p)?;
        let p = m.fmul(32, ml, sh)?;
        let r = m.fsub(32, r, p)?;
        let p = m.fmul(32, ml, sl)?;
        let ee = m.fsub(32, r, p)?;
        let c38 = m.kf(32, 0.375);
        let half = m.kf(32, 0.5);
        let t = m.fmul(32, ee, c38)?;
        let t = m.fadd(32, t, half)?;
        let t = m.fmul(32, ee, t)?;
        let t = m.fmul(32, y0, t)?;
        let y = m.fadd(32, y0, t)?;
        let yb = m.bits(32, y)?;
        let h = m.sar(32, e, one)?;
        let nsh = m.shl(32, h, k23)?;
        let r = m.isub(32, yb, nsh)?;
        // Specials: ±0, +inf, negative.
        let zero = m.ku(32, 0);
        let negz = m.ku(32, 0x8000_0000);
        let inf = m.ku(32, INF);
        let ninf = m.ku(32, INF | 0x8000_0000);
        let qnan = m.ku(32, QNAN);
        let is_pz = m.ieq(xb, zero)?;
        let is_nz = m.ieq(xb, negz)?;
        let is_inf = m.ieq(xb, inf)?;
        let neg = m.uge(xb, negz)?;
        let r = self.sel(32, neg, qnan, r)?;
        let r = self.sel(32, is_inf, zero, r)?;
        let r = self.sel(32, is_pz, inf, r)?;
        let r = self.sel(32, is_nz, ninf, r)?;
        self.nan_passes(x, r)
    }
}
