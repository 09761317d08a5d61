//! The one error type of the host API.
//!
//! Translator diagnostics travel intact ([`Error::Invalid`] holds the whole
//! [`Diagnostics`], rendered with file:line:col and carets), runtime failures keep their
//! own type, and every misuse of the API (an unknown kernel or symbol, a wrong argument
//! size) has its own variant with the names needed to fix it.
//!
//! Two kinds of error, which the `pisa-vk` command tells apart by its exit code
//! ([`Error::is_usage`]): a *usage* error is a mistake in what the caller asked for — an
//! unreadable file, an unknown kernel or symbol, a wrong argument count or size, a launch
//! the kernel or the device cannot run (every launch-size problem is one variant,
//! [`Error::Launch`]) — fixed by changing the request (exit 2); every other error is the
//! program's (invalid PISA, exit 1) or the device's and runtime's (no device, missing
//! features, too much shared memory, timeouts, memory, Vulkan errors; exit 3).

use pisa_translator::Diagnostics;

/// Everything the host API can report.
///
/// `Debug` prints what `Display` prints — the rendered diagnostic — so that
/// `fn main() -> pisa_vk::Result<()>` reports an error readably; match the variants for
/// their fields. Runtime failures (device, memory, pipelines, timeouts) are
/// [`Error::Runtime`] holding a [`RuntimeError`](crate::RuntimeError).
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Context, Error, Module, RuntimeError};
/// let ctx = Context::new()?;
/// let bad = ".version 0.1;\n.target 100;\n.kernel @k() {\n  iad.32b %r, 1, 2;\n}\n";
/// let e = Module::from_source(&ctx, "bad.pisa", bad).unwrap_err();
/// assert!(matches!(e, Error::Invalid(_)) && !e.is_usage());
/// // file:line:col, the line and a caret, and a "did you mean" note.
/// assert!(format!("{e:?}").starts_with("bad.pisa:4:3: error: unknown instruction `iad`"));
/// assert!(e.to_string().contains("did you mean `iadd`"), "{e}");
///
/// let m = Module::from_source(&ctx, "k.pisa", ".version 0.1;\n.target 100;\n.kernel @k() {\n}\n")?;
/// let e = m.dispatch("kk", 1, 1, ()).unwrap_err();
/// assert!(e.is_usage());
/// assert_eq!(e.to_string(), "no kernel `kk` in the module (kernels: k)");
/// match m.dispatch("k", 1, 1, ()) {
///     Err(Error::Runtime(RuntimeError::Timeout { seconds, .. })) => println!("{seconds} s"),
///     other => other?,
/// }
/// # Ok(()) }
/// ```
#[derive(thiserror::Error)]
pub enum Error {
    /// The PISA module is invalid (or cannot be translated or linked): every diagnostic of
    /// its files.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// The module's file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The Vulkan runtime failed (device, memory, pipeline, dispatch, timeout, a device
    /// still busy with a dispatch that timed out). Match its variants through
    /// [`RuntimeError`](crate::RuntimeError), e.g. `Error::Runtime(RuntimeError::Timeout {
    /// .. })`.
    #[error(transparent)]
    Runtime(#[from] pisa_runtime::Error),
    /// The CPU reference interpreter reported an error.
    #[error("reference interpreter: {0}")]
    Reference(String),
    /// No kernel of that name.
    #[error("no kernel `{name}` in the module (kernels: {})", .available.join(", "))]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The module's kernels.
        available: Vec<String>,
    },
    /// No `.host_access` or module variable of that name.
    #[error("no `.host_access` name or module variable `{0}`")]
    UnknownSymbol(String),
    /// Several internal variables of linked modules have that name (and none is exported or
    /// has it as its `.host_access` name).
    #[error("`{name}` names {count} internal variables of the linked modules; give the one you mean a `.host_access` name")]
    AmbiguousSymbol {
        /// The name asked for.
        name: String,
        /// How many variables have it.
        count: usize,
    },
    /// A dispatch passed the wrong number of arguments.
    #[error(
        "kernel `{kernel}` takes {expected} argument(s) ({}), {got} given",
        param_list(.params)
    )]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its `.param` count.
        expected: usize,
        /// What was passed.
        got: usize,
        /// The names of its `.param`s, in order, without `%`.
        params: Vec<String>,
    },
    /// An argument's size differs from its `.param[N]`.
    #[error("argument {index} (`%{param}`) of kernel `{kernel}` is {got} bytes, but `.param[{expected}]`")]
    ArgumentSize {
        /// The kernel.
        kernel: String,
        /// 0-based argument position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// Its declared size.
        expected: u32,
        /// The size passed.
        got: usize,
    },
    /// An argument that clearly contradicts how the kernel uses its parameter (spec-notes
    /// §89): a float for an integer, a buffer for an integer, an integer for an address, an
    /// array of the wrong element type. `Arg::raw` passes any bytes unchecked.
    #[error(
        "argument {index} (`%{param}`) of kernel `{kernel}` is {given}, but {why}: `%{param}` \
         is {kind}{}; pass it raw (Rust `Arg::raw`, Python `pisa_vk.raw_address`/bytes, CLI \
         `bytes:`/`addr:`) if you mean it",
        at.as_deref().map(|a| format!(" ({a})")).unwrap_or_default()
    )]
    ArgumentKind {
        /// The kernel.
        kernel: String,
        /// 0-based argument position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// What was passed (`a 32-bit float`, `a buffer of 64-bit floats`).
        given: String,
        /// Why it contradicts the kernel.
        why: String,
        /// The kind the kernel's code gives the parameter.
        kind: String,
        /// `file:line:col: instruction` of the instruction that decides the kind.
        at: Option<String>,
    },
    /// A byte block of the wrong size (an argument block, a `--set` value).
    #[error("{what}: {got} bytes given, {expected} bytes expected")]
    SizeMismatch {
        /// What was accessed.
        what: String,
        /// Bytes expected.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// A dispatch was given a buffer of another context: its address means nothing to this
    /// context's device.
    #[error("argument {index} (`%{param}`) of kernel `{kernel}` is a buffer of another context; a kernel can use only the buffers of its module's context")]
    ForeignBuffer {
        /// The kernel.
        kernel: String,
        /// 0-based argument position.
        index: usize,
        /// The parameter's name.
        param: String,
    },
    /// A dispatch of a checked module ([`Module::checked`](crate::Module::checked)) made a
    /// bad memory access (out of bounds, misaligned, or a store to `.const`): the first one,
    /// with its instruction, work-item and nearest allocation, and how many more there
    /// were. The bad accesses were not performed. `Display` renders it rustc-style at the
    /// PISA line.
    #[error("{0}")]
    MemoryViolation(Box<pisa_translator::memcheck::Violation>),
    /// A work-item's call would have nested more activations of a call cycle's functions
    /// than the module's stack depth (`pisa_translator::Options::stack_depth`): the kernel,
    /// the call at its PISA line, the first such work-item and the depth, and how many more
    /// overflowed. The work-item left the cycle; the launch's results are not to be used.
    #[error("{0}")]
    StackOverflow(Box<pisa_translator::passes::recursion::StackOverflow>),
    /// A kernel on virtual lanes, translated for full hardware sub-groups of `expected`
    /// invocations (the device's `subgroupSize`) on a device whose pipelines cannot require
    /// a sub-group size (spec-notes §105), found its hardware sub-group otherwise at entry:
    /// `SubgroupSize` = `size`, `active` invocations active. Its work-items returned at once;
    /// the launch's results are not to be used.
    #[error(
        "kernel `{kernel}` runs on virtual lanes for full sub-groups of {expected} \
         invocations (the subgroupSize Vulkan promises to a pipeline without a required \
         sub-group size), but the device ran it in sub-groups of {size} with {active} active \
         at entry: its work-items stopped there and the launch's results are not to be used"
    )]
    SubgroupSize {
        /// The kernel.
        kernel: String,
        /// The hardware width it was translated for.
        expected: u32,
        /// The `SubgroupSize` a failing sub-group saw.
        size: u32,
        /// How many invocations of that sub-group were active at the kernel's entry.
        active: u32,
    },
    /// A buffer or symbol access whose length is not the one needed (a whole-buffer write of
    /// another length, a copy between buffers of different lengths).
    #[error("{op} {target}: {given} given, {expected} expected")]
    Length {
        /// The call (`"Buffer::write"`).
        op: &'static str,
        /// The buffer or symbol, named (`` buffer `out` (4096 u32) ``).
        target: String,
        /// What the call needed.
        expected: Extent,
        /// What it was given.
        given: Extent,
    },
    /// A range of elements that is not inside the buffer or symbol.
    #[error("{op} {target}: elements {start}..{end} (bytes {}..{}) are outside its {size}",
            .start * .size.elem_size, .end * .size.elem_size)]
    Range {
        /// The call (`"Buffer::read_range"`).
        op: &'static str,
        /// The buffer or symbol, named.
        target: String,
        /// First element of the range.
        start: u64,
        /// One past its last element.
        end: u64,
        /// The buffer's or symbol's size.
        size: Extent,
    },
    /// A symbol whose size is not a whole number of the element type asked for.
    #[error("{op} {target}: its {bytes} bytes are not a whole number of {elem} ({elem_size} bytes each)")]
    ElementSize {
        /// The call (`"Symbol::read"`).
        op: &'static str,
        /// The symbol, named.
        target: String,
        /// The symbol's size in bytes.
        bytes: u64,
        /// The element type asked for.
        elem: &'static str,
        /// Its size in bytes.
        elem_size: u64,
    },
    /// A write to a variable the host may only read: a `.const` variable (prog-2: constant
    /// memory is initialized and read-only).
    #[error("cannot write symbol `{symbol}`: it is a `.{space}` variable, read-only from the host (initialize it in the module)")]
    ReadOnly {
        /// The symbol's name as asked for.
        symbol: String,
        /// Its space (`const`).
        space: String,
    },
    /// A work-group of a kernel whose private memory lives in a per-launch scratch buffer
    /// (spec-notes §95) needs more of it than the device can allocate in one buffer: its
    /// invocations times the bytes of private memory each.
    #[error(
        "kernel `{kernel}` needs {size} bytes of private scratch memory per work-group \
         ({invocations} invocations of {stride} bytes), more than the device's largest \
         allocation of {limit} bytes (maxMemoryAllocationSize, or its largest memory heap); \
         use smaller work-groups or less .private memory"
    )]
    Scratch {
        /// The kernel.
        kernel: String,
        /// The bytes one work-group needs (`u64::MAX` past 2^64).
        size: u64,
        /// Bytes per invocation.
        stride: u64,
        /// Invocations per work-group.
        invocations: u64,
        /// The device's largest allocation.
        limit: u64,
    },
    /// A typed result or handle used with something it does not belong to (the read of
    /// another stream).
    #[error("{0}")]
    Mismatch(String),
    /// The validation layer reported these messages for the calling thread's run
    /// ([`reference::on_device`](crate::reference::on_device)).
    #[error("validation layer messages:\n{}", .0.join("\n"))]
    Validation(Vec<String>),
    /// A launch configuration the kernel or the device cannot run: a work-group size of 0,
    /// beyond the device's limits or other than `.reqd_work_group_size`, and every other
    /// launch-size problem.
    #[error("invalid launch of `{kernel}`: {message}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// Whether this is a mistake in what the caller asked for (a file that cannot be read,
    /// an unknown kernel or symbol, a wrong argument count or size, an impossible launch),
    /// as opposed to an invalid program or a failure of the device or runtime. The `pisa-vk`
    /// command exits with 2 for these, 1 for [`Error::Invalid`] and 3 for the rest.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Io { .. }
            | Error::UnknownKernel { .. }
            | Error::UnknownSymbol(_)
            | Error::AmbiguousSymbol { .. }
            | Error::ArgumentCount { .. }
            | Error::ArgumentSize { .. }
            | Error::ArgumentKind { .. }
            | Error::SizeMismatch { .. }
            | Error::ForeignBuffer { .. }
            | Error::Length { .. }
            | Error::Range { .. }
            | Error::ElementSize { .. }
            | Error::ReadOnly { .. }
            | Error::Mismatch(_)
            | Error::Launch { .. } => true,
            Error::Invalid(_)
            | Error::Runtime(_)
            | Error::Reference(_)
            | Error::MemoryViolation(_)
            | Error::StackOverflow(_)
            | Error::SubgroupSize { .. }
            | Error::Scratch { .. }
            | Error::Validation(_) => false,
        }
    }
}

