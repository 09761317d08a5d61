//! Memory accesses of one work-item, by address space: resolving an address of an
//! instruction's space (generic included) to a place, checking alignment (prog-5) and bounds,
//! and loading, storing or updating bytes there.

use crate::error::{undefined, Error, Result};
use crate::memory::{decode_generic, Fault, Generic, PRIVATE_TAG, SHARED_TAG, TAG_MASK};
use crate::operand::LaneCtx;
use crate::sanitize::{Check, Report, Target};
use pisa_translator::ir::{AddrSpace, MemSpace, VarRef};
use pisa_translator::memcheck::{
    AccessKind, Allocation, AllocationKind, Reason, Site, VariableName, Violation, WorkItem,
};

/// A resolved memory location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// A global (or const) address.
    Global(u64),
    /// A shared address.
    Shared(u32),
    /// A private address.
    Private(u32),
}

impl Place {
    fn addr(self) -> u64 {
        match self {
            Place::Global(a) => a,
            Place::Shared(a) | Place::Private(a) => a as u64,
        }
    }
}

/// One memory access as an instruction makes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// The instruction's space (generic is resolved on the tag).
    pub space: AddrSpace,
    /// The address, in the numbering of `space`.
    pub addr: u64,
    /// Bytes of the whole access.
    pub len: usize,
    /// The alignment it needs (prog-5 §5.1).
    pub align: usize,
    /// What it does.
    pub kind: AccessKind,
    /// The variable the address is written relative to (`[@var ...]`): the access must
    /// stay inside it.
    pub var: Option<VarRef>,
}

impl LaneCtx<'_, '_> {
    fn oob(&self, addr: u64, len: usize) -> Error {
        Error::OutOfBounds {
            addr,
            len: len as u64,
            at: self.span,
        }
    }

    /// Resolves the address of `a` and checks the whole access, in this order as the
    /// checked translation does: alignment (prog-5), bounds (the one allocation, arena or
    /// variable it may touch), then that it does not write `.const` memory. A bad access is
    /// an [`Error::Memory`] with every fact of the violation (the same the device's memory
    /// checker reports); an atomic access through a generic address into private memory is
    /// undefined behaviour (isa-8).
    pub fn place(&self, a: &Access) -> Result<Place> {
        let generic = a.space == AddrSpace::Generic;
        let (place, space) = match a.space {
            AddrSpace::Global => (Place::Global(a.addr), MemSpace::Global),
            AddrSpace::Const => (Place::Global(a.addr), MemSpace::Const),
            AddrSpace::Shared => (Place::Shared(a.addr as u32), MemSpace::Shared),
            AddrSpace::Private => (Place::Private(a.addr as u32), MemSpace::Private),
            AddrSpace::Generic => match decode_generic(a.addr) {
                Generic::Global(g) => (Place::Global(g), MemSpace::Global),
                Generic::Shared(s) => (Place::Shared(s), MemSpace::Shared),
                Generic::Private(_) if a.kind == AccessKind::Atomic => {
                    return Err(undefined(
                        self.span,
                        "atomic access through a generic address into private memory",
                    ))
                }
                Generic::Private(p) => (Place::Private(p), MemSpace::Private),
                Generic::Null => {
                    return Err(self.violation(a, MemSpace::Global, 0, Reason::OutOfBounds))
                }
                Generic::Invalid => {
                    let (space, at) = match a.addr & TAG_MASK {
                        PRIVATE_TAG => (MemSpace::Private, a.addr & 0xFFFF_FFFF),
                        SHARED_TAG => (MemSpace::Shared, a.addr & 0xFFFF_FFFF),
                        _ => (MemSpace::Global, a.addr),
                    };
                    return Err(self.violation(a, space, at, Reason::OutOfBounds));
                }
            },
            AddrSpace::Param => return Err(self.malformed("a parameter address outside ld.param")),
        };
        let at = place.addr();
        let fail = |reason| Err(self.violation(a, space, at, reason));
        if a.align > 1 && at % a.align as u64 != 0 {
            return fail(Reason::Misaligned {
                align: a.align as u32,
            });
        }
        // A 32-bit space's address that does not fit (wrapped pointer arithmetic).
        let wide = !generic && space.address_bits() == 32 && a.addr > u32::MAX as u64;
        if wide || !self.inside_var(a, space, at)? || !self.inside_space(place, a.len) {
            return fail(Reason::OutOfBounds);
        }
        if a.kind != AccessKind::Load
            && self.global.read_only(at)
            && matches!(place, Place::Global(_))
        {
            return fail(Reason::ReadOnly);
        }
        Ok(place)
    }

