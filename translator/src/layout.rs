//! Memory layout decisions shared by the SPIR-V back end and the runtime.
//!
//! Owns: where every memory variable of a module lives —
//! - the *globals arena*: one buffer per loaded module holding every `.global`/`.const`
//!   variable (module scope and body `.const`), each at its alignment, with the initializer
//!   image and the relocations the runtime patches once the arena's address is known;
//! - the *shared arena*: one Workgroup array of 32-bit words holding the `.shared` variables,
//!   each at one static offset (so no function needs to be told where its variables are),
//!   laid out per kernel (`layout_shared`): a kernel reserves only the variables (and lock
//!   table) of the functions it can reach, and variables that no kernel can reach together
//!   may share bytes; the array's length is a specialization constant each pipeline sets
//!   to its kernel's size;
//! - the *private arena*: the same for `.private`, per invocation. PISA forbids nothing about
//!   recursion here; the translator lowers call cycles onto an explicit stack first
//!   (`passes::recursion`), whose activations' variables live in that stack, so static
//!   offsets are sound. The arena lives in Private storage, or past
//!   [`crate::Options::scratch_threshold`] in a per-launch scratch buffer ([`PrivateHome`],
//!   [`ModuleLayout::scratch_stride`]; spec-notes §95);
//! - the *launch block*: the push-constant layout every kernel reads its launch values and
//!   its `.param` argument block from;
//! - the *lock tables* of the atomics that Vulkan has no instruction for (see [`locks`]).
//!
//! Must not: emit SPIR-V or interpret instructions.

use crate::ir::{
    AddrSpace, DataType, FuncId, GlobalId, InitItem, Inst, LocalId, MemOrder, MemSpace, Module,
    Opcode, SymbolRef,
};
use std::collections::HashMap;

/// The launch block: the push constants every kernel of a module receives. Only the launch
/// values some function of the module reads have a slot ([`launch::LaunchLayout`]), so
/// that a kernel pays for none it does not use and as much of the 128 bytes as possible is
/// left for its arguments.
pub mod launch {
    use crate::ir::{Module, Operand, SpecialReg};

    /// The push-constant budget the translator plans for: Vulkan guarantees 128 bytes.
    pub const MAX_PUSH_CONSTANTS: u32 = 128;

