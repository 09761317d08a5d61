//! Reflection (to be written).
