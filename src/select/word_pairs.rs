//! 64-bit lanes on a target without them (HVX), as pairs of 32-bit words: a lane's bits are its
//! low word at an even word and its high word at the next, so a value's low words are the even
//! words of its bits and its high words the odd ones, and two vectors of words interleaved are
//! the bits of 64-bit lanes again. Sound by construction (each selection is proven):
//! - a sum is the sum of the low words and of the high words plus the carry out of the low
//!   ones (the low sum below an operand); a difference borrows where the low words' does;
//! - `==` holds where both words are equal, `<` where the high words compare so (signed for
//!   signed lanes) or are equal and the low words compare so unsigned;
//! - a select picks both words by the same condition;
//! - a 32-bit value widened is its words beside zeros or beside its sign (shifted in);
//! - a product of signed 32-bit values widened is the low words' product beside the high word
//!   of the 64-bit product (which `products.rs` computes by halfwords);
//! - a truncation to 32 bits is the low words;
//! - a saturating narrowing to 32 bits keeps the low word where the high word is only its
//!   extension, and the bound the lane passes elsewhere;
//! - a shift by a constant moves bits between the words.
//!
//! Each is made only where the target has no 64-bit lane arithmetic and the program lacks the
//! operator at that type. The 64-bit lanes of one register have words of half a register each,
//! which the target computes on no better than a whole one: there each operator is the low lanes
//! of the same operator on its operands doubled (each beside itself), whose words fill registers.

use super::fallback::{constant, rewrite, Lacks};
use super::signedness::Direct;
use super::term::{op, reinterpret, type_name, Cmp, Condition, Int, IntOp, Rewrite, Term};
use crate::ir::{Elem, VecType};
use std::collections::BTreeSet;

/// Whether the target has no 64-bit lane arithmetic.
fn without_64_bit_lanes(direct: Direct) -> bool {
    [Elem::U64, Elem::I64]
        .iter()
        .all(|e| !direct("Add", *e, *e))
}

/// The types [`word_pairs`] computes 64-bit lanes of one register at, on a target without
/// 64-bit lanes: each type of their lane count at twice the lanes, and the words.
pub fn register_pairs(
    types: &BTreeSet<VecType>,
    register_bits: u32,
    direct: Direct,
) -> Vec<VecType> {
    if !without_64_bit_lanes(direct) {
        return Vec::new();
    }
    let one_register =
        |t: &&VecType| t.elem.is_int() && t.elem.bits() == 64 && t.bits() == register_bits;
    let mut out = Vec::new();
    for t in types.iter().filter(one_register) {
        let doubled = 2 * t.lanes;
        out.extend(
            types
                .iter()
                .filter(|s| s.lanes == t.lanes)
                .map(|s| s.with_lanes(doubled)),
        );
        out.extend([Elem::U32, Elem::I32, Elem::Bool].map(|e| VecType::new(doubled, e)));
        out.push(VecType::new(2 * doubled, Elem::U32));
    }
    out
}

/// The words of 64-bit lanes of type `t`.
struct Words {
    t: VecType,
    /// `2N x u32`: the bits.
    bits: VecType,
    /// `N x u32`: one word of each lane.
    word: VecType,
    /// `N x i32`: a word read signed.
    signed: VecType,
    /// `N x bool`: a condition on the lanes.
    flags: VecType,
}

impl Words {
    fn of(t: VecType) -> Words {
        Words {
            t,
            bits: VecType::new(2 * t.lanes, Elem::U32),
            word: t.with_elem(Elem::U32),
            signed: t.with_elem(Elem::I32),
            flags: t.with_elem(Elem::Bool),
        }
    }

    /// The low (`which` 0) or high (1) words of `x`.
    fn word(&self, x: Term, which: i64) -> Term {
        Term::Op {
            name: "Slice",
            ty: self.word,
            params: vec![which, 2],
            args: vec![reinterpret(self.bits, x)],
        }
    }

    fn low(&self, x: &'static str) -> Term {
        self.word(Term::Slot(x), 0)
    }

    fn high(&self, x: &'static str) -> Term {
        self.word(Term::Slot(x), 1)
    }

    /// The 64-bit lanes whose words are `low` and `high`.
    fn join(&self, low: Term, high: Term) -> Term {
        reinterpret(self.t, op("Interleave", self.bits, vec![low, high]))
    }

    fn word_op(&self, name: &'static str, args: Vec<Term>) -> Term {
        op(name, self.word, args)
    }

