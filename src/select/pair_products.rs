//! Sums of two products of widened values as one multiply-and-add of pairs, rewritten sound by
//! construction: x86's `pmaddwd` and `pmaddubsw` multiply adjacent pairs of lanes and add each
//! pair's products, so a sum of two products is one of the factors interleaved; and a product
//! computed at a type it cannot overflow, then widened, is the product of the values widened
//! (Halide writes `pmaddubsw`'s sum as `i32(i16(x_u8) * i16(y_i8)) + ...`).

use super::lowering::Lowering;
use super::term::{op, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Op, VecType};
use std::collections::BTreeSet;

/// The element types at which a lowering sums adjacent pairs of products (under a saturating
/// narrowing or not: x86's `pmaddwd` and `pmaddubsw`, HVX's `vdmpy`): sums of two products
/// are interleaved into pairs only there.
pub fn pair_product_sum_types(lowerings: &[Lowering]) -> BTreeSet<Elem> {
    lowerings
        .iter()
        .filter_map(|l| {
            let sum = match &l.pattern.op {
                Op::SatCast(_) => l.pattern.args.first()?,
                _ => &l.pattern,
            };
            let product = sum.args.first()?;
            (sum.op == Op::ReduceAdd(2) && product.op == Op::Mul).then_some(sum.ty.elem)
        })
        .collect()
}

/// The rewrites of this module whose left side has type `t` (a sum at `t`'s element type, of
/// [`pair_product_sum_types`]), their operands among `types`; an interleave into a whole
/// register (`register_bits`) by halves.
pub fn pair_products(t: VecType, types: &[VecType], register_bits: u32) -> Vec<Rewrite> {
    let mut out: Vec<Rewrite> = Vec::new();
    for &a in types {
        for &b in types {
            // Each product at `t`, or at a type between whose products fit.
            let fitting = types.iter().copied().filter(|&m| products_fit(t, m, a, b));
            for m in [None].into_iter().chain(fitting.map(Some)) {
                out.extend(sum_of_products_as_pair_sums(t, m, a, b, register_bits));
            }
            for &m in types {
                out.extend(widened_product_of_narrow_values(t, m, a, b));
            }
        }
    }
    for &i in types.iter().filter(|i| i.bits() == register_bits) {
        out.extend(interleave_by_halves(i));
    }
    out
}

/// A sum of two products of values widened to `t` (lanes at least twice as wide; the left
/// factors of type `a`, the right ones of `b`; each product at `t`, or at `m` and widened to
/// `t`) as the sums of adjacent pairs of the products of the factors interleaved:
/// `i32(x) * i32(y) + i32(z) * i32(w)` of i16 lanes is `pmaddwd` of `interleave(x, z)` and
/// `interleave(y, w)`. An interleave into a whole register is by halves at once
/// ([`interleave_by_halves`]): the selection settles before a longer chain of rewrites ends.
fn sum_of_products_as_pair_sums(
    t: VecType,
    m: Option<VecType>,
    a: VecType,
    b: VecType,
    register_bits: u32,
) -> Option<Rewrite> {
    let widens =
        |n: VecType| n.lanes == t.lanes && n.elem.is_int() && t.elem.bits() >= 2 * n.elem.bits();
    if !t.elem.is_int() || !widens(a) || !widens(b) {
        return None;
    }
    let t2 = t.with_lanes(2 * t.lanes);
    let product = |x, y| {
        let at = |ty: VecType| {
            let widened = |s| op("Cast", ty, vec![Term::Slot(s)]);
            op("Mul", ty, vec![widened(x), widened(y)])
        };
        match m {
            Some(m) => op("Cast", t, vec![at(m)]),
            None => at(t),
        }
    };
    let interleaved = |n: VecType, x, y| {
        let pairs = n.with_lanes(2 * n.lanes);
        let whole = || op("Interleave", pairs, vec![Term::Slot(x), Term::Slot(y)]);
        let pairs = match pairs.bits() == register_bits {
            true => by_halves(pairs, x, y).unwrap_or_else(whole),
            false => whole(),
        };
        op("Cast", t2, vec![pairs])
    };
    let through = m.map_or(String::new(), |m| format!(" through {}", type_name(m)));
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a sum of products of {} by {} widened to {}{through} as pairwise sums of \
             interleaved products",
            type_name(a),
            type_name(b),
            type_name(t)
        ),
        lhs: op("Add", t, vec![product("a", "b"), product("c", "d")]),
        rhs: op(
            "ReduceAdd",
            t,
            vec![op(
                "Mul",
                t2,
                vec![interleaved(a, "a", "c"), interleaved(b, "b", "d")],
            )],
        ),
        conditions: vec![
            Condition::TypeOf(Term::Slot("a"), a),
            Condition::TypeOf(Term::Slot("c"), a),
            Condition::TypeOf(Term::Slot("b"), b),
            Condition::TypeOf(Term::Slot("d"), b),
        ],
    })
}