    /// Byte offsets of a module's launch values in its launch block; `None` for a value that
    /// no function of the module reads. The 64-bit values come first, then the 32-bit ones,
    /// then the argument block (8-aligned). A launch too large for one Vulkan dispatch, or
    /// with partial work-groups, is several dispatches; they differ only in `group_base`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct LaunchLayout {
        /// `u64`: device address of the module's globals arena (when the module has one).
        pub globals_base: Option<u32>,
        /// `u64`: `%printfbuffer` (0 unless the host provides one).
        pub printf_buffer: Option<u32>,
        /// `u64`: device address of the dispatch's check block ([`crate::memcheck::block`]),
        /// in a checked translation ([`crate::Options::checked`]) only. Every dispatch of a
        /// launch gets the same block, so the first violation of the whole launch is the
        /// one recorded (spec-notes §70).
        pub check_block: Option<u32>,
        /// `u64`: device address of the launch's private *scratch* buffer, when the module's
        /// private arena lives there ([`super::ModuleLayout::scratch_stride`]): each
        /// invocation's arena is the slice at `scratch + flat index × stride`, the flat index
        /// counting the invocations of one dispatch (spec-notes §95).
        pub scratch: Option<u32>,
        /// `u64`: device address of the submission's *cancel word* (a `u32` the host, or
        /// the memory checker at its first violation, sets to stop the launch), in a
        /// cancellable translation ([`crate::Options::cancellable`]; kernels check it at
        /// their entry, spec-notes §100) and in a checked one of a module with a loop
        /// (spec-notes §91). The runtime writes it into each dispatch's push
        /// constants when it records the dispatch.
        pub cancel: Option<u32>,
        /// `u64 x3`: `%globaloffset`.
        pub global_offset: Option<u32>,
        /// `u64 x3`: `%globalsize`.
        pub global_size: Option<u32>,
        /// `u32 x3`: the `%groupid` of this dispatch's first work-group; `%groupid` is
        /// `WorkgroupId` plus it.
        pub group_base: Option<u32>,
        /// `u32 x3`: `%groupcount` (of the whole launch, not of one of its dispatches).
        pub group_count: Option<u32>,
        /// `u32`: `%workdim`.
        pub work_dim: Option<u32>,
        /// Start of the argument block of a kernel whose arguments fit
        /// ([`LaunchLayout::params_inline`]); otherwise the `u64` device address of a buffer
        /// holding them.
        pub params: u32,
        /// Size of the launch block, the push-constant range of every kernel of the module:
        /// what its largest inline argument block (or an argument buffer's address) needs,
        /// in whole 64-bit words, at least one.
        pub size: u32,
    }

    impl LaunchLayout {
        /// The launch block of `module`: a slot for each special register some function
        /// reads, for the globals arena's address when `globals_arena`, and when `checked`
        /// for the check block's address and the group base (a violation records
        /// `%groupid`), with `cancel` for the cancel word's address, and with `scratch` for
        /// the private scratch buffer's.
        pub fn of(
            module: &Module,
            globals_arena: bool,
            checked: bool,
            (cancel, scratch): (bool, bool),
        ) -> LaunchLayout {
            let mut used = [false; SpecialReg::ALL.len()];
            let bodies = module.functions.iter().filter_map(|f| f.body.as_deref());
            for inst in bodies.flatten() {
                for op in inst.ops.iter() {
                    if let Operand::Special { reg, .. } = op {
                        used[index(*reg)] = true;
                    }
                }
            }
            let reads = |r: SpecialReg| used[index(r)];
            let mut end = 0u32;
            let mut slot = |present: bool, bytes: u32| {
                present.then(|| {
                    let at = end;
                    end += bytes;
                    at
                })
            };
            let mut l = LaunchLayout {
                globals_base: slot(globals_arena, 8),
                printf_buffer: slot(reads(SpecialReg::PrintfBuffer), 8),
                check_block: slot(checked, 8),
                scratch: slot(scratch, 8),
                cancel: slot(cancel, 8),
                global_offset: slot(reads(SpecialReg::GlobalOffset), 24),
                global_size: slot(reads(SpecialReg::GlobalSize), 24),
                group_base: slot(checked || reads(SpecialReg::GroupId), 12),
                group_count: slot(reads(SpecialReg::GroupCount), 12),
                work_dim: slot(reads(SpecialReg::WorkDim), 4),
                params: 0,
                size: 0,
            };
            l.params = end.div_ceil(8) * 8;
            let kernels = module.functions.iter().filter(|f| f.is_kernel());
            let largest = kernels
                .map(|f| l.arguments_end(f.param_layout().1))
                .max()
                .unwrap_or(l.params);
            l.size = largest.max(8).div_ceil(8) * 8;
            l
        }

        /// Whether an argument block of `size` bytes travels inline in the push constants.
        pub fn params_inline(&self, size: u32) -> bool {
            self.params + size.div_ceil(4) * 4 <= MAX_PUSH_CONSTANTS
        }

        /// Where the arguments of a kernel with an argument block of `size` bytes end in the
        /// launch block (inline, or the address of their buffer).
        fn arguments_end(&self, size: u32) -> u32 {
            if self.params_inline(size) {
                self.params + size.div_ceil(4) * 4
            } else {
                self.params + 8
            }
        }
    }

    fn index(r: SpecialReg) -> usize {
        SpecialReg::ALL.iter().position(|&x| x == r).unwrap_or(0)
    }
}

/// Tag bits of generic addresses (design: tagged integers).
pub mod generic {
    /// Bits 63..62 = 0b10: a private address in bits 31..0.
    pub const PRIVATE_TAG: u64 = 0x8000_0000_0000_0000;
    /// Bits 63..62 = 0b11: a shared address in bits 31..0.
    pub const SHARED_TAG: u64 = 0xC000_0000_0000_0000;
    /// Mask of the tag bits.
    pub const TAG_MASK: u64 = 0xC000_0000_0000_0000;
}

