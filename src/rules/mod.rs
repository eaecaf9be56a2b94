//! Hand-written rewrite rules: their syntax (`specs/rules/*.rules`), loading them into the
//! `rules` table, proving them with z3 (`isadb verify-rules`) and mutating them (tests).

pub mod load;
pub mod mutate;
pub mod syntax;
pub mod verify;

pub use syntax::{parse_rules, Rule};
