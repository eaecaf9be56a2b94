//! Products, rewritten sound by construction: an 8-bit multiply as the low byte of a 16-bit
//! one, a product of widened values by their even lanes, and the high half of widened products
//! from the products of the even and odd lanes apart.

use super::fallback::{constant, Lacks, Own};
use super::term::{
    fits_i64, op, reinterpret, type_name, Cmp, Condition, Int, IntOp, Rewrite, Ruleset, Term,
};
use crate::ir::{Elem, VecType};

/// An 8-bit multiply is the low byte of the 16-bit multiply of its operands widened (the low
/// bits of a product depend only on the low bits of its factors): x86 has no 8-bit multiply
/// but `vpmovzxbw`, `vpmullw` and a pack.
pub fn wide_multiply(t: VecType) -> Vec<Rewrite> {
    let wide = match t.elem {
        Elem::U8 => Elem::U16,
        Elem::I8 => Elem::I16,
        _ => return vec![],
    };
    let w = VecType::new(t.lanes, wide);
    let widened = |slot| op("Cast", w, vec![Term::Slot(slot)]);
    vec![Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} multiply as the low half of a {} one",
            type_name(t),
            type_name(w)
        ),
        lhs: op("Mul", t, vec![Term::Slot("a"), Term::Slot("b")]),
        rhs: op(
            "Cast",
            t,
            vec![op("Mul", w, vec![widened("a"), widened("b")])],
        ),
        conditions: vec![],
    }]
}

/// An 8-bit multiply of an even number of lanes in 16-bit lanes, each holding two bytes: the
/// low byte of the 16-bit product is the even bytes' product, and the odd bytes' product is
/// the high byte of `(a >> 8) * (b & 0xff00)` (whose low byte is zero), so
/// `(a * b & 0x00ff) | (a >> 8) * (b & 0xff00)`; by a constant `c`, `(a * c & 0x00ff) |
/// (a & 0xff00) * c` with `c` in each 16-bit lane's low byte. Two `vpmullw` without widening or
/// packing, where the target lacks an 8-bit multiply (x86), for bytes filling a register or
/// more (fewer widen into one register, multiplied once: 16 bytes on AVX2 cost 11 so, 13-14
/// in words).
pub fn byte_multiply_in_words(t: VecType, lacks: Lacks, register_bits: u32) -> Vec<Rewrite> {
    let bytes = t.elem.is_int() && t.elem.bits() == 8 && t.lanes.is_multiple_of(2);
    if !bytes || t.bits() < register_bits || !lacks("Mul", t, None) {
        return vec![];
    }
    let w = VecType::new(t.lanes / 2, Elem::U16);
    let word = |slot| reinterpret(w, Term::Slot(slot));
    let masked = |v: Term, mask: i128| op("And", w, vec![v, constant(w, mask)]);
    let mul = |a: Term, b: Term| op("Mul", w, vec![a, b]);
    let or = |even: Term, odd: Term| reinterpret(t, op("Or", w, vec![even, odd]));
    let rewrite = |how: &str, lhs: Term, rhs: Term| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "{} multiply{how} as the even and odd bytes' {} multiplies",
            type_name(t),
            type_name(w)
        ),
        lhs,
        rhs,
        conditions: vec![],
    };
    let by_variable = or(
        masked(mul(word("a"), word("b")), 0x00ff),
        mul(
            op("Shr", w, vec![word("a"), constant(w, 8)]),
            masked(word("b"), 0xff00),
        ),
    );
    let c = Int::Bin(
        IntOp::And,
        Box::new(Int::Slot("c")),
        Box::new(Int::Lit(0xff)),
    );
    let by = || Term::Const {
        ty: w,
        value: c.clone(),
    };
    let by_constant = or(
        masked(mul(word("a"), by()), 0x00ff),
        mul(masked(word("a"), 0xff00), by()),
    );
    let a_times = |b: Term| op("Mul", t, vec![Term::Slot("a"), b]);
    let constant_c = Term::Const {
        ty: t,
        value: Int::Slot("c"),
    };
    vec![
        rewrite("", a_times(Term::Slot("b")), by_variable),
        rewrite(" by a constant", a_times(constant_c), by_constant),
    ]
}

