//! Lowering of floating-point instructions (isa-2, the conversions of isa-4, `fcmp`).
//!
//! Values travel as raw bits in integer registers; arithmetic bit-casts them to floats.
//! `.hf` and `.bf` values are widened exactly to `f32` to compute. Every float operation is
//! decorated `NoContraction`. What a lowering may assume of the device is the module's
//! [`crate::FloatModel`] (spec-notes §55). By concern: [`arith`] (isa-2 arithmetic,
//! comparisons), [`convert`] (isa-4 conversions), [`round`] (exact rounding in every mode),
//! [`exact`] (exact `.f`/`.hf`/`.bf` results in integers), [`fused`] (division and roots
//! corrected with a fused `Fma`), [`soft64`] (exact `.df`
//! products, quotients, roots and `fmad` in integers), [`transcendental`] (`fsin fcos fexp2
//! flog2 ftanh frcp frsqrt`) and [`emit`] (one-line instruction emitters).

mod arith;
mod convert;
pub(in crate::back::spirv) mod emit;
mod exact;
mod fused;
mod round;
mod soft64;
mod transcendental;

use super::function::FnCx;
use super::module::Scalar;
use super::ops_int::Elems;
use crate::back::spirv::error::EResult;
use crate::ir::{DataType, Inst};
use rspirv::spirv::{Decoration, Word};

/// How a PISA float type is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FKind {
    /// IEEE binary16, computed in f32.
    Half,
    /// bfloat16, computed in f32.
    Bf16,
    /// binary32.
    F32,
    /// binary64.
    F64,
}

impl FKind {
    /// The kind of a scalar float type or of a packed type's elements.
    pub fn of(t: DataType) -> Option<FKind> {
        Some(match t {
            DataType::Hf | DataType::Hfx2 => FKind::Half,
            DataType::Bf | DataType::Bfx2 => FKind::Bf16,
            DataType::F => FKind::F32,
            DataType::Df => FKind::F64,
            _ => return None,
        })
    }

    /// Storage width in bits.
    pub fn bits(self) -> u32 {
        match self {
            FKind::Half | FKind::Bf16 => 16,
            FKind::F32 => 32,
            FKind::F64 => 64,
        }
    }

    /// Width of the type computations happen in.
    pub fn compute_bits(self) -> u32 {
        match self {
            FKind::F64 => 64,
            _ => 32,
        }
    }

    fn exp_mask(self) -> u64 {
        match self {
            FKind::Half => 0x7C00,
            FKind::Bf16 => 0x7F80,
            FKind::F32 => 0x7F80_0000,
            FKind::F64 => 0x7FF0_0000_0000_0000,
        }
    }

    fn sign_mask(self) -> u64 {
        1u64 << (self.bits() - 1)
    }

    fn quiet_bit(self) -> u64 {
        match self {
            FKind::Half => 0x0200,
            FKind::Bf16 => 0x0040,
            FKind::F32 => 0x0040_0000,
            FKind::F64 => 0x0008_0000_0000_0000,
        }
    }

    /// The canonical quiet NaN.
    pub fn qnan(self) -> u64 {
        self.exp_mask() | self.quiet_bit()
    }
}

