//! Shifts by a constant as the target can do them: by at least the lane width (folded as the
//! IR defines them), at a lane width without a shift instruction (through a wider one), and
//! arithmetic right shifts without an instruction (through a logical one); rounding right shifts
//! without the wider type; shifts by per-lane counts with the counts clamped to the lane width.

use super::fallback::Own;
use super::signedness::Wanted;
use super::term::{op, reinterpret, type_name, Cmp, Condition, Int, IntOp, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::BTreeSet;
use std::rc::Rc;

/// Shifts by a constant of at least the lane width, as the IR defines them: a left or a
/// logical right shift is zero, an arithmetic right shift is one by the width less one (the
/// sign in every bit). x86's shift immediates take any count; other targets' do not.
pub fn oversized_shifts(t: VecType) -> Vec<Rewrite> {
    if !t.elem.is_int() {
        return vec![];
    }
    let bits = t.elem.bits() as i128;
    let constant = |value| Term::Const { ty: t, value };
    let shift = |name| op(name, t, vec![Term::Slot("x"), constant(Int::Slot("c"))]);
    let wide = vec![Condition::Compare(Cmp::Ge, Int::Slot("c"), Int::Lit(bits))];
    let name = type_name(t);
    let mut out = vec![Rewrite {
        ruleset: Ruleset::Simplify,
        source: format!("{name} shifted left by at least its width is zero"),
        lhs: shift("Shl"),
        rhs: constant(Int::Lit(0)),
        conditions: wide.clone(),
    }];
    out.push(if t.elem.is_signed() {
        Rewrite {
            ruleset: Ruleset::Simplify,
            source: format!("{name} shifted right by at least its width is its sign"),
            lhs: shift("Shr"),
            rhs: op(
                "Shr",
                t,
                vec![Term::Slot("x"), constant(Int::Lit(bits - 1))],
            ),
            conditions: wide,
        }
    } else {
        Rewrite {
            ruleset: Ruleset::Simplify,
            source: format!("{name} shifted right by at least its width is zero"),
            lhs: shift("Shr"),
            rhs: constant(Int::Lit(0)),
            conditions: wide,
        }
    });
    out
}

/// A right shift at `t` of a narrowing of `x` of type `s` (twice as wide) whose lanes `t`
/// holds (`0 ..= max(t)`, as the analysis bounds them) is the narrowing of the shift at `s`
/// (both are `x / 2^c` rounded down): a division by a constant shifts the high half of a
/// product at the narrow type (`src/ir/elaborate/divide.rs`), and this joins the two shifts
/// into one where the target narrows with its shift (HVX's `vasr` into bytes).
pub fn shift_of_narrowing(s: VecType, t: VecType) -> Option<Rewrite> {
    let narrower = s.elem.bits() == 2 * t.elem.bits();
    if s.lanes != t.lanes || !s.elem.is_int() || !t.elem.is_int() || !narrower {
        return None;
    }
    let x = Term::Wildcard("x".into());
    let count = |ty| Term::Const {
        ty,
        value: Int::Slot("c"),
    };
    Some(Rewrite {
        ruleset: Ruleset::Lift,
        source: format!(
            "{} shifted right after narrowing from {} within its range, as shifted before",
            type_name(t),
            type_name(s)
        ),
        lhs: op("Shr", t, vec![op("Cast", t, vec![x.clone()]), count(t)]),
        rhs: op("Cast", t, vec![op("Shr", s, vec![x.clone(), count(s)])]),
        conditions: vec![
            Condition::TypeOf(x, s),
            Condition::Compare(Cmp::Ge, Int::Slot("c"), Int::Lit(0)),
            Condition::Compare(Cmp::Lt, Int::Slot("c"), Int::Lit(t.elem.bits() as i128)),
            Condition::Compare(Cmp::Ge, Int::Lo("x".into()), Int::Lit(0)),
            Condition::Compare(Cmp::Le, Int::Hi("x".into()), Int::Lit(t.elem.max_value())),
        ],
    })
}

/// A right shift by a constant of a right shift by a constant is one shift by their sum, below
/// the lane width (the two shifts [`shift_of_narrowing`] leaves, as one).
pub fn shift_of_shift(t: VecType) -> Option<Rewrite> {
    if !t.elem.is_int() {
        return None;
    }
    let count = |value| Term::Const { ty: t, value };
    let (a, b) = (Int::Slot("a"), Int::Slot("b"));
    let sum = Int::Bin(IntOp::Add, Box::new(a.clone()), Box::new(b.clone()));
    let inner = op("Shr", t, vec![Term::Slot("x"), count(a.clone())]);
    Some(Rewrite {
        ruleset: Ruleset::Lift,
        source: format!("{} shifted right twice, by the sum", type_name(t)),
        lhs: op("Shr", t, vec![inner, count(b.clone())]),
        rhs: op("Shr", t, vec![Term::Slot("x"), count(sum.clone())]),
        conditions: vec![
            Condition::Compare(Cmp::Ge, a, Int::Lit(0)),
            Condition::Compare(Cmp::Ge, b, Int::Lit(0)),
            Condition::Compare(Cmp::Lt, sum, Int::Lit(t.elem.bits() as i128)),
        ],
    })
}

/// Shifts by a constant without an instruction at their lane width: an 8-bit shift is the
/// 16-bit shift of the same bits with the bits crossing from the neighbouring lane masked off
/// (x86 has no 8-bit shifts), and an arithmetic right shift is the logical one with the sign
/// bit's copies restored by `(v ^ s) - s`, `s` the shifted sign bit (AVX2 has no 64-bit
/// arithmetic shift).
pub fn shifts_by_other_means(t: VecType) -> Vec<Rewrite> {
    let Some(unsigned) = t.elem.unsigned().filter(|_| t.elem.is_int()) else {
        return vec![];
    };
    let bits = t.elem.bits() as i128;
    let name = type_name(t);
    let (x, c) = (Term::Slot("x"), Int::Slot("c"));
    let in_range = vec![
        Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(1)),
        Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(bits)),
    ];
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let constant = |ty, value| Term::Const { ty, value };
    let mut out = Vec::new();
    let u = t.with_elem(unsigned);
    // The shifted sign bit is an e-graph (i64) constant up to 64-bit lanes.
    if t.elem.is_signed() && bits <= 64 {
        let sign = bin(
            IntOp::Shl,
            Int::Lit(1),
            bin(IntOp::Sub, Int::Lit(bits - 1), c.clone()),
        );
        let logical = op(
            "Shr",
            u,
            vec![reinterpret(u, x.clone()), constant(u, c.clone())],
        );
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{name} arithmetic shift right as a logical one with its sign restored"
            ),
            lhs: op("Shr", t, vec![x.clone(), constant(t, c.clone())]),
            rhs: op(
                "Sub",
                t,
                vec![
                    op(
                        "Xor",
                        t,
                        vec![reinterpret(t, logical), constant(t, sign.clone())],
                    ),
                    constant(t, sign),
                ],
            ),
            conditions: in_range.clone(),
        });
    }
    if bits == 8 && t.lanes.is_multiple_of(2) {
        let w = VecType::new(t.lanes / 2, Elem::U16);
        let lane = Int::Lit(0xff);
        let both_lanes = |m: Int| bin(IntOp::Mul, m, Int::Lit(0x101));
        let mut shift = |name: &'static str, mask: Int| {
            let wide = op(
                name,
                w,
                vec![reinterpret(w, x.clone()), constant(w, c.clone())],
            );
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!("{} {name} as a 16-bit one, masked", type_name(u)),
                lhs: op(name, u, vec![x.clone(), constant(u, c.clone())]),
                rhs: reinterpret(u, op("And", w, vec![wide, constant(w, both_lanes(mask))])),
                conditions: in_range.clone(),
            });
        };
        shift(
            "Shl",
            bin(
                IntOp::And,
                bin(IntOp::Shl, lane.clone(), c.clone()),
                lane.clone(),
            ),
        );
        shift("Shr", bin(IntOp::Shr, lane, c.clone()));
    }
    out
}