/// `Result` with the host API's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl std::fmt::Debug for Error {
    /// The `Display` text: the rendered diagnostic, not the fields (whole source texts and
    /// line tables for [`Error::Invalid`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// A number of elements of one type, as errors print it: `3 u32 (12 bytes)`, or `12 bytes`
/// for bytes ([`Error::Length`], [`Error::Range`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// How many elements.
    pub elements: u64,
    /// The element type's name (`u32`, `f32`, `[u8; 3]`...).
    pub elem: &'static str,
    /// Its size in bytes.
    pub elem_size: u64,
}

impl Extent {
    /// `elements` of `T` (its short type name and size).
    pub fn of<T>(elements: u64) -> Extent {
        Extent {
            elements,
            elem: short_type_name::<T>(),
            elem_size: std::mem::size_of::<T>() as u64,
        }
    }

    /// The size in bytes.
    pub fn bytes(&self) -> u64 {
        self.elements * self.elem_size
    }
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.elem_size == 1 && matches!(self.elem, "u8" | "i8") {
            write!(f, "{} bytes", self.elements)
        } else {
            write!(
                f,
                "{} {} ({} bytes)",
                self.elements,
                self.elem,
                self.bytes()
            )
        }
    }
}

/// `T`'s name without module paths (`u32`, `[f32; 4]`, `MyPixel`).
pub(crate) fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    if full.contains('<') || full.starts_with('[') || full.starts_with('(') {
        return full;
    }
    full.rsplit("::").next().unwrap_or(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_prints_the_display_text() {
        let e = Error::UnknownSymbol("x".into());
        assert_eq!(
            format!("{e:?}"),
            "no `.host_access` name or module variable `x`"
        );
    }

    #[test]
    fn extents_print_elements_and_bytes() {
        assert_eq!(Extent::of::<u32>(3).to_string(), "3 u32 (12 bytes)");
        assert_eq!(Extent::of::<u8>(5).to_string(), "5 bytes");
        assert_eq!(
            Extent::of::<[f32; 4]>(2).to_string(),
            "2 [f32; 4] (32 bytes)"
        );
        let e = Error::Range {
            op: "Buffer::read_range",
            target: "buffer `out` (4096 u32)".into(),
            start: 4090,
            end: 4100,
            size: Extent::of::<u32>(4096),
        };
        assert_eq!(
            e.to_string(),
            "Buffer::read_range buffer `out` (4096 u32): elements 4090..4100 (bytes \
             16360..16400) are outside its 4096 u32 (16384 bytes)"
        );
    }
}

/// The `.param` names of an [`Error::ArgumentCount`], as the kernel spells them: `%a, %b`
/// (`none` for a kernel without parameters).
fn param_list(params: &[String]) -> String {
    match params.is_empty() {
        true => "none".to_string(),
        false => params
            .iter()
            .map(|p| format!("%{p}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