/// Lock tables for the atomics Vulkan has no instruction for: every `.128b` atomic, and
/// 64-bit atomics on `.shared` memory (whose arena is an array of 32-bit words). Such an
/// access takes the lock its address hashes to, works on the location's 32-bit words, and
/// releases the lock (spec-notes §52).
pub mod locks {
    use super::{AddrSpace, DataType, Inst, MemOrder, MemSpace, Opcode};

    /// Locks in a module's globals-arena table (4 bytes each, zero-initialized).
    pub const GLOBAL_LOCKS: u32 = 1024;
    /// Locks in a module's shared-arena table (4 bytes each, zeroed at kernel entry).
    pub const SHARED_LOCKS: u32 = 64;
    /// A location's lock is `(address >> HASH_SHIFT) % locks`: one lock per 16-byte block,
    /// so a 64-bit and a 128-bit atomic that overlap take the same lock.
    pub const HASH_SHIFT: u32 = 4;

    /// Whether a `bits`-wide atomic access to `space` takes a lock.
    pub fn locked(bits: u32, space: MemSpace) -> bool {
        bits == 128 || (bits == 64 && space == MemSpace::Shared)
    }

    /// The width and address space of an atomic memory access (`iatom`, `fatom`, or `ld`/`st`
    /// with a memory order other than `.weak`); `None` for any other instruction.
    pub fn atomic_access(inst: &Inst) -> Option<(u32, AddrSpace)> {
        let atomic = match inst.op {
            Opcode::Iatom | Opcode::Fatom => true,
            Opcode::Ld | Opcode::St => !matches!(inst.q.order, None | Some(MemOrder::Weak)),
            _ => false,
        };
        if !atomic {
            return None;
        }
        let bits = inst.q.ty.unwrap_or(DataType::B32).bits();
        Some((bits, inst.q.space.unwrap_or(AddrSpace::Generic)))
    }
}

/// A value in the globals arena that the runtime fills in once the arena has an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Relocation {
    /// Offset in the arena of the value to write.
    pub offset: u64,
    /// Size in bytes of the value (the address is truncated to it, little-endian).
    pub size: u8,
    /// The value is `arena address + target + addend`.
    pub target: u64,
    /// Constant added to the address.
    pub addend: i64,
}

/// The memory layout of one module.
#[derive(Clone, Debug, Default)]
pub struct ModuleLayout {
    /// Arena offset of each module-scope variable, by [`GlobalId`].
    pub globals: Vec<u64>,
    /// Arena offset of each body-scope `.const` variable.
    pub local_consts: HashMap<(FuncId, LocalId), u64>,
    /// Shared-arena offset of each `.shared` variable: the same in every kernel that can
    /// reach it; variables that no kernel can reach together may overlap.
    pub shared: HashMap<(FuncId, LocalId), u32>,
    /// Private-arena offset of each `.private` variable.
    pub private: HashMap<(FuncId, LocalId), u32>,
    /// Size of the globals arena in bytes (at least 16).
    pub arena_size: u64,
    /// Alignment of the globals arena.
    pub arena_align: u64,
    /// Initial bytes of the arena (relocated values are zero here).
    pub image: Vec<u8>,
    /// Values to patch with arena addresses.
    pub relocations: Vec<Relocation>,
    /// Size of the shared arena in bytes as declared (a multiple of 8): the largest of
    /// [`kernel_shared_size`](Self::kernel_shared_size), at least 8 when the module has
    /// shared variables; 0 without. Each pipeline specializes the arena to its kernel's size.
    pub shared_size: u32,
    /// Bytes of the shared arena each kernel reserves, by function index (0 for functions
    /// that are not kernels): the end of the last `.shared` variable or lock table of the
    /// functions it can reach, rounded up to 8.
    pub kernel_shared_size: Vec<u32>,
    /// Size of the private arena in bytes (a multiple of 8).
    pub private_size: u32,
    /// When the private arena lives in a per-launch scratch buffer rather than in Private
    /// storage ([`PrivateHome`]): the bytes of it each invocation owns (the arena times the
    /// lanes of an invocation), a multiple of 16.
    pub scratch_stride: Option<u64>,
    /// Arena offset of the global lock table ([`locks::GLOBAL_LOCKS`] words), when some
    /// atomic of the module may need a lock on global memory.
    pub global_locks: Option<u64>,
    /// Shared-arena offset of the shared lock table ([`locks::SHARED_LOCKS`] words), when
    /// some atomic of the module may need a lock on shared memory.
    pub shared_locks: Option<u32>,
    /// The kernels (by function index) that reserve the shared lock table and zero it in
    /// their prologue: those that can reach an atomic that may take a shared lock.
    pub shared_lock_kernels: Vec<bool>,
    /// The launch block.
    pub launch: launch::LaunchLayout,
}

