//! Atomics that Vulkan has no instruction for, emulated with locks: every `.128b` atomic
//! (`iatom .cas/.xchg`, atomic `ld`/`st`) and 64-bit atomics on `.shared` memory, whose
//! arena is an array of 32-bit words (spec-notes §52).
//!
//! The location's lock is a 32-bit word of a lock table ([`crate::layout::locks`]): in the
//! globals arena for global locations (zero from the arena image), in the shared arena for
//! shared ones (zeroed by every kernel's prologue, before a work-group barrier). An access
//! runs
//!
//! ```text
//! loop {
//!     got = cas(lock, 0, 1) == 0        // acquire
//!     if got {
//!         old = the location's words    // relaxed atomic loads
//!         store update(old), if any     // relaxed atomic stores
//!         lock = 0                      // release
//!     }
//! } while !got
//! ```
//!
//! The work is done in the iteration that took the lock, so a work-item never waits for a
//! lane of its own sub-group that cannot run: whoever holds a lock is making progress.
//! Every word of the location is itself accessed atomically, so no cache can hold a stale
//! copy, and the lock's acquire and release order both memories, so the emulated access is
//! at least as ordered as any PISA order asks (`.seq_cst` takes the lock with a
//! sequentially consistent exchange).
//!
//! Must not: decide which accesses need a lock ([`crate::layout::locks::locked`] does).

use super::atomic_mem::{Apply, MemSync};
use super::function::FnCx;
use super::memory::WordSpace;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::MemSpace;
use crate::layout::locks;
use rspirv::spirv::{BuiltIn, LoopControl, MemorySemantics, Scope, Word};

/// Every storage class a lock orders.
const BOTH_MEMORIES: MemorySemantics =
    MemorySemantics::UNIFORM_MEMORY.union(MemorySemantics::WORKGROUP_MEMORY);

impl<'a> FnCx<'a> {
    /// The `uvecN` type holding a `bits`-wide location as its 32-bit words, low word first.
    pub fn lock_words_type(&mut self, bits: u32) -> Word {
        let u32t = self.m.uint(32);
        self.m.vector(u32t, bits / 32)
    }

    /// A pointer to the lock of the location at `addr` (u64 for global, u32 for shared),
    /// and the scope of the accesses to it.
    fn lock_ptr(&mut self, space: MemSpace, addr: Word) -> EResult<(Word, Scope)> {
        match space {
            MemSpace::Shared => {
                let Some(table) = self.layout.shared_locks else {
                    return Err(self.err("internal error: no shared lock table for this atomic"));
                };
                let index = self.shr_const(addr, 32, locks::HASH_SHIFT)?;
                let index = self.and_u32(index, locks::SHARED_LOCKS - 1)?;
                let base = self.m.const_u32(table / 4);
                let u32t = self.m.uint(32);
                let word = self.m.b.i_add(u32t, None, base, index);
                Ok((self.word_ptr(WordSpace::Shared, word)?, Scope::Workgroup))
            }
            MemSpace::Global | MemSpace::Const => {
                let Some(table) = self.layout.global_locks else {
                    return Err(self.err("internal error: no global lock table for this atomic"));
                };
                let index = self.shr_const(addr, 64, locks::HASH_SHIFT)?;
                let index = self.resize(index, 64, 32)?;
                let index = self.and_u32(index, locks::GLOBAL_LOCKS - 1)?;
                let u32t = self.m.uint(32);
                let two = self.m.const_u32(2);
                let bytes = self.m.b.shift_left_logical(u32t, None, index, two);
                let bytes = self.resize(bytes, 32, 64)?;
                let arena = self.globals_base()?;
                let u64t = self.m.uint(64);
                let k = self.m.const_uint(64, table);
                let start = self.m.b.i_add(u64t, None, arena, k);
                let at = self.m.b.i_add(u64t, None, start, bytes);
                Ok((self.global_ptr(at, 32)?, Scope::Device))
            }
            MemSpace::Private => Err(self.err("atomic access to .private memory")),
        }
    }

