//! The checked translation ([`Options::checked`](super::Options::checked)): before every
//! load, store, atomic and vector access, the kernel checks the whole access
//! `[address, address + size)` against what it may touch, performs it only when it passes
//! (a load that fails yields 0) and otherwise records the violation in the dispatch's check
//! block ([`crate::memcheck::block`]).
//!
//! What an access may touch, by the space it resolves to (a generic address is resolved on
//! its tag first, as the access itself does):
//! - `.global` and `.const`: one allocation of the allocation table the host uploads with
//!   each dispatch (the context's live buffers and each variable of the globals arena,
//!   sorted by address): first the few the launch's arguments point into (the *hot*
//!   entries, the same for every work-item), and only for a work-item that misses them
//!   all a binary search of the table; no store or atomic into a `.const` variable;
//! - `.shared`: the kernel's shared arena (specialization constant 3); `.private`: the
//!   private arena;
//! - an address written `[@var]`, `[@var + reg]` or `[@var + imm]`: that variable alone, in
//!   every space (the translator knows it, no table is read);
//! - and in every space the alignment prog-5 §5.1 requires.
//!
//! The memory lowering calls this module through two hooks: [`FnCx::checked_access`] around
//! an access that produces no value (`ld`/`st`, which write their registers themselves) and
//! [`FnCx::checked_value`] around one that returns a value (atomics). Without
//! `Options::checked` both run the access unchanged. The kernel prologue copies the check
//! block's address from the launch block into a Private variable ([`FnCx::init_checks`]), so
//! that functions called from kernels with different launch layouts find it.
//!
//! Must not: lower the accesses themselves (that is `memory.rs`, `ops_data.rs`,
//! `ops_atomic.rs`), or decide the host's table (that is the host API's `memcheck.rs`).

use super::function::FnCx;
use super::memory::Space;
use super::module::{ModuleCx, Scalar};
use crate::back::spirv::error::EResult;
use crate::ir::{AddrBase, Address, FuncId, Inst, MemSpace, Module, Operand, SpecialReg, VarRef};
use crate::layout::{generic, ModuleLayout};
use crate::memcheck::{block, code, AccessKind, Site, VariableInfo, VariableName};
use crate::mid::calls::CallGraph;
use rspirv::spirv::{MemorySemantics, Scope, StorageClass, Word};

mod loops;
mod runs;
mod table;

pub use runs::RunVars;

/// Module-wide state of a checked translation.
pub struct Checks {
    /// `Private u64`: the check block's address, set by each kernel's prologue.
    pub block: Word,
    /// The work-item's own first violation, recorded in the check block when its kernel
    /// returns ([`FnCx::flush_checks`]); one per lane of an invocation (several on virtual
    /// lanes, spec-notes §88).
    pub pending: Vec<Pending>,
    /// The checked instructions, by the index the record carries.
    pub sites: Vec<Site>,
    /// The check block's [hot entries](block::HOT), copied by each kernel's prologue.
    /// Loaded there, in uniform control flow, they are one load per sub-group; at an
    /// access, often under a divergent branch, lavapipe would load them lane by lane.
    pub hot: Vec<HotEntry>,
}

/// `Private` copies of one hot entry of the check block.
#[derive(Clone, Copy)]
pub struct HotEntry {
    /// `u64`: its start.
    pub start: Word,
    /// `u64`: its end, without the [`READ_ONLY`](block::READ_ONLY) flag.
    pub end: Word,
    /// `bool`: whether the flag was set.
    pub read_only: Word,
}

/// `Private` variables holding a work-item's violations until its kernel returns: the
/// count (zeroed by the kernel's prologue) and the first one's site, code, size and
/// address. A check only updates them with selects; the atomic count and the stores into
/// the check block happen once per work-item, at its return, and only when it has a
/// violation. (Recording at the access itself cost most of the checker's time on lavapipe,
/// which runs both sides of a divergent branch under a mask: every checked access paid for
/// a masked atomic and a dozen masked stores, spec-notes §71.)
#[derive(Clone, Copy)]
pub struct Pending {
    /// `u32`: violations of this work-item.
    pub count: Word,
    /// `u32`: the first one's site index.
    pub site: Word,
    /// `u32`: its code ([`code`]).
    pub code: Word,
    /// `u32`: its size in bytes.
    pub size: Word,
    /// `u64`: its address (a generic one with its tag).
    pub address: Word,
    /// `u32`: in a block holding a run ([`crate::mid::base_runs`]), where the pending
    /// violation is in that block's execution (its instruction's index in the body plus 1),
    /// 0 for one from before the block started. A run's head records the first violation of
    /// its accesses ahead of time; a violation between the head and that access must then
    /// take its place.
    pub position: Word,
}

