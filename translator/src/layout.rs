//! Memory layout decisions shared by the SPIR-V back end and the runtime.
//!
//! Owns: where every memory variable of a module lives —
//! - the *globals arena*: one buffer per loaded module holding every `.global`/`.const`
//!   variable (module scope and body `.const`), each at its alignment, with the initializer
//!   image and the relocations the runtime patches once the arena's address is known;
//! - the *shared arena*: one Workgroup array of 32-bit words for every `.shared` variable of
//!   the module, each at a module-wide static offset (so every kernel reserves the module's
//!   total; no function needs to be told where its variables are);
//! - the *private arena*: the same for `.private`, per invocation. PISA forbids nothing about
//!   recursion here, but the translator refuses it, so static frames are sound;
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
        /// reads, and for the globals arena's address when `globals_arena`.
        pub fn of(module: &Module, globals_arena: bool) -> LaunchLayout {
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
                global_offset: slot(reads(SpecialReg::GlobalOffset), 24),
                global_size: slot(reads(SpecialReg::GlobalSize), 24),
                group_base: slot(reads(SpecialReg::GroupId), 12),
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
    /// Shared-arena offset of each `.shared` variable.
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
    /// Size of the shared arena in bytes (a multiple of 8).
    pub shared_size: u32,
    /// Size of the private arena in bytes (a multiple of 8).
    pub private_size: u32,
    /// Arena offset of the global lock table ([`locks::GLOBAL_LOCKS`] words), when some
    /// atomic of the module may need a lock on global memory.
    pub global_locks: Option<u64>,
    /// Shared-arena offset of the shared lock table ([`locks::SHARED_LOCKS`] words), when
    /// some atomic of the module may need a lock on shared memory.
    pub shared_locks: Option<u32>,
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

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

/// Lays out every memory variable of `module`.
pub fn layout(module: &Module) -> Result<ModuleLayout, LayoutError> {
    let mut l = ModuleLayout {
        arena_align: 16,
        ..Default::default()
    };
    let mut arena_end = 0u64;
    let place = |size: u64, align: u64, end: &mut u64, max_align: &mut u64| {
        let off = align_up(*end, align);
        *end = off + size;
        *max_align = (*max_align).max(align);
        off
    };
    let mut arena_align = 16u64;
    for g in &module.globals {
        l.globals
            .push(place(g.size, g.align, &mut arena_end, &mut arena_align));
    }
    let (mut shared_end, mut private_end) = (0u64, 0u64);
    let mut unused = 0u64;
    for (fi, f) in module.functions.iter().enumerate() {
        for (li, v) in f.locals.iter().enumerate() {
            let key = (FuncId(fi as u32), LocalId(li as u32));
            match v.space {
                MemSpace::Const | MemSpace::Global => {
                    let off = place(v.size, v.align, &mut arena_end, &mut arena_align);
                    l.local_consts.insert(key, off);
                }
                MemSpace::Shared => {
                    let off = place(v.size, v.align, &mut shared_end, &mut unused);
                    check_32bit(shared_end, "shared", v.span)?;
                    l.shared.insert(key, off as u32);
                }
                MemSpace::Private => {
                    let off = place(v.size, v.align, &mut private_end, &mut unused);
                    check_32bit(private_end, "private", v.span)?;
                    l.private.insert(key, off as u32);
                }
            }
        }
    }
    let (global_locks, shared_locks) = lock_tables(module, shared_end > 0);
    if global_locks {
        let size = 4 * locks::GLOBAL_LOCKS as u64;
        l.global_locks = Some(place(size, 4, &mut arena_end, &mut arena_align));
    }
    if let Some(span) = shared_locks {
        let size = 4 * locks::SHARED_LOCKS as u64;
        let off = place(size, 4, &mut shared_end, &mut unused);
        check_32bit(shared_end, "shared", span)?;
        l.shared_locks = Some(off as u32);
    }
    l.arena_align = arena_align;
    l.arena_size = align_up(arena_end.max(16), 16);
    l.shared_size = align_up(shared_end, 8) as u32;
    l.private_size = align_up(private_end, 8) as u32;
    l.image = vec![0; l.arena_size as usize];
    let globals_arena = !l.globals.is_empty() || !l.local_consts.is_empty() || global_locks;
    l.launch = launch::LaunchLayout::of(module, globals_arena);

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
    Ok(l)
}

/// Which lock tables `module` needs: whether a global one, and the first atomic needing a
/// shared one. A generic address may point at shared memory only when the module has shared
/// variables (`has_shared`).
fn lock_tables(module: &Module, has_shared: bool) -> (bool, Option<crate::span::Span>) {
    let (mut global, mut shared) = (false, None);
    let insts = module.functions.iter().filter_map(|f| f.body.as_deref());
    for inst in insts.flatten() {
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
        global |= g;
        if s && shared.is_none() {
            shared = Some(inst.span);
        }
    }
    (global, shared)
}

/// The "address" of a function: a small id (its index + 1; 0 is never a function).
pub fn function_address(f: FuncId) -> u64 {
    f.0 as u64 + 1
}

fn check_32bit(end: u64, what: &str, span: crate::span::Span) -> Result<(), LayoutError> {
    if end >= u32::MAX as u64 {
        return Err(LayoutError {
            message: format!(
                "the module's {what} variables need more than 4 GiB of 32-bit {what} address space"
            ),
            span,
        });
    }
    Ok(())
}
