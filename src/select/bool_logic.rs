//! `and`, `or`, `xor` and `not` of bool lanes: on targets whose comparisons make masks (NEON,
//! AVX2) as the same operations on the masks, and on every target by complementary comparisons
//! and De Morgan's law (which AVX-512's masked and HVX's accumulating comparisons fold into
//! the comparisons themselves). On mask targets too, a mask at one lane width
//! is the mask at another converted (truncated, or sign-extended), so that a select of 16-bit
//! lanes can take the mask of a 32-bit comparison, and a comparison of bytes selecting words is
//! also that of the bytes widened.

use super::fallback::{constant, rewrite, Own};
use super::term::{op, reinterpret, type_name, Condition, Rewrite, Term};
use crate::ir::{Elem, VecType};

/// The rewrites of this module for bool lanes `t` (see the module's doc), operands among
/// `types`; `masks`: the target's comparisons make masks.
pub fn bool_logic(t: VecType, types: &[VecType], masks: bool, own: Own) -> Vec<Rewrite> {
    if t.elem != Elem::Bool {
        return Vec::new();
    }
    let mut out = complementary_comparisons(t, types);
    if masks {
        out.extend(logic_masks(t, types, own));
        out.extend(mask_widths(t, types, own));
    }
    out
}

/// On targets whose comparisons make masks, the mask (at an integer type among `types`) of
/// `and`, `or`, `xor` and `not` of bool lanes `t` is the same operation on the operands' masks
/// (`select(a > 3 && a < b, ...)` on NEON: two `cmgt`, an `and`, a `bsl`), and the bool lanes
/// are where that mask is not zero (`a > 3 && a < b` as a result: two `cmgt`, an `and`).
fn logic_masks(t: VecType, types: &[VecType], own: Own) -> Vec<Rewrite> {
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let mut out = Vec::new();
    for &m in types
        .iter()
        .filter(|m| m.lanes == t.lanes && m.elem.is_int() && m.elem.bits() <= 64)
    {
        let mask = |c: Term| op("Select", m, vec![c, constant(m, -1), constant(m, 0)]);
        for logic in ["And", "Or", "Xor", "Not"] {
            if !own(logic, t) {
                continue;
            }
            let operands = match logic {
                "Not" => vec![a.clone()],
                _ => vec![a.clone(), b.clone()],
            };
            let logic_op = op(logic, t, operands.clone());
            // Bool lanes the input itself makes by logic (its result, or a `select`'s
            // condition) are where their mask is not zero, as a comparison's are.
            out.push(rewrite(
                format!(
                    "{logic} of bool lanes is where its {} mask is not zero",
                    type_name(m)
                ),
                logic_op.clone(),
                Term::Nonzero {
                    ty: t,
                    arg: Box::new(mask(logic_op.clone())),
                },
                vec![],
            ));
            out.push(rewrite(
                format!(
                    "the {} mask of {logic} is {logic} of the masks",
                    type_name(m)
                ),
                mask(logic_op),
                op(logic, m, operands.into_iter().map(mask).collect()),
                vec![],
            ));
        }
    }
    out
}

/// The comparisons, whose masks [`mask_widths`] converts.
const COMPARISONS: [&str; 6] = ["Eq", "Ne", "Lt", "Le", "Gt", "Ge"];

