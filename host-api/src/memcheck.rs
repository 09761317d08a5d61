//! The host side of the memory checker ([`pisa_translator::memcheck`]).
//!
//! When a launch of a checked translation is recorded (by a dispatch or into a
//! [`Stream`](crate::Stream)), `prepare` builds the allocation table —
//! every live buffer of the context except the module's globals arena, and every variable of
//! that arena on its own (`.const` ones read-only) — sorts it, uploads it with a zeroed
//! violation record in an internal buffer (not itself in the table), and puts that buffer's
//! address in the launch block's check slot. Once the submission has been waited for,
//! `Check::finish` reads the record back and turns a violation into
//! [`Error::MemoryViolation`]: the instruction
//! (from the reflection's site table), the work-item, and the allocation nearest to the
//! access, named by the kernel argument that points into it or by its variable.
//!
//! Without checking, the host still refuses what it knows without the device: an argument
//! that is a buffer of another context (`ArgSink`, [`Error::ForeignBuffer`]).

use crate::{Error, Result};
use crate::{Launch, Module};
use pisa_translator::ir::MemSpace;
use pisa_translator::memcheck::{
    block, code, nearest, Allocation, AllocationKind, CheckInfo, VariableName, Violation, WorkItem,
};
use pisa_translator::reflect::KernelInfo;

/// A checked launch on its way: its check block, the allocations of its table, and what
/// a report of its violation names (kernel, launch, argument block).
pub(crate) struct MemoryCheck<'m> {
    info: &'m CheckInfo,
    block: pisa_runtime::Buffer,
    table: Vec<Allocation>,
    private_size: u64,
    kernel: &'m KernelInfo,
    launch: Launch,
    arg_block: Vec<u8>,
}

/// Env variable: `1` translates every module loaded through the host API (and `pisa-vk
/// run`) checked ([`pisa_translator::Options::checked`]).
pub const CHECKED_ENV: &str = "PISA_VK_CHECKED";

/// Whether `PISA_VK_CHECKED` asks for checking (`1`, `true`, `yes`, `on`); another value
/// than those and `0`/`false`/`no`/`off` is an error naming the variable.
pub fn checked_from_env() -> Result<bool> {
    Ok(pisa_runtime::parse_bool_env(
        CHECKED_ENV,
        std::env::var(CHECKED_ENV).ok(),
    )?)
}

/// For a checked module, builds and uploads the check block of a launch of `kernel` with
/// `arg_block` and puts its address in `push` (the launch block every dispatch of the launch
/// starts from, so that they share the block: a launch split into several dispatches
/// records its first violation once and counts all); `None` for an unchecked module. The
/// table lists the context's buffers alive now, when the launch is recorded.
pub(crate) fn prepare<'m>(
    module: &'m Module,
    kernel: &'m KernelInfo,
    launch: &Launch,
    arg_block: &[u8],
    push: &mut [u8],
) -> Result<Option<Check<'m>>> {
    let memory = prepare_memory(module, kernel, launch, arg_block, push)?;
    let stack = crate::stack::watch(module, kernel, launch);
    let subgroups = crate::subgroup_check::watch(module, kernel);
    Ok(
        (memory.is_some() || stack.is_some() || subgroups.is_some()).then_some(Check {
            memory,
            stack,
            subgroups,
        }),
    )
}

/// What the host reads back after a launch: a checked module's violation record, a
/// module with call cycles' stack-overflow record (`crate::stack`), the sub-group check's
/// record (`crate::subgroup_check`).
pub(crate) struct Check<'m> {
    memory: Option<MemoryCheck<'m>>,
    stack: Option<crate::stack::Watch<'m>>,
    subgroups: Option<crate::subgroup_check::Watch<'m>>,
}

impl Check<'_> {
    /// The check block of a checked launch, which the submission must keep alive.
    pub fn block(&self) -> Option<&pisa_runtime::Buffer> {
        self.memory.as_ref().map(|m| &m.block)
    }

    /// Reads the records of the finished launch: [`Error::SubgroupSize`] first (nothing
    /// ran), then [`Error::MemoryViolation`], then [`Error::StackOverflow`].
    pub fn finish(self) -> Result<()> {
        if let Some(s) = self.subgroups {
            s.finish()?;
        }
        if let Some(m) = self.memory {
            m.finish()?;
        }
        match self.stack {
            Some(s) => s.finish(),
            None => Ok(()),
        }
    }
}

