//! Tests of the search of one lifting/simplification piece (`search.rs`).

use super::*;
use crate::rules::load::rule_macros;
use crate::spec::load_macros;
use crate::synth::workload::{
    absolute_values, bit_counts, casts, lifting, signedness_casts, FPIR_IDIOMS,
};

fn macros() -> Macros {
    let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    rule_macros(&load_macros(&specs).unwrap().macros).unwrap()
}

fn small(base: Elem, binary: Vec<&'static str>, idioms: &[&str], size: usize) -> Grammar {
    Grammar {
        types: vec![base],
        vars: vec!["x", "y"],
        literals: vec![1, 2, 4, 8],
        binary,
        unary: vec![],
        idioms: FPIR_IDIOMS
            .iter()
            .copied()
            .filter(|i| idioms.contains(&i.name))
            .collect(),
        casts: false,
        max_size: size,
        ..lifting(base, size)
    }
}

fn texts(found: &[Found]) -> Vec<String> {
    found
        .iter()
        .map(|f| {
            format!(
                "{} => {}{}",
                f.lhs,
                f.rhs,
                f.predicate
                    .as_ref()
                    .map_or(String::new(), |p| format!(" if {p}"))
            )
        })
        .collect()
}

/// x * 2 == x << 1 and its siblings become one rule over a constant wildcard, proven at
/// every type it claims; the other instances are derived, not kept.
#[test]
fn strength_reduction_is_found_and_generalised() {
    let m = macros();
    let g = small(Elem::U8, vec!["*", "<<"], &[], 3);
    let (found, tally) = search(&g, "test", &m, &[]).unwrap();
    let all = texts(&found);
    let general: Vec<&Found> = found
        .iter()
        .filter(|f| f.predicate.as_deref() == Some("c0 == 1 << c1"))
        .collect();
    assert_eq!(general.len(), 1, "{all:?}");
    let f = general[0];
    assert!(
        (f.lhs == "x * c0" && f.rhs == "x << c1") || (f.rhs == "x * c0" && f.lhs == "x << c1"),
        "{all:?}"
    );
    for t in super::super::workload::SEARCH_TYPES {
        assert!(f.types.contains(&t), "{:?}", f.types);
    }
    assert!(
        !all.iter()
            .any(|r| r.contains("x * 4") || r.contains("x * 8")),
        "{all:?}"
    );
    assert!(tally.derived > 0, "{tally:?}");
}

/// Narrowing a widening add is the wrapping add (an extension/narrowing identity with an
/// idiom), and saturating adds commute.
#[test]
fn narrowing_identities_come_out_of_the_search() {
    let m = macros();
    let mut g = small(Elem::U8, vec!["+"], &["widening_add", "saturating_add"], 4);
    g.types = vec![Elem::U8, Elem::U16];
    g.casts = true;
    let (found, _) = search(&g, "test", &m, &[]).unwrap();
    let all = texts(&found);
    assert!(
        all.iter().any(|r| r == "T(widening_add(x, y)) => x + y"
            || r == "x + y => T(widening_add(x, y))"
            || r == "T(widening_add(y, x)) => x + y"
            || r == "x + y => T(widening_add(y, x))"),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|r| r == "saturating_add(y, x) => saturating_add(x, y)"
                || r == "saturating_add(x, y) => saturating_add(y, x)"),
        "{all:?}"
    );
}

/// A saturating narrow of a value that fits is a truncation: found with its bound.
#[test]
fn predicated_rules_carry_their_bounds() {
    let m = macros();
    let mut g = small(Elem::U16, vec![], &[], 2);
    g.types = vec![Elem::U16, Elem::U8];
    g.casts = true;
    let (found, tally) = search(&g, "test", &m, &[]).unwrap();
    let all = texts(&found);
    assert!(tally.predicated > 0, "{all:?}");
    let f = found
        .iter()
        .find(|f| f.lhs == "NT_sat(x)" && f.rhs == "NT(x)")
        .unwrap_or_else(|| panic!("{all:?}"));
    assert_eq!(f.predicate.as_deref(), Some("upper_bounded(x, 255)"));
    assert!(f.types.contains(&Elem::U16), "{:?}", f.types);
    assert!(!f.types.contains(&Elem::I16), "{:?}", f.types);
}

/// Whether `a => b` or `b => a` is among the rules.
fn either_way(all: &[String], a: &str, b: &str) -> bool {
    all.iter()
        .any(|r| *r == format!("{a} => {b}") || *r == format!("{b} => {a}"))
}

