//! Floating-point arithmetic of isa-2: `fadd fsub fmul fdiv fsqrt fmad` in every rounding
//! mode, `fmul.full`, `frc`, `fmin fmax fabs fneg` and `fcmp`.
//!
//! To nearest even, `.f` and `.df` use the device's IEEE operations and `.hf`/`.bf` compute
//! in `f32` (innocuous double rounding, spec-notes §28). The other modes, and every `fmad`
//! below `.df`, compute in `f64` exactly or rounded to odd and round once to the type with
//! [`FnCx::round_f64_to`] (spec-notes §45). `.df` in a directed mode: `fadd`/`fsub` step
//! from the nearest result by the sign of the TwoSum error; `fmul fdiv fsqrt` in those
//! modes and `fmad` in every mode are computed in integers ([`super::soft64`]).

use super::emit::Emit;
use super::round::Overflow;
use super::FKind;
use crate::back::spirv::error::EResult;
use crate::back::spirv::function::FnCx;
use crate::back::spirv::module::Scalar;
use crate::back::spirv::ops_int::Elems;
use crate::ir::{CmpOp, DataType, Inst, Opcode, RoundingMode};
use rspirv::spirv::{GlslStd450Op as GLOp, Word};
use smallvec::SmallVec;

impl FnCx<'_> {
    /// Lowers a floating-point arithmetic instruction (isa-2).
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
        let mode = q.rounding();
        match inst.op {
            Opcode::Fabs | Opcode::Fneg => return self.sign_op(inst, k, n),
            Opcode::Frc => return self.frc(inst, k),
            Opcode::Fsin
            | Opcode::Fcos
            | Opcode::Fexp2
            | Opcode::Flog2
            | Opcode::Ftanh
            | Opcode::Frcp
            | Opcode::Frsqrt => return self.transcendental(inst, k, n),
            _ => {}
        }
        if q.full {
            return self.fmul_full(inst, k);
        }
        let nsrc = match inst.op {
            Opcode::Fadd
            | Opcode::Fsub
            | Opcode::Fmul
            | Opcode::Fdiv
            | Opcode::Fmin
            | Opcode::Fmax => 2,
            Opcode::Fmad => 3,
            Opcode::Fsqrt => 1,
            _ => {
                return Err(self.err(format!(
                    "`{}` is not a floating-point arithmetic instruction",
                    inst.op.as_str()
                )))
            }
        };
        let mut srcs: SmallVec<[Elems; 3]> = SmallVec::new();
        for i in 1..=nsrc {
            let mut raw = self.elems(inst, i, k.bits(), n)?;
            if q.ftz {
                for r in raw.iter_mut() {
                    *r = self.flush(k, *r)?;
                }
            }
            srcs.push(raw);
        }
        // The sign of an exactly zero sum is recomputed from the addends' bits, and a division's
        // zero and infinite cases from the operands' bits, only where the driver could take a
        // shortcut with a constant zero operand (`x + 0.0 → x`, `x / 0.0 →` undefined:
        // spec-notes §44 and §113), or where `.rd` needs it (sums).
        let zero_operands: &[usize] = match inst.op {
            Opcode::Fadd | Opcode::Fsub => &[1, 2],
            Opcode::Fmad => &[3],
            Opcode::Fdiv => &[1, 2],
            _ => &[],
        };
        // Under `.ftz` a denormal immediate becomes a zero the driver sees.
        let zero_fix = (mode == RoundingMode::Rd && inst.op != Opcode::Fdiv)
            || zero_operands.iter().any(|&i| {
                let imm = matches!(inst.ops[i], crate::ir::Operand::Imm(_));
                (imm && (n > 1 || q.ftz)) || self.may_be_constant_zero(&inst.ops[i], k.bits())
            });
        if self.m.float.keeps_zero_operands && !self.m.float.fast_math && !zero_operands.is_empty()
        {
            // What the fix-ups left out relies on the device (spec-notes §113).
            self.m.feature(crate::reflect::Feature::KeepsZeroOperands);
        }
        // `.hf` and `.bf` take arch-3's NaN from the operands' bits: their `f32` operation
        // returns the device's NaN (fmin/fmax choose among the operands themselves).
        // A subtraction from a zero the driver proved may have become `-x` (spec-notes §113):
        // a NaN `x` then comes back with its sign flipped, not as the same NaN (arch-3 §3.4).
        let shortcut_nan = zero_fix && inst.op == Opcode::Fsub;
        let nan_step = (matches!(k, FKind::Half | FKind::Bf16) || shortcut_nan)
            && !self.m.float.fast_math
            && !matches!(inst.op, Opcode::Fmin | Opcode::Fmax);
        let mut out = Elems::new();
        for e in 0..n as usize {
            let s: Elems = srcs.iter().map(|v| v[e]).collect();
            let mut b = self.arith_bits(k, inst.op, &s, mode, q.nanp, zero_fix)?;
            if nan_step {
                b = self.arch3_nan(k, &s, b)?;
            }
            if q.dsat {
                let f = self.to_float(k, b)?;
                let f = self.dsat(k, f)?;
                b = self.from_float(k, f)?;
            }
            if q.ftz {
                b = self.flush(k, b)?;
            }
            out.push(b);
        }
        self.dst_elems(inst, k.bits(), &out)
    }

    /// `op` (`fadd fsub fmul fdiv fsqrt fmad fmin fmax`) on raw operand bits `s` of kind `k`,
    /// rounded once in `mode`; raw result bits. The way is chosen from the float model
    /// ([`crate::FloatModel`], spec-notes §55): the device's IEEE operation where one exists
    /// (add, subtract and multiply to nearest; every `.df` operation to nearest except
    /// `fmad`), a fused `Fma`, an exact `f64` computation, or integers.
    fn arith_bits(
        &mut self,
        k: FKind,
        op: Opcode,
        s: &[Word],
        mode: RoundingMode,
        nanp: bool,
        zero_fix: bool,
    ) -> EResult<Word> {
        let cb = k.compute_bits();
        let fast = self.m.float.fast_math;
        if op == Opcode::Fmad && mode == RoundingMode::Re && !fast {
            if let Some(r) = self.fused_fmad(k, s)? {
                return Ok(r);
            }
        }
        if matches!(op, Opcode::Fdiv | Opcode::Fsqrt)
            && k == FKind::F32
            && self.m.float.fused_fma.f32
            && !fast
        {
            return self.fused_div_sqrt(op, s, mode);
        }
        let mut f = Elems::new();
        for &x in s {
            f.push(self.to_float(k, x)?);
        }
        if matches!(op, Opcode::Fmin | Opcode::Fmax) {
            let r = self.fmin_max(k, f[0], f[1], op == Opcode::Fmax, nanp)?;
            return self.from_float(k, r);
        }
        if k == FKind::F64 {
            let native = mode == RoundingMode::Re && op != Opcode::Fmad;
            let r = if native || (fast && op != Opcode::Fmad) {
                self.native_arith(64, op, &f, mode, zero_fix)?
            } else if fast {
                self.m.glsl(64, GLOp::Fma as u32, &[f[0], f[1], f[2]])?
            } else {
                match op {
                    Opcode::Fadd | Opcode::Fsub => {
                        let r = self.sum_directed(k, op, &f, mode, zero_fix)?;
                        return Ok(r);
                    }
                    _ => self.df_exact(op, &f, mode)?,
                }
            };
            return self.from_float(k, r);
        }
        // `.f`, `.hf`, `.bf`, computed in f32.
        if fast {
            let r = if op == Opcode::Fmad {
                self.m.glsl(32, GLOp::Fma as u32, &[f[0], f[1], f[2]])?
            } else {
                self.native_arith(32, op, &f, RoundingMode::Re, zero_fix)?
            };
            return self.from_float(k, r);
        }
        let near = mode == RoundingMode::Re;
        match op {
            // Correctly rounded by the device (Vulkan: add, subtract and multiply are IEEE);
            // to nearest, the f32 result rounds innocuously to 16 bits (spec-notes §28).
            Opcode::Fadd | Opcode::Fsub | Opcode::Fmul if near => {
                let r = self.native_arith(cb, op, &f, mode, zero_fix)?;
                self.from_float(k, r)
            }
            Opcode::Fadd | Opcode::Fsub => self.sum_directed(k, op, &f, mode, zero_fix),
            // A product of two `.hf` values is exact in f32.
            Opcode::Fmul if k == FKind::Half => {
                let p = self.m.fmul(32, f[0], f[1])?;
                self.round_float_to(FKind::F32, k, p, mode, Overflow::Ieee)
            }
            Opcode::Fmad if k == FKind::Half => self.fmad_half(&f, mode, zero_fix),
            Opcode::Fmad if k == FKind::F32 && near && self.f64_allowed() => {
                self.fmad_f64(&f, zero_fix)
            }
            // A quotient or root of `f32` values that is not an `f32` is at least 2^-49
            // relative from every `f32` midpoint, beyond the error of the device's `f64`
            // division or root: converting it to nearest is the correctly rounded result.
            Opcode::Fdiv | Opcode::Fsqrt if near && k == FKind::F32 && self.f64_allowed() => {
                let mut x = Elems::new();
                for &v in f.iter() {
                    x.push(self.m.fconv(64, v)?);
                }
                let r = self.native_arith(64, op, &x, mode, zero_fix)?;
                let r = self.m.fconv(32, r)?;
                self.from_float(k, r)
            }
            _ if self.f64_allowed() => {
                let v = self.odd_f64(op, &f, mode)?;
                self.round_f64_to(k, v, mode, Overflow::Ieee)
            }
            _ => {
                // The float64 model would compute this with a few `f64` operations.
                self.m.f64_would_help |= !self.m.float.fused_fma.f32;
                self.exact_op(k, op, s, mode)
            }
        }
    }

    /// arch-3 §3.4's NaN for a result `b` (raw bits of kind `k`) of an operation on the raw
    /// operands `s`, as the reference computes it: where `b` is a NaN, the first NaN operand
    /// made quiet, or the canonical quiet NaN when no operand is one (an invalid operation);
    /// `b` itself otherwise. Whatever NaN the device's operation returned (lavapipe's x86
    /// code gives `-NaN` for `inf - inf`; NVIDIA's driver 580 gives `0x7fffffff` for every
    /// `f32` NaN, a quiet NaN operand's payload lost).
    fn arch3_nan(&mut self, k: FKind, s: &[Word], b: Word) -> EResult<Word> {
        let w = k.bits();
        let flags = s
            .iter()
            .map(|&x| {
                let mag = self.magnitude(k, x)?;
                self.is_nan_magnitude(k, mag)
            })
            .collect::<EResult<Vec<Word>>>()?;
        let b_mag = self.magnitude(k, b)?;
        let b_nan = self.is_nan_magnitude(k, b_mag)?;
        let (first, any) = self.first_nan(k, s, &flags)?;
        let m = &mut *self.m;
        let t = m.u(w);
        let canonical = m.ku(w, k.qnan());
        let nan = m.select(t, any, first, canonical)?;
        m.select(t, b_nan, nan, b)
    }

    /// `fmad` to nearest as one `Fma` where the model says the device fuses it for `k`'s
    /// width (`.hf` computed in `f16`, which needs `shaderFloat16`); `None` otherwise (`.bf`
    /// has no SPIR-V type of its own). The kernel then needs `fusedFmaFloatN`.
    fn fused_fmad(&mut self, k: FKind, s: &[Word]) -> EResult<Option<Word>> {
        let fused = self.m.float.fused_fma;
        let w = match k {
            FKind::F32 if fused.f32 => 32,
            FKind::F64 if fused.f64 => 64,
            FKind::Half if fused.f16 => 16,
            _ => return Ok(None),
        };
        let mut f = Elems::new();
        for &x in s {
            f.push(self.m.float(w, x)?);
        }
        let r = self.fused_fma(w, f[0], f[1], f[2])?;
        Ok(Some(self.m.bits(w, r)?))
    }

    /// Whether exact `.f`/`.hf`/`.bf` results may be computed in `f64`: the model allows it
    /// and `Fma` is not fused (a fused device computes them without `Float64`).
    fn f64_allowed(&self) -> bool {
        self.m.float.float64 && !self.m.float.fused_fma.f32
    }

    /// The device's own `op` on `w`-bit compute floats, rounded to nearest; with `zero_fix`,
    /// sums get the sign of an exact zero from the operands' bits (spec-notes §44).
    pub(in crate::back::spirv) fn native_arith(
        &mut self,
        w: u32,
        op: Opcode,
        f: &[Word],
        mode: RoundingMode,
        zero_fix: bool,
    ) -> EResult<Word> {
        Ok(match op {
            Opcode::Fadd => {
                let r = self.m.fadd(w, f[0], f[1])?;
                self.zero_sign_if(zero_fix, w, r, f[0], f[1], mode)?
            }
            Opcode::Fsub => {
                let r = self.m.fsub(w, f[0], f[1])?;
                if zero_fix {
                    let ft = self.m.f(w);
                    let nb = self.m.b.f_negate(ft, None, f[1]);
                    self.zero_sign_w(w, r, f[0], nb, mode)?
                } else {
                    r
                }
            }
            Opcode::Fmul => self.m.fmul(w, f[0], f[1])?,
            Opcode::Fdiv => {
                let q = self.m.fdiv(w, f[0], f[1])?;
                if zero_fix {
                    self.div_specials(w, q, f[0], f[1])?
                } else {
                    q
                }
            }
            Opcode::Fsqrt => self.m.glsl(w, GLOp::Sqrt as u32, &[f[0]])?,
            Opcode::Fmad => {
                let p = self.m.fmul(w, f[0], f[1])?;
                self.m.fadd(w, p, f[2])?
            }
            _ => return Err(self.err(format!("`{}` has no native form", op.as_str()))),
        })
    }

    /// `fadd`/`fsub` in a directed mode (or `.rna`) on compute values of `k`: TwoSum gives
    /// the exact error of the nearest sum. `.f` and `.df` step once from it (the sign of the
    /// error decides); `.hf`/`.bf` round the sum made odd once more to the type.
    fn sum_directed(
        &mut self,
        k: FKind,
        op: Opcode,
        f: &[Word],
        mode: RoundingMode,
        zero_fix: bool,
    ) -> EResult<Word> {
        let w = k.compute_bits();
        let ft = self.m.f(w);
        let b = if op == Opcode::Fsub {
            self.m.b.f_negate(ft, None, f[1])
        } else {
            f[1]
        };
        let (sum, err) = self.two_sum(w, f[0], b)?;
        let fin_a = self.finite(f[0])?;
        let fin_b = self.finite(b)?;
        let fin = self.m.land(fin_a, fin_b)?;
        let sinf = self.m.isinf(sum)?;
        let ov = self.m.land(sinf, fin)?;
        if matches!(k, FKind::F32 | FKind::F64) {
            let r = self.direct(w, sum, err, mode, Some(ov))?;
            let r = self.zero_sign_if(zero_fix, w, r, f[0], b, mode)?;
            return self.from_float(k, r);
        }
        let v = self.to_odd(32, sum, err)?;
        let v = self.zero_sign_if(zero_fix, 32, v, f[0], b, mode)?;
        let r = self.round_float_to(FKind::F32, k, v, mode, Overflow::Ieee)?;
        // A finite sum beyond f32's range (only `.bf` reaches it) overflows `k` too.
        let ovr = self.overflow_bits(k, sum, mode)?;
        let t = self.m.u(k.bits());
        self.m.select(t, ov, ovr, r)
    }

    /// Whether a compute float is finite.
    fn finite(&mut self, x: Word) -> EResult<Word> {
        let i = self.m.isinf(x)?;
        let n = self.m.isnan(x)?;
        let s = self.m.lor(i, n)?;
        self.m.lnot(s)
    }

    /// What a finite result of the sign of `x` too large for `k` becomes in `mode` (IEEE):
    /// infinity when the mode rounds away from zero, else the largest finite value.
    fn overflow_bits(&mut self, k: FKind, x: Word, mode: RoundingMode) -> EResult<Word> {
        let w = k.bits();
        let m = &mut *self.m;
        let zero = m.kf(32, 0.0);
        let neg = m.flt(x, zero)?;
        let away = match mode {
            RoundingMode::Re | RoundingMode::Rna => m.const_bool(true),
            RoundingMode::Rz => m.const_bool(false),
            RoundingMode::Ru => m.lnot(neg)?,
            RoundingMode::Rd => neg,
        };
        let t = m.u(w);
        let inf = m.ku(w, k.exp_mask());
        let max = m.ku(w, k.exp_mask() - 1);
        let mag = m.select(t, away, inf, max)?;
        let sb = m.ku(w, k.sign_mask());
        let z = m.ku(w, 0);
        let s = m.select(t, neg, sb, z)?;
        m.or(w, mag, s)
    }

    /// `fmad.hf` in any mode: the product of two `.hf` values is exact in f32, TwoSum gives
    /// the sum's exact error, and the sum made odd rounds once to `.hf`.
    fn fmad_half(&mut self, f: &[Word], mode: RoundingMode, zero_fix: bool) -> EResult<Word> {
        let p = self.m.fmul(32, f[0], f[1])?;
        let (sum, err) = self.two_sum(32, p, f[2])?;
        let v = self.to_odd(32, sum, err)?;
        let v = self.zero_sign_if(zero_fix, 32, v, p, f[2], mode)?;
        self.round_float_to(FKind::F32, FKind::Half, v, mode, Overflow::Ieee)
    }

    /// `fmad.f` to nearest through `f64` where `Fma` is not fused: the product of two `f32`
    /// is exact in `f64` and the sum is rounded to nearest `f64`. Converting that to `f32`
    /// is the correctly rounded result unless the `f64` sum was inexact and sits exactly on
    /// an `f32` midpoint it was rounded onto (its low 28 bits are then zero): only those
    /// lanes take a branch that computes the sum's exact error (TwoSum) and rounds it to odd
    /// first.
    fn fmad_f64(&mut self, f: &[Word], zero_fix: bool) -> EResult<Word> {
        let mut x = Elems::new();
        for &v in f {
            x.push(self.m.fconv(64, v)?);
        }
        let p = self.m.fmul(64, x[0], x[1])?;
        let sum = self.m.fadd(64, p, x[2])?;
        let sum = self.zero_sign_if(zero_fix, 64, sum, p, x[2], RoundingMode::Re)?;
        let r = self.m.fconv(32, sum)?;
        let bits = self.m.bits(64, sum)?;
        let low = self.m.ku(64, (1u64 << 28) - 1);
        let low = self.m.and(64, bits, low)?;
        let z = self.m.ku(64, 0);
        let suspect = self.m.ieq(low, z)?;
        // An exact sum rounds once, correctly: only an inexact one needs the slow path. The
        // sum is exact iff `sum - c == p` and `sum - p == c` (then TwoSum's error term is 0;
        // conversely both differences are exact). Data with few significant bits (integers,
        // a scale factor with a short significand) makes exact sums with low bits zero.
        let back_p = self.m.fsub(64, sum, x[2])?;
        let back_c = self.m.fsub(64, sum, p)?;
        let same_p = self.m.feq(back_p, p)?;
        let same_c = self.m.feq(back_c, x[2])?;
        let exact = self.m.land(same_p, same_c)?;
        let inexact = self.m.lnot(exact)?;
        let suspect = self.m.land(suspect, inexact)?;
        let ft = self.m.f(32);
        let r = self.if_value(suspect, ft, r, |cx| {
            let (s2, e) = cx.two_sum(64, p, x[2])?;
            let v = cx.to_odd(64, s2, e)?;
            let v = cx.zero_sign_if(zero_fix, 64, v, p, x[2], RoundingMode::Re)?;
            cx.m.fconv(32, v)
        })?;
        self.from_float(FKind::F32, r)
    }

    /// `op` on compute floats `s` (`f32`) as an `f64` that is exact or rounded to odd, so
    /// that one more rounding to a 24-bit (or narrower) type in `mode` is correct.
    ///
    /// Sums use TwoSum and [`FnCx::to_odd`]; products of two `f32` are exact in `f64`.
    /// A quotient or root of `f32` values is either exactly an `f32` value (checked by
    /// multiplying back, exact in `f64`) or irrational/non-dyadic, and then its `f64`
    /// approximation lies strictly on the same side of every 25-bit number (the distance
    /// from such a number is at least 2^-49 relative, the `f64` error below 2^-52), so
    /// rounding the `f64` value is correct in every mode.
    pub fn odd_f64(&mut self, op: Opcode, s: &[Word], mode: RoundingMode) -> EResult<Word> {
        let mut x = Vec::new();
        for &v in s {
            x.push(self.m.fconv(64, v)?);
        }
        let dt = self.m.f(64);
        Ok(match op {
            Opcode::Fadd | Opcode::Fsub => {
                let b = if op == Opcode::Fsub {
                    self.m.b.f_negate(dt, None, x[1])
                } else {
                    x[1]
                };
                let (sum, err) = self.two_sum(64, x[0], b)?;
                let v = self.to_odd(64, sum, err)?;
                self.zero_sign(v, x[0], b, mode)?
            }
            Opcode::Fmul => self.m.fmul(64, x[0], x[1])?,
            Opcode::Fmad => {
                let p = self.m.fmul(64, x[0], x[1])?;
                let (sum, err) = self.two_sum(64, p, x[2])?;
                let v = self.to_odd(64, sum, err)?;
                self.zero_sign(v, p, x[2], mode)?
            }
            Opcode::Fdiv => {
                let q = self.m.fdiv(64, x[0], x[1])?;
                let q = self.div_specials(64, q, x[0], x[1])?;
                let y = self.m.fconv(32, q)?;
                let yd = self.m.fconv(64, y)?;
                let back = self.m.fmul(64, yd, x[1])?;
                let exact = self.m.feq(back, x[0])?;
                self.m.select(dt, exact, yd, q)?
            }
            Opcode::Fsqrt => {
                let r = self.m.glsl(64, 31, &[x[0]])?;
                let y = self.m.fconv(32, r)?;
                let yd = self.m.fconv(64, y)?;
                let back = self.m.fmul(64, yd, yd)?;
                let exact = self.m.feq(back, x[0])?;
                self.m.select(dt, exact, yd, r)?
            }
            _ => return Err(self.err(format!("`{}` has no rounded form", op.as_str()))),
        })
    }

    /// The sign of an exactly zero sum `a + b` (`f64` `v`), recomputed from the addends'
    /// sign bits: IEEE gives -0 when both are -0, and also for opposite signs toward minus
    /// infinity. Integer logic, because lavapipe folds `p + 0.0 → p` in `f64` when the
    /// addend is a constant zero even with `SignedZeroInfNanPreserve` (spec-notes §44).
    fn zero_sign(&mut self, v: Word, a: Word, b: Word, mode: RoundingMode) -> EResult<Word> {
        self.zero_sign_w(64, v, a, b, mode)
    }

    /// [`FnCx::zero_sign_w`] when `fix`, else `v`.
    fn zero_sign_if(
        &mut self,
        fix: bool,
        w: u32,
        v: Word,
        a: Word,
        b: Word,
        mode: RoundingMode,
    ) -> EResult<Word> {
        if fix {
            self.zero_sign_w(w, v, a, b, mode)
        } else {
            Ok(v)
        }
    }

    /// Raw bits `x` of kind `k` without the sign.
    fn magnitude(&mut self, k: FKind, x: Word) -> EResult<Word> {
        let w = k.bits();
        let mask = self.m.ku(w, k.sign_mask() - 1);
        self.m.and(w, x, mask)
    }

    /// Whether a [`FnCx::magnitude`] of kind `k` is a NaN's (bool).
    fn is_nan_magnitude(&mut self, k: FKind, mag: Word) -> EResult<Word> {
        let inf = self.m.ku(k.bits(), k.exp_mask());
        self.m.ult(inf, mag)
    }

    /// The quotient `q` of the 32- or 64-bit floats `a / b` as the device divided them, with
    /// the cases where an operand is a zero taken from the operands' bits: a NaN operand (the
    /// first, made quiet: [`FnCx::first_nan`]), `0 / 0` the canonical quiet NaN, `0 / x` a
    /// zero and `x / 0` an infinity of the operands' signs. lavapipe's code generator returns
    /// +0 for a constant zero dividend and an undefined value (0) for a constant zero divisor
    /// (spec-notes §113); the other cases are the device's IEEE division.
    pub(in crate::back::spirv) fn div_specials(
        &mut self,
        w: u32,
        q: Word,
        a: Word,
        b: Word,
    ) -> EResult<Word> {
        debug_assert!(w == 32 || w == 64, "division computed in {w} bits");
        let k = if w == 32 { FKind::F32 } else { FKind::F64 };
        let bits = [self.m.bits(w, a)?, self.m.bits(w, b)?];
        let (am, bm) = (self.magnitude(k, bits[0])?, self.magnitude(k, bits[1])?);
        let nan = [self.is_nan_magnitude(k, am)?, self.is_nan_magnitude(k, bm)?];
        let (first, any_nan) = self.first_nan(k, &bits, &nan)?;
        let m = &mut *self.m;
        let t = m.u(w);
        let zero = m.ku(w, 0);
        let (za, zb) = (m.ieq(am, zero)?, m.ieq(bm, zero)?);
        let x = m.xor(w, bits[0], bits[1])?;
        let sign = m.ku(w, k.sign_mask());
        let signed_zero = m.and(w, x, sign)?;
        let inf = m.ku(w, k.exp_mask());
        let signed_inf = m.or(w, signed_zero, inf)?;
        let mut r = m.select(t, zb, signed_inf, signed_zero)?;
        let both = m.land(za, zb)?;
        let canonical = m.ku(w, k.qnan());
        r = m.select(t, both, canonical, r)?;
        r = m.select(t, any_nan, first, r)?;
        let special = m.lor(za, zb)?;
        let r = m.float(w, r)?;
        let ft = m.f(w);
        m.select(ft, special, r, q)
    }

    /// [`FnCx::zero_sign`] on `w`-bit floats.
    fn zero_sign_w(
        &mut self,
        w: u32,
        v: Word,
        a: Word,
        b: Word,
        mode: RoundingMode,
    ) -> EResult<Word> {
        let m = &mut *self.m;
        let ft = m.f(w);
        let zero = m.kf(w, 0.0);
        let is0 = m.feq(v, zero)?;
        let ab = m.bits(w, a)?;
        let bb = m.bits(w, b)?;
        let o = if mode == RoundingMode::Rd {
            m.or(w, ab, bb)?
        } else {
            m.and(w, ab, bb)?
        };
        let sm = m.ku(w, 1u64 << (w - 1));
        let sgn = m.and(w, o, sm)?;
        let z = m.float(w, sgn)?;
        m.select(ft, is0, z, v)
    }

    /// `fmul.full.hf`/`.bf`: the product of two 16-bit values, rounded once to `.f`. A
    /// `.hf` product is exact in f32; a `.bf` one (whose exponent range is f32's) is rounded
    /// from its exact integer form, zeros, infinities and NaNs from the device's product.
    fn fmul_full(&mut self, inst: &Inst, k: FKind) -> EResult {
        let q = &inst.q;
        if !matches!(k, FKind::Half | FKind::Bf16) {
            return Err(self.err("`fmul.full` needs .hf or .bf"));
        }
        let mut bits = [0; 2];
        for (i, b) in bits.iter_mut().enumerate() {
            *b = self.read_uint(&inst.ops[i + 1], 16)?;
            if q.ftz {
                *b = self.flush(k, *b)?;
            }
        }
        let a = self.to_float(k, bits[0])?;
        let b = self.to_float(k, bits[1])?;
        let p = self.m.fmul(32, a, b)?;
        let mut r = self.from_float(FKind::F32, p)?;
        if k == FKind::Bf16 && !self.m.float.fast_math {
            let pa = self.unpack(k, bits[0])?;
            let pb = self.unpack(k, bits[1])?;
            let w = self.exact_mul(k, &pa, &pb)?;
            let exact = self.pack_wide(FKind::F32, &w, q.rounding())?;
            let m = &mut *self.m;
            let special = m.lor(pa.zero, pb.zero)?;
            let inf = m.lor(pa.inf, pb.inf)?;
            let nan = m.lor(pa.nan, pb.nan)?;
            let special = m.lor(special, inf)?;
            let special = m.lor(special, nan)?;
            let t = m.u(32);
            r = m.select(t, special, r, exact)?;
        }
        if q.dsat {
            let f = self.to_float(FKind::F32, r)?;
            let f = self.dsat(FKind::F32, f)?;
            r = self.from_float(FKind::F32, f)?;
        }
        if q.ftz {
            r = self.flush(FKind::F32, r)?;
        }
        self.write_uint(&inst.ops[0], 32, r)
    }

    /// `frc.f`: `x - floor(x)`, rounded to nearest.
    fn frc(&mut self, inst: &Inst, k: FKind) -> EResult {
        if k != FKind::F32 {
            return Err(self.err("`frc` needs .f"));
        }
        let ftz = inst.q.ftz;
        let x = self.read_float(k, &inst.ops[1], ftz)?;
        let fl = self.m.glsl(32, 8, &[x])?;
        let d = self.m.fsub(32, x, fl)?;
        // inf - inf is an invalid operation: PISA's result is the canonical quiet NaN, where
        // the device's subtraction may give another one (x86: the negative "default NaN").
        let ft = self.ftype(k);
        let bt = self.m.ty(Scalar::Bool);
        let inf = self.m.b.is_inf(bt, None, x);
        let qn = self.m.const_of(ft, 32, FKind::F32.qnan());
        let d = self.m.b.select(ft, None, inf, qn, d);
        let b = self.finish_float(k, d, ftz, false)?;
        self.write_uint(&inst.ops[0], 32, b)
    }

    /// IEEE minimumNumber/maximumNumber (or minimum/maximum with `.nanp`), -0 < +0.
    pub(in crate::back::spirv) fn fmin_max(
        &mut self,
        k: FKind,
        a: Word,
        b: Word,
        max: bool,
        nanp: bool,
    ) -> EResult<Word> {
        let ft = self.ftype(k);
        let bt = self.m.ty(Scalar::Bool);
        let cb = k.compute_bits();
        let it = self.m.uint(cb);
        let an = self.m.b.is_nan(bt, None, a);
        let bn = self.m.b.is_nan(bt, None, b);
        let lt = if max {
            self.m.b.f_ord_greater_than(bt, None, a, b)
        } else {
            self.m.b.f_ord_less_than(bt, None, a, b)
        };
        let pick = self.m.b.select(ft, None, lt, a, b);
        // Equal values (±0): OR the bits for min (-0 wins), AND for max (+0 wins).
        let eq = self.m.b.f_ord_equal(bt, None, a, b);
        let ai = self.m.b.bitcast(it, None, a);
        let bi = self.m.b.bitcast(it, None, b);
        let combined = if max {
            self.m.b.bitwise_and(it, None, ai, bi)
        } else {
            self.m.b.bitwise_or(it, None, ai, bi)
        };
        let cf = self.m.b.bitcast(ft, None, combined);
        let r = self.m.b.select(ft, None, eq, cf, pick);
        if nanp {
            let any = self.m.b.logical_or(bt, None, an, bn);
            let qn = self.m.const_of(
                ft,
                cb,
                if cb == 64 {
                    FKind::F64.qnan()
                } else {
                    FKind::F32.qnan()
                },
            );
            return Ok(self.m.b.select(ft, None, any, qn, r));
        }
        // minimumNumber: a NaN operand yields the other one; two NaNs give a quiet NaN.
        let r = self.m.b.select(ft, None, an, b, r);
        let r = self.m.b.select(ft, None, bn, a, r);
        let both = self.m.b.logical_and(bt, None, an, bn);
        let qbit = if cb == 64 {
            FKind::F64.quiet_bit()
        } else {
            FKind::F32.quiet_bit()
        };
        let q = self.m.const_uint(cb, qbit);
        let quieted = self.m.b.bitwise_or(it, None, ai, q);
        let quieted = self.m.b.bitcast(ft, None, quieted);
        Ok(self.m.b.select(ft, None, both, quieted, r))
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
                let a = self.m.b.bitwise_and(t, None, x, inv);
                let em = self.m.const_uint(w, k.exp_mask());
                let is_nan = self.m.b.u_greater_than(bt, None, a, em);
                let qb = self.m.const_uint(w, k.quiet_bit());
                let quiet = self.m.b.bitwise_or(t, None, a, qb);
                self.sel(w, is_nan, quiet, a)?
            } else {
                self.m.b.bitwise_xor(t, None, x, sm)
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
            };
            rs.push(r);
        }
        self.write_cmp(inst, &rs, 16)
    }
}
