//! Conversions of isa-4: `f2i pf2i i2f fext ftrunc ftrunc2 frnd`, in every rounding mode.
//!
//! `ftrunc`, `ftrunc2` and `i2f` to a type narrower than `.df` round an exact (or
//! rounded-to-odd) `f64` once with [`FnCx::round_f64_to`]: integer arithmetic the driver
//! cannot fold into a wider result (spec-notes §44, §45). `f2i`/`frnd` use the device's
//! exact round-to-integral instructions.

use super::emit::Emit;
use super::round::Overflow;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::Scalar;
use crate::ir::{DataType, Inst, Opcode, RoundingMode};
use rspirv::dr::Operand as SpvOperand;
use rspirv::spirv::Word;

impl FnCx<'_> {
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
        let r = self.f2i_value(from, x, w, signed, q.rounding())?;
        self.write_uint(&inst.ops[0], w, r)
    }

    /// `pf2i.s16x2`/`.u16x2` from `.hfx2`/`.bfx2`: `FnCx::f2i_value` on each half.
    pub fn pf2i(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let signed = match q.to {
            Some(DataType::S16x2) => true,
            Some(DataType::U16x2) => false,
            _ => return Err(self.err("`pf2i` needs .s16x2 or .u16x2")),
        };
        let from = match q.from {
            Some(DataType::Hfx2) => FKind::Half,
            Some(DataType::Bfx2) => FKind::Bf16,
            _ => return Err(self.err("`pf2i` needs .hfx2 or .bfx2")),
        };
        let raw = self.read_uint(&inst.ops[1], 32)?;
        let mut halves = Vec::new();
        for i in 0..2 {
            let h = self.shr_const(raw, 32, 16 * i)?;
            let h = self.resize(h, 32, 16)?;
            let x = self.to_float(from, h)?;
            let r = self.f2i_value(from, x, 16, signed, q.rounding())?;
            halves.push(self.resize(r, 16, 32)?);
        }
        let hi = self.shl_const(halves[1], 32, 16)?;
        let r = self.m.or(32, halves[0], hi)?;
        self.write_uint(&inst.ops[0], 32, r)
    }

    /// A compute float `x` of kind `from` rounded in `mode` to a `w`-bit integer, saturated;
    /// NaN gives 0. Returns `w` bits.
    fn f2i_value(
        &mut self,
        from: FKind,
        x: Word,
        w: u32,
        signed: bool,
        mode: RoundingMode,
    ) -> EResult<Word> {
        let ft = self.ftype(from);
        let cb = from.compute_bits();
        let r = self.round_to_integral(from, x, mode)?;
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
        let below = self.m.b.f_ord_less_than(bt, None, r, lo);
        let above = self.m.b.f_ord_greater_than_equal(bt, None, r, hi);
        let nan = self.m.b.is_nan(bt, None, r);
        let zero_f = self.fconst(cb, 0.0);
        let safe = self.m.b.select(ft, None, below, lo, r);
        let safe = self.m.b.select(ft, None, above, zero_f, safe);
        let safe = self.m.b.select(ft, None, nan, zero_f, safe);
        let conv = if signed {
            self.m.b.convert_f_to_s(it, None, safe)
        } else {
            self.m.b.convert_f_to_u(it, None, safe)
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
        self.resize(r, cw, w)
    }

    /// Rounds a compute float to an integral value with `mode`.
    fn round_to_integral(&mut self, k: FKind, x: Word, mode: RoundingMode) -> EResult<Word> {
        let ft = self.ftype(k);
        let cb = k.compute_bits();
        let glsl = self.m.glsl;
        let op = |n: u32| [SpvOperand::IdRef(x)].map(|o| (n, o));
        let [(code, arg)] = match mode {
            RoundingMode::Re => return self.round_half_even(k, x),
            RoundingMode::Rd => op(8),
            RoundingMode::Ru => op(9),
            RoundingMode::Rz => op(3),
            RoundingMode::Rna => {
                // trunc(x) + sign(x) when |x - trunc(x)| >= 0.5 (the difference is exact)
                let t = self.m.b.ext_inst(ft, None, glsl, 3, [SpvOperand::IdRef(x)]);
                let d = self.m.b.f_sub(ft, None, x, t);
                let ad = self.m.b.ext_inst(ft, None, glsl, 4, [SpvOperand::IdRef(d)]);
                let half = self.fconst(cb, 0.5);
                let bt = self.m.ty(Scalar::Bool);
                let up = self.m.b.f_ord_greater_than_equal(bt, None, ad, half);
                let s = self.m.b.ext_inst(ft, None, glsl, 6, [SpvOperand::IdRef(x)]);
                let ts = self.m.b.f_add(ft, None, t, s);
                self.no_contraction(ts);
                return Ok(self.m.b.select(ft, None, up, ts, t));
            }
        };
        Ok(self.m.b.ext_inst(ft, None, glsl, code, [arg]))
    }

    /// Round half to even without GLSL `RoundEven` (lavapipe's truncates doubles): from
    /// `f = floor(x)` and the exact difference `x - f`, step up past one half, or at one half
    /// when `f` is odd; the sign of `x` is kept (`-0.4` gives `-0`). Infinities and NaNs come
    /// through `floor` unchanged.
    fn round_half_even(&mut self, k: FKind, x: Word) -> EResult<Word> {
        let ft = self.ftype(k);
        let cb = k.compute_bits();
        let bt = self.m.ty(Scalar::Bool);
        let glsl = self.m.glsl;
        let floor =
            |m: &mut Self, v: Word| Ok(m.m.b.ext_inst(ft, None, glsl, 8, [SpvOperand::IdRef(v)]));
        let f = floor(self, x)?;
        let d = self.m.b.f_sub(ft, None, x, f);
        self.no_contraction(d);
        let half = self.fconst(cb, 0.5);
        let one = self.fconst(cb, 1.0);
        let two = self.fconst(cb, 2.0);
        // f is odd when f - 2 * floor(f / 2) is not zero (all exact for integral f).
        let fh = self.m.b.f_mul(ft, None, f, half);
        let h = floor(self, fh)?;
        let h2 = self.m.b.f_mul(ft, None, h, two);
        let rem = self.m.b.f_sub(ft, None, f, h2);
        for v in [fh, h2, rem] {
            self.no_contraction(v);
        }
        let zero = self.fconst(cb, 0.0);
        let odd = self.m.b.f_ord_not_equal(bt, None, rem, zero);
        let above = self.m.b.f_ord_greater_than(bt, None, d, half);
        let at = self.m.b.f_ord_equal(bt, None, d, half);
        let tie_up = self.m.b.logical_and(bt, None, at, odd);
        let up = self.m.b.logical_or(bt, None, above, tie_up);
        let f1 = self.m.b.f_add(ft, None, f, one);
        self.no_contraction(f1);
        let r = self.m.b.select(ft, None, up, f1, f);
        // copysign(r, x)
        let it = self.m.uint(cb);
        let sign = self.m.const_uint(cb, 1u64 << (cb - 1));
        let magnitude = self
            .m
            .const_uint(cb, !(1u64 << (cb - 1)) & (u64::MAX >> (64 - cb)));
        let ri = self.m.b.bitcast(it, None, r);
        let xi = self.m.b.bitcast(it, None, x);
        let rm = self.m.b.bitwise_and(it, None, ri, magnitude);
        let xs = self.m.b.bitwise_and(it, None, xi, sign);
        let bits = self.m.b.bitwise_or(it, None, rm, xs);
        Ok(self.m.b.bitcast(ft, None, bits))
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

    /// `i2f`, `fext`, `ftrunc` in every rounding mode (isa-4).
    pub fn float_convert(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let to =
            q.to.and_then(FKind::of)
                .ok_or_else(|| self.err("conversion needs a float .to"))?;
        let mode = q.rounding();
        let r = match inst.op {
            Opcode::I2f => {
                let from = q.from.unwrap_or(DataType::S32);
                let (w, signed) = (from.bits(), from.is_signed());
                let x = self.read_uint(&inst.ops[1], w)?;
                self.int_to_float(x, w, signed, to, mode, q.dsat)?
            }
            Opcode::Fext => {
                let from = q
                    .from
                    .and_then(FKind::of)
                    .ok_or_else(|| self.err("conversion needs a float .from"))?;
                // Exact widening; the compute float is converted when the widths differ.
                let x = self.read_float(from, &inst.ops[1], q.ftz)?;
                let f = if from.compute_bits() != to.compute_bits() {
                    self.m.fconv(to.compute_bits(), x)?
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
            _ => {
                let from = q
                    .from
                    .and_then(FKind::of)
                    .ok_or_else(|| self.err("conversion needs a float .from"))?;
                let x = self.read_uint(&inst.ops[1], from.bits())?;
                self.truncate(from, to, x, mode, q.ftz, q.dsat)?
            }
        };
        self.write_uint(&inst.ops[0], to.bits(), r)
    }

    /// `ftrunc` of raw bits `x` (`.f` or `.df`) to `to`: a denormal source becomes a zero of
    /// its sign (isa-4's table), the value is rounded once in `mode` with integer arithmetic,
    /// overflow gives infinity (or the largest finite value with `.dsat`, an infinite source
    /// too), then `.ftz` flushes a denormal result.
    fn truncate(
        &mut self,
        from: FKind,
        to: FKind,
        x: Word,
        mode: RoundingMode,
        ftz: bool,
        dsat: bool,
    ) -> EResult<Word> {
        if !matches!(from, FKind::F32 | FKind::F64) || to.bits() >= from.bits() {
            return Err(self.err("`ftrunc` needs a narrower .to than its .from (.f or .df)"));
        }
        let x = self.flush(from, x)?;
        let f = self.to_float(from, x)?;
        let ov = if dsat { Overflow::Sat } else { Overflow::Inf };
        let b = self.round_float_to(from, to, f, mode, ov)?;
        if ftz {
            self.flush(to, b)
        } else {
            Ok(b)
        }
    }

    /// `ftrunc2.hfx2.f`/`.bfx2.f`: two `.f` sources truncated into the low and high halves.
    pub fn ftrunc2(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let to = match q.to {
            Some(DataType::Hfx2) => FKind::Half,
            Some(DataType::Bfx2) => FKind::Bf16,
            _ => return Err(self.err("`ftrunc2` needs .hfx2 or .bfx2")),
        };
        let mut halves = Vec::new();
        for i in 1..=2 {
            let x = self.read_uint(&inst.ops[i], 32)?;
            let h = self.truncate(FKind::F32, to, x, q.rounding(), q.ftz, q.dsat)?;
            halves.push(self.resize(h, 16, 32)?);
        }
        let hi = self.shl_const(halves[1], 32, 16)?;
        let r = self.m.or(32, halves[0], hi)?;
        self.write_uint(&inst.ops[0], 32, r)
    }

    /// A `w`-bit integer (`signed` or not) as raw bits of `to`, rounded in `mode`; overflow
    /// gives infinity, or the largest finite value with `dsat`. Integers whose every value
    /// is exact in `to` use the device's conversion; the others are rounded in integers
    /// ([`FnCx::exact_int_to_float`]).
    fn int_to_float(
        &mut self,
        x: Word,
        w: u32,
        signed: bool,
        to: FKind,
        mode: RoundingMode,
        dsat: bool,
    ) -> EResult<Word> {
        if w > to.precision() {
            return self.exact_int_to_float(x, w, signed, to, mode, dsat);
        }
        let cw = if w > 32 { 64 } else { 32 };
        let x = if signed {
            self.sresize(x, w, cw)?
        } else {
            self.resize(x, w, cw)?
        };
        let ft = self.ftype(to);
        let f = if signed {
            self.m.b.convert_s_to_f(ft, None, x)
        } else {
            self.m.b.convert_u_to_f(ft, None, x)
        };
        self.from_float(to, f)
    }
}
