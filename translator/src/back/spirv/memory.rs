//! Memory: address operands, and byte-addressed little-endian loads and stores in every
//! address space.
//!
//! - `.global`/`.const`: 64-bit device addresses, `OpConvertUToPtr` to a
//!   PhysicalStorageBuffer pointer of the access type, `Aligned` to its natural size.
//! - `.shared`/`.private`/`.param` in a buffer: arenas of 32-bit words (Workgroup and
//!   Private storage, or the argument buffer); `.param` in the launch block: its 64-bit
//!   words ([`FnCx::launch_load`]). A narrower access shifts and masks
//!   within its word; a sub-word store to shared memory uses two atomics (clear, then set
//!   the bytes) so that work-items writing neighbouring bytes never lose each other's
//!   stores; a 64-bit access is two words.
//! - generic: a tagged 64-bit address ([`crate::layout::generic`]) dispatched at run time.
//!
//! PISA requires every access to be aligned to its size (prog-5 §5.1), so no access
//! straddles a word.

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::{AddrBase, AddrOffset, Address, MemSpace, VarRef};
use crate::layout::generic;
use crate::reflect::Feature;
use rspirv::dr::Operand as SpvOperand;
use rspirv::spirv::{self, Capability, MemoryAccess, StorageClass, Word};

/// Where a word-arena access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordSpace {
    /// The Workgroup shared arena.
    Shared,
    /// The Private arena.
    Private,
    /// A buffer in global memory at this u64 address (the argument buffer).
    Global(Word),
}

/// An access space: a concrete PISA space or generic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// A concrete space.
    Mem(MemSpace),
    /// Generic (tagged) addresses.
    Generic,
}

