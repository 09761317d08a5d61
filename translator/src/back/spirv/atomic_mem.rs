//! Atomic accesses to one memory location: where it is, how it orders memory, and the
//! read-modify-write, load and store on it.
//!
//! - A 32- or 64-bit location in `.global` is a PhysicalStorageBuffer pointer of its width;
//!   a 32-bit location in `.shared` is a word of the Workgroup arena.
//! - A 16-bit location is the halfword of its containing 32-bit word (PISA alignment keeps
//!   it inside one); every access to it is an atomic on that word: a load extracts, a
//!   store and a read-modify-write run a compare-and-swap loop that replaces only the
//!   halfword, so neighbouring halfwords written concurrently are never lost.
//! - Operations without a native SPIR-V atomic (float arithmetic, `incwrap`/`decwrap`,
//!   every 16-bit operation) are compare-and-swap loops: read, compute the new value,
//!   `OpAtomicCompareExchange`, retry with the value seen until it succeeds. The loop is
//!   lock-free, so it never waits on another work-item.
//!
//! 64- and 128-bit locations that need a lock are [`super::atomic_lock`]'s.
//!
//! Must not: decide which instruction needs which operation ([`super::ops_atomic`]).

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::MemSpace;
use crate::reflect::Feature;
use rspirv::spirv::{Capability, MemorySemantics, Scope, Word};

/// How an atomic access synchronizes: its SPIR-V scope and the memory semantics of a
/// successful access (order bits plus the storage classes it orders).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemSync {
    /// Scope of the atomic (and of the ordering).
    pub scope: Scope,
    /// Semantics of the access.
    pub sem: MemorySemantics,
}

impl MemSync {
    /// The synchronization of an access to `space`: a shared location is only visible to
    /// the work-group, so wider scopes narrow to `Workgroup` there.
    fn for_space(self, space: MemSpace) -> MemSync {
        let scope = match (space, self.scope) {
            (MemSpace::Shared, Scope::Device | Scope::CrossDevice | Scope::QueueFamily) => {
                Scope::Workgroup
            }
            (_, s) => s,
        };
        MemSync { scope, ..self }
    }

    /// Semantics of a failed compare-and-swap: no release part (SPIR-V forbids Release and
    /// AcquireRelease there), the acquire part kept.
    fn unequal(self) -> MemorySemantics {
        let s = self.sem;
        if s.contains(MemorySemantics::SEQUENTIALLY_CONSISTENT)
            || s.contains(MemorySemantics::ACQUIRE_RELEASE)
            || s.contains(MemorySemantics::ACQUIRE)
        {
            let storage = s & (MemorySemantics::UNIFORM_MEMORY | MemorySemantics::WORKGROUP_MEMORY);
            let order = if s.contains(MemorySemantics::SEQUENTIALLY_CONSISTENT) {
                MemorySemantics::SEQUENTIALLY_CONSISTENT
            } else {
                MemorySemantics::ACQUIRE
            };
            order | storage
        } else {
            MemorySemantics::empty()
        }
    }
}

/// An operation with a native SPIR-V atomic on a 32- or 64-bit integer location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Native {
    /// `OpAtomicIAdd`.
    Add(Word),
    /// `OpAtomicISub`.
    Sub(Word),
    /// `OpAtomicSMin`.
    Smin(Word),
    /// `OpAtomicSMax`.
    Smax(Word),
    /// `OpAtomicUMin`.
    Umin(Word),
    /// `OpAtomicUMax`.
    Umax(Word),
    /// `OpAtomicAnd`.
    And(Word),
    /// `OpAtomicOr`.
    Or(Word),
    /// `OpAtomicXor`.
    Xor(Word),
    /// `OpAtomicExchange`.
    Xchg(Word),
    /// `OpAtomicCompareExchange` (comparator, value).
    Cas(Word, Word),
}

/// A located atomic access.
#[derive(Clone, Copy, Debug)]
struct Loc {
    /// Pointer to the word (32 or 64 bits) holding the value.
    ptr: Word,
    /// Width of that word.
    word_bits: u32,
    /// For a 16-bit value: its bit position in the 32-bit word.
    shift: Option<Word>,
    /// Synchronization, narrowed to the space.
    sync: MemSync,
}

/// The new value of a read-modify-write from the old one (both `w` bits).
pub type Apply<'f, 'a> = &'f dyn Fn(&mut FnCx<'a>, Word) -> EResult<Word>;

