//! Operators that reinterpret or move whole lanes, rewritten into the ones targets have, sound
//! by construction (lanes are little-endian on every target): a bitcast is a reinterpretation,
//! by halves where it is of a concatenation;
//! a broadcast of a vector is its concatenation with itself; the even (odd) lanes of a vector
//! are the low (high) halves of its lanes read at twice the width; a lane-wise operator on the
//! low lanes of registers is the low lanes of it on the registers; sums of groups of lanes as
//! `sums.rs` rewrites them.

use super::sums::{saturated_pairwise_sum, sums};
use super::term::{op, reinterpret, type_name, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// The rewrites of this module whose left side has type `t`, its operands among `types`.
pub fn reshaping(
    t: VecType,
    types: &[VecType],
    register_bits: u32,
    lane_layout: bool,
) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for &s in types {
        out.extend(bitcast(t, s));
        out.extend(broadcast(t, s));
        out.extend(reinterpret_by_halves(t, s));
    }
    let s = t.with_lanes(2 * t.lanes);
    out.extend(sums(t, types));
    // Targets with a lane layout (HVX) take even and odd lanes by their own deals, and have
    // an instruction that keeps the odd halves of lanes (`vpacko`).
    if lane_layout {
        out.extend(types.iter().filter_map(|&w| high_halves(t, w)));
        out.extend(extended_high_halves(t));
    } else {
        out.extend(even_and_odd(t, s));
        out.extend(even_and_odd_by_halves(t, s));
        out.extend(types.iter().filter_map(|&x| saturated_pairwise_sum(t, x)));
    }
    if t.bits() > register_bits {
        out.extend(lane_wise_by_halves(t));
    }
    if 2 * t.bits() <= register_bits {
        out.extend(lane_wise_on_part(t, t.with_lanes(2 * t.lanes)));
        if lane_layout {
            // The halves of a register (HVX's `vshuff` interleaves them, read as slices).
            let whole = t.with_lanes(2 * t.lanes);
            if types.contains(&whole) {
                out.extend(lanes_as_slice(t, whole, 0));
                out.extend(lanes_as_slice(t, whole, t.lanes as i64));
            }
        } else {
            for &s in types
                .iter()
                .filter(|s| s.elem == t.elem && s.lanes > t.lanes)
            {
                out.extend(lanes_as_slice(t, s, 0));
                if s.lanes > 2 * t.lanes && s.bits() <= register_bits {
                    out.extend(lane_wise_on_part(t, s));
                }
            }
        }
    }
    out
}

/// The lanes of a value of type `s` from `offset` as `t`, read as lanes (what lane-wise
/// operators on them become) and as a slice (what instruction patterns read) alike.
fn lanes_as_slice(t: VecType, s: VecType, offset: i64) -> [Rewrite; 2] {
    let x = Term::Slot("x");
    let lanes = Term::Lanes {
        ty: t,
        offset,
        arg: Box::new(x.clone()),
    };
    let slice = Term::Op {
        name: "Slice",
        ty: t,
        params: vec![offset, 1],
        args: vec![x.clone()],
    };
    let source = format!(
        "the {} from lane {offset} of a {} as lanes or a slice",
        type_name(t),
        type_name(s)
    );
    [(slice.clone(), lanes.clone()), (lanes, slice)].map(|(lhs, rhs)| Rewrite {
        ruleset: Ruleset::Lower,
        source: source.clone(),
        lhs,
        rhs,
        conditions: vec![Condition::TypeOf(x.clone(), s)],
    })
}

