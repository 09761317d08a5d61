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
use crate::back::spirv::function::{bug, EResult, FnCx};
use crate::back::spirv::module::Scalar;
use crate::back::spirv::ops_int::Elems;
use crate::ir::{CmpOp, DataType, Inst, Opcode, RoundingMode};
use rspirv::spirv::Word;
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
        let minmax = matches!(inst.op, Opcode::Fmin | Opcode::Fmax);
        let mut srcs: SmallVec<[Elems; 3]> = SmallVec::new();
        for i in 1..=nsrc {
            srcs.push(self.float_elems(k, inst, i, n, q.ftz)?);
        }
        let cb = k.compute_bits();
        let mut out = Elems::new();
        for e in 0..n as usize {
            let s: Elems = srcs.iter().map(|v| v[e]).collect();
            // Every `fmad` is emulated (one rounding, no fused device operation).
            let native = minmax || (mode == RoundingMode::Re && inst.op != Opcode::Fmad);
            if k == FKind::F64 && !native {
                let r = match inst.op {
                    Opcode::Fadd | Opcode::Fsub => self.df_directed(inst.op, &s, mode)?,
                    _ => self.df_exact(inst.op, &s, mode)?,
                };
                out.push(self.finish_float(k, r, q.ftz, q.dsat)?);
                continue;
            }
            if !native && (k != FKind::F32 || mode != RoundingMode::Re) {
                // Exact or round-to-odd f64, rounded once to the type.
                let mut v = self.odd_f64(inst.op, &s, mode)?;
                if q.dsat {
                    v = self.dsat(FKind::F64, v)?;
                }
                let mut b = self.round_f64_to(k, v, mode, Overflow::Ieee)?;
                if q.ftz {
                    b = self.flush(k, b)?;
                }
                out.push(b);
                continue;
            }
            let r = match inst.op {
                // The sign of a zero sum from the operands' bits: lavapipe folds `x + 0.0`
                // to `x` (spec-notes §44).
                Opcode::Fadd => {
                    let r = self.m.fadd(cb, s[0], s[1])?;
                    self.zero_sign_w(cb, r, s[0], s[1], mode)?
                }
                Opcode::Fsub => {
                    let r = self.m.fsub(cb, s[0], s[1])?;
                    let ft = self.m.f(cb);
                    let nb = self.m.b.f_negate(ft, None, s[1]).map_err(bug)?;
                    self.zero_sign_w(cb, r, s[0], nb, mode)?
                }
                Opcode::Fmul => self.m.fmul(cb, s[0], s[1])?,
                Opcode::Fdiv => self.m.fdiv(cb, s[0], s[1])?,
                Opcode::Fmad => {
                    // .f to nearest: the odd f64 converted by the device (to nearest).
                    let v = self.odd_f64(Opcode::Fmad, &s, mode)?;
                    self.m.fconv(32, v)?
                }
                Opcode::Fsqrt => self.m.glsl(k.compute_bits(), 31, &[s[0]])?,
                Opcode::Fmin | Opcode::Fmax => {
                    self.fmin_max(k, s[0], s[1], inst.op == Opcode::Fmax, q.nanp)?
                }
                _ => unreachable!("filtered above"),
            };
            out.push(self.finish_float(k, r, q.ftz, q.dsat)?);
        }
        self.dst_elems(inst, k.bits(), &out)
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
                    self.m.b.f_negate(dt, None, x[1]).map_err(bug)?
                } else {
                    x[1]
                };
                let (sum, err) = self.two_sum(64, x[0], b)?;
                let v = self.to_odd(sum, err)?;
                self.zero_sign(v, x[0], b, mode)?
            }
            Opcode::Fmul => self.m.fmul(64, x[0], x[1])?,
            Opcode::Fmad => {
                let p = self.m.fmul(64, x[0], x[1])?;
                let (sum, err) = self.two_sum(64, p, x[2])?;
                let v = self.to_odd(sum, err)?;
                self.zero_sign(v, p, x[2], mode)?
            }
            Opcode::Fdiv => {
                let q = self.m.fdiv(64, x[0], x[1])?;
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

    /// `.df` `fadd`/`fsub` in a directed mode or `.rna`: the nearest sum stepped by the sign
    /// of its exact TwoSum error.
    fn df_directed(&mut self, op: Opcode, s: &[Word], mode: RoundingMode) -> EResult<Word> {
        let dt = self.m.f(64);
        let b = if op == Opcode::Fsub {
            self.m.b.f_negate(dt, None, s[1]).map_err(bug)?
        } else {
            s[1]
        };
        let (sum, err) = self.two_sum(64, s[0], b)?;
        let ia = self.m.isinf(s[0])?;
        let ib = self.m.isinf(b)?;
        let na = self.m.isnan(s[0])?;
        let nb = self.m.isnan(b)?;
        let special = self.m.lor(ia, ib)?;
        let nan = self.m.lor(na, nb)?;
        let special = self.m.lor(special, nan)?;
        let finite = self.m.lnot(special)?;
        let sinf = self.m.isinf(sum)?;
        let ov = self.m.land(sinf, finite)?;
        let r = self.direct_f64(sum, err, mode, Some(ov))?;
        self.zero_sign(r, s[0], b, mode)
    }

    /// `fmul.full.hf`/`.bf`: the product of two 16-bit values, rounded once to `.f`.
    fn fmul_full(&mut self, inst: &Inst, k: FKind) -> EResult {
        let q = &inst.q;
        if !matches!(k, FKind::Half | FKind::Bf16) || k.bits() != 16 {
            return Err(self.err("`fmul.full` needs .hf or .bf"));
        }
        let a = self.read_float(k, &inst.ops[1], q.ftz)?;
        let b = self.read_float(k, &inst.ops[2], q.ftz)?;
        let a = self.m.fconv(64, a)?;
        let b = self.m.fconv(64, b)?;
        let mut p = self.m.fmul(64, a, b)?;
        if q.dsat {
            p = self.dsat(FKind::F64, p)?;
        }
        let mut r = self.round_f64_to(FKind::F32, p, q.rounding(), Overflow::Ieee)?;
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
        let inf = self.m.b.is_inf(bt, None, x).map_err(bug)?;
        let qn = self.m.const_of(ft, 32, FKind::F32.qnan());
        let d = self.m.b.select(ft, None, inf, qn, d).map_err(bug)?;
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
}
