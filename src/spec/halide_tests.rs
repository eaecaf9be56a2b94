//! Halide-style expressions elaborated against the prelude and the FPIR idioms of `specs/` and
//! evaluated by the interpreter: rounding averages, Q15 multiplies, narrowing divisions,
//! `reduce_add` operand lanes, `reduce_max` and `reduce_min`, Halide's division and `abs`, idioms called by name, type errors.

use super::load::load_forms;
use super::SpecSet;
use crate::ir::halide::{elaborate_halide, parse_halide};
use crate::ir::sexpr::read_all;
use crate::ir::{Expr, Macros, VecType};
use crate::semantics::{eval, Env, Value};
use std::rc::Rc;

/// The prelude and the FPIR idioms only, so specs being edited elsewhere do not matter.
fn macros() -> Macros {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut set = SpecSet::default();
    for f in ["prelude.spec", "idioms/fpir.spec"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        load_forms(&mut set, &read_all(&text, f).unwrap()).unwrap();
    }
    set.macros
}

fn elab(text: &str, lanes: u32) -> Rc<Expr> {
    elaborate_halide(text, "expression", &macros(), lanes).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// One lane of an expression as a user types it (Halide's shifts by a value).
fn user(text: &str) -> Rc<Expr> {
    let declared = Default::default();
    crate::ir::forms::elaborate_expression(text, "expression", &macros(), 1, &declared)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// An expression as a user writes it (Halide's shifts and conversions) at `lanes` lanes.
fn halide(text: &str, lanes: u32) -> crate::error::Result<Rc<Expr>> {
    let declared = Default::default();
    crate::ir::forms::elaborate_expression(text, "expression", &macros(), lanes, &declared)
}

fn elab_err(text: &str) -> String {
    match halide(text, 8) {
        Ok(e) => panic!("{text} elaborated to {e}"),
        Err(e) => e.to_string(),
    }
}

/// Evaluates a one-lane expression with scalar inputs given as integers.
fn run(e: &Expr, inputs: &[(&str, i128)]) -> i128 {
    let mut env = Env::new();
    for (name, ty) in e.vars() {
        let v = inputs
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no input {name}"))
            .1;
        env.insert(name, Value::new(ty, vec![v as u128; ty.lanes as usize]));
    }
    eval(e, &env).unwrap().int(0)
}

fn sx(text: &str) -> String {
    parse_halide(text, "expression").unwrap().to_string()
}

#[test]
fn rounding_average_matches_the_idiom() {
    let e = elab("u8((u16(a_u8) + u16(b_u8) + 1) >> 1)", 1);
    let idiom = elab("rounding_halving_add(a_u8, b_u8)", 1);
    assert_eq!(e.ty.to_string(), idiom.ty.to_string());
    for a in 0..256 {
        for b in 0..256 {
            let inputs = [("a_u8", a), ("b_u8", b)];
            assert_eq!(run(&e, &inputs), (a + b + 1) >> 1);
            assert_eq!(run(&e, &inputs), run(&idiom, &inputs));
        }
    }
}

#[test]
fn q15_multiply_is_a_shift_by_15() {
    let text = "i16_sat((i32(a_i16) * i32(b_i16) + (1 << 14)) / (1 << 15))";
    assert_eq!(
        elab(text, 1).to_string(),
        "(sat-cast i16 (shr (add (mul (cast i32 (var a_i16 i16)) (cast i32 (var b_i16 i16))) (const i32 16384)) (const i32 15)))"
    );
    let e = elab(text, 8);
    assert_eq!(e.ty.to_string(), "<8 x i16>");
    let one = elab(text, 1);
    let idiom = elab("rounding_mul_shr(a_i16, b_i16, 15)", 1);
    let vals = [
        -32768, -32767, -16384, -12345, -1, 0, 1, 2, 777, 16384, 32767,
    ];
    for a in vals {
        for b in vals {
            let inputs = [("a_i16", a), ("b_i16", b)];
            let want = ((a * b + (1 << 14)) >> 15).clamp(-32768, 32767);
            assert_eq!(run(&one, &inputs), want, "{a} {b}");
            assert_eq!(run(&idiom, &inputs), want, "{a} {b}");
        }
    }
}

#[test]
fn saturating_narrowing_division() {
    let text = "u8_sat((i32(a_i16) + 8) / 16)";
    assert_eq!(
        elab(text, 1).to_string(),
        "(sat-cast u8 (shr (add (cast i32 (var a_i16 i16)) (const i32 8)) (const i32 4)))"
    );
    let e = elab(text, 1);
    assert_eq!(e.ty.to_string(), "u8");
    for a in [-32768, -100, -9, -8, 0, 7, 8, 100, 4087, 4088, 32767] {
        assert_eq!(
            run(&e, &[("a_i16", a)]),
            ((a + 8).div_euclid(16)).clamp(0, 255),
            "{a}"
        );
    }
}

#[test]
fn reduce_add_operands_are_wider() {
    let text = "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))";
    assert_eq!(
        sx(text),
        "(add acc_u32 (reduce-add 4 (mul (cast u32 a_u8) (cast u32 b_u8))))"
    );
    let e = elab(text, 4);
    assert_eq!(e.ty.to_string(), "<4 x u32>");
    let vars: Vec<String> = e.vars().iter().map(|(n, t)| format!("{n}:{t}")).collect();
    assert_eq!(
        vars,
        ["acc_u32:<4 x u32>", "a_u8:<16 x u8>", "b_u8:<16 x u8>"]
    );
    let mut env = Env::new();
    env.insert(
        "acc_u32".into(),
        Value::new(VecType::parse("<4 x u32>").unwrap(), vec![1000, 0, 5, 7]),
    );
    env.insert(
        "a_u8".into(),
        Value::new(VecType::parse("<16 x u8>").unwrap(), (0..16).collect()),
    );
    env.insert(
        "b_u8".into(),
        Value::new(VecType::parse("<16 x u8>").unwrap(), vec![255; 16]),
    );
    let v = eval(&e, &env).unwrap();
    assert_eq!(
        v.lanes,
        vec![1000 + 6 * 255, 22 * 255, 5 + 38 * 255, 7 + 54 * 255]
    );
    let msg = elab_err("u16(a_u8) + reduce_add(2, u16(a_u8))");
    assert_eq!(
        msg,
        "expression:1:31: type error: 'a_u8' has 16 lanes here but 8 at 1:5 (operands of reduce_add(k, e), reduce_max and reduce_min have k times the lanes of its result)"
    );
}

#[test]
fn division_rounds_down_and_remainder_is_never_negative() {
    assert_eq!(sx("x_i8 / 4"), "(divide-by x_i8 4)");
    assert_eq!(
        elab("x_i8 / 4", 1).to_string(),
        "(shr (var x_i8 i8) (const i8 2))"
    );
    assert_eq!(
        elab("x_i8 % 4", 1).to_string(),
        "(and (var x_i8 i8) (const i8 3))"
    );
    assert_eq!(elab("x_i8 / 1", 1).to_string(), "(var x_i8 i8)");
    let div = elab("(x_i8 / 4)", 1);
    let rem = elab("x_i8 % 4", 1);
    assert_eq!(run(&div, &[("x_i8", -7)]), -2);
    assert_eq!(run(&rem, &[("x_i8", -7)]), 1);
    for k in 0..8 {
        let c = 1i128 << k;
        for ty in ["i8", "u8"] {
            let d = elab(&format!("x_{ty} / {c}"), 1);
            let r = elab(&format!("x_{ty} % {c}"), 1);
            let range = if ty == "i8" { -128..128 } else { 0..256 };
            for x in range {
                let name = format!("x_{ty}");
                assert_eq!(run(&d, &[(name.as_str(), x)]), x.div_euclid(c), "{x} / {c}");
                assert_eq!(run(&r, &[(name.as_str(), x)]), x.rem_euclid(c), "{x} % {c}");
            }
        }
    }
}

#[test]
fn halide_abs_is_unsigned_for_signed_types() {
    let e = elab("abs(x_i8)", 1);
    assert_eq!(e.ty.to_string(), "u8");
    assert_eq!(run(&e, &[("x_i8", -128)]), 128);
    assert_eq!(run(&e, &[("x_i8", -5)]), 5);
    assert_eq!(elab("abs(x_u16)", 4).ty.to_string(), "<4 x u16>");
    assert_eq!(elab("u16(abs(x_i8))", 1).ty.to_string(), "u16");
    assert_eq!(sx("a_i8 + abs(-3)"), "(add a_i8 3)");
}

#[test]
fn idioms_elaborate_by_name() {
    assert_eq!(
        elab("widening_add(a_u8, b_u8)", 16).ty.to_string(),
        "<16 x u16>"
    );
    assert_eq!(elab("absd(a_i8, b_i8)", 16).ty.to_string(), "<16 x u8>");
    assert_eq!(
        elab("saturating_add(a_u8, b_u8)", 16).ty.to_string(),
        "<16 x u8>"
    );
    assert_eq!(
        elab("halving_add(a_i16, b_i16) + 1", 8).ty.to_string(),
        "<8 x i16>"
    );
    let msg = elab_err("widenin_add(a_u8, b_u8)");
    assert!(
        msg.starts_with("expression:1:1: unknown operator 'widenin_add'"),
        "{msg}"
    );
    assert!(msg.contains("did you mean 'widening_add'"), "{msg}");
}

#[test]
fn mixing_element_types_halide_does_not_convert_is_a_type_error() {
    let msg = elab_err("a_u8 & b_i16");
    assert!(msg.starts_with("expression:1:6: type error:"), "{msg}");
    assert!(
        msg.contains("<8 x u8>") && msg.contains("<8 x i16>"),
        "{msg}"
    );
    assert!(elab_err("a_u8 * 300").contains("literal 300 does not fit in u8"));
}

#[test]
fn shifts_by_a_value_reverse_for_negative_amounts_as_halide_shifts() {
    let shl = user("x_i8 << y_i8");
    assert_eq!(run(&shl, &[("x_i8", 100), ("y_i8", -2)]), 25);
    assert_eq!(run(&shl, &[("x_i8", -100), ("y_i8", -2)]), -25);
    assert_eq!(run(&shl, &[("x_i8", 3), ("y_i8", 2)]), 12);
    let shr = user("x_i16 >> y_i16");
    assert_eq!(run(&shr, &[("x_i16", 3), ("y_i16", -4)]), 48);
    assert_eq!(run(&shr, &[("x_i16", -64), ("y_i16", 3)]), -8);
    // The amount takes the shifted lanes' width and keeps its signedness.
    let mixed = user("x_u8 << y_i16");
    assert_eq!(run(&mixed, &[("x_u8", 200), ("y_i16", -1)]), 100);
    // Rule sides keep the IR's shift, whose amount is unsigned.
    assert_eq!(
        run(&elab("x_u8 >> y_u8", 1), &[("x_u8", 200), ("y_u8", 9)]),
        0
    );
}

#[test]
fn halide_rounding_shifts_by_a_value_round_right_shifts_and_reverse_for_negative_amounts() {
    let right = user("rounding_shift_right(x_i16, y_i16)");
    assert_eq!(run(&right, &[("x_i16", 6), ("y_i16", 2)]), 2);
    assert_eq!(run(&right, &[("x_i16", -6), ("y_i16", 2)]), -1);
    assert_eq!(run(&right, &[("x_i16", 3), ("y_i16", -4)]), 48);
    assert_eq!(run(&right, &[("x_i16", 32767), ("y_i16", 1)]), 16384);
    let left = user("rounding_shift_left(x_u8, y_i8)");
    assert_eq!(run(&left, &[("x_u8", 3), ("y_i8", 2)]), 12);
    assert_eq!(run(&left, &[("x_u8", 255), ("y_i8", -1)]), 128);
    assert_eq!(run(&left, &[("x_u8", 5), ("y_i8", -2)]), 1);
    // An unsigned amount is never negative: the right shift rounds.
    let unsigned = user("rounding_shift_right(x_u8, y_u8)");
    assert_eq!(run(&unsigned, &[("x_u8", 255), ("y_u8", 1)]), 128);
    assert_eq!(run(&unsigned, &[("x_u8", 200), ("y_u8", 0)]), 200);
    // By a constant, the FPIR idiom itself.
    assert_eq!(
        user("rounding_shift_right(x_u8, 1)").to_string(),
        user("rounding_shr(x_u8, 1)").to_string()
    );
}

#[test]
fn a_chain_of_shifts_by_values_elaborates_each_operand_once() {
    // The macros read the shifted value twice; bound once, 40 shifts stay a chain (expanded
    // textually, the tree doubled at every level: 2^40 nodes).
    let chain = (0..40).fold("x_i8".to_string(), |e, _| format!("({e} << y_i8)"));
    let declared = Default::default();
    let e = crate::ir::forms::elaborate_expression(&chain, "expression", &macros(), 1, &declared)
        .unwrap();
    assert_eq!(e.ty.to_string(), "i8");
}

#[test]
fn reduce_max_and_min_take_the_extreme_of_each_group_of_k_lanes() {
    // Results of 2 lanes (k * 2 input lanes) and of 1 lane (all lanes at once, by halves).
    for (k, lanes) in [
        (1, 2),
        (2, 2),
        (3, 2),
        (4, 2),
        (6, 2),
        (8, 2),
        (8, 1),
        (5, 1),
    ] {
        let input: Vec<i128> = (0..k * lanes).map(|i| (i * 37 + 11) % 256 - 128).collect();
        for (name, pick) in [
            ("reduce_max", i128::max as fn(i128, i128) -> i128),
            ("reduce_min", i128::min),
        ] {
            let e = elab(&format!("{name}({k}, v_i8)"), lanes as u32);
            let result = VecType::parse(&format!("<{lanes} x i8>")).unwrap();
            assert_eq!(e.ty, result, "{name}({k})");
            let ty = VecType::parse(&format!("<{} x i8>", k * lanes)).unwrap();
            let mut env = Env::new();
            let bits = input.iter().map(|&v| (v as i8 as u8) as u128).collect();
            env.insert("v_i8".into(), Value::new(ty, bits));
            let got: Vec<i128> = (0..lanes as usize)
                .map(|i| eval(&e, &env).unwrap().int(i))
                .collect();
            let want: Vec<i128> = input
                .chunks(k as usize)
                .map(|g| g.iter().copied().reduce(pick).unwrap())
                .collect();
            assert_eq!(got, want, "{name}({k}, v_i8) at {lanes} lanes");
        }
    }
}

#[test]
fn absd_of_f32_is_the_absolute_difference() {
    assert_eq!(
        elab("absd(x_f32, y_f32)", 4).to_string(),
        "(abs (sub (var x_f32 <4 x f32>) (var y_f32 <4 x f32>)))"
    );
    let absd = elab("absd(x_f32, 1.5f)", 1);
    for (x, d) in [(4.0f32, 2.5f32), (-1.0, 2.5), (1.5, 0.0)] {
        assert_eq!(
            run(&absd, &[("x_f32", x.to_bits() as i128)]),
            d.to_bits() as i128
        );
    }
}

#[test]
fn float_literals_and_division() {
    assert_eq!(sx("x_f32 * 2.5f + -1.5"), "(add (mul x_f32 2.5) -1.5)");
    assert_eq!(
        elab("x_f32 / y_f32", 4).to_string(),
        "(div (var x_f32 <4 x f32>) (var y_f32 <4 x f32>))"
    );
    let half = elab("x_f32 / 2", 1);
    assert_eq!(half.to_string(), "(div (var x_f32 f32) (const f32 2.0))");
    let three = (3.0f32).to_bits() as i128;
    assert_eq!(run(&half, &[("x_f32", three)]), (1.5f32).to_bits() as i128);
    // By a variable: the IR's operator; f32's remainder x - 2 * floor(x / 2).
    assert_eq!(
        elab("x_u8 / y_u8", 1).to_string(),
        "(div (var x_u8 u8) (var y_u8 u8))"
    );
    assert_eq!(
        elab("x_i16 % y_i16", 1).to_string(),
        "(mod (var x_i16 i16) (var y_i16 i16))"
    );
    let remainder = elab("x_f32 % 2", 1);
    for (x, r) in [(7.5f32, 1.5f32), (-1.0, 1.0), (4.0, 0.0)] {
        let got = run(&remainder, &[("x_f32", x.to_bits() as i128)]);
        assert_eq!(got, r.to_bits() as i128, "{x} % 2");
    }
}

/// Halide's lerp of integer lanes: exact at the ends of the weight, within one of the exact
/// interpolation between (its division by 2^b - 1 is `(p / 2^b + p) / 2^b`), and monotonic
/// in the weight; signed lanes are interpolated over their whole range.
#[test]
fn lerp_has_halides_rounding() {
    let u8s = user("lerp(z_u8, o_u8, w_u8)");
    for z in (0..=255).step_by(17) {
        for o in (0..=255).step_by(15) {
            let mut last = None;
            for w in 0..=255i128 {
                let r = run(&u8s, &[("z_u8", z), ("o_u8", o), ("w_u8", w)]);
                let exact = (z * (255 - w) + o * w) as f64 / 255.0;
                assert!((r as f64 - exact).abs() < 1.0, "lerp({z}, {o}, {w}) = {r}");
                if let Some(l) = last {
                    assert!(if o >= z { r >= l } else { r <= l }, "lerp({z}, {o}, {w})");
                }
                last = Some(r);
            }
            assert_eq!(run(&u8s, &[("z_u8", z), ("o_u8", o), ("w_u8", 0)]), z);
            assert_eq!(run(&u8s, &[("z_u8", z), ("o_u8", o), ("w_u8", 255)]), o);
        }
    }
    let i16s = user("lerp(z_i16, o_i16, w_u16)");
    let at = |z, o, w| run(&i16s, &[("z_i16", z), ("o_i16", o), ("w_u16", w)]);
    assert_eq!(at(-32768, 32767, 0), -32768);
    assert_eq!(at(-32768, 32767, 65535), 32767);
    assert_eq!(at(-100, 100, 32768), 0);
    assert_eq!(at(100, -100, 65535), -100);
}

/// Halide's functions of two values convert them as its operators do (`match_types`); a
/// literal still takes its sibling's type, and the s-expression form stays strict.
#[test]
fn halides_functions_convert_their_operands() {
    let same =
        |a: &str, b: &str| assert_eq!(halide(a, 8).unwrap(), halide(b, 8).unwrap(), "{a} vs {b}");
    same("absd(i16_1, i8_2)", "absd(i16_1, i16(i8_2))");
    same(
        "widening_add(u8_1, u16_2)",
        "widening_add(u16(u8_1), u16_2)",
    );
    same(
        "saturating_add(u8_1, i8_2)",
        "saturating_add(i8(u8_1), i8_2)",
    );
    same("absd(u8_1, 3)", "absd(u8_1, u8(3))");
    same("absd(u8_1, f32_1)", "absd(f32(u8_1), f32_1)");
    assert!(elab_err("absd(a_u8 & b_i16, c_u8)").contains("type error"));
}

/// A type error inside an idiom or prelude macro the user called is placed at the call,
/// naming the macro and where in it the error arose.
#[test]
fn an_error_inside_a_called_macro_is_placed_at_the_call() {
    let msg = elab_err("a_u8 + widening_add(f32_1, f32_2)");
    assert!(
        msg.starts_with("expression:1:8: type error: in widening_add (prelude.spec:"),
        "{msg}"
    );
}