/// A product of values of type `n` widened to `t` (lanes twice as wide) multiplies the even
/// lanes of the widened values' bits, read as `n` lanes, where each value is: x86's pmuludq
/// and pmuldq multiply the even 32-bit lanes of 64-bit lanes.
pub fn widened_product(t: VecType, n: VecType) -> Option<Rewrite> {
    let widening = t.lanes == n.lanes && t.elem.bits() == 2 * n.elem.bits();
    if !widening || !t.elem.is_int() || !n.elem.is_int() {
        return None;
    }
    let widened = |slot| op("Cast", t, vec![Term::Slot(slot)]);
    let evens = |slot| {
        let bits = reinterpret(n.with_lanes(2 * n.lanes), widened(slot));
        let lanes = Term::Op {
            name: "Slice",
            ty: n,
            params: vec![0, 2],
            args: vec![bits],
        };
        op("Cast", t, vec![lanes])
    };
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a product of {} widened to {} is one of the even lanes of their bits",
            type_name(n),
            type_name(t)
        ),
        lhs: op("Mul", t, vec![widened("a"), widened("b")]),
        rhs: op("Mul", t, vec![evens("a"), evens("b")]),
        conditions: vec![
            Condition::TypeOf(Term::Slot("a"), n),
            Condition::TypeOf(Term::Slot("b"), n),
        ],
    })
}

/// A product of signed values of type `n` widened to `t` (lanes twice as wide) is the sum of
/// the products of each value's lanes zero-extended and read as pairs of `n` lanes (the high
/// lane of each pair is zero): x86's pmaddwd sums such pairs of i16 products, where the i32
/// product of widened lanes is two sign extensions and a vpmulld (latency 10).
pub fn product_as_pair_sum(t: VecType, n: VecType) -> Option<Rewrite> {
    let widening = t.lanes == n.lanes && t.elem.bits() == 2 * n.elem.bits();
    if !widening || !t.elem.is_signed() || !n.elem.is_signed() || !n.elem.is_int() {
        return None;
    }
    let (un, ut) = (
        n.with_elem(Elem::int(n.elem.bits(), false)?),
        t.with_elem(Elem::int(t.elem.bits(), false)?),
    );
    let (n2, t2) = (n.with_lanes(2 * n.lanes), t.with_lanes(2 * t.lanes));
    let pairs = |slot| {
        let zero_extended = op("Cast", ut, vec![reinterpret(un, Term::Slot(slot))]);
        op("Cast", t2, vec![reinterpret(n2, zero_extended)])
    };
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a product of {} widened to {} is a sum of pairs of products, one of zeros",
            type_name(n),
            type_name(t)
        ),
        lhs: op(
            "Mul",
            t,
            vec![
                op("Cast", t, vec![Term::Slot("a")]),
                op("Cast", t, vec![Term::Slot("b")]),
            ],
        ),
        rhs: op(
            "ReduceAdd",
            t,
            vec![op("Mul", t2, vec![pairs("a"), pairs("b")])],
        ),
        conditions: vec![
            Condition::TypeOf(Term::Slot("a"), n),
            Condition::TypeOf(Term::Slot("b"), n),
        ],
    })
}

