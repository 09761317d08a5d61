//! Sanitizers beyond bounds: a race checker, an initialization checker and a barrier
//! checker, run by the interpreter while it executes (the bounds checks are always on).
//!
//! The interpreter sees every access of every work-item in the order it performs them, so
//! each checker keeps **shadow state** next to the memory it watches and looks at it on each
//! access:
//!
//! - **Shared and global memory**: a [`Cell`] per byte — the last write and up to two reads
//!   since it, each a [`Stamp`] (work-group, work-item, barrier generation of its work-group,
//!   synchronization clock, instruction, atomic or not). The shared shadow is one per
//!   work-group (work-groups run one after another); the global shadow is one per allocation,
//!   created on first touch, for the whole dispatch.
//! - **Private memory and registers**: one "written" flag per byte, in each work-item
//!   ([`crate::lane::Lane::private_init`], [`crate::lane::Frame::init`]).
//!
//! **Happens-before** (arch-1 §1.2, isa-8, isa-9, spec-notes §86): an access `a` by one
//! work-item is ordered before an access `b` by another when they are in the same work-group
//! and a `barrier.workgroup` released between them (the barrier generation of `a` is lower),
//! or when the first work-item made a release (an atomic with `.release`, `.acq_rel` or
//! `.seq_cst`, or a `fence`) after `a`, and the second made an acquire (an atomic with
//! `.acquire`, `.acq_rel` or `.seq_cst`, or a `fence`) after that release, both at a scope
//! that holds the two work-items (sub-group, work-group, gpu/system). The checker does not
//! verify that the acquire read what the release published: it errs towards silence. Two
//! atomic accesses never race. Sub-group lock-step is not synchronization.
//!
//! Findings are [`Report`]s, one per pair of lines (per line for the initialization checker),
//! with a count of the dynamic occurrences; the first occurrence's facts are kept.

use pisa_translator::ir::{MemOrder, MemScope, MemSpace};
use pisa_translator::memcheck::{AccessKind, WorkItem};
use pisa_translator::Span;
use std::collections::HashMap;

/// Which sanitizers run (the bounds checks always do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sanitize {
    /// Data races on `.shared` and `.global` memory.
    pub race: bool,
    /// Reads of `.shared`, `.private` and register bytes nothing wrote in this launch.
    pub init: bool,
    /// Barriers not reached by every live work-item of the work-group, in divergent control
    /// flow, and sub-group operations whose mask names inactive lanes.
    pub sync: bool,
}

impl Sanitize {
    /// No sanitizer (the plain interpreter).
    pub const NONE: Sanitize = Sanitize {
        race: false,
        init: false,
        sync: false,
    };
    /// Every sanitizer.
    pub const ALL: Sanitize = Sanitize {
        race: true,
        init: true,
        sync: true,
    };

    /// Whether any sanitizer runs.
    pub fn any(self) -> bool {
        self.race || self.init || self.sync
    }