impl ModuleLayout {
    /// The arena offset of a variable of the globals arena (module `.global`/`.const` or
    /// body `.const`), or its shared/private offset.
    pub fn var_offset(&self, func: FuncId, var: crate::ir::VarRef) -> u64 {
        match var {
            crate::ir::VarRef::Global(g) => self.globals[g.0 as usize],
            crate::ir::VarRef::Local(l) => {
                let key = (func, l);
                if let Some(&o) = self.local_consts.get(&key) {
                    o
                } else if let Some(&o) = self.shared.get(&key) {
                    o as u64
                } else {
                    self.private.get(&key).copied().unwrap_or(0) as u64
                }
            }
        }
    }
}

/// A layout problem (too much shared or private memory for 32-bit addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    /// What overflowed.
    pub message: String,
    /// The variable that made it overflow.
    pub span: crate::span::Span,
}

/// The most bytes a program's globals arena may take: its `.global` and `.const` variables
/// with their alignment padding, plus the arena's own alignment (the runtime places the
/// arena at an address aligned to its most-aligned variable; spec-notes §76). The arena is
/// one device buffer and its initial image is built on the host.
pub const MAX_ARENA: u64 = 1 << 31;

/// `x` rounded up to a multiple of `a`; saturates (an overflow is then a layout error).
fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Whether an arena ending at `end`, aligned to `align`, fits [`MAX_ARENA`]; `span` is the
/// variable that would make it overflow.
fn check_arena(end: u64, align: u64, span: crate::span::Span) -> Result<(), LayoutError> {
    // Room for the global lock table, which may follow the variables.
    let locks = 4 * locks::GLOBAL_LOCKS as u64;
    if end.saturating_add(align).saturating_add(locks) > MAX_ARENA {
        return Err(LayoutError {
            message: format!(
                "the program's .global and .const variables, with their alignment, exceed the \
                 {} GiB globals arena",
                MAX_ARENA >> 30
            ),
            span,
        });
    }
    Ok(())
}

/// Lays out every memory variable of `module` (unchecked: [`layout_for`]). Cost: linear in the
/// module's size; allocates the layout and the arena's initial image. Errors:
/// [`LayoutError`] when the shared or private memory of a kernel does not fit 32-bit
/// addresses.
pub fn layout(module: &Module) -> Result<ModuleLayout, LayoutError> {
    layout_for(module, false, false, PrivateHome::default())
}

/// Where a translation puts the private arena (spec-notes §95).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrivateHome {
    /// Copies of the arena each invocation holds: the lanes of an invocation on virtual
    /// lanes, else 1.
    pub copies: u32,
    /// The most bytes of arena (all copies) an invocation keeps in Private storage
    /// ([`crate::Options::scratch_threshold`]); past it the arena lives in scratch.
    pub threshold: u32,
}

impl Default for PrivateHome {
    fn default() -> PrivateHome {
        PrivateHome {
            copies: 1,
            threshold: crate::options::DEFAULT_SCRATCH_THRESHOLD,
        }
    }
}