/// The high half (`t`) of products of values widened to `w` (twice their width), shifted right
/// by `c` of at least their width, from two products of half as many lanes: the even lanes'
/// products, and the odd lanes' moved down to the even ones (each 2-lane pair read as one lane
/// of `w`, shifted right by the width). Read as lanes of `w`, the result takes the high half of
/// each even product shifted down, and the high half of each odd product where it is, then the
/// rest of the shift (`c` minus the width). x86's pmuludq and pmuldq multiply the even 32-bit
/// lanes of 64-bit lanes; taking every product whole widens each half of the operands first
/// (AVX-512's vpmullq costs more than two vpmuludq).
pub fn high_half_by_even_and_odd(t: VecType, w: VecType) -> Vec<Rewrite> {
    let bits = t.elem.bits();
    let paired = w.lanes == t.lanes && t.lanes >= 2 && t.lanes.is_multiple_of(2);
    // 64-bit products only: a target has a whole 16- or 32-bit multiply (x86's pmulhw and
    // pmulld), and the extraction's tree costs can take the even and odd products of 16-bit
    // lanes for cheaper than they are (AVX2's `x_u16 / 3`: 30 -> 41).
    if !t.elem.is_int() || !w.elem.is_int() || w.elem.bits() != 64 || bits != 32 || !paired {
        return vec![];
    }
    let (Some(n), Some(unsigned), Some(signed)) = (
        Elem::int(bits, w.elem.is_signed()).map(|e| t.with_elem(e)),
        Elem::int(2 * bits, false),
        Elem::int(2 * bits, true),
    ) else {
        return vec![];
    };
    let pairs = |e: Elem| VecType::new(t.lanes / 2, e);
    let (uw, sw, hw) = (pairs(unsigned), pairs(signed), pairs(w.elem));
    let product = |a: Term, b: Term, w: VecType| {
        op(
            "Mul",
            w,
            vec![op("Cast", w, vec![a]), op("Cast", w, vec![b])],
        )
    };
    let shifted =
        |name, v: Term, ty: VecType, by: Int| op(name, ty, vec![v, Term::Const { ty, value: by }]);
    let width = Int::Lit(bits as i128);
    let evens = |v: Term| Term::Op {
        name: "Slice",
        ty: t.with_elem(n.elem).with_lanes(t.lanes / 2),
        params: vec![0, 2],
        args: vec![v],
    };
    let odds_down = |slot| {
        let down = shifted("Shr", reinterpret(uw, Term::Slot(slot)), uw, width.clone());
        evens(reinterpret(n, down))
    };
    let even = product(evens(Term::Slot("a")), evens(Term::Slot("b")), hw);
    let odd = product(odds_down("a"), odds_down("b"), hw);
    let high_of_even = shifted("Shr", reinterpret(uw, even), uw, width.clone());
    let high_of_odd = reinterpret(
        uw,
        shifted("And", reinterpret(sw, odd), sw, Int::Lit(-(1i128 << bits))),
    );
    let joined = reinterpret(n, op("Or", uw, vec![high_of_even, high_of_odd]));
    let source = format!(
        "the high half of {} products from {} products of the even and odd lanes",
        type_name(w),
        type_name(hw)
    );
    let high_half = |by: Int| {
        op(
            "Cast",
            t,
            vec![shifted(
                "Shr",
                product(Term::Slot("a"), Term::Slot("b"), w),
                w,
                by,
            )],
        )
    };
    let as_t = |v: Term| if n == t { v } else { reinterpret(t, v) };
    let operands = vec![
        Condition::TypeOf(Term::Slot("a"), n),
        Condition::TypeOf(Term::Slot("b"), n),
    ];
    let c = Int::Slot("c");
    let rest = Int::Bin(IntOp::Sub, Box::new(c.clone()), Box::new(width.clone()));
    let beyond = [
        Condition::Compare(Cmp::Gt, c.clone(), width.clone()),
        Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(2 * bits as i128)),
    ];
    // The odd lanes of a constant moved down: its lanes' value (it is the same in every lane).
    let v = Int::Slot("v");
    let lane_mask = Int::Lit((1i128 << bits) - 1);
    let splat_read_wide = reinterpret(
        uw,
        Term::Const {
            ty: n,
            value: v.clone(),
        },
    );
    vec![
        Rewrite {
            ruleset: Ruleset::Lower,
            source: source.clone(),
            lhs: high_half(width.clone()),
            rhs: as_t(joined.clone()),
            conditions: operands.clone(),
        },
        Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{source}, shifted further"),
            lhs: high_half(c),
            rhs: as_t(shifted("Shr", joined, n, rest)),
            conditions: operands.into_iter().chain(beyond).collect(),
        },
        Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("the odd lanes of a {} constant, moved down", type_name(n)),
            lhs: shifted("Shr", splat_read_wide, uw, width),
            rhs: Term::Const {
                ty: uw,
                value: Int::Bin(IntOp::And, Box::new(v), Box::new(lane_mask)),
            },
            conditions: vec![],
        },
    ]
}

