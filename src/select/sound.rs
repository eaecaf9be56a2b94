//! Rewrites sound by construction, generated for the types in play rather than proven rules:
//! conversions by halves, constants as casts of narrower ones, casts as reinterpretations and
//! through their twins and midpoints, two widenings as one, widenings of parts of inputs,
//! comparisons swapped or at the other signedness, and selects at the other signedness, as
//! bitwise selects by a mask or as selects of bytes.

use super::bool_logic::bool_logic;
use super::byte_predicates::{logic_of_bytes, select_of_bytes};
use super::fallback::{fallbacks, Lacks, Own};
use super::float_conversions::{float_conversions, float_midpoint};
use super::mask_bits::{mask_bits, weighted_mask_bits};
use super::popcount::{clz_rewrites, popcount_rewrites};
use super::products::{
    byte_multiply_in_words, high_bits_of_word_products, high_half_by_even_and_odd,
    multiply_by_halves, product_as_pair_sum, product_bits_across_halves, wide_multiply,
    widened_product,
};
use super::reshape::reshaping;
use super::saturating::{saturating_sums, saturation_above_by_one};
use super::shifts::{
    halved_rounding_shift, multiply_by_shifts, oversized_shifts, rounding_shift_without_widening,
    shift_of_narrowing, shift_of_shift, shifts_by_other_means,
};
use super::signedness::{
    compare_through, conversion_rewrites, signedness_rewrites, Direct, Wanted,
};
use super::term::{
    fits_i64, lane_value, op, reinterpret, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term,
};
use super::truncation::truncation_rewrites;
use super::unsigned_high::unsigned_high_word_by_signed;
use super::word_pairs::word_pairs;
use crate::ir::{Elem, VecType};
use crate::spec::Target;
use std::collections::BTreeSet;

/// The type of the other signedness a cast from `s` to `t` can go through, the widths being
/// different: an extension's bits depend on the source's signedness only, so `i16(x_u8)` is the
/// bits of `u16(x_u8)` and `u64(x_u32)` those of `i64(x_u32)`, and a truncation keeps the low
/// bits whatever the signedness, so `i8(x_u16)` is the bits of `u8(x_u16)`.
pub fn cast_twin(s: VecType, t: VecType) -> Option<VecType> {
    (s.elem.is_int()
        && t.elem.is_int()
        && s.lanes == t.lanes
        && s.elem.bits() != t.elem.bits()
        && s.elem.is_signed() != t.elem.is_signed())
    .then(|| Elem::int(t.elem.bits(), !t.elem.is_signed()))
    .flatten()
    .map(|e| t.with_elem(e))
}

/// The types halfway along a cast from `s` to `t` that more than doubles or halves the lane
/// width: an extension goes through the source's signedness at twice its width (`i32(x_u8)`
/// is `i32(u16(x_u8))`) and, from unsigned to signed, also through the signed type of that
/// width, which holds every value of the source (`i32(x_u8)` is `i32(i16(x_u8))`, so a product
/// with `i32(y_i8)` is one of two widened i16 values); a truncation through the target's at
/// half the source's width, a saturating narrowing through the source's (whose range holds the
/// target's where the source can reach it: `i8_sat(x_i32)` is `i8_sat(i16_sat(x_i32))`,
/// `u8_sat(x_u32)` `u8_sat(u16_sat(x_u32))`); a saturating narrowing that changes the
/// signedness and does not more than halve the width goes through the target's signedness at
/// the source's width, whose range holds the target's (clamping to a range and then to one
/// inside it is clamping to the inner one: `i8_sat(x_u16)` is `i8_sat(i16_sat(x_u16))`).
pub fn cast_midpoints(s: VecType, t: VecType, saturating: bool) -> Vec<VecType> {
    if s.lanes == t.lanes && (s.elem == Elem::F32) != (t.elem == Elem::F32) {
        return float_midpoint(s, t).into_iter().collect();
    }
    if !s.elem.is_int() || !t.elem.is_int() || s.lanes != t.lanes {
        return vec![];
    }
    let (sb, tb) = (s.elem.bits(), t.elem.bits());
    let mids = if tb > 2 * sb {
        let signed_too = !s.elem.is_signed() && t.elem.is_signed();
        vec![
            Elem::int(2 * sb, s.elem.is_signed()),
            Elem::int(2 * sb, true).filter(|_| signed_too),
        ]
    } else if sb > 2 * tb {
        vec![Elem::int(
            sb / 2,
            if saturating {
                s.elem.is_signed()
            } else {
                t.elem.is_signed()
            },
        )]
    } else if saturating && sb > tb && s.elem.is_signed() != t.elem.is_signed() {
        vec![Elem::int(sb, t.elem.is_signed())]
    } else {
        vec![]
    };
    mids.into_iter().flatten().map(|e| t.with_elem(e)).collect()
}

