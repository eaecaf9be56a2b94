//! Isaria's phases: a rule whose cost differential C(lhs) - C(rhs) exceeds alpha compiles
//! (scalar to vector); otherwise one whose aggregate cost C(lhs) + C(rhs) exceeds beta expands
//! (explores scalar forms) and the rest optimize (vector to vector). Costs are the `isaria` model's
//! at the dialect's base width, wildcards free. Alpha and beta are not typed in: [`candidates`]
//! lists the boundaries between the rules' own cost points and `isadb kernel --tune` picks the
//! pair that compiles the small kernels best, recorded in the database.

use super::cost::{node_cost, Model};
use super::rule::{instantiate, KernelRule, Term};
use super::target::{KernelTarget, Target};
use super::term::Op;
use super::term::{Leaf, Operand};

/// The width rules are analysed at (the peers' DSP).
pub const BASE_WIDTH: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    Expand,
    Compile,
    Optimize,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Expand, Phase::Compile, Phase::Optimize];

    /// The rule kind (and egglog ruleset) of the phase.
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Expand => "expand",
            Phase::Compile => "compile",
            Phase::Optimize => "optimize",
        }
    }

    /// The `phase` column: the order phases run in.
    pub fn number(&self) -> i64 {
        *self as i64 + 1
    }

    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// A rule's cost differential and aggregate cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostPoint {
    pub differential: f64,
    pub aggregate: f64,
}

/// The `isaria`-model cost of an instantiated pattern; wildcards cost nothing.
fn pattern_cost(t: &Term) -> Operand {
    let unit = Target::unit(KernelTarget::Dsp);
    match t {
        Term::Wild(_) => Operand {
            cost: 0.0,
            leaf: Leaf::Literal,
        },
        Term::Num(n) => Operand {
            cost: node_cost(Model::Isaria, &unit, Op::Num(*n), &[]),
            leaf: Leaf::of(Op::Num(*n)),
        },
        Term::App(op, args) => {
            let args: Vec<Operand> = args.iter().map(pattern_cost).collect();
            Operand {
                cost: node_cost(Model::Isaria, &unit, *op, &args)
                    + args.iter().map(|a| a.cost).sum::<f64>(),
                leaf: Leaf::No,
            }
        }
    }
}

pub fn cost_point(rule: &KernelRule) -> CostPoint {
    let l = pattern_cost(&instantiate(&rule.lhs, BASE_WIDTH)).cost;
    let r = pattern_cost(&instantiate(&rule.rhs, BASE_WIDTH)).cost;
    CostPoint {
        differential: l - r,
        aggregate: l + r,
    }
}

/// Isaria's assignment.
pub fn assign(point: CostPoint, alpha: f64, beta: f64) -> Phase {
    if point.differential > alpha {
        Phase::Compile
    } else if point.aggregate > beta {
        Phase::Expand
    } else {
        Phase::Optimize
    }
}

/// Candidate boundaries: below every value, between each pair of neighbours, above every value.
fn boundaries(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut out = Vec::new();
    if let Some(first) = values.first() {
        out.push(first - 1.0);
    }
    for w in values.windows(2) {
        out.push((w[0] + w[1]) / 2.0);
    }
    if let Some(last) = values.last() {
        out.push(last + 1.0);
    }
    out
}

/// The (alpha, beta) pairs that give different phase assignments of these rules.
pub fn candidates(rules: &[KernelRule]) -> Vec<(f64, f64)> {
    let points: Vec<CostPoint> = rules.iter().map(cost_point).collect();
    let alphas = boundaries(points.iter().map(|p| p.differential).collect());
    let betas = boundaries(points.iter().map(|p| p.aggregate).collect());
    let mut seen: Vec<Vec<Phase>> = Vec::new();
    let mut out = Vec::new();
    for &a in &alphas {
        for &b in &betas {
            let phases: Vec<Phase> = points.iter().map(|p| assign(*p, a, b)).collect();
            if !seen.contains(&phases) {
                seen.push(phases);
                out.push((a, b));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rule::parse;

    #[test]
    fn vectorizing_rules_have_large_differentials() {
        let rules = parse(
            "(rule vec-add (Vec (+ a b) ...) (VecAdd (Vec a ...) (Vec b ...)))\n\
             (rule add-comm (+ a b) (+ b a))\n\
             (rule vec-add-comm (VecAdd a b) (VecAdd b a))",
            "t.rules",
        )
        .unwrap();
        let p: Vec<CostPoint> = rules.iter().map(cost_point).collect();
        assert!(
            (p[0].differential - (100.0 + 8.0 - 1.2)).abs() < 1e-9,
            "{p:?}"
        );
        assert_eq!(
            p[1],
            CostPoint {
                differential: 0.0,
                aggregate: 4.0
            }
        );
        assert_eq!(
            p[2],
            CostPoint {
                differential: 0.0,
                aggregate: 2.0
            }
        );
        assert_eq!(assign(p[0], 15.0, 3.0), Phase::Compile);
        assert_eq!(assign(p[1], 15.0, 3.0), Phase::Expand);
        assert_eq!(assign(p[2], 15.0, 3.0), Phase::Optimize);
        let c = candidates(&rules);
        assert!(c.len() >= 3, "{c:?}");
    }
}
