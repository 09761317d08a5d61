//! Code shared by the translator's integration tests.

pub mod cfg_gen;
