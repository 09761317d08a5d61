//! The instruction table (to be written).
