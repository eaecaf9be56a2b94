//! The prover's generalization of numerals: a product by a division's magic number proven
//! for every value of the multiplier.

use super::generalize::generalized;
use crate::ir::forms::elaborate_expression;
use crate::ir::Op;
use crate::semantics::prove::prove_equivalent_by_parts;
use std::collections::HashMap;

/// The high word of a product by a division's magic number (`x_u32 / 3`), as Hexagon
/// computes it from the signed product and two corrections: the numeral becomes one variable
/// on both sides (as it is, read signed, and extended), and the claim is proven so.
#[test]
fn a_product_by_a_numeral_is_proven_for_every_value() {
    let macros = crate::ir::Macros::default();
    let (sx, sy) = (
        "reinterpret(i32, x_u32)",
        "reinterpret(i32, u32(2863311531))",
    );
    let signed = format!("i32((i64({sx}) * i64({sy})) >> 32)");
    let corrected =
        format!("reinterpret(u32, {signed} + (({sx} >> 31) & {sy}) + (({sy} >> 31) & {sx}))");
    let unsigned = "u32((u64(x_u32) * u64(u32(2863311531))) >> 32)";
    let none = HashMap::new();
    let elaborate = |text, what| elaborate_expression(text, what, &macros, 4, &none).unwrap();
    let (lhs, rhs) = (elaborate(unsigned, "lhs"), elaborate(&corrected, "rhs"));
    let pairs = generalized(&lhs, &rhs);
    assert_eq!(pairs.len(), 1);
    for side in [&pairs[0].0, &pairs[0].1] {
        let mut numerals = 0;
        side.walk(&mut |e| {
            let magic = matches!(&e.op, Op::Const(lanes) if lanes[0] as u32 == 2863311531);
            numerals += magic as usize;
        });
        assert_eq!(numerals, 0, "{side}");
        assert!(side.vars().iter().any(|(name, _)| name == "generalized0"));
    }
    let verdict = prove_equivalent_by_parts(&lhs, &rhs, None, 20_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
}
