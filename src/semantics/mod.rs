//! Semantics, twice: a concrete interpreter and a z3 encoding that agree lane for lane.

mod attempt;
mod bitvec;
pub mod budget;
mod context;
mod cut_points;
pub mod float_bits;
mod generalize;
pub mod interp;
mod lane_queries;
pub mod prove;
pub mod read_ranges;
mod reals;
pub mod sample;
pub mod smt;
pub mod value;

pub use context::in_a_fresh_context;
pub use generalize::reads_a_generalizable_numeral;
pub use interp::{eval, Env};
pub use prove::{prove_equivalent, prove_equivalent_by_parts, Verdict};
pub use value::Value;

#[cfg(test)]
mod abstraction_tests;
#[cfg(test)]
mod cut_point_tests;
#[cfg(test)]
mod division_tests;
#[cfg(test)]
mod generalize_tests;
#[cfg(test)]
mod product_tests;
