//! Lowering of the integer ISA (isa-1), logic and shifts (isa-3) and integer comparison
//! and selection (isa-5) to SPIR-V, with PISA's results where SPIR-V leaves a case
//! undefined: shifts by the width or more, `INT_MIN / -1`, division by zero (undefined in
//! PISA: the result is unspecified here but never a trap), bit instructions on 16-bit
//! values (Vulkan allows them on 32-bit values only).

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::{CmpOp, DataType, Inst, Opcode};
use rspirv::spirv::Word;
use smallvec::{smallvec, SmallVec};

/// The elements of one operand of a scalar or packed instruction (at most four of them
/// inline, so lowering an instruction does not allocate per operand).
pub type Elems = SmallVec<[Word; 4]>;

/// Width in bits of an integer `.type` or of its packed elements, and the element count.
pub fn int_shape(ty: Option<DataType>) -> (u32, u32) {
    match ty {
        Some(t) => match t.packed() {
            Some((w, n)) => (w, n as u32),
            None => (t.bits(), 1),
        },
        None => (32, 1),
    }
}

impl FnCx<'_> {
    /// Reads source operand `i` of a packed or scalar instruction as `n` elements of `w`.
    pub fn src_elems(&mut self, inst: &Inst, i: usize, w: u32, n: u32) -> EResult<Vec<Word>> {
        Ok(self.elems(inst, i, w, n)?.into_vec())
    }

    /// [`FnCx::src_elems`] in an `Elems`.
    pub fn elems(&mut self, inst: &Inst, i: usize, w: u32, n: u32) -> EResult<Elems> {
        if n == 1 {
            Ok(smallvec![self.read_uint(&inst.ops[i], w)?])
        } else {
            Ok(Elems::from_vec(self.read_elems(&inst.ops[i], w, n)?))
        }
    }

    /// Writes the destination of a packed or scalar instruction.
    pub fn dst_elems(&mut self, inst: &Inst, w: u32, vals: &[Word]) -> EResult {
        if vals.len() == 1 {
            self.write_uint(&inst.ops[0], w, vals[0])
        } else {
            self.write_elems(&inst.ops[0], vals)
        }
    }

    /// Lowers an element-wise integer instruction (scalar or packed) with `f` per element.
    fn elementwise(
        &mut self,
        inst: &Inst,
        nsrc: usize,
        f: impl Fn(&mut Self, u32, &[Word]) -> EResult<Word>,
    ) -> EResult {
        let (w, n) = int_shape(inst.q.ty);
        if n == 1 && nsrc <= 4 {
            // The common scalar case, without a vector per operand.
            let mut args = [0; 4];
            for (i, a) in args.iter_mut().enumerate().take(nsrc) {
                *a = self.read_uint(&inst.ops[i + 1], w)?;
            }
            let r = f(self, w, &args[..nsrc])?;
            return self.write_uint(&inst.ops[0], w, r);
        }
        let mut srcs: SmallVec<[Elems; 4]> = SmallVec::new();
        for i in 1..=nsrc {
            srcs.push(self.elems(inst, i, w, n)?);
        }
        let mut out = Elems::new();
        for e in 0..n as usize {
            let args: Elems = srcs.iter().map(|s| s[e]).collect();
            out.push(f(self, w, &args)?);
        }
        self.dst_elems(inst, w, &out)
    }

    fn bool_ty(&mut self) -> Word {
        self.m.ty(Scalar::Bool)
    }

    /// `c ? a : b` on `w`-bit integers.
    pub fn sel(&mut self, w: u32, c: Word, a: Word, b: Word) -> EResult<Word> {
        let t = self.m.uint(w);
        Ok(self.m.b.select(t, None, c, a, b))
    }

    /// Signed saturation of `r = a op b` given the overflow flag.
    fn saturate(&mut self, w: u32, a: Word, r: Word, overflow: Word) -> EResult<Word> {
        let bt = self.bool_ty();
        let zero = self.m.const_uint(w, 0);
        let neg = self.m.b.s_less_than(bt, None, a, zero);
        let min = self.m.const_uint(w, 1u64 << (w - 1));
        let max = self.m.const_uint(w, (1u64 << (w - 1)) - 1);
        let clamp = self.sel(w, neg, min, max)?;
        self.sel(w, overflow, clamp, r)
    }

    fn add_sat(&mut self, w: u32, a: Word, b: Word, sub: bool, dsat: bool) -> EResult<Word> {
        let t = self.m.uint(w);
        let r = if sub {
            self.m.b.i_sub(t, None, a, b)
        } else {
            self.m.b.i_add(t, None, a, b)
        };
        if !dsat {
            return Ok(r);
        }
        // add: ((a ^ r) & (b ^ r)) < 0; sub: ((a ^ b) & (a ^ r)) < 0
        let ar = self.m.b.bitwise_xor(t, None, a, r);
        let other = if sub {
            self.m.b.bitwise_xor(t, None, a, b)
        } else {
            self.m.b.bitwise_xor(t, None, b, r)
        };
        let both = self.m.b.bitwise_and(t, None, ar, other);
        let zero = self.m.const_uint(w, 0);
        let bt = self.bool_ty();
        let ovf = self.m.b.s_less_than(bt, None, both, zero);
        self.saturate(w, a, r, ovf)
    }

    fn min_max(&mut self, w: u32, a: Word, b: Word, signed: bool, max: bool) -> EResult<Word> {
        let bt = self.bool_ty();
        let lt = if signed {
            self.m.b.s_less_than(bt, None, a, b)
        } else {
            self.m.b.u_less_than(bt, None, a, b)
        };
        if max {
            self.sel(w, lt, b, a)
        } else {
            self.sel(w, lt, a, b)
        }
    }

    fn div(&mut self, w: u32, a: Word, b: Word, signed: bool, rem: bool) -> EResult<Word> {
        let t = self.m.uint(w);
        let bt = self.bool_ty();
        let zero = self.m.const_uint(w, 0);
        let one = self.m.const_uint(w, 1);
        // Division by zero is undefined in PISA; divide by one instead so no driver traps.
        let is_zero = self.m.b.i_equal(bt, None, b, zero);
        let mut d = self.sel(w, is_zero, one, b)?;
        if !signed {
            return if rem {
                Ok(self.m.b.u_mod(t, None, a, d))
            } else {
                Ok(self.m.b.u_div(t, None, a, d))
            };
        }
        // INT_MIN / -1 overflows in SPIR-V; PISA's result is -a (wrapping) with remainder 0.
        let m1 = self.m.const_uint(w, u64::MAX);
        let is_m1 = self.m.b.i_equal(bt, None, b, m1);
        d = self.sel(w, is_m1, one, d)?;
        if rem {
            // The remainder has the sign of the dividend (C semantics): |a| mod |d|, negated
            // for a negative `a`. Not OpSRem: NVIDIA 580 computes OpSRem as unsigned at 16,
            // 32 and 64 bits (2 rem -2 gave 2, -1 rem 0x7fffffff gave 1), the 16-bit form
            // also when written in 32 bits on sign-extended operands
            // (presumably narrowed back by its compiler; docs/driver-bugs.md); its OpUMod is
            // right. The magnitude of INT_MIN is INT_MIN read as unsigned.
            let a_neg = self.m.b.s_less_than(bt, None, a, zero);
            let d_neg = self.m.b.s_less_than(bt, None, d, zero);
            let minus_a = self.m.b.s_negate(t, None, a);
            let minus_d = self.m.b.s_negate(t, None, d);
            let abs_a = self.sel(w, a_neg, minus_a, a)?;
            let abs_d = self.sel(w, d_neg, minus_d, d)?;
            let r = self.m.b.u_mod(t, None, abs_a, abs_d);
            let minus_r = self.m.b.s_negate(t, None, r);
            self.sel(w, a_neg, minus_r, r)
        } else {
            let q = self.m.b.s_div(t, None, a, d);
            let neg = self.m.b.s_negate(t, None, a);
            self.sel(w, is_m1, neg, q)
        }
    }

    /// `x op sh` for a shift count `sh` (u32 value, already reduced to 0..=63) that may
    /// reach or exceed the width: PISA gives 0 (or the sign for `asr`).
    fn shift(&mut self, w: u32, x: Word, sh: Word, op: Opcode) -> EResult<Word> {
        let t = self.m.uint(w);
        let bt = self.bool_ty();
        let u32t = self.m.uint(32);
        let wk = self.m.const_u32(w);
        let big = self.m.b.u_greater_than_equal(bt, None, sh, wk);
        let wm1 = self.m.const_u32(w - 1);
        let safe = self.m.b.select(u32t, None, big, wm1, sh);
        let r = match op {
            Opcode::Shl => self.m.b.shift_left_logical(t, None, x, safe),
            Opcode::Shr => self.m.b.shift_right_logical(t, None, x, safe),
            _ => self.m.b.shift_right_arithmetic(t, None, x, safe),
        };
        match op {
            // asr by w-1 already gives the sign fill for any count >= w.
            Opcode::Asr => Ok(r),
            _ => {
                let zero = self.m.const_uint(w, 0);
                self.sel(w, big, zero, r)
            }
        }
    }

    fn bit_field_extract(
        &mut self,
        x: Word,
        width: Word,
        offset: Word,
        signed: bool,
    ) -> EResult<Word> {
        // lastpos = umin(offset + width, 32)
        let u32t = self.m.uint(32);
        let bt = self.bool_ty();
        let c31 = self.m.const_u32(31);
        let c32 = self.m.const_u32(32);
        let (off, wid) = self.field_bounds(width, offset)?;
        let end = self.m.b.i_add(u32t, None, off, wid);
        let last = self.min_max(32, end, c32, false, false)?;
        let eff = self.m.b.i_sub(u32t, None, last, off);
        let zero = self.m.const_u32(0);
        let none = self.m.b.i_equal(bt, None, eff, zero);
        // When eff == 0 the shifts below would be by 32: clamp them, the result is dropped.
        let l = self.m.b.i_sub(u32t, None, c32, last);
        let l = self.min_max(32, l, c31, false, false)?;
        let r = self.m.b.i_sub(u32t, None, c32, eff);
        let r = self.min_max(32, r, c31, false, false)?;
        let shl = self.m.b.shift_left_logical(u32t, None, x, l);
        let v = if signed {
            self.m.b.shift_right_arithmetic(u32t, None, shl, r)
        } else {
            self.m.b.shift_right_logical(u32t, None, shl, r)
        };
        self.sel(32, none, zero, v)
    }

    /// The bit-field operands of `bfi`/`sbfe`/`ubfe`: `(offset[4:0], umin(width[5:0], 32))`.
    fn field_bounds(&mut self, width: Word, offset: Word) -> EResult<(Word, Word)> {
        let u32t = self.m.uint(32);
        let c31 = self.m.const_u32(31);
        let c63 = self.m.const_u32(63);
        let c32 = self.m.const_u32(32);
        let off = self.m.b.bitwise_and(u32t, None, offset, c31);
        let wid = self.m.b.bitwise_and(u32t, None, width, c63);
        let wid = self.min_max(32, wid, c32, false, false)?;
        Ok((off, wid))
    }

    fn bfi(&mut self, a: Word, b: Word, width: Word, offset: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let bt = self.bool_ty();
        let c31 = self.m.const_u32(31);
        let c32 = self.m.const_u32(32);
        let (off, wid) = self.field_bounds(width, offset)?;
        let room = self.m.b.i_sub(u32t, None, c32, off);
        let wid = self.min_max(32, wid, room, false, false)?;
        let full = self.m.b.u_greater_than_equal(bt, None, wid, c32);
        let safe_w = self.min_max(32, wid, c31, false, false)?;
        let one = self.m.const_u32(1);
        let p = self.m.b.shift_left_logical(u32t, None, one, safe_w);
        let mw = self.m.b.i_sub(u32t, None, p, one);
        let all = self.m.const_u32(u32::MAX);
        let mw = self.sel(32, full, all, mw)?;
        let mask = self.m.b.shift_left_logical(u32t, None, mw, off);
        let inv = self.m.b.not(u32t, None, mask);
        let keep = self.m.b.bitwise_and(u32t, None, a, inv);
        let ins = self.m.b.shift_left_logical(u32t, None, b, off);
        let ins = self.m.b.bitwise_and(u32t, None, ins, mask);
        Ok(self.m.b.bitwise_or(u32t, None, keep, ins))
    }

    fn bfn(&mut self, table: u8, a: Word, b: Word, c: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let na = self.m.b.not(u32t, None, a);
        let nb = self.m.b.not(u32t, None, b);
        let nc = self.m.b.not(u32t, None, c);
        let mut acc = self.m.const_u32(0);
        for i in 0..8u8 {
            if table & (1 << i) == 0 {
                continue;
            }
            let x = if i & 1 != 0 { a } else { na };
            let y = if i & 2 != 0 { b } else { nb };
            let z = if i & 4 != 0 { c } else { nc };
            let xy = self.m.b.bitwise_and(u32t, None, x, y);
            let term = self.m.b.bitwise_and(u32t, None, xy, z);
            acc = self.m.b.bitwise_or(u32t, None, acc, term);
        }
        Ok(acc)
    }

    fn compare(&mut self, cop: CmpOp, a: Word, b: Word, signed: bool) -> EResult<Word> {
        let bt = self.bool_ty();
        let bld = &mut self.m.b;
        let r = match (cop, signed) {
            (CmpOp::Eq, _) => bld.i_equal(bt, None, a, b),
            (CmpOp::Ne, _) => bld.i_not_equal(bt, None, a, b),
            (CmpOp::Lt, true) => bld.s_less_than(bt, None, a, b),
            (CmpOp::Le, true) => bld.s_less_than_equal(bt, None, a, b),
            (CmpOp::Gt, true) => bld.s_greater_than(bt, None, a, b),
            (CmpOp::Ge, true) => bld.s_greater_than_equal(bt, None, a, b),
            (CmpOp::Lt, false) => bld.u_less_than(bt, None, a, b),
            (CmpOp::Le, false) => bld.u_less_than_equal(bt, None, a, b),
            (CmpOp::Gt, false) => bld.u_greater_than(bt, None, a, b),
            (CmpOp::Ge, false) => bld.u_greater_than_equal(bt, None, a, b),
        };
        Ok(r)
    }

    /// Writes a comparison result: a predicate, or ~0/0 in a register (per element for
    /// packed destinations).
    pub fn write_cmp(&mut self, inst: &Inst, results: &[Word], elem_bits: u32) -> EResult {
        if self.is_pred(&inst.ops[0]) {
            return self.write_pred(&inst.ops[0], results[0]);
        }
        if results.len() == 1 {
            let all = self.m.const_u32(u32::MAX);
            let zero = self.m.const_u32(0);
            let v = self.sel(32, results[0], all, zero)?;
            return self.write_uint(&inst.ops[0], 32, v);
        }
        let all = self.m.const_uint(elem_bits, u64::MAX);
        let zero = self.m.const_uint(elem_bits, 0);
        let mut out = Vec::new();
        for &r in results {
            out.push(self.sel(elem_bits, r, all, zero)?);
        }
        self.write_elems(&inst.ops[0], &out)
    }

    /// `shf`: the 64-bit funnel `src1:src2` shifted left or right by `src3 & 31`, its high or
    /// low word.
    fn shf(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let (a, b, c) = (
            self.read_uint(&inst.ops[1], 32)?,
            self.read_uint(&inst.ops[2], 32)?,
            self.read_uint(&inst.ops[3], 32)?,
        );
        let u64t = self.m.uint(64);
        let u32t = self.m.uint(32);
        let hi = self.resize(a, 32, 64)?;
        let hi = self.shl_const(hi, 64, 32)?;
        let lo = self.resize(b, 32, 64)?;
        let num = self.m.b.bitwise_or(u64t, None, hi, lo);
        let c31 = self.m.const_u32(31);
        let sh = self.m.b.bitwise_and(u32t, None, c, c31);
        let r = if q.shf_left {
            let x = self.m.b.shift_left_logical(u64t, None, num, sh);
            self.shr_const(x, 64, 32)?
        } else {
            self.m.b.shift_right_logical(u64t, None, num, sh)
        };
        let r = self.resize(r, 64, 32)?;
        self.write_uint(&inst.ops[0], 32, r)
    }

    /// `scmp`/`ucmp`: per element, a comparison written as a predicate or a mask.
    fn int_cmp(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let (w, n) = int_shape(q.ty);
        let signed = inst.op == Opcode::Scmp;
        let cop = q.cop.unwrap_or(CmpOp::Eq);
        let a = self.elems(inst, 1, w, n)?;
        let b = self.elems(inst, 2, w, n)?;
        let mut rs = Elems::new();
        for i in 0..n as usize {
            rs.push(self.compare(cop, a[i], b[i], signed)?);
        }
        self.write_cmp(inst, &rs, w)
    }

    /// `sel`: `src1` where the condition (a predicate, or a non-zero integer) holds, else
    /// `src2`.
    fn sel_inst(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let (w, _) = int_shape(q.ty);
        let a = self.read_uint(&inst.ops[1], w)?;
        let b = self.read_uint(&inst.ops[2], w)?;
        let c = if self.is_pred(&inst.ops[3]) {
            self.read_pred(&inst.ops[3])?
        } else {
            let s = self.read_uint(&inst.ops[3], w)?;
            let zero = self.m.const_uint(w, 0);
            let bt = self.bool_ty();
            self.m.b.i_not_equal(bt, None, s, zero)
        };
        let r = self.sel(w, c, a, b)?;
        self.write_uint(&inst.ops[0], w, r)
    }

    /// Lowers an integer, logic, shift, comparison or selection instruction.
    pub fn int_inst(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let dsat = q.dsat;
        match inst.op {
            Opcode::Iadd => {
                self.elementwise(inst, 2, |cx, w, s| cx.add_sat(w, s[0], s[1], false, dsat))
            }
            Opcode::Isub => {
                self.elementwise(inst, 2, |cx, w, s| cx.add_sat(w, s[0], s[1], true, dsat))
            }
            Opcode::Ineg => self.elementwise(inst, 1, |cx, w, s| {
                let t = cx.m.uint(w);
                Ok(cx.m.b.s_negate(t, None, s[0]))
            }),
            Opcode::Iabs => self.elementwise(inst, 1, |cx, w, s| {
                let t = cx.m.uint(w);
                let bt = cx.bool_ty();
                let zero = cx.m.const_uint(w, 0);
                let neg = cx.m.b.s_less_than(bt, None, s[0], zero);
                let n = cx.m.b.s_negate(t, None, s[0]);
                cx.sel(w, neg, n, s[0])
            }),
            Opcode::Smax | Opcode::Smin | Opcode::Umax | Opcode::Umin => {
                let signed = matches!(inst.op, Opcode::Smax | Opcode::Smin);
                let max = matches!(inst.op, Opcode::Smax | Opcode::Umax);
                self.elementwise(inst, 2, |cx, w, s| cx.min_max(w, s[0], s[1], signed, max))
            }
            Opcode::Smul | Opcode::Umul | Opcode::Smad | Opcode::Umad => self.mul_inst(inst),
            Opcode::Sdiv | Opcode::Udiv => {
                let signed = inst.op == Opcode::Sdiv;
                let rem = q.rem;
                self.elementwise(inst, 2, |cx, w, s| cx.div(w, s[0], s[1], signed, rem))
            }
            Opcode::Uaddc => self.uaddc(inst),
            Opcode::Dp4a => self.dp4a(inst),
            Opcode::And | Opcode::Or | Opcode::Xor => {
                let op = inst.op;
                self.elementwise(inst, 2, |cx, w, s| {
                    let t = cx.m.uint(w);
                    let b = &mut cx.m.b;
                    Ok(match op {
                        Opcode::And => b.bitwise_and(t, None, s[0], s[1]),
                        Opcode::Or => b.bitwise_or(t, None, s[0], s[1]),
                        _ => b.bitwise_xor(t, None, s[0], s[1]),
                    })
                })
            }
            Opcode::Not => self.elementwise(inst, 1, |cx, w, s| {
                let t = cx.m.uint(w);
                Ok(cx.m.b.not(t, None, s[0]))
            }),
            Opcode::Shl | Opcode::Shr | Opcode::Asr => self.shift_inst(inst),
            Opcode::Shf => self.shf(inst),
            Opcode::Bfi => {
                let s: Vec<Word> = (1..=4)
                    .map(|i| self.read_uint(&inst.ops[i], 32))
                    .collect::<EResult<_>>()?;
                let r = self.bfi(s[0], s[1], s[2], s[3])?;
                self.write_uint(&inst.ops[0], 32, r)
            }
            Opcode::Sbfe | Opcode::Ubfe => {
                let s: Vec<Word> = (1..=3)
                    .map(|i| self.read_uint(&inst.ops[i], 32))
                    .collect::<EResult<_>>()?;
                let r = self.bit_field_extract(s[0], s[1], s[2], inst.op == Opcode::Sbfe)?;
                self.write_uint(&inst.ops[0], 32, r)
            }
            Opcode::Bfn => {
                let s: Vec<Word> = (1..=3)
                    .map(|i| self.read_uint(&inst.ops[i], 32))
                    .collect::<EResult<_>>()?;
                let Some(table) = q.bfn else {
                    return Err(self.err("internal error: `bfn` without its operation"));
                };
                let r = self.bfn(table, s[0], s[1], s[2])?;
                self.write_uint(&inst.ops[0], 32, r)
            }
            Opcode::Bfrev => {
                let x = self.read_uint(&inst.ops[1], 32)?;
                let u32t = self.m.uint(32);
                let r = self.m.b.bit_reverse(u32t, None, x);
                self.write_uint(&inst.ops[0], 32, r)
            }
            Opcode::Cbit | Opcode::Fbh | Opcode::Fbl => self.bit_count_inst(inst),
            Opcode::Scmp | Opcode::Ucmp => self.int_cmp(inst),
            Opcode::Sel => self.sel_inst(inst),
            _ => Err(self.err(format!(
                "`{}` is not an integer instruction",
                inst.op.as_str()
            ))),
        }
    }

    fn mul_inst(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let signed = matches!(inst.op, Opcode::Smul | Opcode::Smad);
        let mad = matches!(inst.op, Opcode::Smad | Opcode::Umad);
        let nsrc = if mad { 3 } else { 2 };
        if q.full {
            let (w, _) = int_shape(q.ty);
            let ww = w * 2;
            let a = self.read_uint(&inst.ops[1], w)?;
            let b = self.read_uint(&inst.ops[2], w)?;
            let (a, b) = if signed {
                (self.sresize(a, w, ww)?, self.sresize(b, w, ww)?)
            } else {
                (self.resize(a, w, ww)?, self.resize(b, w, ww)?)
            };
            let t = self.m.uint(ww);
            let mut r = self.m.b.i_mul(t, None, a, b);
            if mad {
                let c = self.read_uint(&inst.ops[3], ww)?;
                r = self.m.b.i_add(t, None, r, c);
            }
            return self.write_uint(&inst.ops[0], ww, r);
        }
        self.elementwise(inst, nsrc, |cx, w, s| {
            let t = cx.m.uint(w);
            let p = cx.m.b.i_mul(t, None, s[0], s[1]);
            if s.len() == 3 {
                Ok(cx.m.b.i_add(t, None, p, s[2]))
            } else {
                Ok(p)
            }
        })
    }

    fn uaddc(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let u32t = self.m.uint(32);
        let bt = self.bool_ty();
        // Operand order: dst, [carry-out], src0, src1, [carry-in]
        let mut i = 1;
        let co = if q.co {
            i += 1;
            Some(inst.ops[1])
        } else {
            None
        };
        let a = self.read_uint(&inst.ops[i], 32)?;
        let b = self.read_uint(&inst.ops[i + 1], 32)?;
        let s = self.m.b.i_add(u32t, None, a, b);
        let mut carry = self.m.b.u_less_than(bt, None, s, a);
        let mut r = s;
        if q.ci {
            let cin = self.read_pred(&inst.ops[i + 2])?;
            let one = self.m.const_u32(1);
            let zero = self.m.const_u32(0);
            let c = self.sel(32, cin, one, zero)?;
            r = self.m.b.i_add(u32t, None, s, c);
            let c2 = self.m.b.u_less_than(bt, None, r, s);
            carry = self.m.b.logical_or(bt, None, carry, c2);
        }
        self.write_uint(&inst.ops[0], 32, r)?;
        if let Some(co) = co {
            self.write_pred(&co, carry)?;
        }
        Ok(())
    }

    fn dp4a(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let sign = q.signedness.unwrap_or(crate::ir::Dp4aSign {
            src1_signed: false,
            src2_signed: false,
        });
        let u64t = self.m.uint(64);
        let acc0 = self.read_uint(&inst.ops[1], 32)?;
        let s1 = self.read_uint(&inst.ops[2], 32)?;
        let s2 = self.read_uint(&inst.ops[3], 32)?;
        let mut sum = self.m.const_uint(64, 0);
        for k in 0..4 {
            let a = self.byte_ext(s1, k, sign.src1_signed)?;
            let b = self.byte_ext(s2, k, sign.src2_signed)?;
            let p = self.m.b.i_mul(u64t, None, a, b);
            sum = self.m.b.i_add(u64t, None, sum, p);
        }
        let acc = if q.dsat {
            self.sresize(acc0, 32, 64)?
        } else {
            self.resize(acc0, 32, 64)?
        };
        let total = self.m.b.i_add(u64t, None, acc, sum);
        let r = if q.dsat {
            let bt = self.bool_ty();
            let lo = self.m.const_uint(64, i32::MIN as i64 as u64);
            let hi = self.m.const_uint(64, i32::MAX as u64);
            let below = self.m.b.s_less_than(bt, None, total, lo);
            let above = self.m.b.s_greater_than(bt, None, total, hi);
            let t = self.sel(64, below, lo, total)?;
            self.sel(64, above, hi, t)?
        } else {
            total
        };
        let r = self.resize(r, 64, 32)?;
        self.write_uint(&inst.ops[0], 32, r)
    }

    fn byte_ext(&mut self, x: Word, k: u32, signed: bool) -> EResult<Word> {
        let s = if k == 0 {
            x
        } else {
            self.shr_const(x, 32, 8 * k)?
        };
        let b = self.resize(s, 32, 8)?;
        if signed {
            self.sresize(b, 8, 64)
        } else {
            self.resize(b, 8, 64)
        }
    }

    fn shift_inst(&mut self, inst: &Inst) -> EResult {
        let (w, n) = int_shape(inst.q.ty);
        let u32t = self.m.uint(32);
        let count = self.read_uint(&inst.ops[2], 32)?;
        let c63 = self.m.const_u32(63);
        let x = self.elems(inst, 1, w, n)?;
        let mut out = Elems::new();
        for (e, &xe) in x.iter().enumerate() {
            // element e uses src1[5:0] (low) or src1[21:16] (high) for .16bx2
            let c = if e == 0 {
                count
            } else {
                self.shr_const(count, 32, 16)?
            };
            let sh = self.m.b.bitwise_and(u32t, None, c, c63);
            out.push(self.shift(w, xe, sh, inst.op)?);
        }
        self.dst_elems(inst, w, &out)
    }

    fn bit_count_inst(&mut self, inst: &Inst) -> EResult {
        let (w, _) = int_shape(inst.q.ty);
        let u32t = self.m.uint(32);
        let bt = self.bool_ty();
        let x = self.read_uint(&inst.ops[1], w)?;
        let x32 = self.resize(x, w, 32)?;
        let glsl = self.m.glsl;
        let r = match inst.op {
            Opcode::Cbit => self.m.b.bit_count(u32t, None, x32),
            Opcode::Fbh => {
                // leading zeros: (w - 1) - FindUMsb; all ones for 0.
                let msb =
                    self.m
                        .b
                        .ext_inst(u32t, None, glsl, 75, [rspirv::dr::Operand::IdRef(x32)]);
                let k = self.m.const_u32(w - 1);
                let lz = self.m.b.i_sub(u32t, None, k, msb);
                let zero = self.m.const_u32(0);
                let is0 = self.m.b.i_equal(bt, None, x32, zero);
                let all = self.m.const_u32(u32::MAX);
                self.sel(32, is0, all, lz)?
            }
            _ => {
                let lsb =
                    self.m
                        .b
                        .ext_inst(u32t, None, glsl, 73, [rspirv::dr::Operand::IdRef(x32)]);
                // FindILsb(0) = -1 = all ones already.
                lsb
            }
        };
        let r = self.resize(r, 32, w)?;
        self.write_uint(&inst.ops[0], w, r)
    }
}
