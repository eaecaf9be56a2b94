//! Validation of instruction semantics against real execution: every instruction with an
//! intrinsic is called from a generated C harness (natively, or under qemu) on many inputs and
//! each result lane is compared with the interpreter's.
//!
//! The C toolchains, the CPU feature table and the C types come from [`crate::toolchain`].
//!
//! - [`inputs`]: deterministic edge-value and random inputs, immediates.
//! - [`harness`]: the batched C program and its stdin/stdout protocol.
//! - [`exec`]: running a batch, pinning compile errors and crashes on single instructions.
//! - [`compare`]: lane comparison and mismatch descriptions.
//! - [`store`]: results in `validation_results` and its CSV export.
//! - [`run`]: the `validate` command's driver; [`batches`]: running one ISA's batches on
//!   worker threads; [`report`]: its options and what it found.
//!
//! Environment: `ISADB_REQUIRE_TOOLS=1` makes a missing compiler or emulator an error (else the
//! ISA's instructions are skipped); `ISADB_KEEP_HARNESS=1` keeps the generated C sources in the
//! temporary work directory; `ISADB_VALIDATE_TIMING=1` prints per-batch compile+run and
//! interpreter times on stderr.

mod batches;
pub mod compare;
pub mod exec;
pub mod harness;
pub mod inputs;
pub mod report;
pub mod run;
pub mod store;

pub use report::{Options, Report, DEFAULT_INPUTS};
pub use run::validate;
pub use store::ValidationStatus;
