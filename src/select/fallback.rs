//! Operators a target has no instruction for at a type, by others it may have, sound by
//! construction:
//! - `not x` is `x ^ -1`, `-x` is `0 - x`;
//! - an unsigned `abs` is its operand, a signed one `(x ^ s) - s` with `s = x >> (bits - 1)`,
//!   or the select of `-x` where `x < 0`;
//! - `min` and `max` are selects by a comparison;
//! - a saturating widening, or narrowing of 64-bit lanes to 32 bits (of one lane only where
//!   the target has the minimum), is the plain one of its operand clamped to the range both
//!   types share (`u64_sat(x_i8)` is `u64(max(x_i8, 0))`);
//! - a `reduce-add` by one is its operand;
//! - a `reduce-add` is the one at the other signedness on the same bits (sums wrap alike), and
//!   a zero extension to a signed type is the one to the unsigned type of its width,
//!   reinterpreted (`i64(absd(a_u8, b_u8))` summed by eight is x86's `psadbw`);
//! - `a != b`, `a <= b` and `a >= b` are the negations of `a == b`, `a > b` and `a < b`, and a
//!   select by a negation is the select by the condition with the arms swapped;
//! - `a >= b` is `max(a, b) == a` and `a <= b` is `min(a, b) == a` (one instruction where an
//!   unsigned comparison takes three);
//! - on targets whose comparisons make masks rather than predicates (AVX2, NEON), a comparison's
//!   bool lanes are where its mask of all-ones lanes ([`Term::Nonzero`]) is not zero, and the
//!   mask of a negation is the negated mask.
//!
//! Each is made only where the program `lacks` the operator: it makes it and the target has no
//! instruction computing it from its operands alone.

use super::signedness::Direct;
use super::term::{
    lane_value, op, reinterpret, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term,
};
use crate::ir::{Elem, VecType};