/// A widening cast of a part of an input narrower than a register is half of the same cast of
/// the part twice as long (the half at its offset), so the instructions that widen a whole
/// register into one register or a pair apply: on NEON `u16(x_u8[4..8])` is the high half of
/// `uxtl` of `x_u8[0..8]`, on HVX `i16(x_i8[0..64])` the low register of `vunpack`'s pair.
/// `parts` are the input's parts with the lane count of their variable.
pub fn part_widenings(
    parts: &BTreeSet<(VecType, String, i64, u32)>,
    register_bits: u32,
) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for (s, name, offset, var_lanes) in parts {
        let n = s.lanes as i64;
        if !s.elem.is_int() || s.bits() >= register_bits || 2 * s.lanes > *var_lanes {
            continue;
        }
        // The part is the low half of the register starting at it, or the high half of the one
        // ending with it: both, where both fit, so a widening already made can be shared.
        let mut wholes = Vec::new();
        if offset + 2 * n <= *var_lanes as i64 {
            wholes.push((*offset, 0));
        }
        if *offset >= n {
            wholes.push((offset - n, n));
        }
        let part = |ty: VecType, offset| Term::Part {
            ty,
            name: name.clone(),
            offset,
        };
        for (whole_at, half) in wholes {
            for bits in [16, 32, 64] {
                for signed in [false, true] {
                    let Some(elem) = Elem::int(bits, signed).filter(|_| bits > s.elem.bits())
                    else {
                        continue;
                    };
                    let (t, t2) = (s.with_elem(elem), s.with_elem(elem).with_lanes(2 * s.lanes));
                    // Into a pair of registers only by doubling (HVX's `vunpack`); wider
                    // extensions go through their midpoints.
                    let pair = t2.bits() > register_bits;
                    if t2.bits() > 2 * register_bits || pair && bits != 2 * s.elem.bits() {
                        continue;
                    }
                    out.push(Rewrite {
                        ruleset: Ruleset::Lower,
                        source: format!(
                            "{name}[{offset}..] to {} is half of a whole register's",
                            type_name(t)
                        ),
                        lhs: op("Cast", t, vec![part(*s, *offset)]),
                        rhs: Term::Lanes {
                            ty: t,
                            offset: half,
                            arg: Box::new(op(
                                "Cast",
                                t2,
                                vec![part(s.with_lanes(2 * s.lanes), whole_at)],
                            )),
                        },
                        conditions: vec![],
                    });
                }
            }
        }
    }
    out
}

/// f32 comparisons with the operands swapped, both ways (`x < y` is `y > x`, IEEE's too: both
/// are false for a NaN), `x != y` as the negation of `x == y`, and a select of f32 lanes as the
/// select of their bits at u32 (NEON's `vbsl` of an `fcmgt`).
fn float_comparisons(t: VecType) -> Vec<Rewrite> {
    let (x, y) = (Term::Slot("x"), Term::Slot("y"));
    let bools = t.with_elem(Elem::Bool);
    let typed = || vec![Condition::TypeOf(x.clone(), t)];
    let mut out: Vec<Rewrite> = [("Lt", "Gt"), ("Le", "Ge"), ("Gt", "Lt"), ("Ge", "Le")]
        .into_iter()
        .map(|(from, to)| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "{from} at {} is {to} with the operands swapped",
                type_name(t)
            ),
            lhs: op(from, bools, vec![x.clone(), y.clone()]),
            rhs: op(to, bools, vec![y.clone(), x.clone()]),
            conditions: typed(),
        })
        .collect();
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("Ne at {} is the negation of Eq", type_name(t)),
        lhs: op("Ne", bools, vec![x.clone(), y.clone()]),
        rhs: op(
            "Not",
            bools,
            vec![op("Eq", bools, vec![x.clone(), y.clone()])],
        ),
        conditions: typed(),
    });
    let (c, bits) = (Term::Slot("c"), t.with_elem(Elem::U32));
    out.push(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("a select at {} is one of its bits", type_name(t)),
        lhs: op("Select", t, vec![c.clone(), x.clone(), y.clone()]),
        rhs: reinterpret(
            t,
            op(
                "Select",
                bits,
                vec![c, reinterpret(bits, x), reinterpret(bits, y)],
            ),
        ),
        conditions: vec![],
    });
    out
}

