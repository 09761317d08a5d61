//! The front end: PISA source text to the typed IR of [`crate::ir`].
//!
//! Three stages, one module each: [`lexer`] (a byte-level scanner: tokens with spans, pulled by
//! the parser one at a time), [`parser`] (recursive descent to the [`ast`], recovering at `;` and `}`), and
//! [`sema`] (name resolution, the instruction table of [`crate::isa`], every restriction of the
//! spec, immediate conversion).
//! Every stage reports into one list of diagnostics, so one run shows every error of a file.
//!
//! The front end never panics on any input: recursion is bounded by the scope depth limit of the
//! parser, and register ranges are capped.

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod sema;

use crate::{diag::Diagnostics, ir, span::SourceFile};
use std::sync::Arc;

/// Parses and validates `file` into the typed IR.
pub fn check(file: &Arc<SourceFile>) -> Result<ir::Module, Diagnostics> {
    let src = file.text.as_str();
    let mut errors = Vec::new();
    let ast = parser::parse(src, &mut errors);
    let module = sema::check(src, &ast, &mut errors);
    if errors.is_empty() {
        Ok(module)
    } else {
        errors.sort_by_key(|d| (d.span.start, d.span.end));
        errors.dedup();
        Err(Diagnostics::new(file.clone(), errors))
    }
}
