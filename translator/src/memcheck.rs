//! The memory checker's vocabulary, shared by the checked translation
//! ([`crate::Options::checked`], emitted by `back::spirv::checked`), the host API that
//! uploads its allocation table and reads its violation record, and the reference
//! interpreter, which reports its out-of-bounds, misaligned and read-only accesses with the
//! same facts:
//!
//! - [`block`]: the layout of the *check block*, the device buffer a checked dispatch gets
//!   (the violation record, then the table of the allocations a `.global`/`.const` access may
//!   touch, sorted by address for a binary search);
//! - [`code`]: how the record packs the space, access and reason of a violation in one word;
//! - [`CheckInfo`]: what a checked translation adds to the reflection — the table of checked
//!   instructions (*sites*, by index: the record names the instruction by its index, never by
//!   a string in the SPIR-V) and the memory variables with their offsets;
//! - [`Violation`]: one bad access with everything needed to find it — kernel, PISA
//!   `file:line:col` and text, work-item, space, address, size, the nearest allocation and the
//!   offset from it — rendered rustc-style at the PISA line.
//!
//! Must not: emit SPIR-V, touch Vulkan, or execute instructions.

use crate::ir::MemSpace;
use crate::reflect::ParamInfo;
use crate::span::{SourceMap, Span};
use serde::Serialize;
use std::fmt::Write as _;

/// Byte offsets of the check block: the violation record of the dispatch, then the
/// allocation table. The host zeroes the record and writes the table before a checked
/// dispatch; the first work-item whose access fails the check increments
/// [`COUNT`](block::COUNT) from 0 and fills the rest of the record; later ones only count.
pub mod block {
    /// `u32`: violations in the dispatch (the first is recorded; the others only counted).
    pub const COUNT: u64 = 0;
    /// `u32`: index of the first violation's instruction in [`super::CheckInfo::sites`].
    pub const SITE: u64 = 4;
    /// `u32`: space, access and reason of the first violation ([`super::code`]).
    pub const CODE: u64 = 8;
    /// `u32`: bytes of the access.
    pub const SIZE: u64 = 12;
    /// `u64`: the address as the instruction had it (a generic address with its tag).
    pub const ADDRESS: u64 = 16;
    /// `u32 x3`: `%groupid` of the work-item.
    pub const GROUP_ID: u64 = 24;
    /// `u32 x3`: `%localid` of the work-item.
    pub const LOCAL_ID: u64 = 36;
    /// `u32`: entries of the allocation table (at least 1: entry 0 is the sentinel
    /// `[0, 0)`, so that the binary search always finds a candidate).
    pub const TABLE_LEN: u64 = 48;
    /// The *hot* entries: [`HOT_ENTRIES`] entries of the allocation table (same layout as
    /// [`TABLE`]'s): entry k is the allocation the kernel's k-th 8-byte argument points
    /// into, or the empty `[0, 0)`. A checked `.global`/`.const` access compares its
    /// address with them first (with entry k alone when the translator knows that the
    /// address comes from argument k); each kernel copies them in its prologue. Only a
    /// work-item whose access misses them searches the table.
    pub const HOT: u64 = 64;
    /// Entries at [`HOT`].
    pub const HOT_ENTRIES: u64 = 4;
    /// [`SCRATCH_SIZE`] bytes nobody reads: where a checked `.global`/`.const` `ld` or `st`
    /// that fails its check goes instead of its own address, so that the access needs no
    /// branch around it (a failed load's value is replaced by 0).
    pub const SCRATCH: u64 = HOT + HOT_ENTRIES * ENTRY_SIZE;
    /// Bytes at [`SCRATCH`]: the largest access sent there.
    pub const SCRATCH_SIZE: u64 = 256;
    /// Start of the allocation table: entries of [`ENTRY_SIZE`] bytes, `u64 start` then
    /// `u64 end` (exclusive, with [`READ_ONLY`] set for `.const` variables), sorted by start.
    pub const TABLE: u64 = SCRATCH + SCRATCH_SIZE;
    /// Bytes of one table entry.
    pub const ENTRY_SIZE: u64 = 16;
    /// Flag in an entry's end: the device may not store there (a `.const` variable).
    pub const READ_ONLY: u64 = 1 << 63;
    /// Bytes of the record alone (what the host reads back).
    pub const RECORD_SIZE: u64 = TABLE_LEN;

