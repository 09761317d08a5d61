//! The simulated memories and the representation of addresses.
//!
//! | space | address | storage |
//! | --- | --- | --- |
//! | `.global`, `.const` | 64-bit, below 2^48, never 0 | the machine's allocations (host buffers, module variables) |
//! | `.shared` | 32-bit offset into the work-group's arena; null 0xFFFFFFFF | one zero-filled arena per work-group |
//! | `.private` | 32-bit offset into the work-item's arena; null 0xFFFFFFFF | one arena per work-item, a frame per call |
//! | `.param` | byte offset into the argument block | the `args` bytes of the dispatch |
//!
//! ## Generic addresses (implementation-defined, arch-2 / isa-4 `addrcast`)
//!
//! A generic address is 64 bits whose top two bits tag the space:
//!
//! | tag (bits 63:62) | space | value |
//! | --- | --- | --- |
//! | `00` | global or const | the global address itself |
//! | `10` | private | [`PRIVATE_TAG`] \| the 32-bit private address |
//! | `11` | shared | [`SHARED_TAG`] \| the 32-bit shared address |
//!
//! The null of private and shared (0xFFFFFFFF) casts to generic 0, and generic 0 casts back to
//! 0xFFFFFFFF. `isaddr` tests the tag only (so generic 0 counts as global). A private or
//! shared generic address whose bits 61:32 are not zero (pointer arithmetic that left the
//! 32-bit space) is out of bounds.

use pisa_translator::memcheck::{self, AllocationKind};
use std::collections::BTreeMap;

/// Tag of a generic address into private memory (bits 63:62 = `10`).
pub const PRIVATE_TAG: u64 = 0x8000_0000_0000_0000;
/// Tag of a generic address into shared memory (bits 63:62 = `11`).
pub const SHARED_TAG: u64 = 0xC000_0000_0000_0000;
/// Mask of the tag bits of a generic address.
pub const TAG_MASK: u64 = 0xC000_0000_0000_0000;
/// The null address of the 32-bit spaces.
pub const NULL32: u64 = 0xFFFF_FFFF;

/// The first address [`GlobalMemory`] hands out: small integers are never valid addresses.
const FIRST_ADDRESS: u64 = 0x1_0000;
/// Unallocated bytes left after each allocation, so that running off its end is an error.
const GUARD: u64 = 256;
/// Allocations end below this address (addresses must fit in 48 bits).
const ADDRESS_LIMIT: u64 = 1 << 48;

/// Where a generic address points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generic {
    /// Generic 0.
    Null,
    /// A global (or const) address.
    Global(u64),
    /// A private address.
    Private(u32),
    /// A shared address.
    Shared(u32),
    /// Not a valid generic address (tag `01`, or a private/shared one beyond 32 bits).
    Invalid,
}

/// The generic address of a global/const address.
pub fn generic_from_global(addr: u64) -> u64 {
    addr
}

/// The generic address of a private or shared address (`shared` selects the tag); the
/// space's null becomes generic 0.
pub fn generic_from_local(addr: u32, shared: bool) -> u64 {
    if addr as u64 == NULL32 {
        0
    } else if shared {
        SHARED_TAG | addr as u64
    } else {
        PRIVATE_TAG | addr as u64
    }
}

/// Decodes a generic address.
pub fn decode_generic(g: u64) -> Generic {
    if g == 0 {
        return Generic::Null;
    }
    let low = g & 0xFFFF_FFFF;
    let middle_clear = g & !TAG_MASK & !0xFFFF_FFFF == 0;
    match g & TAG_MASK {
        0 => Generic::Global(g),
        PRIVATE_TAG if middle_clear => Generic::Private(low as u32),
        SHARED_TAG if middle_clear => Generic::Shared(low as u32),
        _ => Generic::Invalid,
    }
}

/// Why a global-memory access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Not inside one allocation.
    OutOfBounds,
    /// A device store to a module `.const` variable.
    ReadOnly,
}

/// One allocation of the global address space.
#[derive(Clone, Debug)]
struct Allocation {
    data: Vec<u8>,
    /// Module `.const` variables: the device may not store to them (the host may).
    read_only: bool,
    /// What it is, for reports of bad accesses.
    kind: AllocationKind,
}

/// The machine's 64-bit global address space: non-overlapping allocations, each followed by
/// an unallocated guard gap.
#[derive(Clone, Debug)]
pub(crate) struct GlobalMemory {
    allocs: BTreeMap<u64, Allocation>,
    next: u64,
}

impl GlobalMemory {
    /// An empty address space.
    pub fn new() -> GlobalMemory {
        GlobalMemory {
            allocs: BTreeMap::new(),
            next: FIRST_ADDRESS,
        }
    }

    /// Allocates `size` zero bytes aligned to `align` (rounded up to a power of two, at least
    /// 1) and returns the address; `kind` says what it is in reports.
    ///
    /// # Panics
    /// When the 48-bit address space is exhausted.
    pub fn alloc(&mut self, size: u64, align: u64, read_only: bool, kind: AllocationKind) -> u64 {
        let align = align.max(1).checked_next_power_of_two().unwrap_or(1 << 47);
        let start = self.next.div_ceil(align).saturating_mul(align);
        let end = start.saturating_add(size);
        assert!(
            end < ADDRESS_LIMIT,
            "pisa-reference: the simulated 48-bit address space is exhausted"
        );
        let data = vec![0u8; size as usize];
        self.allocs.insert(
            start,
            Allocation {
                data,
                read_only,
                kind,
            },
        );
        self.next = end + GUARD;
        start
    }