/// A rounding right shift by a constant `c` (from 1 to the width less one) computed at `w`,
/// twice as wide, and narrowed back, where the input narrows to `t`: at `t` itself, the shift
/// plus the last bit shifted out (`(x >> c) + ((x >> (c - 1)) & 1)`, at either signedness).
/// HVX has no 64-bit lanes; x86 has no rounding shifts, and where it narrows 32-bit lanes
/// itself (AVX-512's `vpmovdw`, cost 4) widening and narrowing still cost more than the three
/// operations at `t`.
pub fn rounding_shift_without_widening(t: VecType, w: VecType, own: Own) -> Option<Rewrite> {
    let bits = t.elem.bits() as i128;
    let same_kind = t.elem.is_int() && w.elem.is_signed() == t.elem.is_signed();
    if !same_kind || w.lanes != t.lanes || w.elem.bits() as i128 != 2 * bits {
        return None;
    }
    if !own("Cast", t) {
        return None;
    }
    let (x, c, bias) = (Term::Slot("x"), Int::Slot("c"), Int::Slot("bias"));
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let constant = |ty, value| Term::Const { ty, value };
    let widened = op("Cast", w, vec![x.clone()]);
    let biased = op("Add", w, vec![widened, constant(w, bias.clone())]);
    let lhs = op(
        "Cast",
        t,
        vec![op("Shr", w, vec![biased, constant(w, c.clone())])],
    );
    let shifted = |by: Int| op("Shr", t, vec![x.clone(), constant(t, by)]);
    let last_out = op(
        "And",
        t,
        vec![
            shifted(bin(IntOp::Sub, c.clone(), Int::Lit(1))),
            constant(t, Int::Lit(1)),
        ],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} rounding shift right without {}",
            type_name(t),
            type_name(w)
        ),
        lhs,
        rhs: op("Add", t, vec![shifted(c.clone()), last_out]),
        conditions: vec![
            Condition::TypeOf(x, t),
            Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(1)),
            Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(bits)),
            Condition::Compare(
                Cmp::Eq,
                bias,
                bin(IntOp::Shl, Int::Lit(1), bin(IntOp::Sub, c, Int::Lit(1))),
            ),
        ],
    })
}

