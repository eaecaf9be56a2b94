//! Shifts by per-lane counts (counts computed from a variable): the counts clamped to the lane
//! width (of either signedness, Halide's signed counts too), and at 8 and 16 bits through lanes
//! of twice the bits, as rewrites and, where the widened lanes pass a register on a target
//! without lane layout, as IR the program splits.

use super::fallback::Lacks;
use super::lowering::Lowering;
use super::signedness::Wanted;
use super::split::splits;
use super::term::{op, reinterpret, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::spec::Target;
use std::collections::BTreeSet;
use std::rc::Rc;

/// Shifts by per-lane counts with the counts clamped to the lane width, which changes no lane
/// (a shift by the width or more is zero, or the sign), so that instructions reading only a
/// count's low bits take them (NEON's `ushl` reads the low byte, signed; see `ranged.rs`): a
/// shift by a count of at least zero (also below the width, zero selected beyond, for HVX), a
/// signed type's counts read unsigned, a right shift as a left shift by negated counts, and
/// Halide's shift by a signed count (a right shift where it is negative), whose count is
/// clamped to minus the width and the width or split into each arm's count from 0 up. Where
/// the target shifts right by signed counts at `t` (`right_by_signed`: HVX's `vasr`), Halide's
/// shifts of a signed `t` as those of HVX, by counts from -width to the width less one.
fn clamped_shift_counts(t: VecType, wanted: Wanted, right_by_signed: bool) -> Vec<Rewrite> {
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
        // u64 lanes have no bounds (their range is not an i64's), so their counts are
        // clamped whatever they hold (the minimum is within 0..=64, and its own clamp is the
        // same minimum, below).
        if t.elem == Elem::U64 {
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!("a {name} {shift} by counts of no known range, clamped to 64"),
                lhs: op(shift, t, vec![a.clone(), b.clone()]),
                rhs: op(
                    shift,
                    t,
                    vec![
                        a.clone(),
                        op("Min", t, vec![b.clone(), Term::constant(t, 64)]),
                    ],
                ),
                conditions: vec![],
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
    if t.elem == Elem::U64 && !out.is_empty() {
        let (x, c) = (Term::Wildcard("x".into()), Term::Wildcard("c".into()));
        let clamp = |v: Term| op("Min", t, vec![v, c.clone()]);
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {name} minimum clamped again by the same value is itself"),
            lhs: clamp(clamp(x.clone())),
            rhs: clamp(x),
            conditions: vec![],
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
    if right_by_signed && t.elem.is_signed() {
        out.extend(shifts_by_signed_counts_below_width(t));
    }
    out
}

/// Halide's shifts of a signed `t` by signed counts for a target whose instruction shifts right
/// by a count from -width to the width less one, left where it is negative (HVX's `vasr`).
/// Halide's `a << y` (`a >> y` is `a << -y`) with `y` clamped to 1 - width..width first (a
/// signed lane shifted right by the width less one is its sign, as by more; left by the width
/// it is zero, as by more), then, for `y` from 1 - width up, as that right shift by `-y`:
/// `select(-y < 0, a << --y, a >> -y)` (`--y` is `y` but for the type's minimum), the pattern of
/// `vasr` by `-y`. `a >> y` is 5 instructions and `a << y` 4 where each arm's shift and a select
/// took 10 to 13.
fn shifts_by_signed_counts_below_width(t: VecType) -> Vec<Rewrite> {
    let bits = t.elem.bits() as i64;
    let (a, y) = (Term::Wildcard("a".into()), Term::Wildcard("b".into()));
    let neg = |v: Term| op("Neg", t, vec![v]);
    let lt = |x: Term| op("Lt", t.with_elem(Elem::Bool), vec![x, Term::constant(t, 0)]);
    let halide = |y: Term| {
        let shr = op("Shr", t, vec![a.clone(), neg(y.clone())]);
        op(
            "Select",
            t,
            vec![lt(y.clone()), shr, op("Shl", t, vec![a.clone(), y])],
        )
    };
    let below = op("Min", t, vec![y.clone(), Term::constant(t, bits)]);
    let clamped = op("Max", t, vec![below, Term::constant(t, 1 - bits)]);
    let name = type_name(t);
    let mut out: Vec<Rewrite> = [
        (Int::Lo("b".into()), Cmp::Lt, 1 - bits),
        (Int::Hi("b".into()), Cmp::Gt, bits),
    ]
    .into_iter()
    .map(|(side, cmp, limit)| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("Halide's {name} shift by signed counts, clamped to 1-{bits}..{bits}"),
        lhs: halide(y.clone()),
        rhs: halide(clamped.clone()),
        conditions: vec![Condition::Compare(cmp, side, Int::Lit(limit as i128))],
    })
    .collect();
    let right = op("Shr", t, vec![a.clone(), neg(y.clone())]);
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "Halide's {name} shift by signed counts as a right shift by their negation"
        ),
        lhs: halide(y.clone()),
        rhs: op(
            "Select",
            t,
            vec![
                lt(neg(y.clone())),
                op("Shl", t, vec![a.clone(), neg(neg(y))]),
                right,
            ],
        ),
        conditions: vec![Condition::Compare(
            Cmp::Ge,
            Int::Lo("b".into()),
            Int::Lit(1 - bits as i128),
        )],
    });
    out
}

