//! Division and remainder (ir/elaborate/divide.rs by constants, the IR's `div` and `mod` by
//! anything) against their meaning in Halide, Euclidean division with zero by zero: run on
//! every 8-bit dividend for every divisor and on sampled dividends up to 64 bits, and proven
//! with z3 at 8 and 16 bits (`0 <= x - (x / c) * c < |c|`, computed where nothing wraps).

use super::{eval, prove_equivalent, Env, Value};
use crate::ir::{Elem, Expr, VecType};
use std::rc::Rc;

fn elaborate(text: &str, lanes: u32) -> Rc<Expr> {
    let (parsed, _) = crate::ir::forms::parse_expression(text, "test").unwrap();
    let macros = crate::ir::Macros::default();
    crate::ir::halide::elaborate_parsed(&parsed, &macros, lanes, &Default::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Lane bits as a value of `elem`.
fn value_of(elem: Elem, bits: u128) -> i128 {
    let bits = bits & elem.mask();
    if elem.is_signed() && bits >> (elem.bits() - 1) & 1 == 1 {
        bits as i128 - (1i128 << elem.bits())
    } else {
        bits as i128
    }
}

/// Halide's quotient or remainder: Euclidean, zero by zero.
fn halide(quotient: bool, x: i128, c: i128) -> i128 {
    match (c, quotient) {
        (0, _) => 0,
        (_, true) => x.div_euclid(c),
        (_, false) => x.rem_euclid(c),
    }
}

/// `x / c` and `x % c` on every lane of `xs` against `div_euclid` and `rem_euclid`.
fn run(elem: Elem, xs: &[i128], c: i128) {
    let t = elem.name();
    let ty = VecType::new(xs.len() as u32, elem);
    let lanes: Vec<u128> = xs.iter().map(|&x| x as u128 & elem.mask()).collect();
    let env: Env = [(format!("x_{t}"), Value::new(ty, lanes))].into();
    for (op, quotient) in [("/", true), ("%", false)] {
        let text = format!("x_{t} {op} {c}");
        let e = elaborate(&text, xs.len() as u32);
        let got = eval(&e, &env).unwrap();
        for (x, lane) in xs.iter().zip(&got.lanes) {
            let expected = value_of(elem, halide(quotient, *x, c) as u128);
            assert_eq!(value_of(elem, *lane), expected, "{text} at x = {x}");
        }
    }
}

#[test]
fn every_8_bit_dividend_and_divisor() {
    for elem in [Elem::U8, Elem::I8] {
        let xs: Vec<i128> = (elem.min_value()..=elem.max_value()).collect();
        for c in -elem.max_value()..=elem.max_value() {
            if c != 0 && (c > 0 || elem.is_signed()) {
                run(elem, &xs, c);
            }
        }
    }
}

/// Every 17th dividend and the edges at 16 bits; 4,096 pseudo-random ones and the edges at
/// 32 and 64 bits (where other divisors than powers of two are the IR's `div` and `mod`).
#[test]
fn sampled_16_to_64_bit_dividends() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let elems = Elem::ALL
        .into_iter()
        .filter(|e| e.is_int() && (16..=64).contains(&e.bits()));
    for elem in elems {
        let (lo, hi) = (elem.min_value(), elem.max_value());
        let mut xs: Vec<i128> = if elem.bits() == 16 {
            (lo..=hi).step_by(17).collect()
        } else {
            (0..4089)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    value_of(elem, state as u128)
                })
                .collect()
        };
        xs.extend(
            [lo, lo + 1, -1, 0, 1, hi - 1, hi]
                .iter()
                .filter(|x| **x >= lo),
        );
        let divisors = [
            3i128, 7, 10, 100, 255, 641, 1000, 32767, 1_000_003, -3, -1000, 16, -64, 0,
        ];
        for c in divisors {
            if (c > 0 || elem.is_signed()) && c.abs() <= hi {
                run(elem, &xs, c);
            }
        }
    }
}

