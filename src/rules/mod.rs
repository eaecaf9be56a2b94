//! Hand-written rewrite rules: their syntax (`specs/rules/*.rules`), elaborating them, storing
//! them in the `rules` table, and proving them with z3 (`isadb verify-rules`).

pub mod load;
pub mod store;
pub mod syntax;
pub mod verdict;
pub mod verify;

pub use store::{stored_rules, sync_rules};
pub use syntax::{Rule, RuleKind};
pub use verdict::RuleStatus;
