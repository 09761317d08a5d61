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
#[derive(Debug, thiserror::Error)]
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
    #[error("kernel `{kernel}` takes {expected} argument(s), {got} given")]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its `.param` count.
        expected: usize,
        /// What was passed.
        got: usize,
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
    /// A symbol or buffer access of the wrong size.
    #[error("{what}: {got} bytes given, {expected} expected")]
    SizeMismatch {
        /// What was accessed.
        what: String,
        /// Bytes expected.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
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
            | Error::SizeMismatch { .. }
            | Error::Launch { .. } => true,
            Error::Invalid(_) | Error::Runtime(_) | Error::Reference(_) | Error::Validation(_) => {
                false
            }
        }
    }
}

/// `Result` with the host API's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
