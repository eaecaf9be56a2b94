//! Each rule's direction, kind and target from costs (Isaria's cost differential): the side
//! dearer over all targets is the left side; then, with Δ the left cost minus the right cost
//! on each target,
//!
//! - Δ = 0 everywhere: `expand` (cost-neutral, Isaria's expansion rules: they only make shapes
//!   other rules and instructions match; selection's committing lift phase does not run them,
//!   as they swamp it and keep it from the idioms it lifts to);
//! - Δ ≥ 0 everywhere: `simplify` (an optimisation on every target; both phases);
//! - otherwise: `lower` for each ISA whose targets all have Δ > 0 (a target-specific
//!   rewrite, Isaria's compilation rules), and the other way round, `lower` for each ISA whose
//!   targets all have Δ < 0 (NEON's `sqabs` is `i8_sat(abs(i16(x_i8)))`, dearer than
//!   `i8_sat(abs(x_i8))` on x86); dropped when no ISA gains either way.
//!
//! The stored reason lists every target's two costs.

use super::cost::CostModel;
use crate::ir::Expr;
use crate::rules::RuleKind;
use crate::spec::Isa;

/// How a rule is used, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Whether the second side is the left side.
    pub flipped: bool,
    pub kind: RuleKind,
    /// The ISAs the rule is for (empty: every target).
    pub isas: Vec<Isa>,
    pub reason: String,
}

/// Direction and kind of the equality `a == b` from the costs on every target: one phase, or
/// for a rule cheaper on some ISAs and dearer on others a `lower` phase each way for the ISAs
/// it gains on; none when no phase wants it.
pub fn classify(a: &Expr, b: &Expr, models: &[CostModel], a_first: bool) -> Vec<Phase> {
    let costs: Vec<(f64, f64)> = models.iter().map(|m| (m.cost(a).0, m.cost(b).0)).collect();
    let total: f64 = costs.iter().map(|(x, y)| x - y).sum();
    let flipped = total < 0.0 || (total == 0.0 && !a_first);
    let delta: Vec<f64> = costs
        .iter()
        .map(|(x, y)| if flipped { y - x } else { x - y })
        .collect();
    let shown = |flipped: bool| -> String {
        let costs: Vec<String> = models
            .iter()
            .zip(&costs)
            .map(|(m, (x, y))| {
                let (l, r) = if flipped { (y, x) } else { (x, y) };
                format!("{} {l}->{r}", m.target.name)
            })
            .collect();
        costs.join(", ")
    };
    let isas_where = |keep: &dyn Fn(f64) -> bool| -> Vec<Isa> {
        let mut isas: Vec<Isa> = Vec::new();
        for m in models {
            let isa = m.target.isa;
            if !isas.contains(&isa) {
                isas.push(isa);
            }
        }
        // An ISA qualifies when every target of it does.
        isas.retain(|isa| {
            models
                .iter()
                .zip(&delta)
                .filter(|(m, _)| m.target.isa == *isa)
                .all(|(_, d)| keep(*d))
        });
        isas
    };
    let phase = |flipped: bool, kind, isas, why: &str| Phase {
        flipped,
        kind,
        isas,
        reason: format!("{why}: cost {}", shown(flipped)),
    };
    if delta.iter().all(|d| *d == 0.0) {
        let why = "cost-neutral on every target (expansion)";
        return vec![phase(flipped, RuleKind::Expand, vec![], why)];
    }
    if delta.iter().all(|d| *d >= 0.0) {
        let why = "no dearer on any target, cheaper on some";
        return vec![phase(flipped, RuleKind::Simplify, vec![], why)];
    }
    let why = "cheaper on these ISAs only";
    [
        (flipped, isas_where(&|d| d > 0.0)),
        (!flipped, isas_where(&|d| d < 0.0)),
    ]
    .into_iter()
    .filter(|(_, isas)| !isas.is_empty())
    .map(|(flipped, isas)| phase(flipped, RuleKind::Lower, isas, why))
    .collect()
}
