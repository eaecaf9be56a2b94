//! isadb: vector ISA semantics, cross-ISA classes and verified rewrite rules in one SQLite rule
//! database, with an interpreter and a z3 encoding of every instruction.
//!
//! The modules follow the data's journey, each importing only from those before it: the IR
//! ([`Expr`]), its semantics (interpreter and z3), the spec language and the ISA/target
//! vocabulary, the database and the C toolchains, the idiom matcher and the rewrite rules, the
//! project (layout, opening, rebuilding), then queries, instruction selection, rule synthesis,
//! whole kernels (phased equality saturation) and validation against real execution, the
//! benchmark, and the command line ([`cli`], the binary's interface). Below are the types and
//! functions the binary and the tests use; [`testing`]
//! holds what only tests need.
#![warn(missing_docs)]

/// egglog and the rule engines allocate many small objects; mimalloc (already built for egglog)
/// makes selection markedly faster than the system allocator. Declared in the library, so that
/// the binary and every test linking it (the in-process selection walks) use it. Built without
/// transparent huge pages (`no_thp`): zeroing 2 MB pages on first touch took a fifth of a small
/// kernel's compile and a third of its memory, and selection was no faster with them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod classes;
mod clock;
mod database;
mod error;
mod idioms;
mod ir;
mod kernel;
mod port;
mod project;
mod query;
mod rules;
mod select;
mod semantics;
mod spec;
mod synth;
mod toolchain;
mod validate;
mod words;

#[cfg(test)]
mod fuzz;

pub mod cli;
pub mod testing;

pub use database::{Database, Filter};
pub use error::{elide_long_words, note, Error, Location, Result};
pub use ir::limits::{MAX_JOBS, MAX_RUNS, MAX_TERM_SIZE};
pub use ir::{Elem, Expr, Macros, Op, VecType};
pub use kernel::{CostModel, KernelTarget, Outputs as KernelOutputs, RuleSet};
pub use project::{Home, Project};
pub use rules::verify::{Options as VerifyOptions, Report as VerifyReport};
pub use rules::{Rule, RuleKind, RuleStatus};
pub use select::check::RunCheck;
pub use select::totality::{self, Cell, Coverage, TargetTable};
pub use select::{prove_selection, Compiled, Node, Proof, Report, Request, Selector, Step};
pub use semantics::prove::DEFAULT_TIMEOUT_MS;
pub use semantics::{eval, prove_equivalent, Env, Value, Verdict};
pub use spec::{load_dir, load_macros, Instruction, Isa, Operand, SpecSet, Target, TARGETS};
pub use synth::{Options as SynthOptions, Report as SynthReport, Shard};
pub use toolchain::Toolchain;
pub use validate::{
    Options as ValidateOptions, Report as ValidationReport, ValidationStatus, DEFAULT_INPUTS,
};