/// The even (odd) lanes of a concatenation: those of each half, concatenated.
fn even_and_odd_by_halves(t: VecType, s: VecType) -> Vec<Rewrite> {
    if t.elem == Elem::Bool || !t.lanes.is_multiple_of(2) {
        return vec![];
    }
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let half = t.with_lanes(t.lanes / 2);
    let lanes = |ty, start, arg| Term::Op {
        name: "Slice",
        ty,
        params: vec![start, 2],
        args: vec![arg],
    };
    let mut out = Vec::new();
    for start in [0, 1] {
        let whole = lanes(t, start, op("Concat", s, vec![a.clone(), b.clone()]));
        let by_halves = op(
            "Concat",
            t,
            vec![lanes(half, start, a.clone()), lanes(half, start, b.clone())],
        );
        let source = format!(
            "lanes {start} mod 2 of a {} concatenation, by halves",
            type_name(s)
        );
        // Both ways: x86's `phaddw` reads the halves, NEON's `addp` the concatenation.
        for (lhs, rhs, source) in [
            (whole.clone(), by_halves.clone(), source.clone()),
            (by_halves, whole, format!("{source}, joined")),
        ] {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source,
                lhs,
                rhs,
                conditions: vec![Condition::TypeOf(a.clone(), t)],
            });
        }
    }
    out
}

/// The binary lane-wise operators whose operands have the result's type, which a part of a
/// register or a half of a register pair computes as the whole does.
const LANE_WISE_BINARY: [&str; 10] = [
    "Add", "Sub", "Mul", "And", "Or", "Xor", "Min", "Max", "Shl", "Shr",
];

/// A lane-wise operator on values wider than a register, each a concatenation of halves, as
/// the concatenation of the operator on the halves: values the rewrites make that wide (a
/// product narrowed by its bounds, `i32(x_u8) * i32(y_i8)` of 16 lanes as `i16` products)
/// are computed register by register, as the input's own nodes are by their splits.
fn lane_wise_by_halves(t: VecType) -> Vec<Rewrite> {
    if t.elem == Elem::Bool || !t.lanes.is_multiple_of(2) {
        return vec![];
    }
    let half = t.with_lanes(t.lanes / 2);
    let (a, b, c, d) = ["a", "b", "c", "d"].map(Term::Slot).into();
    LANE_WISE_BINARY
        .into_iter()
        .map(|operator| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{operator} at {} by halves", type_name(t)),
            lhs: op(
                operator,
                t,
                vec![
                    op("Concat", t, vec![a.clone(), b.clone()]),
                    op("Concat", t, vec![c.clone(), d.clone()]),
                ],
            ),
            rhs: op(
                "Concat",
                t,
                vec![
                    op(operator, half, vec![a.clone(), c.clone()]),
                    op(operator, half, vec![b.clone(), d.clone()]),
                ],
            ),
            conditions: vec![
                Condition::TypeOf(a.clone(), half),
                Condition::TypeOf(c.clone(), half),
            ],
        })
        .collect()
}

/// A lane-wise operator at `t`, at most half a register, on the low lanes of values of type
/// `whole`: the low lanes of the operator on the whole values (no lane of the result depends on
/// the others). Likewise on the high lanes of values twice as wide, so that an operation on the
/// high half of a register shares the register-wide one made for the low half.
fn lane_wise_on_part(t: VecType, whole: VecType) -> Vec<Rewrite> {
    if t.elem == Elem::Bool {
        return vec![];
    }
    let lanes_at = |offset: i64| {
        move |ty, arg| Term::Lanes {
            ty,
            offset,
            arg: Box::new(arg),
        }
    };
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let c = Term::Const {
        ty: t,
        value: Int::Slot("c"),
    };
    let whole_c = Term::Const {
        ty: whole,
        value: Int::Slot("c"),
    };
    let mut out = Vec::new();
    let name = type_name(t);
    let mut offsets = vec![(0, "low")];
    if whole.lanes == 2 * t.lanes {
        offsets.push((i64::from(t.lanes), "high"));
    }
    for (offset, which) in offsets {
        let part = lanes_at(offset);
        for operator in LANE_WISE_BINARY {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "{operator} of the {which} lanes of {} at {name}",
                    type_name(whole)
                ),
                lhs: op(operator, t, vec![part(t, a.clone()), part(t, b.clone())]),
                rhs: part(t, op(operator, whole, vec![a.clone(), b.clone()])),
                conditions: vec![
                    Condition::TypeOf(a.clone(), whole),
                    Condition::TypeOf(b.clone(), whole),
                ],
            });
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "{operator} of the {which} lanes of a {} and a constant at {name}",
                    type_name(whole)
                ),
                lhs: op(operator, t, vec![part(t, a.clone()), c.clone()]),
                rhs: part(t, op(operator, whole, vec![a.clone(), whole_c.clone()])),
                conditions: vec![Condition::TypeOf(a.clone(), whole)],
            });
        }
        for operator in ["Neg", "Not", "Abs"] {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "{operator} of the {which} lanes of a {} at {name}",
                    type_name(whole)
                ),
                lhs: op(operator, t, vec![part(t, a.clone())]),
                rhs: part(t, op(operator, whole, vec![a.clone()])),
                conditions: vec![Condition::TypeOf(a.clone(), whole)],
            });
        }
    }
    // A broadcast of one lane: the low lanes (as a slice, the form instruction patterns read
    // them in: `vpmovsxwd` of them) of its broadcast to a register.
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a broadcast of one lane to the low lanes of a {} at {name}",
            type_name(whole)
        ),
        lhs: op("Broadcast", t, vec![a.clone()]),
        rhs: Term::Op {
            name: "Slice",
            ty: t,
            params: vec![0, 1],
            args: vec![op("Broadcast", whole, vec![a.clone()])],
        },
        conditions: vec![Condition::TypeOf(a.clone(), t.with_lanes(1))],
    });
    out
}

