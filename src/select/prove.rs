//! Translation validation: the selected instructions, each replaced by its semantics over its
//! operands, proven equal to the input expression by z3 before a selection is used.

use super::catalog::Catalog;
use super::node::{input_types, Node};
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::semantics::{prove_equivalent, Verdict};
use std::rc::Rc;

const VALIDATION_TIMEOUT_MS: u32 = 60_000;

/// How a selection was proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// z3 proved it equivalent to the input.
    Z3,
    /// Its IR is the input's own tree (every operator scalarized or reinterpreted as given),
    /// which computes the same lanes without asking z3 (also where z3 has no encoding, as for
    /// bitcasts of f32 lanes, or a hard one, as for wide `expand`s).
    SameTree,
}

/// Proves that `root` computes `input`; a refutation is a bug in a rule or fact.
pub fn prove_selection(catalog: &Catalog, input: &Rc<Expr>, root: &Node) -> Result<Proof> {
    let selected = root.to_expr(catalog, &input_types(input))?;
    if let Some(proof) = by_congruence(input, &selected) {
        return Ok(proof);
    }
    match prove_equivalent(input, &selected, None, VALIDATION_TIMEOUT_MS)? {
        Verdict::Proven { .. } => Ok(Proof::Z3),
        Verdict::Counterexample { .. } => Err(Error::data(
            "translation validation",
            format!(
                "the selection for {} differs from the input (a bug in a rule or fact): {selected}",
                catalog.target.name
            ),
        )),
        Verdict::Unknown { reason, .. } => Err(Error::data(
            "translation validation",
            format!("z3 could not decide the selection ({reason})"),
        )),
    }
}

/// The proof that `selected` equals `input` when they are the same tree, or the same operator
/// over operands each proven equal (so a scalarized `compress` whose mask was selected is
/// proven by its mask alone, where z3 on the whole would have to reason about the lanes it
/// moves); None when that does not settle it.
fn by_congruence(input: &Rc<Expr>, selected: &Rc<Expr>) -> Option<Proof> {
    if selected == input {
        return Some(Proof::SameTree);
    }
    if selected.op != input.op
        || selected.ty != input.ty
        || selected.args.len() != input.args.len()
        || input.args.is_empty()
    {
        return None;
    }
    for (a, b) in input.args.iter().zip(&selected.args) {
        if by_congruence(a, b).is_none() {
            let proven = prove_equivalent(a, b, None, VALIDATION_TIMEOUT_MS).ok()?;
            if !matches!(proven, Verdict::Proven { .. }) {
                return None;
            }
        }
    }
    Some(Proof::Z3)
}