    /// Whether `[at, at + len)` stays inside the variable `a` is written relative to, when
    /// the access is held to it ([`LaneCtx::held_variable`]).
    fn inside_var(&self, a: &Access, space: MemSpace, at: u64) -> Result<bool> {
        let Some((_, var)) = a.var.and_then(|v| self.held_variable(v, space)) else {
            return Ok(true);
        };
        Ok(at >= var.start
            && (at - var.start)
                .checked_add(a.len as u64)
                .is_some_and(|e| e <= var.size))
    }

    /// The variable `v` as an allocation, when an access resolved to `space` through an
    /// address written relative to it is held to it: when the address is one of `v`'s own
    /// space (global and const share one).
    fn held_variable(&self, v: VarRef, space: MemSpace) -> Option<(VariableName, Allocation)> {
        let (start, vs) = self.var_address(v).ok()?;
        if vs != space && (vs.address_bits() != 64 || space.address_bits() != 64) {
            return None;
        }
        let (name, function, size) = match v {
            VarRef::Global(g) => {
                let g = &self.env.prepared.module.globals[g.0 as usize];
                (g.name.clone(), None, g.size)
            }
            VarRef::Local(l) => {
                let l = &self.func().locals[l.0 as usize];
                (l.name.clone(), Some(self.func().name.clone()), l.size)
            }
        };
        let kind = AllocationKind::Variable {
            name: name.clone(),
            function: function.clone(),
            space: vs,
        };
        Some((
            VariableName { name, function },
            Allocation { start, size, kind },
        ))
    }

    /// Whether `[place, place + len)` lies inside one allocation (global, const) or inside
    /// the arena (shared, private).
    fn inside_space(&self, place: Place, len: usize) -> bool {
        let arena = match place {
            Place::Global(g) => return self.global.contains(g, len as u64),
            Place::Shared(_) => self.shared.len(),
            Place::Private(_) => self.lane.private.len(),
        };
        (place.addr() as usize)
            .checked_add(len)
            .is_some_and(|end| end <= arena)
    }

    /// The [`Error::Memory`] of access `a`, resolved to `address` of `space`.
    fn violation(&self, a: &Access, space: MemSpace, address: u64, reason: Reason) -> Error {
        let env = self.env;
        let prepared = env.prepared;
        let kernel = &prepared.module.functions[env.kernel.0 as usize].name;
        let enqueued = env.launch.local_size.map(|x| x as u64);
        let held = a.var.and_then(|v| self.held_variable(v, space));
        let variable = held.as_ref().map(|(n, _)| n.clone());
        let nearest = match (held, space) {
            (Some((_, var)), _) => Some(var),
            (None, MemSpace::Global | MemSpace::Const) => {
                self.global.nearest(address, a.len as u64)
            }
            (None, s) => {
                let arena = match s {
                    MemSpace::Shared => self.shared.len(),
                    _ => self.lane.private.len(),
                } as u64;
                prepared.local_nearest(s, arena, address, a.len as u64)
            }
        };
        Error::Memory(Box::new(Violation {
            kernel: kernel.clone(),
            site: Site {
                function: self.func().name.clone(),
                span: (self.span.start, self.span.end),
                align: a.align as u32,
                variable,
                location: None,
            },
            work_item: WorkItem::new(
                env.group_id,
                self.lane.local_id,
                enqueued,
                env.launch.global_offset,
            ),
            space,
            generic: a.space == AddrSpace::Generic,
            access: a.kind,
            reason,
            address,
            size: a.len as u64,
            nearest,
            further: 0,
        }))
    }

    fn arena(&mut self, place: Place, len: usize) -> Result<&mut [u8]> {
        let (arena, a) = match place {
            Place::Shared(a) => (&mut *self.shared, a),
            Place::Private(a) => (&mut self.lane.private, a),
            Place::Global(a) => return Err(self.oob(a, len)),
        };
        let start = a as usize;
        match start.checked_add(len) {
            Some(end) if end <= arena.len() => Ok(&mut arena[start..end]),
            _ => Err(Error::OutOfBounds {
                addr: a as u64,
                len: len as u64,
                at: self.span,
            }),
        }
    }

    fn fault(&self, f: Fault, addr: u64, len: usize) -> Error {
        match f {
            Fault::OutOfBounds => self.oob(addr, len),
            Fault::ReadOnly => undefined(self.span, format!("store to .const memory at {addr:#x}")),
        }
    }