/// Whether a program makes an operator at a type (from a type, for a conversion) that the
/// target has no instruction for.
pub type Lacks<'a> = &'a dyn Fn(&'static str, VecType, Option<VecType>) -> bool;

/// Whether the input itself has an operator at a type.
pub type Own<'a> = &'a dyn Fn(&'static str, VecType) -> bool;

/// A lane value as the constant of type `ty`.
pub fn constant(ty: VecType, value: i128) -> Term {
    Term::constant(ty, lane_value(ty.elem, (value as u128) & ty.elem.mask()))
}

pub fn rewrite(source: String, lhs: Term, rhs: Term, conditions: Vec<Condition>) -> Rewrite {
    Rewrite {
        ruleset: Ruleset::Lower,
        source,
        lhs,
        rhs,
        conditions,
    }
}

/// The rewrites of this module whose left side has type `t`, its operands among `types`;
/// `masks`: the target's comparisons make masks (no instruction has bool lanes). `own` says
/// which operators the input itself has: `not`, `neg` and `abs` are rewritten only there (the
/// negations bitwise selects make are and-nots already), and only the input's comparisons'
/// bool lanes are read from masks (those the rewrites make are selects' conditions).
pub fn fallbacks(
    t: VecType,
    types: &[VecType],
    masks: bool,
    own: Own,
    lacks: Lacks,
    direct: Direct,
) -> Vec<Rewrite> {
    let mut out = Vec::new();
    if t.elem == Elem::F32 {
        out.extend(float_arithmetic(t, own, lacks));
    }
    if t.elem.is_int() && t.elem.bits() <= 64 {
        out.extend(arithmetic(t, own, lacks));
        for &s in types {
            out.extend(saturating_conversion(s, t, own, lacks, direct));
        }
    }
    out.extend(
        types
            .iter()
            .filter(|s| s.lanes == t.lanes)
            .flat_map(|&s| reduce_by_one(s, t)),
    );
    for &s in types {
        out.extend(as_other_signedness(s, t, own, lacks));
        out.extend(zero_extension_as_sign_extension(s, t));
    }
    if t.elem.is_int() && t.elem.bits() <= 64 {
        out.extend(bool_conversions(t, masks, own));
    }
    if masks && t.elem.is_int() && t.elem.bits() <= 64 {
        out.extend(mask_selects(t, lacks));
    }
    if t.elem == Elem::Bool {
        out.extend(negated_comparisons(t, types, lacks));
        if masks {
            out.extend(comparison_masks(t, types, own));
        }
    }
    out
}

/// f32 negation and absolute value where the target has no instruction (x86, HVX): the bits
/// with the sign flipped and cleared (`xorps`/`andps` with a constant), exactly IEEE's
/// (NaN, infinities and signed zeros included); z3 reads them back as `-x` and `|x|`
/// (`float_bits.rs`).
fn float_arithmetic(t: VecType, own: Own, lacks: Lacks) -> Vec<Rewrite> {
    let x = Term::Slot("x");
    let name = type_name(t);
    let bits = t.with_elem(Elem::U32);
    let on_bits = |logic: &'static str, mask: i128| {
        let operands = vec![reinterpret(bits, x.clone()), constant(bits, mask)];
        reinterpret(t, op(logic, bits, operands))
    };
    let mut out = Vec::new();
    if own("Neg", t) && lacks("Neg", t, None) {
        out.push(rewrite(
            format!("negation at {name} flips the sign bit"),
            op("Neg", t, vec![x.clone()]),
            on_bits("Xor", 0x8000_0000),
            vec![],
        ));
    }
    if own("Abs", t) && lacks("Abs", t, None) {
        out.push(rewrite(
            format!("abs at {name} clears the sign bit"),
            op("Abs", t, vec![x.clone()]),
            on_bits("And", 0x7fff_ffff),
            vec![],
        ));
    }
    out
}

/// `not`, `neg`, `abs`, `min` and `max` at integer type `t`.
fn arithmetic(t: VecType, own: Own, lacks: Lacks) -> Vec<Rewrite> {
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let name = type_name(t);
    let bools = t.with_elem(Elem::Bool);
    let zero = constant(t, 0);
    let mut out = Vec::new();
    let own_lacks = |name| own(name, t) && lacks(name, t, None);
    if own_lacks("Not") {
        out.push(rewrite(
            format!("not at {name} is xor with all ones"),
            op("Not", t, vec![x.clone()]),
            op("Xor", t, vec![x.clone(), constant(t, -1)]),
            vec![],
        ));
    }
    if own_lacks("Neg") {
        out.push(rewrite(
            format!("negation at {name} is a subtraction from zero"),
            op("Neg", t, vec![x.clone()]),
            op("Sub", t, vec![zero.clone(), x.clone()]),
            vec![],
        ));
    }
    if own_lacks("Abs") {
        let abs = op("Abs", t, vec![x.clone()]);
        if !t.elem.is_signed() {
            out.push(rewrite(
                format!("abs at {name} is its operand"),
                abs,
                x.clone(),
                vec![],
            ));
        } else {
            let sign = op(
                "Shr",
                t,
                vec![x.clone(), constant(t, t.elem.bits() as i128 - 1)],
            );
            out.push(rewrite(
                format!("abs at {name} flips by the sign"),
                abs.clone(),
                op(
                    "Sub",
                    t,
                    vec![op("Xor", t, vec![x.clone(), sign.clone()]), sign],
                ),
                vec![],
            ));
            out.push(rewrite(
                format!("abs at {name} is the negation where negative"),
                abs,
                op(
                    "Select",
                    t,
                    vec![
                        op("Lt", bools, vec![x.clone(), zero]),
                        op("Neg", t, vec![x.clone()]),
                        x.clone(),
                    ],
                ),
                vec![],
            ));
        }
    }
    for (extreme, cmp) in [("Min", "Lt"), ("Max", "Gt")] {
        if lacks(extreme, t, None) {
            out.push(rewrite(
                format!("{extreme} at {name} is a select by {cmp}"),
                op(extreme, t, vec![x.clone(), y.clone()]),
                op(
                    "Select",
                    t,
                    vec![
                        op(cmp, bools, vec![x.clone(), y.clone()]),
                        x.clone(),
                        y.clone(),
                    ],
                ),
                vec![],
            ));
        }
    }
    out
}

/// A saturating conversion from `s` to `t` as the plain one of the operand clamped to the range
/// the two types share: a widening, or the input's own narrowing of 64-bit lanes to 32-bit
/// ones, which x86 before AVX-512 has no instruction for (made for every one the e-graph
/// makes, it grew AVX2's e-graphs: `reduce_add(4, i32(x_u8) * i32(y_u8))` lost its `pmaddwd`
/// and `(cast i32 a_i64)` took a needless `vpand`; made where the input narrows to fewer bits
/// too, `u8_sat(a_u64)` at one lane grew past the budget). Other narrowings go through their
/// midpoints and the saturating narrowings every target has from 16 and 32 bits (packs,
/// `sqxtn`, `vsat`).
///
/// Where no instruction truncates 64-bit lanes to 32 bits at any signedness (AVX2), the plain
/// narrowing is written as the even words of the clamped lanes' bits (lanes little-endian),
/// which only moves lanes: left unlowered, it costs as the moves it is and the target's moves
/// are searched for it ([`super::refine`]), where a conversion left so costs as a lane-by-lane
/// operator, as dear as the saturating one, whose clamp would then lose to it (`i32_sat(x_i64)`
/// on AVX2: `pcmpgtq`s and blends, then `vpshufd` and `vpermq`). Writing every such truncation
/// so, not only this one's, made the AVX2 corpus take half as long again in batch (its chunks
/// past their budget four times as often).
fn saturating_conversion(
    s: VecType,
    t: VecType,
    own: Own,
    lacks: Lacks,
    direct: Direct,
) -> Option<Rewrite> {
    let (sb, tb) = (s.elem.bits(), t.elem.bits());
    // At one lane only where the target has the clamp's minimum: emulated by 64-bit
    // comparisons and blends (AVX2) it costs more than the lane's scalar saturation.
    let clamps = t.lanes > 1 || direct("Min", s.elem, s.elem);
    let narrowing_64 = sb == 64 && tb == 32 && clamps && own("SatCast", t);
    if !s.elem.is_int()
        || !t.elem.is_int()
        || sb > tb && !narrowing_64
        || s.lanes != t.lanes
        || !lacks("SatCast", t, Some(s))
    {
        return None;
    }
    let x = Term::Slot("x");
    let mut clamped = x.clone();
    if t.elem.min_value() > s.elem.min_value() {
        clamped = op("Max", s, vec![clamped, constant(s, t.elem.min_value())]);
    }
    if t.elem.max_value() < s.elem.max_value() {
        clamped = op("Min", s, vec![clamped, constant(s, t.elem.max_value())]);
    }
    // The bits of a truncation do not depend on signedness: one at any is the target's.
    let signedness = |e: Elem| [Elem::int(e.bits(), true), Elem::int(e.bits(), false)];
    let truncates = signedness(s.elem).into_iter().flatten().any(|a| {
        signedness(t.elem)
            .into_iter()
            .flatten()
            .any(|b| direct("Cast", a, b))
    });
    let narrowed = if narrowing_64 && !truncates {
        Term::Op {
            name: "Slice",
            ty: t,
            params: vec![0, 2],
            args: vec![reinterpret(t.with_lanes(2 * t.lanes), clamped)],
        }
    } else {
        op("Cast", t, vec![clamped])
    };
    Some(rewrite(
        format!(
            "{} to {} saturating is the cast of the value clamped to the range both hold",
            type_name(s),
            type_name(t)
        ),
        op("SatCast", t, vec![x.clone()]),
        narrowed,
        vec![Condition::TypeOf(x, s)],
    ))
}

/// A sum of groups of one lane, from `s` to `t` (the same lane count), is the operand.
fn reduce_by_one(s: VecType, t: VecType) -> Option<Rewrite> {
    (s == t && t.elem != Elem::Bool).then(|| {
        rewrite(
            format!("reduce-add by one at {} is its operand", type_name(t)),
            op("ReduceAdd", t, vec![Term::Slot("x")]),
            Term::Slot("x"),
            vec![Condition::TypeOf(Term::Slot("x"), s)],
        )
    })
}

/// The input's sum into `t` from `s` as the one at the other signedness, or zero extension
/// from unsigned `s` to signed `t` as the unsigned one, reinterpreted.
fn as_other_signedness(s: VecType, t: VecType, own: Own, lacks: Lacks) -> Option<Rewrite> {
    let x = Term::Slot("x");
    if !t.elem.is_int() || t.elem.bits() > 64 {
        return None;
    }
    let sum = s.elem == t.elem && s.lanes > t.lanes && s.lanes.is_multiple_of(t.lanes);
    // An unsigned sum is the signed one on the same bits (x86's `phaddw`, `pmaddubsw`).
    let (su, tu) = match (t.elem.is_signed(), sum) {
        (true, _) => (s.elem.unsigned()?, t.elem.unsigned()?),
        (false, true) => (s.elem.other_signedness()?, t.elem.other_signedness()?),
        (false, false) => return None,
    };
    let zero_extension = s.lanes == t.lanes
        && s.elem.is_int()
        && !s.elem.is_signed()
        && s.elem.bits() < t.elem.bits();
    let (name, arg) = if sum {
        ("ReduceAdd", reinterpret(s.with_elem(su), x.clone()))
    } else if zero_extension {
        ("Cast", x.clone())
    } else {
        return None;
    };
    ((sum || own(name, t)) && lacks(name, t, Some(s))).then(|| {
        rewrite(
            format!(
                "{name} into {} from {} as the {} one",
                type_name(t),
                type_name(s),
                if t.elem.is_signed() {
                    "unsigned"
                } else {
                    "signed"
                }
            ),
            op(name, t, vec![x.clone()]),
            reinterpret(t, op(name, t.with_elem(tu), vec![arg])),
            vec![Condition::TypeOf(x, s)],
        )
    })
}

/// A zero extension from unsigned `s` to signed `t` of twice the bits, of a value the signed
/// type of `s`'s width holds (the bounds), is the sign extension of the same bits: x86's
/// `pmaddwd` of ones sums pairs of 16-bit lanes below 2^15 (`reduce_add(4, i32(x_u8))` as
/// `pmaddubsw` and `pmaddwd`).
fn zero_extension_as_sign_extension(s: VecType, t: VecType) -> Option<Rewrite> {
    let signed = s.elem.other_signedness()?;
    if s.lanes != t.lanes
        || !s.elem.is_int()
        || s.elem.is_signed()
        || !t.elem.is_signed()
        || t.elem.bits() != 2 * s.elem.bits()
        || t.elem.bits() > 64
    {
        return None;
    }
    let x = Term::Wildcard("x".into());
    Some(rewrite(
        format!(
            "{} of {} below 2^{} as the sign extension",
            type_name(t),
            type_name(s),
            s.elem.bits() - 1
        ),
        op("Cast", t, vec![x.clone()]),
        op("Cast", t, vec![reinterpret(s.with_elem(signed), x.clone())]),
        vec![
            Condition::TypeOf(x.clone(), s),
            Condition::Compare(Cmp::Le, Int::Hi("x".into()), Int::Lit(signed.max_value())),
        ],
    ))
}

/// `!=`, `<=` and `>=` of integers into bool lanes `t` as negations, and selects by
/// negations.
fn negated_comparisons(t: VecType, types: &[VecType], lacks: Lacks) -> Vec<Rewrite> {
    let (x, y, c) = (Term::Slot("x"), Term::Slot("y"), Term::Slot("c"));
    let mut out = Vec::new();
    let operands = types
        .iter()
        .filter(|s| s.lanes == t.lanes && s.elem.is_int());
    for (s, (cmp, negated, swap)) in operands.flat_map(|&s| {
        [("Ne", "Eq", false), ("Le", "Gt", false), ("Ge", "Gt", true)].map(|c| (s, c))
    }) {
        if !lacks(cmp, t, None) {
            continue;
        }
        let args = if swap {
            vec![y.clone(), x.clone()]
        } else {
            vec![x.clone(), y.clone()]
        };
        out.push(rewrite(
            format!("{cmp} of {} is not {negated}", type_name(s)),
            op(cmp, t, vec![x.clone(), y.clone()]),
            op("Not", t, vec![op(negated, t, args)]),
            vec![Condition::TypeOf(x.clone(), s)],
        ));
        let extreme = match cmp {
            "Le" => "Min",
            "Ge" => "Max",
            _ => continue,
        };
        out.push(rewrite(
            format!("{cmp} of {} is {extreme} equal to the first", type_name(s)),
            op(cmp, t, vec![x.clone(), y.clone()]),
            op(
                "Eq",
                t,
                vec![op(extreme, s, vec![x.clone(), y.clone()]), x.clone()],
            ),
            vec![Condition::TypeOf(x.clone(), s)],
        ));
    }
    for &s in types
        .iter()
        .filter(|s| s.lanes == t.lanes && s.elem != Elem::Bool)
    {
        if !lacks("Not", t, None) {
            break;
        }
        out.push(rewrite(
            format!("a {} select by a negation swaps its arms", type_name(s)),
            op(
                "Select",
                s,
                vec![op("Not", t, vec![c.clone()]), x.clone(), y.clone()],
            ),
            op("Select", s, vec![c.clone(), y.clone(), x.clone()]),
            vec![],
        ));
    }
    out
}

/// The comparisons into bool lanes `t` of operands of a type among `types`: where their
/// mask of all-ones lanes, at either signedness of the operands' width, is not zero.
fn comparison_masks(t: VecType, types: &[VecType], own: Own) -> Vec<Rewrite> {
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let mut out = Vec::new();
    for &s in types.iter().filter(|s| {
        s.lanes == t.lanes && (s.elem == Elem::F32 || s.elem.is_int() && s.elem.bits() <= 64)
    }) {
        for cmp in ["Eq", "Ne", "Lt", "Le", "Gt", "Ge"] {
            if !own(cmp, t) {
                continue;
            }
            for signed in [true, false] {
                let Some(m) = Elem::int(s.elem.bits(), signed).map(|e| t.with_elem(e)) else {
                    continue;
                };
                let compared = op(cmp, t, vec![x.clone(), y.clone()]);
                out.push(rewrite(
                    format!(
                        "{cmp} of {} is where its {} mask is not zero",
                        type_name(s),
                        type_name(m)
                    ),
                    compared.clone(),
                    Term::Nonzero {
                        ty: t,
                        arg: Box::new(op(
                            "Select",
                            m,
                            vec![compared, constant(m, -1), constant(m, 0)],
                        )),
                    },
                    vec![Condition::TypeOf(x.clone(), s)],
                ));
            }
        }
    }
    out
}

/// A bool converted to integer type `t` is the select of 1 and 0; on targets whose comparisons
/// make masks of all-ones lanes, that select is the mask and 1.
fn bool_conversions(t: VecType, masks: bool, own: Own) -> Vec<Rewrite> {
    let c = Term::Slot("c");
    let name = type_name(t);
    let one_or_zero = op("Select", t, vec![c.clone(), constant(t, 1), constant(t, 0)]);
    let mut out = Vec::new();
    if own("Cast", t) {
        out.push(rewrite(
            format!("a bool converted to {name} is the select of 1 and 0"),
            op("Cast", t, vec![c.clone()]),
            one_or_zero.clone(),
            vec![Condition::TypeOf(c.clone(), t.with_elem(Elem::Bool))],
        ));
    }
    if masks {
        let mask = op("Select", t, vec![c, constant(t, -1), constant(t, 0)]);
        out.push(rewrite(
            format!("a {name} select of 1 and 0 is the all-ones mask and 1"),
            one_or_zero,
            op("And", t, vec![mask, constant(t, 1)]),
            vec![],
        ));
    }
    out
}

/// On targets whose comparisons make masks, a select at integer type `t` of all-zeros lanes
/// where its condition holds and all-ones lanes elsewhere is the mask with every bit flipped.
fn mask_selects(t: VecType, lacks: Lacks) -> Option<Rewrite> {
    if !lacks("Select", t, None) {
        return None;
    }
    let c = Term::Slot("c");
    let mask = op(
        "Select",
        t,
        vec![c.clone(), constant(t, -1), constant(t, 0)],
    );
    Some(rewrite(
        format!(
            "a {} select of zeros where true and ones elsewhere is the negated mask",
            type_name(t)
        ),
        op("Select", t, vec![c, constant(t, 0), constant(t, -1)]),
        op("Xor", t, vec![mask, constant(t, -1)]),
        vec![],
    ))
}
