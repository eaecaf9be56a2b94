//! Lowering rules (Hydride's search, lane-wise scaled): for one target and element type, the
//! goals are the single operators and idioms the target's instructions do not cover (the
//! cost model scalarizes them); the grammar is pruned to the nodes the target does cover (each
//! one instruction, reinterpreting casts free), enumerated up to a size bound; a term with the
//! goal's fingerprint is a candidate, the cheapest proven one at one lane wins, and the kept
//! rule is proven again at 4 lanes and one full register by `verify_rule`.

use super::cost::{CostModel, SCALARIZED};
use super::fingerprint::{fingerprint, Inputs};
use super::proof::{at_one_lane, prove, Outcome};
use super::term::{side_text, Term};
use super::workload::{enumerate, lifting, Grammar};
use super::{Found, Tally};
use crate::error::Result;
use crate::ir::{Elem, Macros};
use crate::rules::RuleKind;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Candidates proven per goal, cheapest first, before giving up on it.
const TRIES_PER_GOAL: usize = 6;

/// The lowering grammar at `base`: the lifting workload's operators over two variables.
pub fn grammar(base: Elem, max_size: usize) -> Grammar {
    Grammar {
        vars: vec!["x", "y"],
        ..lifting(base, max_size)
    }
}

/// The node with its operands replaced by variables (literals kept): what one instruction
/// would have to compute.
fn shape(t: &Term) -> Rc<Term> {
    let names = ["a", "b", "c", "d"];
    let args = t
        .args
        .iter()
        .zip(names)
        .map(|(a, n)| {
            if a.is_const() {
                a.clone()
            } else {
                Term::var(n, a.elem)
            }
        })
        .collect();
    Term::node(t.head.clone(), t.elem, args)
}

/// Whether the target computes the node with one instruction (or for free).
struct Coverage<'a> {
    model: &'a CostModel,
    macros: &'a Macros,
    memo: RefCell<HashMap<String, f64>>,
}

impl Coverage<'_> {
    fn cost(&self, t: &Term) -> f64 {
        if t.args.is_empty() {
            return 0.0;
        }
        let s = shape(t);
        let key = s.to_string();
        if let Some(c) = self.memo.borrow().get(&key) {
            return *c;
        }
        let c = at_one_lane(&s, self.macros).map_or(f64::INFINITY, |e| self.model.cost(&e).0);
        self.memo.borrow_mut().insert(key, c);
        c
    }

    fn covered(&self, t: &Term) -> bool {
        self.cost(t) < SCALARIZED
    }
}

/// Searches the lowerings of one target at one element type.
pub fn search(
    grammar: &Grammar,
    model: &CostModel,
    piece: &str,
    macros: &Macros,
) -> Result<(Vec<Found>, Tally)> {
    let mut tally = Tally::default();
    let coverage = Coverage {
        model,
        macros,
        memo: RefCell::new(HashMap::new()),
    };
    let goals: Vec<Rc<Term>> = enumerate(
        &Grammar {
            max_size: 3,
            ..grammar.clone()
        },
        &|_| true,
    )
    .into_iter()
    .filter(|t| t.size() > 1 && t.args.iter().all(|a| a.args.is_empty()))
    .filter(|t| distinct_operands(t))
    .filter(|t| !coverage.covered(t))
    .collect();
    if goals.is_empty() {
        return Ok((vec![], tally));
    }
    let terms = enumerate(grammar, &|t| coverage.covered(t));
    tally.terms = terms.len();
    let inputs = Inputs::new(&grammar.variables(), None);
    let mut by_print: HashMap<(Elem, Vec<u128>), Vec<Rc<Term>>> = HashMap::new();
    for t in &terms {
        if let Some(fp) = fingerprint(t, macros, &inputs) {
            by_print.entry((t.elem, fp)).or_default().push(t.clone());
        }
    }
    let mut found = Vec::new();
    for goal in goals {
        let Some(fp) = fingerprint(&goal, macros, &inputs) else {
            continue;
        };
        let Some(same) = by_print.get(&(goal.elem, fp)) else {
            continue;
        };
        let g = at_one_lane(&goal, macros)?;
        let goal_cost = model.cost(&g).0;
        let goal_vars = goal.vars();
        let mut ranked: Vec<(f64, Rc<Term>, Vec<String>)> = Vec::new();
        for t in same {
            if t.vars().iter().any(|v| !goal_vars.contains(v)) {
                continue;
            }
            let (c, instructions) = model.cost(&*at_one_lane(t, macros)?);
            if c < goal_cost {
                ranked.push((c, t.clone(), instructions));
            }
        }
        ranked.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| a.1.size().cmp(&b.1.size()))
                .then_with(|| a.1.to_string().cmp(&b.1.to_string()))
        });
        tally.candidates += ranked.len().min(TRIES_PER_GOAL);
        for (c, t, instructions) in ranked.into_iter().take(TRIES_PER_GOAL) {
            match prove(&g, &*at_one_lane(&t, macros)?, None)? {
                Outcome::Proven => {
                    tally.proven += 1;
                    found.push(Found {
                        types: vec![],
                        lhs: side_text(&goal),
                        rhs: side_text(&t),
                        predicate: None,
                        kind: RuleKind::Lower,
                        isas: vec![model.target.isa],
                        reason: format!(
                            "{} has no single instruction for it: cost {goal_cost} -> {c} ({})",
                            model.target.name,
                            instructions.join(" + ")
                        ),
                        piece: piece.to_string(),
                    });
                    break;
                }
                Outcome::Refuted => tally.refuted += 1,
                Outcome::Unknown => tally.unknown += 1,
            }
        }
    }
    Ok((found, tally))
}

/// Whether a goal's operands are x, then y (or a literal): one operator on independent inputs.
fn distinct_operands(t: &Term) -> bool {
    let names: Vec<String> = t
        .args
        .iter()
        .filter_map(|a| match &a.head {
            super::term::Head::Var(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    names
        .iter()
        .map(String::as_str)
        .eq(["x", "y"].into_iter().take(names.len()))
}