/// Whether a function of `module` has a loop: a `goto` to a label at or before it. Every
/// cycle of a control-flow graph whose other edges go forward (falling through, jumping
/// ahead) has such an edge, so a module without one ends in bounded time and needs no
/// cancel check (spec-notes §91). The recursion pass's state machines are loops too.
pub fn has_loop(module: &Module) -> bool {
    module.functions.iter().any(|f| {
        let body = f.body.as_deref().unwrap_or_default();
        body.iter().enumerate().any(|(i, inst)| {
            inst.op == Opcode::Goto
                && inst.ops.iter().any(|op| match op {
                    crate::ir::Operand::Label(l) => {
                        f.labels.get(l.0 as usize).is_some_and(|l| l.target <= i)
                    }
                    _ => false,
                })
        })
    })
}

/// The offsets and sizes of [`layout_for`], without the arena's initial image.
fn place(
    module: &Module,
    checked: bool,
    cancellable: bool,
    home: PrivateHome,
) -> Result<ModuleLayout, LayoutError> {
    let mut l = ModuleLayout {
        arena_align: 16,
        ..Default::default()
    };
    let mut arena_end = 0u64;
    let place = |size: u64, align: u64, end: &mut u64, max_align: &mut u64| {
        let off = align_up(*end, align);
        *end = off.saturating_add(size);
        *max_align = (*max_align).max(align);
        off
    };
    let mut arena_align = 16u64;
    let mut private_end = 0u64;
    let mut unused = 0u64;
    for g in &module.globals {
        if g.space == MemSpace::Private {
            // Only a pass makes one (the recursion lowering's stop flag): one per
            // work-item, in the private arena.
            let off = place(g.size, g.align, &mut private_end, &mut unused);
            check_32bit(private_end, "private", g.span)?;
            l.globals.push(off);
            continue;
        }
        l.globals
            .push(place(g.size, g.align, &mut arena_end, &mut arena_align));
        check_arena(arena_end, arena_align, g.span)?;
    }
    let mut has_shared = false;
    for (fi, f) in module.functions.iter().enumerate() {
        for (li, v) in f.locals.iter().enumerate() {
            let key = (FuncId(fi as u32), LocalId(li as u32));
            match v.space {
                MemSpace::Const | MemSpace::Global => {
                    let off = place(v.size, v.align, &mut arena_end, &mut arena_align);
                    check_arena(arena_end, arena_align, v.span)?;
                    l.local_consts.insert(key, off);
                }
                MemSpace::Shared => has_shared = true,
                MemSpace::Private => {
                    let off = place(v.size, v.align, &mut private_end, &mut unused);
                    check_32bit(private_end, "private", v.span)?;
                    l.private.insert(key, off as u32);
                }
            }
        }
    }
    let lock_use = lock_tables(module, has_shared);
    if lock_use.global {
        let size = 4 * locks::GLOBAL_LOCKS as u64;
        l.global_locks = Some(place(size, 4, &mut arena_end, &mut arena_align));
    }
    layout_shared(module, &lock_use, &mut l)?;
    l.arena_align = arena_align;
    l.arena_size = align_up(arena_end.max(16), 16);
    l.private_size = align_up(private_end, 8) as u32;
    let per_invocation = l.private_size as u64 * home.copies.max(1) as u64;
    l.scratch_stride =
        (per_invocation > home.threshold as u64).then(|| align_up(per_invocation, 16));
    let globals_arena = !l.globals.is_empty() || !l.local_consts.is_empty() || lock_use.global;
    let cancel = cancellable || (checked && has_loop(module));
    let scratch = l.scratch_stride.is_some();
    l.launch = launch::LaunchLayout::of(module, globals_arena, checked, (cancel, scratch));
    Ok(l)
}

/// Whether every memory variable of `module` fits its space ([`layout`]'s errors), without
/// building the arena's initial image: what the linker checks, so that `check` reports the
/// limits; the back end lays the module out once, after its passes.
pub fn check_limits(module: &Module) -> Result<(), LayoutError> {
    place(module, false, false, PrivateHome::default()).map(drop)
}

