//! Where a rule's proof stands: its status, and the verdict of one proof run over every type
//! and lane count the rule is checked at.

use crate::words::text_enum;
use serde::Serialize;

text_enum! {
    /// Where a rule's proof stands.
    pub enum RuleStatus("rule status") {
        /// Not proven yet (or changed since).
        Unverified = "unverified",
        /// Proven by z3 at every type and lane count it is checked at.
        Proven = "proven",
        /// z3 found a counterexample.
        Refuted = "refuted",
        /// z3 gave up.
        Unknown = "unknown",
    }
}

/// The verdict on one rule over all its types and lane counts.
#[derive(Debug, Clone, Serialize)]
pub struct RuleVerdict {
    /// The rule.
    pub name: String,
    /// Proven, refuted or unknown.
    pub status: RuleStatus,
    /// The element types proven (empty for a monomorphic rule).
    pub types_proven: Vec<String>,
    /// The lane counts proven.
    pub lanes_proven: Vec<u32>,
    /// Where a refutation or an unknown happened, and the counterexample.
    pub counterexample: Option<String>,
    /// Total solver time.
    pub solver_ms: f64,
}
