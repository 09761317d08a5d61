//! The interpreter's error type: everything that stops a dispatch or a host access.
//!
//! Each error raised while executing an instruction carries the [`Span`] of that instruction
//! so that the caller can point at the source.

use pisa_translator::Span;

/// Why a host access, a module load or a dispatch failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The module has no kernel (with a body) of the requested name.
    #[error("the module has no kernel of that name")]
    UnknownKernel,
    /// The argument block does not have the size of the kernel's parameter block.
    #[error("the kernel's arguments take {expected} bytes, {got} were given")]
    ArgumentSize {
        /// Size of the parameter block ([`pisa_translator::ir::Function::param_layout`]).
        expected: usize,
        /// Size of the bytes passed.
        got: usize,
    },
    /// An access outside every allocation (global), outside the arena (shared, private) or
    /// outside the parameter (param); also a null or malformed generic address.
    #[error("out-of-bounds access of {len} bytes at address {addr:#x}")]
    OutOfBounds {
        /// The address, in the numbering of the space that was accessed.
        addr: u64,
        /// Number of bytes accessed.
        len: u64,
        /// The instruction (default span for host accesses).
        at: Span,
    },
    /// A kernel's memory access was out of bounds (outside every allocation for global and
    /// const, outside the arena for shared and private, outside the variable for an address
    /// written `[@var ...]`), misaligned (prog-5) or a store to `.const` memory: every fact of
    /// the violation, as the device's memory checker reports them (its
    /// [`Site::location`](pisa_translator::memcheck::Site::location) is left to the caller,
    /// who has the sources).
    #[error("{}", .0.message())]
    Memory(Box<pisa_translator::memcheck::Violation>),
    /// Something the interpreter does not execute (imported symbols, a type or form the
    /// specification does not define for the instruction, ...).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What, naming the instruction or feature.
        what: String,
        /// Where.
        at: Span,
    },
    /// The dispatch executed more than [`crate::Config::step_limit`] sub-group steps.
    #[error("step limit exceeded")]
    StepLimit,
    /// Work-items of a work-group wait at different barriers, so none can proceed.
    #[error("work-items of a work-group wait at different barriers")]
    BarrierDivergence {
        /// One of the barriers.
        at: Span,
    },
    /// The program did something the specification calls undefined (division by zero,
    /// misaligned access, store to `.const`, address-space mismatch, ...).
    #[error("undefined behavior: {what}")]
    UndefinedBehavior {
        /// What happened.
        what: String,
        /// Where.
        at: Span,
    },
    /// The IR breaks an invariant the validator guarantees (wrong operand kind or width,
    /// bad ids, missing qualifier).
    #[error("malformed IR: {what}")]
    Malformed {
        /// What is wrong.
        what: String,
        /// Where.
        at: Span,
    },
    /// The [`crate::Launch`] or the [`crate::Config`] cannot describe a dispatch.
    #[error("invalid launch: {what}")]
    InvalidLaunch {
        /// What is wrong.
        what: String,
    },
    /// A work-item nested calls deeper than [`crate::CALL_DEPTH_LIMIT`] (plus the stack depth
    /// per call cycle).
    #[error("call depth limit exceeded")]
    CallDepth {
        /// The call that went too deep.
        at: Span,
    },
    /// A call would have nested more activations of a call cycle's functions than
    /// [`crate::Config::stack_depth`]: the kernel, the call, the work-item and the depth, as
    /// the device reports them (the call's `location` is left to the caller, who has the
    /// sources).
    #[error("{}", .0.message())]
    StackOverflow(Box<pisa_translator::passes::recursion::StackOverflow>),
    /// The [`crate::LoadedModule`] was loaded into another [`crate::Machine`].
    #[error("the module was loaded into another machine")]
    ForeignModule,
}

impl Error {
    /// The source span the error points at, if it has one.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::OutOfBounds { at, .. }
            | Error::Unsupported { at, .. }
            | Error::BarrierDivergence { at }
            | Error::UndefinedBehavior { at, .. }
            | Error::Malformed { at, .. }
            | Error::CallDepth { at } => Some(*at),
            Error::Memory(v) => Some(Span {
                start: v.site.span.0,
                end: v.site.span.1,
            }),
            Error::StackOverflow(o) => Some(Span {
                start: o.site.span.0,
                end: o.site.span.1,
            }),
            _ => None,
        }
    }
}

/// Shorthand for the crate's results.
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// An [`Error::Malformed`] at `at`.
pub(crate) fn malformed(at: Span, what: impl Into<String>) -> Error {
    Error::Malformed {
        what: what.into(),
        at,
    }
}

/// An [`Error::Unsupported`] at `at`.
pub(crate) fn unsupported(at: Span, what: impl Into<String>) -> Error {
    Error::Unsupported {
        what: what.into(),
        at,
    }
}

/// An [`Error::UndefinedBehavior`] at `at`.
pub(crate) fn undefined(at: Span, what: impl Into<String>) -> Error {
    Error::UndefinedBehavior {
        what: what.into(),
        at,
    }
}
