//! Division and remainder by constants (ir/elaborate/divide.rs) against their meaning in
//! Halide, Euclidean division: run on every 8-bit dividend for every divisor and on sampled
//! dividends up to 32 bits (64 bits: powers of two), and proven with z3 at 8 and 16 bits (`0 <= x - (x / c) * c < |c|`,
//! computed where nothing wraps).

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

/// `x / c` and `x % c` on every lane of `xs` against `div_euclid` and `rem_euclid`.
fn run(elem: Elem, xs: &[i128], c: i128) {
    let t = elem.name();
    let ty = VecType::new(xs.len() as u32, elem);
    let lanes: Vec<u128> = xs.iter().map(|&x| x as u128 & elem.mask()).collect();
    let env: Env = [(format!("x_{t}"), Value::new(ty, lanes))].into();
    for (op, want) in [
        ("/", i128::div_euclid as fn(i128, i128) -> i128),
        ("%", i128::rem_euclid),
    ] {
        let text = format!("x_{t} {op} {c}");
        let e = elaborate(&text, xs.len() as u32);
        let got = eval(&e, &env).unwrap();
        for (x, lane) in xs.iter().zip(&got.lanes) {
            let expected = value_of(elem, want(*x, c) as u128);
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
/// 32 bits; powers of two at 64 bits (other 64-bit divisors need 128-bit products: refused).
#[test]
fn sampled_16_to_64_bit_dividends() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let elems = Elem::ALL
        .into_iter()
        .filter(|e| e.is_int() && (16..=64).contains(&e.bits()));
    for elem in elems {
        let wide = elem.bits() == 64;
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
            3i128, 7, 10, 100, 255, 641, 1000, 32767, 1_000_003, -3, -1000, 16, -64,
        ];
        for c in divisors {
            let power_of_two = c.unsigned_abs().is_power_of_two();
            if (c > 0 || elem.is_signed()) && c.abs() <= hi && (power_of_two || !wide) {
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

#[test]
fn a_64_bit_dividend_by_another_constant_is_refused() {
    let (parsed, _) = crate::ir::forms::parse_expression("x_u64 / 3", "test").unwrap();
    let macros = crate::ir::Macros::default();
    let err = crate::ir::halide::elaborate_parsed(&parsed, &macros, 2, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a 64-bit dividend needs a 128-bit product"),
        "{err}"
    );
}
