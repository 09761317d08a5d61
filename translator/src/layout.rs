//! Memory layout decisions (to be written).
