//! The high word of an unsigned product of words from the signed one, sound by construction:
//! reading a word `x` signed as `sx`, `x = sx + 2^32 [sx < 0]`, so modulo `2^64`
//! `x * y = sx * sy + 2^32 (sx [sy < 0] + sy [sx < 0])` and the high word of the unsigned
//! product is, modulo `2^32`, the signed product's plus `sy & (sx >> 31)` plus
//! `sx & (sy >> 31)`. Hexagon multiplies words into the high word signed only (`vmpye` and
//! `vmpyo`), so `mul_shift_right(x_u32, y_u32, 32)` took 64-bit products lane by lane.

use super::fallback::Lacks;
use super::products::high_bits_by_high_word;
use super::signedness::Direct;
use super::term::{op, reinterpret, type_name, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// At `t` (u64 lanes the target can neither multiply nor widen words into): the high word of
/// the product of words widened, cut to a word after a shift by 32 (the signed product's high
/// word corrected as the module says), and after a shift by `c` beyond 32 (that high word
/// shifted by the rest, [`high_bits_by_high_word`]).
pub fn unsigned_high_word_by_signed(t: VecType, lacks: Lacks, direct: Direct) -> Vec<Rewrite> {
    let (word, signed_word, signed) = (
        t.with_elem(Elem::U32),
        t.with_elem(Elem::I32),
        t.with_elem(Elem::I64),
    );
    // A target that widens words to 64-bit lanes multiplies them unsigned (x86's `pmuludq`,
    // NEON's `umull`).
    let widens_words = [Elem::U64, Elem::I64]
        .into_iter()
        .any(|to| direct("Cast", Elem::U32, to));
    if t.elem != Elem::U64 || !lacks("Mul", t, None) || widens_words {
        return vec![];
    }
    let (x, y) = (Term::Wildcard("x".into()), Term::Wildcard("y".into()));
    let shifted =
        |ty: VecType, v: Term, by: Int| op("Shr", ty, vec![v, Term::Const { ty, value: by }]);
    let product = |ty: VecType, a: Term, b: Term| {
        op(
            "Mul",
            ty,
            vec![op("Cast", ty, vec![a]), op("Cast", ty, vec![b])],
        )
    };
    let high_word =
        |conversion, v: Term, from: Int| op(conversion, word, vec![shifted(t, v, from)]);
    let (sx, sy) = (
        reinterpret(signed_word, x.clone()),
        reinterpret(signed_word, y.clone()),
    );
    let when_negative = |sign_of: &Term, v: &Term| {
        op(
            "And",
            signed_word,
            vec![
                shifted(signed_word, sign_of.clone(), Int::Lit(31)),
                v.clone(),
            ],
        )
    };
    let signed_high = op(
        "Cast",
        signed_word,
        vec![shifted(
            signed,
            product(signed, sx.clone(), sy.clone()),
            Int::Lit(32),
        )],
    );
    let corrected = op(
        "Add",
        signed_word,
        vec![
            op(
                "Add",
                signed_word,
                vec![signed_high, when_negative(&sx, &sy)],
            ),
            when_negative(&sy, &sx),
        ],
    );
    let unsigned_product = product(t, x.clone(), y.clone());
    // Either factor may be a constant (a division's magic number), and neither needs bounds
    // (a signed dividend's `u32(x_i32 ^ (x_i32 >> 31))` has none).
    let words = vec![
        Condition::TypeOf(x.clone(), word),
        Condition::TypeOf(y.clone(), word),
    ];
    let name = type_name(t);
    // The high word is below 2^32, so its saturating narrowing (Halide's `mul_shift_right`)
    // is the plain one.
    ["Cast", "SatCast"]
        .into_iter()
        .flat_map(|conversion| {
            [
                Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "the high word of {name} products of words, by the signed product's"
                    ),
                    lhs: high_word(conversion, unsigned_product.clone(), Int::Lit(32)),
                    rhs: reinterpret(word, corrected.clone()),
                    conditions: words.clone(),
                },
                high_bits_by_high_word(t, conversion, &unsigned_product, words.clone()),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::semantics::prove::{prove_texts, Verdict};

    /// The identity the rewrites rest on, proven by z3 at four lanes; without the correction
    /// for a negative `y` it is refuted.
    #[test]
    fn the_unsigned_high_word_is_the_signed_one_corrected() {
        let macros = crate::ir::Macros::default();
        let unsigned = "u32((u64(x_u32) * u64(y_u32)) >> 32)";
        let corrected = |both: bool| {
            let (sx, sy) = ("reinterpret(i32, x_u32)", "reinterpret(i32, y_u32)");
            let signed = format!("i32((i64({sx}) * i64({sy})) >> 32)");
            let mut sum = format!("{signed} + (({sx} >> 31) & {sy})");
            if both {
                sum = format!("{sum} + (({sy} >> 31) & {sx})");
            }
            format!("reinterpret(u32, {sum})")
        };
        let verdict = prove_texts(unsigned, &corrected(true), &macros, 4, 20_000).unwrap();
        assert!(verdict.is_proven(), "{verdict:?}");
        let verdict = prove_texts(unsigned, &corrected(false), &macros, 4, 20_000).unwrap();
        assert!(
            matches!(verdict, Verdict::Counterexample { .. }),
            "{verdict:?}"
        );
    }
}
