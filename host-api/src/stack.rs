//! Stack overflows of modules with call cycles (docs/spec-notes.md §33): a work-item whose
//! call would nest more activations of a cycle's functions than the stack depth records
//! the fault in the module variable `pisa_translator::passes::recursion::FAULT_RECORD` of
//! the globals arena (the first fault's call site and work-item, and a count) and leaves
//! the cycle. After each launch of such a module the host reads the record, clears it, and
//! turns a fault into [`Error::StackOverflow`] naming the kernel, the call at its PISA line,
//! the work-item and the depth.
//!
//! Must not: decide what overflows (the translator's lowering does).

use crate::{Error, Launch, Module, Result};
use pisa_translator::memcheck::WorkItem;
use pisa_translator::passes::recursion::{record, RecursionInfo, StackOverflow};
use pisa_translator::reflect::KernelInfo;

/// A recorded launch of a module with call cycles, to finish once it has run.
pub(crate) struct Watch<'m> {
    module: &'m Module,
    info: &'m RecursionInfo,
    kernel: &'m KernelInfo,
    launch: Launch,
}

/// The watch of a launch of `kernel`, for a module with call cycles.
pub(crate) fn watch<'m>(
    module: &'m Module,
    kernel: &'m KernelInfo,
    launch: &Launch,
) -> Option<Watch<'m>> {
    let info = module.reflection().recursion.as_ref()?;
    Some(Watch {
        module,
        info,
        kernel,
        launch: *launch,
    })
}

fn u32_at(bytes: &[u8], at: u64) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]))
}

impl Watch<'_> {
    /// Reads and clears the fault record: `Ok` when no work-item overflowed, else
    /// [`Error::StackOverflow`] for the first.
    pub fn finish(self) -> Result<()> {
        let corrupt = |what: &str| {
            Error::Runtime(pisa_runtime::Error::InvalidArgument(format!(
                "the stack-overflow record of kernel `{}` is corrupt: {what}",
                self.kernel.name
            )))
        };
        let global = self
            .module
            .reflection()
            .globals
            .get(self.info.record as usize)
            .ok_or_else(|| corrupt("no record variable"))?;
        let mut bytes = vec![0u8; record::SIZE as usize];
        self.module.arena_read(global.offset, &mut bytes)?;
        let site = u32_at(&bytes, record::SITE);
        if site == 0 {
            return Ok(());
        }
        self.module
            .arena_write(global.offset, &[0u8; record::SIZE as usize])?;
        let count = u32_at(&bytes, record::COUNT).max(1);
        let site = self
            .info
            .sites
            .get(site as usize - 1)
            .ok_or_else(|| corrupt("unknown call"))?;
        let ids = |at: u64| std::array::from_fn(|c| u32_at(&bytes, at + 4 * c as u64));
        let work_item = WorkItem::new(
            ids(record::GROUP),
            ids(record::LOCAL),
            self.launch.local.size,
            self.launch.offset,
        );
        Err(Error::StackOverflow(Box::new(StackOverflow {
            kernel: self.kernel.name.clone(),
            site: site.clone(),
            work_item,
            depth: self.info.stack_depth,
            further: count as u64 - 1,
        })))
    }
}
