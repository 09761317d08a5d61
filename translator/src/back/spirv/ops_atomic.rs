//! Lowering of atomics and memory ordering: `iatom` and `fatom` (isa-8 §8.1, §8.2), the
//! atomic forms of `ld` and `st` (isa-8 §8.3, §8.5) and `fence` (isa-9 §9.2).
//!
//! Orders and scopes map onto the module's GLSL450 memory model: `.relaxed` is no ordering,
//! `.acquire`/`.release`/`.acq_rel`/`.seq_cst` are the SPIR-V semantics of the same name
//! with both `UniformMemory` and `WorkgroupMemory` (PISA orders every access, as C++ does,
//! whichever space the atomic itself touches); `.subgroup`/`.workgroup` are the SPIR-V
//! scopes of the same name, `.gpu` and `.system` are `Device` (Vulkan has no wider scope
//! a shader may use). An omitted scope is `Device`. Cache-control qualifiers are hints and
//! emit nothing.
//!
//! A generic address is dispatched on its tag: shared and global locations get the atomic,
//! a private one (which PISA forbids, isa-8 notes) a plain read-modify-write, which is
//! atomic anyway because nobody else sees private memory.

use super::atomic_mem::{Apply, MemSync, Native};
use super::checked;
use super::function::FnCx;
use super::memory::{Space, WordSpace};
use super::module::Scalar;
use super::ops_float::FKind;
use crate::back::spirv::error::EResult;
use crate::ir::{
    AddrSpace, AtomOp, DataType, Inst, MemOrder, MemScope, MemSpace, Opcode, Operand, RoundingMode,
};
use crate::layout::locks;
use crate::memcheck::AccessKind;
use rspirv::spirv::{Decoration, MemorySemantics, Scope, Word};

use AtomOp as A;

/// Where an atomic goes: its address, evaluated to the width of its space's addresses, the
/// space (a generic one resolved statically when it can be), and for the checker the whole
/// generic address of a resolved one ([`checked::Access::origin`]).
#[derive(Clone, Copy)]
struct Located {
    addr: Word,
    space: AddrSpace,
    origin: Option<Word>,
}

/// What an atomic access does, for the order check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Load,
    Store,
    Rmw,
}

/// The SPIR-V scope of a PISA scope (omitted: `.gpu`). `.subgroup` is `Subgroup` only in
/// code whose PISA sub-groups are hardware sub-groups (or clusters of one); where lanes are
/// numbered by linear local id a PISA sub-group may span several hardware ones, so it is
/// `Workgroup` (spec-notes §60).
fn spv_scope(s: Option<MemScope>, lanes: super::LaneNumbering) -> Scope {
    match s {
        Some(MemScope::Subgroup) if lanes == super::LaneNumbering::Hardware => Scope::Subgroup,
        Some(MemScope::Subgroup) => Scope::Workgroup,
        Some(MemScope::Workgroup) => Scope::Workgroup,
        Some(MemScope::Gpu | MemScope::System) | None => Scope::Device,
    }
}

/// The order bits of a PISA memory order (`.weak`/`.relaxed`: none).
fn order_bits(o: MemOrder) -> MemorySemantics {
    match o {
        MemOrder::Weak | MemOrder::Relaxed => MemorySemantics::empty(),
        MemOrder::Acquire => MemorySemantics::ACQUIRE,
        MemOrder::Release => MemorySemantics::RELEASE,
        MemOrder::AcqRel => MemorySemantics::ACQUIRE_RELEASE,
        MemOrder::SeqCst => MemorySemantics::SEQUENTIALLY_CONSISTENT,
    }
}

const BOTH_MEMORIES: MemorySemantics =
    MemorySemantics::UNIFORM_MEMORY.union(MemorySemantics::WORKGROUP_MEMORY);

impl<'a> FnCx<'a> {
    fn order_name(o: MemOrder) -> &'static str {
        match o {
            MemOrder::Weak => "weak",
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }

    /// The synchronization of an atomic access with `order` and `scope`.
    fn atomic_sync(
        &self,
        order: Option<MemOrder>,
        scope: Option<MemScope>,
        access: Access,
    ) -> EResult<MemSync> {
        let order = order.unwrap_or(MemOrder::Relaxed);
        let bad = match access {
            Access::Load => matches!(order, MemOrder::Release | MemOrder::AcqRel),
            Access::Store => matches!(order, MemOrder::Acquire | MemOrder::AcqRel),
            Access::Rmw => false,
        };
        if bad {
            return Err(self.err(format!(
                "memory order .{} is not allowed on an atomic {}",
                Self::order_name(order),
                if access == Access::Load {
                    "load"
                } else {
                    "store"
                }
            )));
        }
        let bits = order_bits(order);
        let sem = if bits.is_empty() {
            bits
        } else {
            bits | BOTH_MEMORIES
        };
        Ok(MemSync {
            scope: spv_scope(scope, self.subgroups.lanes),
            sem,
        })
    }

    /// The space an atomic in `space` accesses (a generic address that provably points into
    /// one space is an access to it) and its address operand, evaluated to the width of that
    /// space's addresses (with, for the checker, the whole generic address of a resolved
    /// one: [`checked::Access::origin`]).
    fn atomic_address(&mut self, op: &Operand, space: AddrSpace) -> EResult<Located> {
        let Operand::Addr(addr) = *op else {
            return Err(self.err("expected an address operand"));
        };
        let declared = match space.mem_space() {
            Some(m) => Space::Mem(m),
            None => Space::Generic,
        };
        let (abits, space) = match self.resolve_space(declared, &addr) {
            Space::Mem(m) => {
                let concrete = match m {
                    MemSpace::Global => AddrSpace::Global,
                    MemSpace::Const => AddrSpace::Const,
                    MemSpace::Shared => AddrSpace::Shared,
                    MemSpace::Private => AddrSpace::Private,
                };
                (m.address_bits(), concrete)
            }
            Space::Generic => (64, space),
        };
        let resolved = space.mem_space().map_or(Space::Generic, Space::Mem);
        Ok(Located {
            addr: self.eval_address_as(&addr, abits)?,
            space,
            origin: self.generic_origin(&addr, declared, resolved)?,
        })
    }

    /// Runs `access` on the concrete space of the `w`-bit atomic `inst`'s address `addr`
    /// (its operand `addr_op`; a generic one is dispatched on its tag) and returns the value
    /// of type `ty` it produces. In a checked translation the access is checked first (0
    /// when it fails).
    fn in_space(
        &mut self,
        inst: &Inst,
        addr_op: usize,
        at: Located,
        w: u32,
        ty: Word,
        access: impl Fn(&mut Self, MemSpace, Word) -> EResult<Word>,
    ) -> EResult<Word> {
        let Located {
            addr,
            space,
            origin,
        } = at;
        let check = checked::Access {
            space: space.mem_space().map_or(Space::Generic, Space::Mem),
            addr,
            origin,
            bytes: w / 8,
            align: w / 8,
            kind: AccessKind::Atomic,
            var: checked::address_var(&inst.ops[addr_op]),
            slot: self.address_slot(&inst.ops[addr_op]),
        };
        self.checked_value(inst, check, ty, |cx| {
            cx.in_space_unchecked(space, addr, ty, access)
        })
    }

    fn in_space_unchecked(
        &mut self,
        space: AddrSpace,
        addr: Word,
        ty: Word,
        access: impl Fn(&mut Self, MemSpace, Word) -> EResult<Word>,
    ) -> EResult<Word> {
        if let Some(ms) = space.mem_space() {
            return access(self, ms, addr);
        }
        let result = self.local_var(ty)?;
        self.generic_dispatch(addr, |cx, s, a| {
            let Space::Mem(ms) = s else {
                return Err(cx.err("generic dispatch without a space"));
            };
            let v = access(cx, ms, a)?;
            Ok(cx.m.b.store(result, v, None, []))
        })?;
        Ok(self.m.b.load(ty, None, result, None, []))
    }