/// Comparisons of integer type `t` as the target has them (swapped, at the other signedness for
/// equality), and a select at `t`: the same select on the same bits at the type of the other
/// signedness (HVX's `vmux` is on u8 lanes, AVX-512's blends on signed ones), and the bitwise
/// select by a mask of all-ones lanes where the condition holds (NEON's `vbsl` of a `vceq`,
/// AVX2's and/andnot/or of a `cmpeq`), the mask at either signedness as comparisons make it.
/// At f32, [`float_comparisons`].
fn comparison_and_select_rewrites(t: VecType) -> Vec<Rewrite> {
    if t.elem == Elem::F32 {
        return float_comparisons(t);
    }
    let Some(twin) = t.elem.other_signedness().map(|e| t.with_elem(e)) else {
        return vec![];
    };
    let (c, x, y) = (Term::Slot("c"), Term::Slot("x"), Term::Slot("y"));
    let lhs = op("Select", t, vec![c.clone(), x.clone(), y.clone()]);
    let name = type_name(t);
    let bools = t.with_elem(Elem::Bool);
    let mut out = Vec::new();
    // Comparisons: `x < y` is `y > x`, and equality does not depend on the signedness.
    for (from, to) in [("Lt", "Gt"), ("Le", "Ge")] {
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{from} is {to} with the operands swapped"),
            lhs: op(from, bools, vec![x.clone(), y.clone()]),
            rhs: op(to, bools, vec![y.clone(), x.clone()]),
            conditions: vec![Condition::TypeOf(x.clone(), t)],
        });
    }
    for cmp in ["Eq", "Ne"] {
        let reread = |v: &Term| Term::Reinterpret {
            ty: twin,
            arg: Box::new(v.clone()),
        };
        let why = format!("of the same bits as {}", type_name(twin));
        out.push(compare_through(cmp, t, &why, reread));
    }
    out.extend([Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a {name} select is one on the same bits as {}",
            type_name(twin)
        ),
        lhs: lhs.clone(),
        rhs: Term::Reinterpret {
            ty: t,
            arg: Box::new(op(
                "Select",
                twin,
                vec![
                    c.clone(),
                    Term::Reinterpret {
                        ty: twin,
                        arg: Box::new(x.clone()),
                    },
                    Term::Reinterpret {
                        ty: twin,
                        arg: Box::new(y.clone()),
                    },
                ],
            )),
        },
        conditions: vec![],
    }]);
    for m in [t, twin] {
        let ones = Term::constant(m, lane_value(m.elem, m.elem.mask()));
        let select = op("Select", m, vec![c.clone(), ones, Term::constant(m, 0)]);
        let mask = if m == t {
            select
        } else {
            Term::Reinterpret {
                ty: t,
                arg: Box::new(select),
            }
        };
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {name} select as bitwise by a {} mask", type_name(m)),
            lhs: lhs.clone(),
            rhs: op(
                "Or",
                t,
                vec![
                    op("And", t, vec![mask.clone(), x.clone()]),
                    op("And", t, vec![op("Not", t, vec![mask]), y.clone()]),
                ],
            ),
            conditions: vec![],
        });
    }
    out
}

