//! Proofs during the search: a candidate is proven (or refuted) by z3 at one lane, which
//! covers every lane count because its operators are lane-wise; the rules that are kept are
//! proven again by `verify_rule` at each type they claim, at 4 lanes and one full register.

use super::term::Term;
use crate::error::Result;
use crate::ir::halide::elaborate_halide;
use crate::ir::{Expr, Macros};
use crate::rules::load::broadcast_constants;
use crate::semantics::{prove_equivalent, Verdict};
use std::rc::Rc;

/// Solver budget per candidate during the search.
pub const SEARCH_TIMEOUT_MS: u32 = 4_000;

/// The outcome of proving one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Proven,
    Refuted,
    Unknown,
}

/// `a == b` (under `predicate`, a bool-lane expression) at one lane.
pub fn prove(a: &Expr, b: &Expr, predicate: Option<&Expr>) -> Result<Outcome> {
    Ok(match prove_equivalent(a, b, predicate, SEARCH_TIMEOUT_MS)? {
        Verdict::Proven { .. } => Outcome::Proven,
        Verdict::Counterexample { .. } => Outcome::Refuted,
        Verdict::Unknown { .. } => Outcome::Unknown,
    })
}

/// A term at one lane, constant wildcards (`c0_u8`) as broadcast scalars.
pub fn at_one_lane(t: &Term, macros: &Macros) -> Result<Rc<Expr>> {
    Ok(broadcast_constants(&t.elaborate(macros, 1)?))
}

/// A predicate text (rule syntax, concrete types) at one lane.
pub fn predicate_at_one_lane(text: &str, macros: &Macros) -> Result<Rc<Expr>> {
    Ok(broadcast_constants(&elaborate_halide(
        text,
        "synthesized predicate",
        macros,
        1,
    )?))
}