/// `((x >> c) + 1) >> 1` (SSSE3's `pmulhrsw` writes its rounding so) is the rounding right
/// shift by `c + 1`, `(w(x) + 2^c) >> (c + 1)` at `w`, twice as wide, truncated: over the
/// integers floor((floor(x / 2^c) + 1) / 2) = floor((x + 2^c) / 2^(c + 1)), and `(x >> c) + 1`
/// cannot wrap for `c` of at least 1. Either signedness; `c` from 1 to the width less one.
pub fn halved_rounding_shift(t: VecType, w: VecType) -> Option<Rewrite> {
    let bits = t.elem.bits() as i128;
    let same_kind = t.elem.is_int() && w.elem.is_signed() == t.elem.is_signed();
    if !same_kind || w.lanes != t.lanes || w.elem.bits() as i128 != 2 * bits {
        return None;
    }
    let (x, c) = (Term::Slot("x"), Int::Slot("c"));
    let (by, bias) = (Int::Slot("by"), Int::Slot("bias"));
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let constant = |ty, value| Term::Const { ty, value };
    let one = constant(t, Int::Lit(1));
    let shifted = op("Shr", t, vec![x.clone(), constant(t, c.clone())]);
    let lhs = op(
        "Shr",
        t,
        vec![op("Add", t, vec![shifted, one.clone()]), one],
    );
    let biased = op(
        "Add",
        w,
        vec![op("Cast", w, vec![x.clone()]), constant(w, bias.clone())],
    );
    Some(Rewrite {
        ruleset: Ruleset::Simplify,
        source: format!(
            "{} shifted right, plus one, halved: a rounding shift at {}",
            type_name(t),
            type_name(w)
        ),
        lhs,
        rhs: op(
            "Cast",
            t,
            vec![op("Shr", w, vec![biased, constant(w, by.clone())])],
        ),
        conditions: vec![
            Condition::TypeOf(x, t),
            Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(1)),
            Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(bits)),
            Condition::Compare(Cmp::Eq, by, bin(IntOp::Add, c.clone(), Int::Lit(1))),
            Condition::Compare(Cmp::Eq, bias, bin(IntOp::Shl, Int::Lit(1), c)),
        ],
    })
}