/// The element types at which a lowering shifts right by signed counts, left by their negation
/// where negative: `select(y < 0, a << -y, a >> y)` (HVX's `vasr` by a vector).
pub fn right_shift_by_signed_count_types(lowerings: &[Lowering]) -> BTreeSet<Elem> {
    lowerings
        .iter()
        .filter(|l| {
            let p = &l.pattern;
            p.op == Op::Select
                && p.args.len() == 3
                && p.args[0].op == Op::Lt
                && p.args[1].op == Op::Shl
                && p.args[2].op == Op::Shr
        })
        .map(|l| l.pattern.ty.elem)
        .collect()
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

/// The shifts by per-lane counts in `inputs` and their halves in `split_list` that `lacks` (by
/// operator and element type), too narrow for the program to split (halves below the target's
/// `min_split_bits`), and whose lanes widened to twice the bits, once or twice, pass a register
/// before the target has the shift, each with that widened shift as IR: `(cast t (shift (cast
/// w a) (cast w b)))`, true for the reasons [`widened_shifts`] gives (and the widened shift in
/// turn, when it needs widening again). As IR the program splits it into register halves as it
/// splits its input (x86's 16 bytes shifted in 32-bit lanes fill two registers): their splits
/// join `split_list`. The rewrite of [`widened_shifts`] makes a shift wider than a register,
/// which nothing splits on a target without lane layout.
pub fn widened_shift_nodes(
    inputs: &[Rc<Expr>],
    split_list: &mut Vec<(Rc<Expr>, Rc<Expr>, Rc<Expr>)>,
    target: &Target,
    lacks: &dyn Fn(&Op, Elem) -> bool,
) -> Vec<(Rc<Expr>, Rc<Expr>)> {
    let mut out: Vec<(Rc<Expr>, Rc<Expr>)> = Vec::new();
    let halves = split_list.iter().flat_map(|(_, lo, hi)| [lo, hi]);
    for e in inputs.iter().chain(halves) {
        e.walk_distinct(&mut |n| {
            if !shifts_per_lane(n) || n.ty.bits() / 2 >= target.min_split_bits {
                return;
            }
            for pair in widened_shift(n, target.register_bits, lacks)
                .into_iter()
                .flatten()
            {
                if !out.iter().any(|(node, _)| *node == pair.0) {
                    out.push(pair);
                }
            }
        });
    }
    for (_, widened) in &out {
        splits(widened, target.min_split_bits, split_list);
    }
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

/// Shifts by per-lane counts at `t`: their counts clamped, at 8 and 16 bits through wider
/// lanes, and arithmetic right shifts the target `lacks` through logical ones.
pub fn per_lane_shifts(
    t: VecType,
    wanted: Wanted,
    lacks: Lacks,
    right_by_signed: &BTreeSet<Elem>,
) -> Vec<Rewrite> {
    let mut out = clamped_shift_counts(t, wanted, right_by_signed.contains(&t.elem));
    out.extend(widened_shifts(t, wanted));
    out.extend(arithmetic_shift_by_logical(t).filter(|_| lacks("Shr", t, None)));
    out
}

/// A 64-bit arithmetic right shift by per-lane counts as the logical one of the value with its
/// bits flipped where it is negative, flipped back: `((a ^ m) >> b) ^ m`, `m` the sign in every
/// bit (`a >> 63`). Both shifts read the counts unsigned, so a count of 64 or more (a negative
/// one too) leaves `m`, the sign, as the IR defines it. AVX2 shifts 64-bit lanes right only
/// logically (`vpsrlvq`); at narrower lanes the targets lacking the shift (NEON, whose `sshl`
/// shifts right by negated counts) have better forms, and on `_mm_sra_epi16` to NEON the
/// rewrite's e-graph passed its budget.
fn arithmetic_shift_by_logical(t: VecType) -> Option<Rewrite> {
    if t.elem != Elem::I64 {
        return None;
    }
    let u = t.with_elem(Elem::U64);
    let (a, b) = (Term::Wildcard("a".into()), Term::Wildcard("b".into()));
    let sign = op("Shr", t, vec![a.clone(), Term::constant(t, 63)]);
    let flipped = op("Xor", t, vec![a.clone(), sign.clone()]);
    let logical = op(
        "Shr",
        u,
        vec![reinterpret(u, flipped), reinterpret(u, b.clone())],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a {} arithmetic right shift by counts as a logical one of the bits flipped by the sign",
            type_name(t)
        ),
        lhs: op("Shr", t, vec![a, b]),
        rhs: op("Xor", t, vec![reinterpret(t, logical), sign]),
        conditions: vec![],
    })
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
