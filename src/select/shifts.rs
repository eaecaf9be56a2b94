//! Shifts by a constant as the target can do them: by at least the lane width (folded as the
//! IR defines them), at a lane width without a shift instruction (through a wider one), and
//! arithmetic right shifts without an instruction (through a logical one); rounding right shifts
//! without the wider type. Shifts by per-lane counts are in `per_lane_shifts.rs`.

use super::fallback::Own;
use super::term::{op, reinterpret, type_name, Cmp, Condition, Int, IntOp, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

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

/// A multiply by a constant with two bits set, or one less than a power of two times a power
/// of two (`c = 2^a + 2^b` or `2^a - 2^b`, `a` below the lane width; or a negative `2^b - 2^a`
/// or `-2^a`), as the sum or difference of the operand shifted by `a` and by `b` (by 0, the
/// operand itself): exact in wrapping arithmetic at every integer type, and two or three cheap
/// instructions where a multiply is dear (x86's `pmulld`, cost 10) or missing (bytes on x86,
/// 64-bit lanes on AVX2 and NEON).
pub fn multiply_by_shifts(t: VecType) -> Vec<Rewrite> {
    if !t.elem.is_int() {
        return vec![];
    }
    let bits = Int::Lit(t.elem.bits() as i128);
    let (x, c) = (Term::Slot("x"), Int::Slot("c"));
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let log2 = |v: &Int| Int::Log2(Box::new(v.clone()));
    let power = |k: Int| bin(IntOp::Shl, Int::Lit(1), k);
    let is_power = |v: &Int, yes: bool| {
        let cmp = if yes { Cmp::Eq } else { Cmp::Ne };
        Condition::Compare(cmp, v.clone(), power(log2(v)))
    };
    let constant = |value| Term::Const { ty: t, value };
    let shifted = |by: Int| op("Shl", t, vec![x.clone(), constant(by)]);
    let name = type_name(t);
    let lhs = op("Mul", t, vec![x.clone(), constant(c.clone())]);
    let mut out = Vec::new();
    // `combine` of the operand shifted by `a` and the operand times `rest`, a power of two (the
    // operand itself for 1, else shifted by its logarithm), in that order or `swapped`.
    let mut form = |what: &str, combine, a: Int, rest: Int, swapped: bool, when: &[Condition]| {
        let mut conditions = when.to_vec();
        conditions.extend([
            Condition::Compare(Cmp::Lt, a.clone(), bits.clone()),
            Condition::Compare(Cmp::Ge, rest.clone(), Int::Lit(1)),
            is_power(&rest, true),
        ]);
        for by_one in [true, false] {
            let other = if by_one {
                x.clone()
            } else {
                shifted(log2(&rest))
            };
            let mut operands = vec![shifted(a.clone()), other];
            if swapped {
                operands.reverse();
            }
            let cmp = if by_one { Cmp::Eq } else { Cmp::Gt };
            let one = if by_one { " (b = 0)" } else { "" };
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!("{name} multiply by {what}{one} as shifts"),
                lhs: lhs.clone(),
                rhs: op(combine, t, operands),
                conditions: conditions
                    .iter()
                    .cloned()
                    .chain([Condition::Compare(cmp, rest.clone(), Int::Lit(1))])
                    .collect(),
            });
        }
    };
    let high = log2(&c);
    let above = bin(IntOp::Add, high.clone(), Int::Lit(1));
    let below = bin(IntOp::Sub, c.clone(), power(high.clone()));
    let not_a_power = [is_power(&c, false)];
    form("2^a + 2^b", "Add", high, below, false, &not_a_power);
    let short = bin(IntOp::Sub, power(above.clone()), c.clone());
    form("2^a - 2^b", "Sub", above, short, false, &not_a_power);
    // Negative: `-m` with `m = 2^a - 2^b` is the operand shifted by `b` less it shifted by `a`.
    let m = bin(IntOp::Sub, Int::Lit(0), c.clone());
    let negative = Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(0));
    let m_above = bin(IntOp::Add, log2(&m), Int::Lit(1));
    let m_short = bin(IntOp::Sub, power(m_above.clone()), m.clone());
    let when = [negative.clone(), is_power(&m, false)];
    form("-(2^a - 2^b)", "Sub", m_above, m_short, true, &when);
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("{name} multiply by -2^a as zero less a shift"),
        lhs,
        rhs: op("Sub", t, vec![constant(Int::Lit(0)), shifted(log2(&m))]),
        conditions: vec![
            negative,
            is_power(&m, true),
            Condition::Compare(Cmp::Lt, log2(&m), bits),
        ],
    });
    out
}
