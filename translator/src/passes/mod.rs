//! IR-to-IR transformations that run between the link and the back end, each producing an
//! `ir::Module` the later stages handle as if the programmer had written it.
//!
//! - [`recursion`]: call cycles become one state machine per cycle, its frames on an
//!   explicit per-work-item stack (docs/spec-notes.md §33), so that Vulkan, which forbids
//!   recursive SPIR-V, runs them.
//! - [`webs`]: each register reused for unrelated values becomes one register per web, for
//!   the functions lowered on virtual lanes (docs/spec-notes.md §88).
//!
//! Must not: emit SPIR-V or decide memory layouts (the back end and `layout.rs` see the
//! transformed module like any other).

pub mod recursion;
pub mod webs;