/// A reinterpretation as `t` of a concatenation at `s` is the concatenation of the halves
/// reinterpreted.
fn reinterpret_by_halves(t: VecType, s: VecType) -> Option<Rewrite> {
    if s == t
        || s.bits() != t.bits()
        || !t.lanes.is_multiple_of(2)
        || !s.lanes.is_multiple_of(2)
        || has_bool(s, t)
    {
        return None;
    }
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    let half = |v: VecType| v.with_lanes(v.lanes / 2);
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} of a {} concatenation, by halves",
            type_name(t),
            type_name(s)
        ),
        lhs: reinterpret(t, op("Concat", s, vec![a.clone(), b.clone()])),
        rhs: op(
            "Concat",
            t,
            vec![reinterpret(half(t), a.clone()), reinterpret(half(t), b)],
        ),
        conditions: vec![Condition::TypeOf(a, half(s))],
    })
}

fn x() -> Term {
    Term::Slot("x")
}

/// Whether either type has bool lanes, whose bits no register holds as the IR packs them (an
/// HVX predicate spreads them over bytes, an AVX-512 mask is no vector register).
fn has_bool(s: VecType, t: VecType) -> bool {
    s.elem == Elem::Bool || t.elem == Elem::Bool
}

/// A bitcast to `t` of `s`, of as many bits: its free reinterpretation, or the value itself.
fn bitcast(t: VecType, s: VecType) -> Option<Rewrite> {
    (s.bits() == t.bits() && !has_bool(s, t)).then(|| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "bitcast of {} to {} is the same bits",
            type_name(s),
            type_name(t)
        ),
        lhs: op("Bitcast", t, vec![x()]),
        rhs: if s == t { x() } else { reinterpret(t, x()) },
        conditions: vec![Condition::TypeOf(x(), s)],
    })
}

/// A broadcast to `t` of a vector `s` of several lanes: `s` repeated, as a balanced
/// concatenation (`broadcast 2` of a register is the register twice).
fn broadcast(t: VecType, s: VecType) -> Option<Rewrite> {
    if s.elem != t.elem || s.lanes < 2 || !t.lanes.is_multiple_of(s.lanes) {
        return None;
    }
    fn repeated(s: VecType, times: u32) -> Term {
        if times == 1 {
            return x();
        }
        let low = times / 2;
        op(
            "Concat",
            s.with_lanes(s.lanes * times),
            vec![repeated(s, low), repeated(s, times - low)],
        )
    }
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "broadcast of {} to {} is a concatenation",
            type_name(s),
            type_name(t)
        ),
        lhs: op("Broadcast", t, vec![x()]),
        rhs: repeated(s, t.lanes / s.lanes),
        conditions: vec![Condition::TypeOf(x(), s)],
    })
}