/// Whether products of an `a` and a `b`, both narrower than `m`, fit `m`, itself narrower than
/// `t` (all of the same lanes).
fn products_fit(t: VecType, m: VecType, a: VecType, b: VecType) -> bool {
    let narrower = |n: VecType, w: VecType| {
        n.lanes == w.lanes && n.elem.is_int() && n.elem.bits() < w.elem.bits()
    };
    if !t.elem.is_int() || !narrower(m, t) || !narrower(a, m) || !narrower(b, m) {
        return false;
    }
    let corners = [a.elem.min_value(), a.elem.max_value()]
        .into_iter()
        .flat_map(|x| [b.elem.min_value(), b.elem.max_value()].map(|y| x * y));
    let fits = |v: i128| v >= m.elem.min_value() && v <= m.elem.max_value();
    corners.into_iter().all(fits)
}

/// A product at `m` of values of types `a` and `b` widened to `m`, itself widened to `t`, is
/// the product at `t` of the values widened to `t` where no product of an `a` and a `b` passes
/// `m`'s range: `i32(i16(x_u8) * i16(y_i8))` is `i32(x_u8) * i32(y_i8)`.
fn widened_product_of_narrow_values(
    t: VecType,
    m: VecType,
    a: VecType,
    b: VecType,
) -> Option<Rewrite> {
    if !products_fit(t, m, a, b) {
        return None;
    }
    let at = |ty: VecType| {
        let widened = |s| op("Cast", ty, vec![Term::Slot(s)]);
        op("Mul", ty, vec![widened("a"), widened("b")])
    };
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a product of {} by {} at {} widened to {} is the product at {}",
            type_name(a),
            type_name(b),
            type_name(m),
            type_name(t),
            type_name(t)
        ),
        lhs: op("Cast", t, vec![at(m)]),
        rhs: at(t),
        conditions: vec![
            Condition::TypeOf(Term::Slot("a"), a),
            Condition::TypeOf(Term::Slot("b"), b),
        ],
    })
}

/// An interleave of two values into a whole register (`t`) as the interleaves of their low
/// halves and of their high halves, concatenated: x86's `punpckl`/`punpckh` interleave within
/// 128-bit blocks, so two `xmm` interleave into a `ymm` by both and an insert.
fn interleave_by_halves(t: VecType) -> Option<Rewrite> {
    let half = t.with_lanes(t.lanes / 2);
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("an interleave into {} by halves", type_name(t)),
        lhs: op("Interleave", t, vec![Term::Slot("x"), Term::Slot("y")]),
        rhs: by_halves(t, "x", "y")?,
        conditions: vec![Condition::TypeOf(Term::Slot("x"), half)],
    })
}

/// The interleave of `x` and `y` into `t` as the interleaves of their low halves and of their
/// high halves, concatenated.
fn by_halves(t: VecType, x: &'static str, y: &'static str) -> Option<Term> {
    if !t.lanes.is_multiple_of(4) {
        return None;
    }
    let (half, quarter) = (t.with_lanes(t.lanes / 2), t.with_lanes(t.lanes / 4));
    let part = |slot, start: i64| Term::Op {
        name: "Slice",
        ty: quarter,
        params: vec![start, 1],
        args: vec![Term::Slot(slot)],
    };
    let interleaved = |start| op("Interleave", half, vec![part(x, start), part(y, start)]);
    Some(op(
        "Concat",
        t,
        vec![interleaved(0), interleaved(quarter.lanes as i64)],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A product of bytes widened to 16 bits fits there unless both are unsigned (255 * 255
    /// passes i16's maximum), and then is the product at 32 bits only where it fits.
    #[test]
    fn a_widened_product_is_taken_wider_only_where_it_cannot_overflow() {
        let at = |e: Elem| VecType::new(8, e);
        let fits = |a, b| {
            widened_product_of_narrow_values(at(Elem::I32), at(Elem::I16), at(a), at(b)).is_some()
        };
        assert!(fits(Elem::U8, Elem::I8));
        assert!(fits(Elem::I8, Elem::I8));
        assert!(!fits(Elem::U8, Elem::U8));
        assert!(!fits(Elem::I16, Elem::I8));
    }
}