/// Shifts by per-lane counts with the counts clamped to the lane width, which changes no lane
/// (a shift by the width or more is zero, or the sign), so that instructions reading only a
/// count's low bits take them (NEON's `ushl` reads the low byte, signed; see `ranged.rs`): a
/// shift by a count of at least zero (also below the width, zero selected beyond, for HVX), a
/// signed type's counts read unsigned, a right shift as a left shift by negated counts, and
/// Halide's shift by a signed count (a right shift where it is negative), whose count is
/// clamped to minus the width and the width or split into each arm's count from 0 up.
fn clamped_shift_counts(t: VecType, wanted: Wanted) -> Vec<Rewrite> {
    if !t.elem.is_int() || t.elem.bits() > 64 {
        return vec![];
    }
    let bits = t.elem.bits() as i128;
    let (a, b) = (Term::Wildcard("a".into()), Term::Wildcard("b".into()));
    let name = type_name(t);
    let mut out = Vec::new();
    let from_zero = |least: i128| {
        vec![
            Condition::Compare(Cmp::Ge, Int::Lo("b".into()), Int::Lit(0)),
            Condition::Compare(Cmp::Ge, Int::Hi("b".into()), Int::Lit(least)),
            Condition::Compare(Cmp::Lt, Int::Lo("b".into()), Int::Hi("b".into())),
        ]
    };
    for shift in ["Shl", "Shr"].into_iter().filter(|s| wanted(s, t, None)) {
        // Counts of either signedness (`x_i32 >> y_u32` reads `y` as `i32`).
        for u in [Some(t.elem), t.elem.other_signedness()]
            .into_iter()
            .flatten()
        {
            let u = t.with_elem(u);
            let at_t = |v: Term| if u == t { v } else { reinterpret(t, v) };
            let clamped = op("Min", u, vec![b.clone(), Term::constant(u, bits as i64)]);
            let mut conditions = from_zero(bits + 1);
            if u != t {
                conditions.insert(0, Condition::TypeOf(b.clone(), u));
            }
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "a {name} {shift} by {} counts from 0 up, clamped to {bits}",
                    type_name(u)
                ),
                lhs: op(shift, t, vec![a.clone(), at_t(b.clone())]),
                rhs: op(shift, t, vec![a.clone(), at_t(clamped)]),
                conditions,
            });
        }
        // Counts of a signed type are read unsigned (x86's `vpsrav` of `epi32` counts): clamped
        // at the unsigned type.
        if let Some(u) = t.elem.unsigned().filter(|_| t.elem.is_signed()) {
            let u = t.with_elem(u);
            let clamped = op(
                "Min",
                u,
                vec![reinterpret(u, b.clone()), Term::constant(u, bits as i64)],
            );
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!("a {name} {shift} by counts read unsigned, clamped to {bits}"),
                lhs: op(shift, t, vec![a.clone(), b.clone()]),
                rhs: op(shift, t, vec![a.clone(), reinterpret(t, clamped)]),
                conditions: vec![Condition::Compare(
                    Cmp::Lt,
                    Int::Lo("b".into()),
                    Int::Lit(0),
                )],
            });
        }
        // Counts up to the width less one, for instructions that read fewer bits (HVX's
        // `vasl` reads five of a 16-bit count, signed): an arithmetic shift by the width is
        // one by the width less one, other shifts by the width are zero.
        let below = op(
            "Min",
            t,
            vec![b.clone(), Term::constant(t, bits as i64 - 1)],
        );
        let shifted = op(shift, t, vec![a.clone(), below]);
        let rhs = if shift == "Shr" && t.elem.is_signed() {
            shifted
        } else {
            let in_range = op(
                "Lt",
                t.with_elem(Elem::Bool),
                vec![b.clone(), Term::constant(t, bits as i64)],
            );
            op("Select", t, vec![in_range, shifted, Term::constant(t, 0)])
        };
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {name} {shift} by counts from 0 up, below {bits}"),
            lhs: op(shift, t, vec![a.clone(), b.clone()]),
            rhs,
            conditions: from_zero(bits),
        });
    }
    if !(wanted("Shl", t, None) && wanted("Shr", t, None)) {
        return out;
    }
    // Halide's `a << y` for a signed `y` at `a`'s width: `select(y < 0, a >> -y, a << y)`, the
    // counts reinterpreted as `a`'s type where it is unsigned.
    let Some(s) = t.elem.signed().map(|e| t.with_elem(e)) else {
        return out;
    };
    let at_t = |v: Term| if s == t { v } else { reinterpret(t, v) };
    // `select(y < 0, a >> -right, a << left)`: Halide's shift when both counts are `y`.
    let by_sign = |y: &Term, right: Term, left: Term| {
        op(
            "Select",
            t,
            vec![
                op(
                    "Lt",
                    t.with_elem(Elem::Bool),
                    vec![y.clone(), Term::constant(s, 0)],
                ),
                op("Shr", t, vec![a.clone(), at_t(op("Neg", s, vec![right]))]),
                op("Shl", t, vec![a.clone(), at_t(left)]),
            ],
        )
    };
    let halide = |y: &Term| by_sign(y, y.clone(), y.clone());
    // A right shift by counts from 0 to the width (not one constant) is Halide's left shift
    // by their negation (at 0 both shift by nothing): NEON shifts right by negative counts.
    let at_s = |v: Term| if s == t { v } else { reinterpret(s, v) };
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a {name} right shift by counts 0..{bits} as a left shift by their negation"
        ),
        lhs: op("Shr", t, vec![a.clone(), b.clone()]),
        rhs: halide(&op("Neg", s, vec![at_s(b.clone())])),
        conditions: vec![
            Condition::Compare(Cmp::Ge, Int::Lo("b".into()), Int::Lit(0)),
            Condition::Compare(Cmp::Le, Int::Hi("b".into()), Int::Lit(bits)),
            Condition::Compare(Cmp::Lt, Int::Lo("b".into()), Int::Hi("b".into())),
        ],
    });
    // Halide's `a >> y` is `a << -y`: the negation is clamped (the bounds are `y`'s, as the
    // negation of the type's minimum wraps to itself, a right shift).
    let negated = |y: Term| op("Neg", s, vec![y]);
    let clamp = |y: Term| {
        op(
            "Max",
            s,
            vec![
                op("Min", s, vec![y, Term::constant(s, bits as i64)]),
                Term::constant(s, -bits as i64),
            ],
        )
    };
    let bounds = [
        (Int::Lo("b".into()), Cmp::Lt, -bits),
        (Int::Hi("b".into()), Cmp::Gt, bits),
    ];
    // Within -width..width, the arms' counts from 0 up (each arm is taken only where its
    // count is): HVX shifts by counts from 0 to the width less one.
    let arms = by_sign(
        &b,
        op("Min", s, vec![b.clone(), Term::constant(s, 0)]),
        op("Max", s, vec![b.clone(), Term::constant(s, 0)]),
    );
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("Halide's {name} shift by signed counts, each arm's count from 0 up"),
        lhs: halide(&b),
        rhs: arms,
        conditions: vec![
            Condition::Compare(Cmp::Lt, Int::Lo("b".into()), Int::Lit(0)),
            Condition::Compare(Cmp::Ge, Int::Lo("b".into()), Int::Lit(-bits)),
            Condition::Compare(Cmp::Le, Int::Hi("b".into()), Int::Lit(bits)),
        ],
    });
    for (side, cmp, limit) in bounds {
        for (lhs, rhs, which) in [
            (halide(&b), halide(&clamp(b.clone())), "left"),
            (
                halide(&negated(b.clone())),
                halide(&clamp(negated(b.clone()))),
                "right",
            ),
        ] {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "Halide's {name} {which} shift by signed counts, clamped to -{bits}..{bits}"
                ),
                lhs,
                rhs,
                conditions: vec![Condition::Compare(cmp, side.clone(), Int::Lit(limit))],
            });
        }
    }
    out
}

