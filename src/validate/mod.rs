//! Validation of instruction semantics against real execution.
pub mod toolchain;