    fn flag(&self, name: &'static str, a: Term, b: Term) -> Term {
        op(name, self.flags, vec![a, b])
    }

    fn number(&self, value: i128) -> Term {
        constant(self.word, value)
    }

    /// 1 where `c` holds, else 0.
    fn one_where(&self, c: Term) -> Term {
        self.word_op("Select", vec![c, self.number(1), self.number(0)])
    }

    /// `w` read signed where the lanes are signed.
    fn as_lanes_sign(&self, w: Term) -> Term {
        match self.t.elem.is_signed() {
            true => reinterpret(self.signed, w),
            false => w,
        }
    }

    /// `w` shifted right arithmetically by 31: all ones where its top bit is set.
    fn sign_of(&self, w: Term) -> Term {
        reinterpret(
            self.word,
            op(
                "Shr",
                self.signed,
                vec![reinterpret(self.signed, w), constant(self.signed, 31)],
            ),
        )
    }
}

/// The rewrites of 64-bit lanes of type `t` into words, where `direct` shows the target has
/// no 64-bit lane arithmetic; for lanes filling one register of `register_bits`, into the same
/// operators on operands doubled.
pub fn word_pairs(
    t: VecType,
    types: &[VecType],
    register_bits: u32,
    lacks: Lacks,
    direct: Direct,
) -> Vec<Rewrite> {
    if !t.elem.is_int() || t.elem.bits() != 64 || !without_64_bit_lanes(direct) {
        return Vec::new();
    }
    // Words of less than a register are computed on no better than whole ones; lanes of more
    // than two registers go by their halves (an interleaving of words fills two registers).
    if t.bits() < register_bits || t.bits() > 2 * register_bits {
        return Vec::new();
    }
    let by_words = by_words(t, types, lacks);
    if t.bits() > register_bits {
        return by_words;
    }
    // Not comparisons nor selects: bool lanes of half a register's predicate are not the
    // predicate of a register of half as many lanes (HVX's Q holds a flag per byte). A minimum
    // or maximum (a select by a comparison) is one on doubled operands instead. Nor widenings:
    // a value of half a register widened is better left to the target's own widenings of whole
    // registers (the doubled widening made HVX's `psadbw` port dearer, its interleave of words
    // left unlowered).
    let extremes = ["Min", "Max"]
        .into_iter()
        .filter(|name| lacks(name, t, Some(t)))
        .map(|name| {
            let lhs = op(name, t, vec![Term::Slot("a"), Term::Slot("b")]);
            on_doubled(&format!("{name} of {}", type_name(t)), &lhs, &[], t)
        });
    by_words
        .iter()
        .filter(|r| !reads_or_makes_bools(&r.lhs) && !is_cast(&r.lhs) && on_operands(&r.lhs))
        .map(|r| on_doubled(&r.source, &r.lhs, &r.conditions, t))
        .chain(extremes)
        .collect()
}

/// Whether `lhs` is a select, or makes bool lanes.
fn reads_or_makes_bools(lhs: &Term) -> bool {
    let mut bools = false;
    lhs.typed_heads(&mut |_, ty| bools |= ty.elem == Elem::Bool);
    bools || matches!(lhs, Term::Op { name: "Select", .. })
}

/// Whether `lhs` is an operator on its operands as they are (slots or constants), not on
/// values computed from them.
fn on_operands(lhs: &Term) -> bool {
    let Term::Op { args, .. } = lhs else {
        return false;
    };
    args.iter()
        .all(|a| matches!(a, Term::Slot(_) | Term::Const { .. }))
}

/// Whether `lhs` is a conversion (not a saturating one).
fn is_cast(lhs: &Term) -> bool {
    matches!(lhs, Term::Op { name: "Cast", .. })
}

/// The rewrite of `lhs` (an operator of type `t` over generated slots and constants) into the
/// low lanes of its operator on doubled operands (each beside itself): a slot's type is its
/// `TypeOf` condition's, else `t`.
fn on_doubled(source: &str, lhs: &Term, conditions: &[Condition], t: VecType) -> Rewrite {
    let slot_type = |slot: &str| {
        conditions
            .iter()
            .find_map(|c| match c {
                Condition::TypeOf(Term::Slot(s), ty) if *s == slot => Some(*ty),
                _ => None,
            })
            .unwrap_or(t)
    };
    let twice = |ty: VecType| ty.with_lanes(2 * ty.lanes);
    let Term::Op {
        name,
        ty,
        params,
        args,
    } = lhs
    else {
        unreachable!("word rewrites match an operator");
    };
    let args = args
        .iter()
        .map(|a| match a {
            Term::Slot(s) => op("Concat", twice(slot_type(s)), vec![a.clone(), a.clone()]),
            Term::Const { ty, value } => numeral(twice(*ty), value.clone()),
            other => other.clone(),
        })
        .collect();
    let doubled = Term::Op {
        name,
        ty: twice(*ty),
        params: params.clone(),
        args,
    };
    rewrite(
        format!("{source}, on its operands doubled"),
        lhs.clone(),
        Term::Lanes {
            ty: *ty,
            offset: 0,
            arg: Box::new(doubled),
        },
        conditions.to_vec(),
    )
}

