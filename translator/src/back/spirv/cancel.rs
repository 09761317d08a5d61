//! Cancellable kernels ([`Options::cancellable`](crate::Options::cancellable), spec-notes §91):
//! in every loop, a work-item reads the submission's *cancel word* (a
//! `u32` in host-visible memory whose address the launch block carries,
//! [`LaunchLayout::cancel`](crate::layout::launch::LaunchLayout::cancel)) with a relaxed
//! device-scope atomic load, and returns when it is not 0. The host sets the word when a
//! launch times out or the user cancels it; the memory checker sets it at a work-item's
//! first violation ([`FnCx::cancel_all`]), so every other work-item stops too. In a checked
//! translation a work-item with a violation of its own also stops at its next check,
//! without waiting for the word.
//!
//! Every N iterations (spec-notes §107,
//! [`Options::cancel_interval`](crate::Options::cancel_interval), default 8): the native
//! lowering strip-mines each loop ([`FnCx::cancel_strip`]). An outer loop reads the word and
//! then runs at most N iterations of the loop proper, counted in a Function variable that
//! the loop's continue target increments. A loop that ends before N iterations reads the
//! word once; work-groups that start after a cancel stop at their first loop. On lavapipe
//! a load in a loop is a masked gather, the dearest part of the check, while the counter
//! costs a few vector instructions (docs/performance.md). With N = 1 the word is read at
//! the start of each iteration. On virtual lanes it is read at every back edge.
//!
//! Loops that end by themselves within a few iterations (an induction register counted to
//! an immediate or halved to zero, [`crate::mid::short_loops`], spec-notes §109) get no
//! check at all: the loop around them, or the return, is the next one.
//!
//! At a kernel's entry (spec-notes §100), outside a checked translation, a native kernel
//! reads the word once ([`FnCx::cancel_at_entry`]), so that the work-groups of a huge grid
//! that start after a cancel return at once, loops or not.
//!
//! Otherwise only loops get a check: calls cannot recurse in SPIR-V (call cycles are loops
//! of the recursion pass's state machines), so a work-item whose every loop stops at its
//! next iteration ends in bounded time, and a check after each call would only cost.
//!
//! The lowering calls two hooks: [`FnCx::cancel_point`] at the start of each loop body, or
//! of each strip of a strip-mined loop (native lowering, `function/structured.rs`), and
//! [`FnCx::cancel_lanes`] at the back edge of a loop on virtual lanes
//! (`virtual_lanes/control.rs`), which drops every lane from the set that runs the loop
//! again.
//!
//! Must not: decide where loops are (the structurizer and the lowerings do), or who sets
//! the word (the runtime and the host API do).

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use rspirv::spirv::{self, MemorySemantics, Scope, Word};

/// What the host writes into the cancel word to stop a launch.
pub const CANCELLED_BY_HOST: u32 = 1;
/// What the memory checker writes into it at a work-item's first violation.
pub const CANCELLED_BY_CHECKER: u32 = 2;