impl<'a> FnCx<'a> {
    fn scope_id(&mut self, s: Scope) -> Word {
        self.m.const_u32(s as u32)
    }

    fn sem_id(&mut self, s: MemorySemantics) -> Word {
        self.m.const_u32(s.bits())
    }

    fn int64_atomics(&mut self, space: MemSpace) {
        self.m.capability(Capability::Int64Atomics);
        self.m.feature(if space == MemSpace::Shared {
            Feature::SharedInt64Atomics
        } else {
            Feature::BufferInt64Atomics
        });
    }

    /// Locates a `w`-bit atomic access at `addr` (u64 for global, u32 for shared).
    fn atomic_loc(&mut self, space: MemSpace, addr: Word, w: u32, sync: MemSync) -> EResult<Loc> {
        let sync = sync.for_space(space);
        match space {
            MemSpace::Global | MemSpace::Const => {
                if w == 16 {
                    let u64t = self.m.uint(64);
                    let k = self.m.const_uint(64, !3);
                    let wa = self.m.b.bitwise_and(u64t, None, addr, k);
                    let ptr = self.global_ptr(wa, 32)?;
                    let low = self.resize(addr, 64, 32)?;
                    let shift = Some(self.half_shift(low)?);
                    return Ok(Loc {
                        ptr,
                        word_bits: 32,
                        shift,
                        sync,
                    });
                }
                if w == 64 {
                    self.int64_atomics(space);
                }
                let ptr = self.global_ptr(addr, w)?;
                Ok(Loc {
                    ptr,
                    word_bits: w,
                    shift: None,
                    sync,
                })
            }
            MemSpace::Shared => {
                if w == 64 {
                    return Err(self.err(
                        "internal error: a 64-bit atomic on .shared memory must take a lock (atomic_lock.rs)",
                    ));
                }
                let u32t = self.m.uint(32);
                let two = self.m.const_u32(2);
                let word = self.m.b.shift_right_logical(u32t, None, addr, two);
                let ptr = self.word_ptr(super::memory::WordSpace::Shared, word)?;
                let shift = if w == 16 {
                    Some(self.half_shift(addr)?)
                } else {
                    None
                };
                Ok(Loc {
                    ptr,
                    word_bits: 32,
                    shift,
                    sync,
                })
            }
            MemSpace::Private => Err(self.err("atomic access to .private memory")),
        }
    }

    /// `(addr & 2) * 8`: the bit position of an aligned halfword in its word.
    fn half_shift(&mut self, addr32: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let two = self.m.const_u32(2);
        let three = self.m.const_u32(3);
        let b = self.m.b.bitwise_and(u32t, None, addr32, two);
        Ok(self.m.b.shift_left_logical(u32t, None, b, three))
    }

    /// The 16-bit value at `shift` in `word`.
    fn extract_half(&mut self, word: Word, shift: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let x = self.m.b.shift_right_logical(u32t, None, word, shift);
        self.resize(x, 32, 16)
    }

    /// `word` with the halfword at `shift` replaced by `half`.
    fn insert_half(&mut self, word: Word, shift: Word, half: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let ones = self.m.const_u32(0xFFFF);
        let mask = self.m.b.shift_left_logical(u32t, None, ones, shift);
        let inv = self.m.b.not(u32t, None, mask);
        let kept = self.m.b.bitwise_and(u32t, None, word, inv);
        let h = self.resize(half, 16, 32)?;
        let h = self.m.b.shift_left_logical(u32t, None, h, shift);
        Ok(self.m.b.bitwise_or(u32t, None, kept, h))
    }

    /// An atomic read-modify-write of the `w`-bit value at `addr` in `space` (global or
    /// shared); returns the old value. `native` is used when the location is a whole word.
    pub fn atomic_rmw(
        &mut self,
        space: MemSpace,
        addr: Word,
        w: u32,
        sync: MemSync,
        native: Option<Native>,
        apply: Apply<'_, 'a>,
    ) -> EResult<Word> {
        let loc = self.atomic_loc(space, addr, w, sync)?;
        match (native, loc.shift) {
            (Some(n), None) => self.native_rmw(loc, n),
            _ => self.cas_loop(loc, apply),
        }
    }