    /// Parses a comma-separated list of `race`, `init`, `sync`, `all` (and `none`).
    pub fn parse(s: &str) -> Result<Sanitize, String> {
        let mut out = Sanitize::NONE;
        for part in s.split(',').map(str::trim) {
            match part {
                "race" => out.race = true,
                "init" => out.init = true,
                "sync" => out.sync = true,
                "all" => out = Sanitize::ALL,
                "none" => {}
                other => {
                    return Err(format!(
                        "unknown sanitizer `{other}` (expected race, init, sync or all)"
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// Which checker found something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// A data race.
    Race,
    /// A read of bytes nothing wrote.
    Init,
    /// A barrier or sub-group operation not reached by the work-items it needs.
    Sync,
}

impl Check {
    /// Its name, as `--sanitize` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Race => "race",
            Check::Init => "init",
            Check::Sync => "sync",
        }
    }
}

/// One instruction executed by one work-item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The function holding the instruction.
    pub function: String,
    /// The instruction.
    pub span: Span,
    /// The work-item.
    pub work_item: WorkItem,
    /// What it did to memory (`None`: not a memory access).
    pub access: Option<AccessKind>,
}

/// What a finding is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Bytes of memory.
    Memory {
        /// The space.
        space: MemSpace,
        /// The address of the first byte concerned, in the numbering of the space.
        address: u64,
        /// The start of the global allocation holding it (a buffer or module variable); 0
        /// for shared and private memory.
        allocation: u64,
        /// The variable holding it, when it is one (`None` for a buffer).
        variable: Option<String>,
    },
    /// A register.
    Register {
        /// Its name, without `%`.
        name: String,
    },
    /// Nothing addressable (a barrier or sub-group operation).
    None,
}

/// One deduplicated finding of a sanitizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The checker.
    pub check: Check,
    /// What happened, in words.
    pub message: String,
    /// The earlier access of a race, the read of an uninitialized byte, or the barrier or
    /// sub-group instruction.
    pub first: Event,
    /// The later access of a race; for a barrier reached at different places, the other
    /// barrier.
    pub second: Option<Event>,
    /// The bytes or register concerned.
    pub target: Target,
    /// The work-items that should have taken part and did not (barrier checker).
    pub missing: Vec<WorkItem>,
    /// How many times this pair of lines was found.
    pub count: u64,
}

/// No work-item (an empty [`Stamp`]).
const NOBODY: u32 = u32::MAX;

/// One access as the shadow remembers it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    group: u32,
    item: u32,
    /// Barrier generation of the work-group when it happened.
    gen: u32,
    /// The synchronization clock when it happened.
    tick: u32,
    func: u32,
    pc: u32,
    atomic: bool,
}

impl Stamp {
    const EMPTY: Stamp = Stamp {
        group: 0,
        item: NOBODY,
        gen: 0,
        tick: 0,
        func: 0,
        pc: 0,
        atomic: false,
    };

    fn is_empty(&self) -> bool {
        self.item == NOBODY
    }

    fn site(&self) -> (u32, u32) {
        (self.func, self.pc)
    }
}

/// The shadow of one byte of shared or global memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    write: Stamp,
    read1: Stamp,
    read2: Stamp,
}

impl Cell {
    const EMPTY: Cell = Cell {
        write: Stamp::EMPTY,
        read1: Stamp::EMPTY,
        read2: Stamp::EMPTY,
    };
}

/// The running work-item and instruction, as the checkers need them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who {
    /// Linear local id.
    pub item: u32,
    /// `%localid`.
    pub local: [u32; 3],
    /// The running function.
    pub func: u32,
    /// The instruction's index in it.
    pub pc: u32,
}

/// Deduplication key: checker, first site, second site or other distinguishing value.
type Key = (Check, (u32, u32), (u32, u32));

/// The sanitizers' state for one dispatch.
pub(crate) struct State {
    /// Which checkers run.
    pub opts: Sanitize,
    prepared: std::sync::Arc<crate::layout::Prepared>,
    launch: crate::Launch,
    group_count: [u32; 3],
    subgroup_size: u32,
    /// The running work-group: linear index and `%groupid`.
    group: u32,
    group_id: [u32; 3],
    /// Barrier generation of the running work-group.
    gen: u32,
    /// Synchronization clock (advanced by every release and acquire).
    tick: u32,
    /// Shadow of the running work-group's shared memory.
    shared: Vec<Cell>,
    /// Shadow of each touched global allocation, by its start.
    global: HashMap<u64, Vec<Cell>>,
    /// Release clocks of each work-item (group, item): (tick, scope level), in order.
    releases: HashMap<(u32, u32), Vec<(u32, u8)>>,
    /// Latest acquire clock of each work-item at each scope level.
    acquires: HashMap<(u32, u32), [u32; 3]>,
    reports: Vec<Report>,
    index: HashMap<Key, usize>,
}

/// Scope levels: 0 sub-group, 1 work-group, 2 gpu and system.
fn level(scope: Option<MemScope>) -> u8 {
    match scope {
        Some(MemScope::Subgroup) => 0,
        Some(MemScope::Workgroup) => 1,
        // A `.relaxed` access has no scope; stronger ones must have one (arch-1).
        Some(MemScope::Gpu | MemScope::System) | None => 2,
    }
}

