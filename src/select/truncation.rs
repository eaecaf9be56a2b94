//! A truncation reads only the low bits of its operand, sound by construction: the low bits of
//! a sum, difference, product or bitwise operation are those of the same operation on the low
//! bits of its operands, and a truncation of a right shift by `c` reads bits `c` up, which a
//! type at least `c` plus the result's width wide holds. So `i8((i32(a_i16) + i32(b_i16) +
//! 128) >> 8)` is `i8((a_i16 + b_i16 + 128) >> 8)` (NEON's `raddhn`) and `u8((u32(a_u8) +
//! u32(b_u8) + 1) >> 1)` is `u8((u16(a_u8) + u16(b_u8) + 1) >> 1)` (`urhadd`).

use super::fallback::Own;
use super::term::{op, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};
use std::collections::BTreeSet;

/// The operators whose low bits depend only on the low bits of their operands.
const LOW_BITS_OPERATORS: [(&str, usize); 8] = [
    ("Add", 2),
    ("Sub", 2),
    ("Mul", 2),
    ("And", 2),
    ("Or", 2),
    ("Xor", 2),
    ("Neg", 1),
    ("Not", 1),
];

/// The rewrites for the truncations of right shifts the input makes, from `w` to `t` (the
/// same lanes, `w` more than twice as wide): the shift by `c` truncated to `t` is the same shift
/// at `m`, twice `t`'s width at `w`'s signedness, which holds bits `c` to `c` plus `t`'s width
/// for `c` up to `t`'s width (the shifted-in bits are never read, so the shift's kind does not
/// matter); and a truncation to such an `m` of an operator of [`LOW_BITS_OPERATORS`] at a wider
/// type of `types` is the operator on its operands truncated to `m`. Only for the input's own
/// shifts and conversions: made for every type they grew every e-graph.
pub fn truncation_rewrites(types: &[VecType], own: Own) -> Vec<Rewrite> {
    let mut out = Vec::new();
    let mut narrowed = BTreeSet::new();
    for &t in types.iter().filter(|t| t.elem.is_int() && own("Cast", **t)) {
        let tb = t.elem.bits();
        for &w in types.iter().filter(|w| w.elem.is_int() && own("Shr", **w)) {
            if w.lanes != t.lanes || w.elem.bits() <= 2 * tb {
                continue;
            }
            let Some(m) = Elem::int(2 * tb, w.elem.is_signed()).map(|e| w.with_elem(e)) else {
                continue;
            };
            out.push(shift_at(t, w, m));
            narrowed.insert(m);
        }
    }
    for &m in &narrowed {
        for &w in types
            .iter()
            .filter(|w| w.elem.is_int() && w.lanes == m.lanes)
        {
            if w.elem.bits() > m.elem.bits() {
                out.extend(LOW_BITS_OPERATORS.map(|(name, arity)| low_bits(m, w, name, arity)));
            }
        }
    }
    out
}

/// `t(x_w >> c)` is `t(m(x_w) >> c)` for `c` up to `t`'s width.
fn shift_at(t: VecType, w: VecType, m: VecType) -> Rewrite {
    let c = Int::Slot("c");
    let amount = |ty| Term::Const {
        ty,
        value: c.clone(),
    };
    let x = Term::Slot("x");
    Rewrite {
        ruleset: Ruleset::Simplify,
        source: format!(
            "{} of {} shifted right reads the bits {} holds",
            type_name(t),
            type_name(w),
            type_name(m)
        ),
        lhs: op("Cast", t, vec![op("Shr", w, vec![x.clone(), amount(w)])]),
        rhs: op(
            "Cast",
            t,
            vec![op("Shr", m, vec![op("Cast", m, vec![x]), amount(m)])],
        ),
        conditions: vec![
            Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(0)),
            Condition::Compare(Cmp::Le, c, Int::Lit(t.elem.bits() as i128)),
        ],
    }
}

/// `m(a op b)` at `w` is `m(a) op m(b)`.
fn low_bits(m: VecType, w: VecType, name: &'static str, arity: usize) -> Rewrite {
    let operands = &[Term::Slot("a"), Term::Slot("b")][..arity];
    Rewrite {
        ruleset: Ruleset::Simplify,
        source: format!(
            "{} of a {name} at {} is the {name} of its operands' low bits",
            type_name(m),
            type_name(w)
        ),
        lhs: op("Cast", m, vec![op(name, w, operands.to_vec())]),
        rhs: op(
            name,
            m,
            operands
                .iter()
                .map(|a| op("Cast", m, vec![a.clone()]))
                .collect(),
        ),
        conditions: vec![],
    }
}
