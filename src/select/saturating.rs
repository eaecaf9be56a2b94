//! Saturating sums, differences and left shifts without the wider type, sound by construction
//! (AVX2 cannot narrow 64-bit lanes with saturation, HVX has none, and no target has 128-bit
//! lanes):
//! - unsigned: `x + y` saturated is `min(x, !y) + y` (`!y` is the headroom above `y`), and
//!   `x - y` saturated is `max(x, y) - y`;
//! - signed: the wrapped result where it did not overflow, else the extreme of `x`'s sign
//!   (`(x >> (bits - 1)) ^ max`). A sum overflowed where both operands' signs differ from the
//!   result's (`((x ^ r) & (y ^ r)) < 0`), a difference where the operands' signs differ and
//!   the result's differs from `x`'s (`((x ^ y) & (x ^ r)) < 0`);
//! - a left shift by `c` in range: the shifted value where shifting it back gives `x`, else
//!   the maximum (unsigned) or the extreme of `x`'s sign.

use super::fallback::{constant, Lacks, Own};
use super::term::{op, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// Whether a rewrite that narrows `w` to `t` by `conversion` without `w` is worth making: where
/// the input narrows so and either the target cannot (AVX2's 64-bit lanes with saturation, HVX's
/// 64-bit lanes) or `w` has 64-bit lanes (half as many per register as 32-bit `t`; AVX-512's
/// `saturating_add(x_i32, y_i32)` is 7 instructions without them, 22 with). At narrower types
/// the targets have the instructions, and the rewrites only grow the e-graph (AVX2's corpus
/// selected 20% slower with them made at every type).
pub fn worth_it(t: VecType, w: VecType, conversion: &'static str, own: Own, lacks: Lacks) -> bool {
    own(conversion, t) && (lacks(conversion, t, Some(w)) || w.elem.bits() == 64)
}

/// The saturating sum, difference and left shift of values of type `t` computed at `w` (twice
/// as wide, the same lanes) and narrowed to `t` with saturation, where the input narrows to `t`
/// so.
pub fn saturating_sums(t: VecType, w: VecType, own: Own, lacks: Lacks) -> Vec<Rewrite> {
    let bits = t.elem.bits();
    let fits = t.elem.is_int() && w.elem.is_int() && bits <= 64 && w.lanes == t.lanes;
    if !fits || w.elem.bits() != 2 * bits || !worth_it(t, w, "SatCast", own, lacks) {
        return vec![];
    }
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let widened = |v: &Term| op("Cast", w, vec![v.clone()]);
    let wide = |name| op(name, w, vec![widened(&x), widened(&y)]);
    let narrow = |name| op(name, t, vec![x.clone(), y.clone()]);
    let max = constant(t, t.elem.max_value());
    let mut out = Vec::new();
    // A left shift by c in range saturates where shifting back does not give x.
    let c = Int::Slot("c");
    let shifted = op(
        "Shl",
        t,
        vec![
            x.clone(),
            Term::Const {
                ty: t,
                value: c.clone(),
            },
        ],
    );
    let kept = op(
        "Eq",
        t.with_elem(Elem::Bool),
        vec![
            op(
                "Shr",
                t,
                vec![
                    shifted.clone(),
                    Term::Const {
                        ty: t,
                        value: c.clone(),
                    },
                ],
            ),
            x.clone(),
        ],
    );
    let extreme = if t.elem.is_signed() {
        op(
            "Xor",
            t,
            vec![
                op("Shr", t, vec![x.clone(), constant(t, bits as i128 - 1)]),
                max.clone(),
            ],
        )
    } else {
        max.clone()
    };
    if w.elem.is_signed() == t.elem.is_signed() {
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{} saturating left shift without {}",
                type_name(t),
                type_name(w)
            ),
            lhs: op(
                "SatCast",
                t,
                vec![op(
                    "Shl",
                    w,
                    vec![
                        widened(&x),
                        Term::Const {
                            ty: w,
                            value: c.clone(),
                        },
                    ],
                )],
            ),
            rhs: op("Select", t, vec![kept, shifted, extreme.clone()]),
            conditions: vec![
                Condition::TypeOf(x.clone(), t),
                Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(0)),
                Condition::Compare(Cmp::Lt, c, Int::Lit(bits as i128)),
            ],
        });
    }
    let mut push = |what: &str, lhs, rhs| {
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{} saturating {what} without {}",
                type_name(t),
                type_name(w)
            ),
            lhs: op("SatCast", t, vec![lhs]),
            rhs,
            conditions: vec![
                Condition::TypeOf(x.clone(), t),
                Condition::TypeOf(y.clone(), t),
            ],
        })
    };
    if !t.elem.is_signed() {
        if !w.elem.is_signed() {
            let headroom = op("Xor", t, vec![y.clone(), max]);
            let sum = op(
                "Add",
                t,
                vec![op("Min", t, vec![x.clone(), headroom]), y.clone()],
            );
            push("sum", wide("Add"), sum);
        } else {
            let difference = op("Sub", t, vec![narrow("Max"), y.clone()]);
            push("difference", wide("Sub"), difference);
        }
        return out;
    }
    if !w.elem.is_signed() {
        return out;
    }
    let bools = t.with_elem(Elem::Bool);
    let xor = |a: Term, b: Term| op("Xor", t, vec![a, b]);
    let negative = |v: Term| op("Lt", bools, vec![v, constant(t, 0)]);
    for (what, name) in [("sum", "Add"), ("difference", "Sub")] {
        let r = narrow(name);
        let overflowed = match name {
            "Add" => op(
                "And",
                t,
                vec![xor(x.clone(), r.clone()), xor(y.clone(), r.clone())],
            ),
            _ => op(
                "And",
                t,
                vec![xor(x.clone(), y.clone()), xor(x.clone(), r.clone())],
            ),
        };
        let rhs = op("Select", t, vec![negative(overflowed), extreme.clone(), r]);
        push(what, wide(name), rhs);
    }
    out
}

