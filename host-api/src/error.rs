//! The one error type of the host API.
//!
//! Translator diagnostics travel intact ([`Error::Invalid`] holds the whole
//! [`Diagnostics`], rendered with file:line:col and carets), runtime failures keep their
//! own type, and every misuse of the API (an unknown kernel or symbol, a wrong argument
//! size) has its own variant with the names needed to fix it.

use pisa_translator::Diagnostics;

/// Everything the host API can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The PISA module is invalid (or cannot be translated): every diagnostic of the file.
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
    /// The Vulkan runtime failed (device, memory, pipeline, dispatch, timeout).
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
    /// A launch configuration the kernel or the device cannot run.
    #[error("invalid launch of `{kernel}`: {message}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },
}

/// `Result` with the host API's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
