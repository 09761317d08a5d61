//! Lowering of floating-point instructions (isa-2, the conversions of isa-4, `fcmp`).
//!
//! Values travel as raw bits in integer registers; arithmetic bit-casts them to floats.
//! `.hf` and `.bf` values are widened exactly to `f32`, computed there and rounded back
//! to nearest-even with integer arithmetic: for `+ - * / sqrt` the double rounding through
//! `f32` is innocuous (24 >= 2*11+2), so no `Float16` capability is needed and every device
//! gives the same bits. Every float operation is decorated `NoContraction`.
//!
//! Rounding modes other than `.re`, and the transcendental functions, are refused with a
//! clear error until the floating-point work lands (see the floating-point issue).

use super::function::{bug, EResult, FnCx};
use super::module::Scalar;
use crate::ir::{CmpOp, DataType, Inst, Opcode, RoundingMode};
use rspirv::dr::Operand as SpvOperand;
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
        let ft = self.ftype(k);
        match k {
            FKind::F32 | FKind::F64 => self.m.b.bitcast(ft, None, bits).map_err(bug),
            FKind::Bf16 => {
                let w = self.resize(bits, 16, 32)?;
                let w = self.shl_const(w, 32, 16)?;
                self.m.b.bitcast(ft, None, w).map_err(bug)
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
                let eb = self.m.b.i_add(u32t, None, e, k112).map_err(bug)?;
                let eb = self.shl_const(eb, 32, 23)?;
                let normal = self.m.b.bitwise_or(u32t, None, eb, m13).map_err(bug)?;
                // inf/NaN: 0x7F800000 | m << 13
                let infb = self.m.const_u32(0x7F80_0000);
                let special = self.m.b.bitwise_or(u32t, None, infb, m13).map_err(bug)?;
                // zero/denormal: m * 2^-24, exact in f32
                let ft = self.ftype(k);
                let mf = self.m.b.convert_u_to_f(ft, None, m).map_err(bug)?;
                let scale = self.m.const_of(ft, 32, (2f32.powi(-24)).to_bits() as u64);
                let df = self.m.b.f_mul(ft, None, mf, scale).map_err(bug)?;
                let denorm = self.m.b.bitcast(u32t, None, df).map_err(bug)?;
                let zero = self.m.const_u32(0);
                let max = self.m.const_u32(0x1F);
                let is0 = self.m.b.i_equal(bt, None, e, zero).map_err(bug)?;
                let is_max = self.m.b.i_equal(bt, None, e, max).map_err(bug)?;
                let mag = self.sel(32, is_max, special, normal)?;
                let mag = self.sel(32, is0, denorm, mag)?;
                let r = self.m.b.bitwise_or(u32t, None, mag, sign).map_err(bug)?;
                self.m.b.bitcast(ft, None, r).map_err(bug)
            }
        }
    }

    fn mask_const(&mut self, x: Word, m: u32) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let k = self.m.const_u32(m);
        self.m.b.bitwise_and(u32t, None, x, k).map_err(bug)
    }

    /// Compute float → raw bits of kind `k`, rounding to nearest even.
    pub fn from_float(&mut self, k: FKind, f: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        match k {
            FKind::F32 => self.m.b.bitcast(u32t, None, f).map_err(bug),
            FKind::F64 => {
                let u64t = self.m.uint(64);
                self.m.b.bitcast(u64t, None, f).map_err(bug)
            }
            FKind::Bf16 => {
                let bt = self.m.ty(Scalar::Bool);
                let x = self.m.b.bitcast(u32t, None, f).map_err(bug)?;
                let hi = self.shr_const(x, 32, 16)?;
                let lsb = self.mask_const(hi, 1)?;
                let k7 = self.m.const_u32(0x7FFF);
                let r = self.m.b.i_add(u32t, None, x, k7).map_err(bug)?;
                let r = self.m.b.i_add(u32t, None, r, lsb).map_err(bug)?;
                let r = self.shr_const(r, 32, 16)?;
                let q = self.m.const_u32(0x40);
                let nan = self.m.b.bitwise_or(u32t, None, hi, q).map_err(bug)?;
                let isnan = self.m.b.is_nan(bt, None, f).map_err(bug)?;
                let r = self.sel(32, isnan, nan, r)?;
                self.resize(r, 32, 16)
            }
            FKind::Half => self.f32_to_half(f),
        }
    }

    fn f32_to_half(&mut self, f: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let x = self.m.b.bitcast(u32t, None, f).map_err(bug)?;
        let sign = self.shr_const(x, 32, 16)?;
        let sign = self.mask_const(sign, 0x8000)?;
        let abs = self.mask_const(x, 0x7FFF_FFFF)?;
        // NaN: quiet, payload's top bits kept.
        let m = self.mask_const(abs, 0x7F_FFFF)?;
        let m13 = self.shr_const(m, 32, 13)?;
        let nanv = self.m.const_u32(0x7E00);
        let nan = self.m.b.bitwise_or(u32t, None, nanv, m13).map_err(bug)?;
        let inf = self.m.const_u32(0x7C00);
        // Normal: rebias and round on the 13 dropped bits.
        let rebias = self.m.const_u32(0x3800_0000);
        let nb = self.m.b.i_sub(u32t, None, abs, rebias).map_err(bug)?;
        let nr = self.shr_const(nb, 32, 13)?;
        let normal = self.round_shifted(nb, nr, 13)?;
        // Denormal: (m | 0x800000) >> (126 - e), rounded.
        let e = self.shr_const(abs, 32, 23)?;
        let implicit = self.m.const_u32(0x80_0000);
        let mm = self.m.b.bitwise_or(u32t, None, m, implicit).map_err(bug)?;
        let k126 = self.m.const_u32(126);
        let sh = self.m.b.i_sub(u32t, None, k126, e).map_err(bug)?;
        let k31 = self.m.const_u32(31);
        let sh = self.min_u(sh, k31)?;
        let dr = self
            .m
            .b
            .shift_right_logical(u32t, None, mm, sh)
            .map_err(bug)?;
        let denorm = self.round_shifted_dyn(mm, dr, sh)?;
        let t_nan = self.m.const_u32(0x7F80_0000);
        let t_inf = self.m.const_u32(0x477F_F000);
        let t_norm = self.m.const_u32(0x3880_0000);
        let is_nan = self.m.b.u_greater_than(bt, None, abs, t_nan).map_err(bug)?;
        let is_inf = self
            .m
            .b
            .u_greater_than_equal(bt, None, abs, t_inf)
            .map_err(bug)?;
        let is_den = self.m.b.u_less_than(bt, None, abs, t_norm).map_err(bug)?;
        let r = self.sel(32, is_den, denorm, normal)?;
        let r = self.sel(32, is_inf, inf, r)?;
        let r = self.sel(32, is_nan, nan, r)?;
        let r = self.m.b.bitwise_or(u32t, None, r, sign).map_err(bug)?;
        self.resize(r, 32, 16)
    }

    fn min_u(&mut self, a: Word, b: Word) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        let lt = self.m.b.u_less_than(bt, None, a, b).map_err(bug)?;
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
        let full = self
            .m
            .b
            .shift_left_logical(u32t, None, one, n)
            .map_err(bug)?;
        let mask = self.m.b.i_sub(u32t, None, full, one).map_err(bug)?;
        let rem = self.m.b.bitwise_and(u32t, None, x, mask).map_err(bug)?;
        let half = self.shr_const(full, 32, 1)?;
        let gt = self.m.b.u_greater_than(bt, None, rem, half).map_err(bug)?;
        let eq = self.m.b.i_equal(bt, None, rem, half).map_err(bug)?;
        let odd = self.mask_const(r, 1)?;
        let zero = self.m.const_u32(0);
        let is_odd = self.m.b.i_not_equal(bt, None, odd, zero).map_err(bug)?;
        let tie_up = self.m.b.logical_and(bt, None, eq, is_odd).map_err(bug)?;
        let up = self.m.b.logical_or(bt, None, gt, tie_up).map_err(bug)?;
        let inc = self.sel(32, up, one, zero)?;
        self.m.b.i_add(u32t, None, r, inc).map_err(bug)
    }

    /// `.ftz` on raw bits: a denormal becomes a zero of the same sign.
    fn flush(&mut self, k: FKind, bits: Word) -> EResult<Word> {
        let w = k.bits();
        let t = self.m.uint(w);
        let bt = self.m.ty(Scalar::Bool);
        let em = self.m.const_uint(w, k.exp_mask());
        let e = self.m.b.bitwise_and(t, None, bits, em).map_err(bug)?;
        let zero = self.m.const_uint(w, 0);
        let den = self.m.b.i_equal(bt, None, e, zero).map_err(bug)?;
        let sm = self.m.const_uint(w, k.sign_mask());
        let signed0 = self.m.b.bitwise_and(t, None, bits, sm).map_err(bug)?;
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
    ) -> EResult<Vec<Word>> {
        let raw = self.src_elems(inst, i, k.bits(), n)?;
        let mut out = Vec::new();
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
        let lt = self
            .m
            .b
            .f_ord_less_than_equal(bt, None, f, zero)
            .map_err(bug)?;
        let gt = self.m.b.f_ord_greater_than(bt, None, f, one).map_err(bug)?;
        let nan = self.m.b.is_nan(bt, None, f).map_err(bug)?;
        let low = self.m.b.logical_or(bt, None, lt, nan).map_err(bug)?;
        let r = self.m.b.select(ft, None, low, zero, f).map_err(bug)?;
        self.m.b.select(ft, None, gt, one, r).map_err(bug)
    }

    fn check_rounding(&self, inst: &Inst) -> EResult {
        match inst.q.rnd {
            None | Some(RoundingMode::Re) => Ok(()),
            Some(r) => Err(self.err(format!(
                "`{}` with rounding mode .{} is not supported by the SPIR-V back end yet (only .re)",
                inst.op.as_str(),
                format!("{r:?}").to_lowercase()
            ))),
        }
    }

    /// Lowers a floating-point arithmetic instruction.
    pub fn float_inst(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let ty = q.ty.unwrap_or(DataType::F);
        let Some(k) = FKind::of(ty) else {
            return Err(self.err(format!(
                "`{}` needs a floating-point type",
                inst.op.as_str()
            )));
        };
        let n = ty.packed().map_or(1, |(_, c)| c as u32);
        self.check_rounding(inst)?;
        if q.full {
            return Err(self.err("`fmul.full` is not supported by the SPIR-V back end yet"));
        }
        let nsrc = match inst.op {
            Opcode::Fadd
            | Opcode::Fsub
            | Opcode::Fmul
            | Opcode::Fdiv
            | Opcode::Fmin
            | Opcode::Fmax => 2,
            Opcode::Fmad => 3,
            Opcode::Fabs | Opcode::Fneg | Opcode::Fsqrt => 1,
            _ => {
                return Err(self.err(format!(
                    "`{}` is not supported by the SPIR-V back end yet",
                    inst.op.as_str()
                )))
            }
        };
        if matches!(inst.op, Opcode::Fabs | Opcode::Fneg) {
            return self.sign_op(inst, k, n);
        }
        let mut srcs = Vec::new();
        for i in 1..=nsrc {
            srcs.push(self.float_elems(k, inst, i, n, q.ftz)?);
        }
        let ft = self.ftype(k);
        let mut out = Vec::new();
        for e in 0..n as usize {
            let s: Vec<Word> = srcs.iter().map(|v| v[e]).collect();
            let r = match inst.op {
                Opcode::Fadd => self.m.b.f_add(ft, None, s[0], s[1]).map_err(bug)?,
                Opcode::Fsub => self.m.b.f_sub(ft, None, s[0], s[1]).map_err(bug)?,
                Opcode::Fmul => self.m.b.f_mul(ft, None, s[0], s[1]).map_err(bug)?,
                Opcode::Fdiv => self.m.b.f_div(ft, None, s[0], s[1]).map_err(bug)?,
                Opcode::Fmad => self.fma(k, s[0], s[1], s[2])?,
                Opcode::Fsqrt => {
                    let glsl = self.m.glsl;
                    self.m
                        .b
                        .ext_inst(ft, None, glsl, 31, [SpvOperand::IdRef(s[0])])
                        .map_err(bug)?
                }
                Opcode::Fmin | Opcode::Fmax => {
                    self.fmin_max(k, s[0], s[1], inst.op == Opcode::Fmax, q.nanp)?
                }
                _ => unreachable!("filtered above"),
            };
            self.no_contraction(r);
            out.push(self.finish_float(k, r, q.ftz, q.dsat)?);
        }
        self.dst_elems(inst, k.bits(), &out)
    }

    fn fma(&mut self, k: FKind, a: Word, b: Word, c: Word) -> EResult<Word> {
        let ft = self.ftype(k);
        match k {
            // Half and bfloat16 products are exact in f32, so multiply-then-add is fused.
            FKind::Half | FKind::Bf16 => {
                let p = self.m.b.f_mul(ft, None, a, b).map_err(bug)?;
                self.no_contraction(p);
                self.m.b.f_add(ft, None, p, c).map_err(bug)
            }
            FKind::F32 => self.fma_f32(a, b, c),
            FKind::F64 => Err(self.err(
                "`fmad.df` is not supported by the SPIR-V back end yet: no Vulkan driver guarantees a fused double-precision fma",
            )),
        }
    }

    /// A correctly rounded f32 fma from f64 arithmetic: the product is exact in f64, the sum
    /// is rounded to odd (round to nearest, then nudged by the TwoSum error), and rounding
    /// that to f32 is then correct (Boldo and Melquiond, "Emulation of FMA and correctly
    /// rounded sums: proved algorithms using rounding to odd").
    fn fma_f32(&mut self, a: Word, b: Word, c: Word) -> EResult<Word> {
        let dt = self.m.ty(Scalar::F(64));
        let ft = self.m.ty(Scalar::F(32));
        let u64t = self.m.uint(64);
        let bt = self.m.ty(Scalar::Bool);
        self.m.feature(crate::reflect::Feature::Float64);
        let a = self.m.b.f_convert(dt, None, a).map_err(bug)?;
        let b = self.m.b.f_convert(dt, None, b).map_err(bug)?;
        let c = self.m.b.f_convert(dt, None, c).map_err(bug)?;
        let p = self.m.b.f_mul(dt, None, a, b).map_err(bug)?;
        let s = self.m.b.f_add(dt, None, p, c).map_err(bug)?;
        // TwoSum: e = (p - (s - bb)) + (c - bb) with bb = s - p
        let bb = self.m.b.f_sub(dt, None, s, p).map_err(bug)?;
        let sb = self.m.b.f_sub(dt, None, s, bb).map_err(bug)?;
        let e1 = self.m.b.f_sub(dt, None, p, sb).map_err(bug)?;
        let e2 = self.m.b.f_sub(dt, None, c, bb).map_err(bug)?;
        let e = self.m.b.f_add(dt, None, e1, e2).map_err(bug)?;
        for id in [p, s, bb, sb, e1, e2, e] {
            self.no_contraction(id);
        }
        let zero = self.m.const_of(dt, 64, 0);
        let inexact = self.m.b.f_ord_not_equal(bt, None, e, zero).map_err(bug)?;
        let sbits = self.m.b.bitcast(u64t, None, s).map_err(bug)?;
        let one = self.m.const_uint(64, 1);
        let lsb = self.m.b.bitwise_and(u64t, None, sbits, one).map_err(bug)?;
        let z64 = self.m.const_uint(64, 0);
        let even = self.m.b.i_equal(bt, None, lsb, z64).map_err(bug)?;
        let fix = self.m.b.logical_and(bt, None, inexact, even).map_err(bug)?;
        // Away from zero when e has the sign of s, else toward zero.
        let epos = self
            .m
            .b
            .f_ord_greater_than(bt, None, e, zero)
            .map_err(bug)?;
        let spos = self
            .m
            .b
            .f_ord_greater_than(bt, None, s, zero)
            .map_err(bug)?;
        let away = self.m.b.logical_equal(bt, None, epos, spos).map_err(bug)?;
        let up = self.m.b.i_add(u64t, None, sbits, one).map_err(bug)?;
        let down = self.m.b.i_sub(u64t, None, sbits, one).map_err(bug)?;
        let moved = self.sel(64, away, up, down)?;
        let odd = self.sel(64, fix, moved, sbits)?;
        let odd = self.m.b.bitcast(dt, None, odd).map_err(bug)?;
        self.m.b.f_convert(ft, None, odd).map_err(bug)
    }

    /// IEEE minimumNumber/maximumNumber (or minimum/maximum with `.nanp`), -0 < +0.
    pub fn fmin_max(&mut self, k: FKind, a: Word, b: Word, max: bool, nanp: bool) -> EResult<Word> {
        let ft = self.ftype(k);
        let bt = self.m.ty(Scalar::Bool);
        let cb = k.compute_bits();
        let it = self.m.uint(cb);
        let an = self.m.b.is_nan(bt, None, a).map_err(bug)?;
        let bn = self.m.b.is_nan(bt, None, b).map_err(bug)?;
        let lt = if max {
            self.m.b.f_ord_greater_than(bt, None, a, b).map_err(bug)?
        } else {
            self.m.b.f_ord_less_than(bt, None, a, b).map_err(bug)?
        };
        let pick = self.m.b.select(ft, None, lt, a, b).map_err(bug)?;
        // Equal values (±0): OR the bits for min (-0 wins), AND for max (+0 wins).
        let eq = self.m.b.f_ord_equal(bt, None, a, b).map_err(bug)?;
        let ai = self.m.b.bitcast(it, None, a).map_err(bug)?;
        let bi = self.m.b.bitcast(it, None, b).map_err(bug)?;
        let combined = if max {
            self.m.b.bitwise_and(it, None, ai, bi).map_err(bug)?
        } else {
            self.m.b.bitwise_or(it, None, ai, bi).map_err(bug)?
        };
        let cf = self.m.b.bitcast(ft, None, combined).map_err(bug)?;
        let r = self.m.b.select(ft, None, eq, cf, pick).map_err(bug)?;
        if nanp {
            let any = self.m.b.logical_or(bt, None, an, bn).map_err(bug)?;
            let qn = self.m.const_of(
                ft,
                cb,
                if cb == 64 {
                    FKind::F64.qnan()
                } else {
                    FKind::F32.qnan()
                },
            );
            return self.m.b.select(ft, None, any, qn, r).map_err(bug);
        }
        // minimumNumber: a NaN operand yields the other one; two NaNs give a quiet NaN.
        let r = self.m.b.select(ft, None, an, b, r).map_err(bug)?;
        let r = self.m.b.select(ft, None, bn, a, r).map_err(bug)?;
        let both = self.m.b.logical_and(bt, None, an, bn).map_err(bug)?;
        let qbit = if cb == 64 {
            FKind::F64.quiet_bit()
        } else {
            FKind::F32.quiet_bit()
        };
        let q = self.m.const_uint(cb, qbit);
        let quieted = self.m.b.bitwise_or(it, None, ai, q).map_err(bug)?;
        let quieted = self.m.b.bitcast(ft, None, quieted).map_err(bug)?;
        self.m.b.select(ft, None, both, quieted, r).map_err(bug)
    }

    /// `fabs` and `fneg` on the sign bit (`fabs` of a NaN returns a quiet NaN).
    fn sign_op(&mut self, inst: &Inst, k: FKind, n: u32) -> EResult {
        let w = k.bits();
        let t = self.m.uint(w);
        let bt = self.m.ty(Scalar::Bool);
        let raw = self.src_elems(inst, 1, w, n)?;
        let mut out = Vec::new();
        for mut x in raw {
            if inst.q.ftz {
                x = self.flush(k, x)?;
            }
            let sm = self.m.const_uint(w, k.sign_mask());
            let r = if inst.op == Opcode::Fabs {
                let inv = self.m.const_uint(w, !k.sign_mask());
                let a = self.m.b.bitwise_and(t, None, x, inv).map_err(bug)?;
                let em = self.m.const_uint(w, k.exp_mask());
                let is_nan = self.m.b.u_greater_than(bt, None, a, em).map_err(bug)?;
                let qb = self.m.const_uint(w, k.quiet_bit());
                let quiet = self.m.b.bitwise_or(t, None, a, qb).map_err(bug)?;
                self.sel(w, is_nan, quiet, a)?
            } else {
                self.m.b.bitwise_xor(t, None, x, sm).map_err(bug)?
            };
            out.push(r);
        }
        self.dst_elems(inst, w, &out)
    }

    /// `fcmp` (ordered except `.ne`, which is true for unordered operands).
    pub fn fcmp(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let ty = q.ty.unwrap_or(DataType::F);
        let k = FKind::of(ty).ok_or_else(|| self.err("fcmp needs a float type"))?;
        let n = ty.packed().map_or(1, |(_, c)| c as u32);
        let a = self.float_elems(k, inst, 1, n, q.ftz)?;
        let b = self.float_elems(k, inst, 2, n, q.ftz)?;
        let bt = self.m.ty(Scalar::Bool);
        let mut rs = Vec::new();
        for i in 0..n as usize {
            let bld = &mut self.m.b;
            let r = match q.cop.unwrap_or(CmpOp::Eq) {
                CmpOp::Eq => bld.f_ord_equal(bt, None, a[i], b[i]),
                CmpOp::Ne => bld.f_unord_not_equal(bt, None, a[i], b[i]),
                CmpOp::Lt => bld.f_ord_less_than(bt, None, a[i], b[i]),
                CmpOp::Le => bld.f_ord_less_than_equal(bt, None, a[i], b[i]),
                CmpOp::Gt => bld.f_ord_greater_than(bt, None, a[i], b[i]),
                CmpOp::Ge => bld.f_ord_greater_than_equal(bt, None, a[i], b[i]),
            }
            .map_err(bug)?;
            rs.push(r);
        }
        self.write_cmp(inst, &rs, 16)
    }

    /// `f2i`: round per `.rndmode` (default `.re`), then saturate; NaN gives 0.
    pub fn f2i(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let from = q
            .from
            .and_then(FKind::of)
            .ok_or_else(|| self.err("f2i needs a float .from"))?;
        let to = q.to.unwrap_or(DataType::S32);
        let (w, signed) = (to.bits(), to.is_signed());
        let x = self.read_float(from, &inst.ops[1], false)?;
        let ft = self.ftype(from);
        let cb = from.compute_bits();
        let r = self.round_to_integral(from, x, q.rounding())?;
        // Saturate in the float domain with exactly representable bounds.
        let bt = self.m.ty(Scalar::Bool);
        let (lo_f, hi_f) = if signed {
            (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1))
        } else {
            (0.0, 2f64.powi(w as i32))
        };
        let cw = if w == 64 { 64 } else { 32 };
        let it = self.m.uint(cw);
        let lo = self.fconst(cb, lo_f);
        let hi = self.fconst(cb, hi_f);
        let below = self.m.b.f_ord_less_than(bt, None, r, lo).map_err(bug)?;
        let above = self
            .m
            .b
            .f_ord_greater_than_equal(bt, None, r, hi)
            .map_err(bug)?;
        let nan = self.m.b.is_nan(bt, None, r).map_err(bug)?;
        let zero_f = self.fconst(cb, 0.0);
        let safe = self.m.b.select(ft, None, below, lo, r).map_err(bug)?;
        let safe = self
            .m
            .b
            .select(ft, None, above, zero_f, safe)
            .map_err(bug)?;
        let safe = self.m.b.select(ft, None, nan, zero_f, safe).map_err(bug)?;
        let conv = if signed {
            self.m.b.convert_f_to_s(it, None, safe).map_err(bug)?
        } else {
            self.m.b.convert_f_to_u(it, None, safe).map_err(bug)?
        };
        let max_i = if signed {
            (1u64 << (w - 1)) - 1
        } else if w == 64 {
            u64::MAX
        } else {
            (1u64 << w) - 1
        };
        let maxk = self.m.const_uint(cw, max_i);
        let r = self.sel(cw, above, maxk, conv)?;
        let _ = it;
        let r = self.resize(r, cw, w)?;
        self.write_uint(&inst.ops[0], w, r)
    }

    /// Rounds a compute float to an integral value with `mode`.
    fn round_to_integral(&mut self, k: FKind, x: Word, mode: RoundingMode) -> EResult<Word> {
        let ft = self.ftype(k);
        let cb = k.compute_bits();
        let glsl = self.m.glsl;
        let op = |n: u32| [SpvOperand::IdRef(x)].map(|o| (n, o));
        let [(code, arg)] = match mode {
            RoundingMode::Re => op(2),
            RoundingMode::Rd => op(8),
            RoundingMode::Ru => op(9),
            RoundingMode::Rz => op(3),
            RoundingMode::Rna => {
                // trunc(x) + sign(x) when |x - trunc(x)| >= 0.5 (the difference is exact)
                let t = self
                    .m
                    .b
                    .ext_inst(ft, None, glsl, 3, [SpvOperand::IdRef(x)])
                    .map_err(bug)?;
                let d = self.m.b.f_sub(ft, None, x, t).map_err(bug)?;
                let ad = self
                    .m
                    .b
                    .ext_inst(ft, None, glsl, 4, [SpvOperand::IdRef(d)])
                    .map_err(bug)?;
                let half = self.fconst(cb, 0.5);
                let bt = self.m.ty(Scalar::Bool);
                let up = self
                    .m
                    .b
                    .f_ord_greater_than_equal(bt, None, ad, half)
                    .map_err(bug)?;
                let s = self
                    .m
                    .b
                    .ext_inst(ft, None, glsl, 6, [SpvOperand::IdRef(x)])
                    .map_err(bug)?;
                let ts = self.m.b.f_add(ft, None, t, s).map_err(bug)?;
                self.no_contraction(ts);
                return self.m.b.select(ft, None, up, ts, t).map_err(bug);
            }
        };
        self.m.b.ext_inst(ft, None, glsl, code, [arg]).map_err(bug)
    }

    /// `frnd`: round to an integral value in the same format.
    pub fn frnd(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let k =
            q.ty.and_then(FKind::of)
                .ok_or_else(|| self.err("frnd needs a float type"))?;
        let x = self.read_float(k, &inst.ops[1], q.ftz)?;
        let r = self.round_to_integral(k, x, q.rounding())?;
        let b = self.finish_float(k, r, q.ftz, false)?;
        self.write_uint(&inst.ops[0], k.bits(), b)
    }

    fn fconst(&mut self, bits: u32, v: f64) -> Word {
        let ft = self.m.ty(Scalar::F(bits));
        if bits == 64 {
            self.m.const_of(ft, 64, v.to_bits())
        } else {
            self.m.const_of(ft, 32, (v as f32).to_bits() as u64)
        }
    }

    /// `i2f` (default rounding), `fext`, `ftrunc` (default rounding).
    pub fn float_convert(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        self.check_rounding(inst)?;
        let to =
            q.to.and_then(FKind::of)
                .ok_or_else(|| self.err("conversion needs a float .to"))?;
        let r = match inst.op {
            Opcode::I2f => {
                let from = q.from.unwrap_or(DataType::S32);
                let (w, signed) = (from.bits(), from.is_signed());
                if matches!(to, FKind::Half | FKind::Bf16) || q.dsat {
                    return Err(self.err("`i2f` to .hf/.bf or with .dsat is not supported by the SPIR-V back end yet"));
                }
                let x = self.read_uint(&inst.ops[1], w)?;
                let cw = w.max(32);
                let x = if signed {
                    self.sresize(x, w, cw)?
                } else {
                    self.resize(x, w, cw)?
                };
                let ft = self.ftype(to);
                let f = if signed {
                    self.m.b.convert_s_to_f(ft, None, x).map_err(bug)?
                } else {
                    self.m.b.convert_u_to_f(ft, None, x).map_err(bug)?
                };
                self.from_float(to, f)?
            }
            _ => {
                let from = q
                    .from
                    .and_then(FKind::of)
                    .ok_or_else(|| self.err("conversion needs a float .from"))?;
                if q.dsat {
                    return Err(
                        self.err("`ftrunc.dsat` is not supported by the SPIR-V back end yet")
                    );
                }
                if from == FKind::F64 && matches!(to, FKind::Half | FKind::Bf16) {
                    // Rounding through f32 could round twice; exact conversion comes with the
                    // floating-point work.
                    return Err(self.err(
                        "`ftrunc` from .df to .hf/.bf is not supported by the SPIR-V back end yet",
                    ));
                }
                let x = self.read_float(from, &inst.ops[1], q.ftz)?;
                let ft = self.ftype(to);
                let f = if from.compute_bits() != to.compute_bits() {
                    self.m.b.f_convert(ft, None, x).map_err(bug)?
                } else {
                    x
                };
                let b = self.from_float(to, f)?;
                if q.ftz {
                    self.flush(to, b)?
                } else {
                    b
                }
            }
        };
        self.write_uint(&inst.ops[0], to.bits(), r)
    }
}