/// [`layout`] for a translation that is checked ([`crate::Options::checked`]) or not, and
/// cancellable ([`crate::Options::cancellable`]) or not: a checked one's launch block has
/// the check block's slot, a cancellable one (or a checked one of a module with a loop,
/// [`has_loop`]) the cancel word's; `home` says whether the private arena lives in
/// scratch, which then has a slot too. Cost and errors: those of [`layout`].
pub fn layout_for(
    module: &Module,
    checked: bool,
    cancellable: bool,
    home: PrivateHome,
) -> Result<ModuleLayout, LayoutError> {
    let mut l = place(module, checked, cancellable, home)?;
    fill_image(module, &mut l);
    Ok(l)
}

/// The arena's initial image and relocations: the initializers of `module`'s variables at
/// the offsets `l` gave them.
fn fill_image(module: &Module, l: &mut ModuleLayout) {
    l.image = vec![0; l.arena_size as usize];
    let mut inits: Vec<(u64, &Vec<InitItem>)> = Vec::new();
    for (g, off) in module.globals.iter().zip(&l.globals) {
        if let Some(init) = &g.init {
            inits.push((*off, init));
        }
    }
    for (fi, f) in module.functions.iter().enumerate() {
        for (li, v) in f.locals.iter().enumerate() {
            if let (Some(init), Some(off)) = (
                &v.init,
                l.local_consts.get(&(FuncId(fi as u32), LocalId(li as u32))),
            ) {
                inits.push((*off, init));
            }
        }
    }
    for (base, items) in inits {
        let mut at = base;
        for item in items {
            match *item {
                InitItem::Value { size, value } => {
                    let bytes = value.to_le_bytes();
                    l.image[at as usize..at as usize + size as usize]
                        .copy_from_slice(&bytes[..size as usize]);
                }
                InitItem::Zero(_) => {}
                InitItem::Symbol {
                    size,
                    symbol,
                    offset,
                } => match symbol {
                    SymbolRef::Global(GlobalId(g)) => l.relocations.push(Relocation {
                        offset: at,
                        size,
                        target: l.globals[g as usize],
                        addend: offset,
                    }),
                    SymbolRef::Function(f) => {
                        let id = function_address(f).wrapping_add(offset as u64);
                        let bytes = id.to_le_bytes();
                        l.image[at as usize..at as usize + size as usize]
                            .copy_from_slice(&bytes[..size as usize]);
                    }
                },
            }
            at += item.byte_len();
        }
    }
}

/// Which lock tables a module needs ([`lock_tables`]).
struct LockUse {
    /// Whether some atomic may take a lock on global memory.
    global: bool,
    /// By function index: whether it has an atomic that may take a lock on shared memory.
    shared_in: Vec<bool>,
    /// The first such atomic (where a layout error about the table points).
    shared_span: Option<crate::span::Span>,
}

/// Which lock tables `module` needs: whether a global one, and which functions have an
/// atomic needing a shared one. A generic address may point at shared memory only when the
/// module has shared variables (`has_shared`).
fn lock_tables(module: &Module, has_shared: bool) -> LockUse {
    let mut u = LockUse {
        global: false,
        shared_in: vec![false; module.functions.len()],
        shared_span: None,
    };
    for (fi, f) in module.functions.iter().enumerate() {
        for inst in f.body.iter().flatten() {
            let Some((bits, space)) = locks::atomic_access(inst) else {
                continue;
            };
            let (g, s) = match space.mem_space() {
                Some(ms) => (
                    ms == MemSpace::Global && locks::locked(bits, ms),
                    ms == MemSpace::Shared && locks::locked(bits, ms),
                ),
                None => (
                    locks::locked(bits, MemSpace::Global),
                    has_shared && locks::locked(bits, MemSpace::Shared),
                ),
            };
            u.global |= g;
            if s {
                u.shared_in[fi] = true;
                u.shared_span.get_or_insert(inst.span);
            }
        }
    }
    u
}

