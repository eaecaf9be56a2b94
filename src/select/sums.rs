//! Sums of groups of adjacent lanes (`reduce_add`) rewritten into the sums targets have, sound
//! by construction (a sum wraps alike in any order and at any wider width): a pairwise sum is
//! the even lanes plus the odd ones; sums of groups are sums of sums of smaller groups; sums of
//! widened lanes are sums of widened pairwise sums; a wrapping sum is the low bits of the sum at
//! a wider type the target adds; a sum of widened signed bytes is the sum of the bytes with
//! their sign bits flipped, read unsigned, less 128 for each.

use super::fallback::constant;
use super::term::{op, reinterpret, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::BTreeSet;

/// The rewrites of this module whose left side has type `t`, its operands among `types`.
pub fn sums(t: VecType, types: &[VecType]) -> Vec<Rewrite> {
    let mut out = pairwise_sum(t, t.with_lanes(2 * t.lanes));
    out.extend(types.iter().filter_map(|&x| widening_sums_by_pairs(t, x)));
    out.extend(
        types
            .iter()
            .filter_map(|&x| signed_byte_sums_by_flipped_signs(t, x, types)),
    );
    out.extend(types.iter().flat_map(|&x| sums_of_groups(t, x)));
    out.extend(
        types
            .iter()
            .flat_map(|&x| truncated_wider_sums(t, x, types)),
    );
    out
}

/// The sums of adjacent pairs of lanes of `s`: the even lanes plus the odd ones, both ways.
fn pairwise_sum(t: VecType, s: VecType) -> Vec<Rewrite> {
    if t.elem == Elem::Bool {
        return vec![];
    }
    let lanes = |start| Term::Op {
        name: "Slice",
        ty: t,
        params: vec![start, 2],
        args: vec![Term::Slot("x")],
    };
    let sums = op("ReduceAdd", t, vec![Term::Slot("x")]);
    let halves = op("Add", t, vec![lanes(0), lanes(1)]);
    let source = format!("pairwise sums of {} as even plus odd lanes", type_name(s));
    [
        (sums.clone(), halves.clone(), source.clone()),
        (halves, sums, format!("{source}, joined")),
    ]
    .into_iter()
    .map(|(lhs, rhs, source)| Rewrite {
        ruleset: Ruleset::Lower,
        source,
        lhs,
        rhs,
        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
    })
    .collect()
}

/// The sums into `t` of adjacent pairs of lanes of `x` converted to `t`'s element type and
/// narrowed back to `x`'s with saturation, as the saturating sum of `x`'s even and odd lanes:
/// a conversion is lane-wise, so the lanes it reads can be dealt first (NEON's
/// `_mm_maddubs_epi16`: products at i16, `uzp1`, `uzp2`, `sqadd`, where the pairs were summed
/// widened and narrowed back register by register). Under the saturation only: made for
/// every pairwise sum of a conversion, it led AVX2's `reduce_add(16, u32(x_u8))` away from
/// one `vpsadbw` of a whole register (7 -> 11). Targets with a lane layout deal by their own
/// rules.
pub fn saturated_pairwise_sum(t: VecType, x: VecType) -> Option<Rewrite> {
    let ints = t.elem.is_int() && x.elem.is_int() && t.elem.bits() > x.elem.bits();
    if !ints || x.lanes != 2 * t.lanes {
        return None;
    }
    let narrow = x.with_lanes(t.lanes);
    let dealt = |start| {
        let lanes = Term::Op {
            name: "Slice",
            ty: narrow,
            params: vec![start, 2],
            args: vec![Term::Slot("x")],
        };
        op("Cast", t, vec![lanes])
    };
    let sums = op(
        "ReduceAdd",
        t,
        vec![op("Cast", t.with_lanes(x.lanes), vec![Term::Slot("x")])],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "pairwise sums of {} widened and narrowed with saturation, as a saturating sum of \
             its even and odd lanes",
            type_name(x)
        ),
        lhs: op("SatCast", narrow, vec![sums]),
        rhs: op(
            "SatCast",
            narrow,
            vec![op("Add", t, vec![dealt(0), dealt(1)])],
        ),
        conditions: vec![Condition::TypeOf(Term::Slot("x"), x)],
    })
}

