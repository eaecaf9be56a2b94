//! Rewrites sound by construction that move work to the other signedness or to a saturating
//! conversion, where a target has the instruction only there (x86 has left shifts, compares
//! and packs of one signedness only):
//! - a left shift (by a constant in range, or by a per-lane amount) is the one at the other
//!   signedness on the same bits (x86 shifts unsigned lanes, HVX's `vasl` signed ones), and bit
//!   counts are the same at either signedness;
//! - an unsigned comparison is the signed one of its operands with the sign bit flipped;
//! - a truncation is the one to the other signedness of its result on the same bits, and the
//!   one from the other signedness of its source;
//! - a truncation to an unsigned type is a saturating conversion of the value masked to that
//!   type's range (the saturation then changes nothing), from the signed source type;
//! - a saturating conversion of an unsigned value to a type with a smaller maximum is the
//!   truncation of its minimum with that maximum.
//!
//! Each is made only where the program `wants` it (for the input's own operators, and for a
//! conversion only where the target has no instruction for it): made for every type in play
//! they double the e-graph of expressions that never need them.

use super::term::{
    lane_value, op, reinterpret, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term,
};
use crate::ir::{Elem, VecType};

fn constant(ty: VecType, value: Int) -> Term {
    Term::Const { ty, value }
}

/// Whether the target has an instruction for an operator from one element type to another.
pub type Direct<'a> = &'a dyn Fn(&'static str, Elem, Elem) -> bool;

/// Whether a program wants the rewrites of an operator at a type (from a type, for a
/// conversion).
pub type Wanted<'a> = &'a dyn Fn(&'static str, VecType, Option<VecType>) -> bool;

/// The rewrites of one integer type `t`: its left shifts, bit counts and comparisons.
pub fn signedness_rewrites(t: VecType, wanted: Wanted) -> Vec<Rewrite> {
    let mut out = Vec::new();
    let x = Term::Slot("x");
    let bits = t.elem.bits();
    if !t.elem.is_int() || bits > 64 {
        return out;
    }
    let name = type_name(t);
    let other = t.elem.other_signedness();
    if let Some(o) = other.filter(|_| wanted("Shl", t, None)) {
        let o = t.with_elem(o);
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "a {name} left shift by a constant is the {} one",
                type_name(o)
            ),
            lhs: op("Shl", t, vec![x.clone(), constant(t, Int::Slot("c"))]),
            rhs: reinterpret(
                t,
                op(
                    "Shl",
                    o,
                    vec![reinterpret(o, x.clone()), constant(o, Int::Slot("c"))],
                ),
            ),
            conditions: vec![
                Condition::Compare(Cmp::Ge, Int::Slot("c"), Int::Lit(0)),
                Condition::Compare(Cmp::Lt, Int::Slot("c"), Int::Lit(bits as i128)),
            ],
        });
        // By a per-lane amount (read as unsigned at either type): x86's vpsllv.
        let y = Term::Slot("y");
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {name} left shift is the {} one", type_name(o)),
            lhs: op("Shl", t, vec![x.clone(), y.clone()]),
            rhs: reinterpret(
                t,
                op("Shl", o, vec![reinterpret(o, x.clone()), reinterpret(o, y)]),
            ),
            conditions: vec![],
        });
    }
    // Bit counts read only the bits: the same at the other signedness (HVX counts Vh lanes,
    // AVX-512 `lzcnt_epi32` epi32 ones).
    for count in ["Popcount", "Clz"]
        .into_iter()
        .filter(|c| wanted(c, t, None))
    {
        let Some(o) = other.map(|e| t.with_elem(e)) else {
            break;
        };
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{count} of {name} is {count} of {}", type_name(o)),
            lhs: op(count, t, vec![x.clone()]),
            rhs: reinterpret(t, op(count, o, vec![reinterpret(o, x.clone())])),
            conditions: vec![],
        });
    }
    if let Some(s) = t.elem.signed().filter(|_| !t.elem.is_signed()) {
        let s = t.with_elem(s);
        let bools = t.with_elem(Elem::Bool);
        let sign = constant(t, Int::Lit(lane_value(t.elem, 1 << (bits - 1)).into()));
        let flipped = |v: &Term| reinterpret(s, op("Xor", t, vec![v.clone(), sign.clone()]));
        for cmp in ["Lt", "Le", "Gt", "Ge"]
            .into_iter()
            .filter(|c| wanted(c, bools, None))
        {
            let why = format!("with the sign bit flipped, as {}", type_name(s));
            out.push(compare_through(cmp, t, &why, flipped));
        }
    }
    out
}

