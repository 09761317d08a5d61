//! Hardware sub-groups whose lanes have all returned, in a kernel where a work-item may
//! return before a barrier others of its work-group reach ([`crate::mid::retire`],
//! spec-notes §83).
//!
//! On virtual lanes a `return` retires lanes, and the structured control flow stays uniform
//! over the hardware sub-group: a branch arm runs, a loop repeats, when some lane of the
//! sub-group needs it. A sub-group whose lanes have all returned has no lane to ask, so it
//! would leave a loop that holds a barrier after one trip while the other sub-groups of its
//! work-group go round, and execute fewer barriers than they do (lavapipe then loses the
//! work-group's results). Instead such a sub-group leaves the structured program at once and
//! *serves* barriers: it executes `OpControlBarrier` in a loop, one per barrier the live
//! sub-groups execute, until the last live sub-group finishes. The protocol, over two words
//! of `Workgroup` memory of their own ([`SERVICE_BYTES`]; outside the shared arena, so that
//! no PISA address reaches them and the memory checker's bound on the arena stays the
//! variables': their first home, in the arena, hung checked launches whose stores landed on
//! them) and a `Private` barrier count:
//!
//! - at the kernel's start, invocation 0 sets `live` to the number of hardware sub-groups
//!   (`NumSubgroups`) and `end` to 0, then a barrier (not counted); every invocation counts
//!   the barriers it executes from then on, so the counts agree across the work-group at
//!   each barrier;
//! - a sub-group that is done (every lane returned, or the kernel's end) takes 1 from
//!   `live`; the one that takes the last stores `end` = its count + 1 and executes that
//!   final barrier; the others execute barriers, counting, until `end` equals their count;
//! - every other way out of such a kernel leaves the same way ([`FnCx::emit_return`]): the
//!   launch's cancel word read at its entry (a sub-group-wide vote, `cancel.rs`), and a
//!   sub-group that fails the size check of spec-notes §105 (the uncounted start comes
//!   before that check, and the barrier that clears the shared lock table after it is
//!   counted); a kernel records the memory checker's findings (which cancel the launch)
//!   before it leaves, so that the others stop;
//! - so every invocation leaves after the same, final, barrier, and none returns before a
//!   barrier another executes. `end` is written once per launch of the work-group, before
//!   the barrier that makes it visible, and read only after a barrier: a reader sees 0, or
//!   the number of the barrier it is about to execute, until it has executed it.
//!
//! Cost, only in such kernels: a barrier at the start, a counter increment per barrier, an
//! atomic and a vote per sub-group at its end, and the barriers a finished sub-group serves
//! while it waits (which the others execute anyway).

use super::super::builder::Builder;
use super::super::function::FnCx;
use super::super::module::{ModuleCx, Scalar};
use crate::back::spirv::error::EResult;
use rspirv::spirv::{BuiltIn, Capability, LoopControl, MemorySemantics, Scope, SelectionControl};
use rspirv::spirv::{StorageClass, Word};

/// Bytes of the service's words, which the entry points that take part declare besides the
/// shared arena (reflected as [`crate::reflect::KernelInfo::barrier_service_size`]).
pub(crate) const SERVICE_BYTES: u32 = 8;

/// Index of `live` among the service's words (hardware sub-groups not yet done).
const LIVE: u32 = 0;
/// Index of `end` among the service's words (the count of the barrier after which every
/// invocation returns; 0 until the last is done).
const END: u32 = 1;

/// The module's state for sub-groups that serve barriers (see the module documentation).
pub(crate) struct BarrierService {
    /// `Workgroup uint[2]`: the words.
    words: Word,
    /// `Private u32`: barriers this invocation executed since the kernel's start.
    count: Word,
    /// By function index: the kernels that take part.
    kernels: Vec<bool>,
}

