//! Conversions between f32 and integer lanes, sound by construction: the narrow integers go
//! through i32, and where the target has no instruction for a conversion itself, its
//! conversion with an out-of-range result (x86's "integer indefinite") fixed up in the lanes
//! where the IR's saturating one differs, and u32 to f32 by its two 16-bit halves.

use super::fallback::{constant as int, Lacks};
use super::signedness::Wanted;
use super::term::{lane_value, op, reinterpret, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// The conversions between `s` and `t` the target lacks, by the means above.
pub fn float_conversions(s: VecType, t: VecType, wanted: Wanted, lacks: Lacks) -> Vec<Rewrite> {
    if s.lanes != t.lanes || (s.elem == Elem::F32) == (t.elem == Elem::F32) {
        return vec![];
    }
    let mut out = through_i32(s, t);
    if lacks("Cast", t, Some(s)) {
        out.extend(from_indefinite(s, t, false));
        out.extend(u32_by_halves(s, t));
    }
    if wanted("Round", s, None) && lacks("Cast", t, Some(s)) {
        out.extend(from_indefinite(s, t, true));
    }
    out
}

/// An integer narrower than 32 bits converts to f32 as its i32 does (exactly), and an f32
/// converts to it as the saturation of its conversion to i32 (the IR's conversion saturates at
/// the type's bounds, NaN giving 0).
fn through_i32(s: VecType, t: VecType) -> Vec<Rewrite> {
    let x = Term::Slot("x");
    let outer = if t.elem == Elem::F32 {
        "Cast"
    } else {
        "SatCast"
    };
    float_midpoint(s, t)
        .into_iter()
        .map(|mid| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{} to {} through {}",
                type_name(s),
                type_name(t),
                type_name(mid)
            ),
            lhs: op("Cast", t, vec![x.clone()]),
            rhs: op(outer, t, vec![op("Cast", mid, vec![x.clone()])]),
            conditions: vec![Condition::TypeOf(x.clone(), s)],
        })
        .collect()
}

/// The type a conversion between f32 and integers narrower than 32 bits goes through: i32,
/// which holds them.
pub fn float_midpoint(s: VecType, t: VecType) -> Option<VecType> {
    let int = if s.elem == Elem::F32 { t.elem } else { s.elem };
    (int.is_int() && int.bits() < 32).then(|| t.with_elem(Elem::I32))
}

/// An f32 lane constant.
fn float(ty: VecType, v: f32) -> Term {
    Term::constant(ty, lane_value(ty.elem, v.to_bits() as u128))
}

/// The bounds, as f32, of the lanes a conversion of f32 to `t` computes in range: `x >= lo`
/// (`x > lo` for u32, whose -1 truncates out of range) and `x < hi`.
fn range(t: Elem) -> Option<(&'static str, f32, f32)> {
    match t {
        Elem::I32 => Some(("Ge", -2147483648.0, 2147483648.0)),
        Elem::U32 => Some(("Gt", -1.0, 4294967296.0)),
        _ => None,
    }
}

/// `conversion` (the conversion of `x`, or of its rounding) where `x` is in range, and the
/// integer indefinite (`t`'s minimum for i32, its maximum for u32) elsewhere: x86's cvttps2dq,
/// cvtps2dq, vcvttps2udq; made the IR's saturating conversion by a select above the range
/// (i32: the maximum) and one of 0 where `x` is a NaN or, for u32, below the range. For i32
/// also as bitwise masks: the indefinite lanes NaN cleared, then those above the range
/// flipped from the minimum to the maximum by a xor (AVX2's two compares, and, xor).
fn fixed_up(s: VecType, t: VecType, x: &Term, conversion: Term) -> Vec<Term> {
    let Some((low_cmp, lo, hi)) = range(t.elem) else {
        return vec![];
    };
    let bools = s.with_elem(Elem::Bool);
    let indefinite = match t.elem {
        Elem::I32 => int(t, i32::MIN as i128),
        _ => int(t, u32::MAX as i128),
    };
    let above_low = op(low_cmp, bools, vec![x.clone(), float(s, lo)]);
    let below_high = op("Lt", bools, vec![x.clone(), float(s, hi)]);
    let in_range = op("And", bools, vec![above_low.clone(), below_high]);
    let truncated = op("Select", t, vec![in_range, conversion, indefinite]);
    let select = |c: Term, a: Term, b: Term| op("Select", t, vec![c, a, b]);
    // Masks and bitwise operators on the bits as u32, as x86's compares make them.
    let bits = t.with_elem(Elem::U32);
    let mask = |c: Term| op("Select", bits, vec![c, int(bits, -1), int(bits, 0)]);
    if t.elem != Elem::I32 {
        return vec![select(above_low, truncated, int(t, 0))];
    }
    let above = op("Ge", bools, vec![x.clone(), float(s, hi)]);
    let number = op("Eq", bools, vec![x.clone(), x.clone()]);
    vec![
        select(
            above.clone(),
            int(t, i32::MAX as i128),
            select(number.clone(), truncated.clone(), int(t, 0)),
        ),
        reinterpret(
            t,
            op(
                "Xor",
                bits,
                vec![
                    op(
                        "And",
                        bits,
                        vec![reinterpret(bits, truncated), mask(number)],
                    ),
                    mask(above),
                ],
            ),
        ),
    ]
}

/// `t(x_f32)` from the truncating conversion with an indefinite result, and with `rounded`
/// `t(round(x_f32))` from the one rounding to the nearest (x86's cvtps2dq in MXCSR's default
/// mode: a lane in range rounds in range, the bounds being integers); see [`fixed_up`].
fn from_indefinite(s: VecType, t: VecType, rounded: bool) -> Vec<Rewrite> {
    let x = Term::Slot("x");
    let converted = match rounded {
        true => op("Round", s, vec![x.clone()]),
        false => x.clone(),
    };
    let cast = op("Cast", t, vec![converted]);
    fixed_up(s, t, &x, cast.clone())
        .into_iter()
        .map(|rhs| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{}{} to {} from the conversion with an indefinite result",
                type_name(s),
                if rounded { " rounded" } else { "" },
                type_name(t)
            ),
            lhs: cast.clone(),
            rhs,
            conditions: vec![Condition::TypeOf(x.clone(), s)],
        })
        .collect()
}

/// `f32(x_u32)` as `f32(hi) * 65536 + f32(lo)` of its 16-bit halves, each converted exactly
/// from i32 (x86 before AVX-512 converts only from i32): the product is exact and the sum
/// rounds once, as the conversion of the whole does.
fn u32_by_halves(s: VecType, t: VecType) -> Option<Rewrite> {
    if s.elem != Elem::U32 || t.elem != Elem::F32 {
        return None;
    }
    let x = Term::Slot("x");
    let as_i32 = |v: Term| op("Cast", t, vec![reinterpret(s.with_elem(Elem::I32), v)]);
    let high = op("Shr", s, vec![x.clone(), int(s, 16)]);
    let low = op("And", s, vec![x.clone(), int(s, 0xffff)]);
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("{} to {} by its 16-bit halves", type_name(s), type_name(t)),
        lhs: op("Cast", t, vec![x.clone()]),
        rhs: op(
            "Add",
            t,
            vec![
                op("Mul", t, vec![as_i32(high), float(t, 65536.0)]),
                as_i32(low),
            ],
        ),
        conditions: vec![Condition::TypeOf(x, s)],
    })
}