/// The comparison `cmp` of two `t` lanes is the same comparison of its operands mapped by
/// `through` (`why` says what the mapping is).
pub fn compare_through(
    cmp: &'static str,
    t: VecType,
    why: &str,
    through: impl Fn(&Term) -> Term,
) -> Rewrite {
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let bools = t.with_elem(Elem::Bool);
    Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("{cmp} of {} is {cmp} {why}", type_name(t)),
        lhs: op(cmp, bools, vec![x.clone(), y.clone()]),
        rhs: op(cmp, bools, vec![through(&x), through(&y)]),
        conditions: vec![Condition::TypeOf(x, t)],
    }
}

/// The rewrites of a conversion from `s` to `t` (same lanes): a truncation at the other
/// signedness of its result or source, truncation through a saturating conversion, and
/// saturation of unsigned values through a minimum.
pub fn conversion_rewrites(s: VecType, t: VecType, wanted: Wanted, direct: Direct) -> Vec<Rewrite> {
    let mut out = Vec::new();
    if !s.elem.is_int() || !t.elem.is_int() || s.lanes != t.lanes || s.elem.bits() > 64 {
        return out;
    }
    let x = Term::Slot("x");
    let (sn, tn) = (type_name(s), type_name(t));
    let t_max = t.elem.max_value();
    let other = |v: VecType| v.elem.other_signedness().map(|e| v.with_elem(e));
    let parts = s.elem.bits() / t.elem.bits();
    if s.lanes == 1 && parts > 1 && wanted("Cast", t, Some(s)) {
        // A truncation of one lane is its first part (lanes little-endian), a view: the byte
        // sum of `reduce_add(16, x_u8)`, the low bits of `psadbw`'s u64 sums, needs no
        // instruction (AVX2 moved it with `palignr`, or had no sequence at all).
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{sn} to {tn} at one lane is its first part"),
            lhs: op("Cast", t, vec![x.clone()]),
            rhs: Term::Lanes {
                ty: t,
                offset: 0,
                arg: Box::new(reinterpret(t.with_lanes(parts), x.clone())),
            },
            conditions: vec![Condition::TypeOf(x.clone(), s)],
        });
    }
    if s.elem.bits() > t.elem.bits() && wanted("Cast", t, Some(s)) {
        // The bits of a truncation depend on neither signedness: x86 narrows at one signedness
        // (vpmovqd is i64 to i32). (Widenings at the other signedness are `sound.rs`'s twins.)
        // Only towards a truncation the target has (AVX2 has none: made there they only grow
        // the e-graph, its corpus selected 40% slower).
        let has = |from: Elem, to: Elem| direct("Cast", from, to);
        let s_other = other(s).map(|o| o.elem).unwrap_or(s.elem);
        if let Some(t_other) = other(t).filter(|o| has(s.elem, o.elem) || has(s_other, o.elem)) {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "{sn} to {tn} is the conversion to {} on the same bits",
                    type_name(t_other)
                ),
                lhs: op("Cast", t, vec![x.clone()]),
                rhs: reinterpret(t, op("Cast", t_other, vec![x.clone()])),
                conditions: vec![Condition::TypeOf(x.clone(), s)],
            });
        }
        let t_other = other(t).map(|o| o.elem).unwrap_or(t.elem);
        if let Some(s_other) = other(s).filter(|o| has(o.elem, t.elem) || has(o.elem, t_other)) {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!("{sn} to {tn} truncates the bits of {}", type_name(s_other)),
                lhs: op("Cast", t, vec![x.clone()]),
                rhs: op("Cast", t, vec![reinterpret(s_other, x.clone())]),
                conditions: vec![Condition::TypeOf(x.clone(), s)],
            });
        }
    }
    if s.elem.bits() > t.elem.bits() && !t.elem.is_signed() && wanted("Cast", t, Some(s)) {
        let Some(signed) = Elem::int(s.elem.bits(), true).map(|e| s.with_elem(e)) else {
            return out;
        };
        let masked = op("And", s, vec![x.clone(), constant(s, Int::Lit(t_max))]);
        let masked = if s.elem.is_signed() {
            masked
        } else {
            reinterpret(signed, masked)
        };
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{sn} to {tn} is the saturating conversion of its low bits"),
            lhs: op("Cast", t, vec![x.clone()]),
            rhs: op("SatCast", t, vec![masked]),
            conditions: vec![Condition::TypeOf(x.clone(), s)],
        });
    }
    if !s.elem.is_signed() && t_max < s.elem.max_value() && wanted("SatCast", t, Some(s)) {
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{sn} to {tn} with saturation is the truncation of a minimum"),
            lhs: op("SatCast", t, vec![x.clone()]),
            rhs: op(
                "Cast",
                t,
                vec![op("Min", s, vec![x.clone(), constant(s, Int::Lit(t_max))])],
            ),
            conditions: vec![Condition::TypeOf(x.clone(), s)],
        });
    }
    out
}