/// Declares the service's words and barrier count when some kernel takes part (`kernels`,
/// by function index); those kernels' virtual-lane lowering then takes part, and every
/// barrier executed on virtual lanes is counted. Only the entry points that take part list
/// the words in their interfaces ([`ModuleCx::entry_interface`]).
pub(crate) fn declare(m: &mut ModuleCx, kernels: Vec<bool>) {
    if !kernels.contains(&true) {
        return;
    }
    let u32t = m.uint(32);
    let arr = m.array(u32t, SERVICE_BYTES / 4);
    let pw = m.ptr(StorageClass::Workgroup, arr);
    let words = m.b.variable(pw, None, StorageClass::Workgroup, None);
    m.b.name(words, "pisa_barrier_service");
    let pp = m.ptr(StorageClass::Private, u32t);
    let zero = m.const_u32(0);
    let count = m.b.variable(pp, None, StorageClass::Private, Some(zero));
    m.b.name(count, "pisa_barrier_count");
    m.interface.extend([words, count]);
    m.barrier_service = Some(BarrierService {
        words,
        count,
        kernels,
    });
}

impl ModuleCx {
    /// The interface of an entry point: every module-scope variable, less the barrier
    /// service's words unless `uses_service` (the validation layer counts a `Workgroup`
    /// variable of the interface against the device's limit, used or not).
    pub(crate) fn entry_interface(&self, uses_service: bool) -> Vec<Word> {
        let words = self.barrier_service.as_ref().map(|s| s.words);
        self.interface
            .iter()
            .copied()
            .filter(|&v| uses_service || Some(v) != words)
            .collect()
    }
}

