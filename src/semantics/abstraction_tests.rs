//! Proofs that abstract what both sides compute: the prover's unknowns for the wide products
//! both share and for the largest subterms both share, each a proof only (a wrong selection
//! beside them is refuted as written).

use super::prove::prove_texts;
use super::Verdict;

/// AVX-512's selection for `x_u32 / 7` takes the high half of the same 64-bit product by
/// the magic number as the input does, and truncates it by a clamp (`vpmaxsq` at 0, then the
/// saturating `vpmovusqd`) instead of a cast. With the shared product abstracted it is
/// proven in milliseconds (46 s, or not within a minute, by the core); with a clamp that
/// cuts real values it is refuted.
#[test]
fn a_product_both_sides_compute_is_abstracted_and_a_wrong_clamp_refuted() {
    let macros = crate::ir::Macros::default();
    let with_clamp = |limit: &str| {
        let high = "(shr (mul (cast u64 x_u32) 613566757) 32)";
        format!(
            "(let hi (cast u32 (min (cast u64 (max (cast i64 {high}) 0)) {limit})) \
             (shr (add hi (shr (sub x_u32 hi) 1)) 2))"
        )
    };
    let verdict = prove_texts("x_u32 / 7", &with_clamp("4294967295"), &macros, 4, 5_000);
    assert!(verdict.unwrap().is_proven());
    let verdict = prove_texts("x_u32 / 7", &with_clamp("100000"), &macros, 4, 5_000);
    let Verdict::Counterexample { lhs, rhs, .. } = verdict.unwrap() else {
        panic!("a clamp below the quotient's range was not refuted");
    };
    assert_ne!(lhs, rhs);
}

/// AVX2's selection for `select(x_i32 > y_i32, (x_i32 - y_i32) * 3, (y_i32 - x_i32) >> 2)`
/// blends the bytes of `x - y` shifted and subtracted by the comparison's mask: with the
/// subterms both sides compute abstracted it is proven at once (bit-blasted whole, 18 s a
/// lane); with the mask's bytes read the other way round it is refuted.
#[test]
fn shared_subterms_abstracted_prove_a_blend_of_bytes_and_a_swapped_one_is_refuted() {
    let macros = crate::ir::Macros::default();
    let blend = |pick: &str| {
        let d = "(sub x_i32 y_i32)";
        let mask = "(bitcast i8 (select (gt x_i32 y_i32) (as a_i32 -1) (as a_i32 0)))";
        format!(
            "(bitcast i32 (select ({pick} {mask} (bitcast i8 (as a_i32 0))) \
             (bitcast i8 (sub (shl {d} 2) {d})) (bitcast i8 (shr (sub y_i32 x_i32) 2))))"
        )
    };
    let input = "select(x_i32 > y_i32, (x_i32 - y_i32) * 3, (y_i32 - x_i32) >> 2)";
    let verdict = prove_texts(input, &blend("lt"), &macros, 8, 5_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
    let verdict = prove_texts(input, &blend("ge"), &macros, 8, 5_000);
    let Verdict::Counterexample { lhs, rhs, .. } = verdict.unwrap() else {
        panic!("a blend by the mask's clear bytes was not refuted");
    };
    assert_ne!(lhs, rhs);
}

/// Integer lanes moved as f32 lanes (AVX2's `shufps` packing the words of two registers) come
/// back as `f32_bits(f32_of_bits(b))`: folded to `b`, the query is over bit-vectors alone and
/// the bit-blaster decides it both ways (AVX2's `mul_shr(x_i32, y_i32, 31)`: 20 ms instead of
/// about 4 s by the core over reals).
#[test]
fn integer_lanes_moved_as_f32_lanes_are_bit_vectors_again() {
    use super::attempt::bit_blasted;
    use super::float_bits::{float_round_trips_folded, over_bit_vectors_alone};
    use z3::ast::BV;
    use z3::{FuncDecl, SatResult, Sort};
    super::in_a_fresh_context(|| {
        let b = BV::new_const("b", 32);
        let of_bits = FuncDecl::new("f32_of_bits", &[&Sort::bitvector(32)], &Sort::real());
        let bits = FuncDecl::new("f32_bits", &[&Sort::real()], &Sort::bitvector(32));
        let trip = bits.apply(&[&of_bits.apply(&[&b])]).as_bv().unwrap();
        let one = BV::from_u64(1, 32);
        for (other, verdict) in [
            (b.clone(), SatResult::Unsat),
            (b.bvadd(&one), SatResult::Sat),
        ] {
            let query = trip.bvmul(&one).eq(&other).not();
            assert!(!over_bit_vectors_alone(&query));
            let folded = float_round_trips_folded(&query);
            assert!(over_bit_vectors_alone(&folded), "{folded}");
            assert_eq!(bit_blasted(&folded, &[], 5_000).0, verdict);
        }
    });
}