    /// Bytes of a check block whose table has `entries` entries (the sentinel included).
    pub fn size(entries: usize) -> u64 {
        TABLE + ENTRY_SIZE * entries as u64
    }
}

/// The packing of the record's [`CODE`](block::CODE) word: bits 0..8 the space the access
/// resolved to, bit 8 set when it came through a generic address, bits 16..24 the reason,
/// bits 24..32 the kind of access. The back end computes the reason at run time and ORs
/// the constant parts in.
pub mod code {
    use super::{AccessKind, Reason};
    use crate::ir::MemSpace;

    /// Set when the address was generic.
    pub const GENERIC: u32 = 1 << 8;
    /// Shift of the reason.
    pub const REASON_SHIFT: u32 = 16;
    /// Shift of the access kind.
    pub const ACCESS_SHIFT: u32 = 24;
    /// Reason: outside every allocation the access may touch.
    pub const OUT_OF_BOUNDS: u32 = 1;
    /// Reason: not aligned as prog-5 §5.1 requires.
    pub const MISALIGNED: u32 = 2;
    /// Reason: a store or atomic to `.const` memory.
    pub const READ_ONLY: u32 = 3;
    /// Reason: a call through an address that is no function's.
    pub const NOT_A_FUNCTION: u32 = 4;

    /// The code of a space.
    pub fn space(s: MemSpace) -> u32 {
        match s {
            MemSpace::Global => 0,
            MemSpace::Const => 1,
            MemSpace::Shared => 2,
            MemSpace::Private => 3,
        }
    }

    /// The code of an access kind.
    pub fn access(a: AccessKind) -> u32 {
        match a {
            AccessKind::Load => 1,
            AccessKind::Store => 2,
            AccessKind::Atomic => 3,
            AccessKind::Call => 4,
        }
    }

    /// Splits a code into (space, generic, access, reason); `None` for a code no checked
    /// kernel writes. The alignment of a misaligned access is the site's.
    pub fn unpack(word: u32, align: u32) -> Option<(MemSpace, bool, AccessKind, Reason)> {
        let space = match word & 0xFF {
            0 => MemSpace::Global,
            1 => MemSpace::Const,
            2 => MemSpace::Shared,
            3 => MemSpace::Private,
            _ => return None,
        };
        let access = match word >> ACCESS_SHIFT {
            1 => AccessKind::Load,
            2 => AccessKind::Store,
            3 => AccessKind::Atomic,
            4 => AccessKind::Call,
            _ => return None,
        };
        let reason = match (word >> REASON_SHIFT) & 0xFF {
            OUT_OF_BOUNDS => Reason::OutOfBounds,
            MISALIGNED => Reason::Misaligned { align },
            READ_ONLY => Reason::ReadOnly,
            NOT_A_FUNCTION => Reason::NotAFunction,
            _ => return None,
        };
        Some((space, word & GENERIC != 0, access, reason))
    }
}

/// What a checked translation adds to the reflection.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CheckInfo {
    /// Every checked instruction, by the index the violation record carries.
    pub sites: Vec<Site>,
    /// Every memory variable: module and body `.global`/`.const` variables at their offset
    /// in the globals arena, `.shared` and `.private` ones at their arena offset.
    pub variables: Vec<VariableInfo>,
}