/// The types of the shifts by per-lane counts in `e` (counts computed from a variable), at both
/// signednesses, and the types [`widened_shifts`] makes of them: the rewrites of
/// [`per_lane_shifts`] are made at these types only.
pub fn per_lane_shift_types(e: &Expr, types: &mut BTreeSet<VecType>) {
    e.walk(&mut |n| {
        if shifts_per_lane(n) {
            let mut t = Some(n.ty);
            while let Some(at) = t {
                types.insert(at);
                types.extend(at.elem.other_signedness().map(|o| at.with_elem(o)));
                t = widened(at);
            }
        }
    });
}

/// Whether `n` shifts by per-lane counts (counts computed from a variable).
fn shifts_per_lane(n: &Expr) -> bool {
    let mut variable = false;
    if matches!(n.op, Op::Shl | Op::Shr) {
        n.args[1].walk(&mut |c| variable |= matches!(c.op, Op::Var(_)));
    }
    variable
}

/// The shifts by per-lane counts in `e` that `lacks` (by operator and element type), too
/// narrow for the program to split (halves below `min_split_bits`), and whose lanes widened to
/// twice the bits, once or twice, pass a register of `register_bits` before the target has the
/// shift, each with that widened shift as IR: `(cast t (shift (cast w a) (cast w b)))`, true
/// for the reasons [`widened_shifts`] gives (and the widened shift in turn, when it needs
/// widening again). As IR the program splits it into register halves as it splits its input
/// (x86's 16 bytes shifted in 32-bit lanes fill two registers); the rewrite of
/// [`widened_shifts`] makes a shift wider than a register, which nothing splits on a target
/// without lane layout.
pub fn widened_shift_nodes(
    e: &Expr,
    register_bits: u32,
    min_split_bits: u32,
    lacks: &dyn Fn(&Op, Elem) -> bool,
) -> Vec<(Rc<Expr>, Rc<Expr>)> {
    let mut out = Vec::new();
    e.walk_distinct(&mut |n| {
        if shifts_per_lane(n) && n.ty.bits() / 2 < min_split_bits {
            out.extend(widened_shift(n, register_bits, lacks).into_iter().flatten());
        }
    });
    out
}

