//! `isadb kernel`: whole kernels compiled by phased equality saturation over the database's
//! rules, as Diospyros and Isaria do, for the float DSP dialect and for x86 and NEON.
//!
//! The journey of a kernel, one module each: [`read`] (the lifted `(List ...)` form, hash-consed)
//! or [`c`] (a C subset lifted by symbolic evaluation) -> [`seed`] (a structured vectorization to
//! start from) -> [`compile`] (Isaria's loop: [`program`] generates the egglog program from the
//! rules in the database ([`rule`], [`phase`], [`store`]), [`saturate`] runs the phases,
//! [`extract`] picks the cheapest program under a [`cost`] model) -> [`validate`] (the result
//! proven equal to the spec over the reals) -> [`lower`] (C for the [`target`]) -> [`run`]
//! (compiled and compared with the spec on random inputs). [`family`] generates the benchmark
//! kernels and [`bench`] measures them; [`verify`] proves the rules; [`synth`] synthesizes them
//! as Isaria does.

pub mod bench;
pub mod c;
pub mod compile;
pub mod cost;
pub mod extract;
pub mod family;
pub mod file;
pub mod literal;
pub mod lower;
pub mod phase;
pub mod program;
pub mod read;
pub mod report;
pub mod rule;
pub mod run;
pub mod saturate;
pub mod seed;
pub mod store;
pub mod synth;
pub mod target;
pub mod term;
pub mod tune;
pub mod validate;
pub mod verify;

pub use c::Outputs;
pub use compile::Options;
pub use cost::Model as CostModel;
pub use file::compile_file;
pub use report::Report;
pub use store::RuleSet;
pub use target::KernelTarget;
