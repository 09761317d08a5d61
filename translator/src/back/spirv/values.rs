//! Operand values: reading and writing registers (whole, one element, or a swizzled run of
//! elements packed into one integer), predicates, immediates and special registers.
//!
//! A multi-element swizzle (`.xy`, `.zw`, `.xyzw`) or a whole vector register read as an
//! N-bit integer packs its elements little-endian: element `i` lands in bits
//! `[i*w, (i+1)*w)`, as `mov`'s getSwizzleBits says.

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::diag::Diagnostic;
use crate::ir::{Bits, Operand, RegId, RegType};
use rspirv::spirv::{StorageClass, Word};

impl FnCx<'_> {
    fn elem_ptr(&mut self, reg: RegId, index: Word) -> EResult<Word> {
        let (eb, _) = match self.reg_ty(reg) {
            RegType::Vector(b, n) => (b, n),
            _ => return Err(self.err("internal: element of a non-vector register")),
        };
        let et = self.elem_type(eb);
        let p = self.m.ptr(StorageClass::Function, et);
        let v = self.reg_var(reg);
        Ok(self.m.b.access_chain(p, None, v, [index]))
    }

    fn elem_type(&mut self, b: Bits) -> Word {
        self.type_of(RegType::Scalar(b))
    }

    /// Loads element `i` of a vector register.
    pub fn load_elem(&mut self, reg: RegId, i: u32) -> EResult<Word> {
        let idx = self.m.const_u32(i);
        let p = self.elem_ptr(reg, idx)?;
        let b = self.reg_ty(reg).element().unwrap_or(Bits::B32);
        let t = self.elem_type(b);
        Ok(self.m.b.load(t, None, p, None, []))
    }

    /// Loads element `index` (a u32 value) of a vector register.
    pub fn load_elem_dyn(&mut self, reg: RegId, index: Word) -> EResult<Word> {
        let p = self.elem_ptr(reg, index)?;
        let b = self.reg_ty(reg).element().unwrap_or(Bits::B32);
        let t = self.elem_type(b);
        Ok(self.m.b.load(t, None, p, None, []))
    }

    /// Stores element `i` of a vector register.
    pub fn store_elem(&mut self, reg: RegId, i: u32, value: Word) -> EResult {
        let idx = self.m.const_u32(i);
        let p = self.elem_ptr(reg, idx)?;
        Ok(self.m.b.store(p, value, None, []))
    }

    /// Stores element `index` (a u32 value) of a vector register.
    pub fn store_elem_dyn(&mut self, reg: RegId, index: Word, value: Word) -> EResult {
        let p = self.elem_ptr(reg, index)?;
        Ok(self.m.b.store(p, value, None, []))
    }

    /// A diagnostic at no particular place (the caller's instruction span is attached by
    /// [`FnCx::inst`]).
    pub fn err(&self, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(crate::span::Span::default(), msg)
    }

    /// The elements `(first, count)` an operand designates, with their width, for registers.
    fn reg_elems(&self, reg: RegId, swz: Option<crate::ir::Swizzle>) -> (Bits, u32, u32, bool) {
        match (self.reg_ty(reg), swz) {
            (RegType::Vector(b, _), Some(s)) => {
                let (first, count) = s.range();
                (b, first as u32, count as u32, true)
            }
            (RegType::Vector(b, n), None) => (b, 0, n as u32, true),
            (RegType::Scalar(b), _) => (b, 0, 1, false),
            (RegType::Pred, _) => (Bits::B8, 0, 1, false),
        }
    }

    /// Reads an operand as an unsigned integer of `bits` bits (8 to 64).
    pub fn read_uint(&mut self, op: &Operand, bits: u32) -> EResult<Word> {
        match *op {
            Operand::Imm(v) => Ok(self.m.const_uint(bits, v as u64)),
            Operand::Special { reg, component } => {
                let v = self.special_value(reg, component)?;
                let have = reg.ty().element().map_or(32, |b| b.bits());
                self.resize(v, have, bits)
            }
            Operand::Reg { reg, swizzle } => {
                let (eb, first, count, vector) = self.reg_elems(reg, swizzle);
                if !vector {
                    let t = self.reg_type(reg);
                    let v = self.reg_var(reg);
                    let x = self.m.b.load(t, None, v, None, []);
                    return self.resize(x, eb.bits(), bits);
                }
                let w = eb.bits();
                if count == 1 {
                    let x = self.load_elem(reg, first)?;
                    return self.resize(x, w, bits);
                }
                let mut acc: Option<Word> = None;
                for i in 0..count {
                    let x = self.load_elem(reg, first + i)?;
                    let x = self.resize(x, w, bits)?;
                    let x = if i == 0 {
                        x
                    } else {
                        self.shl_const(x, bits, i * w)?
                    };
                    acc = Some(match acc {
                        None => x,
                        Some(a) => {
                            let t = self.m.uint(bits);
                            self.m.b.bitwise_or(t, None, a, x)
                        }
                    });
                }
                acc.ok_or_else(|| self.err("empty swizzle"))
            }
            Operand::Pred { .. } => {
                let p = self.read_pred(op)?;
                let one = self.m.const_uint(bits, 1);
                let zero = self.m.const_uint(bits, 0);
                let t = self.m.uint(bits);
                Ok(self.m.b.select(t, None, p, one, zero))
            }
            _ => Err(self.err("operand cannot be read as an integer")),
        }
    }

    /// Writes an unsigned integer of `bits` bits to a register operand (whole, element, or
    /// a swizzled run of elements).
    pub fn write_uint(&mut self, op: &Operand, bits: u32, value: Word) -> EResult {
        let Operand::Reg { reg, swizzle } = *op else {
            if let Operand::Pred { reg, .. } = *op {
                let bt = self.m.ty(Scalar::Bool);
                let zero = self.m.const_uint(bits, 0);
                let b = self.m.b.i_not_equal(bt, None, value, zero);
                let v = self.reg_var(reg);
                return Ok(self.m.b.store(v, b, None, []));
            }
            return Err(self.err("destination must be a register"));
        };
        let (eb, first, count, vector) = self.reg_elems(reg, swizzle);
        let w = eb.bits();
        if !vector {
            let x = self.resize(value, bits, w)?;
            let v = self.reg_var(reg);
            return Ok(self.m.b.store(v, x, None, []));
        }
        for i in 0..count {
            let x = if i == 0 {
                value
            } else {
                self.shr_const(value, bits, i * w)?
            };
            let x = self.resize(x, bits, w)?;
            self.store_elem(reg, first + i, x)?;
        }
        Ok(())
    }

    /// Reads a predicate operand (honouring `!`).
    pub fn read_pred(&mut self, op: &Operand) -> EResult<Word> {
        match *op {
            Operand::Pred { reg, .. } | Operand::Reg { reg, swizzle: None }
                if self.reg_ty(reg) == RegType::Pred =>
            {
                let negated = matches!(*op, Operand::Pred { negated: true, .. });
                let bt = self.m.ty(Scalar::Bool);
                let v = self.reg_var(reg);
                let x = self.m.b.load(bt, None, v, None, []);
                if negated {
                    Ok(self.m.b.logical_not(bt, None, x))
                } else {
                    Ok(x)
                }
            }
            Operand::Imm(v) => Ok(self.m.const_bool(v != 0)),
            _ => Err(self.err("operand must be a predicate")),
        }
    }

    /// Writes a predicate register.
    pub fn write_pred(&mut self, op: &Operand, value: Word) -> EResult {
        match *op {
            Operand::Pred { reg, .. } | Operand::Reg { reg, .. } => {
                let v = self.reg_var(reg);
                Ok(self.m.b.store(v, value, None, []))
            }
            _ => Err(self.err("destination must be a predicate")),
        }
    }

    /// Whether an operand is a predicate register.
    pub fn is_pred(&self, op: &Operand) -> bool {
        match *op {
            Operand::Pred { .. } => true,
            Operand::Reg { reg, .. } => self.reg_ty(reg) == RegType::Pred,
            _ => false,
        }
    }

    /// Reads the `count` elements of width `w` of a packed or vector operand.
    pub fn read_elems(&mut self, op: &Operand, w: u32, count: u32) -> EResult<Vec<Word>> {
        match *op {
            Operand::Reg { reg, swizzle: None }
                if matches!(self.reg_ty(reg), RegType::Vector(..)) =>
            {
                (0..count).map(|i| self.load_elem(reg, i)).collect()
            }
            _ => {
                // A scalar holding packed elements (e.g. an immediate shift count).
                let x = self.read_uint(op, w * count)?;
                (0..count)
                    .map(|i| {
                        let s = self.shr_const(x, w * count, i * w)?;
                        self.resize(s, w * count, w)
                    })
                    .collect()
            }
        }
    }

    /// Writes the elements of a packed or vector destination.
    pub fn write_elems(&mut self, op: &Operand, elems: &[Word]) -> EResult {
        match *op {
            Operand::Reg { reg, swizzle: None }
                if matches!(self.reg_ty(reg), RegType::Vector(..)) =>
            {
                for (i, &e) in elems.iter().enumerate() {
                    self.store_elem(reg, i as u32, e)?;
                }
                Ok(())
            }
            _ => Err(self.err("destination must be a vector register")),
        }
    }

    /// Zero-extends or truncates an unsigned integer from `from` to `to` bits.
    pub fn resize(&mut self, v: Word, from: u32, to: u32) -> EResult<Word> {
        if from == to {
            return Ok(v);
        }
        let t = self.m.uint(to);
        Ok(self.m.b.u_convert(t, None, v))
    }

    /// Sign-extends or truncates an integer from `from` to `to` bits.
    pub fn sresize(&mut self, v: Word, from: u32, to: u32) -> EResult<Word> {
        if from == to {
            return Ok(v);
        }
        let t = self.m.uint(to);
        Ok(self.m.b.s_convert(t, None, v))
    }

    /// `x << k` for a constant `k` below the width.
    pub fn shl_const(&mut self, x: Word, bits: u32, k: u32) -> EResult<Word> {
        let t = self.m.uint(bits);
        let s = self.m.const_u32(k);
        Ok(self.m.b.shift_left_logical(t, None, x, s))
    }

    /// `x >> k` (logical) for a constant `k` below the width.
    pub fn shr_const(&mut self, x: Word, bits: u32, k: u32) -> EResult<Word> {
        let t = self.m.uint(bits);
        let s = self.m.const_u32(k);
        Ok(self.m.b.shift_right_logical(t, None, x, s))
    }
}