/// Declares the state of a checked translation of `module` in `m`: as many hot entries as
/// the kernel with the most 8-byte parameters can fill (at most
/// [`HOT_ENTRIES`](block::HOT_ENTRIES); the host fills them from those parameters), and
/// the pending violation of each of the `lanes` work-items an invocation carries.
pub fn declare(m: &mut ModuleCx, module: &Module, lanes: u32) {
    let hot_entries = module
        .functions
        .iter()
        .filter(|f| f.is_kernel())
        .map(|f| f.params.iter().filter(|p| p.size == 8).count() as u64)
        .max()
        .unwrap_or(0)
        .min(block::HOT_ENTRIES);
    let (u32t, u64t) = (m.uint(32), m.uint(64));
    let private = |m: &mut ModuleCx, t: Word, name: &str| {
        let p = m.ptr(StorageClass::Private, t);
        let v = m.b.variable(p, None, StorageClass::Private, None);
        m.b.name(v, name);
        m.interface.push(v);
        v
    };
    let block = private(m, u64t, "pisa_check_block");
    let pending = (0..lanes.max(1))
        .map(|l| {
            let lane = if l == 0 {
                String::new()
            } else {
                format!("_lane{l}")
            };
            Pending {
                count: private(m, u32t, &format!("pisa_check_count{lane}")),
                site: private(m, u32t, &format!("pisa_check_site{lane}")),
                code: private(m, u32t, &format!("pisa_check_code{lane}")),
                size: private(m, u32t, &format!("pisa_check_size{lane}")),
                address: private(m, u64t, &format!("pisa_check_address{lane}")),
                position: private(m, u32t, &format!("pisa_check_position{lane}")),
            }
        })
        .collect();
    let bt = m.ty(Scalar::Bool);
    let hot = (0..hot_entries)
        .map(|k| HotEntry {
            start: private(m, u64t, &format!("pisa_check_hot{k}_start")),
            end: private(m, u64t, &format!("pisa_check_hot{k}_end")),
            read_only: private(m, bt, &format!("pisa_check_hot{k}_read_only")),
        })
        .collect();
    m.checks = Some(Checks {
        block,
        pending,
        sites: Vec::new(),
        hot,
    });
}

/// Every memory variable of `module` with its arena offset, for the reflection: what the host
/// names allocations by. A `.shared` variable lists the kernels that can reach it (its offset
/// is only meaningful in those, spec-notes §61).
pub fn variables(module: &Module, layout: &ModuleLayout) -> Vec<VariableInfo> {
    let mut out: Vec<VariableInfo> = module
        .globals
        .iter()
        .zip(&layout.globals)
        .map(|(g, &offset)| VariableInfo {
            name: g.name.clone(),
            function: None,
            space: g.space,
            offset,
            size: g.size,
            kernels: Vec::new(),
        })
        .collect();
    let graph = CallGraph::new(module);
    let reach: Vec<(String, Vec<bool>)> = module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_kernel() && f.body.is_some())
        .map(|(k, f)| (f.name.clone(), graph.reachable_from([FuncId(k as u32)])))
        .collect();
    for (fi, f) in module.functions.iter().enumerate() {
        for (li, v) in f.locals.iter().enumerate() {
            let fid = FuncId(fi as u32);
            let kernels = match v.space {
                MemSpace::Shared => reach
                    .iter()
                    .filter(|(_, r)| r.get(fi).copied().unwrap_or(false))
                    .map(|(k, _)| k.clone())
                    .collect(),
                _ => Vec::new(),
            };
            out.push(VariableInfo {
                name: v.name.clone(),
                function: Some(f.name.clone()),
                space: v.space,
                offset: layout.var_offset(fid, VarRef::Local(crate::ir::LocalId(li as u32))),
                size: v.size,
                kernels,
            });
        }
    }
    out
}

/// One memory access as the checker sees it.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The space of the instruction (generic is resolved by the check).
    pub space: Space,
    /// The address (u64 for global, const and generic; u32 for shared and private).
    pub addr: Word,
    /// For a generic access that [`crate::mid::provenance`] resolved statically to `space`, the
    /// whole generic address (u64) ([`FnCx::generic_origin`]): the check requires its tag
    /// to be that space's, as the run-time tag test would have, and the record reports it.
    pub origin: Option<Word>,
    /// Bytes of the whole access (a vector access is one access).
    pub bytes: u32,
    /// The alignment prog-5 §5.1 requires.
    pub align: u32,
    /// What the instruction does.
    pub kind: AccessKind,
    /// The variable the address is written relative to (`[@var ...]`), if any.
    pub var: Option<VarRef>,
    /// The hot entry of the kernel argument the address comes from
    /// ([`FnCx::address_slot`]), if known.
    pub slot: Option<u32>,
}