    /// The SPIR-V type an atomic of `w` bits computes on: a `w`-bit integer, or for
    /// `.128b` the location's four 32-bit words (low first), as the lock emulation has them.
    fn atomic_value_type(&mut self, w: u32) -> Word {
        if w == 128 {
            self.lock_words_type(128)
        } else {
            self.m.uint(w)
        }
    }

    /// Reads a `w`-bit atomic operand as an [`Self::atomic_value_type`] value.
    fn read_atomic_value(&mut self, op: &Operand, w: u32) -> EResult<Word> {
        if w != 128 {
            return self.read_uint(op, w);
        }
        let (lo, hi) = self.read_u128(op)?;
        let v2 = self.lock_words_type(64);
        let lo = self.m.b.bitcast(v2, None, lo);
        let hi = self.m.b.bitcast(v2, None, hi);
        let v4 = self.lock_words_type(128);
        Ok(self.m.b.composite_construct(v4, None, [lo, hi]))
    }

    /// Writes an [`Self::atomic_value_type`] value to a `w`-bit destination.
    fn write_atomic_value(&mut self, op: &Operand, w: u32, v: Word) -> EResult {
        if w != 128 {
            return self.write_uint(op, w, v);
        }
        let lo = self.words_to_u64(v, 0)?;
        let hi = self.words_to_u64(v, 2)?;
        self.write_u128(op, lo, hi)
    }