/// The check block of a checked module's launch.
fn prepare_memory<'m>(
    module: &'m Module,
    kernel: &'m KernelInfo,
    launch: &Launch,
    arg_block: &[u8],
    push: &mut [u8],
) -> Result<Option<MemoryCheck<'m>>> {
    let Some(info) = &module.reflection().checked else {
        return Ok(None);
    };
    let Some(slot) = module.reflection().launch.check_block else {
        return Err(Error::Runtime(pisa_runtime::Error::InvalidArgument(
            "a checked module's launch block has no check block slot".to_string(),
        )));
    };
    let rt = module.context().runtime();
    let arena_buffer = module.arena_buffer().device_address();
    let arena = module.arena_base();
    let mut table: Vec<Allocation> = rt
        .live_buffers()
        .into_iter()
        .filter(|b| b.address != arena_buffer)
        .map(|b| Allocation {
            start: b.address,
            size: b.size,
            kind: AllocationKind::Buffer,
        })
        .collect();
    table.extend(
        info.variables
            .iter()
            .filter(|v| matches!(v.space, MemSpace::Global | MemSpace::Const))
            .map(|v| Allocation {
                start: arena + v.offset,
                size: v.size,
                kind: AllocationKind::Variable {
                    name: v.name.clone(),
                    function: v.function.clone(),
                    space: v.space,
                },
            }),
    );
    table.sort_by_key(|a| (a.start, a.size));
    let entries = table.len() + 1;
    let mut bytes = vec![0u8; block::size(entries) as usize];
    put(
        &mut bytes,
        block::TABLE_LEN,
        &(entries as u32).to_le_bytes(),
    );
    // Entry 0 is the sentinel [0, 0): zeros already.
    for (i, a) in table.iter().enumerate() {
        put_entry(
            &mut bytes,
            block::TABLE + block::ENTRY_SIZE * (i as u64 + 1),
            a,
        );
    }
    // Unused hot entries stay [0, 0), which holds no access.
    for (i, a) in hot_entries(&table, kernel, arg_block)
        .into_iter()
        .enumerate()
    {
        if let Some(a) = a {
            put_entry(&mut bytes, block::HOT + block::ENTRY_SIZE * i as u64, a);
        }
    }
    let buffer = rt.create_internal_buffer(bytes.len() as u64)?;
    buffer.write(0, &bytes)?;
    put(push, slot as u64, &buffer.device_address().to_le_bytes());
    Ok(Some(MemoryCheck {
        info,
        block: buffer,
        table,
        private_size: module.reflection().private_size as u64,
        kernel,
        launch: *launch,
        arg_block: arg_block.to_vec(),
    }))
}

/// The check block's hot entries: for each of the first [`block::HOT_ENTRIES`] 8-byte
/// arguments of `kernel` in `arg_block`, in order, the allocation of `table` it points
/// into (else the one it points just past the end of: a kernel may index back from
/// there), or `None` (the entry stays the empty `[0, 0)`). Entry k is the argument's
/// own: the checked translation compares an address computed from the k-th 8-byte
/// parameter with entry k alone.
fn hot_entries<'t>(
    table: &'t [Allocation],
    kernel: &KernelInfo,
    arg_block: &[u8],
) -> Vec<Option<&'t Allocation>> {
    kernel
        .params
        .iter()
        .filter(|p| p.size == 8)
        .take(block::HOT_ENTRIES as usize)
        .map(|p| {
            let at = p.offset as usize;
            let bytes = arg_block.get(at..at + 8)?;
            let value = u64::from_le_bytes(bytes.try_into().ok()?);
            let within = |a: &&Allocation, end_too: bool| {
                a.start <= value
                    && (value - a.start < a.size || end_too && value - a.start == a.size)
            };
            (table.iter().find(|a| within(a, false)))
                .or_else(|| table.iter().find(|a| a.size > 0 && within(a, true)))
        })
        .collect()
}

/// Writes `a` as a table entry at byte `at`: its start, then its end with
/// [`block::READ_ONLY`] for a `.const` variable.
fn put_entry(bytes: &mut [u8], at: u64, a: &Allocation) {
    let mut end = a.start.saturating_add(a.size);
    if matches!(
        a.kind,
        AllocationKind::Variable {
            space: MemSpace::Const,
            ..
        }
    ) {
        end |= block::READ_ONLY;
    }
    put(bytes, at, &a.start.to_le_bytes());
    put(bytes, at + 8, &end.to_le_bytes());
}

fn put(bytes: &mut [u8], at: u64, v: &[u8]) {
    bytes[at as usize..at as usize + v.len()].copy_from_slice(v);
}

fn u32_at(b: &[u8], at: u64) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

/// `e`, with a [`RuntimeError::Timeout`](crate::RuntimeError::Timeout) of work that had
/// checked launches (`checked`) marked so: its message then gives a checked kernel's hint.
pub(crate) fn mark_checked(e: pisa_runtime::Error, checked: bool) -> pisa_runtime::Error {
    match e {
        pisa_runtime::Error::Timeout {
            seconds,
            what,
            compiled,
            checked: before,
            stopped,
        } => pisa_runtime::Error::Timeout {
            seconds,
            what,
            compiled,
            checked: before || checked,
            stopped,
        },
        other => other,
    }
}