/// The sums into `t` of groups of `k` (at least four, even) lanes of `x` of `t`'s own element
/// type as the sums of `k / m` adjacent groups' sums of `m` lanes, for every power of two `m`
/// dividing `k` (sums wrap alike in any order): x86's `pmaddwd` sums the pairs of products of
/// `reduce_add(4, i32(x_u8) * i32(y_u8))`, HVX's `vrmpy` by ones the groups of four bytes of
/// `reduce_add(8, u32(x_u8))`, SSE's `psadbw` eight bytes of `reduce_add(16, u64(x_u8))`.
fn sums_of_groups(t: VecType, x: VecType) -> Vec<Rewrite> {
    let k = x.lanes / t.lanes;
    if x.elem != t.elem
        || !t.elem.is_int()
        || !x.lanes.is_multiple_of(t.lanes)
        || k < 4
        || !k.is_multiple_of(2)
    {
        return vec![];
    }
    std::iter::successors(Some(2), |m| Some(m * 2))
        .take_while(|&m| m < k)
        .filter(|&m| k.is_multiple_of(m))
        .map(|m| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("sums of {k} lanes of {} by sums of {m}", type_name(x)),
            lhs: op("ReduceAdd", t, vec![Term::Slot("x")]),
            rhs: op(
                "ReduceAdd",
                t,
                vec![op(
                    "ReduceAdd",
                    t.with_lanes(x.lanes / m),
                    vec![Term::Slot("x")],
                )],
            ),
            conditions: vec![Condition::TypeOf(Term::Slot("x"), x)],
        })
        .collect()
}

/// The types an expression's sums of groups of lanes take at wider lanes
/// ([`truncated_wider_sums`], then [`sums_of_groups`]): at each wider type up to 64 bits that
/// the target `adds` lanes of at either signedness, the operand's lanes, the result's and
/// every power-of-two fraction between; and signed bytes widened also read unsigned
/// ([`signed_byte_sums_by_flipped_signs`]).
pub fn wider_sum_types(e: &Expr, adds: &dyn Fn(Elem) -> bool, types: &mut BTreeSet<VecType>) {
    e.walk(&mut |n| {
        let (Op::ReduceAdd(_), Some(x)) = (&n.op, n.args.first()) else {
            return;
        };
        if x.ty.elem != n.ty.elem || !n.ty.elem.is_int() {
            return;
        }
        if let (Op::Cast(_), Some(bytes)) = (&x.op, x.args.first()) {
            if bytes.ty.elem == Elem::I8 {
                // Signed bytes are also summed with their sign bits flipped, read unsigned.
                types.insert(bytes.ty.with_elem(Elem::U8));
            }
        }
        for wide in std::iter::successors(n.ty.elem.wide(), |w| w.wide()) {
            if wide.bits() > 64 {
                break;
            }
            // A sum adds alike at either signedness (x86's adds are typed signed).
            if !adds(wide) && !wide.other_signedness().is_some_and(adds) {
                continue;
            }
            let mut lanes = x.ty.lanes;
            while lanes >= n.ty.lanes {
                types.insert(n.ty.with_elem(wide).with_lanes(lanes));
                if !lanes.is_multiple_of(2) {
                    break;
                }
                lanes /= 2;
            }
        }
    });
}