    fn native_rmw(&mut self, loc: Loc, n: Native) -> EResult<Word> {
        let t = self.m.uint(loc.word_bits);
        let scope = self.scope_id(loc.sync.scope);
        let sem = self.sem_id(loc.sync.sem);
        let (p, b) = (loc.ptr, &mut self.m.b);
        Ok(match n {
            Native::Add(v) => b.atomic_i_add(t, None, p, scope, sem, v),
            Native::Sub(v) => b.atomic_i_sub(t, None, p, scope, sem, v),
            Native::Smin(v) => b.atomic_s_min(t, None, p, scope, sem, v),
            Native::Smax(v) => b.atomic_s_max(t, None, p, scope, sem, v),
            Native::Umin(v) => b.atomic_u_min(t, None, p, scope, sem, v),
            Native::Umax(v) => b.atomic_u_max(t, None, p, scope, sem, v),
            Native::And(v) => b.atomic_and(t, None, p, scope, sem, v),
            Native::Or(v) => b.atomic_or(t, None, p, scope, sem, v),
            Native::Xor(v) => b.atomic_xor(t, None, p, scope, sem, v),
            Native::Xchg(v) => b.atomic_exchange(t, None, p, scope, sem, v),
            Native::Cas(cmp, v) => {
                let uneq = loc.sync.unequal();
                let uneq = self.sem_id(uneq);
                self.m
                    .b
                    .atomic_compare_exchange(t, None, p, scope, sem, uneq, v, cmp)
            }
        })
    }

    /// `do { old = cur; new = apply(old); cur = cas(ptr, old, new) } while (cur != old)`;
    /// returns the value the successful exchange replaced.
    fn cas_loop(&mut self, loc: Loc, apply: Apply<'_, 'a>) -> EResult<Word> {
        let t = self.m.uint(loc.word_bits);
        let bt = self.m.ty(Scalar::Bool);
        let cur = self.local_var(t)?;
        let scope = self.scope_id(loc.sync.scope);
        let relaxed = self.sem_id(MemorySemantics::empty());
        let first = self.m.b.atomic_load(t, None, loc.ptr, scope, relaxed);
        self.m.b.store(cur, first, None, []);
        self.do_until(|cx| {
            let old = cx.m.b.load(t, None, cur, None, []);
            let new = match loc.shift {
                Some(sh) => {
                    let h = cx.extract_half(old, sh)?;
                    let nh = apply(cx, h)?;
                    cx.insert_half(old, sh, nh)?
                }
                None => apply(cx, old)?,
            };
            let eq = cx.sem_id(loc.sync.sem);
            let uneq = loc.sync.unequal();
            let uneq = cx.sem_id(uneq);
            let got =
                cx.m.b
                    .atomic_compare_exchange(t, None, loc.ptr, scope, eq, uneq, new, old);
            cx.m.b.store(cur, got, None, []);
            Ok(cx.m.b.i_equal(bt, None, got, old))
        })?;
        let fin = self.m.b.load(t, None, cur, None, []);
        match loc.shift {
            Some(sh) => self.extract_half(fin, sh),
            None => Ok(fin),
        }
    }

    /// An atomic load of `w` bits at `addr` in `space` (global or shared).
    pub fn atomic_load_at(
        &mut self,
        space: MemSpace,
        addr: Word,
        w: u32,
        sync: MemSync,
    ) -> EResult<Word> {
        let loc = self.atomic_loc(space, addr, w, sync)?;
        let t = self.m.uint(loc.word_bits);
        let scope = self.scope_id(loc.sync.scope);
        let sem = self.sem_id(loc.sync.sem);
        let x = self.m.b.atomic_load(t, None, loc.ptr, scope, sem);
        match loc.shift {
            Some(sh) => self.extract_half(x, sh),
            None => Ok(x),
        }
    }

    /// An atomic store of `w` bits at `addr` in `space` (global or shared); a 16-bit store
    /// exchanges its halfword with a compare-and-swap loop.
    pub fn atomic_store_at(
        &mut self,
        space: MemSpace,
        addr: Word,
        w: u32,
        sync: MemSync,
        value: Word,
    ) -> EResult {
        let loc = self.atomic_loc(space, addr, w, sync)?;
        if loc.shift.is_some() {
            self.cas_loop(loc, &move |_, _| Ok(value))?;
            return Ok(());
        }
        let scope = self.scope_id(loc.sync.scope);
        let sem = self.sem_id(loc.sync.sem);
        Ok(self.m.b.atomic_store(loc.ptr, scope, sem, value))
    }
}