/// One checked instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Site {
    /// The function (or kernel) it is in, without `@`.
    pub function: String,
    /// Its span in the program's span space (start, end).
    pub span: (u32, u32),
    /// The alignment the access needs (prog-5 §5.1), in bytes.
    pub align: u32,
    /// The variable the address is written relative to (`[@var ...]`), when the check
    /// holds the access to it: a violation is reported relative to that variable.
    pub variable: Option<VariableName>,
    /// Where it is, once resolved against the program's sources ([`Site::resolve`]).
    pub location: Option<Location>,
}

/// A memory variable by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VariableName {
    /// Name without `@`.
    pub name: String,
    /// The function whose body declares it (`None`: module scope).
    pub function: Option<String>,
}

impl VariableName {
    /// Whether `a` is this variable.
    pub fn is(&self, a: &Allocation) -> bool {
        matches!(&a.kind, AllocationKind::Variable { name, function, .. }
            if *name == self.name && *function == self.function)
    }
}

/// A position in a PISA file with what is needed to render it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file's name.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// Characters under the caret.
    pub width: usize,
    /// The source line.
    pub source_line: String,
    /// The instruction's text (its span, on one line).
    pub text: String,
}

impl Location {
    /// The location of `span` in `sources`.
    pub fn of(sources: &SourceMap, span: Span) -> Location {
        let (file, offset) = sources.locate(span.start);
        let end = offset + span.end.saturating_sub(span.start) as usize;
        let snippet = crate::diag::Snippet::of(file, offset, end);
        let text = file
            .text
            .get(offset..end.min(file.text.len()))
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Location {
            file: file.name.clone(),
            line: snippet.line,
            col: snippet.col,
            width: snippet.width,
            source_line: snippet.source_line.to_string(),
            text,
        }
    }
}

impl Site {
    /// Fills [`Site::location`] from the program's sources.
    pub fn resolve(&mut self, sources: &SourceMap) {
        let span = Span {
            start: self.span.0,
            end: self.span.1,
        };
        self.location = Some(Location::of(sources, span));
    }
}

/// A memory variable as the checker names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VariableInfo {
    /// Name without `@`.
    pub name: String,
    /// The function whose body declares it (`None`: module scope).
    pub function: Option<String>,
    /// Its space.
    #[serde(serialize_with = "space_name")]
    pub space: MemSpace,
    /// Offset in its arena (the globals arena for `.global`/`.const`).
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// For a `.shared` variable, the kernels that can reach it: its offset is only its own
    /// in those (variables no kernel reaches together may overlap, spec-notes §61). Empty
    /// for the other spaces.
    pub kernels: Vec<String>,
}

fn space_name<S: serde::Serializer>(s: &MemSpace, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.as_str())
}

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AccessKind {
    /// `ld` (not atomic).
    Load,
    /// `st` (not atomic).
    Store,
    /// `iatom`, `fatom`, or an atomic `ld`/`st`.
    Atomic,
    /// `call` through a register (the address is the register's value; no memory is
    /// touched, the space is not meaningful).
    Call,
}

impl AccessKind {
    fn noun(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic access",
            AccessKind::Call => "call",
        }
    }
}

/// Why an access is bad.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Reason {
    /// Not inside one allocation it may touch.
    OutOfBounds,
    /// Not aligned to `align` bytes (prog-5 §5.1).
    Misaligned {
        /// The alignment required.
        align: u32,
    },
    /// A store or atomic access to `.const` memory.
    ReadOnly,
    /// A `call` through an address that is no function's (prog-4: undefined behaviour).
    NotAFunction,
}

/// One allocation a kernel may touch, in the numbering of its space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allocation {
    /// First address.
    pub start: u64,
    /// Bytes.
    pub size: u64,
    /// What it is.
    pub kind: AllocationKind,
}

