//! Proofs during the search: a candidate is proven (or refuted) by z3 at one lane, which
//! covers every lane count because its operators are lane-wise; the rules that are kept are
//! proven again by `verify_rule` at each type they claim, at 4 lanes and one full register.

use super::term::Term;
use crate::error::Result;
use crate::ir::halide::elaborate_halide;
use crate::ir::{Expr, Macros};
use crate::rules::load::broadcast_constants;
use crate::semantics::budget::{check, Theory};
use crate::semantics::smt::Encoder;
use std::rc::Rc;
use z3::ast::Bool;
use z3::{SatResult, Solver};

/// Solver budget per candidate during the search, and per extra type a rule claims (a type
/// that does not prove in time is not claimed).
pub const SEARCH_TIMEOUT_MS: u32 = 2_000;
pub const CLAIM_TIMEOUT_MS: u32 = 300;
/// How many times the budget a claim z3 could not decide in time is asked again with.
pub const RETRY_FACTOR: u32 = 3;

/// The outcome of proving one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Proven,
    Refuted,
    Unknown,
}

/// `a == b` (under `predicate`, a bool-lane expression) at one lane.
pub fn prove(a: &Expr, b: &Expr, predicate: Option<&Expr>) -> Result<Outcome> {
    prove_within(a, b, predicate, SEARCH_TIMEOUT_MS)
}

thread_local! {
    /// One incremental solver per thread, reused (push/pop) by every query over bytes: a fresh
    /// solver per query costs more than most of these small queries.
    static SOLVER: Solver = Solver::new();
}

/// [`prove`] with a solver budget. Both sides are encoded with the z3 encoding of the
/// semantics (src/semantics/smt.rs); a counterexample is not replayed here (the kept rules
/// are proven again by `verify_rule`, which does).
pub fn prove_within(
    a: &Expr,
    b: &Expr,
    predicate: Option<&Expr>,
    timeout_ms: u32,
) -> Result<Outcome> {
    if a.ty != b.ty {
        return Ok(Outcome::Refuted);
    }
    let mut enc = Encoder::new();
    let (l, r) = (enc.encode(a)?, enc.encode(b)?);
    let pre = match predicate {
        Some(p) => enc.encode(p)?,
        None => vec![],
    };
    let ask = |solver: &Solver| {
        solver.push();
        for lane in &pre {
            solver.assert(lane.flag());
        }
        for axiom in enc.axioms() {
            solver.assert(&axiom);
        }
        let differ: Vec<Bool> = l.iter().zip(&r).map(|(x, y)| x.equals(y).not()).collect();
        solver.assert(Bool::or(&differ.iter().collect::<Vec<_>>()));
        let result = check(solver, Theory::BitVectors, timeout_ms, Solver::check);
        solver.pop(1);
        match result {
            SatResult::Unsat => Outcome::Proven,
            SatResult::Sat => Outcome::Refuted,
            SatResult::Unknown => Outcome::Unknown,
        }
    };
    // Results wider than a byte go to z3's bit-vector solver, which simplifies and bit-blasts:
    // over the 1,828 such queries of the u8 pieces it took 50 s where the incremental core took
    // 95 s, and left 16 unknown where the core left 78 (a claim left unknown is asked again at
    // three times the budget); byte results the core decides faster (1.3 s against 1.9 s),
    // those narrowed from wider operands included (not measured apart).
    match a.ty.elem.bits() > 8 {
        true => Ok(Solver::new_for_logic("QF_BV").map_or(Outcome::Unknown, |s| ask(&s))),
        false => Ok(SOLVER.with(ask)),
    }
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
