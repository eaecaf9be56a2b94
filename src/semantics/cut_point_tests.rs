//! Proofs by cut points ([`super::cut_points`]) with z3 deciding each pair and the cut trees.

use super::cut_points::proven;
use super::prove::prove_equivalent;
use crate::error::Result;
use crate::ir::forms::elaborate_expression;
use crate::ir::{Expr, Macros};
use std::collections::HashMap;
use std::rc::Rc;

fn expr(text: &str) -> Rc<Expr> {
    elaborate_expression(text, "test", &Macros::default(), 8, &HashMap::new()).unwrap()
}

fn z3_equal(l: &Expr, r: &Expr, ms: u32) -> Result<bool> {
    Ok(prove_equivalent(l, r, None, ms)?.is_proven())
}

/// The minima and the differences pair up and are cut; `(x - y) * 3` against a shift and an
/// add is then proven over the cut variables. With `max` for `min`, no cut proves the whole.
#[test]
fn cut_trees_prove_an_equality_and_never_a_difference() {
    let lhs = expr("(x_i16 - y_i16) * 3 + min(x_i16, y_i16)");
    let same = expr("min(y_i16, x_i16) + ((x_i16 - y_i16) << 1) + (x_i16 - y_i16)");
    let other = expr("max(y_i16, x_i16) + ((x_i16 - y_i16) << 1) + (x_i16 - y_i16)");
    assert!(proven(&lhs, &same, 10_000, z3_equal).unwrap());
    assert!(!proven(&lhs, &other, 10_000, z3_equal).unwrap());
}