    /// The allocation holding `[addr, addr + len)` and the offset of `addr` in it.
    fn locate(&self, addr: u64, len: u64) -> Option<(u64, u64)> {
        let (&start, a) = self.allocs.range(..=addr).next_back()?;
        let off = addr - start;
        let end = off.checked_add(len)?;
        (end <= a.data.len() as u64).then_some((start, off))
    }

    /// The allocation holding `[addr, addr + len)`: its start, its size, and the name of the
    /// module variable it is (`None` for a buffer).
    pub fn allocation(&self, addr: u64, len: u64) -> Option<(u64, u64, Option<&str>)> {
        let (start, _) = self.locate(addr, len)?;
        let a = &self.allocs[&start];
        let name = match &a.kind {
            AllocationKind::Variable { name, .. } => Some(name.as_str()),
            _ => None,
        };
        Some((start, a.data.len() as u64, name))
    }

    /// Whether `[addr, addr + len)` lies inside one allocation.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        self.locate(addr, len).is_some()
    }

    /// Whether `addr` lies in a read-only allocation.
    pub fn read_only(&self, addr: u64) -> bool {
        self.locate(addr, 1)
            .is_some_and(|(start, _)| self.allocs[&start].read_only)
    }

    /// The allocation nearest to `[addr, addr + len)`: the one before it or the one after.
    pub fn nearest(&self, addr: u64, len: u64) -> Option<memcheck::Allocation> {
        let as_report = |(&start, a): (&u64, &Allocation)| memcheck::Allocation {
            start,
            size: a.data.len() as u64,
            kind: a.kind.clone(),
        };
        let around: Vec<memcheck::Allocation> = self
            .allocs
            .range(..=addr)
            .next_back()
            .into_iter()
            .chain(self.allocs.range(addr.saturating_add(1)..).next())
            .map(as_report)
            .collect();
        memcheck::nearest(&around, addr, len).cloned()
    }

    /// Copies `out.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Fault> {
        if out.is_empty() {
            return Ok(());
        }
        let (start, off) = self
            .locate(addr, out.len() as u64)
            .ok_or(Fault::OutOfBounds)?;
        let off = off as usize;
        out.copy_from_slice(&self.allocs[&start].data[off..off + out.len()]);
        Ok(())
    }

    /// The bytes `[addr, addr + len)` for writing; `device` accesses may not touch read-only
    /// allocations.
    pub fn slice_mut(&mut self, addr: u64, len: u64, device: bool) -> Result<&mut [u8], Fault> {
        if len == 0 {
            return Ok(&mut []);
        }
        let (start, off) = self.locate(addr, len).ok_or(Fault::OutOfBounds)?;
        let a = self.allocs.get_mut(&start).ok_or(Fault::OutOfBounds)?;
        if device && a.read_only {
            return Err(Fault::ReadOnly);
        }
        let off = off as usize;
        Ok(&mut a.data[off..off + len as usize])
    }

    /// Copies `bytes` to `addr`.
    pub fn write(&mut self, addr: u64, bytes: &[u8], device: bool) -> Result<(), Fault> {
        self.slice_mut(addr, bytes.len() as u64, device)?
            .copy_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_guarded() {
        let mut m = GlobalMemory::new();
        let a = m.alloc(10, 64, false, AllocationKind::Buffer);
        let b = m.alloc(4, 4, true, AllocationKind::Buffer);
        assert_eq!(a % 64, 0);
        assert!(a != 0 && b >= a + 10 + GUARD);
        assert!(m.write(a, &[1; 10], true).is_ok());
        assert_eq!(m.write(a + 8, &[1; 4], true), Err(Fault::OutOfBounds));
        assert_eq!(m.write(b, &[1; 4], true), Err(Fault::ReadOnly));
        assert!(m.write(b, &[1; 4], false).is_ok());
        let mut out = [0u8; 4];
        assert!(m.read(b, &mut out).is_ok());
        assert_eq!(out, [1; 4]);
        assert_eq!(m.read(a + 10, &mut out), Err(Fault::OutOfBounds));
        assert_eq!(m.read(a - 1, &mut out), Err(Fault::OutOfBounds));
        assert!(m.contains(a + 9, 1) && !m.contains(a + 9, 2));
        assert!(m.read_only(b) && !m.read_only(a));
        assert_eq!(m.nearest(a + 20, 4).map(|n| n.start), Some(a));
        assert_eq!(m.nearest(b - 8, 4).map(|n| n.start), Some(b));
    }

    #[test]
    fn generic_tags_round_trip() {
        assert_eq!(generic_from_local(0x10, false), 0x8000_0000_0000_0010);
        assert_eq!(generic_from_local(0x10, true), 0xC000_0000_0000_0010);
        assert_eq!(generic_from_local(0xFFFF_FFFF, true), 0);
        assert_eq!(decode_generic(0), Generic::Null);
        assert_eq!(
            decode_generic(0x8000_0000_0000_0010),
            Generic::Private(0x10)
        );
        assert_eq!(decode_generic(0xC000_0000_0000_0010), Generic::Shared(0x10));
        assert_eq!(decode_generic(0x8000_0001_0000_0010), Generic::Invalid);
        assert_eq!(decode_generic(0x4000_0000_0000_0010), Generic::Invalid);
        assert_eq!(decode_generic(0x1_0000), Generic::Global(0x1_0000));
    }
}
