//! Lowering rules (Hydride's search, lane-wise scaled): for one target and element type, the
//! goals are the single operators and idioms the target's instructions do not cover (the
//! cost model scalarizes them); the grammar is pruned to the nodes the target does cover (each
//! one instruction, reinterpreting casts free), enumerated up to a size bound; a term with the
//! goal's fingerprint is a candidate, as is one of two enumerated terms joined by an invertible
//! operator (met in the middle, see [`Join`]); the cheapest proven one at one lane wins, and the kept
//! rule is proven again at 4 lanes and one full register by `verify_rule`.

use super::cost::{CostModel, SCALARIZED};
use super::fingerprint::{fingerprint, Inputs};
use super::proof::{at_one_lane, prove, Outcome};
use super::term::{side_text, Head, Term};
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

/// Joined candidates per goal, smallest first, that are costed (each costing elaborates the
/// term).
const JOINED_PER_GOAL: usize = 64;

/// The enumerated terms by type and fingerprint.
type Prints<'a> = HashMap<(Elem, &'a [u128]), Vec<Rc<Term>>>;

/// How the lowering search joins enumerated terms (part of a piece's key).
pub const COMPOSITION: &str = "composed by + - ^ over the goal's variables";

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
    let prints: Vec<(Rc<Term>, Vec<u128>)> = terms
        .iter()
        .filter_map(|t| Some((t.clone(), fingerprint(t, macros, &inputs)?)))
        .collect();
    let mut by_print: Prints = HashMap::new();
    for (t, fp) in &prints {
        by_print.entry((t.elem, fp)).or_default().push(t.clone());
    }
    let mut found = Vec::new();
    for goal in goals {
        let Some(fp) = fingerprint(&goal, macros, &inputs) else {
            continue;
        };
        let same = by_print
            .get(&(goal.elem, &fp[..]))
            .map_or(&[][..], Vec::as_slice);
        let g = at_one_lane(&goal, macros)?;
        let goal_cost = model.cost(&g).0;
        let goal_vars = goal.vars();
        let mut ranked: Vec<(f64, Rc<Term>, Vec<String>)> = Vec::new();
        let composed = compositions(&goal, &fp, &prints, &by_print, &coverage);
        for t in same.iter().chain(&composed) {
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

/// An operator whose other operand follows from one operand and the result (wrapping).
#[derive(Clone, Copy)]
enum Join {
    /// `a + b = g`: `b = g - a`.
    Add,
    /// `a - b = g`: `b = a - g`.
    Sub,
    /// `b - a = g`: `b = g + a`.
    SubFrom,
    /// `a ^ b = g`: `b = g ^ a`.
    Xor,
}

impl Join {
    const ALL: [Join; 4] = [Join::Add, Join::Sub, Join::SubFrom, Join::Xor];

    fn operator(self) -> &'static str {
        match self {
            Join::Add => "+",
            Join::Sub | Join::SubFrom => "-",
            Join::Xor => "^",
        }
    }

    /// The other operand's lane, from the goal's lane `g` and the known operand's `a`.
    fn other(self, g: u128, a: u128) -> u128 {
        match self {
            Join::Add => g.wrapping_sub(a),
            Join::Sub => a.wrapping_sub(g),
            Join::SubFrom => g.wrapping_add(a),
            Join::Xor => g ^ a,
        }
    }

    fn node(self, elem: Elem, a: Rc<Term>, b: Rc<Term>) -> Rc<Term> {
        let args = match self {
            Join::SubFrom => vec![b, a],
            _ => vec![a, b],
        };
        Term::node(Head::Binary(self.operator()), elem, args)
    }
}

/// Two enumerated terms joined by one invertible operator into a term with the goal's
/// fingerprint (Hydride's sequences past the size bound, met in the middle): for each first
/// operand `a`, the fingerprint the other operand needs is computed from the goal's and looked
/// up, so sequences of twice the enumerated size are reached without enumerating them. Per
/// first operand and operator, the smallest matching term; the smallest [`JOINED_PER_GOAL`]; both
/// operands over the goal's variables only.
fn compositions(
    goal: &Term,
    goal_print: &[u128],
    prints: &[(Rc<Term>, Vec<u128>)],
    by_print: &Prints,
    coverage: &Coverage,
) -> Vec<Rc<Term>> {
    let elem = goal.elem;
    let mask = elem.mask();
    // Only terms over the goal's variables join (others would take the cap's places).
    let goal_vars = goal.vars();
    let over_goal = |t: &Term| t.vars().iter().all(|v| goal_vars.contains(v));
    let (x, y) = (Term::var("a", elem), Term::var("b", elem));
    let mut out = Vec::new();
    for join in Join::ALL {
        if !coverage.covered(&join.node(elem, x.clone(), y.clone())) {
            continue;
        }
        for (a, fa) in prints
            .iter()
            .filter(|(a, _)| a.elem == elem && over_goal(a))
        {
            let need: Vec<u128> = goal_print
                .iter()
                .zip(fa)
                .map(|(g, a)| mask & join.other(*g, *a))
                .collect();
            if let Some(b) = by_print
                .get(&(elem, &need[..]))
                .and_then(|bs| bs.iter().filter(|b| over_goal(b)).min_by_key(|b| b.size()))
            {
                out.push(join.node(elem, a.clone(), b.clone()));
            }
        }
    }
    out.sort_by_key(|t| t.size());
    out.truncate(JOINED_PER_GOAL);
    out
}

/// Whether a goal's operands are x, then y (or a literal): one operator on independent inputs.
fn distinct_operands(t: &Term) -> bool {
    let names: Vec<String> = t
        .args
        .iter()
        .filter_map(|a| match &a.head {
            Head::Var(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    names
        .iter()
        .map(String::as_str)
        .eq(["x", "y"].into_iter().take(names.len()))
}
