//! Unit tests of the Halide-style reader: precedence, folding, casts and calls, and errors that
//! point at the problem. Elaboration against the idioms is tested in `spec` (it needs them).

use super::*;

fn sx(text: &str) -> String {
    match parse_halide(text, "expression") {
        Ok(s) => s.to_string(),
        Err(e) => panic!("{text}: {e}"),
    }
}

fn err(text: &str) -> String {
    match parse_halide(text, "expression") {
        Ok(s) => panic!("{text} parsed as {s}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(
        sx("a_u8 + b_u8 * 2 - c_u8"),
        "(sub (add a_u8 (mul b_u8 2)) c_u8)"
    );
    assert_eq!(sx("a_u8 - b_u8 - c_u8"), "(sub (sub a_u8 b_u8) c_u8)");
    assert_eq!(sx("a_u8 - (b_u8 - c_u8)"), "(sub a_u8 (sub b_u8 c_u8))");
    assert_eq!(sx("a_u8 << 1 + 2"), "(shl a_u8 3)");
    // Halide's division by zero is zero.
    assert_eq!(sx("a_u8 + 1 / 0"), "(add a_u8 0)");
    assert_eq!(sx("a_u8 / (2 - 2)"), "(divide-by a_u8 0)");
    assert_eq!(
        sx("a_u8 | b_u8 ^ c_u8 & d_u8"),
        "(or a_u8 (xor b_u8 (and c_u8 d_u8)))"
    );
    assert_eq!(
        sx("a_u8 < b_u8 && c_u8 == d_u8 || e_u8 >= 3 != f_bool"),
        "(or (and (lt a_u8 b_u8) (eq c_u8 d_u8)) (ne (ge e_u8 3) f_bool))"
    );
    assert_eq!(
        sx("-a_i8 * ~b_i8 + !(c_i8 <= d_i8)"),
        "(add (mul (neg a_i8) (not b_i8)) (not (le c_i8 d_i8)))"
    );
    assert_eq!(sx("a_u16 >> 2 << 1"), "(shl (shr a_u16 2) 1)");
    assert_eq!(sx("a_u8 > b_u8"), "(gt a_u8 b_u8)");
    assert_eq!(sx("a_u8 != b_u8 == c_bool"), "(eq (ne a_u8 b_u8) c_bool)");
}

#[test]
fn literals_and_folding() {
    assert_eq!(sx("a_u8 & 0xff"), "(and a_u8 255)");
    assert_eq!(sx("a_i32 + (1 << 14)"), "(add a_i32 16384)");
    assert_eq!(sx("a_i16 * -3"), "(mul a_i16 -3)");
    assert_eq!(
        sx("a_i16 + (2 * 3 - 11) / 4 + 7 % 4 + ~0"),
        "(add (add (add a_i16 -2) 3) -1)"
    );
    assert_eq!(sx("a_u8 * (0x10 >> 2 | 1)"), "(mul a_u8 5)");
}

#[test]
fn casts_and_calls() {
    assert_eq!(sx("u8(x_u16)"), "(cast u8 x_u16)");
    assert_eq!(
        sx("i16_sat(x_i32) + u16(y_u8) * 3"),
        "(add (sat-cast i16 x_i32) (mul (cast u16 y_u8) 3))"
    );
    assert_eq!(sx("min(a_u8, max(b_u8, 3))"), "(min a_u8 (max b_u8 3))");
    // Halide's C++ casts and its type names, C's too.
    assert_eq!(sx("cast<uint8_t>(x_u16)"), "(cast u8 x_u16)");
    // Qualified by Halide's namespaces, as its C++ tests write them.
    assert_eq!(sx("Halide::cast<uint8_t>(x_u16)"), "(cast u8 x_u16)");
    assert_eq!(
        sx("Halide::Internal::rounding_halving_add(a_u8, b_u8)"),
        sx("rounding_halving_add(a_u8, b_u8)")
    );
    assert_eq!(sx("saturating_cast<int8_t>(x_i16)"), "(sat-cast i8 x_i16)");
    assert_eq!(sx("reinterpret<uint16_t>(x_i16)"), "(bitcast u16 x_i16)");
    assert_eq!(sx("cast<float>(x_i32) < 2"), "(lt (cast f32 x_i32) 2)");
    assert_eq!(
        sx("uint8(x_u16) + int16_t(y_i8)"),
        "(add (cast u8 x_u16) (cast i16 y_i8))"
    );
    assert_eq!(sx("float32(x_i32)"), "(cast f32 x_i32)");
    assert_eq!(sx("is_nan(x_f32)"), "(ne x_f32 x_f32)");
    assert_eq!(
        sx("fast_integer_divide(x_i16, y_u8)"),
        "(divide-by x_i16 (as x_i16 y_u8))"
    );
    assert_eq!(sx("x_u8 * 2u + 0xffUL"), "(add (mul x_u8 2) 255)");
    assert_eq!(
        err("cast<foo>(x_u8)"),
        "expression:1:6: unknown type 'foo' in cast<foo>"
    );
    assert_eq!(
        err("cast<uint8_t x_u16"),
        "expression:1:14: expected '>' in cast<uint8_t>(...), found 'x_u16'"
    );
    assert_eq!(
        err("cast<u8>(x_u16, y_u16)"),
        "expression:1:1: cast takes 1 argument(s), got 2"
    );
    assert_eq!(sx("clamp(x_i16, -5, 5)"), "(min (max x_i16 -5) 5)");
    assert_eq!(
        sx("select(a_u8 > b_u8, a_u8, b_u8)"),
        "(select (gt a_u8 b_u8) a_u8 b_u8)"
    );
    assert_eq!(sx("absd(a_u8, b_u8)"), "(absd a_u8 b_u8)");
    assert_eq!(sx("count_leading_zeros(a_u16)"), "(clz a_u16)");
    assert_eq!(
        sx("count_trailing_zeros(a_u16)"),
        "(popcount (and (not a_u16) (sub a_u16 1)))"
    );
    assert_eq!(sx("widening_add(a_u8, b_u8)"), "(widening_add a_u8 b_u8)");
    assert_eq!(
        sx("rounding_mul_shr(a_i16, b_i16, 15)"),
        "(rounding_mul_shr a_i16 b_i16 15)"
    );
    assert_eq!(sx("f()"), "(f)");
    // Halide's own names of the fixed-point intrinsics.
    assert_eq!(
        sx("mul_shift_right(a_i16, b_i16, 15)"),
        "(mul_shr a_i16 b_i16 15)"
    );
    assert_eq!(
        sx("rounding_mul_shift_right(a_u8, b_u8, 7)"),
        "(rounding_mul_shr a_u8 b_u8 7)"
    );
    assert_eq!(
        sx("rounding_shift_right(a_i16, 3)"),
        "(rounding_shr a_i16 3)"
    );
    assert_eq!(sx("rounding_shift_right(a_i16, -3)"), "(shl a_i16 3)");
    assert_eq!(sx("rounding_shift_left(a_i16, 3)"), "(shl a_i16 3)");
    assert_eq!(
        sx("rounding_shift_left(a_i16, -3)"),
        "(rounding_shr a_i16 3)"
    );
    assert_eq!(sx("shift_left(a_u8, 2)"), "(shl a_u8 2)");
    assert_eq!(sx("shift_right(a_u8, b_i8)"), "(halide-shr a_u8 b_i8)");
    assert_eq!(sx("widening_shift_left(a_u8, 2)"), "(shl (widen a_u8) 2)");
    assert_eq!(sx("widening_shift_right(a_i8, -1)"), "(shl (widen a_i8) 1)");
    assert!(err("shift_left(a_u8)").contains("shift_left takes 2 argument(s), got 1"));
    assert!(
        err("mul_shift_right(a_i16, b_i16)").contains("mul_shift_right takes 3 argument(s), got 2")
    );
    assert!(
        err("rounding_shift_right(a_i16, -170141183460469231731687303715884105727 - 1)")
            .contains("the amount is out of range")
    );
    assert_eq!(
        sx("widen_right_add(a_u16, b_u8)"),
        "(extending_add a_u16 b_u8)"
    );
    assert_eq!(sx("reinterpret(i16, a_u16)"), "(bitcast i16 a_u16)");
    assert_eq!(
        sx("select(a_u8 < 3, 1, a_u8 < 9, 2, 3)"),
        "(select (lt a_u8 3) 1 (select (lt a_u8 9) 2 3))"
    );
    assert!(err("select(a_bool, 1, 2, 3)").contains("got 4"));
    assert_eq!(
        sx("u8((u16(a_u8) + u16(b_u8) + 1) >> 1)"),
        "(cast u8 (shr (add (add (cast u16 a_u8) (cast u16 b_u8)) 1) 1))"
    );
}

#[test]
fn mux_is_a_select_chain_whose_last_value_is_the_default() {
    assert_eq!(
        sx("mux(c_u8, {a_u8, b_u8, 7})"),
        "(let mux_id c_u8 (select (eq mux_id 0) a_u8 (select (eq mux_id 1) b_u8 7)))"
    );
    assert_eq!(sx("mux(c_u8, {a_u8})"), "(let mux_id c_u8 a_u8)");
    let usage = "expression:1:1: mux takes an index and a brace list of values: mux(id, {a, b, c})";
    assert_eq!(err("mux(c_u8, {})"), usage);
    assert_eq!(err("mux(c_u8, a_u8)"), usage);
    assert_eq!(
        err("max({a_u8}, b_u8)"),
        "expression:1:5: max takes no brace list (only mux does: mux(id, {a, b}))"
    );
    assert_eq!(
        err("mux(c_u8, {a_u8 b_u8})"),
        "expression:1:17: expected ',' or '}' in the list at 1:11, found 'b_u8'"
    );
}

#[test]
fn extract_bits_reads_the_bits_from_a_position_at_a_type() {
    assert_eq!(
        sx("extract_bits(u16, a_u32, 8)"),
        "(let extract_bits_x a_u32 (bitcast u16 (cast (bits-type u16) (shr (bitcast (bits-type (elem extract_bits_x)) extract_bits_x) 8))))"
    );
    assert_eq!(
        err("extract_bits(u16, a_u32)"),
        "expression:1:1: extract_bits takes a type, a value and a bit position, got 2 argument(s)"
    );
    assert_eq!(
        err("extract_bits(bool, a_u32, 0)"),
        "expression:1:14: extract_bits reads bits as an integer or f32 type, not bool"
    );
}

#[test]
fn errors_point_at_the_problem() {
    assert_eq!(
        err("(a_u8 + b_u8"),
        "expression:1:13: expected ')' to close '(' at 1:1, found end of input"
    );
    assert_eq!(
        err("u8((a_u8 + 1) b_u8)"),
        "expression:1:15: expected ',' or ')' in the call to u8 at 1:1, found 'b_u8'"
    );
    assert_eq!(
        err("a_u8 * + b_u8"),
        "expression:1:8: unexpected token '+', expected an expression"
    );
    assert_eq!(
        err("a_u8 +\n  * b_u8"),
        "expression:2:3: unexpected token '*', expected an expression"
    );
    assert_eq!(
        err("a_u8 +"),
        "expression:1:7: expected an expression, found end of input"
    );
    assert_eq!(
        err(""),
        "expression:1:1: expected an expression, found end of input"
    );
    assert_eq!(
        err("a_u8 b_u8"),
        "expression:1:6: unexpected token 'b_u8' after the end of the expression"
    );
    assert_eq!(
        err("a_u8 )"),
        "expression:1:6: unexpected token ')' after the end of the expression"
    );
    assert_eq!(err("a_u8 @ 2"), "expression:1:6: unexpected character '@'");
    assert_eq!(
        err("a_f32 * 1.5e3"),
        "expression:1:9: malformed number '1.5e3'"
    );
    assert_eq!(
        err("a_u8 + 12ab"),
        "expression:1:8: malformed number '12ab'"
    );
    assert_eq!(
        err("a_u8 + (1 << 200)"),
        "expression:1:11: constant 1 << 200 overflows"
    );
    assert_eq!(
        err("min(a_u8)"),
        "expression:1:1: min takes 2 argument(s), got 1"
    );
    assert_eq!(
        err("x + u8(a_u8, b_u8)"),
        "expression:1:5: u8 takes 1 argument(s), got 2"
    );
    let deep = format!("{}a_u8{}", "(".repeat(1000), ")".repeat(1000));
    assert_eq!(
        err(&deep),
        "expression:1:257: expression nested more than 256 deep (isadb's limit)"
    );
    let sum = vec!["a_u8"; 300].join(" + ");
    assert!(err(&sum).ends_with("expression nested more than 256 deep (isadb's limit)"));
}

#[test]
fn shifts_by_a_value_have_halides_meaning_for_users_and_the_irs_in_rules() {
    assert_eq!(sx("a_i8 << b_i8"), "(halide-shl a_i8 b_i8)");
    assert_eq!(sx("a_u16 >> b_i16"), "(halide-shr a_u16 b_i16)");
    assert_eq!(sx("a_u16 >> 3"), "(shr a_u16 3)");
    let rule_side = parse_halide_with("a_i8 << b_i8", "rule", Shifts::Ir).unwrap();
    assert_eq!(rule_side.to_string(), "(shl a_i8 b_i8)");
}

#[test]
fn shifts_by_a_negative_constant_go_the_other_way() {
    assert_eq!(sx("a_i8 << -2"), "(shr a_i8 2)");
    assert_eq!(sx("a_u16 >> -1"), "(shl a_u16 1)");
}

/// `text` as a user writes it elaborated at 4 lanes without macros, printed.
fn elaborated(text: &str) -> Result<String> {
    let parsed = parse_halide(text, "expression")?;
    elaborate_parsed(&parsed, &Macros::default(), 4, &HashMap::new()).map(|e| e.to_string())
}

#[test]
fn operands_of_different_types_meet_as_halide_converts_them() {
    let same = |a: &str, b: &str| assert_eq!(elaborated(a).unwrap(), elaborated(b).unwrap());
    // simd_op_check's names: the type before the number.
    same("i8_1 + u16_2", "i16(i8_1) + i16(u16_2)");
    same("i16(i8_1) * i8_2", "i16(i8_1) * i16(i8_2)");
    same("u16_1 + u8_1", "u16_1 + u16(u8_1)");
    // A signed integer meets any integer at the signed type of the wider width.
    same("i8_1 + u8_1", "i8_1 + i8(u8_1)");
    same("u8_1 < i16_1", "i16(u8_1) < i16_1");
    same("max(u32_1, i16_1)", "max(i32(u32_1), i32(i16_1))");
    // An integer meeting a float becomes the float.
    same("i16_1 * f32_1", "f32(i16_1) * f32_1");
    // Bitwise operators widen within one signedness, and reject the rest; rule sides, typed
    // templates, convert nothing.
    let strict = elaborate_halide("u16_1 + u8_1", "rule", &Macros::default(), 4);
    assert!(strict
        .unwrap_err()
        .to_string()
        .contains("add needs operands of one type"));
    same("u8_1 & u16_1", "u16(u8_1) & u16_1");
    let e = elaborated("u8_1 & i8_1").unwrap_err().to_string();
    assert!(
        e.contains("and needs operands of one type, got <4 x u8> and <4 x i8>"),
        "{e}"
    );
    // A literal nothing else types is Halide's i32 or f32.
    same(
        "select(u8_1 == u8_2, 1, 2)",
        "select(u8_1 == u8_2, i32(1), i32(2))",
    );
    same(
        "select(u8_1 == u8_2, 1.5f, 2.0f)",
        "select(u8_1 == u8_2, f32(1.5), f32(2.0))",
    );
}

#[test]
fn halides_type_constructors_and_hints() {
    assert_eq!(sx("cast(UInt(8), x_i16)"), sx("cast(u8, x_i16)"));
    assert_eq!(
        sx("saturating_cast(Int(16), x_i32)"),
        sx("saturating_cast(i16, x_i32)")
    );
    assert_eq!(
        sx("reinterpret(Float(32), x_u32)"),
        sx("reinterpret(f32, x_u32)")
    );
    assert_eq!(sx("likely(x_u8) + strict_float(y_f32)"), sx("x_u8 + y_f32"));
    assert!(err("cast(UInt(7), x_u8)").contains("UInt(7) is not an element type isadb has"));
    // lerp is Halide's, with its rounding (prelude's `halide-lerp`).
    assert_eq!(sx("lerp(a_u8, b_u8, w_u8)"), "(halide-lerp a_u8 b_u8 w_u8)");
}
