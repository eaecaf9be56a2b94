//! Proofs of products of words computed from products by halfwords, as Hexagon computes them
//! (no 64-bit products): the prover's splits of products at the halves of extended words and
//! its abstraction of the products both sides share.

use super::prove::prove_texts;
use super::Verdict;

/// `(x * y) >> 16` of words, the odd (signed) and even (`even`, unsigned when right) halfwords
/// of `y` apart, as Hexagon's `vmpye` and `vmpyo` compute it.
fn high_by_halfwords(even: &str) -> String {
    format!(
        "(add (cast i64 (cast i32 (shr (mul (cast i64 x_i32) \
         (cast i64 (slice 0 2 4 (bitcast {even} y_i32)))) 16))) \
         (mul (cast i64 x_i32) (cast i64 (slice 1 2 4 (bitcast i16 y_i32)))))"
    )
}

fn refuted(verdict: Verdict, what: &str) {
    let Verdict::Counterexample { lhs, rhs, .. } = verdict else {
        panic!("{what} was not refuted");
    };
    assert_ne!(lhs, rhs);
}

/// The high bits of a product of words equal Hexagon's `vmpye` then `vmpyo` accumulating
/// (the products by the halfwords of one factor): proven with the word split at its halves
/// (no multiplier identity bit-blasts); the even halfword read signed is refuted.
#[test]
fn products_split_at_extended_words_prove_the_high_bits_by_halfwords() {
    let macros = crate::ir::Macros::default();
    let saturated = |even| format!("(sat-cast i32 (shr {} 15))", high_by_halfwords(even));
    let high = "(sat-cast i32 (shr (mul (cast i64 x_i32) (cast i64 y_i32)) 31))";
    let verdict = prove_texts(high, &saturated("u16"), &macros, 4, 20_000);
    assert!(verdict.unwrap().is_proven());
    let verdict = prove_texts(high, &saturated("i16"), &macros, 4, 20_000);
    refuted(verdict.unwrap(), "the even halfword read signed");
}

/// The whole 64-bit product of words as Hexagon computes it: the high word as above, the low
/// word by `vmpyieo` (even halfwords of `x` by odd ones of `y`, shifted up) and `vmpyie`
/// accumulating (`x` by the even unsigned halfwords of `y`), 32-bit products that meet the
/// abstracted 64-bit ones in their low bits. Proven; with the odd halfwords of `x` in the low
/// word, refuted.
#[test]
fn the_low_word_of_a_product_meets_the_abstracted_products_in_their_low_bits() {
    let macros = crate::ir::Macros::default();
    let by_words = |x_half: u32| {
        let low = format!(
            "(add (shl (mul (cast i32 (slice {x_half} 2 4 (bitcast i16 x_i32))) \
             (cast i32 (slice 1 2 4 (bitcast i16 y_i32)))) 16) \
             (mul x_i32 (cast i32 (slice 0 2 4 (bitcast u16 y_i32)))))"
        );
        let high = format!("(cast i32 (shr {} 16))", high_by_halfwords("u16"));
        format!("(or (cast i64 (bitcast u32 {low})) (shl (cast i64 {high}) 32))")
    };
    let product = "(mul (cast i64 x_i32) (cast i64 y_i32))";
    let verdict = prove_texts(product, &by_words(0), &macros, 4, 20_000);
    assert!(verdict.unwrap().is_proven());
    let verdict = prove_texts(product, &by_words(1), &macros, 4, 20_000);
    refuted(verdict.unwrap(), "the odd halfwords of x in the low word");
}

/// The high word of a product of unsigned words from that of the words read signed (as
/// Hexagon computes it by halfwords) plus each word where the other's top bit is set: proven
/// with the zero extensions rewritten as sign extensions and a correction; without the
/// correction for `y`, refuted.
#[test]
fn the_high_word_of_an_unsigned_product_is_the_signed_one_corrected() {
    let macros = crate::ir::Macros::default();
    let signed_high = format!(
        "(bitcast u32 (cast i32 (shr {} 16)))",
        high_by_halfwords("u16")
    )
    .replace("x_i32", "(bitcast i32 x_u32)")
    .replace("y_i32", "(bitcast i32 y_u32)");
    let where_negative =
        |v: &str, w: &str| format!("(and (bitcast u32 (shr (bitcast i32 {v}) 31)) {w})");
    let corrected = |both: bool| {
        let once = format!("(add {signed_high} {})", where_negative("x_u32", "y_u32"));
        match both {
            true => format!("(add {once} {})", where_negative("y_u32", "x_u32")),
            false => once,
        }
    };
    let high = "(cast u32 (shr (mul (cast u64 x_u32) (cast u64 y_u32)) 32))";
    let verdict = prove_texts(high, &corrected(true), &macros, 4, 20_000);
    assert!(verdict.unwrap().is_proven());
    let verdict = prove_texts(high, &corrected(false), &macros, 4, 20_000);
    refuted(
        verdict.unwrap(),
        "the high word without the correction for y",
    );
}
