//! [`Symbol`]: a module variable reached from the host — by its `.host_access` name, its
//! exported name, or its own name when only one variable of the program has it.

use crate::error::{short_type_name, Extent};
use crate::{Error, Module, Result};
use bytemuck::Pod;
use pisa_translator::reflect::GlobalInfo;
use std::ops::RangeBounds;

/// A module variable reachable from the host ([`Module::symbol`]). Reads and writes are
/// host copies through the mapped globals arena, at once: no submission, no wait for the
/// device (a kernel still running may be reading or writing the variable: wait for it
/// first). A `.const` variable is read-only: PISA's constant memory is initialized by the
/// module and never changes ([`Error::ReadOnly`]). A `Symbol` borrows its module and is
/// `Copy`.
///
/// `examples/scale.pisa` holds `.global .host_access("scale_factor") @factor[4] = { .32b 3 }`:
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Context, Error, Module};
/// # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
/// let ctx = Context::new()?;
/// let m = Module::load(&ctx, scale_pisa)?; // "examples/scale.pisa"
/// let factor = m.symbol("scale_factor")?;
/// assert_eq!((factor.name(), factor.space(), factor.size()), ("scale_factor".into(), "global", 4));
/// assert_eq!(factor.read::<u32>()?, [3]);
/// factor.write(&[5u32])?;
/// let data = ctx.buffer_from(&[1u32, 2])?;
/// m.dispatch("scale", 2, 2, (&data, 2u32))?;
/// assert_eq!(data.read()?, [5, 10]);
/// // Sizes are checked in elements of the type asked for, and errors name the symbol.
/// let e = factor.read::<u64>().unwrap_err();
/// assert!(matches!(e, Error::ElementSize { bytes: 4, elem_size: 8, .. }), "{e}");
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Symbol<'m> {
    module: &'m Module,
    global: &'m GlobalInfo,
}

impl std::fmt::Debug for Symbol<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbol")
            .field("name", &self.global.name)
            .field("host_access", &self.global.host_access)
            .field("space", &self.global.space)
            .field("size", &self.global.size)
            .field("address", &format_args!("{:#x}", self.address()))
            .finish()
    }
}

impl<'m> Symbol<'m> {
    pub(crate) fn new(module: &'m Module, global: &'m GlobalInfo) -> Symbol<'m> {
        Symbol { module, global }
    }

    /// The name the host knows it by: its `.host_access` name, else `@name` (allocates the
    /// string).
    pub fn name(&self) -> String {
        match &self.global.host_access {
            Some(h) => h.clone(),
            None => format!("@{}", self.global.name),
        }
    }

    /// The variable's space: `global` or `const`.
    pub fn space(&self) -> &str {
        &self.global.space
    }

    /// Whether the host may write it: not a `.const` variable.
    pub fn is_writable(&self) -> bool {
        self.global.space != "const"
    }

    /// How errors name it: `` symbol `factor` (.global, 4 bytes) ``.
    fn target(&self) -> String {
        format!(
            "symbol `{}` (.{}, {} bytes)",
            self.name(),
            self.global.space,
            self.global.size
        )
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.global.size
    }

    /// Its device address (in the module's globals arena): what a kernel that reads the
    /// variable through a pointer would be given.
    pub fn address(&self) -> u64 {
        self.module.arena_base() + self.global.offset
    }

    /// The number of `T`s it holds, or [`Error::ElementSize`] when its size is not a whole
    /// number of them.
    fn count<T: Pod>(&self, op: &'static str) -> Result<usize> {
        let n = std::mem::size_of::<T>() as u64;
        if n == 0 || self.global.size % n != 0 {
            return Err(Error::ElementSize {
                op,
                target: self.target(),
                bytes: self.global.size,
                elem: short_type_name::<T>(),
                elem_size: n,
            });
        }
        Ok((self.global.size / n) as usize)
    }

    /// The contents as `T`s. Cost: a host copy into a new vector; no submission, no wait.
    /// Errors: [`Error::ElementSize`] when the size is not a whole number of `T`s,
    /// `RuntimeError::DeviceBusy` while a submission that timed out still runs.
    pub fn read<T: Pod>(&self) -> Result<Vec<T>> {
        self.read_range(..)
    }

    /// The `T`s in `range` of the contents viewed as `T`s. Cost: as [`Symbol::read`].
    /// Errors: [`Error::ElementSize`], [`Error::Range`] when the range is not inside the
    /// variable, `RuntimeError::DeviceBusy`.
    pub fn read_range<T: Pod>(&self, range: impl RangeBounds<usize>) -> Result<Vec<T>> {
        let op = "Symbol::read of";
        let count = self.count::<T>(op)?;
        let (start, end) = crate::buffer::resolve_range::<T>(range, count, op, || self.target())?;
        let mut out = vec![T::zeroed(); end - start];
        let at = self.global.offset + (start * std::mem::size_of::<T>()) as u64;
        self.module
            .arena_read(at, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Overwrites the contents with `data`: a host copy, no submission, no wait. Errors:
    /// [`Error::ReadOnly`] for a `.const` variable, [`Error::ElementSize`] when the size is
    /// not a whole number of `T`s, [`Error::Length`] unless `data` is exactly the variable's
    /// size, `RuntimeError::DeviceBusy`.
    pub fn write<T: Pod>(&self, data: &[T]) -> Result<()> {
        let count = self.writable_count::<T>("Symbol::write to")?;
        if data.len() != count {
            return Err(Error::Length {
                op: "Symbol::write to",
                target: self.target(),
                expected: Extent::of::<T>(count as u64),
                given: Extent::of::<T>(data.len() as u64),
            });
        }
        self.write_at(0, data)
    }

    /// Overwrites the `T`s from element `start` with `data`: a host copy, as
    /// [`Symbol::write`]. Errors: [`Error::ReadOnly`], [`Error::ElementSize`],
    /// [`Error::Range`] when they do not fit, `RuntimeError::DeviceBusy`.
    pub fn write_at<T: Pod>(&self, start: usize, data: &[T]) -> Result<()> {
        let op = "Symbol::write_at to";
        let count = self.writable_count::<T>(op)?;
        let end = start.saturating_add(data.len());
        crate::buffer::resolve_range::<T>(start..end, count, op, || self.target())?;
        let at = self.global.offset + (start * std::mem::size_of::<T>()) as u64;
        self.module.arena_write(at, bytemuck::cast_slice(data))
    }

    fn writable_count<T: Pod>(&self, op: &'static str) -> Result<usize> {
        if !self.is_writable() {
            return Err(Error::ReadOnly {
                symbol: self.name(),
                space: self.global.space.clone(),
            });
        }
        self.count::<T>(op)
    }
}