/// Lays out the shared arena per kernel. Every `.shared` variable (and the shared lock
/// table) gets one offset, valid in every kernel that can reach its function, so that the
/// code of a function called from several kernels finds it there. Items reached by more
/// kernels are placed first; each item goes at the first offset after every item already
/// placed in any of its kernels. A kernel's arena ends after the last item it reaches, so it
/// reserves only its own variables (two kernels of 20 KiB each need 20 KiB each, not 40),
/// and variables of functions that no kernel reaches are placed after one another from 0
/// without counting anywhere (their code never runs). Linear in the items placed per kernel, plus one walk of the
/// call graph per kernel when the module has shared variables.
fn layout_shared(
    module: &Module,
    locks: &LockUse,
    l: &mut ModuleLayout,
) -> Result<(), LayoutError> {
    let n = module.functions.len();
    l.kernel_shared_size = vec![0; n];
    l.shared_lock_kernels = vec![false; n];
    let declares = |f: &crate::ir::Function| f.locals.iter().any(|v| v.space == MemSpace::Shared);
    let uses: Vec<bool> = module
        .functions
        .iter()
        .zip(&locks.shared_in)
        .map(|(f, &lock)| declares(f) || lock)
        .collect();
    if !uses.contains(&true) {
        return Ok(());
    }
    // kernels[f]: the kernels that can reach function f (only for functions in `uses`);
    // kernels[n]: those that reach the lock table.
    let graph = crate::mid::calls::CallGraph::new(module);
    let mut kernels: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
    let mut stamps = graph.stamps();
    let roots = module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_kernel() && f.body.is_some());
    for (stamp, (k, _)) in roots.enumerate() {
        let mut locks_here = false;
        graph.walk(FuncId(k as u32), &mut stamps, stamp as u32 + 1, |f| {
            let f = f.0 as usize;
            if uses[f] {
                kernels[f].push(k as u32);
                locks_here |= locks.shared_in[f];
            }
        });
        if locks_here {
            kernels[n].push(k as u32);
            l.shared_lock_kernels[k] = true;
        }
    }
    // The items: (kernel list index, size, align, span, variable); the lock table last.
    type Item = (
        usize,
        u64,
        u64,
        crate::span::Span,
        Option<(FuncId, LocalId)>,
    );
    let mut items: Vec<Item> = Vec::new();
    for (fi, f) in module.functions.iter().enumerate() {
        for (li, v) in f.locals.iter().enumerate() {
            if v.space == MemSpace::Shared {
                let key = (FuncId(fi as u32), LocalId(li as u32));
                items.push((fi, v.size, v.align, v.span, Some(key)));
            }
        }
    }
    if let Some(span) = locks.shared_span {
        items.push((n, 4 * locks::SHARED_LOCKS as u64, 4, span, None));
    }
    items.sort_by_key(|it| std::cmp::Reverse(kernels[it.0].len()));
    // end[k]: where kernel k's arena ends so far; unreached items share `dead_end`.
    let mut end = vec![0u64; n];
    let mut dead_end = 0u64;
    for (list, size, align, span, key) in items {
        let ks = &kernels[list];
        let start = ks
            .iter()
            .map(|&k| end[k as usize])
            .max()
            .unwrap_or(dead_end);
        let off = align_up(start, align);
        let item_end = off.saturating_add(size);
        check_32bit(item_end, "shared", span)?;
        for &k in ks {
            end[k as usize] = item_end;
        }
        if ks.is_empty() {
            dead_end = item_end;
        }
        match key {
            Some(key) => {
                l.shared.insert(key, off as u32);
            }
            None => l.shared_locks = Some(off as u32),
        }
    }
    for (size, e) in l.kernel_shared_size.iter_mut().zip(&end) {
        *size = align_up(*e, 8) as u32;
    }
    // Dead items do not count: no pipeline runs their code.
    let largest = l.kernel_shared_size.iter().copied().max().unwrap_or(0);
    l.shared_size = largest.max(8);
    Ok(())
}

/// The "address" of a function: a small id (its index + 1; 0 is never a function).
pub fn function_address(f: FuncId) -> u64 {
    f.0 as u64 + 1
}

