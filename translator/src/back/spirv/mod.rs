//! SPIR-V back end (to be written).
use crate::{diag::Diagnostic, ir};

/// Translation options.
#[derive(Clone, Debug, Default)]
pub struct Options {}

/// The result of a translation.
#[derive(Clone, Debug)]
pub struct Translation {
    /// SPIR-V words.
    pub spirv: Vec<u32>,
}

/// Translates a module.
pub fn translate(_module: &ir::Module, _options: &Options) -> Result<Translation, Vec<Diagnostic>> {
    Err(vec![])
}