/// What an allocation is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AllocationKind {
    /// A buffer of the context (or of the reference machine) that no argument points into.
    Buffer,
    /// The buffer the kernel's argument `index` (`%name`) points into.
    Argument {
        /// 0-based position.
        index: usize,
        /// The parameter's name, without `%`.
        name: String,
    },
    /// A memory variable.
    Variable {
        /// Name without `@`.
        name: String,
        /// The function whose body declares it (`None`: module scope).
        function: Option<String>,
        /// Its space.
        #[serde(serialize_with = "space_name")]
        space: MemSpace,
    },
    /// A work-group's shared arena or a work-item's private arena as a whole (an address
    /// through a register, outside every variable).
    Arena(#[serde(serialize_with = "space_name")] MemSpace),
}

impl std::fmt::Display for Allocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            AllocationKind::Buffer => write!(f, "the buffer at {:#x}", self.start),
            AllocationKind::Argument { index, name } => {
                write!(f, "argument {index} `%{name}`")
            }
            AllocationKind::Variable {
                name,
                function: None,
                space,
            } => write!(f, ".{} variable `@{name}`", space.as_str()),
            AllocationKind::Variable {
                name,
                function: Some(func),
                space,
            } => write!(f, ".{} variable `@{name}` of `@{func}`", space.as_str()),
            AllocationKind::Arena(space) => write!(f, "the .{} arena", space.as_str()),
        }
    }
}

/// `n` with thousands separators (`4,096`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{} bytes", grouped(n))
    }
}

/// The distance (1 MiB) beyond which [`Allocation::describe`] calls an access far from
/// every allocation rather than counting the bytes.
pub const FAR: u64 = 1 << 20;

impl Allocation {
    /// Bytes `[addr, addr + size)` and the allocation have in common.
    pub fn overlap(&self, addr: u64, size: u64) -> u64 {
        let end = addr.saturating_add(size);
        let a_end = self.start.saturating_add(self.size);
        end.min(a_end).saturating_sub(addr.max(self.start))
    }

    /// Bytes between `[addr, addr + size)` and the allocation (0 when they overlap).
    pub fn distance(&self, addr: u64, size: u64) -> u64 {
        let end = addr.saturating_add(size);
        let a_end = self.start.saturating_add(self.size);
        if end <= self.start {
            self.start - end
        } else {
            // 0 when they overlap.
            addr.saturating_sub(a_end)
        }
    }

    /// Where `[addr, addr + size)` lies relative to the allocation, e.g. "4,096 bytes past
    /// the end of argument 0 (`%out`, 16 bytes)".
    ///
    /// The allocation is taken to be the nearest one ([`nearest`]): an access more than
    /// [`FAR`] bytes from it reads "far from every allocation", with its address range, e.g.
    /// "far from every allocation (more than 1 MiB away); the nearest is argument 1 `%out`
    /// (16 bytes) at 0x7f0000001000..0x7f0000001010".
    pub fn describe(&self, addr: u64, size: u64) -> String {
        let whole = format!("{self} ({})", bytes(self.size));
        let end = addr.saturating_add(size);
        let a_end = self.start.saturating_add(self.size);
        if self.distance(addr, size) > FAR {
            return format!(
                "far from every allocation (more than 1 MiB away); the nearest is {whole} at \
                 {:#x}..{a_end:#x}",
                self.start
            );
        }
        if addr >= a_end {
            match addr - a_end {
                0 => format!("just past the end of {whole}"),
                d => format!("{} past the end of {whole}", bytes(d)),
            }
        } else if end <= self.start {
            match self.start - end {
                0 => format!("just before the start of {whole}"),
                d => format!("{} before the start of {whole}", bytes(d)),
            }
        } else if addr < self.start {
            format!(
                "starting {} before {whole} and running into it",
                bytes(self.start - addr)
            )
        } else if end > a_end {
            format!(
                "starting {} into {whole} and running {} past its end",
                bytes(addr - self.start),
                bytes(end - a_end)
            )
        } else {
            format!("{} into {whole}", bytes(addr - self.start))
        }
    }
}