fn check_32bit(end: u64, what: &str, span: crate::span::Span) -> Result<(), LayoutError> {
    if end >= u32::MAX as u64 {
        return Err(LayoutError {
            message: format!(
                "the module's {what} variables need {end} bytes of 32-bit {what} address \
                 space; at most 4294967294 fit below its null address 0xffffffff (arch-2)"
            ),
            span,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_of(src: &str) -> (Module, ModuleLayout) {
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let m = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
        let l = layout(&m).unwrap();
        (m, l)
    }

    fn func(m: &Module, name: &str) -> usize {
        m.functions.iter().position(|f| f.name == name).unwrap()
    }

    /// The offset of the first shared variable of function `name`.
    fn offset(m: &Module, l: &ModuleLayout, name: &str) -> u32 {
        l.shared[&(FuncId(func(m, name) as u32), LocalId(0))]
    }

    #[test]
    fn each_kernel_reserves_only_the_shared_variables_it_reaches() {
        // @a and @b each have 20 KiB; both call @h (1 KiB); @dead is called by nobody.
        let (m, l) = layout_of(
            ".version 0.1;\n.target 100;\n\
             .function void @h() {\n  .shared .align 4 @s[1024];\n  return;\n}\n\
             .function void @dead() {\n  .shared .align 16 @d[64];\n  return;\n}\n\
             .kernel @a() {\n  .shared .align 8 @x[20480];\n  call void, @h();\n}\n\
             .kernel @b() {\n  .shared .align 4 @y[20484];\n  call void, @h();\n}\n\
             .kernel @none() {\n}\n",
        );
        // Reached by two kernels: first, at 0; then each kernel's own after it.
        assert_eq!(offset(&m, &l, "h"), 0);
        assert_eq!(offset(&m, &l, "a"), 1024);
        assert_eq!(offset(&m, &l, "b"), 1024);
        assert_eq!(l.kernel_shared_size[func(&m, "a")], 1024 + 20480);
        assert_eq!(
            l.kernel_shared_size[func(&m, "b")],
            1024 + 20488,
            "rounded up to 8"
        );
        assert_eq!(l.kernel_shared_size[func(&m, "none")], 0);
        assert_eq!(l.kernel_shared_size[func(&m, "h")], 0, "not a kernel");
        // Unreached: placed, counted nowhere.
        assert_eq!(offset(&m, &l, "dead"), 0);
        assert_eq!(l.shared_size, 1024 + 20488, "the largest kernel's");
        assert!(l.shared_locks.is_none());
    }

    #[test]
    fn the_shared_lock_table_goes_to_the_kernels_that_reach_a_locking_atomic() {
        let (m, l) = layout_of(
            ".version 0.1;\n.target 100;\n\
             .function void @bump() {\n  .shared .align 8 @c[8];\n  .reg .64b %o, %e, %n;\n\
               iatom.shared.cas.64b %o, [@c], %e, %n;\n  return;\n}\n\
             .kernel @locks() {\n  .shared .align 4 @x[100];\n  call void, @bump();\n}\n\
             .kernel @plain() {\n  .shared .align 4 @y[40];\n}\n",
        );
        let table = l.shared_locks.expect("a shared lock table");
        let (locks, plain) = (func(&m, "locks"), func(&m, "plain"));
        assert!(l.shared_lock_kernels[locks] && !l.shared_lock_kernels[plain]);
        // @locks: @c at 0, @x at 8, then the table after @x's 100 bytes (at 108).
        assert_eq!(offset(&m, &l, "bump"), 0);
        assert_eq!(offset(&m, &l, "locks"), 8);
        assert_eq!(table, 108);
        assert_eq!(
            l.kernel_shared_size[locks], 368,
            "108 + 256, rounded up to 8"
        );
        assert_eq!(
            offset(&m, &l, "plain"),
            0,
            "no kernel reaches @y and the others"
        );
        assert_eq!(l.kernel_shared_size[plain], 40);
    }
}