/// The rewrites of 64-bit lanes of type `t` into words.
fn by_words(t: VecType, types: &[VecType], lacks: Lacks) -> Vec<Rewrite> {
    let w = Words::of(t);
    let name = type_name(t);
    let mut out = Vec::new();
    let mut add = |what: &str, lhs: Term, rhs: Term, conditions: Vec<Condition>| {
        out.push(rewrite(
            format!("{name} {what}, by 32-bit words"),
            lhs,
            rhs,
            conditions,
        ))
    };
    let (a, b) = (Term::Slot("a"), Term::Slot("b"));
    for (name, what) in [("Add", "sum"), ("Sub", "difference")] {
        if !lacks(name, t, Some(t)) {
            continue;
        }
        let low = w.word_op(name, vec![w.low("a"), w.low("b")]);
        // A carry where the low sum is below an operand; a borrow where the first low word is
        // below the second.
        let carried = match name {
            "Add" => w.flag("Lt", low.clone(), w.low("a")),
            _ => w.flag("Lt", w.low("a"), w.low("b")),
        };
        let high = w.word_op(
            name,
            vec![
                w.word_op(name, vec![w.high("a"), w.high("b")]),
                w.one_where(carried),
            ],
        );
        add(
            what,
            op(name, t, vec![a.clone(), b.clone()]),
            w.join(low, high),
            vec![],
        );
    }
    let equal = |x: &'static str, y: &'static str| {
        op(
            "And",
            w.flags,
            vec![
                w.flag("Eq", w.low(x), w.low(y)),
                w.flag("Eq", w.high(x), w.high(y)),
            ],
        )
    };
    if lacks("Eq", w.flags, Some(t)) {
        add(
            "equality",
            w.flag("Eq", a.clone(), b.clone()),
            equal("a", "b"),
            vec![Condition::TypeOf(a.clone(), t)],
        );
    }
    for (cmp, (x, y)) in [("Lt", ("a", "b")), ("Gt", ("b", "a"))] {
        if lacks(cmp, w.flags, Some(t)) {
            let high_below = w.flag("Lt", w.as_lanes_sign(w.high(x)), w.as_lanes_sign(w.high(y)));
            let low_below = op(
                "And",
                w.flags,
                vec![
                    w.flag("Eq", w.high(x), w.high(y)),
                    w.flag("Lt", w.low(x), w.low(y)),
                ],
            );
            add(
                &format!("comparison {cmp}"),
                w.flag(cmp, a.clone(), b.clone()),
                op("Or", w.flags, vec![high_below, low_below]),
                vec![Condition::TypeOf(a.clone(), t)],
            );
        }
    }
    if lacks("Select", t, None) {
        let c = Term::Slot("c");
        let pick = |word: fn(&Words, &'static str) -> Term| {
            w.word_op("Select", vec![c.clone(), word(&w, "a"), word(&w, "b")])
        };
        add(
            "select",
            op("Select", t, vec![c.clone(), a.clone(), b.clone()]),
            w.join(pick(Words::low), pick(Words::high)),
            vec![],
        );
    }
    out.extend(widenings(&w, lacks));
    out.extend(products_of_words(&w, lacks));
    out.extend(types.iter().flat_map(|&n| narrowings(&w, n, lacks)));
    out.extend(types.iter().flat_map(|&n| truncation(&w, n, lacks)));
    out.extend(constant_shifts(&w, lacks));
    out
}

/// The splat of `value` at `ty`.
fn numeral(ty: VecType, value: Int) -> Term {
    Term::Const { ty, value }
}

