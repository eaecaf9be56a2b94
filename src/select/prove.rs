//! Translation validation: the selected instructions, each replaced by its semantics over its
//! operands, proven equal to the input expression by z3 before a selection is used.

use super::catalog::Catalog;
use super::node::{input_types, Node};
use crate::error::{Error, Result};
use crate::ir::{Expr, Op};
use crate::semantics::{in_a_fresh_context, prove_equivalent_by_parts, Verdict};
use std::rc::Rc;

/// How long z3 may take over a selection by default.
pub const VALIDATION_TIMEOUT_MS: u32 = 60_000;

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

/// Proves that `root` computes `input`; a refutation is a bug in a rule or fact, and a
/// selection z3 cannot decide an error. Operands are proven one by one where the two trees
/// share an operator (a scalarized `compress` whose mask was selected is proven by its mask
/// alone, where z3 on the whole would have to reason about the lanes it moves).
pub fn prove_selection(catalog: &Catalog, input: &Rc<Expr>, root: &Node) -> Result<Proof> {
    decide(catalog, input, root, VALIDATION_TIMEOUT_MS)?.map_err(|reason| {
        Error::data(
            "translation validation",
            format!("z3 could not decide the selection ({reason})"),
        )
    })
}

/// The selection to use for `input`: `root` where z3 proves it; where z3 can decide neither
/// way (a product of 64-bit lanes by a negative constant, say), the honest last resort of
/// every operator scalarized, which computes the input's own tree, with a note saying so. A
/// refutation stays an error. z3 gets `timeout_ms` for each query, over `proven_by`: `root`
/// as z3 best proves it (its folded constants as the instructions they were folded from).
pub fn proven_or_scalarized(
    catalog: &Catalog,
    input: &Rc<Expr>,
    (root, proven_by): (Rc<Node>, Rc<Node>),
    timeout_ms: u32,
) -> Result<(Rc<Node>, Proof)> {
    match decide(catalog, input, &proven_by, timeout_ms)? {
        Ok(proof) => Ok((root, proof)),
        Err(reason) => {
            crate::error::note(&format!(
                "isadb: z3 could not decide the selection for {} ({reason}): its lanes are computed in scalar code",
                catalog.target.name
            ));
            Ok((scalarized(input), Proof::SameTree))
        }
    }
}

/// Whether `root` computes `input`: the proof, or why z3 could not decide (an error when it
/// refutes it).
fn decide(
    catalog: &Catalog,
    input: &Rc<Expr>,
    root: &Node,
    timeout_ms: u32,
) -> Result<std::result::Result<Proof, String>> {
    let selected = root.to_expr(catalog, &input_types(input))?;
    if selected == *input {
        return Ok(Ok(Proof::SameTree));
    }
    let verdict =
        in_a_fresh_context(|| prove_equivalent_by_parts(input, &selected, None, timeout_ms))?;
    match verdict {
        Verdict::Proven { .. } => Ok(Ok(Proof::Z3)),
        Verdict::Counterexample { .. } => Err(Error::data(
            "translation validation",
            format!(
                "the selection for {} differs from the input (a bug in a rule or fact): {selected}",
                catalog.target.name
            ),
        )),
        Verdict::Unknown { reason, .. } => Ok(Err(reason)),
    }
}

/// `input` with every operator computed lane by lane in scalar code: its IR is the input's
/// own tree.
fn scalarized(input: &Expr) -> Rc<Node> {
    Rc::new(match &input.op {
        Op::Var(name) => Node::Input {
            name: name.clone(),
            ty: input.ty,
            offset: 0,
        },
        Op::Const(lanes) => {
            let values: Vec<i64> = lanes.iter().map(|&bits| bits as u64 as i64).collect();
            match values[..] {
                [value] => Node::Const {
                    ty: input.ty,
                    value,
                },
                _ => Node::Literal {
                    ty: input.ty,
                    values,
                },
            }
        }
        op => Node::Scalar {
            op: op.clone(),
            ty: input.ty,
            args: input.args.iter().map(|a| scalarized(a)).collect(),
        },
    })
}