/// The sums into `t` of groups of lanes of `x`, of `t`'s own element type, as the low bits of
/// the sums of the lanes widened to each wider type among `types` (a sum wraps to the same low
/// bits at any width): SSE sums eight bytes by `psadbw` into 64 bits.
fn truncated_wider_sums(t: VecType, x: VecType, types: &[VecType]) -> Vec<Rewrite> {
    if x.elem != t.elem || !t.elem.is_int() || x.lanes <= t.lanes {
        return vec![];
    }
    std::iter::successors(t.elem.wide(), |w| w.wide())
        .take_while(|w| w.bits() <= 64)
        .filter(|&w| types.contains(&t.with_elem(w)) && types.contains(&x.with_elem(w)))
        .map(|wide| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "sums of {} lanes of {} as the low bits of their sums at {wide}",
                x.lanes / t.lanes,
                type_name(x),
            ),
            lhs: op("ReduceAdd", t, vec![Term::Slot("x")]),
            rhs: op(
                "Cast",
                t,
                vec![op(
                    "ReduceAdd",
                    t.with_elem(wide),
                    vec![op("Cast", x.with_elem(wide), vec![Term::Slot("x")])],
                )],
            ),
            conditions: vec![Condition::TypeOf(Term::Slot("x"), x)],
        })
        .collect()
}

/// The sums into `t` of groups of `k` signed bytes of `x` widened, as the sums of the bytes with
/// their sign bits flipped (`x ^ 0x80`, each byte plus 128) read unsigned and widened, less
/// `128 * k`: targets that sum unsigned bytes only (x86's `psadbw`) sum signed ones with one
/// `xor` and one subtraction more (`reduce_add(8, i16(x_i8))` on AVX2).
fn signed_byte_sums_by_flipped_signs(t: VecType, x: VecType, types: &[VecType]) -> Option<Rewrite> {
    let unsigned = x.with_elem(Elem::U8);
    let k = x.lanes / t.lanes;
    let summable = t.elem.is_int() && t.elem.bits() > 8 && x.lanes.is_multiple_of(t.lanes);
    if x.elem != Elem::I8 || !summable || k < 2 || !types.contains(&unsigned) {
        return None;
    }
    let widened = t.with_lanes(x.lanes);
    let flipped = op("Xor", x, vec![Term::Slot("x"), constant(x, -128)]);
    let sum = op(
        "ReduceAdd",
        t,
        vec![op("Cast", widened, vec![reinterpret(unsigned, flipped)])],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "sums of {k} lanes of {} widened, by their sign bits flipped",
            type_name(x)
        ),
        lhs: op(
            "ReduceAdd",
            t,
            vec![op("Cast", widened, vec![Term::Slot("x")])],
        ),
        rhs: op("Sub", t, vec![sum, constant(t, 128 * k as i128)]),
        conditions: vec![Condition::TypeOf(Term::Slot("x"), x)],
    })
}

/// The sums into `t` of groups of `x`'s lanes widened (`reduce_add(8, u64(x_u8))`, SSE's
/// `psadbw`) as the sums of half as many groups of adjacent pairs summed at twice `x`'s bits
/// (NEON's `uaddlp`): a pair's sum cannot overflow twice the bits, and either way the result is
/// the total modulo `t`'s width. So `uaddlp`, `uaddlp`, `uaddlp` sum groups of eight bytes.
fn widening_sums_by_pairs(t: VecType, x: VecType) -> Option<Rewrite> {
    let pair = x.elem.wide().filter(|w| {
        t.elem.is_int() && x.elem.is_int() && w.bits() < t.elem.bits() && w.bits() <= 32
    })?;
    let k = x.lanes / t.lanes;
    if !x.lanes.is_multiple_of(t.lanes) || k < 2 || !k.is_multiple_of(2) {
        return None;
    }
    let pairs = VecType::new(x.lanes / 2, pair);
    let summed = op(
        "ReduceAdd",
        pairs,
        vec![op("Cast", x.with_elem(pair), vec![Term::Slot("x")])],
    );
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "sums of {k} lanes of {} widened, by pairs at {}",
            type_name(x),
            type_name(pairs)
        ),
        lhs: op(
            "ReduceAdd",
            t,
            vec![op("Cast", t.with_lanes(x.lanes), vec![Term::Slot("x")])],
        ),
        rhs: op(
            "ReduceAdd",
            t,
            vec![op("Cast", t.with_lanes(pairs.lanes), vec![summed])],
        ),
        conditions: vec![Condition::TypeOf(Term::Slot("x"), x)],
    })
}