impl FnCx<'_> {
    /// Whether this function is a kernel that takes part in the service (when lowered on
    /// virtual lanes: its native copy, a partial entry point's twin, does not).
    pub(in crate::back::spirv) fn serves_barriers(&self) -> bool {
        self.f.is_kernel() && self.service_words()
    }

    /// The service's start in a kernel that takes part (its first act): invocation 0
    /// sets the words, a barrier, the count from 0.
    pub(super) fn start_barrier_service(&mut self) -> EResult {
        let Some(count) = self.service_count().filter(|_| self.service_words()) else {
            return Ok(());
        };
        self.m.capability(Capability::GroupNonUniform);
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        let var = self.m.builtin(BuiltIn::LocalInvocationIndex, false);
        let index = self.m.b.load(u32t, None, var, None, []);
        let zero = self.m.const_u32(0);
        let first = self.m.b.i_equal(bt, None, index, zero);
        self.if_then(first, |cx| {
            let var = cx.m.builtin(BuiltIn::NumSubgroups, false);
            let subgroups = cx.m.b.load(u32t, None, var, None, []);
            let live = cx.service_word(LIVE)?;
            cx.m.b.store(live, subgroups, None, []);
            let end = cx.service_word(END)?;
            cx.m.b.store(end, zero, None, []);
            Ok(())
        })?;
        self.work_group_barrier();
        self.m.b.store(count, zero, None, []);
        Ok(())
    }

    /// After a barrier on virtual lanes: one more in the invocation's count, when the module
    /// has the service.
    pub(in crate::back::spirv) fn count_barrier(&mut self) {
        if self.vl.is_none() {
            return;
        }
        if let Some(count) = self.service_count() {
            let u32t = self.m.uint(32);
            let n = self.m.b.load(u32t, None, count, None, []);
            let one = self.m.const_u32(1);
            let next = self.m.b.i_add(u32t, None, n, one);
            self.m.b.store(count, next, None, []);
        }
    }

    /// After a `return` of the kernel's lanes `returned` (the variable of those that
    /// returned so far, which this updates with `cur`): when no lane of the hardware
    /// sub-group is left among the kernel's first lanes `first`, the kernel returns
    /// ([`FnCx::emit_return`]: the sub-group leaves the work-group).
    pub(super) fn retire_subgroup_if_done(&mut self, returned: Word, first: Word) -> EResult {
        let u32t = self.m.uint(32);
        let cur = self.load_cur()?;
        let before = self.m.b.load(u32t, None, returned, None, []);
        let gone = self.u32_op(Builder::bitwise_or, before, cur)?;
        self.m.b.store(returned, gone, None, []);
        let not_gone = self.m.b.not(u32t, None, gone);
        let left = self.and32(first, not_gone)?;
        let any = self.any_lane(left)?;
        let (done, merge) = (self.m.b.id(), self.m.b.id());
        self.m.b.selection_merge(merge, SelectionControl::NONE);
        self.m.b.branch_conditional(any, merge, done, []);
        self.begin(done)?;
        self.emit_return(None)?;
        self.begin(merge)
    }

    /// A hardware sub-group that is done, in a kernel that takes part: takes itself off
    /// `live`; the last one sets `end` and executes the final barrier, the others serve
    /// barriers until `end` (see the module documentation). Emits nothing elsewhere.
    pub(in crate::back::spirv) fn leave_work_group(&mut self) -> EResult {
        let Some(count) = self.service_count().filter(|_| self.service_words()) else {
            return Ok(());
        };
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        let one = self.m.const_u32(1);
        let wg = self.m.const_u32(Scope::Workgroup as u32);
        let relaxed = self.m.const_u32(MemorySemantics::empty().bits());
        // One invocation takes the sub-group off; the vote tells them all whether it was the
        // last.
        let scope = self.scope();
        let elected = self.m.b.group_non_uniform_elect(bt, None, scope);
        let was = self.local_var(u32t)?;
        let zero = self.m.const_u32(0);
        self.m.b.store(was, zero, None, []);
        self.if_then(elected, |cx| {
            let live = cx.service_word(LIVE)?;
            let old = cx.m.b.atomic_i_sub(u32t, None, live, wg, relaxed, one);
            cx.m.b.store(was, old, None, []);
            Ok(())
        })?;
        let old = self.m.b.load(u32t, None, was, None, []);
        let took_last = self.m.b.i_equal(bt, None, old, one);
        let mine = self.m.b.logical_and(bt, None, elected, took_last);
        self.m.capability(Capability::GroupNonUniformVote);
        let last = self.m.b.group_non_uniform_any(bt, None, scope, mine);
        let (final_barrier, serve, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
        self.m.b.selection_merge(merge, SelectionControl::NONE);
        self.m.b.branch_conditional(last, final_barrier, serve, []);
        // The last: every other sub-group serves; `end` is the barrier after this count.
        self.begin(final_barrier)?;
        let n = self.m.b.load(u32t, None, count, None, []);
        let next = self.m.b.i_add(u32t, None, n, one);
        let end = self.service_word(END)?;
        self.m.b.atomic_store(end, wg, relaxed, next);
        self.work_group_barrier();
        self.m.b.branch(merge);
        // The others: barriers, counted, until the last names the one just executed.
        self.begin(serve)?;
        let (header, body, cont, out) =
            (self.m.b.id(), self.m.b.id(), self.m.b.id(), self.m.b.id());
        self.m.b.branch(header);
        self.begin(header)?;
        self.m.b.loop_merge(out, cont, LoopControl::NONE, []);
        self.m.b.branch(body);
        self.begin(body)?;
        self.work_group_barrier();
        let n = self.m.b.load(u32t, None, count, None, []);
        let n = self.m.b.i_add(u32t, None, n, one);
        self.m.b.store(count, n, None, []);
        let end = self.service_word(END)?;
        let named = self.m.b.atomic_load(u32t, None, end, wg, relaxed);
        let now = self.m.b.i_equal(bt, None, named, n);
        self.m.b.branch_conditional(now, out, cont, []);
        self.begin(cont)?;
        self.m.b.branch(header);
        self.begin(out)?;
        self.m.b.branch(merge);
        self.begin(merge)
    }

    /// Whether this function is a kernel that takes part (and uses the service's words).
    fn service_words(&self) -> bool {
        self.m
            .barrier_service
            .as_ref()
            .is_some_and(|s| s.kernels.get(self.fid.0 as usize) == Some(&true))
    }

    /// The barrier count, when the module has the service.
    fn service_count(&self) -> Option<Word> {
        self.m.barrier_service.as_ref().map(|s| s.count)
    }

    /// A pointer to service word `i`.
    fn service_word(&mut self, i: u32) -> EResult<Word> {
        let words = self
            .m
            .barrier_service
            .as_ref()
            .map(|s| s.words)
            .ok_or_else(|| self.err("internal error: no barrier service"))?;
        let u32t = self.m.uint(32);
        let p = self.m.ptr(StorageClass::Workgroup, u32t);
        let index = self.m.const_u32(i);
        Ok(self.m.b.access_chain(p, None, words, [index]))
    }
}