/// z3 proves `0 <= x - (x / c) * c < |c|`, computed in i32 where nothing wraps, and that the
/// remainder is that difference (in under a second each; small 16-bit divisors take z3 10 s
/// and more, 32-bit ones past a minute: those are run above instead).
#[test]
fn proven_by_z3_at_8_and_16_bits() {
    let cases: [(&str, &[i128]); 4] = [
        ("u8", &[3, 37, 255]),
        ("i8", &[3, -7, 127]),
        ("u16", &[641, 65535]),
        ("i16", &[641, -641, 32767]),
    ];
    for (t, divisors) in cases {
        for &c in divisors {
            let r = format!("i32(x_{t}) - i32(x_{t} / {c}) * {c}");
            let bounded = elaborate(&format!("clamp({r}, 0, {})", c.abs() - 1), 1);
            let remainder = elaborate(&r, 1);
            let verdict = prove_equivalent(&bounded, &remainder, None, 60_000).unwrap();
            assert!(verdict.is_proven(), "x_{t} / {c}: {verdict:?}");
            let narrowed = elaborate(&format!("{t}({r})"), 1);
            let modulo = elaborate(&format!("x_{t} % {c}"), 1);
            let verdict = prove_equivalent(&narrowed, &modulo, None, 60_000).unwrap();
            assert!(verdict.is_proven(), "x_{t} % {c}: {verdict:?}");
        }
    }
}

/// The IR's `div` and `mod` by a variable, on every pair of 8-bit values (MIN / -1 wraps).
#[test]
fn every_8_bit_pair_by_a_variable() {
    for elem in [Elem::U8, Elem::I8] {
        let t = elem.name();
        let values: Vec<i128> = (elem.min_value()..=elem.max_value()).collect();
        let ty = VecType::new(values.len() as u32, elem);
        let lanes: Vec<u128> = values.iter().map(|&y| y as u128 & elem.mask()).collect();
        for (op, quotient) in [("/", true), ("%", false)] {
            let text = format!("x_{t} {op} y_{t}");
            let e = elaborate(&text, values.len() as u32);
            for &x in &values {
                let env: Env = [
                    (
                        format!("x_{t}"),
                        Value::new(ty, vec![x as u128 & elem.mask(); 256]),
                    ),
                    (format!("y_{t}"), Value::new(ty, lanes.clone())),
                ]
                .into();
                let got = eval(&e, &env).unwrap();
                for (y, lane) in values.iter().zip(&got.lanes) {
                    let expected = value_of(elem, halide(quotient, x, *y) as u128);
                    assert_eq!(value_of(elem, *lane), expected, "{x} {op} {y} at {t}");
                }
            }
        }
    }
}

/// z3's `div` and `mod` by a variable are Euclidean: `x = (x / y) * y + x % y` (wrapping, as
/// MIN / -1 does) with `0 <= x % y < |y|` (in i32) where `y` is not zero, both zero where it is
/// (at 8 bits: the 16-bit identity keeps z3 past three minutes); and by a constant they are the multiply-high expansions proven above.
#[test]
fn z3_divides_by_a_variable_euclidean() {
    for t in ["u8", "i8"] {
        let wide = |e: &str| format!("i32({e})");
        let (q, r) = (
            wide(&format!("x_{t} / y_{t}")),
            wide(&format!("x_{t} % y_{t}")),
        );
        let y = wide(&format!("y_{t}"));
        let claims = [
            (
                format!("select(y_{t} == 0, 0, x_{t} / y_{t} * y_{t} + x_{t} % y_{t})"),
                format!("select(y_{t} == 0, 0, x_{t})"),
            ),
            (
                format!("select(y_{t} == 0, 0, clamp({r}, 0, max({y}, 0 - {y}) - 1))"),
                r.clone(),
            ),
            (format!("select(y_{t} == 0, {q}, 0)"), "i32(0)".to_string()),
        ];
        for (a, b) in claims {
            let verdict =
                prove_equivalent(&elaborate(&a, 1), &elaborate(&b, 1), None, 60_000).unwrap();
            assert!(verdict.is_proven(), "{a} == {b} at {t}: {verdict:?}");
        }
    }
    for (t, c) in [("u8", 37), ("i8", -7), ("i16", 641)] {
        for op in ["div", "mod"] {
            let raw = elaborate(&format!("({op} x_{t} {c})"), 1);
            let sign = if op == "div" { "/" } else { "%" };
            let expansion = elaborate(&format!("x_{t} {sign} {c}"), 1);
            assert_ne!(raw, expansion, "{op} by {c} at {t} is expanded");
            let verdict = prove_equivalent(&raw, &expansion, None, 60_000).unwrap();
            assert!(verdict.is_proven(), "{op} {c} at {t}: {verdict:?}");
        }
    }
}