impl State {
    /// The state of a dispatch of `launch` in `module`.
    pub fn new(
        opts: Sanitize,
        prepared: std::sync::Arc<crate::layout::Prepared>,
        launch: &crate::Launch,
        group_count: [u32; 3],
        subgroup_size: u32,
    ) -> State {
        State {
            opts,
            prepared,
            launch: *launch,
            group_count,
            subgroup_size,
            group: 0,
            group_id: [0; 3],
            gen: 0,
            tick: 0,
            shared: Vec::new(),
            global: HashMap::new(),
            releases: HashMap::new(),
            acquires: HashMap::new(),
            reports: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// The findings, in the order they were first found.
    pub fn into_reports(self) -> Vec<Report> {
        self.reports
    }

    /// Starts work-group `group_id` with `shared_size` bytes of shared memory, none written.
    pub fn begin_group(&mut self, group_id: [u32; 3], shared_size: usize) {
        let [cx, cy, _] = self.group_count;
        self.group = group_id[0] + cx * (group_id[1] + cy * group_id[2]);
        self.group_id = group_id;
        self.gen = 0;
        self.shared.clear();
        if self.opts.race || self.opts.init {
            self.shared.resize(shared_size, Cell::EMPTY);
        }
    }

    /// A `barrier.workgroup` released the running work-group.
    pub fn barrier_released(&mut self) {
        self.gen += 1;
    }

    /// `%localsize` of work-group `group` (linear).
    fn local_size_of(&self, group: u32) -> ([u32; 3], [u32; 3]) {
        let [cx, cy, _] = self.group_count;
        let id = [group % cx, (group / cx) % cy, group / (cx * cy)];
        let size = std::array::from_fn(|d| {
            let local = self.launch.local_size[d] as u64;
            (self.launch.global_size[d] - id[d] as u64 * local).min(local) as u32
        });
        (id, size)
    }

    fn work_item(&self, group: u32, item: u32) -> WorkItem {
        let (id, [lx, ly, _]) = self.local_size_of(group);
        let local = [item % lx, (item / lx) % ly, item / (lx * ly)];
        WorkItem::new(
            id,
            local,
            self.launch.local_size.map(u64::from),
            self.launch.global_offset,
        )
    }

    /// The work-item `local` of the running work-group.
    pub fn running_item(&self, local: [u32; 3]) -> WorkItem {
        WorkItem::new(
            self.group_id,
            local,
            self.launch.local_size.map(u64::from),
            self.launch.global_offset,
        )
    }

    fn site(&self, func: u32, pc: u32) -> (String, Span) {
        let f = self.prepared.module.functions.get(func as usize);
        let span = f
            .and_then(|f| f.body.as_ref())
            .and_then(|b| b.get(pc as usize))
            .map_or(Span::default(), |i| i.span);
        (f.map_or_else(String::new, |f| f.name.clone()), span)
    }

    /// The event of `who` in the running work-group.
    pub fn event(&self, who: &Who, access: Option<AccessKind>) -> Event {
        let (function, span) = self.site(who.func, who.pc);
        Event {
            function,
            span,
            work_item: self.running_item(who.local),
            access,
        }
    }

    fn stamp_event(&self, s: &Stamp, write: bool) -> Event {
        let (function, span) = self.site(s.func, s.pc);
        Event {
            function,
            span,
            work_item: self.work_item(s.group, s.item),
            access: Some(match (s.atomic, write) {
                (true, _) => AccessKind::Atomic,
                (false, true) => AccessKind::Store,
                (false, false) => AccessKind::Load,
            }),
        }
    }

    /// Adds a finding, or counts it again when its key was found before (`make` builds it
    /// only the first time).
    pub fn report(&mut self, key: Key, make: impl FnOnce(&Self) -> Report) {
        if let Some(&i) = self.index.get(&key) {
            self.reports[i].count += 1;
            return;
        }
        let r = make(self);
        self.index.insert(key, self.reports.len());
        self.reports.push(r);
    }

    /// A release by work-item `item` of the running work-group at `scope`.
    fn release(&mut self, item: u32, scope: Option<MemScope>) {
        self.tick += 1;
        let t = self.tick;
        self.releases
            .entry((self.group, item))
            .or_default()
            .push((t, level(scope)));
    }

    /// An acquire by work-item `item` of the running work-group at `scope`.
    fn acquire(&mut self, item: u32, scope: Option<MemScope>) {
        self.tick += 1;
        let t = self.tick;
        let a = self.acquires.entry((self.group, item)).or_insert([0; 3]);
        for slot in a.iter_mut().take(level(scope) as usize + 1) {
            *slot = t;
        }
    }

    /// The synchronization an atomic access or fence of `order` makes: `before` the access
    /// (a release), or after it (an acquire).
    pub fn order(
        &mut self,
        item: u32,
        order: Option<MemOrder>,
        scope: Option<MemScope>,
        before: bool,
    ) {
        let (rel, acq) = match order {
            Some(MemOrder::Release) => (true, false),
            Some(MemOrder::Acquire) => (false, true),
            Some(MemOrder::AcqRel | MemOrder::SeqCst) => (true, true),
            Some(MemOrder::Weak | MemOrder::Relaxed) => (false, false),
            // A fence without an order orders both ways.
            None => (true, true),
        };
        if before && rel {
            self.release(item, scope);
        }
        if !before && acq {
            self.acquire(item, scope);
        }
    }

    /// Whether access `p` happens before access `c` (see the module documentation).
    fn ordered(&self, p: &Stamp, c: &Stamp) -> bool {
        if p.group == c.group && (p.item == c.item || p.gen < c.gen) {
            return true;
        }
        if self.releases.is_empty() {
            return false;
        }
        let needed = if p.group != c.group {
            2
        } else if p.item / self.subgroup_size == c.item / self.subgroup_size {
            0
        } else {
            1
        };
        let Some(acq) = self.acquires.get(&(c.group, c.item)) else {
            return false;
        };
        let acq = acq[needed as usize];
        self.releases.get(&(p.group, p.item)).is_some_and(|rels| {
            rels.iter()
                .any(|&(t, l)| t > p.tick && l >= needed && acq > t)
        })
    }

    /// Whether `p` and `c` race: both by work-items, different ones, not both atomic, and
    /// not ordered.
    fn races(&self, p: &Stamp, c: &Stamp) -> bool {
        !(p.is_empty() || (p.atomic && c.atomic) || self.ordered(p, c))
    }

    /// An access of `len` bytes at shared address `addr` (`write`: a store or
    /// read-modify-write).
    #[allow(clippy::too_many_arguments)]
    pub fn shared_access(
        &mut self,
        who: &Who,
        addr: u32,
        len: usize,
        write: bool,
        atomic: bool,
        reads: bool,
        variable: impl Fn() -> Option<String>,
    ) {
        let mut cells = std::mem::take(&mut self.shared);
        let start = (addr as usize).min(cells.len());
        let end = (start + len).min(cells.len());
        self.access(who, &mut cells[start..end], write, atomic, reads, |s| {
            Target::Memory {
                space: MemSpace::Shared,
                address: addr as u64 + s as u64,
                allocation: 0,
                variable: variable(),
            }
        });
        self.shared = cells;
    }

    /// An access of `len` bytes at `offset` in the global allocation at `start` of `size`
    /// bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn global_access(
        &mut self,
        who: &Who,
        start: u64,
        size: u64,
        offset: u64,
        len: usize,
        write: bool,
        atomic: bool,
        variable: Option<String>,
    ) {
        if !self.opts.race {
            return;
        }
        let mut cells = std::mem::take(
            self.global
                .entry(start)
                .or_insert_with(|| vec![Cell::EMPTY; size as usize]),
        );
        let lo = (offset as usize).min(cells.len());
        let hi = (lo + len).min(cells.len());
        self.access(who, &mut cells[lo..hi], write, atomic, false, |s| {
            Target::Memory {
                space: MemSpace::Global,
                address: start + offset + s as u64,
                allocation: start,
                variable: variable.clone(),
            }
        });
        if let Some(slot) = self.global.get_mut(&start) {
            *slot = cells;
        }
    }

    /// Checks and records one access on its cells.
    fn access(
        &mut self,
        who: &Who,
        cells: &mut [Cell],
        write: bool,
        atomic: bool,
        // whether the initialization checker counts the access as a read
        check_init: bool,
        target: impl Fn(usize) -> Target,
    ) {
        let cur = Stamp {
            group: self.group,
            item: who.item,
            gen: self.gen,
            tick: self.tick,
            func: who.func,
            pc: who.pc,
            atomic,
        };
        let kind = match (atomic, write) {
            (true, _) => AccessKind::Atomic,
            (false, true) => AccessKind::Store,
            (false, false) => AccessKind::Load,
        };
        if check_init && self.opts.init {
            if let Some(i) = cells.iter().position(|c| c.write.is_empty()) {
                let key = (Check::Init, (who.func, who.pc), (u32::MAX, 0));
                self.report(key, |s| Report {
                    check: Check::Init,
                    message: "read of shared memory that nothing wrote in this launch".into(),
                    first: s.event(who, Some(kind)),
                    second: None,
                    target: target(i),
                    missing: Vec::new(),
                    count: 1,
                });
            }
        }
        if !self.opts.race {
            // Only the "written" fact matters.
            if write {
                for c in cells.iter_mut() {
                    c.write = cur;
                }
            }
            return;
        }
        // The first conflict of this access, if any: (byte, earlier stamp, it wrote).
        let mut conflict: Option<(usize, Stamp, bool)> = None;
        for (i, c) in cells.iter_mut().enumerate() {
            if conflict.is_none() {
                if (c.write.item != cur.item || c.write.group != cur.group)
                    && self.races(&c.write, &cur)
                {
                    conflict = Some((i, c.write, true));
                }
                if write && conflict.is_none() {
                    for r in [c.read1, c.read2] {
                        if conflict.is_none()
                            && (r.item != cur.item || r.group != cur.group)
                            && self.races(&r, &cur)
                        {
                            conflict = Some((i, r, false));
                        }
                    }
                }
            }
            if write {
                *c = Cell {
                    write: cur,
                    read1: Stamp::EMPTY,
                    read2: Stamp::EMPTY,
                };
            } else if c.read1.is_empty()
                || (c.read1.group == cur.group && c.read1.item == cur.item)
                || self.ordered(&c.read1, &cur)
            {
                c.read1 = cur;
            } else {
                c.read2 = cur;
            }
        }
        if let Some((i, prev, prev_wrote)) = conflict {
            let key = (Check::Race, prev.site(), (who.func, who.pc));
            self.report(key, |s| {
                let first = s.stamp_event(&prev, prev_wrote);
                let second = s.event(who, Some(kind));
                let what = |k: Option<AccessKind>| match k {
                    Some(AccessKind::Load) => "read",
                    Some(AccessKind::Store) => "write",
                    _ => "atomic",
                };
                let space = match target(i) {
                    Target::Memory { space, .. } => space.as_str(),
                    _ => "",
                };
                let message = format!(
                    "data race on {space} memory: {} by one work-item and {} by another, \
                     with no barrier or release/acquire between them",
                    what(first.access),
                    what(second.access),
                );
                Report {
                    check: Check::Race,
                    message,
                    first,
                    second: Some(second),
                    target: target(i),
                    missing: Vec::new(),
                    count: 1,
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_list_parses() {
        assert_eq!(Sanitize::parse("all"), Ok(Sanitize::ALL));
        assert_eq!(
            Sanitize::parse("race, sync"),
            Ok(Sanitize {
                race: true,
                init: false,
                sync: true
            })
        );
        assert!(Sanitize::parse("bounds").is_err());
        assert!(!Sanitize::parse("none").unwrap().any());
    }
}