    /// The sanitizers' view of an access of `len` bytes at `place` (already checked by
    /// [`LaneCtx::place`]): `write` for a store or read-modify-write, `atomic` for an atomic
    /// access, `reads` when the initialization checker counts it as a read (loads and every
    /// atomic but an exchange, whose new value does not depend on the old), `var` the
    /// variable the address was written relative to. Nothing when no sanitizer runs.
    pub fn observe(
        &mut self,
        place: Place,
        len: usize,
        write: bool,
        atomic: bool,
        reads: bool,
        var: Option<VarRef>,
    ) {
        let Some(san) = self.env.san else { return };
        let who = self.who();
        match place {
            Place::Private(a) => {
                let init = &mut self.lane.private_init;
                if init.is_empty() {
                    return;
                }
                let (start, end) = (a as usize, (a as usize + len).min(init.len()));
                if write {
                    init[start..end].fill(true);
                } else if let Some(i) = init[start..end].iter().position(|&b| !b).filter(|_| reads)
                {
                    let addr = a as u64 + i as u64;
                    let variable = self.variable_name(var, MemSpace::Private, addr);
                    san.borrow_mut().report(
                        (Check::Init, (who.func, who.pc), (u32::MAX, 1)),
                        |s| Report {
                            check: Check::Init,
                            message: "read of private memory that nothing wrote in this launch"
                                .into(),
                            first: s.event(&who, Some(AccessKind::Load)),
                            second: None,
                            target: Target::Memory {
                                space: MemSpace::Private,
                                address: addr,
                                allocation: 0,
                                variable,
                            },
                            missing: Vec::new(),
                            count: 1,
                        },
                    );
                }
            }
            Place::Shared(a) => {
                let mut state = san.borrow_mut();
                if !(state.opts.race || state.opts.init) {
                    return;
                }
                state.shared_access(&who, a, len, write, atomic, reads, || {
                    self.variable_name(var, MemSpace::Shared, a as u64)
                });
            }
            Place::Global(a) => {
                let mut state = san.borrow_mut();
                if !state.opts.race {
                    return;
                }
                if let Some((start, size, name)) = self.global.allocation(a, len as u64) {
                    let variable = name.map(str::to_string);
                    state.global_access(&who, start, size, a - start, len, write, atomic, variable);
                }
            }
        }
    }

    /// The name of the variable at `addr` of `space` (`var` when the address is written
    /// relative to it), for a report.
    fn variable_name(&self, var: Option<VarRef>, space: MemSpace, addr: u64) -> Option<String> {
        if let Some((name, _)) = var.and_then(|v| self.held_variable(v, space)) {
            return Some(match name.function {
                Some(f) => format!("{} in @{f}", name.name),
                None => name.name,
            });
        }
        self.env.prepared.local_variable_at(space, addr)
    }

    /// Loads `len` bytes.
    pub fn load(&mut self, place: Place, len: usize) -> Result<Vec<u8>> {
        match place {
            Place::Global(a) => {
                let mut out = vec![0u8; len];
                self.global
                    .read(a, &mut out)
                    .map_err(|f| self.fault(f, a, len))?;
                Ok(out)
            }
            _ => Ok(self.arena(place, len)?.to_vec()),
        }
    }

    /// Stores `bytes`.
    pub fn store(&mut self, place: Place, bytes: &[u8]) -> Result<()> {
        self.update(place, bytes.len(), |_| Ok(bytes.to_vec()))
            .map(|_| ())
    }

    /// Replaces the `len` bytes at `place` by `f(old)` and returns the old bytes.
    pub fn update(
        &mut self,
        place: Place,
        len: usize,
        f: impl FnOnce(&[u8]) -> Result<Vec<u8>>,
    ) -> Result<Vec<u8>> {
        let span = self.span;
        let slot: &mut [u8] = match place {
            Place::Global(a) => match self.global.slice_mut(a, len as u64, true) {
                Ok(s) => s,
                Err(Fault::OutOfBounds) => {
                    return Err(Error::OutOfBounds {
                        addr: a,
                        len: len as u64,
                        at: span,
                    })
                }
                Err(Fault::ReadOnly) => {
                    return Err(undefined(span, format!("store to .const memory at {a:#x}")))
                }
            },
            _ => self.arena(place, len)?,
        };
        let old = slot.to_vec();
        let new = f(&old)?;
        if new.len() != slot.len() {
            return Err(crate::error::malformed(span, "a store of the wrong size"));
        }
        slot.copy_from_slice(&new);
        Ok(old)
    }
}