/// An extension of a truncation back to the same width is a mask (zero extension) or a
/// pair of shifts (sign extension), found for more than one step of narrowing too.
#[test]
fn extensions_in_place_come_out_of_the_cast_workload() {
    let m = macros();
    let (found, _) = search(&casts(Elem::I32), "test", &m, &[]).unwrap();
    let all = texts(&found);
    let either = |a: &str, b: &str| either_way(&all, a, b);
    assert!(either("i32(u8(x_i32))", "x_i32 & 255"), "{all:?}");
    assert!(either("i32(i8(x_i32))", "(x_i32 << 24) >> 24"), "{all:?}");
    assert!(either("T(NT(x))", "(x << 16) >> 16"), "{all:?}");
    // No saturating casts, no shifts past the lane.
    assert!(!all.iter().any(|r| r.contains("_sat(")), "{all:?}");
    assert!(!all.iter().any(|r| r.contains("<< 255")), "{all:?}");
    // An unsigned lane is sign-extended in place through its signed reading.
    let (found, _) = search(&signedness_casts(Elem::U32), "test", &m, &[]).unwrap();
    let all = texts(&found);
    assert!(
        either_way(&all, "u32(i8(x_u32))", "u32(((i32(x_u32) << 24) >> 24))"),
        "{all:?}"
    );
}

/// A false equality is refuted, also one the characteristic vectors could miss.
#[test]
fn wrong_rules_are_refuted() {
    let m = macros();
    let side = |t: &str| crate::ir::halide::elaborate_halide(t, "test", &m, 1).unwrap();
    assert_eq!(
        prove(&side("x_u8 * 2"), &side("x_u8 << 2"), None).unwrap(),
        Outcome::Refuted
    );
    assert_eq!(
        prove(&side("x_u8 * 2"), &side("x_u8 << 1"), None).unwrap(),
        Outcome::Proven
    );
    // Differs only when x is 77.
    assert_eq!(
        prove(
            &side("x_u8"),
            &side("select(x_u8 == 77, x_u8 + 1, x_u8)"),
            None
        )
        .unwrap(),
        Outcome::Refuted
    );
}

/// Halide's count of leading sign bits, `max(clz(x), clz(~x))`, is the count of leading zeros
/// of `x ^ (x >> 1)` (what NEON's `cls` computes less one) at every signed type, found in one
/// step by the bit-count workload; at unsigned types it is no such count.
#[test]
fn the_count_of_leading_sign_bits_comes_out_of_the_bit_count_workload() {
    let m = macros();
    let wanted = "max(count_leading_zeros(x), count_leading_zeros(~x)) => \
                  count_leading_zeros((x ^ (x >> 1)))";
    let (found, _) = search(&bit_counts(Elem::I16), "test", &m, &[]).unwrap();
    let f = found
        .iter()
        .find(|f| texts(std::slice::from_ref(*f))[0] == wanted)
        .unwrap_or_else(|| panic!("{:?}", texts(&found)));
    // i64 is claimed where its proof fits a claim's budget (`CLAIM_TIMEOUT_MS`, wall-clock),
    // which a loaded machine can miss.
    assert_eq!(f.types[..3], [Elem::I8, Elem::I16, Elem::I32]);
    assert!(
        f.types[3..].iter().all(|&t| t == Elem::I64),
        "{:?}",
        f.types
    );
    let (unsigned, _) = search(&bit_counts(Elem::U16), "test", &m, &[]).unwrap();
    assert!(
        !texts(&unsigned).iter().any(|r| r == wanted),
        "{:?}",
        texts(&unsigned)
    );
}

/// Halide's `abs` saturated back to the operand's type is the saturating absolute value NEON's
/// `sqabs` and HVX's `vabs:sat` compute on the operand widened: found by the absolute-value
/// workload at the signed types.
#[test]
fn the_saturating_absolute_value_comes_out_of_the_abs_workload() {
    let m = macros();
    let (found, _) = search(&absolute_values(Elem::I8), "test", &m, &[]).unwrap();
    let all = texts(&found);
    for wanted in [
        "T_sat(abs(WT(x))) => T_sat(abs(x))",
        "max(x, -x) => T(abs(x))",
    ] {
        let f = found
            .iter()
            .find(|f| texts(std::slice::from_ref(*f))[0] == wanted)
            .unwrap_or_else(|| panic!("{wanted} not in {all:?}"));
        assert_eq!(f.types[..3], [Elem::I8, Elem::I16, Elem::I32], "{wanted}");
    }
}
