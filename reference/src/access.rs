//! Memory accesses of one work-item, by address space: resolving an address of an
//! instruction's space (generic included) to a place, checking alignment (prog-5) and bounds,
//! and loading, storing or updating bytes there.

use crate::error::{undefined, Error, Result};
use crate::memory::{decode_generic, Fault, Generic};
use crate::operand::LaneCtx;
use pisa_translator::ir::AddrSpace;

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

impl LaneCtx<'_, '_> {
    fn oob(&self, addr: u64, len: usize) -> Error {
        Error::OutOfBounds {
            addr,
            len: len as u64,
            at: self.span,
        }
    }

    /// Resolves `addr` of `space` for an access of `len` bytes that must be aligned to
    /// `align` bytes. `atomic` accesses through a generic address must reach global or
    /// shared memory (isa-8).
    pub fn place(
        &self,
        space: AddrSpace,
        addr: u64,
        len: usize,
        align: usize,
        atomic: bool,
    ) -> Result<Place> {
        let narrow = |a: u64| -> Result<u32> { u32::try_from(a).map_err(|_| self.oob(a, len)) };
        let place = match space {
            AddrSpace::Global | AddrSpace::Const => Place::Global(addr),
            AddrSpace::Shared => Place::Shared(narrow(addr)?),
            AddrSpace::Private => Place::Private(narrow(addr)?),
            AddrSpace::Generic => match decode_generic(addr) {
                Generic::Global(a) => Place::Global(a),
                Generic::Shared(a) => Place::Shared(a),
                Generic::Private(_) if atomic => {
                    return Err(undefined(
                        self.span,
                        "atomic access through a generic address into private memory",
                    ))
                }
                Generic::Private(a) => Place::Private(a),
                Generic::Null | Generic::Invalid => return Err(self.oob(addr, len)),
            },
            AddrSpace::Param => return Err(self.malformed("a parameter address outside ld.param")),
        };
        if align > 1 && place.addr() % align as u64 != 0 {
            return Err(undefined(
                self.span,
                format!(
                    "access of {len} bytes at {:#x} not aligned to {align}",
                    place.addr()
                ),
            ));
        }
        Ok(place)
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