/// Reads the records of the finished launches `checks` in their order: `Ok` when none had
/// a bad access, else [`Error::MemoryViolation`] describing the first of the first launch
/// that had one.
pub(crate) fn finish_all(checks: Vec<Check<'_>>) -> Result<()> {
    checks.into_iter().try_for_each(Check::finish)
}

impl MemoryCheck<'_> {
    /// Reads the violation record of the finished launch: `Ok` when no access failed,
    /// else [`Error::MemoryViolation`] describing the first.
    pub fn finish(self) -> Result<()> {
        let (k, launch, arg_block) = (self.kernel, &self.launch, &self.arg_block[..]);
        let mut record = vec![0u8; block::RECORD_SIZE as usize];
        self.block.read(0, &mut record)?;
        let count = u32_at(&record, block::COUNT);
        if count == 0 {
            return Ok(());
        }
        let site_index = u32_at(&record, block::SITE) as usize;
        let corrupt = |what: String| {
            Error::Runtime(pisa_runtime::Error::InvalidArgument(format!(
                "the memory checker's record of kernel `{}` is corrupt: {what}",
                k.name
            )))
        };
        let site = self
            .info
            .sites
            .get(site_index)
            .ok_or_else(|| corrupt(format!("instruction {site_index}")))?;
        let word = u32_at(&record, block::CODE);
        let (space, generic, access, reason) =
            code::unpack(word, site.align).ok_or_else(|| corrupt(format!("code {word:#x}")))?;
        let raw = u64::from_le_bytes(
            record[block::ADDRESS as usize..block::ADDRESS as usize + 8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        let address = match space {
            MemSpace::Shared | MemSpace::Private if generic => raw & 0xFFFF_FFFF,
            _ => raw,
        };
        let size = u32_at(&record, block::SIZE) as u64;
        let ids = |at: u64| std::array::from_fn(|c| u32_at(&record, at + 4 * c as u64));
        let work_item = WorkItem::new(
            ids(block::GROUP_ID),
            ids(block::LOCAL_ID),
            launch.local.size,
            launch.offset,
        );
        let near = match space {
            MemSpace::Global | MemSpace::Const => match &site.variable {
                Some(var) => self.table.iter().find(|a| var.is(a)).cloned(),
                None => nearest(&self.table, address, size).cloned(),
            },
            s => self.local_nearest(k, s, site.variable.as_ref(), address, size),
        };
        let mut v = Violation {
            kernel: k.name.clone(),
            site: site.clone(),
            work_item,
            space,
            generic,
            access,
            reason,
            address,
            size,
            nearest: near,
            further: count as u64 - 1,
        };
        v.name_arguments(&k.params, arg_block);
        Err(Error::MemoryViolation(Box::new(v)))
    }

    /// The `.shared` (of the kernels that reach them) or `.private` variable `var` the
    /// access is held to, or the variable nearest to it, else the arena as a whole.
    fn local_nearest(
        &self,
        k: &KernelInfo,
        s: MemSpace,
        var: Option<&VariableName>,
        address: u64,
        size: u64,
    ) -> Option<Allocation> {
        let vars: Vec<Allocation> = self
            .info
            .variables
            .iter()
            .filter(|v| v.space == s && (s != MemSpace::Shared || v.kernels.contains(&k.name)))
            .map(|v| Allocation {
                start: v.offset,
                size: v.size,
                kind: AllocationKind::Variable {
                    name: v.name.clone(),
                    function: v.function.clone(),
                    space: s,
                },
            })
            .collect();
        if let Some(v) = var.and_then(|var| vars.iter().find(|a| var.is(a))) {
            return Some(v.clone());
        }
        nearest(&vars, address, size).cloned().or_else(|| {
            let arena = if s == MemSpace::Shared {
                k.shared_size as u64
            } else {
                self.private_size
            };
            Some(Allocation {
                start: 0,
                size: arena,
                kind: AllocationKind::Arena(s),
            })
        })
    }
}

/// A violation the reference interpreter reported (`pisa_reference::Error::Memory`) as the
/// device's checker reports it: its instruction located in the program's `sources`, and the
/// buffers the kernel's arguments point into named (`params` and `arg_block` as
/// dispatched), so that `--device reference` and `--checked` print the same facts.
pub fn from_reference(
    mut v: Violation,
    sources: &pisa_translator::SourceMap,
    params: &[pisa_translator::reflect::ParamInfo],
    arg_block: &[u8],
) -> Violation {
    v.site.resolve(sources);
    v.name_arguments(params, arg_block);
    v
}