/// A saturating narrowing to `t` of values of `w` that only ever pass `t`'s maximum by one and
/// never reach its minimum (their bounds): the plain narrowing, where the maximum plus one
/// wraps to the minimum, with those lanes' bits flipped (the minimum's flipped are the
/// maximum's). `mul_shift_right(x_i16, y_i16,
/// 15)` passes only at -32768 squared: x86's `pmulhw`/`pmullw` product bits and a fix-up
/// rather than the products widened, shifted and packed.
pub fn saturation_above_by_one(t: VecType, w: VecType, own: Own) -> Option<Rewrite> {
    let ints = t.elem.is_int() && w.elem.is_int() && w.lanes == t.lanes;
    if !ints || w.elem.bits() <= t.elem.bits() || w.elem.bits() > 64 || !own("SatCast", t) {
        return None;
    }
    let (min, max) = (t.elem.min_value(), t.elem.max_value());
    let x = Term::Wildcard("x".into());
    let narrowed = op("Cast", t, vec![x.clone()]);
    let wrapped = op(
        "Eq",
        t.with_elem(Elem::Bool),
        vec![narrowed.clone(), constant(t, min)],
    );
    // The all-ones mask of the wrapped lanes flips the minimum's bits into the maximum's.
    let mask = op("Select", t, vec![wrapped, constant(t, -1), constant(t, 0)]);
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} saturating narrowing of {} above by one",
            type_name(t),
            type_name(w)
        ),
        lhs: op("SatCast", t, vec![x.clone()]),
        rhs: op("Xor", t, vec![narrowed, mask]),
        conditions: vec![
            Condition::TypeOf(x, w),
            Condition::Compare(Cmp::Gt, Int::Lo("x".into()), Int::Lit(min)),
            Condition::Compare(Cmp::Le, Int::Hi("x".into()), Int::Lit(max + 1)),
        ],
    })
}