    fn and_u32(&mut self, x: Word, k: u32) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let k = self.m.const_u32(k);
        Ok(self.m.b.bitwise_and(u32t, None, x, k))
    }

    /// Pointers to the 32-bit words of the `bits`-wide location at `addr`, low word first.
    fn location_words(&mut self, space: MemSpace, addr: Word, bits: u32) -> EResult<Vec<Word>> {
        let mut out = Vec::with_capacity(bits as usize / 32);
        if space == MemSpace::Shared {
            let first = self.shr_const(addr, 32, 2)?;
            for i in 0..bits / 32 {
                let k = self.m.const_u32(i);
                let u32t = self.m.uint(32);
                let word = self.m.b.i_add(u32t, None, first, k);
                out.push(self.word_ptr(WordSpace::Shared, word)?);
            }
        } else {
            let u64t = self.m.uint(64);
            for i in 0..bits / 32 {
                let k = self.m.const_uint(64, 4 * i as u64);
                let at = self.m.b.i_add(u64t, None, addr, k);
                out.push(self.global_ptr(at, 32)?);
            }
        }
        Ok(out)
    }

    /// A `bits`-wide atomic access at `addr` in `space` under the location's lock: reads
    /// the location's words and, with `update`, replaces them with `update(old)`. Returns
    /// the old words as a [`Self::lock_words_type`] value.
    pub fn locked_access(
        &mut self,
        space: MemSpace,
        addr: Word,
        bits: u32,
        sync: MemSync,
        update: Option<Apply<'_, 'a>>,
    ) -> EResult<Word> {
        let vt = self.lock_words_type(bits);
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let (lock, scope) = self.lock_ptr(space, addr)?;
        let words = self.location_words(space, addr, bits)?;
        let result = self.local_var(vt)?;
        let scope = self.m.const_u32(scope as u32);
        let order = if sync.sem.contains(MemorySemantics::SEQUENTIALLY_CONSISTENT) {
            MemorySemantics::SEQUENTIALLY_CONSISTENT
        } else {
            MemorySemantics::ACQUIRE
        };
        let acquire = self.m.const_u32((order | BOTH_MEMORIES).bits());
        let release = self
            .m
            .const_u32((MemorySemantics::RELEASE | BOTH_MEMORIES).bits());
        let relaxed = self.m.const_u32(0);
        let (zero, one) = (self.m.const_u32(0), self.m.const_u32(1));

        self.do_until(|cx| {
            let prev =
                cx.m.b
                    .atomic_compare_exchange(u32t, None, lock, scope, acquire, relaxed, one, zero);
            let got = cx.m.b.i_equal(bt, None, prev, zero);
            cx.if_then(got, |cx| {
                let mut parts = Vec::with_capacity(words.len());
                for &p in &words {
                    let x = cx.m.b.atomic_load(u32t, None, p, scope, relaxed);
                    parts.push(x);
                }
                let old = cx.m.b.composite_construct(vt, None, parts);
                cx.m.b.store(result, old, None, []);
                if let Some(update) = update {
                    let new = update(cx, old)?;
                    for (i, &p) in words.iter().enumerate() {
                        let x = cx.m.b.composite_extract(u32t, None, new, [i as u32]);
                        let x = x;
                        cx.m.b.atomic_store(p, scope, relaxed, x);
                    }
                }
                Ok(cx.m.b.atomic_store(lock, scope, release, zero))
            })?;
            Ok(got)
        })?;
        Ok(self.m.b.load(vt, None, result, None, []))
    }

    /// Kernel entry, when the kernel reserves the shared lock table (it can reach an atomic
    /// that takes a shared lock): the work-group's work-items zero its words (work-item `i`
    /// takes words `i`, `i + size`, ...) and wait for each other at a work-group barrier,
    /// before any of them may leave early.
    pub fn init_shared_locks(&mut self) -> EResult {
        let Some(table) = self.layout.shared_locks else {
            return Ok(());
        };
        if !self.layout.shared_lock_kernels[self.fid.0 as usize] {
            return Ok(());
        }
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let index = self.m.builtin(BuiltIn::LocalInvocationIndex, false);
        let first = self.m.b.load(u32t, None, index, None, []);
        let mut size = self.m.const_u32(1);
        let ws = self.m.workgroup_size;
        for c in 0..3 {
            let s = self.m.b.composite_extract(u32t, None, ws, [c]);
            size = self.m.b.i_mul(u32t, None, size, s);
        }
        let i_var = self.local_var(u32t)?;
        self.m.b.store(i_var, first, None, []);
        let [header, body, cont, merge] = [(); 4].map(|_| self.m.b.id());
        self.m.b.branch(header);
        self.begin(header)?;
        let i = self.m.b.load(u32t, None, i_var, None, []);
        let n = self.m.const_u32(locks::SHARED_LOCKS);
        let more = self.m.b.u_less_than(bt, None, i, n);
        self.m.b.loop_merge(merge, cont, LoopControl::NONE, []);
        self.m.b.branch_conditional(more, body, merge, []);
        self.begin(body)?;
        let base = self.m.const_u32(table / 4);
        let word = self.m.b.i_add(u32t, None, base, i);
        let p = self.word_ptr(WordSpace::Shared, word)?;
        let zero = self.m.const_u32(0);
        self.m.b.store(p, zero, None, []);
        self.m.b.branch(cont);
        self.begin(cont)?;
        let next = self.m.b.i_add(u32t, None, i, size);
        self.m.b.store(i_var, next, None, []);
        self.m.b.branch(header);
        self.begin(merge)?;
        let wg = self.m.const_u32(Scope::Workgroup as u32);
        let sem = self.m.const_u32(
            (MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY).bits(),
        );
        self.m.b.control_barrier(wg, wg, sem);
        // Counted where finished sub-groups serve barriers: a sub-group that failed the
        // size check before it serves this one (`virtual_lanes/retire.rs`).
        self.count_barrier();
        Ok(())
    }
}