/// A multiply of 32- or 64-bit lanes the target has no instruction for, from products of
/// half-width parts: with `x = lo(x) + hi(x) << h`, modulo `2^2h`
/// `x * y = lo(x) * lo(y) + (lo(x) * hi(y) + hi(x) * lo(y)) << h`, each product of values
/// within `h` bits: x86's `pmuludq` (a part is the even lane of the bits read as `h`-bit lanes,
/// of `x >> h` for the high part), NEON's `umull` (a part is a truncation, `xtn` and `shrn`).
/// And, as Hexagon multiplies words by halfwords, `x * y = x * lo(y) + (x's low half * y's high
/// half) << h`, where the second product's halves may be read signed (only its low `h` bits
/// count): `vmpyieo` then `vmpyie` accumulating. Only for operands that may not fit in `h` bits
/// (their upper bound, a fact of the bounds analysis, is above), so that the products of parts
/// are not split again.
pub fn multiply_by_halves(t: VecType, lacks: Lacks) -> Vec<Rewrite> {
    let bits = t.elem.bits();
    if !t.elem.is_int() || !matches!(bits, 32 | 64) || !lacks("Mul", t, None) {
        return vec![];
    }
    // No bounds at a type whose values do not all fit in an i64 (u64): without them the parts'
    // products would be split again (unconditionally at the signed twin, the e-graph of
    // AVX2's `mul_shr(x_u32, y_u32, 31)` passed its budget).
    if !fits_i64(t.elem) {
        return vec![];
    }
    let (a, b) = (Term::Wildcard("a".into()), Term::Wildcard("b".into()));
    let wide = Int::Lit((1i128 << (bits / 2)) - 1);
    let conditions = vec![
        Condition::Compare(Cmp::Gt, Int::Hi("a".into()), wide.clone()),
        Condition::Compare(Cmp::Gt, Int::Hi("b".into()), wide),
    ];
    products_of_halves(t, &a, &b)
        .into_iter()
        .map(|(rhs, how)| Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("a {} multiply from {how}", type_name(t)),
            lhs: op("Mul", t, vec![a.clone(), b.clone()]),
            rhs,
            conditions: conditions.clone(),
        })
        .collect()
}

/// `a * b` at `t` by products of half-width parts, in the three forms of
/// [`multiply_by_halves`], each with what it multiplies.
fn products_of_halves(t: VecType, a: &Term, b: &Term) -> Vec<(Term, &'static str)> {
    let bits = t.elem.bits();
    let h = bits / 2;
    let (Some(unsigned), Some(half), Some(signed_half)) = (
        Elem::int(bits, false),
        Elem::int(h, false),
        Elem::int(h, true),
    ) else {
        return vec![];
    };
    let mul = |a: Term, b: Term| op("Mul", t, vec![a, b]);
    let by_h = |ty: VecType| Term::Const {
        ty,
        value: Int::Lit(h as i128),
    };
    let down = |v: &Term| {
        let u = t.with_elem(unsigned);
        op("Shr", u, vec![reinterpret(u, v.clone()), by_h(u)])
    };
    // Lane `which` of each pair of `e` lanes of `v`'s bits, and the truncation to `half`, each
    // extended to `t`.
    let lane = |which: i64, e: Elem, v: Term| pair_lane(t, which, e, v);
    let truncated = |v: Term| op("Cast", t, vec![op("Cast", t.with_elem(half), vec![v])]);
    let shifted_up = |v: Term| op("Shl", t, vec![v, by_h(t)]);
    let by_parts = |part: &dyn Fn(Term) -> Term| {
        let (low, high) = (|v: &Term| part(v.clone()), |v: &Term| part(down(v)));
        let cross = op("Add", t, vec![mul(low(a), high(b)), mul(high(a), low(b))]);
        op("Add", t, vec![mul(low(a), low(b)), shifted_up(cross)])
    };
    let signed_parts = mul(
        lane(0, signed_half, a.clone()),
        lane(1, signed_half, b.clone()),
    );
    let by_low_half = op(
        "Add",
        t,
        vec![
            shifted_up(signed_parts),
            mul(a.clone(), lane(0, half, b.clone())),
        ],
    );
    vec![
        (
            by_parts(&|v| lane(0, half, v)),
            "products of the even lanes of its halves",
        ),
        (by_parts(&truncated), "products of its truncated halves"),
        (by_low_half, "a product by its low half and one of halves"),
    ]
}

