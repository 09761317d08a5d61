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
//! A program of several modules (`.export`/`.import`) is linked on the typed IR before the
//! back end ([`link`]), so the back end always translates one module.
//!
//! The entry points are [`check`] (front end of one module), [`link()`] (front end of each
//! module, then the link), [`compile`] and [`compile_linked`] (all of it, then the back end).
//! Nothing here touches Vulkan; the `pisa-runtime` crate does.

#![warn(missing_docs)]

pub mod back;
pub mod calls;
pub mod diag;
pub mod front;
pub mod ir;
pub mod isa;
pub mod layout;
pub mod link;
pub mod reflect;
pub mod span;

pub use back::spirv::{FloatModel, FloatWidths, Options, SubgroupMapping, Translation};
pub use diag::{Diagnostic, Diagnostics};
pub use link::{link, Program};
pub use span::{SourceFile, SourceMap, Span};

/// Parses and validates one PISA source file into the typed IR.
///
/// Every error of the file that the parser can recover from is reported in one
/// [`Diagnostics`].
pub fn check(file: &std::sync::Arc<SourceFile>) -> Result<ir::Module, Diagnostics> {
    front::check(file)
}

/// Parses, validates and translates one PISA source file to SPIR-V. The file is linked on its
/// own first, so an import is an error here ([`compile_linked`] links several).
pub fn compile(
    file: &std::sync::Arc<SourceFile>,
    options: &Options,
) -> Result<Translation, Diagnostics> {
    compile_linked(std::slice::from_ref(file), options)
}

/// Parses and validates each file, links them into one program ([`link()`]) and translates it
/// to one SPIR-V module holding the kernels of every file.
pub fn compile_linked(
    files: &[std::sync::Arc<SourceFile>],
    options: &Options,
) -> Result<Translation, Diagnostics> {
    translate_program(&link(files)?, options)
}

/// Translates a linked program to SPIR-V.
pub fn translate_program(program: &Program, options: &Options) -> Result<Translation, Diagnostics> {
    back::spirv::translate(&program.module, options).map_err(|errors| Diagnostics {
        sources: program.sources.clone(),
        errors,
    })
}