/// The even and the odd lanes (`t`) of `s`: the truncation of the lanes of `s` read at twice
/// the width, shifted right by the width for the odd ones; at unsigned integer lanes of `t`'s
/// width, reinterpreted.
fn even_and_odd(t: VecType, s: VecType) -> Vec<Rewrite> {
    let bits = t.elem.bits();
    let (Some(narrow), Some(wide)) = (Elem::int(bits, false), Elem::int(2 * bits, false)) else {
        return vec![];
    };
    // Integer lanes only: z3 has no encoding of f32 lanes read as bits.
    if !t.elem.is_int() {
        return vec![];
    }
    let (n, w) = (t.with_elem(narrow), VecType::new(t.lanes, wide));
    let as_t = |v: Term| if n == t { v } else { reinterpret(t, v) };
    let read_wide = reinterpret(w, x());
    let odd = op(
        "Shr",
        w,
        vec![
            read_wide.clone(),
            Term::Const {
                ty: w,
                value: Int::Lit(bits as i128),
            },
        ],
    );
    [(0, read_wide, "even"), (1, odd, "odd")]
        .into_iter()
        .map(|(start, lanes, which)| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "the {which} lanes of {} are halves of {}",
                type_name(s),
                type_name(w)
            ),
            lhs: Term::Op {
                name: "Slice",
                ty: t,
                params: vec![start, 2],
                args: vec![x()],
            },
            rhs: as_t(op("Cast", n, vec![lanes])),
            conditions: vec![Condition::TypeOf(x(), s)],
        })
        .collect()
}

/// The truncation to `t` of integer lanes `w` twice as wide shifted right by `t`'s width: the
/// odd lanes of their bits read at `t` (the converse of [`even_and_odd`]; HVX's `vpacko` keeps
/// them). Not the even lanes for a plain truncation: HVX narrows that by packs already, and
/// offered the halves as well, extraction lost the packs (`u8_sat(x_i32)` at 32 lanes: 2 -> 4)
/// or, over two registers, the e-graph grew without end (`u8(x_u32)`: 2.9 s, lanes scalarized).
fn high_halves(t: VecType, w: VecType) -> Option<Rewrite> {
    let bits = t.elem.bits();
    if !t.elem.is_int() || !w.elem.is_int() || w.lanes != t.lanes || w.elem.bits() != 2 * bits {
        return None;
    }
    let shifted = op(
        "Shr",
        w,
        vec![
            x(),
            Term::Const {
                ty: w,
                value: Int::Lit(bits as i128),
            },
        ],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} of {} shifted right by {bits} is the odd halves of its lanes",
            type_name(t),
            type_name(w)
        ),
        lhs: op("Cast", t, vec![shifted]),
        rhs: Term::Op {
            name: "Slice",
            ty: t,
            params: vec![1, 2],
            args: vec![reinterpret(t.with_lanes(2 * t.lanes), x())],
        },
        conditions: vec![Condition::TypeOf(x(), w)],
    })
}

/// Integer lanes `t` shifted right by half their width: the odd halves of their bits, extended
/// (sign-extended at signed `t`, as the shift is arithmetic): what HVX's `vmpyio` multiplies
/// words by (`x_i32 * (y_i32 >> 16)`).
fn extended_high_halves(t: VecType) -> Option<Rewrite> {
    let bits = t.elem.bits();
    let half = Elem::int(bits / 2, t.elem.is_signed()).filter(|_| t.elem.is_int() && bits >= 16)?;
    let pairs = VecType::new(2 * t.lanes, half);
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} shifted right by {} is its odd halves extended",
            type_name(t),
            bits / 2
        ),
        lhs: op(
            "Shr",
            t,
            vec![
                x(),
                Term::Const {
                    ty: t,
                    value: Int::Lit(bits as i128 / 2),
                },
            ],
        ),
        rhs: op(
            "Cast",
            t,
            vec![Term::Op {
                name: "Slice",
                ty: t.with_elem(half),
                params: vec![1, 2],
                args: vec![reinterpret(pairs, x())],
            }],
        ),
        conditions: vec![],
    })
}