/// Lane `which` (0 or 1) of each pair of `e` lanes of `v`'s bits, extended to `t` (as many
/// lanes as the pairs): a halfword of each word.
fn pair_lane(t: VecType, which: i64, e: Elem, v: Term) -> Term {
    let part = Term::Op {
        name: "Slice",
        ty: t.with_elem(e),
        params: vec![which, 2],
        args: vec![reinterpret(VecType::new(2 * t.lanes, e), v)],
    };
    op("Cast", t, vec![part])
}

/// The high bits of products of words sign-extended to 64 bits (`t`), shifted right by `c` of
/// at least 16 (after a bias `r` of whole multiples of `2^16`, as a rounding adds): with
/// `y = odd(y) << 16 + even(y)` (its odd halfword signed, its even one unsigned),
/// `(x * y + r) >> c` is exactly `(x * odd(y) + (x * even(y)) >> 16 + r >> 16) >> (c - 16)`,
/// where `(x * even(y)) >> 16` fits a word. Hexagon, without 64-bit products, multiplies words
/// by even unsigned halfwords shifted down (`vmpye`) and accumulates the odd ones'
/// (`vmpyo:<<1:sat:shift`, `:rnd` with the bias): `mul_shr(x_i32, y_i32, 31)` and
/// `rounding_mul_shr(x_i32, y_i32, 31)` in two instructions.
pub fn high_bits_of_word_products(t: VecType, lacks: Lacks) -> Vec<Rewrite> {
    if t.elem != Elem::I64 || !lacks("Mul", t, None) {
        return vec![];
    }
    let word = t.with_elem(Elem::I32);
    let (x, y, c, r) = (
        Term::Slot("x"),
        Term::Slot("y"),
        Int::Slot("c"),
        Int::Slot("r"),
    );
    let constant = |value| Term::Const { ty: t, value };
    let wide = |v: Term| op("Cast", t, vec![v]);
    let halfword = |which: i64, e: Elem| pair_lane(t, which, e, y.clone());
    let by = |h: Term| op("Mul", t, vec![wide(x.clone()), h]);
    let even = op(
        "Cast",
        word,
        vec![op(
            "Shr",
            t,
            vec![by(halfword(0, Elem::U16)), constant(Int::Lit(16))],
        )],
    );
    let sum = op("Add", t, vec![wide(even), by(halfword(1, Elem::I16))]);
    let product = op("Mul", t, vec![wide(x.clone()), wide(y.clone())]);
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let rest = constant(bin(IntOp::Sub, c.clone(), Int::Lit(16)));
    let conditions = vec![
        Condition::TypeOf(x.clone(), word),
        Condition::TypeOf(y.clone(), word),
        Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(16)),
        Condition::Compare(Cmp::Lt, c.clone(), Int::Lit(64)),
    ];
    let name = type_name(t);
    let word_of_high_bits = high_bits_by_high_word(
        t,
        "Cast",
        &product,
        vec![
            Condition::TypeOf(x.clone(), word),
            Condition::TypeOf(y.clone(), word),
        ],
    );
    let biased = op("Add", t, vec![product.clone(), constant(r.clone())]);
    let bias = constant(bin(IntOp::Shr, r.clone(), Int::Lit(16)));
    vec![
        word_of_high_bits,
        Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("the high bits of {name} products of words, by their halfwords"),
            lhs: op("Shr", t, vec![product, constant(c.clone())]),
            rhs: op("Shr", t, vec![sum.clone(), rest.clone()]),
            conditions: conditions.clone(),
        },
        Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("the high bits of {name} products of words biased, by their halfwords"),
            lhs: op("Shr", t, vec![biased, constant(c)]),
            rhs: op("Shr", t, vec![op("Add", t, vec![sum, bias]), rest]),
            conditions: conditions
                .into_iter()
                .chain([
                    Condition::Compare(Cmp::Ge, r.clone(), Int::Lit(0)),
                    Condition::Compare(Cmp::Eq, bin(IntOp::And, r, Int::Lit(0xffff)), Int::Lit(0)),
                ])
                .collect(),
        },
    ]
}

