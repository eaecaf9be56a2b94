//! Each rule's direction, kind and target from costs (Isaria's cost differential): the side
//! dearer over all targets is the left side; then, with Δ the left cost minus the right cost
//! on each target,
//!
//! - Δ = 0 everywhere: `lift` (cost-neutral, Isaria's expansion rules: they only make shapes
//!   other rules and instructions match);
//! - Δ ≥ 0 everywhere: `simplify` (an optimisation on every target; both phases);
//! - otherwise: `lower` for each ISA whose targets all have Δ > 0 (a target-specific
//!   rewrite, Isaria's compilation rules); dropped when no ISA gains.
//!
//! The stored reason lists every target's two costs.

use super::cost::CostModel;
use crate::ir::Expr;

/// How a rule is used, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Whether the second side is the left side.
    pub flipped: bool,
    pub kind: &'static str,
    /// The ISAs the rule is for (empty: every target).
    pub isas: Vec<&'static str>,
    pub reason: String,
}

/// The ISA of a target name.
pub fn isa_of(target: &str) -> &'static str {
    crate::select::target::TARGETS
        .iter()
        .find(|t| t.name == target)
        .map_or("", |t| t.isa)
}

/// Direction and kind of the equality `a == b` from the costs on every target; None when it
/// is dearer on some target and cheaper on no whole ISA (no phase wants it).
pub fn classify(a: &Expr, b: &Expr, models: &[CostModel], a_first: bool) -> Option<Phase> {
    let costs: Vec<(f64, f64)> = models.iter().map(|m| (m.cost(a).0, m.cost(b).0)).collect();
    let total: f64 = costs.iter().map(|(x, y)| x - y).sum();
    let flipped = total < 0.0 || (total == 0.0 && !a_first);
    let delta: Vec<f64> = costs
        .iter()
        .map(|(x, y)| if flipped { y - x } else { x - y })
        .collect();
    let shown: Vec<String> = models
        .iter()
        .zip(&costs)
        .map(|(m, (x, y))| {
            let (l, r) = if flipped { (y, x) } else { (x, y) };
            format!("{} {l}->{r}", m.target)
        })
        .collect();
    let isas_where = |keep: &dyn Fn(f64) -> bool| -> Vec<&'static str> {
        let mut isas: Vec<&'static str> = Vec::new();
        for m in models {
            let isa = isa_of(m.target);
            if !isas.contains(&isa) {
                isas.push(isa);
            }
        }
        // An ISA qualifies when every target of it does.
        isas.retain(|isa| {
            models
                .iter()
                .zip(&delta)
                .filter(|(m, _)| isa_of(m.target) == *isa)
                .all(|(_, d)| keep(*d))
        });
        isas
    };
    let (kind, isas, why) = if delta.iter().all(|d| *d == 0.0) {
        ("lift", vec![], "cost-neutral on every target (expansion)")
    } else if delta.iter().all(|d| *d >= 0.0) {
        (
            "simplify",
            vec![],
            "no dearer on any target, cheaper on some",
        )
    } else {
        let isas = isas_where(&|d| d > 0.0);
        if isas.is_empty() {
            return None;
        }
        ("lower", isas, "cheaper on these ISAs only")
    };
    Some(Phase {
        flipped,
        kind,
        isas,
        reason: format!("{why}: cost {}", shown.join(", ")),
    })
}