/// A 32-bit value widened to `w.t`: beside zeros, or beside its sign where it is signed.
fn widenings(w: &Words, lacks: Lacks) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for from in [Elem::U32, Elem::I32] {
        let s = w.t.with_elem(from);
        if !lacks("Cast", w.t, Some(s)) {
            continue;
        }
        let x = reinterpret(w.word, Term::Slot("x"));
        let high = match from.is_signed() {
            true => w.sign_of(x.clone()),
            false => w.number(0),
        };
        out.push(rewrite(
            format!("{} to {}, by 32-bit words", type_name(s), type_name(w.t)),
            op("Cast", w.t, vec![Term::Slot("x")]),
            w.join(x, high),
            vec![Condition::TypeOf(Term::Slot("x"), s)],
        ));
    }
    out
}

/// A product of 32-bit values widened to `w.t` (both signed at `i64`, both unsigned at `u64`):
/// the low words' product, wrapping, beside the high word, the 64-bit product shifted right by
/// 32 and cut to a word (`products.rs` computes a signed one by halfwords: Hexagon's `vmpye`,
/// then `vmpyo` accumulating into a pair; `unsigned_high.rs` an unsigned one from the signed
/// one). Also of a value by a constant that fits a word (a division's product by its magic
/// number), the constant's word standing for the second factor. A selection's proof cuts the
/// input's 64-bit product at these two words (`semantics/cut_points.rs`), so that z3 meets the
/// high word alone.
fn products_of_words(w: &Words, lacks: Lacks) -> Vec<Rewrite> {
    if !lacks("Mul", w.t, Some(w.t)) {
        return Vec::new();
    }
    let factor = match w.t.elem {
        Elem::I64 => w.signed,
        _ => w.word,
    };
    let (x, y, c) = (
        Term::Wildcard("x".into()),
        Term::Wildcard("y".into()),
        Int::Slot("c"),
    );
    let wide = |v: &Term| op("Cast", w.t, vec![v.clone()]);
    // The words at `w.word` (reinterpreted where the factors are signed).
    let as_word = |v: Term| match factor == w.word {
        true => v,
        false => reinterpret(w.word, v),
    };
    // `x` times `second` (the input's second factor), its word `y`.
    let words = |y: Term, second: Term, conditions: Vec<Condition>, what: &str| {
        let low = w.word_op("Mul", vec![as_word(x.clone()), as_word(y.clone())]);
        let product = op("Mul", w.t, vec![wide(&x), wide(&y)]);
        let shifted = op("Shr", w.t, vec![product, constant(w.t, 32)]);
        let high = as_word(op("Cast", factor, vec![shifted]));
        let lhs = op("Mul", w.t, vec![wide(&x), second]);
        let source = format!("{} product of {what}, by 32-bit words", type_name(w.t));
        rewrite(source, lhs, w.join(low, high), conditions)
    };
    let varying = |v: &str| {
        vec![
            Condition::TypeOf(Term::Wildcard(v.into()), factor),
            Condition::Compare(Cmp::Lt, Int::Lo(v.into()), Int::Hi(v.into())),
        ]
    };
    let within = vec![
        Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(factor.elem.min_value())),
        Condition::Compare(Cmp::Le, c.clone(), Int::Lit(factor.elem.max_value())),
    ];
    vec![
        words(
            y.clone(),
            wide(&y),
            [varying("x"), varying("y")].concat(),
            "words",
        ),
        words(
            numeral(factor, c.clone()),
            numeral(w.t, c),
            [vec![Condition::TypeOf(x.clone(), factor)], within].concat(),
            "a word and a constant",
        ),
    ]
}

/// A truncation of `w.t` to 32-bit lanes of type `n`: the low words (HVX's `vdeal` of the
/// lanes' words, where a 64-bit product computed by words is its low words already).
fn truncation(w: &Words, n: VecType, lacks: Lacks) -> Option<Rewrite> {
    if n.lanes != w.t.lanes || !n.elem.is_int() || n.elem.bits() != 32 {
        return None;
    }
    if !lacks("Cast", n, Some(w.t)) {
        return None;
    }
    Some(rewrite(
        format!("{} to {}, its low words", type_name(w.t), type_name(n)),
        op("Cast", n, vec![Term::Slot("x")]),
        reinterpret(n, w.low("x")),
        vec![Condition::TypeOf(Term::Slot("x"), w.t)],
    ))
}

