//! # pisa-reference
//!
//! A CPU interpreter of PISA v0.1 (Intel's Portable ISA) that executes the typed IR of
//! `pisa-translator` exactly as the semantics blocks of the specification say. It is the
//! **oracle** of the conformance suite: results of the Vulkan back end are compared with it bit
//! for bit, so it favours being obviously right over being fast. It shares only the IR types
//! with the SPIR-V emitter, never code.
//!
//! ## Model
//!
//! A [`Machine`] owns a simulated 64-bit global address space. The host allocates buffers in
//! it ([`Machine::alloc`]), fills and reads them ([`Machine::write`], [`Machine::read`]),
//! loads modules into it ([`Machine::load`]: every module-scope `.global`/`.const` variable and
//! every body-scope `.const` variable gets an allocation, initialised little-endian) and
//! dispatches kernels ([`Machine::dispatch`]) over an NDRange described by a [`Launch`].
//!
//! Work-groups run one after another. Inside a work-group, work-items form sub-groups of
//! [`Config::subgroup_size`] consecutive linear local ids; each sub-group runs in SIMT
//! lock-step: every work-item has its own program counter and call stack, and at each step
//! the work-items whose position (call stack, then pc) is smallest in program order execute
//! that one instruction together (they are `%activemask`). This gives the reconvergence a
//! structured program expects. `barrier.workgroup` holds a work-item until every live
//! work-item of the work-group waits at the same barrier; work-items that returned from the
//! kernel do not block it.
//!
//! Memory is byte-addressed and little-endian in every space. See [`memory`] for the address
//! representation of each space, generic addresses included.
//!
//! Everything the specification leaves to the implementation, and every choice this crate
//! makes where the specification is silent, is listed in the crate's `README.md` and in the
//! doc comments of [`softfloat`] and [`memory`].
//!
//! ## Errors, never panics
//!
//! Any IR, malformed or not, leads to a result or an [`Error`]: out-of-bounds accesses,
//! undefined behaviour the interpreter can detect (division by zero, misaligned accesses,
//! stores to `.const`, ...), unsupported features and runaway programs
//! ([`Config::step_limit`]) are all errors, not panics or hangs.

#![warn(missing_docs)]

mod access;
pub mod bits;
mod error;
mod exec;
mod lane;
mod layout;
mod machine;
pub mod memory;
mod operand;
pub mod sanitize;
mod simt;
pub mod softfloat;

pub use error::Error;
pub use machine::{Config, Launch, LoadedModule, Machine, Symbol, CALL_DEPTH_LIMIT};
pub use sanitize::{Report, Sanitize};