impl FnCx<'_> {
    /// Whether the module's loops check the cancel word (its launch block has the slot).
    pub fn is_cancellable(&self) -> bool {
        self.layout.launch.cancel.is_some()
    }

    /// A pointer (PhysicalStorageBuffer `u32`) to the cancel word, from the launch block.
    fn cancel_word(&mut self) -> EResult<Option<Word>> {
        let Some(slot) = self.layout.launch.cancel else {
            return Ok(None);
        };
        let addr = self.launch_u64(slot)?;
        self.global_ptr(addr, 32).map(Some)
    }

    /// Whether the loop headed by `h` ends by itself within a few iterations
    /// ([`crate::mid::short_loops`], spec-notes §109): it gets no cancel check, the loop
    /// around it (or the return) is the next one.
    pub fn is_short_loop(&self, h: crate::mid::cfg::BlockId) -> bool {
        self.short_loops.get(h).copied().unwrap_or(false)
    }

    /// The strip length N of the loops of a cancellable native lowering that reads the
    /// cancel word every N > 1 iterations
    /// ([`Options::cancel_interval`](crate::Options::cancel_interval), spec-notes §107):
    /// each such loop is strip-mined (`FnCx::open_strip`). `None`: not cancellable, or a
    /// check every iteration.
    pub fn cancel_strip(&self) -> Option<u32> {
        let n = self.m.cancel_interval;
        (self.is_cancellable() && n > 1).then_some(n)
    }

    /// `bool`: whether this work-item must stop, read now: the cancel word is set, or
    /// (checked) one of the work-items the invocation carries has a violation. `None` when
    /// the module is not cancellable (its launch block has no cancel word).
    fn cancel_requested(&mut self) -> EResult<Option<Word>> {
        let Some(word) = self.cancel_word()? else {
            return Ok(None);
        };
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        let scope = self.m.const_u32(Scope::Device as u32);
        let relaxed = self.m.const_u32(MemorySemantics::empty().bits());
        let v = self.m.b.atomic_load(u32t, None, word, scope, relaxed);
        let zero = self.m.const_u32(0);
        let mut stop = self.m.b.i_not_equal(bt, None, v, zero);
        let counts: Vec<Word> = self
            .m
            .checks
            .as_ref()
            .map(|c| c.pending.iter().map(|p| p.count).collect())
            .unwrap_or_default();
        for count in counts {
            let n = self.m.b.load(u32t, None, count, None, []);
            let bad = self.m.b.i_not_equal(bt, None, n, zero);
            stop = self.m.b.logical_or(bt, None, stop, bad);
        }
        Ok(Some(stop))
    }

    /// At the start of a loop body (native lowering): when the launch is cancelled, the
    /// work-item returns (a kernel records its violations first; a function returns a
    /// zero value, and its caller stops at its own next loop iteration). Nothing in a
    /// module that is not cancellable.
    pub fn cancel_point(&mut self) -> EResult {
        let Some(stop) = self.cancel_requested()? else {
            return Ok(());
        };
        self.return_if(stop)
    }

    /// At the entry of a kernel of a cancellable (not checked) translation: when the launch
    /// is already cancelled, the work-item (on virtual lanes, the hardware sub-group, by a
    /// vote) returns at once, so that the work-groups
    /// of a huge grid that start after the cancel cost next to nothing, loops or not
    /// (spec-notes §100). Nothing in a checked translation (its word stops loops only).
    pub fn cancel_at_entry(&mut self) -> EResult {
        if self.m.checks.is_some() {
            return Ok(());
        }
        let Some(word) = self.cancel_word()? else {
            return Ok(());
        };
        // A plain load: at the entry no loop can hoist it, and a driver that runs the lanes
        // of an invocation group together loads once for all of them (an atomic load is
        // made lane by lane on lavapipe).
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        let four = [rspirv::dr::Operand::LiteralBit32(4)];
        let v = self
            .m
            .b
            .load(u32t, None, word, Some(spirv::MemoryAccess::ALIGNED), four);
        let zero = self.m.const_u32(0);
        let mut stop = self.m.b.i_not_equal(bt, None, v, zero);
        if self.vl.is_some() {
            // On virtual lanes the hardware sub-group stays together (and, where finished
            // sub-groups serve barriers, leaves its work-group as one: `emit_return`).
            self.m.capability(spirv::Capability::GroupNonUniformVote);
            let scope = self.scope();
            stop = self.m.b.group_non_uniform_any(bt, None, scope, stop);
        }
        self.return_if(stop)
    }

    /// `if stop { return }` (a kernel records its violations first; a function returns a
    /// zero value); the builder is left after it.
    fn return_if(&mut self, stop: Word) -> EResult {
        let (out, go) = (self.m.b.id(), self.m.b.id());
        self.m.b.selection_merge(go, spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(stop, out, go, []);
        self.begin(out)?;
        self.emit_return(None)?;
        self.begin(go)
    }

    /// At the back edge of a loop on virtual lanes: the mask `again` of the lanes that run
    /// the loop once more, empty when the launch is cancelled (those lanes then end with the
    /// loop; the lanes waiting at its exit go on to their next loop's check or the return).
    pub fn cancel_lanes(&mut self, again: Word) -> EResult<Word> {
        let Some(stop) = self.cancel_requested()? else {
            return Ok(again);
        };
        let u32t = self.m.uint(32);
        let zero = self.m.const_u32(0);
        Ok(self.m.b.select(u32t, None, stop, zero, again))
    }

    /// In a checked translation, at the return of a work-item with a violation: sets the
    /// cancel word ([`CANCELLED_BY_CHECKER`]) so that every other work-item of the launch
    /// stops at its next loop iteration. Nothing when the module is not cancellable.
    pub fn cancel_all(&mut self) -> EResult {
        let Some(word) = self.cancel_word()? else {
            return Ok(());
        };
        let scope = self.m.const_u32(Scope::Device as u32);
        let relaxed = self.m.const_u32(MemorySemantics::empty().bits());
        let v = self.m.const_u32(CANCELLED_BY_CHECKER);
        Ok(self.m.b.atomic_store(word, scope, relaxed, v))
    }
}