/// The allocation of `allocs` nearest to `[addr, addr + size)`: the one it overlaps most,
/// else the closest, else the first of equals.
pub fn nearest<'a>(
    allocs: impl IntoIterator<Item = &'a Allocation>,
    addr: u64,
    size: u64,
) -> Option<&'a Allocation> {
    allocs.into_iter().min_by_key(|a| {
        (
            std::cmp::Reverse(a.overlap(addr, size)),
            a.distance(addr, size),
        )
    })
}

/// A work-item's ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkItem {
    /// Global id: `%globaloffset + %groupid * %enqueuedlocalsize + %localid`.
    pub global: [u64; 3],
    /// `%localid`.
    pub local: [u32; 3],
    /// `%groupid`.
    pub group: [u32; 3],
}

impl WorkItem {
    /// The ids of the work-item `local` of work-group `group` in a launch with work-groups of
    /// `enqueued` work-items and global offset `offset`.
    pub fn new(group: [u32; 3], local: [u32; 3], enqueued: [u64; 3], offset: [u64; 3]) -> Self {
        let global = std::array::from_fn(|d| {
            offset[d]
                .wrapping_add((group[d] as u64).wrapping_mul(enqueued[d]))
                .wrapping_add(local[d] as u64)
        });
        WorkItem {
            global,
            local,
            group,
        }
    }
}

/// One bad memory access (the first of a dispatch), with everything needed to find it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The kernel dispatched.
    pub kernel: String,
    /// The instruction.
    pub site: Site,
    /// Who did it.
    pub work_item: WorkItem,
    /// The space the address resolved to.
    #[serde(serialize_with = "space_name")]
    pub space: MemSpace,
    /// Whether the address was generic.
    pub generic: bool,
    /// What the instruction does.
    pub access: AccessKind,
    /// What is wrong.
    pub reason: Reason,
    /// The address in `space`'s numbering.
    pub address: u64,
    /// Bytes of the whole access.
    pub size: u64,
    /// The allocation nearest to the access, if any is known.
    pub nearest: Option<Allocation>,
    /// Further violations of the same dispatch (counted, not recorded).
    pub further: u64,
}

impl Violation {
    /// Names the buffers the kernel's arguments point into: a [`AllocationKind::Buffer`]
    /// nearest allocation into which an 8-byte argument of `arg_block` points (laid out by
    /// `params`) becomes that [`AllocationKind::Argument`].
    pub fn name_arguments(&mut self, params: &[ParamInfo], arg_block: &[u8]) {
        let Some(a) = &mut self.nearest else { return };
        if a.kind != AllocationKind::Buffer {
            return;
        }
        for (index, p) in params.iter().enumerate() {
            let at = p.offset as usize;
            let Some(bytes) = arg_block.get(at..at + 8).filter(|_| p.size == 8) else {
                continue;
            };
            let value = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
            let inside = value >= a.start && value - a.start < a.size.max(1);
            if inside {
                a.kind = AllocationKind::Argument {
                    index,
                    name: p.name.clone(),
                };
                return;
            }
        }
    }

    /// The one-line message: what the access is and where it went.
    pub fn message(&self) -> String {
        let space = self.space.as_str();
        let through = if self.generic {
            " (through a generic address)"
        } else {
            ""
        };
        let noun = self.access.noun();
        let what = match self.reason {
            Reason::OutOfBounds => format!(
                "out-of-bounds {noun} of {} at .{space} address {:#x}{through}",
                bytes(self.size),
                self.address
            ),
            Reason::Misaligned { align } => format!(
                "misaligned {noun} of {} at .{space} address {:#x}{through} (prog-5 requires {align}-byte alignment)",
                bytes(self.size),
                self.address
            ),
            Reason::ReadOnly => format!(
                "{noun} of {} to read-only memory at .{space} address {:#x}{through}",
                bytes(self.size),
                self.address
            ),
            Reason::NotAFunction => {
                // What the reference interpreter says of the same call.
                return format!(
                    "call through {:#x}, which is not a function address",
                    self.address
                );
            }
        };
        match &self.nearest {
            Some(a) => format!("{what}: {}", a.describe(self.address, self.size)),
            None => format!("{what}: no allocation is near"),
        }
    }