/// The widened shift of [`widened_shift_nodes`] for the shift `n`, and those of the shifts it
/// makes; None where no widening passes a register.
fn widened_shift(
    n: &Expr,
    register_bits: u32,
    lacks: &dyn Fn(&Op, Elem) -> bool,
) -> Option<Vec<(Rc<Expr>, Rc<Expr>)>> {
    let w = widened(n.ty).filter(|_| lacks(&n.op, n.ty.elem))?;
    let at_w = |x: &Rc<Expr>| Expr::build(Op::Cast(w.elem), vec![x.clone()]).map(Rc::new);
    let shift = Expr::build(
        n.op.clone(),
        vec![at_w(&n.args[0]).ok()?, at_w(&n.args[1]).ok()?],
    )
    .ok()?;
    let inner = widened_shift(&shift, register_bits, lacks);
    if w.bits() <= register_bits && inner.is_none() {
        return None;
    }
    let whole = Expr::build(Op::Cast(n.ty.elem), vec![Rc::new(shift)]).ok()?;
    let mut out = vec![(Rc::new(n.clone()), Rc::new(whole))];
    out.extend(inner.into_iter().flatten());
    Some(out)
}

/// Shifts by per-lane counts at `t`: their counts clamped, and at 8 and 16 bits through wider
/// lanes.
pub fn per_lane_shifts(t: VecType, wanted: Wanted) -> Vec<Rewrite> {
    let mut out = clamped_shift_counts(t, wanted);
    out.extend(widened_shifts(t, wanted));
    out
}

/// A type of 8- or 16-bit lanes with the lanes at twice the bits.
fn widened(t: VecType) -> Option<VecType> {
    let w = t
        .elem
        .wide()
        .filter(|_| t.elem.is_int() && t.elem.bits() <= 16)?;
    Some(t.with_elem(w))
}

/// Shifts by per-lane counts at 8 and 16 bits, which x86 before AVX-512 lacks, as the shifts
/// of the lanes widened to twice the bits, truncated: a count of the width or more leaves zero
/// or the sign either way (a count read as signed and extended stays that large).
fn widened_shifts(t: VecType, wanted: Wanted) -> Vec<Rewrite> {
    let Some(w) = widened(t) else {
        return vec![];
    };
    let (a, b) = (Term::Wildcard("a".into()), Term::Wildcard("b".into()));
    let at_w = |x: &Term| op("Cast", w, vec![x.clone()]);
    ["Shl", "Shr"]
        .into_iter()
        .filter(|s| wanted(s, t, None))
        .map(|shift| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {} {shift} by counts, at {}", type_name(t), type_name(w)),
            lhs: op(shift, t, vec![a.clone(), b.clone()]),
            rhs: op("Cast", t, vec![op(shift, w, vec![at_w(&a), at_w(&b)])]),
            conditions: vec![Condition::Compare(
                Cmp::Lt,
                Int::Lo("b".into()),
                Int::Hi("b".into()),
            )],
        })
        .collect()
}
