//! # pisa-translator
//!
//! Turns PISA v0.1 modules (Intel's Portable ISA, a PTX-like virtual assembly) into Vulkan
//! SPIR-V, with the reflection data a runtime needs to load and dispatch them.
//!
//! Data flows one way, one module per stage:
//!
//! ```text
//! source --front::lexer--> tokens --front::parser--> AST (spans on every node)
//!        --front::sema--> typed IR (ir.rs: ids, typed qualifiers, converted immediates)
//!        --layout--> globals arena + per-kernel launch block
//!        --back::spirv--> SPIR-V words + reflect::Reflection
//! ```
//!
//! The instruction forms of the spec are written down once, declaratively, in [`isa`]: the
//! parser, the validator, the reference interpreter (crate `pisa-reference`) and the SPIR-V
//! back end all read that table.
//!
//! The entry points are [`check`] (front end only) and [`compile`] (front end and back end).
//! Nothing here touches Vulkan; the `pisa-runtime` crate does.

#![warn(missing_docs)]

pub mod back;
pub mod diag;
pub mod front;
pub mod ir;
pub mod isa;
pub mod layout;
pub mod reflect;
pub mod span;

pub use back::spirv::{FloatModel, FloatWidths, Options, SubgroupMapping, Translation};
pub use diag::{Diagnostic, Diagnostics};
pub use span::{SourceFile, Span};

/// Parses and validates one PISA source file into the typed IR.
///
/// Every error of the file that the parser can recover from is reported in one
/// [`Diagnostics`].
pub fn check(file: &std::sync::Arc<SourceFile>) -> Result<ir::Module, Diagnostics> {
    front::check(file)
}

/// Parses, validates and translates one PISA source file to SPIR-V.
pub fn compile(
    file: &std::sync::Arc<SourceFile>,
    options: &Options,
) -> Result<Translation, Diagnostics> {
    let module = check(file)?;
    back::spirv::translate(&module, options).map_err(|errors| Diagnostics {
        file: file.clone(),
        errors,
    })
}