    /// The violation rustc-style: `file:line:col: error: message`, the PISA line with a
    /// caret under the instruction, then notes naming kernel, work-item and what was done.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let message = self.message();
        match &self.site.location {
            Some(l) => crate::diag::render_snippet(
                &mut out,
                &crate::diag::Snippet {
                    file: &l.file,
                    line: l.line,
                    col: l.col,
                    width: l.width,
                    source_line: &l.source_line,
                },
                "error",
                &message,
            ),
            None => {
                let _ = writeln!(out, "error: {message}");
            }
        }
        let gutter = " ".repeat(
            self.site
                .location
                .as_ref()
                .map_or(1, |l| l.line.to_string().len()),
        );
        let w = &self.work_item;
        let function = if self.site.function == self.kernel {
            String::new()
        } else {
            format!(", in function `@{}`", self.site.function)
        };
        let _ = writeln!(
            out,
            "{gutter} = note: kernel `{}`{function}, work-item {:?} (local id {:?} of work-group {:?})",
            self.kernel, w.global, w.local, w.group
        );
        let skipped = match self.access {
            AccessKind::Call => {
                "no function was called (its result register holds no defined value)"
            }
            AccessKind::Store => "the store was not performed",
            _ => "the access was not performed (a load yields 0)",
        };
        let more = match self.further {
            0 => String::new(),
            1 => "; 1 more violation in this dispatch".into(),
            n => format!("; {} more violations in this dispatch", grouped(n)),
        };
        let _ = writeln!(out, "{gutter} = note: {skipped}{more}");
        out
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.render().trim_end())
    }
}

