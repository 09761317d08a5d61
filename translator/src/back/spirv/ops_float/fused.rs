//! Correctly rounded `.f` division and square root with a fused `Fma` (the fused float model,
//! docs/spec-notes.md §55), in every rounding mode, and the `Fma` helper every fused lowering
//! goes through.
//!
//! Vulkan lets `OpFDiv` be 2.5 ULP off and `Sqrt` worse, so the device's result is only a
//! start. With a fused `Fma` the residual of a candidate is exact (`a - b q` for a quotient,
//! `x - s^2` for a root, when the candidate is within an ULP and nothing under- or overflows),
//! which settles the rounding exactly:
//!
//! 1. the magnitudes are scaled by powers of two into [1, 2) (division) or [1, 4) with the
//!    exponent's parity (root), so the result lies in (1/2, 2) and no step under- or
//!    overflows;
//! 2. one Newton step refines the device's reciprocal (or root) and one more `Fma` the
//!    candidate, which is then within one ULP of the exact result;
//! 3. the candidate's exact residual says on which side the exact result lies, giving the two
//!    floats `lower < exact < upper` around it (or the exact result itself); the residual at
//!    `lower` minus the exact part the midpoint adds (`b g/2` for a quotient, `lower g + g^2/4`
//!    for a root, `g` the gap) has the sign of `exact - midpoint`, which decides nearest and its
//!    ties; the directed modes take `lower` or `upper` by the result's sign;
//! 4. the result is scaled back by adding to its exponent field, exact while it stays normal.
//!
//! Operands that are zero, infinite, NaN or denormal, negative roots, and quotients whose
//! exponent leaves the normal range take a branch to the integer form ([`FnCx::exact_op`])
//! that only those lanes run.

use super::emit::Emit;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::ir::{Opcode, RoundingMode};
use rspirv::spirv::{GlslStd450Op as GLOp, Word};

/// What the exact result of a settled operation is, relative to a float.
enum Residual {
    /// A quotient by the divisor held here: the midpoint's residual part is `b g/2`.
    Quotient(Word),
    /// A root: the midpoint's residual part is `lower g + g^2/4`.
    Root,
}

