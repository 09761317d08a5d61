//! The host side of the sub-group check (docs/spec-notes.md §105): on a device whose
//! pipelines cannot require a sub-group size, kernels on virtual lanes check at entry that
//! their hardware sub-group is full and as wide as the width they were translated for, and
//! record a failure in the module variable `pisa_translator::reflect::SUBGROUP_FAULT`.
//! After each launch of such a module the host reads the record, clears it, and turns a
//! failure into [`Error::SubgroupSize`].
//!
//! Must not: decide what the kernel checks (the translator's virtual lanes do).

use crate::{Error, Module, Result};
use pisa_translator::reflect::{KernelInfo, SubgroupCheck};

/// A recorded launch of a module whose kernels check their sub-groups.
pub(crate) struct Watch<'m> {
    module: &'m Module,
    check: SubgroupCheck,
    kernel: &'m KernelInfo,
}

/// The watch of a launch of `kernel`, for a module whose kernels check their sub-groups.
pub(crate) fn watch<'m>(module: &'m Module, kernel: &'m KernelInfo) -> Option<Watch<'m>> {
    let check = module.reflection().subgroup_check?;
    Some(Watch {
        module,
        check,
        kernel,
    })
}

impl Watch<'_> {
    /// Reads and clears the record: `Ok` when every sub-group passed the check, else
    /// [`Error::SubgroupSize`] with what a failing one saw.
    pub fn finish(self) -> Result<()> {
        let mut bytes = [0u8; 8];
        self.module.arena_read(self.check.record, &mut bytes)?;
        let word =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let (size, active) = (word(0), word(4));
        if size == 0 {
            return Ok(());
        }
        self.module.arena_write(self.check.record, &[0u8; 8])?;
        Err(Error::SubgroupSize {
            kernel: self.kernel.name.clone(),
            expected: self.check.hardware_subgroup_size,
            size,
            active,
        })
    }
}
