//! Short emitters for the floating-point lowerings: one call per SPIR-V instruction, with
//! every float arithmetic result decorated `NoContraction` (the error-free transformations
//! of [`super::round`] depend on each operation being rounded once, as written).

use super::super::module::{ModuleCx, Scalar};
use crate::back::spirv::error::EResult;
use rspirv::dr::Operand as SpvOperand;
use rspirv::spirv::{Decoration, Word};

/// One SPIR-V instruction per method; `w` is the width in bits of the operands.
pub trait Emit {
    /// The unsigned integer type of `w` bits.
    fn u(&mut self, w: u32) -> Word;
    /// The float type of `w` bits.
    fn f(&mut self, w: u32) -> Word;
    /// `bool`.
    fn bool_t(&mut self) -> Word;
    /// An integer constant.
    fn ku(&mut self, w: u32, v: u64) -> Word;
    /// A float constant of `w` (32 or 64) bits with value `v`.
    fn kf(&mut self, w: u32, v: f64) -> Word;
    /// `a + b` (integers).
    fn iadd(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a - b` (integers).
    fn isub(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a * b` (integers, low `w` bits).
    fn imul(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a / b`, unsigned.
    fn udiv(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a % b`, unsigned.
    fn umod(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a & b`.
    fn and(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a | b`.
    fn or(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a ^ b`.
    fn xor(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a << s` (`s` below `w`).
    fn shl(&mut self, w: u32, a: Word, s: Word) -> EResult<Word>;
    /// `a >> s`, logical.
    fn shr(&mut self, w: u32, a: Word, s: Word) -> EResult<Word>;
    /// `a >> s`, arithmetic.
    fn sar(&mut self, w: u32, a: Word, s: Word) -> EResult<Word>;
    /// `a == b` (integers).
    fn ieq(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a != b` (integers).
    fn ine(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a < b`, unsigned.
    fn ult(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a >= b`, unsigned.
    fn uge(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a < b`, signed.
    fn slt(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a >= b`, signed.
    fn sge(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a && b`.
    fn land(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a || b`.
    fn lor(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `!a`.
    fn lnot(&mut self, a: Word) -> EResult<Word>;
    /// `c ? a : b` with result type `ty`.
    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> EResult<Word>;
    /// `a + b` (floats), not contracted.
    fn fadd(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a - b` (floats), not contracted.
    fn fsub(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a * b` (floats), not contracted.
    fn fmul(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a / b` (floats), not contracted.
    fn fdiv(&mut self, w: u32, a: Word, b: Word) -> EResult<Word>;
    /// `a == b`, ordered.
    fn feq(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a != b`, ordered (false with a NaN).
    fn fne(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a < b`, ordered.
    fn flt(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `a > b`, ordered.
    fn fgt(&mut self, a: Word, b: Word) -> EResult<Word>;
    /// `isnan(a)`.
    fn isnan(&mut self, a: Word) -> EResult<Word>;
    /// `isinf(a)`.
    fn isinf(&mut self, a: Word) -> EResult<Word>;
    /// Float to float of `w` bits (`OpFConvert`), not contracted.
    fn fconv(&mut self, w: u32, a: Word) -> EResult<Word>;
    /// Raw bits of a `w`-bit float.
    fn bits(&mut self, w: u32, a: Word) -> EResult<Word>;
    /// The `w`-bit float with raw bits `a`.
    fn float(&mut self, w: u32, a: Word) -> EResult<Word>;
    /// A GLSL.std.450 instruction on `w`-bit floats.
    fn glsl(&mut self, w: u32, code: u32, args: &[Word]) -> EResult<Word>;
    /// Decorates `id` `NoContraction`.
    fn exact(&mut self, id: Word);
}

impl Emit for ModuleCx {
    fn u(&mut self, w: u32) -> Word {
        self.uint(w)
    }
    fn f(&mut self, w: u32) -> Word {
        self.ty(Scalar::F(w))
    }
    fn bool_t(&mut self) -> Word {
        self.ty(Scalar::Bool)
    }
    fn ku(&mut self, w: u32, v: u64) -> Word {
        self.const_uint(w, v)
    }
    fn kf(&mut self, w: u32, v: f64) -> Word {
        let t = self.f(w);
        if w == 64 {
            self.const_of(t, 64, v.to_bits())
        } else {
            self.const_of(t, 32, (v as f32).to_bits() as u64)
        }
    }
    fn iadd(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.i_add(t, None, a, b))
    }
    fn isub(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.i_sub(t, None, a, b))
    }
    fn imul(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.i_mul(t, None, a, b))
    }
    fn udiv(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.u_div(t, None, a, b))
    }
    fn umod(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.u_mod(t, None, a, b))
    }
    fn and(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.bitwise_and(t, None, a, b))
    }
    fn or(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.bitwise_or(t, None, a, b))
    }
    fn xor(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.bitwise_xor(t, None, a, b))
    }
    fn shl(&mut self, w: u32, a: Word, s: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.shift_left_logical(t, None, a, s))
    }
    fn shr(&mut self, w: u32, a: Word, s: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.shift_right_logical(t, None, a, s))
    }
    fn sar(&mut self, w: u32, a: Word, s: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.shift_right_arithmetic(t, None, a, s))
    }
    fn ieq(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.i_equal(t, None, a, b))
    }
    fn ine(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.i_not_equal(t, None, a, b))
    }
    fn ult(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.u_less_than(t, None, a, b))
    }
    fn uge(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.u_greater_than_equal(t, None, a, b))
    }
    fn slt(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.s_less_than(t, None, a, b))
    }
    fn sge(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.s_greater_than_equal(t, None, a, b))
    }
    fn land(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.logical_and(t, None, a, b))
    }
    fn lor(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.logical_or(t, None, a, b))
    }
    fn lnot(&mut self, a: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.logical_not(t, None, a))
    }
    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> EResult<Word> {
        Ok(self.b.select(ty, None, c, a, b))
    }
    fn fadd(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.f(w);
        let r = self.b.f_add(t, None, a, b);
        self.exact(r);
        Ok(r)
    }
    fn fsub(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.f(w);
        let r = self.b.f_sub(t, None, a, b);
        self.exact(r);
        Ok(r)
    }
    fn fmul(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.f(w);
        let r = self.b.f_mul(t, None, a, b);
        self.exact(r);
        Ok(r)
    }
    fn fdiv(&mut self, w: u32, a: Word, b: Word) -> EResult<Word> {
        let t = self.f(w);
        let r = self.b.f_div(t, None, a, b);
        self.exact(r);
        Ok(r)
    }
    fn feq(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.f_ord_equal(t, None, a, b))
    }
    fn fne(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.f_ord_not_equal(t, None, a, b))
    }
    fn flt(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.f_ord_less_than(t, None, a, b))
    }
    fn fgt(&mut self, a: Word, b: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.f_ord_greater_than(t, None, a, b))
    }
    fn isnan(&mut self, a: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.is_nan(t, None, a))
    }
    fn isinf(&mut self, a: Word) -> EResult<Word> {
        let t = self.bool_t();
        Ok(self.b.is_inf(t, None, a))
    }
    fn fconv(&mut self, w: u32, a: Word) -> EResult<Word> {
        let t = self.f(w);
        let r = self.b.f_convert(t, None, a);
        self.exact(r);
        Ok(r)
    }
    fn bits(&mut self, w: u32, a: Word) -> EResult<Word> {
        let t = self.u(w);
        Ok(self.b.bitcast(t, None, a))
    }
    fn float(&mut self, w: u32, a: Word) -> EResult<Word> {
        if w == 32 {
            // Single-precision arithmetic follows: its denormals must survive.
            self.feature(crate::reflect::Feature::KeepsDenormalsFloat32);
        }
        let t = self.f(w);
        Ok(self.b.bitcast(t, None, a))
    }
    fn glsl(&mut self, w: u32, code: u32, args: &[Word]) -> EResult<Word> {
        let t = self.f(w);
        let set = self.glsl;
        let ops: Vec<SpvOperand> = args.iter().map(|&a| SpvOperand::IdRef(a)).collect();
        let r = self.b.ext_inst(t, None, set, code, ops);
        self.exact(r);
        Ok(r)
    }
    fn exact(&mut self, id: Word) {
        self.b.decorate(id, Decoration::NoContraction, []);
    }
}