/// On targets whose comparisons make masks, for bool lanes `t` that the input's own comparisons
/// or logic make: a mask is the same bits at the other signedness (NEON's comparisons make
/// unsigned masks, AVX2's signed ones), and where the input selects or converts bools at an
/// integer type `m` among `types`, the mask at `m` of a comparison of lanes of another width
/// is the comparison's own (signed) mask converted: its all-ones lanes stay all ones when
/// truncated, saturated or sign-extended.
fn mask_widths(t: VecType, types: &[VecType], own: Own) -> Vec<Rewrite> {
    let mask = |m: VecType, c: Term| op("Select", m, vec![c, constant(m, -1), constant(m, 0)]);
    let masks: Vec<VecType> = types
        .iter()
        .filter(|m| m.lanes == t.lanes && m.elem.is_int() && m.elem.bits() <= 64)
        .copied()
        .collect();
    let mut out = Vec::new();
    if !COMPARISONS
        .iter()
        .chain(&["And", "Or", "Xor", "Not"])
        .any(|name| own(name, t))
    {
        return out;
    }
    let c = Term::Slot("c");
    for &w in &masks {
        let twin = w.with_elem(w.elem.other_signedness().unwrap_or(w.elem));
        out.push(rewrite(
            format!(
                "the {} mask is the {} mask's bits",
                type_name(w),
                type_name(twin)
            ),
            mask(w, c.clone()),
            reinterpret(w, mask(twin, c.clone())),
            vec![Condition::TypeOf(c.clone(), t)],
        ));
    }
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    // A select of f32 lanes takes the mask of their bits' width (NEON's `bsl`, AVX2's
    // `blendvps`), and comparisons of f32 lanes make masks of that width too.
    let float_selected = |m: VecType| m.elem.bits() == 32 && own("Select", m.with_elem(Elem::F32));
    let selected = masks
        .iter()
        .filter(|&&m| own("Select", m) || own("Cast", m) || float_selected(m));
    let floats = types
        .iter()
        .filter(|s| s.lanes == t.lanes && s.elem == Elem::F32);
    let compared: Vec<VecType> = masks.iter().chain(floats).copied().collect();
    for (&m, &s) in selected.flat_map(|m| compared.iter().map(move |s| (m, s))) {
        let Some(w) = Elem::int(s.elem.bits(), true).map(|e| t.with_elem(e)) else {
            continue;
        };
        let Some(narrow) = Elem::int(m.elem.bits(), true).map(|e| t.with_elem(e)) else {
            continue;
        };
        if w.elem.bits() == m.elem.bits() {
            continue;
        }
        for cmp in COMPARISONS.into_iter().filter(|cmp| own(cmp, t)) {
            let compared = op(cmp, t, vec![x.clone(), y.clone()]);
            let of = format!("of {cmp} at {}", type_name(s));
            out.push(rewrite(
                format!(
                    "the {} mask {of} is its {} mask converted",
                    type_name(m),
                    type_name(w)
                ),
                mask(m, compared.clone()),
                op("Cast", m, vec![mask(w, compared.clone())]),
                vec![Condition::TypeOf(x.clone(), s)],
            ));
            // Widened more than twice (bytes compared, words selected), the comparison is also
            // that of its operands widened to the selected width: an integer's order survives
            // widening (to signed lanes, which hold unsigned ones zero-extended, and which
            // every target compares), and the mask of a comparison of bytes would widen twice.
            let wide = Elem::int(m.elem.bits(), true).map(|e| t.with_elem(e));
            let far = s.elem.is_int() && m.elem.bits() > 2 * s.elem.bits();
            if let Some(wide) = wide.filter(|_| far) {
                let widened = |v: &Term| op("Cast", wide, vec![v.clone()]);
                out.push(rewrite(
                    format!(
                        "{cmp} at {} is {cmp} of the operands widened to {}",
                        type_name(s),
                        type_name(wide)
                    ),
                    compared.clone(),
                    op(cmp, t, vec![widened(&x), widened(&y)]),
                    vec![Condition::TypeOf(x.clone(), s)],
                ));
            }
            // Narrowed, -1 and 0 saturate to themselves (x86's `packssdw` of masks).
            if w.elem.bits() > m.elem.bits() {
                out.push(rewrite(
                    format!(
                        "the {} mask {of} is its {} mask saturated",
                        type_name(m),
                        type_name(w)
                    ),
                    mask(m, compared.clone()),
                    reinterpret(m, op("SatCast", narrow, vec![mask(w, compared)])),
                    vec![Condition::TypeOf(x.clone(), s)],
                ));
            }
        }
    }
    out
}

/// The negation of an integer comparison is the complementary comparison (`!(a == b)` is
/// `a != b`, `!(a < b)` is `a >= b`), and a select by `a || b` is the select by `!a && !b` with
/// its arms swapped (AVX-512 and HVX fold an `and` of comparisons into a masked or accumulating
/// comparison): on every target, whether or not it has a negation or an `or` of bool lanes
/// (AVX-512's `knot` and `kor` cost an instruction the fold saves).
fn complementary_comparisons(t: VecType, types: &[VecType]) -> Vec<Rewrite> {
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let mut out = Vec::new();
    let pairs = [("Eq", "Ne"), ("Lt", "Ge"), ("Le", "Gt")];
    for &s in types
        .iter()
        .filter(|s| s.lanes == t.lanes && s.elem.is_int())
    {
        for (cmp, complement) in pairs.into_iter().flat_map(|(a, b)| [(a, b), (b, a)]) {
            out.push(rewrite(
                format!("not {cmp} of {} is {complement}", type_name(s)),
                op("Not", t, vec![op(cmp, t, vec![x.clone(), y.clone()])]),
                op(complement, t, vec![x.clone(), y.clone()]),
                vec![Condition::TypeOf(x.clone(), s)],
            ));
        }
    }
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let not = |c: &Term| op("Not", t, vec![c.clone()]);
    for &s in types
        .iter()
        .filter(|s| s.lanes == t.lanes && s.elem != Elem::Bool)
    {
        out.push(rewrite(
            format!(
                "a {} select by an or is by the and of the negations, arms swapped",
                type_name(s)
            ),
            op(
                "Select",
                s,
                vec![
                    op("Or", t, vec![a.clone(), b.clone()]),
                    x.clone(),
                    y.clone(),
                ],
            ),
            op(
                "Select",
                s,
                vec![op("And", t, vec![not(&a), not(&b)]), y.clone(), x.clone()],
            ),
            vec![],
        ));
    }
    out
}