/// Rewrites sound by construction, for `types` (in the order of their names): a conversion of a
/// concatenation is the concatenation of the converted halves, a constant is the widening cast
/// of the same value at a narrower type (so `u16(b_u8) * 2` is a widening multiply), and a
/// cast between types of one width is a free reinterpretation of the bits, as is a widening
/// cast next to its [`cast_twin`], and a cast more than doubling or halving the width goes
/// through its [`cast_midpoints`], and two widenings in a row are one ([`widenings_composed`]);
/// operators that move lanes ([`reshaping`]); a narrowing of
/// less than a register is the low half of the narrowing of the input concatenated with itself
/// (NEON's `xtn` of a 64-bit result); the comparisons and selects of
/// [`comparison_and_select_rewrites`]; 8-bit multiplies at 16 bits ([`wide_multiply`],
/// [`byte_multiply_in_words`]);
/// products of widened values by their even lanes ([`widened_product`]) and their high halves
/// by the even and odd lanes apart ([`high_half_by_even_and_odd`]), where the program wants
/// the multiply, and wide multiplies the target lacks by products of halves
/// ([`multiply_by_halves`]), the high word of unsigned ones from the signed
/// ([`unsigned_high_word_by_signed`]); conversions between f32 and integers
/// ([`float_conversions`]); the shifts, comparisons and conversions of `signedness.rs` that
/// the program
/// `wanted`; saturating sums and rounding shifts without the wide type ([`saturating_sums`],
/// [`rounding_shift_without_widening`]); and the operators the program `lacks` by others
/// ([`fallbacks`]; `masks`: comparisons make masks on the
/// target; `own`: the input's own operators; `direct`: the target's instructions).
pub fn generated(
    types: &[VecType],
    target: &Target,
    masks: bool,
    own: Own,
    wanted: Wanted,
    lacks: Lacks,
    direct: Direct,
) -> Vec<Rewrite> {
    let (register_bits, lane_layout) = (target.register_bits, target.lane_layout);
    let mut out = Vec::new();
    for &t in types {
        for &s in types {
            if s.lanes != t.lanes || t.lanes % 2 != 0 || s == t {
                continue;
            }
            let (th, sh) = (t.with_lanes(t.lanes / 2), s.with_lanes(s.lanes / 2));
            for conversion in ["Cast", "SatCast"] {
                let halves = [Term::Slot("a"), Term::Slot("b")];
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{conversion} to {} of a {} concatenation, by halves",
                        type_name(t),
                        type_name(s)
                    ),
                    lhs: op(conversion, t, vec![op("Concat", s, halves.to_vec())]),
                    rhs: op(
                        "Concat",
                        t,
                        halves
                            .iter()
                            .map(|h| op(conversion, th, vec![h.clone()]))
                            .collect(),
                    ),
                    conditions: vec![Condition::TypeOf(Term::Slot("a"), sh)],
                });
            }
        }
    }
    out.extend(truncation_rewrites(types, own));
    for &t in types {
        out.extend(reshaping(t, types, register_bits, lane_layout));
        out.extend(oversized_shifts(t));
        out.extend(types.iter().filter_map(|&s| shift_of_narrowing(s, t)));
        out.extend(shift_of_shift(t));
        out.extend(shifts_by_other_means(t));
        out.extend(multiply_by_shifts(t));
        out.extend(comparison_and_select_rewrites(t));
        if target.byte_predicates {
            out.extend(select_of_bytes(t));
            out.extend(logic_of_bytes(t));
        }
        out.extend(wide_multiply(t));
        out.extend(byte_multiply_in_words(t, lacks, register_bits));
        out.extend(multiply_by_halves(t, lacks));
        out.extend(high_bits_of_word_products(t, lacks));
        out.extend(unsigned_high_word_by_signed(t, lacks, direct));
        if !lane_layout && wanted("Mul", t, None) {
            out.extend(types.iter().filter_map(|&n| widened_product(t, n)));
            out.extend(types.iter().filter_map(|&n| product_as_pair_sum(t, n)));
            for &h in types {
                out.extend(high_half_by_even_and_odd(h, t));
            }
        }
        out.extend(signedness_rewrites(t, wanted));
        out.extend(fallbacks(t, types, masks, own, lacks, direct));
        out.extend(bool_logic(t, types, masks, own));
        out.extend(mask_bits(t, own, lacks));
        out.extend(weighted_mask_bits(t, register_bits, own, lacks, direct));
        out.extend(word_pairs(t, types, register_bits, lacks, direct));
        out.extend(popcount_rewrites(t, lacks, direct));
        out.extend(clz_rewrites(t, lacks, direct));
        for &w in types {
            out.extend(saturating_sums(t, w, own, lacks));
            out.extend(rounding_shift_without_widening(t, w, own));
            out.extend(product_bits_across_halves(t, w, own));
            out.extend(saturation_above_by_one(t, w, own));
            out.extend(halved_rounding_shift(t, w));
        }
    }
    for &t in types {
        for &s in types {
            out.extend(float_conversions(s, t, wanted, lacks));
            if !t.elem.is_int() || !s.elem.is_int() || s.lanes != t.lanes {
                continue;
            }
            out.extend(conversion_rewrites(s, t, wanted, direct));
            out.extend(types.iter().filter_map(|&m| widenings_composed(s, m, t)));
            let (tn, sn) = (type_name(t), type_name(s));
            let c = |ty| Term::Const {
                ty,
                value: Int::Slot("c"),
            };
            for conversion in ["Cast", "SatCast"] {
                for mid in cast_midpoints(s, t, conversion == "SatCast") {
                    out.push(Rewrite {
                        ruleset: Ruleset::Lower,
                        source: format!("{sn} to {tn} through {}", type_name(mid)),
                        lhs: op(conversion, t, vec![Term::Slot("x")]),
                        rhs: op(
                            conversion,
                            t,
                            vec![op(conversion, mid, vec![Term::Slot("x")])],
                        ),
                        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                    });
                }
            }
            // A saturating narrowing of 64-bit lanes to a value the midpoint holds (the bounds)
            // is that of its plain narrowing to the midpoint, which lifts:
            // `i16_sat((i64(a_i32) + 8) >> 4)` is `i16_sat(rounding_shr(a_i32, 4))`, NEON's
            // sqrshrn. (From narrower lanes it only grows the e-graph: HVX's
            // `u8_sat((i32(a_i16) + 8) / 16)` lost its `vasr:rnd:sat`.)
            let lifts = |m: &VecType| s.elem.bits() == 64 && m.elem.max_value() <= i64::MAX as i128;
            for mid in cast_midpoints(s, t, true).into_iter().filter(lifts) {
                let x = Term::Wildcard("x".into());
                let bound = |b: fn(String) -> Int, cmp, value| {
                    Condition::Compare(cmp, b("x".into()), Int::Lit(value))
                };
                out.push(Rewrite {
                    ruleset: Ruleset::Lift,
                    source: format!("{sn} to {tn} within {}", type_name(mid)),
                    lhs: op("SatCast", t, vec![x.clone()]),
                    rhs: op("SatCast", t, vec![op("Cast", mid, vec![x.clone()])]),
                    conditions: vec![
                        Condition::TypeOf(x.clone(), s),
                        bound(Int::Lo, Cmp::Ge, mid.elem.min_value()),
                        bound(Int::Hi, Cmp::Le, mid.elem.max_value()),
                    ],
                });
            }
            // A narrowing to less than a register: the low half of narrowing it twice over (of
            // a register, a pair of it, which narrows into one register as x86's packs do).
            let (s2, t2) = (s.with_lanes(2 * s.lanes), t.with_lanes(2 * t.lanes));
            if s.elem.bits() > t.elem.bits()
                && s2.bits() <= 2 * register_bits
                && t2.bits() <= register_bits
            {
                for conversion in ["Cast", "SatCast"] {
                    out.push(Rewrite {
                        ruleset: Ruleset::Lower,
                        source: format!(
                            "{sn} to {tn}, the low half of {} to {}",
                            type_name(s2),
                            type_name(t2)
                        ),
                        lhs: op(conversion, t, vec![Term::Slot("x")]),
                        rhs: Term::Lanes {
                            ty: t,
                            offset: 0,
                            arg: Box::new(op(
                                conversion,
                                t2,
                                vec![op("Concat", s2, vec![Term::Slot("x"), Term::Slot("x")])],
                            )),
                        },
                        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                    });
                }
            }
            // A narrowing of a whole register: the narrowing of the concatenation of its halves
            // (x86's packs take the two halves of a ymm register as two operands).
            if s.elem.bits() > t.elem.bits() && s.bits() == register_bits && s.lanes % 2 == 0 {
                let half = s.with_lanes(s.lanes / 2);
                let lanes = |offset| Term::Lanes {
                    ty: half,
                    offset,
                    arg: Box::new(Term::Slot("x")),
                };
                for conversion in ["Cast", "SatCast"] {
                    out.push(Rewrite {
                        ruleset: Ruleset::Lower,
                        source: format!("{sn} to {tn}, by the halves of {sn}"),
                        lhs: op(conversion, t, vec![Term::Slot("x")]),
                        rhs: op(
                            conversion,
                            t,
                            vec![op("Concat", s, vec![lanes(0), lanes(half.lanes as i64)])],
                        ),
                        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                    });
                }
            }
            // At the same signedness the twin is of the other one (`u64(x_u32)` is the bits of
            // `i64(x_u32)`), wanted where the target has no instruction for the cast itself.
            let twin = cast_twin(s, t).or_else(|| {
                let other = Elem::int(t.elem.bits(), !t.elem.is_signed())?;
                (s.elem.bits() != t.elem.bits() && wanted("Cast", t, Some(s)))
                    .then(|| t.with_elem(other))
            });
            if let Some(twin) = twin {
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{sn} to {tn} is the same bits as {sn} to {}",
                        type_name(twin)
                    ),
                    lhs: op("Cast", t, vec![Term::Slot("x")]),
                    rhs: Term::Reinterpret {
                        ty: t,
                        arg: Box::new(op("Cast", twin, vec![Term::Slot("x")])),
                    },
                    conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                });
            }
            if s.elem.bits() < t.elem.bits() && fits_i64(s.elem) {
                out.push(Rewrite {
                    ruleset: Ruleset::Lift,
                    source: format!("a {tn} constant that fits in {sn}"),
                    lhs: c(t),
                    rhs: op("Cast", t, vec![c(s)]),
                    conditions: vec![
                        Condition::Compare(Cmp::Ge, Int::Slot("c"), Int::Lit(s.elem.min_value())),
                        Condition::Compare(Cmp::Le, Int::Slot("c"), Int::Lit(s.elem.max_value())),
                    ],
                });
            } else if s.elem.bits() == t.elem.bits() && s != t {
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!("{sn} as {tn} is the same bits"),
                    lhs: op("Cast", t, vec![Term::Slot("x")]),
                    rhs: Term::Reinterpret {
                        ty: t,
                        arg: Box::new(Term::Slot("x")),
                    },
                    conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                });
            }
        }
    }
    out
}

/// Two widenings in a row, from `s` through `m` to `t`, as one: where `s` is unsigned both
/// extend by zeros, and where `m` is signed both by the sign of `s`'s value, so
/// `u64(u16(x_u8))` is `u64(x_u8)` (the sums of bytes `truncated_wider_sums` makes, which
/// `psadbw` computes) and `i64(i16(x_i8))` is `i64(x_i8)`; `u64(u16(x_i8))` is not.
fn widenings_composed(s: VecType, m: VecType, t: VecType) -> Option<Rewrite> {
    let ints = s.elem.is_int() && m.elem.is_int() && t.elem.is_int();
    let widening = s.elem.bits() < m.elem.bits() && m.elem.bits() < t.elem.bits();
    let same_lanes = s.lanes == m.lanes && m.lanes == t.lanes;
    if !ints || !widening || !same_lanes || s.elem.is_signed() && !m.elem.is_signed() {
        return None;
    }
    let x = Term::Slot("x");
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} to {} through {} in one",
            type_name(s),
            type_name(t),
            type_name(m)
        ),
        lhs: op("Cast", t, vec![op("Cast", m, vec![x.clone()])]),
        rhs: op("Cast", t, vec![x]),
        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
    })
}