impl FnCx<'_> {
    /// `Fma(a, b, c)` on `w`-bit floats, relying on the device's `Fma` being fused (the kernel
    /// then needs `fusedFmaFloatN`). With [`crate::FloatModel::emulated_fma`] (tests on a
    /// device whose `Fma` is not fused) it is computed exactly in integers instead.
    pub fn fused_fma(&mut self, w: u32, a: Word, b: Word, c: Word) -> EResult<Word> {
        use crate::reflect::Feature;
        if self.m.float.emulated_fma {
            if w == 64 {
                return self.df_exact(Opcode::Fmad, &[a, b, c], RoundingMode::Re);
            }
            let k = if w == 16 { FKind::Half } else { FKind::F32 };
            let mut s = Vec::new();
            for x in [a, b, c] {
                s.push(self.m.bits(w, x)?);
            }
            let r = self.exact_op(k, Opcode::Fmad, &s, RoundingMode::Re)?;
            return self.m.float(w, r);
        }
        self.m.feature(match w {
            16 => Feature::FusedFmaFloat16,
            32 => Feature::FusedFmaFloat32,
            _ => Feature::FusedFmaFloat64,
        });
        self.m.glsl(w, GLOp::Fma as u32, &[a, b, c])
    }

    /// `a / b` (`op` = `Fdiv`) or `sqrt(a)` (`Fsqrt`) on raw `.f` bits `s`, correctly rounded
    /// in `mode` with the fused `Fma`; raw result bits.
    pub fn fused_div_sqrt(&mut self, op: Opcode, s: &[Word], mode: RoundingMode) -> EResult<Word> {
        let sqrt = op == Opcode::Fsqrt;
        let (ea, normal_a) = self.exponent_f32(s[0])?;
        let m = &mut *self.m;
        let one = m.ku(32, 1);
        let bias = m.ku(32, 127);
        let zero = m.ku(32, 0);
        let sb = m.ku(32, 0x8000_0000);
        // The result's sign and the shift of its exponent; whether the fast path applies.
        let (neg, shift, fast, par) = if sqrt {
            let sign = m.and(32, s[0], sb)?;
            let positive = m.ieq(sign, zero)?;
            let d = m.isub(32, ea, bias)?;
            let par = m.and(32, d, one)?;
            let d = m.isub(32, d, par)?;
            let shift = m.sar(32, d, one)?;
            let fast = m.land(normal_a, positive)?;
            (m.const_bool(false), shift, fast, par)
        } else {
            let (eb, normal_b) = self.exponent_f32(s[1])?;
            let m = &mut *self.m;
            let sx = m.xor(32, s[0], s[1])?;
            let sign = m.and(32, sx, sb)?;
            let neg = m.ine(sign, zero)?;
            // A candidate in [1/2 - ulp, 2] scaled by 2^(ea - eb) keeps a normal exponent
            // field for ea - eb in [-124, 126].
            let d = m.isub(32, ea, eb)?;
            let lo = m.ku(32, (-124i32) as u32 as u64);
            let hi = m.ku(32, 127);
            let ge = m.sge(d, lo)?;
            let lt = m.slt(d, hi)?;
            let fast = m.land(normal_a, normal_b)?;
            let fast = m.land(fast, ge)?;
            let fast = m.land(fast, lt)?;
            (neg, d, fast, zero)
        };
        // a's magnitude with exponent 0 (or 1 for a root of an odd exponent).
        let m = &mut *self.m;
        let mant = m.ku(32, 0x007F_FFFF);
        let k23 = m.ku(32, 23);
        let ma = m.and(32, s[0], mant)?;
        let ae = m.iadd(32, bias, par)?;
        let ae = m.shl(32, ae, k23)?;
        let a1 = m.or(32, ma, ae)?;
        let x = m.float(32, a1)?;
        let mag = if sqrt {
            self.settle_root(x, mode)?
        } else {
            let m = &mut *self.m;
            let mb = m.and(32, s[1], mant)?;
            let base = m.ku(32, 0x3F80_0000);
            let b1 = m.or(32, mb, base)?;
            let y = m.float(32, b1)?;
            self.settle_quotient(x, y, mode, neg)?
        };
        let m = &mut *self.m;
        let u32t = m.u(32);
        let sh = m.shl(32, shift, k23)?;
        let r = m.iadd(32, mag, sh)?;
        let signed = m.or(32, r, sb)?;
        let r = m.select(u32t, neg, signed, r)?;
        let slow = m.lnot(fast)?;
        let s = s.to_vec();
        self.if_value(slow, u32t, r, |cx| cx.exact_op(FKind::F32, op, &s, mode))
    }

    /// The biased exponent of raw `.f` bits and whether the value is normal (neither zero,
    /// denormal, infinite nor NaN).
    fn exponent_f32(&mut self, bits: Word) -> EResult<(Word, Word)> {
        let m = &mut *self.m;
        let k23 = m.ku(32, 23);
        let kff = m.ku(32, 0xFF);
        let e = m.shr(32, bits, k23)?;
        let e = m.and(32, e, kff)?;
        let one = m.ku(32, 1);
        let e1 = m.isub(32, e, one)?;
        // e - 1 < 254 (unsigned) exactly for e in [1, 254].
        let lim = m.ku(32, 254);
        let normal = m.ult(e1, lim)?;
        Ok((e, normal))
    }

    /// The correctly rounded bits of the positive quotient `a / b` for `a`, `b` in [1, 2);
    /// `neg` is the sign of the whole quotient (for the directed modes).
    fn settle_quotient(
        &mut self,
        a: Word,
        b: Word,
        mode: RoundingMode,
        neg: Word,
    ) -> EResult<Word> {
        let m = &mut *self.m;
        let one = m.kf(32, 1.0);
        let y0 = m.fdiv(32, one, b)?;
        let ft = m.f(32);
        let nb = m.b.f_negate(ft, None, b);
        let e0 = self.fused_fma(32, nb, y0, one)?;
        let y1 = self.fused_fma(32, y0, e0, y0)?;
        let q0 = self.m.fmul(32, a, y1)?;
        let r0 = self.fused_fma(32, nb, q0, a)?;
        let q1 = self.fused_fma(32, r0, y1, q0)?;
        self.settle(q1, mode, neg, Residual::Quotient(b), |cx, q| {
            cx.fused_fma(32, nb, q, a)
        })
    }

    /// The correctly rounded bits of `sqrt(x)` for `x` in [1, 4).
    fn settle_root(&mut self, x: Word, mode: RoundingMode) -> EResult<Word> {
        let m = &mut *self.m;
        let s0 = m.glsl(32, GLOp::Sqrt as u32, &[x])?;
        let half = m.kf(32, 0.5);
        let h = m.fdiv(32, half, s0)?;
        let ft = m.f(32);
        let ns0 = m.b.f_negate(ft, None, s0);
        let r0 = self.fused_fma(32, ns0, s0, x)?;
        let s1 = self.fused_fma(32, r0, h, s0)?;
        let neg = self.m.const_bool(false);
        self.settle(s1, mode, neg, Residual::Root, |cx, s| {
            let ft = cx.m.f(32);
            let ns = cx.m.b.f_negate(ft, None, s);
            cx.fused_fma(32, ns, s, x)
        })
    }

    /// From a candidate `c` within one ULP of a positive exact result `v`, and
    /// `residual(q)` (exact, of the sign of `v - q`), the bits of `v` rounded in `mode`
    /// (`neg`: the sign the caller gives the result, which turns `.rd`/`.ru` around).
    fn settle(
        &mut self,
        c: Word,
        mode: RoundingMode,
        neg: Word,
        kind: Residual,
        residual: impl Fn(&mut Self, Word) -> EResult<Word>,
    ) -> EResult<Word> {
        let rc = residual(self, c)?;
        let m = &mut *self.m;
        let u32t = m.u(32);
        let cb = m.bits(32, c)?;
        let one = m.ku(32, 1);
        let zero = m.ku(32, 0);
        let zf = m.kf(32, 0.0);
        let above = m.fgt(rc, zf)?;
        let exact = m.feq(rc, zf)?;
        let prev = m.isub(32, cb, one)?;
        let next = m.iadd(32, cb, one)?;
        let lower = m.select(u32t, above, cb, prev)?;
        let upper = m.select(u32t, above, next, cb)?;
        let lf = m.float(32, lower)?;
        let uf = m.float(32, upper)?;
        let g = m.fsub(32, uf, lf)?;
        let rl = residual(self, lf)?;
        let m = &mut *self.m;
        let halfk = m.kf(32, 0.5);
        let hg = m.fmul(32, g, halfk)?;
        // d has the sign of v - midpoint. For a root, rl - lower g is exact wherever the
        // comparison with g^2/4 is close (Sterbenz), and far from it otherwise.
        let d = match kind {
            Residual::Quotient(b) => {
                let bh = m.fmul(32, b, hg)?;
                m.fsub(32, rl, bh)?
            }
            Residual::Root => {
                let lg = m.fmul(32, lf, g)?;
                let t = m.fsub(32, rl, lg)?;
                let q = m.fmul(32, hg, hg)?;
                m.fsub(32, t, q)?
            }
        };
        let up_half = m.fgt(d, zf)?;
        let tie = m.feq(d, zf)?;
        let odd = m.and(32, lower, one)?;
        let lower_odd = m.ine(odd, zero)?;
        let pick_upper = match mode {
            RoundingMode::Re => {
                let t = m.land(tie, lower_odd)?;
                m.lor(up_half, t)?
            }
            RoundingMode::Rna => m.lor(up_half, tie)?,
            RoundingMode::Rz => m.const_bool(false),
            RoundingMode::Ru => m.lnot(neg)?,
            RoundingMode::Rd => neg,
        };
        let r = m.select(u32t, pick_upper, upper, lower)?;
        m.select(u32t, exact, cb, r)
    }
}
