//! Selects and bool logic on a target whose predicates hold a flag per byte (HVX): a `vcmp` of
//! halfwords or words sets the flags of every byte of a lane, so selects and predicate logic
//! on wider lanes are the byte-wise ones on those flags ([`Term::Spread`]).

use super::term::{op, reinterpret, type_name, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// A select of lanes wider than a byte, on a target whose predicates hold a flag per byte: the
/// select of the same bytes by the predicate read at bytes (HVX's `vmux` after a `vcmp` of
/// halfwords or words, whose flags cover every byte of a lane).
pub fn select_of_bytes(t: VecType) -> Option<Rewrite> {
    let bits = t.elem.bits();
    if !t.elem.is_int() || bits <= 8 {
        return None;
    }
    let bytes = VecType::new(t.bits() / 8, Elem::U8);
    let (c, x, y) = (Term::Slot("c"), Term::Slot("x"), Term::Slot("y"));
    let spread = Term::Spread {
        ty: bytes.with_elem(Elem::Bool),
        arg: Box::new(c.clone()),
    };
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a {} select is one of its bytes by the predicate's byte flags",
            type_name(t)
        ),
        lhs: op("Select", t, vec![c, x.clone(), y.clone()]),
        rhs: reinterpret(
            t,
            op(
                "Select",
                bytes,
                vec![spread, reinterpret(bytes, x), reinterpret(bytes, y)],
            ),
        ),
        conditions: vec![],
    })
}

/// On a target whose predicates hold a flag per byte, the byte flags of `and`, `or`, `xor` and
/// `not` of bool lanes `t` (wider than a byte) are the same operation on the operands' byte
/// flags (HVX's predicate logic after a `vcmp` of halfwords or words).
pub fn logic_of_bytes(t: VecType) -> Vec<Rewrite> {
    if t.elem != Elem::Bool {
        return Vec::new();
    }
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let mut out = Vec::new();
    for bytes in [2, 4, 8].map(|per_lane| t.with_lanes(t.lanes * per_lane)) {
        let spread = |c: &Term| Term::Spread {
            ty: bytes,
            arg: Box::new(c.clone()),
        };
        for logic in ["And", "Or", "Xor", "Not"] {
            let operands = match logic {
                "Not" => vec![a.clone()],
                _ => vec![a.clone(), b.clone()],
            };
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "the {} byte flags of {logic} at {} are {logic} of the byte flags",
                    type_name(bytes),
                    type_name(t)
                ),
                lhs: spread(&op(logic, t, operands.clone())),
                rhs: op(logic, bytes, operands.iter().map(spread).collect()),
                conditions: vec![],
            });
        }
    }
    out
}