impl FnCx<'_> {
    /// For a checked translation, the hot entry ([`Checks::hot`]) of the kernel argument
    /// the address operand `op` comes from ([`crate::mid::provenance::argument_slots`]): its base
    /// register holds that argument plus offsets (an offset register is taken to hold an
    /// offset: a hint that is wrong costs a search, not a verdict). `None` when unknown, or
    /// when the kernel's argument has no hot entry.
    pub fn address_slot(&self, op: &Operand) -> Option<u32> {
        use crate::mid::provenance::Origin;
        let hot = self.m.checks.as_ref()?.hot.len() as u32;
        let Operand::Addr(a) = op else {
            return None;
        };
        let AddrBase::Reg(base) = a.base else {
            return None;
        };
        let slots = self
            .argument_slots
            .get_or_init(|| crate::mid::provenance::argument_slots(self.f));
        match slots.get(base.0 as usize).copied() {
            Some(Origin::From(k)) if k < hot => Some(k),
            _ => None,
        }
    }

    /// For a checked access declared generic (`declared`) that [`crate::mid::provenance`]
    /// resolved statically to one space (`resolved`), the whole 64-bit generic address
    /// ([`Access::origin`]); `None` otherwise (and in an unchecked translation, which needs
    /// no second evaluation of the address).
    pub fn generic_origin(
        &mut self,
        addr: &Address,
        declared: Space,
        resolved: Space,
    ) -> EResult<Option<Word>> {
        if !self.is_checked() || declared != Space::Generic || resolved == Space::Generic {
            return Ok(None);
        }
        self.eval_address_as(addr, 64).map(Some)
    }
}