    /// The u64 made of words `first` and `first + 1` of the word vector `v`.
    fn words_to_u64(&mut self, v: Word, first: u32) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let lo = self.m.b.composite_extract(u32t, None, v, [first]);
        let hi = self.m.b.composite_extract(u32t, None, v, [first + 1]);
        let vt = self.lock_words_type(64);
        let x = self.m.b.composite_construct(vt, None, [lo, hi]);
        let u64t = self.m.uint(64);
        Ok(self.m.b.bitcast(u64t, None, x))
    }

    /// An atomic value of `w` bits as the words the lock emulation stores.
    fn value_to_words(&mut self, v: Word, w: u32) -> EResult<Word> {
        match w {
            64 => {
                let vt = self.lock_words_type(64);
                Ok(self.m.b.bitcast(vt, None, v))
            }
            _ => Ok(v),
        }
    }

    /// The inverse of [`Self::value_to_words`].
    fn words_to_value(&mut self, v: Word, w: u32) -> EResult<Word> {
        match w {
            64 => self.words_to_u64(v, 0),
            _ => Ok(v),
        }
    }

    /// Loads a `w`-bit atomic value from private memory (where atomics are plain accesses).
    fn private_value_load(&mut self, a: Word, w: u32) -> EResult<Word> {
        if w != 128 {
            return self.word_arena_load(WordSpace::Private, a, w);
        }
        let u32t = self.m.uint(32);
        let mut parts = Vec::with_capacity(4);
        for i in 0..4u32 {
            let k = self.m.const_u32(4 * i);
            let at = self.m.b.i_add(u32t, None, a, k);
            parts.push(self.word_arena_load(WordSpace::Private, at, 32)?);
        }
        let vt = self.lock_words_type(128);
        Ok(self.m.b.composite_construct(vt, None, parts))
    }

    /// Stores a `w`-bit atomic value to private memory.
    fn private_value_store(&mut self, a: Word, w: u32, v: Word) -> EResult {
        if w != 128 {
            return self.word_arena_store(WordSpace::Private, a, w, v);
        }
        let u32t = self.m.uint(32);
        for i in 0..4u32 {
            let k = self.m.const_u32(4 * i);
            let at = self.m.b.i_add(u32t, None, a, k);
            let x = self.m.b.composite_extract(u32t, None, v, [i]);
            self.word_arena_store(WordSpace::Private, at, 32, x)?;
        }
        Ok(())
    }

    /// A lock-emulated atomic access ([`locks::locked`]): `update` maps the old value to
    /// the new one (none for a load); returns the old value.
    fn locked_value_access(
        &mut self,
        ms: MemSpace,
        a: Word,
        w: u32,
        sync: MemSync,
        update: Option<Apply<'_, 'a>>,
    ) -> EResult<Word> {
        let old = match update {
            Some(update) => {
                let on_words = move |cx: &mut FnCx<'a>, words: Word| {
                    let old = cx.words_to_value(words, w)?;
                    let new = update(cx, old)?;
                    cx.value_to_words(new, w)
                };
                self.locked_access(ms, a, w, sync, Some(&on_words))?
            }
            None => self.locked_access(ms, a, w, sync, None)?,
        };
        self.words_to_value(old, w)
    }

    /// `iatom` and `fatom`: every operation and type of isa-8's tables, returning the old
    /// value in `dst`.
    pub fn atomic(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let name = inst.op.as_str();
        let Some(op) = q.atom else {
            return Err(self.err(format!("`{name}` without an operation")));
        };
        let Some(ty) = q.ty else {
            return Err(self.err(format!("`{name}` without a type")));
        };
        let space = q.space.unwrap_or(AddrSpace::Generic);
        if !crate::isa::atomic_supported(inst.op, space, op, ty) {
            return Err(self.err(format!(
                "`{name}.{}.{}.{}` is not in the specification's table of supported atomics",
                format!("{space:?}").to_lowercase(),
                format!("{op:?}").to_lowercase(),
                ty.as_str()
            )));
        }
        let w = ty.bits();
        let kind = if inst.op == Opcode::Fatom {
            let Some(k) = FKind::of(ty) else {
                return Err(self.err(format!("`{name}` needs a floating-point type")));
            };
            Some(k)
        } else {
            None
        };
        let sync = self.atomic_sync(q.order, q.scope, Access::Rmw)?;
        let s0 = if matches!(op, A::Inc | A::Dec) {
            self.m.const_uint(w, 1)
        } else {
            self.read_atomic_value(&inst.ops[2], w)?
        };
        let s1 = if op == A::Cas {
            self.read_atomic_value(&inst.ops[3], w)?
        } else {
            s0
        };
        let at = self.atomic_address(&inst.ops[1], space)?;
        let native = match (kind, op) {
            (_, A::Cas) => Some(Native::Cas(s0, s1)),
            (Some(_), _) => None,
            (None, A::Add | A::Inc) => Some(Native::Add(s0)),
            (None, A::Sub | A::Dec) => Some(Native::Sub(s0)),
            (None, A::Smin) => Some(Native::Smin(s0)),
            (None, A::Smax) => Some(Native::Smax(s0)),
            (None, A::Umin) => Some(Native::Umin(s0)),
            (None, A::Umax) => Some(Native::Umax(s0)),
            (None, A::And) => Some(Native::And(s0)),
            (None, A::Or) => Some(Native::Or(s0)),
            (None, A::Xor) => Some(Native::Xor(s0)),
            (None, A::Xchg) => Some(Native::Xchg(s0)),
            (None, _) => None,
        };
        let apply = move |cx: &mut FnCx<'a>, old: Word| cx.atom_new(kind, op, w, old, s0, s1);
        let vt = self.atomic_value_type(w);
        let old = self.in_space(inst, 1, at, w, vt, |cx, ms, a| {
            if ms == MemSpace::Private {
                let old = cx.private_value_load(a, w)?;
                let new = apply(cx, old)?;
                cx.private_value_store(a, w, new)?;
                return Ok(old);
            }
            if locks::locked(w, ms) {
                return cx.locked_value_access(ms, a, w, sync, Some(&apply));
            }
            cx.atomic_rmw(ms, a, w, sync, native, &apply)
        })?;
        self.write_atomic_value(&inst.ops[0], w, old)
    }

    /// The new value of an atomic from the old one (isa-8 semantics blocks); `src0` of
    /// `.inc`/`.dec` is 1. Float `.cas` compares bit patterns, as the reference does.
    fn atom_new(
        &mut self,
        kind: Option<FKind>,
        op: AtomOp,
        w: u32,
        old: Word,
        s0: Word,
        s1: Word,
    ) -> EResult<Word> {
        let bt = self.m.ty(Scalar::Bool);
        if w == 128 {
            // The four words of a `.128b` value; the table allows only `.cas` and `.xchg`.
            let vt = self.atomic_value_type(128);
            let bv = self.m.vector(bt, 4);
            return match op {
                A::Cas => {
                    let eq = self.m.b.i_equal(bv, None, old, s0);
                    let all = self.m.b.all(bt, None, eq);
                    Ok(self.m.b.select(vt, None, all, s1, old))
                }
                A::Xchg => Ok(s0),
                _ => Err(self.err(format!(
                    "atomic operation .{} on .128b",
                    format!("{op:?}").to_lowercase()
                ))),
            };
        }
        let t = self.m.uint(w);
        if let (Some(k), A::Add | A::Sub | A::Min | A::Max) = (kind, op) {
            let a = self.to_float(k, old)?;
            let b = self.to_float(k, s0)?;
            let r = match op {
                // A sum always recomputes the sign of an exact zero from the operands' bits:
                // the driver folds `x + 0.0 → x` wherever it can prove the operand +0, through
                // more than constants.rs sees (`xor r, r`, a statically resolved `isaddr`), and
                // the atomic's cost dwarfs the fix-up (spec-notes §44).
                A::Add | A::Sub => {
                    let op = if op == A::Add {
                        Opcode::Fadd
                    } else {
                        Opcode::Fsub
                    };
                    self.native_arith(k.compute_bits(), op, &[a, b], RoundingMode::Re, true)?
                }
                _ => {
                    let r = self.fmin_max(k, a, b, op == A::Max, false)?;
                    self.m.b.decorate(r, Decoration::NoContraction, []);
                    r
                }
            };
            return self.from_float(k, r);
        }
        let b = &mut self.m.b;
        match op {
            A::Cas => {
                let eq = b.i_equal(bt, None, old, s0);
                self.sel(w, eq, s1, old)
            }
            A::Add | A::Inc => Ok(b.i_add(t, None, old, s0)),
            A::Sub | A::Dec => Ok(b.i_sub(t, None, old, s0)),
            A::Incwrap => {
                let ge = b.u_greater_than_equal(bt, None, old, s0);
                let one = self.m.const_uint(w, 1);
                let zero = self.m.const_uint(w, 0);
                let inc = self.m.b.i_add(t, None, old, one);
                self.sel(w, ge, zero, inc)
            }
            A::Decwrap => {
                let zero = self.m.const_uint(w, 0);
                let one = self.m.const_uint(w, 1);
                let b = &mut self.m.b;
                let is0 = b.i_equal(bt, None, old, zero);
                let gt = b.u_greater_than(bt, None, old, s0);
                let wrap = b.logical_or(bt, None, is0, gt);
                let dec = b.i_sub(t, None, old, one);
                self.sel(w, wrap, s0, dec)
            }
            A::Smin | A::Smax | A::Umin | A::Umax => {
                let keep_old = match op {
                    A::Smin => b.s_less_than_equal(bt, None, old, s0),
                    A::Smax => b.s_greater_than_equal(bt, None, old, s0),
                    A::Umin => b.u_less_than_equal(bt, None, old, s0),
                    _ => b.u_greater_than_equal(bt, None, old, s0),
                };
                self.sel(w, keep_old, old, s0)
            }
            A::And => Ok(b.bitwise_and(t, None, old, s0)),
            A::Or => Ok(b.bitwise_or(t, None, old, s0)),
            A::Xor => Ok(b.bitwise_xor(t, None, old, s0)),
            A::Xchg => Ok(s0),
            A::Sum | A::Min | A::Max | A::Absmax => Err(self.err(format!(
                "atomic operation .{} on an integer type",
                format!("{op:?}").to_lowercase()
            ))),
        }
    }

    /// The atomic forms of `ld` and `st` (a memory order other than `.weak`).
    pub fn atomic_load_store(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let ty = q.ty.unwrap_or(DataType::B32);
        let w = ty.bits();
        let name = inst.op.as_str();
        if !matches!(w, 16 | 32 | 64 | 128) {
            return Err(self.err(format!(
                "atomic `{name}` on .{} (only .16b, .32b, .64b and .128b)",
                ty.as_str()
            )));
        }
        if q.vec.is_some() {
            return Err(self.err(format!("atomic `{name}` cannot be a vector access")));
        }
        let space = q.space.unwrap_or(AddrSpace::Generic);
        if !matches!(
            space,
            AddrSpace::Global | AddrSpace::Shared | AddrSpace::Generic
        ) {
            return Err(self.err(format!(
                "atomic `{name}` on .{} memory (only .global, .shared and .generic)",
                format!("{space:?}").to_lowercase()
            )));
        }
        // Vulkan forbids SequentiallyConsistent on OpAtomicLoad/OpAtomicStore: a `.seq_cst`
        // load or store is a sequentially consistent fence followed by an acquire load or a
        // release store (the leading-fence mapping of C++ seq_cst accesses).
        let seq_cst = q.order == Some(MemOrder::SeqCst);
        let order = if seq_cst {
            if inst.op == Opcode::Ld {
                Some(MemOrder::Acquire)
            } else {
                Some(MemOrder::Release)
            }
        } else {
            q.order
        };
        if seq_cst {
            let scope = self
                .m
                .const_u32(spv_scope(q.scope, self.subgroups.lanes) as u32);
            let sem = self
                .m
                .const_u32((MemorySemantics::SEQUENTIALLY_CONSISTENT | BOTH_MEMORIES).bits());
            self.m.b.memory_barrier(scope, sem);
        }
        if inst.op == Opcode::Ld {
            let sync = self.atomic_sync(order, q.scope, Access::Load)?;
            let at = self.atomic_address(&inst.ops[1], space)?;
            let vt = self.atomic_value_type(w);
            let v = self.in_space(inst, 1, at, w, vt, |cx, ms, a| {
                if ms == MemSpace::Private {
                    return cx.private_value_load(a, w);
                }
                if locks::locked(w, ms) {
                    return cx.locked_value_access(ms, a, w, sync, None);
                }
                cx.atomic_load_at(ms, a, w, sync)
            })?;
            return self.write_atomic_value(&inst.ops[0], w, v);
        }
        let sync = self.atomic_sync(order, q.scope, Access::Store)?;
        let at = self.atomic_address(&inst.ops[0], space)?;
        let value = self.read_atomic_value(&inst.ops[1], w)?;
        let vt = self.atomic_value_type(w);
        self.in_space(inst, 0, at, w, vt, |cx, ms, a| {
            if ms == MemSpace::Private {
                cx.private_value_store(a, w, value)?;
            } else if locks::locked(w, ms) {
                cx.locked_value_access(ms, a, w, sync, Some(&move |_, _| Ok(value)))?;
            } else {
                cx.atomic_store_at(ms, a, w, sync, value)?;
            }
            Ok(value)
        })?;
        Ok(())
    }

    /// `fence`: an `OpMemoryBarrier` with the fence's order (omitted: `.seq_cst`), its
    /// scope, and the storage classes of its space (`.global`: UniformMemory; `.shared`:
    /// WorkgroupMemory; `.generic`, omitted, and the sub-group fence: both).
    pub fn fence(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let order = q.order.unwrap_or(MemOrder::SeqCst);
        let bits = order_bits(order);
        if bits.is_empty() {
            return Err(self.err(format!(
                "`fence` with memory order .{}",
                Self::order_name(order)
            )));
        }
        let storage = match q.space {
            Some(AddrSpace::Global) => MemorySemantics::UNIFORM_MEMORY,
            Some(AddrSpace::Shared) => MemorySemantics::WORKGROUP_MEMORY,
            _ => BOTH_MEMORIES,
        };
        let scope = self
            .m
            .const_u32(spv_scope(q.scope, self.subgroups.lanes) as u32);
        let sem = self.m.const_u32((bits | storage).bits());
        Ok(self.m.b.memory_barrier(scope, sem))
    }
}
