//! Back ends.
pub mod spirv;
