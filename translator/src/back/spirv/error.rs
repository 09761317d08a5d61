//! The back end's result type, and the one diagnostic for a misuse of the SPIR-V builder.
//!
//! Lowering steps fail only with a diagnostic about the PISA input (an unsupported
//! feature, a limit). The builder itself is infallible: a misuse — an instruction with no
//! block selected — is a bug of the back end, which [`super::builder::Builder::finish`]
//! reports once at the end of the translation through [`builder_misuse`].

use crate::diag::Diagnostic;

/// Result type of a lowering step.
pub type EResult<T = ()> = Result<T, Diagnostic>;

/// The diagnostic for the first misuse of the builder (a bug of the back end, never a
/// property of the PISA input).
#[cold]
pub fn builder_misuse(e: rspirv::dr::Error) -> Diagnostic {
    Diagnostic::error(
        crate::span::Span::default(),
        format!("internal error: the SPIR-V builder was misused ({e:?}); please report it"),
    )
}
