//! Proofs by cut points ([`super::cut_points`]) with z3 deciding each pair and the cut trees.

use super::cut_points::proven;
use super::prove::prove_equivalent;
use crate::error::Result;
use crate::ir::forms::elaborate_expression;
use crate::ir::{Expr, Macros, Op};
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

/// A 64-bit subterm computed as its two words (HVX's products of words) is cut once both
/// words are proven: the product's low word computed by a multiply of words, its high word
/// apart, and the saturating shift by 31 over the cut variable. Without the words' cut the
/// low word stays over the inputs beside a free variable and nothing is proven; with a shift
/// by 30 for 31 the cut tree is refuted.
#[test]
fn a_wide_subterm_is_cut_at_its_words() {
    let lhs = expr("u32_sat((u64(x_u32) * u64(y_u32)) >> 31)");
    // The high word as HVX computes it: the signed product's plus each word where the other's
    // top bit is set (no widening of an input the input's product shares).
    let (sx, sy) = ("reinterpret(i32, x_u32)", "reinterpret(i32, y_u32)");
    let signed = format!("i32((i64({sx}) * i64({sy})) >> 32)");
    let high =
        format!("reinterpret(u32, {signed} + (({sx} >> 31) & {sy}) + (({sy} >> 31) & {sx}))");
    let by_words = |low_shift: u32| {
        let shifted = format!("({high} << 1) | ((x_u32 * y_u32) >> {low_shift})");
        expr(&format!(
            "select(({high} >> 31) != 0, u32(4294967295), {shifted})"
        ))
    };
    assert!(proven(&lhs, &by_words(31), 10_000, z3_equal).unwrap());
    assert!(!proven(&lhs, &by_words(30), 10_000, z3_equal).unwrap());
}

/// Subterms shared by a tree are visited once: `max(e, e)` nested 64 deep over `x + y` is a
/// tree of 2^64 leaves (HVX's psadbw selection, shared like this, took ten minutes walked as a
/// tree); less `x`, it is cut where `y + x` is and proven equal to that less `x`.
#[test]
fn a_deeply_shared_tree_is_cut_in_time() {
    let mut nest = expr("x_i16 + y_i16");
    for _ in 0..64 {
        nest = Rc::new(Expr::build(Op::Max, vec![nest.clone(), nest]).unwrap());
    }
    let less = Rc::new(Expr::build(Op::Sub, vec![nest, expr("x_i16")]).unwrap());
    assert!(proven(&less, &expr("(y_i16 + x_i16) - x_i16"), 10_000, z3_equal).unwrap());
}