impl FnCx<'_> {
    /// The address of a memory variable in its own space: u64 for global/const, u32 for
    /// shared/private.
    pub fn var_address(&mut self, var: VarRef) -> EResult<(Word, MemSpace)> {
        let space = match var {
            VarRef::Global(g) => self.module.globals[g.0 as usize].space,
            VarRef::Local(l) => self.f.locals[l.0 as usize].space,
        };
        let off = self.layout.var_offset(self.fid, var);
        match space {
            MemSpace::Global | MemSpace::Const => {
                let base = self.globals_base()?;
                let k = self.m.const_uint(64, off);
                let u64t = self.m.uint(64);
                Ok((self.m.b.i_add(u64t, None, base, k), space))
            }
            MemSpace::Shared | MemSpace::Private => Ok((self.m.const_u32(off as u32), space)),
        }
    }

    /// The device address of the module's globals arena, from the launch block.
    pub fn globals_base(&mut self) -> EResult<Word> {
        match self.layout.launch.globals_base {
            Some(at) => self.launch_u64(at),
            None => Err(self.err("internal error: the launch block has no globals arena address")),
        }
    }

    /// The space an access to `addr` in `space` goes to: a generic access whose address
    /// provably points into one space ([`crate::mid::provenance`]) is an access to that space.
    pub fn resolve_space(&self, space: Space, addr: &Address) -> Space {
        use crate::mid::provenance::Origin;
        if space != Space::Generic {
            return space;
        }
        let of = |r: crate::ir::RegId| self.provenance.get(r.0 as usize).copied();
        let base = match addr.base {
            AddrBase::Reg(r) => of(r),
            _ => None,
        };
        let offset_is_int = match addr.offset {
            AddrOffset::Reg(r) => matches!(of(r), Some(Origin::Int | Origin::Unwritten)),
            _ => true,
        };
        match base {
            Some(Origin::From(s)) if offset_is_int => Space::Mem(s),
            _ => Space::Generic,
        }
    }

    /// Evaluates `addr` to an address of `bits` bits: a narrower result is computed in
    /// `bits`-bit arithmetic (the low bits of a sum are the sum of the low bits), a wider
    /// one is the zero-extended `addr.bits`-bit address.
    pub fn eval_address_as(&mut self, addr: &Address, bits: u32) -> EResult<Word> {
        if bits < addr.bits {
            return self.eval_address(&Address { bits, ..*addr });
        }
        let a = self.eval_address(addr)?;
        self.resize(a, addr.bits, bits)
    }

    /// Evaluates an address operand to an integer of `addr.bits` bits (for `.param`, the
    /// byte offset in the argument block).
    pub fn eval_address(&mut self, addr: &Address) -> EResult<Word> {
        let bits = addr.bits;
        let base = match addr.base {
            AddrBase::Reg(r) => {
                let rb = self.reg_ty(r).total_bits();
                let t = self.reg_type(r);
                let v = self.reg_var(r);
                let x = self.m.b.load(t, None, v, None, []);
                self.resize(x, rb, bits)?
            }
            AddrBase::Var(v) => {
                let (x, space) = self.var_address(v)?;
                self.resize(x, space.address_bits(), bits)?
            }
            AddrBase::Imm(v) => self.m.const_uint(bits, v),
            AddrBase::Param(p) => {
                let (offs, _) = self.f.param_layout();
                let Some(&off) = offs.get(p.0 as usize) else {
                    return Err(self.err("internal error: a parameter the kernel does not have"));
                };
                self.m.const_uint(bits, off as u64)
            }
        };
        let t = self.m.uint(bits);
        match addr.offset {
            AddrOffset::None => Ok(base),
            AddrOffset::Imm(k) => {
                let k = self.m.const_uint(bits, k as u64);
                Ok(self.m.b.i_add(t, None, base, k))
            }
            AddrOffset::Reg(r) => {
                let rb = self.reg_ty(r).total_bits();
                let rt = self.reg_type(r);
                let v = self.reg_var(r);
                let x = self.m.b.load(rt, None, v, None, []);
                let x = self.sresize(x, rb, bits)?;
                Ok(self.m.b.i_add(t, None, base, x))
            }
        }
    }

    /// A pointer to word `word` (u32 index) of a word arena.
    pub fn word_ptr(&mut self, space: WordSpace, word: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        match space {
            WordSpace::Shared | WordSpace::Private => {
                let (class, var) = match space {
                    WordSpace::Shared => (StorageClass::Workgroup, self.m.shared),
                    _ => (StorageClass::Private, self.m.private),
                };
                let Some(var) = var else {
                    return Err(
                        self.err("access to a memory space the module declares no variable in")
                    );
                };
                let word = match space {
                    WordSpace::Private => self.private_word(word)?,
                    _ => word,
                };
                let p = self.m.ptr(class, u32t);
                Ok(self.m.b.access_chain(p, None, var, [word]))
            }
            WordSpace::Global(base) => {
                let u64t = self.m.uint(64);
                let w = self.resize(word, 32, 64)?;
                let off = self.shl_const(w, 64, 2)?;
                let a = self.m.b.i_add(u64t, None, base, off);
                self.global_ptr(a, 32)
            }
        }
    }

    fn word_load(&mut self, space: WordSpace, word: Word) -> EResult<Word> {
        let p = self.word_ptr(space, word)?;
        let u32t = self.m.uint(32);
        let (access, extra) = self.access_for(space, 4);
        Ok(self.m.b.load(u32t, None, p, access, extra))
    }

    fn word_store(&mut self, space: WordSpace, word: Word, value: Word) -> EResult {
        let p = self.word_ptr(space, word)?;
        let (access, extra) = self.access_for(space, 4);
        Ok(self.m.b.store(p, value, access, extra))
    }

    fn access_for(&self, space: WordSpace, align: u32) -> (Option<MemoryAccess>, Vec<SpvOperand>) {
        match space {
            WordSpace::Global(_) => (
                Some(MemoryAccess::ALIGNED),
                vec![SpvOperand::LiteralBit32(align)],
            ),
            _ => (None, vec![]),
        }
    }

    /// Loads `bits` (8/16/32/64) at byte address `addr` (u32) of a word arena.
    pub fn word_arena_load(&mut self, space: WordSpace, addr: Word, bits: u32) -> EResult<Word> {
        let space = self.arena_space(space)?;
        let u32t = self.m.uint(32);
        let two = self.m.const_u32(2);
        let word = self.m.b.shift_right_logical(u32t, None, addr, two);
        match bits {
            32 => self.word_load(space, word),
            64 => {
                let lo = self.word_load(space, word)?;
                let one = self.m.const_u32(1);
                let w1 = self.m.b.i_add(u32t, None, word, one);
                let hi = self.word_load(space, w1)?;
                self.pair_to_u64(lo, hi)
            }
            _ => {
                let w = self.word_load(space, word)?;
                let sh = self.byte_shift(addr)?;
                let x = self.m.b.shift_right_logical(u32t, None, w, sh);
                self.resize(x, 32, bits)
            }
        }
    }

    fn byte_shift(&mut self, addr: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let three = self.m.const_u32(3);
        let low = self.m.b.bitwise_and(u32t, None, addr, three);
        Ok(self.m.b.shift_left_logical(u32t, None, low, three))
    }

    /// Stores `value` (`bits` wide) at byte address `addr` (u32) of the shared or private
    /// arena.
    pub fn word_arena_store(
        &mut self,
        space: WordSpace,
        addr: Word,
        bits: u32,
        value: Word,
    ) -> EResult {
        let space = self.arena_space(space)?;
        let u32t = self.m.uint(32);
        let two = self.m.const_u32(2);
        let word = self.m.b.shift_right_logical(u32t, None, addr, two);
        match bits {
            32 => self.word_store(space, word, value),
            64 => {
                let lo = self.resize(value, 64, 32)?;
                let hi = self.shr_const(value, 64, 32)?;
                let hi = self.resize(hi, 64, 32)?;
                self.word_store(space, word, lo)?;
                let one = self.m.const_u32(1);
                let w1 = self.m.b.i_add(u32t, None, word, one);
                self.word_store(space, w1, hi)
            }
            _ => {
                let sh = self.byte_shift(addr)?;
                let v32 = self.resize(value, bits, 32)?;
                let bits_v = self.m.b.shift_left_logical(u32t, None, v32, sh);
                let ones = self.m.const_u32(if bits == 8 { 0xFF } else { 0xFFFF });
                let mask = self.m.b.shift_left_logical(u32t, None, ones, sh);
                let inv = self.m.b.not(u32t, None, mask);
                let p = self.word_ptr(space, word)?;
                if space == WordSpace::Shared {
                    let scope = self.m.const_u32(spirv::Scope::Workgroup as u32);
                    let sem = self.m.const_u32(spirv::MemorySemantics::empty().bits());
                    self.m.b.atomic_and(u32t, None, p, scope, sem, inv);
                    self.m.b.atomic_or(u32t, None, p, scope, sem, bits_v);
                    Ok(())
                } else {
                    let (access, extra) = self.access_for(space, 4);
                    let old = self.m.b.load(u32t, None, p, access, extra.clone());
                    let old = old;
                    let kept = self.m.b.bitwise_and(u32t, None, old, inv);
                    let new = self.m.b.bitwise_or(u32t, None, kept, bits_v);
                    Ok(self.m.b.store(p, new, access, extra))
                }
            }
        }
    }

    /// A PhysicalStorageBuffer pointer to a `bits`-wide integer at u64 address `addr`.
    pub fn global_ptr(&mut self, addr: Word, bits: u32) -> EResult<Word> {
        match bits {
            8 => {
                self.m.capability(Capability::StorageBuffer8BitAccess);
                self.m.feature(Feature::StorageBuffer8Bit);
            }
            16 => {
                self.m.capability(Capability::StorageBuffer16BitAccess);
                self.m.feature(Feature::StorageBuffer16Bit);
            }
            _ => {}
        }
        let t = self.m.uint(bits);
        let p = self.m.ptr(StorageClass::PhysicalStorageBuffer, t);
        Ok(self.m.b.convert_u_to_ptr(p, None, addr))
    }

    /// Loads `bits` at a u64 global address.
    pub fn global_load(&mut self, addr: Word, bits: u32) -> EResult<Word> {
        let p = self.global_ptr(addr, bits)?;
        let t = self.m.uint(bits);
        Ok(self.m.b.load(
            t,
            None,
            p,
            Some(MemoryAccess::ALIGNED),
            [SpvOperand::LiteralBit32(bits / 8)],
        ))
    }

    /// Stores `bits` at a u64 global address.
    pub fn global_store(&mut self, addr: Word, bits: u32, value: Word) -> EResult {
        let p = self.global_ptr(addr, bits)?;
        Ok(self.m.b.store(
            p,
            value,
            Some(MemoryAccess::ALIGNED),
            [SpvOperand::LiteralBit32(bits / 8)],
        ))
    }

    /// Adds a byte offset to an address of `bits` bits.
    pub fn addr_add(&mut self, addr: Word, bits: u32, k: u64) -> EResult<Word> {
        if k == 0 {
            return Ok(addr);
        }
        let t = self.m.uint(bits);
        let c = self.m.const_uint(bits, k);
        Ok(self.m.b.i_add(t, None, addr, c))
    }

    /// Loads `bits` from `addr` in `space`.
    pub fn mem_load(&mut self, space: Space, addr: Word, bits: u32) -> EResult<Word> {
        match space {
            Space::Mem(MemSpace::Global | MemSpace::Const) => self.global_load(addr, bits),
            Space::Mem(MemSpace::Shared) => self.word_arena_load(WordSpace::Shared, addr, bits),
            Space::Mem(MemSpace::Private) => self.word_arena_load(WordSpace::Private, addr, bits),
            Space::Generic => {
                let t = self.m.uint(bits);
                let result = self.local_var(t)?;
                self.generic_dispatch(addr, |cx, space, a| {
                    let v = cx.mem_load(space, a, bits)?;
                    Ok(cx.m.b.store(result, v, None, []))
                })?;
                Ok(self.m.b.load(t, None, result, None, []))
            }
        }
    }

    /// Stores `bits` of `value` to `addr` in `space`.
    pub fn mem_store(&mut self, space: Space, addr: Word, bits: u32, value: Word) -> EResult {
        match space {
            Space::Mem(MemSpace::Global | MemSpace::Const) => self.global_store(addr, bits, value),
            Space::Mem(MemSpace::Shared) => {
                self.word_arena_store(WordSpace::Shared, addr, bits, value)
            }
            Space::Mem(MemSpace::Private) => {
                self.word_arena_store(WordSpace::Private, addr, bits, value)
            }
            Space::Generic => {
                self.generic_dispatch(addr, |cx, space, a| cx.mem_store(space, a, bits, value))
            }
        }
    }

    /// Runs `access` with the concrete space and address of a generic address: private and
    /// shared by their tags (only when the module has such variables), global otherwise.
    pub fn generic_dispatch(
        &mut self,
        addr: Word,
        access: impl Fn(&mut Self, Space, Word) -> EResult,
    ) -> EResult {
        let u64t = self.m.uint(64);
        let bt = self.m.ty(Scalar::Bool);
        let mask = self.m.const_uint(64, generic::TAG_MASK);
        let tag = self.m.b.bitwise_and(u64t, None, addr, mask);
        let low = self.resize(addr, 64, 32)?;
        let mut arms: Vec<(u64, MemSpace)> = Vec::new();
        if self.m.private.is_some() || self.m.scratch.is_some() {
            arms.push((generic::PRIVATE_TAG, MemSpace::Private));
        }
        if self.m.shared.is_some() {
            arms.push((generic::SHARED_TAG, MemSpace::Shared));
        }
        self.generic_arms(&arms, tag, low, addr, bt, &access)
    }

    fn generic_arms(
        &mut self,
        arms: &[(u64, MemSpace)],
        tag: Word,
        low: Word,
        addr: Word,
        bt: Word,
        access: &impl Fn(&mut Self, Space, Word) -> EResult,
    ) -> EResult {
        let Some(&(t, space)) = arms.first() else {
            return access(self, Space::Mem(MemSpace::Global), addr);
        };
        let k = self.m.const_uint(64, t);
        let is = self.m.b.i_equal(bt, None, tag, k);
        self.if_else(
            is,
            |cx| access(cx, Space::Mem(space), low),
            |cx| cx.generic_arms(&arms[1..], tag, low, addr, bt, access),
        )
    }
}