impl FnCx<'_> {
    fn no_contraction(&mut self, id: Word) {
        self.m.b.decorate(id, Decoration::NoContraction, []);
    }

    fn ftype(&mut self, k: FKind) -> Word {
        self.m.ty(Scalar::F(k.compute_bits()))
    }

    /// Raw bits of kind `k` → compute float (exact).
    pub fn to_float(&mut self, k: FKind, bits: Word) -> EResult<Word> {
        if matches!(k, FKind::F32 | FKind::Bf16) {
            // `.f` and `.bf` denormals are `f32` denormals: the device must keep them.
            self.m
                .feature(crate::reflect::Feature::KeepsDenormalsFloat32);
        }
        let ft = self.ftype(k);
        match k {
            FKind::F32 | FKind::F64 => Ok(self.m.b.bitcast(ft, None, bits)),
            FKind::Bf16 => {
                let w = self.resize(bits, 16, 32)?;
                let w = self.shl_const(w, 32, 16)?;
                Ok(self.m.b.bitcast(ft, None, w))
            }
            FKind::Half => {
                let u32t = self.m.uint(32);
                let bt = self.m.ty(Scalar::Bool);
                let h = self.resize(bits, 16, 32)?;
                let sign = self.mask_const(h, 0x8000)?;
                let sign = self.shl_const(sign, 32, 16)?;
                let e = self.shr_const(h, 32, 10)?;
                let e = self.mask_const(e, 0x1F)?;
                let m = self.mask_const(h, 0x3FF)?;
                let m13 = self.shl_const(m, 32, 13)?;
                // normal: (e + 112) << 23 | m << 13
                let k112 = self.m.const_u32(112);
                let eb = self.m.b.i_add(u32t, None, e, k112);
                let eb = self.shl_const(eb, 32, 23)?;
                let normal = self.m.b.bitwise_or(u32t, None, eb, m13);
                // inf/NaN: 0x7F800000 | m << 13
                let infb = self.m.const_u32(0x7F80_0000);
                let special = self.m.b.bitwise_or(u32t, None, infb, m13);
                // zero/denormal: m * 2^-24, exact in f32
                let ft = self.ftype(k);
                let mf = self.m.b.convert_u_to_f(ft, None, m);
                let scale = self.m.const_of(ft, 32, (2f32.powi(-24)).to_bits() as u64);
                let df = self.m.b.f_mul(ft, None, mf, scale);
                let denorm = self.m.b.bitcast(u32t, None, df);
                let zero = self.m.const_u32(0);
                let max = self.m.const_u32(0x1F);
                let is0 = self.m.b.i_equal(bt, None, e, zero);
                let is_max = self.m.b.i_equal(bt, None, e, max);
                let mag = self.sel(32, is_max, special, normal)?;
                let mag = self.sel(32, is0, denorm, mag)?;
                let r = self.m.b.bitwise_or(u32t, None, mag, sign);
                Ok(self.m.b.bitcast(ft, None, r))
            }
        }
    }

    fn mask_const(&mut self, x: Word, m: u32) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let k = self.m.const_u32(m);
        Ok(self.m.b.bitwise_and(u32t, None, x, k))
    }

    /// Compute float → raw bits of kind `k`, rounding to nearest even.
    pub fn from_float(&mut self, k: FKind, f: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        match k {
            FKind::F32 => Ok(self.m.b.bitcast(u32t, None, f)),
            FKind::F64 => {
                let u64t = self.m.uint(64);
                Ok(self.m.b.bitcast(u64t, None, f))
            }
            FKind::Bf16 => {
                let bt = self.m.ty(Scalar::Bool);
                let x = self.m.b.bitcast(u32t, None, f);
                let hi = self.shr_const(x, 32, 16)?;
                let lsb = self.mask_const(hi, 1)?;
                let k7 = self.m.const_u32(0x7FFF);
                let r = self.m.b.i_add(u32t, None, x, k7);
                let r = self.m.b.i_add(u32t, None, r, lsb);
                let r = self.shr_const(r, 32, 16)?;
                let q = self.m.const_u32(0x40);
                let nan = self.m.b.bitwise_or(u32t, None, hi, q);
                let isnan = self.m.b.is_nan(bt, None, f);
                let r = self.sel(32, isnan, nan, r)?;
                self.resize(r, 32, 16)
            }
            FKind::Half => self.f32_to_half(f),
        }
    }

    fn f32_to_half(&mut self, f: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let x = self.m.b.bitcast(u32t, None, f);
        let sign = self.shr_const(x, 32, 16)?;
        let sign = self.mask_const(sign, 0x8000)?;
        let abs = self.mask_const(x, 0x7FFF_FFFF)?;
        // NaN: quiet, payload's top bits kept.
        let m = self.mask_const(abs, 0x7F_FFFF)?;
        let m13 = self.shr_const(m, 32, 13)?;
        let nanv = self.m.const_u32(0x7E00);
        let nan = self.m.b.bitwise_or(u32t, None, nanv, m13);
        let inf = self.m.const_u32(0x7C00);
        // Normal: rebias and round on the 13 dropped bits.
        let rebias = self.m.const_u32(0x3800_0000);
        let nb = self.m.b.i_sub(u32t, None, abs, rebias);
        let nr = self.shr_const(nb, 32, 13)?;
        let normal = self.round_shifted(nb, nr, 13)?;
        // Denormal: (m | 0x800000) >> (126 - e), rounded.
        let e = self.shr_const(abs, 32, 23)?;
        let implicit = self.m.const_u32(0x80_0000);
        let mm = self.m.b.bitwise_or(u32t, None, m, implicit);
        let k126 = self.m.const_u32(126);
        let sh = self.m.b.i_sub(u32t, None, k126, e);
        let k31 = self.m.const_u32(31);
        let sh = self.min_u(sh, k31)?;
        let dr = self.m.b.shift_right_logical(u32t, None, mm, sh);
        let denorm = self.round_shifted_dyn(mm, dr, sh)?;
        let t_nan = self.m.const_u32(0x7F80_0000);
        let t_inf = self.m.const_u32(0x477F_F000);
        let t_norm = self.m.const_u32(0x3880_0000);
        let is_nan = self.m.b.u_greater_than(bt, None, abs, t_nan);
        let is_inf = self.m.b.u_greater_than_equal(bt, None, abs, t_inf);
        let is_den = self.m.b.u_less_than(bt, None, abs, t_norm);
        let r = self.sel(32, is_den, denorm, normal)?;
        let r = self.sel(32, is_inf, inf, r)?;
        let r = self.sel(32, is_nan, nan, r)?;
        let r = self.m.b.bitwise_or(u32t, None, r, sign);
        self.resize(r, 32, 16)
    }

    fn min_u(&mut self, a: Word, b: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        let lt = self.m.b.u_less_than(bt, None, a, b);
        self.sel(32, lt, a, b)
    }

    /// `r + round-up?` for round-to-nearest-even of `x >> n` (constant n).
    fn round_shifted(&mut self, x: Word, r: Word, n: u32) -> EResult<Word> {
        let k = self.m.const_u32(n);
        self.round_shifted_dyn(x, r, k)
    }

    fn round_shifted_dyn(&mut self, x: Word, r: Word, n: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let one = self.m.const_u32(1);
        let full = self.m.b.shift_left_logical(u32t, None, one, n);
        let mask = self.m.b.i_sub(u32t, None, full, one);
        let rem = self.m.b.bitwise_and(u32t, None, x, mask);
        let half = self.shr_const(full, 32, 1)?;
        let gt = self.m.b.u_greater_than(bt, None, rem, half);
        let eq = self.m.b.i_equal(bt, None, rem, half);
        let odd = self.mask_const(r, 1)?;
        let zero = self.m.const_u32(0);
        let is_odd = self.m.b.i_not_equal(bt, None, odd, zero);
        let tie_up = self.m.b.logical_and(bt, None, eq, is_odd);
        let up = self.m.b.logical_or(bt, None, gt, tie_up);
        let inc = self.sel(32, up, one, zero)?;
        Ok(self.m.b.i_add(u32t, None, r, inc))
    }

    /// `.ftz` on raw bits: a denormal becomes a zero of the same sign.
    fn flush(&mut self, k: FKind, bits: Word) -> EResult<Word> {
        let w = k.bits();
        let t = self.m.uint(w);
        let bt = self.m.ty(Scalar::Bool);
        let em = self.m.const_uint(w, k.exp_mask());
        let e = self.m.b.bitwise_and(t, None, bits, em);
        let zero = self.m.const_uint(w, 0);
        let den = self.m.b.i_equal(bt, None, e, zero);
        let sm = self.m.const_uint(w, k.sign_mask());
        let signed0 = self.m.b.bitwise_and(t, None, bits, sm);
        self.sel(w, den, signed0, bits)
    }

    fn read_float(&mut self, k: FKind, op: &crate::ir::Operand, ftz: bool) -> EResult<Word> {
        let mut b = self.read_uint(op, k.bits())?;
        if ftz {
            b = self.flush(k, b)?;
        }
        self.to_float(k, b)
    }

    fn float_elems(
        &mut self,
        k: FKind,
        inst: &Inst,
        i: usize,
        n: u32,
        ftz: bool,
    ) -> EResult<Elems> {
        let raw = self.elems(inst, i, k.bits(), n)?;
        let mut out = Elems::new();
        for r in raw {
            let r = if ftz { self.flush(k, r)? } else { r };
            out.push(self.to_float(k, r)?);
        }
        Ok(out)
    }

    fn finish_float(&mut self, k: FKind, f: Word, ftz: bool, dsat: bool) -> EResult<Word> {
        let f = if dsat { self.dsat(k, f)? } else { f };
        let mut b = self.from_float(k, f)?;
        if ftz {
            b = self.flush(k, b)?;
        }
        Ok(b)
    }

    /// `.dsat`: clamp to [+0, 1]; NaN and -0 become +0.
    fn dsat(&mut self, k: FKind, f: Word) -> EResult<Word> {
        let ft = self.ftype(k);
        let bt = self.m.ty(Scalar::Bool);
        let cb = k.compute_bits();
        let zero = self.m.const_of(ft, cb, 0);
        let one = self.m.const_of(
            ft,
            cb,
            if cb == 64 {
                1f64.to_bits()
            } else {
                1f32.to_bits() as u64
            },
        );
        // -0 clamps to +0 as well.
        let lt = self.m.b.f_ord_less_than_equal(bt, None, f, zero);
        let gt = self.m.b.f_ord_greater_than(bt, None, f, one);
        let nan = self.m.b.is_nan(bt, None, f);
        let low = self.m.b.logical_or(bt, None, lt, nan);
        let r = self.m.b.select(ft, None, low, zero, f);
        Ok(self.m.b.select(ft, None, gt, one, r))
    }
}