/// A word of the bits of `product` (64-bit lanes, `t`, a product of words, which `operands`
/// say) from bit `c` beyond 32, narrowed by `conversion` (plain or saturating: it fits a
/// word): the high word shifted by the rest.
pub fn high_bits_by_high_word(
    t: VecType,
    conversion: &'static str,
    product: &Term,
    operands: Vec<Condition>,
) -> Rewrite {
    let word = t.with_elem(if t.elem.is_signed() {
        Elem::I32
    } else {
        Elem::U32
    });
    let c = Int::Slot("c");
    let shifted = |by: Int| {
        op(
            "Shr",
            t,
            vec![product.clone(), Term::Const { ty: t, value: by }],
        )
    };
    let rest = Term::Const {
        ty: word,
        value: Int::Bin(IntOp::Sub, Box::new(c.clone()), Box::new(Int::Lit(32))),
    };
    Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a word of the high bits of {} products of words, by the high word",
            type_name(t)
        ),
        lhs: op(conversion, word, vec![shifted(c.clone())]),
        rhs: op(
            "Shr",
            word,
            vec![op("Cast", word, vec![shifted(Int::Lit(32))]), rest],
        ),
        conditions: operands
            .into_iter()
            .chain([
                Condition::Compare(Cmp::Gt, c.clone(), Int::Lit(32)),
                Condition::Compare(Cmp::Lt, c, Int::Lit(64)),
            ])
            .collect(),
    }
}

/// The bits of products of halfwords `t` widened to `w` (twice as wide) from bit `c`
/// (between 1 and `t`'s width `h`, less one) cut to `t`, where the input narrows to `t`: the high
/// half's low bits above the low half's high bits, `(high << (h - c)) | (low >>> c)` with the
/// logical shift of the low half's bits. The bits below `2h` depend on the factors' low `h`
/// bits only, so either signedness: x86's `pmulhw` and `pmullw` for
/// `mul_shift_right(x_i16, y_i16, 15)`, where a product whole takes two widenings, two
/// `pmaddwd` and a pack per register.
pub fn product_bits_across_halves(t: VecType, w: VecType, own: Own) -> Option<Rewrite> {
    let h = t.elem.bits();
    // Of words (`mul_shift_right(x_i32, y_i32, 31)`, scalarized on AVX2 without this) the
    // high word takes products of even and odd lanes apart, and the corpus's e-graphs grew past
    // the budget (AVX2's split into 7 programs instead of 5, 30% slower): halfwords only.
    let twice = w.lanes == t.lanes && w.elem.bits() == 2 * h && h == 16;
    let same_kind = w.elem.is_signed() == t.elem.is_signed();
    let unsigned = t.with_elem(t.elem.unsigned()?);
    // A saturating narrowing may go through the plain one ([`super::saturating`]).
    let narrows = own("Cast", t) || own("SatCast", t);
    if !twice || !w.elem.is_int() || !same_kind || !narrows {
        return None;
    }
    let (x, y, c) = (Term::Slot("x"), Term::Slot("y"), Int::Slot("c"));
    let wide = |v: &Term| op("Cast", w, vec![v.clone()]);
    let product = op("Mul", w, vec![wide(&x), wide(&y)]);
    let bits_from = |from: Int| {
        let shifted = op(
            "Shr",
            w,
            vec![product.clone(), Term::Const { ty: w, value: from }],
        );
        op("Cast", t, vec![shifted])
    };
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let up = Term::Const {
        ty: t,
        value: bin(IntOp::Sub, Int::Lit(h as i128), c.clone()),
    };
    let high = op("Shl", t, vec![bits_from(Int::Lit(h as i128)), up]);
    let low_bits = op("Mul", t, vec![x.clone(), y.clone()]);
    let down = Term::Const {
        ty: unsigned,
        value: c.clone(),
    };
    let low = match t.elem.is_signed() {
        true => reinterpret(
            t,
            op("Shr", unsigned, vec![reinterpret(unsigned, low_bits), down]),
        ),
        false => op("Shr", t, vec![low_bits, down]),
    };
    Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "bits of {} products cut to {} across the halves",
            type_name(w),
            type_name(t)
        ),
        lhs: bits_from(c.clone()),
        rhs: op("Or", t, vec![high, low]),
        conditions: vec![
            Condition::TypeOf(x, t),
            Condition::TypeOf(y, t),
            Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(1)),
            Condition::Compare(Cmp::Lt, c, Int::Lit(h as i128)),
        ],
    })
}