/// A saturating narrowing of `w.t` to 32-bit lanes of type `n`: the low word where the high
/// word is its extension at `n`'s signedness, else the bound the lane passes.
fn narrowings(w: &Words, n: VecType, lacks: Lacks) -> Option<Rewrite> {
    if n.lanes != w.t.lanes || !n.elem.is_int() || n.elem.bits() != 32 {
        return None;
    }
    if !lacks("SatCast", n, Some(w.t)) {
        return None;
    }
    let (low, high) = (w.low("x"), w.high("x"));
    let extension = match n.elem.is_signed() {
        true => w.sign_of(low.clone()),
        false => w.number(0),
    };
    // Within the range: the high word is the low word's extension, and where the lanes are
    // unsigned and the narrowing signed, the low word's top bit is clear too.
    let within = w.flag("Eq", high.clone(), extension);
    let within = match (w.t.elem.is_signed(), n.elem.is_signed()) {
        (false, true) => op(
            "And",
            w.flags,
            vec![within, w.flag("Eq", w.sign_of(low.clone()), w.number(0))],
        ),
        _ => within,
    };
    let (min, max) = (n.elem.min_value(), n.elem.max_value());
    // Outside it, signed lanes below zero take the lower bound.
    let bound = match w.t.elem.is_signed() {
        true => w.word_op(
            "Select",
            vec![
                w.flag("Lt", reinterpret(w.signed, high), constant(w.signed, 0)),
                w.number(min),
                w.number(max),
            ],
        ),
        false => w.number(max),
    };
    Some(rewrite(
        format!("{} to {}, by 32-bit words", type_name(w.t), type_name(n)),
        op("SatCast", n, vec![Term::Slot("x")]),
        reinterpret(n, w.word_op("Select", vec![within, low, bound])),
        vec![Condition::TypeOf(Term::Slot("x"), w.t)],
    ))
}

/// Shifts of `w.t` by a constant `c` below 64 (and above 0): bits cross from one word to the
/// other by `32 - c`, and by 32 or more one word moves into the other.
fn constant_shifts(w: &Words, lacks: Lacks) -> Vec<Rewrite> {
    let c = Int::Slot("c");
    let bin = |o, a: Int, b: Int| Int::Bin(o, Box::new(a), Box::new(b));
    let by = |amount: Int| numeral(w.word, amount);
    let shift = |name, x: Term, amount: Int| w.word_op(name, vec![x, by(amount)]);
    let signed_shift = |x: Term, amount: Int| {
        reinterpret(
            w.word,
            op(
                "Shr",
                w.signed,
                vec![reinterpret(w.signed, x), numeral(w.signed, amount)],
            ),
        )
    };
    let rest = bin(IntOp::Sub, Int::Lit(32), c.clone());
    let beyond = bin(IntOp::Sub, c.clone(), Int::Lit(32));
    let range = |lo: i128, hi: i128| {
        vec![
            Condition::Compare(Cmp::Ge, c.clone(), Int::Lit(lo)),
            Condition::Compare(Cmp::Le, c.clone(), Int::Lit(hi)),
        ]
    };
    let (low, high) = (w.low("x"), w.high("x"));
    let or = |a, b| w.word_op("Or", vec![a, b]);
    let signed = w.t.elem.is_signed();
    // The high word shifted right, arithmetically for signed lanes.
    let high_right = |amount: Int| match signed {
        true => signed_shift(high.clone(), amount),
        false => shift("Shr", high.clone(), amount),
    };
    let mut cases = Vec::new();
    if lacks("Shl", w.t, Some(w.t)) {
        cases.push((
            "Shl",
            range(1, 31),
            shift("Shl", low.clone(), c.clone()),
            or(
                shift("Shl", high.clone(), c.clone()),
                shift("Shr", low.clone(), rest.clone()),
            ),
        ));
        cases.push((
            "Shl",
            range(32, 63),
            w.number(0),
            shift("Shl", low.clone(), beyond.clone()),
        ));
    }
    if lacks("Shr", w.t, Some(w.t)) {
        cases.push((
            "Shr",
            range(1, 31),
            or(
                shift("Shr", low.clone(), c.clone()),
                shift("Shl", high.clone(), rest.clone()),
            ),
            high_right(c.clone()),
        ));
        cases.push((
            "Shr",
            range(32, 63),
            high_right(beyond.clone()),
            match signed {
                true => w.sign_of(high.clone()),
                false => w.number(0),
            },
        ));
    }
    cases
        .into_iter()
        .map(|(name, conditions, low, high)| {
            rewrite(
                format!("{} {name} by a constant, by 32-bit words", type_name(w.t)),
                op(name, w.t, vec![Term::Slot("x"), numeral(w.t, c.clone())]),
                w.join(low, high),
                conditions,
            )
        })
        .collect()
}