/// The variable an address operand is written relative to.
pub fn address_var(op: &Operand) -> Option<VarRef> {
    match op {
        Operand::Addr(a) => match a.base {
            AddrBase::Var(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

pub use crate::memcheck::required_alignment;

/// What the record of a failed check is made of ([`FnCx::record`]).
struct Failure {
    /// Where the check found the access.
    verdict: Verdict,
    /// bool: aligned as required.
    aligned: Word,
    /// Whether the address was generic.
    generic: bool,
}

/// Whether a pass of the check found the access in bounds and writable.
struct Verdict {
    /// bool: inside what it may touch.
    inside: Word,
    /// bool: the place is read-only and the access writes.
    read_only: Word,
    /// u32: the space code ([`code::space`]).
    space: Word,
}

/// Violations to note ([`FnCx::note_violations`]): how many, and the first one's facts.
struct Violations {
    /// u32: how many (0: none).
    count: Word,
    /// u32: the first one's site index.
    site: Word,
    /// u32: its record code ([`code`]).
    code: Word,
    /// u32: its size in bytes.
    size: Word,
    /// u64: its address.
    address: Word,
    /// u32: its [`Pending::position`], in a block holding a run.
    position: Option<Word>,
}

impl FnCx<'_> {
    /// Whether the module is translated checked.
    pub fn is_checked(&self) -> bool {
        self.m.checks.is_some()
    }

    /// Kernel entry: copies the check block's address from the launch block
    /// ([`LaunchLayout::check_block`](crate::layout::launch::LaunchLayout::check_block)) and
    /// its hot entries ([`Checks::hot`]) to the Private variables every function reads, and
    /// zeroes the work-item's count of violations ([`Pending`]).
    pub fn init_checks(&mut self) -> EResult {
        let Some((var, pending, hot)) = self
            .m
            .checks
            .as_ref()
            .map(|c| (c.block, c.pending.clone(), c.hot.clone()))
        else {
            return Ok(());
        };
        let Some(slot) = self.layout.launch.check_block else {
            return Err(self.err("internal error: the launch block has no check block"));
        };
        let v = self.launch_u64(slot)?;
        self.m.b.store(var, v, None, []);
        for (k, e) in hot.into_iter().enumerate() {
            let at = block::HOT + block::ENTRY_SIZE * k as u64;
            let p = self.addr_add(v, 64, at)?;
            let start = self.global_load(p, 64)?;
            self.m.b.store(e.start, start, None, []);
            let p = self.addr_add(v, 64, at + 8)?;
            let raw = self.global_load(p, 64)?;
            let (end, read_only) = self.split_end(raw)?;
            self.m.b.store(e.end, end, None, []);
            self.m.b.store(e.read_only, read_only, None, []);
        }
        let zero = self.m.const_u32(0);
        for p in pending {
            self.m.b.store(p.count, zero, None, []);
        }
        Ok(())
    }

    /// Runs `access` when the module is unchecked; else checks `a` first and runs `access`
    /// only when it passes, `skipped` (and records the violation) when it does not.
    ///
    /// `access(cx, address, ok)` performs the access at `address`. For an access of a run
    /// ([`crate::mid::base_runs`]), whose verdict and record its run's head computed, it runs without a
    /// branch, with `ok` (bool) for every work-item: at the access's own address when it
    /// passes and at the check block's [scratch](block::SCRATCH) when it does not (a load
    /// replaces its value by 0 where `ok` is false). Otherwise `ok` is `None`.
    pub fn checked_access(
        &mut self,
        inst: &Inst,
        a: Access,
        access: impl FnOnce(&mut Self, Word, Option<Word>) -> EResult,
        skipped: impl FnOnce(&mut Self) -> EResult,
    ) -> EResult {
        if !self.is_checked() {
            return access(self, a.addr, None);
        }
        if let Some(member) = self.run_member(inst).filter(|_| a.origin.is_none()) {
            // lavapipe compiled a branch and a record per access slowly (a kernel of a
            // thousand checked accesses took minutes, issue 28): straight-line code.
            let ok = self.run_ok(member, &a)?;
            let blk = self.check_block()?;
            let scratch = self.addr_add(blk, 64, block::SCRATCH)?;
            let u64t = self.m.uint(64);
            let at = self.m.b.select(u64t, None, ok, a.addr, scratch);
            return access(self, at, Some(ok));
        }
        let variable = a
            .var
            .filter(|&v| self.holds_to(v, a.space))
            .map(|v| self.var_name(v));
        let site = Site {
            function: self.f.name.clone(),
            span: (inst.span.start, inst.span.end),
            align: a.align,
            variable,
            location: None,
        };
        if let Some(member) = self.loop_member(inst).filter(|_| a.origin.is_none()) {
            // Checked at its loop's entry for every iteration ([`crate::mid::loop_ranges`]).
            return self.loop_member_access(inst, a, member, site, access);
        }
        let site = self.push_site(site)?;
        let (ok, failure) = self.check(&a)?;
        let position = self.position_in_block(inst);
        self.if_else(
            ok,
            |cx| access(cx, a.addr, None),
            |cx| {
                cx.record(site, &failure, ok, &a, position)?;
                skipped(cx)
            },
        )
    }

    /// In a checked translation, where a `call` through a register (`inst`) matched no
    /// function: records the violation (reason [`code::NOT_A_FUNCTION`], the address
    /// `target`, u64) for the lane being emitted, as the reference interpreter reports the
    /// same call. Nothing otherwise.
    pub fn bad_call(&mut self, inst: &Inst, target: Word) -> EResult {
        match self.bad_call_site(inst)? {
            Some(site) => self.note_bad_call(inst, site, target),
            None => Ok(()),
        }
    }

    /// In a checked translation, the site of `call` instruction `inst` for
    /// [`FnCx::note_bad_call`] (one per instruction, whatever the lanes); `None` otherwise.
    pub fn bad_call_site(&mut self, inst: &Inst) -> EResult<Option<u32>> {
        if !self.is_checked() {
            return Ok(None);
        }
        self.push_site(Site {
            function: self.f.name.clone(),
            span: (inst.span.start, inst.span.end),
            align: 1,
            variable: None,
            location: None,
        })
        .map(Some)
    }

    /// Records [`FnCx::bad_call`]'s violation at `site` for the lane being emitted.
    pub fn note_bad_call(&mut self, inst: &Inst, site: u32, target: Word) -> EResult {
        let code = code::access(crate::memcheck::AccessKind::Call) << code::ACCESS_SHIFT
            | code::NOT_A_FUNCTION << code::REASON_SHIFT
            | code::space(MemSpace::Global);
        let v = Violations {
            count: self.m.const_u32(1),
            site: self.m.const_u32(site),
            code: self.m.const_u32(code),
            size: self.m.const_u32(0),
            address: target,
            position: self.position_in_block(inst).map(|p| self.m.const_u32(p)),
        };
        self.note_violations(&v)
    }

    /// Adds `site` to the table of checked instructions; its index.
    fn push_site(&mut self, site: Site) -> EResult<u32> {
        let Some(checks) = self.m.checks.as_mut() else {
            return Err(self.err("internal error: a check outside a checked translation"));
        };
        checks.sites.push(site);
        Ok(checks.sites.len() as u32 - 1)
    }

    /// In a block holding a run, `inst`'s [`Pending::position`] (its index in the body plus
    /// 1); `None` elsewhere.
    fn position_in_block(&self, inst: &Inst) -> Option<u32> {
        self.run_block
            .then(|| self.body_index(inst))
            .flatten()
            .map(|i| i as u32 + 1)
    }

    /// [`FnCx::checked_access`] for an access that returns a value of type `ty`: 0 (of
    /// that type) when the check fails.
    pub fn checked_value(
        &mut self,
        inst: &Inst,
        a: Access,
        ty: Word,
        access: impl FnOnce(&mut Self) -> EResult<Word>,
    ) -> EResult<Word> {
        if !self.is_checked() {
            return access(self);
        }
        let result = self.local_var(ty)?;
        self.checked_access(
            inst,
            a,
            |cx, _, _| {
                let v = access(cx)?;
                Ok(cx.m.b.store(result, v, None, []))
            },
            |cx| {
                let zero = cx.m.b.constant_null(ty);
                Ok(cx.m.b.store(result, zero, None, []))
            },
        )?;
        Ok(self.m.b.load(ty, None, result, None, []))
    }

    /// Whether `a` passes its check (bool), and what [`FnCx::record`] needs when it does
    /// not. The caller records a failure in the branch that skips the access: lavapipe runs
    /// a divergent branch under a mask, but skips one that no work-item of the SIMD group
    /// takes, so correct accesses do not pay for the record. (A sub-group vote to make such
    /// a branch uniform cost more than it saved: lavapipe votes lane by lane.)
    fn check(&mut self, a: &Access) -> EResult<(Word, Failure)> {
        let (bits, generic) = match a.space {
            Space::Mem(s) => (s.address_bits(), a.origin.is_some()),
            Space::Generic => (64, true),
        };
        let var = a.var.filter(|&v| self.holds_to(v, a.space));
        let v = match (var, a.space) {
            (Some(var), _) => {
                let vs = self.var_space(var);
                self.var_bounds(var, vs, a)?
            }
            (_, Space::Mem(s @ (MemSpace::Global | MemSpace::Const))) => {
                self.table_bounds(a.origin.unwrap_or(a.addr), a, s)?
            }
            (_, Space::Mem(s)) => {
                let mut v = self.arena_bounds(s, a.addr, a)?;
                if let Some(full) = a.origin {
                    // Resolved statically: the address must be one of that space, as the
                    // run-time tag test would have found; one that is not is reported in
                    // the space its tag names (as the reference interpreter does).
                    let tag = self.has_tag(full, s)?;
                    let bt = self.m.ty(Scalar::Bool);
                    v.inside = self.m.b.logical_and(bt, None, v.inside, tag);
                    let named = self.tag_space(full)?;
                    let u32t = self.m.uint(32);
                    v.space = self.m.b.select(u32t, None, tag, v.space, named);
                }
                v
            }
            (_, Space::Generic) => self.generic_bounds(a)?,
        };
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let low = self.resize(a.addr, bits, 32)?;
        let mask = self.m.const_u32(a.align.max(1) - 1);
        let off = self.m.b.bitwise_and(u32t, None, low, mask);
        let zero = self.m.const_u32(0);
        let aligned = self.m.b.i_equal(bt, None, off, zero);
        let writable = self.m.b.logical_not(bt, None, v.read_only);
        let ok = self.m.b.logical_and(bt, None, v.inside, writable);
        let ok = self.m.b.logical_and(bt, None, ok, aligned);
        Ok((
            ok,
            Failure {
                verdict: v,
                aligned,
                generic,
            },
        ))
    }

    /// In the branch of a work-item whose access failed its check: the record code of
    /// `f` (space, generic flag, reason, access kind) noted as a violation of `site`
    /// ([`FnCx::note_violations`]).
    fn record(
        &mut self,
        site: u32,
        f: &Failure,
        ok: Word,
        a: &Access,
        position: Option<u32>,
    ) -> EResult {
        let u32t = self.m.uint(32);
        let zero = self.m.const_u32(0);
        let v = &f.verdict;
        // reason: misaligned, else out of bounds, else read-only
        let [oob, ro, mis] = [code::OUT_OF_BOUNDS, code::READ_ONLY, code::MISALIGNED]
            .map(|r| self.m.const_u32(r << code::REASON_SHIFT));
        let r = self.m.b.select(u32t, None, v.read_only, ro, zero);
        let r = self.m.b.select(u32t, None, v.inside, r, oob);
        let reason = self.m.b.select(u32t, None, f.aligned, r, mis);
        let fixed =
            code::access(a.kind) << code::ACCESS_SHIFT | if f.generic { code::GENERIC } else { 0 };
        let fixed = self.m.const_u32(fixed);
        let tagged = self.m.b.bitwise_or(u32t, None, fixed, v.space);
        let code = self.m.b.bitwise_or(u32t, None, tagged, reason);
        let addr = match (a.origin, a.space) {
            (Some(full), _) => full,
            (None, Space::Mem(s)) => self.resize(a.addr, s.address_bits(), 64)?,
            (None, Space::Generic) => a.addr,
        };
        let one = self.m.const_u32(1);
        let bad = self.m.b.select(u32t, None, ok, zero, one);
        let v = Violations {
            count: bad,
            site: self.m.const_u32(site),
            code,
            size: self.m.const_u32(a.bytes),
            address: addr,
            position: position.map(|p| self.m.const_u32(p)),
        };
        self.note_violations(&v)
    }

    /// Whether an access of `space` through an address written relative to `v` is held to
    /// `v`: when the address is one of `v`'s own space (global and const share one; a
    /// generic access may use a global or const variable's address as it is).
    fn holds_to(&self, v: VarRef, space: Space) -> bool {
        let vs = self.var_space(v);
        match space {
            Space::Mem(s) => vs == s || (vs.address_bits() == 64 && s.address_bits() == 64),
            Space::Generic => vs.address_bits() == 64,
        }
    }

    /// The name of a variable, for the site table.
    fn var_name(&self, v: VarRef) -> VariableName {
        match v {
            VarRef::Global(g) => VariableName {
                name: self.module.globals[g.0 as usize].name.clone(),
                function: None,
            },
            VarRef::Local(l) => VariableName {
                name: self.f.locals[l.0 as usize].name.clone(),
                function: Some(self.f.name.clone()),
            },
        }
    }

    fn var_space(&self, v: VarRef) -> MemSpace {
        match v {
            VarRef::Global(g) => self.module.globals[g.0 as usize].space,
            VarRef::Local(l) => self.f.locals[l.0 as usize].space,
        }
    }

    fn var_size(&self, v: VarRef) -> u64 {
        match v {
            VarRef::Global(g) => self.module.globals[g.0 as usize].size,
            VarRef::Local(l) => self.f.locals[l.0 as usize].size,
        }
    }

    /// `[addr, addr + bytes)` inside the variable `var` (of space `vs`): `addr - var`
    /// at most `size - bytes`, computed in the space's address width so that an address
    /// below the variable wraps to a large offset.
    fn var_bounds(&mut self, var: VarRef, vs: MemSpace, a: &Access) -> EResult<Verdict> {
        let bits = vs.address_bits();
        let (base, _) = self.var_address(var)?;
        let t = self.m.uint(bits);
        let addr = match a.space {
            Space::Generic => self.resize(a.addr, 64, bits)?,
            Space::Mem(s) => self.resize(a.addr, s.address_bits(), bits)?,
        };
        let rel = self.m.b.i_sub(t, None, addr, base);
        let size = self.var_size(var);
        let inside = match size.checked_sub(a.bytes as u64) {
            Some(last) => {
                let bt = self.m.ty(Scalar::Bool);
                let last = self.m.const_uint(bits, last);
                self.m.b.u_less_than_equal(bt, None, rel, last)
            }
            None => self.m.const_bool(false),
        };
        let read_only = self
            .m
            .const_bool(vs == MemSpace::Const && a.kind != AccessKind::Load);
        let space = self.m.const_u32(code::space(vs));
        Ok(Verdict {
            inside,
            read_only,
            space,
        })
    }

    /// `[addr, addr + bytes)` (u32 `addr`) inside the shared or private arena.
    fn arena_bounds(&mut self, s: MemSpace, addr: Word, a: &Access) -> EResult<Verdict> {
        let u64t = self.m.uint(64);
        let limit = match (s, self.m.shared_words) {
            (MemSpace::Shared, Some(words)) => {
                let w = self.resize(words, 32, 64)?;
                self.shl_const(w, 64, 2)?
            }
            (MemSpace::Shared, None) => self.m.const_uint(64, 0),
            _ => self.m.const_uint(64, self.layout.private_size as u64),
        };
        let a64 = self.resize(addr, 32, 64)?;
        let n = self.m.const_uint(64, a.bytes as u64);
        let end = self.m.b.i_add(u64t, None, a64, n);
        let bt = self.m.ty(Scalar::Bool);
        let inside = self.m.b.u_less_than_equal(bt, None, end, limit);
        let read_only = self.m.const_bool(false);
        let space = self.m.const_u32(code::space(s));
        Ok(Verdict {
            inside,
            read_only,
            space,
        })
    }

    /// A generic address: resolved on its tag as the access is (private and shared need
    /// bits 61..32 clear), then checked in that space.
    fn generic_bounds(&mut self, a: &Access) -> EResult<Verdict> {
        let (u32t, u64t) = (self.m.uint(32), self.m.uint(64));
        let bt = self.m.ty(Scalar::Bool);
        let [inside_v, ro_v, space_v] = [bt, bt, u32t].map(|t| self.local_var(t));
        let (inside_v, ro_v, space_v) = (inside_v?, ro_v?, space_v?);
        let mask = self.m.const_uint(64, generic::TAG_MASK);
        let tag = self.m.b.bitwise_and(u64t, None, a.addr, mask);
        let low = self.resize(a.addr, 64, 32)?;
        let store = |cx: &mut Self, v: Verdict| -> EResult {
            cx.m.b.store(inside_v, v.inside, None, []);
            cx.m.b.store(ro_v, v.read_only, None, []);
            Ok(cx.m.b.store(space_v, v.space, None, []))
        };
        let local = |cx: &mut Self, s: MemSpace| -> EResult {
            let mut v = cx.arena_bounds(s, low, a)?;
            let clear = cx.has_tag(a.addr, s)?;
            v.inside = cx.m.b.logical_and(bt, None, v.inside, clear);
            store(cx, v)
        };
        let private = self.m.const_uint(64, generic::PRIVATE_TAG);
        let is_private = self.m.b.i_equal(bt, None, tag, private);
        let shared = self.m.const_uint(64, generic::SHARED_TAG);
        let is_shared = self.m.b.i_equal(bt, None, tag, shared);
        self.if_else(
            is_private,
            |cx| local(cx, MemSpace::Private),
            |cx| {
                cx.if_else(
                    is_shared,
                    |cx| local(cx, MemSpace::Shared),
                    |cx| {
                        let v = cx.table_bounds(a.addr, a, MemSpace::Global)?;
                        store(cx, v)
                    },
                )
            },
        )?;
        Ok(Verdict {
            inside: self.m.b.load(bt, None, inside_v, None, []),
            read_only: self.m.b.load(bt, None, ro_v, None, []),
            space: self.m.b.load(u32t, None, space_v, None, []),
        })
    }

    /// Whether the generic address `full` (u64) is one of space `s` (shared or private):
    /// its bits 63..32 are that space's tag and nothing else, as the spaces' addresses are
    /// 32-bit.
    fn has_tag(&mut self, full: Word, s: MemSpace) -> EResult<Word> {
        let u64t = self.m.uint(64);
        let bt = self.m.ty(Scalar::Bool);
        let tag = match s {
            MemSpace::Shared => generic::SHARED_TAG,
            _ => generic::PRIVATE_TAG,
        };
        let high = self.m.const_uint(64, !0xFFFF_FFFFu64);
        let bits = self.m.b.bitwise_and(u64t, None, full, high);
        let want = self.m.const_uint(64, tag);
        Ok(self.m.b.i_equal(bt, None, bits, want))
    }

    /// The space code ([`code::space`]) of the space a generic address's tag names.
    fn tag_space(&mut self, full: Word) -> EResult<Word> {
        let (u32t, u64t) = (self.m.uint(32), self.m.uint(64));
        let bt = self.m.ty(Scalar::Bool);
        let mask = self.m.const_uint(64, generic::TAG_MASK);
        let tag = self.m.b.bitwise_and(u64t, None, full, mask);
        let mut space = self.m.const_u32(code::space(MemSpace::Global));
        for (t, s) in [
            (generic::SHARED_TAG, MemSpace::Shared),
            (generic::PRIVATE_TAG, MemSpace::Private),
        ] {
            let k = self.m.const_uint(64, t);
            let is = self.m.b.i_equal(bt, None, tag, k);
            let c = self.m.const_u32(code::space(s));
            space = self.m.b.select(u32t, None, is, c, space);
        }
        Ok(space)
    }

    /// The check block's address (u64).
    fn check_block(&mut self) -> EResult<Word> {
        let Some(var) = self.m.checks.as_ref().map(|c| c.block) else {
            return Err(self.err("internal error: a check outside a checked translation"));
        };
        let u64t = self.m.uint(64);
        Ok(self.m.b.load(u64t, None, var, None, []))
    }

    /// Counts `v.count` violations (u32) of the work-item and, when there are some and they
    /// are its first (or, with a position, come before the pending one in this block's
    /// execution, [`Pending::position`]), keeps the one `v` describes ([`Pending`]):
    /// selects only, no branch.
    fn note_violations(&mut self, v: &Violations) -> EResult {
        let lane = self.lane as usize;
        let Some(p) = self
            .m
            .checks
            .as_ref()
            .and_then(|c| c.pending.get(lane).copied())
        else {
            return Err(self.err("internal error: a check outside a checked translation"));
        };
        let (u32t, u64t) = (self.m.uint(32), self.m.uint(64));
        let bt = self.m.ty(Scalar::Bool);
        let count = self.m.b.load(u32t, None, p.count, None, []);
        let zero = self.m.const_u32(0);
        let mut keep = self.m.b.i_equal(bt, None, count, zero);
        if let Some(at) = v.position {
            let pending = self.m.b.load(u32t, None, p.position, None, []);
            let later = self.m.b.u_greater_than(bt, None, pending, at);
            keep = self.m.b.logical_or(bt, None, keep, later);
        }
        let some = self.m.b.i_not_equal(bt, None, v.count, zero);
        let first = self.m.b.logical_and(bt, None, some, keep);
        let mut fields = vec![
            (p.site, u32t, v.site),
            (p.code, u32t, v.code),
            (p.size, u32t, v.size),
            (p.address, u64t, v.address),
        ];
        if let Some(at) = v.position {
            fields.push((p.position, u32t, at));
        }
        for (var, t, new) in fields {
            let old = self.m.b.load(t, None, var, None, []);
            let new = self.m.b.select(t, None, first, new, old);
            self.m.b.store(var, new, None, []);
        }
        let count = self.m.b.i_add(u32t, None, count, v.count);
        Ok(self.m.b.store(p.count, count, None, []))
    }

    /// At a kernel's return, in a checked translation: adds the work-item's violations to
    /// the dispatch's count and, when they are the dispatch's first, records the first of
    /// them with the work-item's ids - for each work-item the invocation carries.
    pub fn flush_checks(&mut self) -> EResult {
        let Some(pending) = self.m.checks.as_ref().map(|c| c.pending.clone()) else {
            return Ok(());
        };
        for (l, p) in pending.into_iter().enumerate() {
            self.lane = l as u32;
            let r = self.flush_lane(p);
            self.lane = 0;
            r?;
        }
        Ok(())
    }

    /// At a `return` of the lanes in `mask` of a kernel on virtual lanes, in a checked
    /// translation: when one of those work-items has a violation pending, the launch is
    /// cancelled at once, as its own return would do natively ([`FnCx::flush_checks`]), so
    /// that the work-items of its hardware sub-group that go on stop at their next loop
    /// check. The violations are recorded at the kernel's end as before, in lane order, so
    /// the first one reported stays the one the reference reports.
    pub fn cancel_if_returning_found(&mut self, mask: Word) -> EResult {
        let Some(pending) = self.m.checks.as_ref().map(|c| c.pending.clone()) else {
            return Ok(());
        };
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        let zero = self.m.const_u32(0);
        let mut found = self.m.const_bool(false);
        for (l, p) in pending.into_iter().enumerate() {
            let returns = self.bit_set(mask, l as u32)?;
            let count = self.m.b.load(u32t, None, p.count, None, []);
            let some = self.m.b.i_not_equal(bt, None, count, zero);
            let both = self.m.b.logical_and(bt, None, returns, some);
            found = self.m.b.logical_or(bt, None, found, both);
        }
        self.if_then(found, |cx| cx.cancel_all())
    }

    /// [`FnCx::flush_checks`] for the work-item of the lane being emitted.
    fn flush_lane(&mut self, p: Pending) -> EResult {
        let (u32t, u64t) = (self.m.uint(32), self.m.uint(64));
        let bt = self.m.ty(Scalar::Bool);
        let count = self.m.b.load(u32t, None, p.count, None, []);
        let zero = self.m.const_u32(0);
        let any = self.m.b.i_not_equal(bt, None, count, zero);
        self.if_then(any, |cx| {
            let blk = cx.check_block()?;
            let total = cx.global_ptr(blk, 32)?;
            let scope = cx.m.const_u32(Scope::Device as u32);
            let sem = cx.m.const_u32(MemorySemantics::empty().bits());
            let old = cx.m.b.atomic_i_add(u32t, None, total, scope, sem, count);
            let first = cx.m.b.i_equal(bt, None, old, zero);
            cx.cancel_all()?;
            cx.if_then(first, |cx| {
                for (at, var) in [
                    (block::SITE, p.site),
                    (block::CODE, p.code),
                    (block::SIZE, p.size),
                ] {
                    let v = cx.m.b.load(u32t, None, var, None, []);
                    let p = cx.addr_add(blk, 64, at)?;
                    cx.global_store(p, 32, v)?;
                }
                let addr = cx.m.b.load(u64t, None, p.address, None, []);
                let p = cx.addr_add(blk, 64, block::ADDRESS)?;
                cx.global_store(p, 64, addr)?;
                for (at, reg) in [
                    (block::GROUP_ID, SpecialReg::GroupId),
                    (block::LOCAL_ID, SpecialReg::LocalId),
                ] {
                    for c in 0..3u8 {
                        let v = cx.special_value(reg, Some(c))?;
                        let p = cx.addr_add(blk, 64, at + 4 * c as u64)?;
                        cx.global_store(p, 32, v)?;
                    }
                }
                Ok(())
            })
        })
    }
}
