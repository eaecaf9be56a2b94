//! Validation of instruction semantics against real execution: every instruction with an
//! intrinsic is called from a generated C harness (natively, or under qemu) on many inputs and
//! each result lane is compared with the interpreter's.
//!
//! - [`toolchain`]: compile and run C for x86, NEON and HVX.
//! - [`ctype`]: the C type of each operand and result, and its bytes.
//! - [`inputs`]: deterministic edge-value and random inputs, immediates.
//! - [`harness`]: the batched C program and its stdin/stdout protocol.
//! - [`features`]: compiler flags per CPU feature, and what this machine cannot run.
//! - [`exec`]: running a batch, pinning compile errors and crashes on single instructions.
//! - [`compare`]: lane comparison and mismatch descriptions.
//! - [`store`]: results in `validation_results` and its CSV export.
//! - [`run`]: the `validate` command's driver.
//!
//! Environment: `ISADB_REQUIRE_TOOLS=1` makes a missing compiler or emulator an error (else the
//! ISA's instructions are skipped); `ISADB_KEEP_HARNESS=1` keeps the generated C sources in the
//! temporary work directory; `ISADB_VALIDATE_TIMING=1` prints per-batch compile+run and
//! interpreter times on stderr.
pub mod compare;
pub mod ctype;
pub mod exec;
pub mod features;
pub mod harness;
pub mod inputs;
pub mod run;
pub mod store;
pub mod toolchain;

pub use run::{validate, InstrResult, IsaSummary, Options, Report};