/// The alignment prog-5 §5.1 requires of an access of `count` elements of `bits` bits: the
/// element's size, or the whole access when the element is narrower than 32 bits.
pub fn required_alignment(bits: u32, count: u32) -> u32 {
    if bits < 32 {
        bits / 8 * count
    } else {
        bits / 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg0() -> Allocation {
        Allocation {
            start: 0x1000,
            size: 16,
            kind: AllocationKind::Argument {
                index: 0,
                name: "out".into(),
            },
        }
    }

    #[test]
    fn descriptions_name_the_allocation_and_the_offset() {
        let a = arg0();
        assert_eq!(
            a.describe(0x1010 + 4096, 4),
            "4,096 bytes past the end of argument 0 `%out` (16 bytes)"
        );
        assert_eq!(
            a.describe(0x1010, 4),
            "just past the end of argument 0 `%out` (16 bytes)"
        );
        assert_eq!(
            a.describe(0x1000 - 8, 4),
            "4 bytes before the start of argument 0 `%out` (16 bytes)"
        );
        assert_eq!(
            a.describe(0x1000 - 2, 4),
            "starting 2 bytes before argument 0 `%out` (16 bytes) and running into it"
        );
        assert_eq!(
            a.describe(0x100c, 8),
            "starting 12 bytes into argument 0 `%out` (16 bytes) and running 4 bytes past its end"
        );
        assert_eq!(
            a.describe(0x1001, 1),
            "1 byte into argument 0 `%out` (16 bytes)"
        );
        // Up to 1 MiB away the bytes are counted; beyond, the nearest allocation's range.
        assert_eq!(
            a.describe(0x1010 + 1_048_576, 4),
            "1,048,576 bytes past the end of argument 0 `%out` (16 bytes)"
        );
        assert_eq!(
            a.describe(0x1010 + 1_048_577, 4),
            "far from every allocation (more than 1 MiB away); the nearest is argument 0 \
             `%out` (16 bytes) at 0x1000..0x1010"
        );
        // The case: 139,628,648,583,427 bytes before the start of an argument.
        let b = Allocation {
            start: 139_628_648_583_427 + 4,
            size: 64,
            kind: AllocationKind::Argument {
                index: 1,
                name: "x".into(),
            },
        };
        assert_eq!(
            b.describe(0, 4),
            "far from every allocation (more than 1 MiB away); the nearest is argument 1 \
             `%x` (64 bytes) at 0x7efdd3ffd107..0x7efdd3ffd147"
        );
        assert_eq!(grouped(1_048_560), "1,048,560");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(0), "0");
    }

    #[test]
    fn the_nearest_allocation_is_the_closest_range() {
        let v = Allocation {
            start: 0x2000,
            size: 64,
            kind: AllocationKind::Variable {
                name: "t".into(),
                function: None,
                space: MemSpace::Global,
            },
        };
        let all = [arg0(), v.clone()];
        assert_eq!(nearest(&all, 0x1f00, 4), Some(&v));
        assert_eq!(nearest(&all, 0x1020, 4), Some(&all[0]));
        assert_eq!(nearest(&[], 0, 4), None);
        assert_eq!(v.distance(0x2010, 4), 0);
        // From the allocation's end (0x2040) to the access's start (MAX - 2).
        assert_eq!(v.distance(u64::MAX - 2, 8), u64::MAX - 2 - 0x2040);
        // Adjacent allocations: the one the access overlaps most.
        let next = Allocation {
            start: 0x1010,
            size: 16,
            kind: AllocationKind::Buffer,
        };
        let pair = [arg0(), next.clone()];
        assert_eq!(nearest(&pair, 0x100c, 8), Some(&pair[0]));
        assert_eq!(nearest(&pair, 0x100c, 16), Some(&pair[1]));
        assert_eq!(next.overlap(0x100c, 8), 4);
    }

    #[test]
    fn codes_round_trip() {
        let word = code::space(MemSpace::Shared)
            | code::GENERIC
            | code::MISALIGNED << code::REASON_SHIFT
            | code::access(AccessKind::Atomic) << code::ACCESS_SHIFT;
        assert_eq!(
            code::unpack(word, 8),
            Some((
                MemSpace::Shared,
                true,
                AccessKind::Atomic,
                Reason::Misaligned { align: 8 }
            ))
        );
        assert_eq!(code::unpack(0, 4), None);
        assert_eq!(code::unpack(u32::MAX, 4), None);
    }

    #[test]
    fn arguments_name_the_buffers_they_point_into() {
        let params = vec![
            ParamInfo {
                name: "n".into(),
                offset: 0,
                size: 4,
                align: 4,
                addrspace: None,
                ..ParamInfo::default()
            },
            ParamInfo {
                name: "out".into(),
                offset: 8,
                size: 8,
                align: 8,
                addrspace: None,
                ..ParamInfo::default()
            },
        ];
        let mut block = vec![0u8; 16];
        block[8..].copy_from_slice(&0x1004u64.to_le_bytes());
        let mut v = Violation {
            kernel: "k".into(),
            site: Site {
                function: "k".into(),
                span: (0, 0),
                align: 4,
                variable: None,
                location: None,
            },
            work_item: WorkItem::new([1, 0, 0], [3, 0, 0], [4, 1, 1], [0; 3]),
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            address: 0x2010,
            size: 4,
            nearest: Some(Allocation {
                start: 0x1000,
                size: 16,
                kind: AllocationKind::Buffer,
            }),
            further: 2,
        };
        v.name_arguments(&params, &block);
        assert_eq!(
            v.nearest,
            Some(arg0()).map(|mut a| {
                a.kind = AllocationKind::Argument {
                    index: 1,
                    name: "out".into(),
                };
                a
            })
        );
        assert_eq!(v.work_item.global, [7, 0, 0]);
        let text = v.render();
        assert!(text.starts_with("error: out-of-bounds store of 4 bytes at .global address 0x2010: 4,096 bytes past the end of argument 1 `%out` (16 bytes)\n"), "{text}");
        assert!(text.contains("work-item [7, 0, 0]"), "{text}");
        assert!(text.contains("2 more violations"), "{text}");
    }
}
