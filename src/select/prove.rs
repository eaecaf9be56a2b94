//! Translation validation: the selected instructions, each replaced by its semantics over its
//! operands, proven equal to the input expression by z3 before a selection is used.

use super::catalog::Catalog;
use super::node::{input_types, Node};
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::semantics::{prove_equivalent, Verdict};
use std::rc::Rc;

const VALIDATION_TIMEOUT_MS: u32 = 60_000;

/// Proves that `root` computes `input`; a refutation is a bug in a rule or fact.
pub fn prove_selection(catalog: &Catalog, input: &Rc<Expr>, root: &Node) -> Result<()> {
    let selected = root.to_expr(catalog, &input_types(input))?;
    let verdict = match prove_equivalent(input, &selected, None, VALIDATION_TIMEOUT_MS) {
        // The same tree computes the same lanes, also where z3 has no encoding (bitcasts of
        // f32 lanes, which a scalarized or reinterpreting selection reproduces as given).
        Err(_) if *selected == **input => return Ok(()),
        verdict => verdict?,
    };
    match verdict {
        Verdict::Proven { .. } => Ok(()),
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
