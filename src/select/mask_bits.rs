//! The bits of a bool vector (x86's `pmovmskb`: one bit per lane, lane 0 the lowest) where the
//! target has no instruction for them, by shifts and adds on byte lanes, sound by construction:
//! each lane becomes a byte of 0 or 1, and three rounds of `x + (x >> k)` at 16, 32 and 64 bits
//! (`k` = 7, 14, 28) gather the eight bytes of each 64-bit lane into the bits of its low byte
//! (the bits added never overlap, so the adds are ors); the low bytes of the 64-bit lanes, read
//! together, are the bits. NEON does it with `ushr #7`, three `usra` and a lane insert.
//! A few bool lanes (at most eight, the bits of the low lanes of a byte whose other lanes are
//! zero: x86's `movmskps`) are also the sum of their lanes' weights, 1 << i in lane i, selected
//! at lanes of any width up to a register (the sums never carry): NEON's `cmlt`, `and` and
//! `addv` on the 32-bit lanes the mask came from.

use super::fallback::{self, constant, Lacks, Own};
use super::signedness::Direct;
use super::term::{op, reinterpret, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// The rounds of the gathering: the lanes added to themselves shifted right by so many bits.
pub const GATHER_ROUNDS: [(Elem, i64); 3] = [(Elem::U16, 7), (Elem::U32, 14), (Elem::U64, 28)];

/// `(Bitcast t c)` of a bool vector `c` of `t.bits()` lanes (a multiple of eight, at most 64)
/// as its lanes gathered into bytes, and the same of a concatenation of two bool vectors as
/// each one's bytes gathered apart (registers of half as many lanes), where the input has that
/// bitcast and the target lacks it.
pub fn mask_bits(t: VecType, own: Own, lacks: Lacks) -> Vec<Rewrite> {
    let lanes = t.bits();
    let bools = VecType::new(lanes, Elem::Bool);
    if !t.elem.is_int()
        || !lanes.is_multiple_of(8)
        || lanes > 64
        || !own("Bitcast", t)
        || !lacks("Bitcast", t, Some(bools))
    {
        return Vec::new();
    }
    // `bits` holds the bits at type `ty`; the bool operand `c` has `c_lanes` lanes.
    let rewrite = |what: String, lhs: Term, bits: Term, ty: VecType, c, c_lanes| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "the bits of {what} as {}, gathered by shifts and adds",
            type_name(t)
        ),
        lhs,
        rhs: match ty == t {
            true => bits,
            false => reinterpret(t, bits),
        },
        conditions: vec![Condition::TypeOf(
            Term::Slot(c),
            VecType::new(c_lanes, Elem::Bool),
        )],
    };
    let mut out = vec![rewrite(
        format!("{lanes} bool lanes"),
        op("Bitcast", t, vec![Term::Slot("c")]),
        gathered_bytes(Term::Slot("c"), lanes),
        VecType::new(lanes / 8, Elem::U8),
        "c",
        lanes,
    )];
    if let Some(half) = Elem::int(lanes / 2, false).filter(|_| lanes >= 16) {
        // Each half's bits as one lane, so that a lane insert joins them.
        let half_bits = |h: Term| match half == Elem::U8 {
            true => gathered_bytes(h, lanes / 2),
            false => reinterpret(VecType::new(1, half), gathered_bytes(h, lanes / 2)),
        };
        let both = VecType::new(2, half);
        out.push(rewrite(
            format!("two concatenated vectors of {} bool lanes", lanes / 2),
            op(
                "Bitcast",
                t,
                vec![op("Concat", bools, vec![Term::Slot("a"), Term::Slot("b")])],
            ),
            op(
                "Concat",
                both,
                vec![half_bits(Term::Slot("a")), half_bits(Term::Slot("b"))],
            ),
            both,
            "a",
            lanes / 2,
        ));
    }
    // A byte of 0 or 1 where a signed byte is negative is its top bit (`ushr #7`): movemask's
    // own question, at the lanes of the whole vector and of its halves.
    let halves = if lanes >= 16 {
        vec![lanes, lanes / 2]
    } else {
        vec![lanes]
    };
    for n in halves {
        let (bytes, signed) = (VecType::new(n, Elem::U8), VecType::new(n, Elem::I8));
        let x = Term::Slot("x");
        let negative = op(
            "Lt",
            VecType::new(n, Elem::Bool),
            vec![x.clone(), constant(signed, 0)],
        );
        out.push(fallback::rewrite(
            format!(
                "a {} select of 1 where a byte is negative is its top bit",
                type_name(bytes)
            ),
            op(
                "Select",
                bytes,
                vec![negative, constant(bytes, 1), constant(bytes, 0)],
            ),
            op(
                "Shr",
                bytes,
                vec![reinterpret(bytes, x.clone()), constant(bytes, 7)],
            ),
            vec![Condition::TypeOf(x, signed)],
        ));
    }
    out
}

/// `(Bitcast t c)` of a bool vector of `t.bits()` lanes, at most eight of them set (all, or the
/// low `k` lanes of a concatenation whose high lanes are the constant 0), as the sum of the lanes'
/// weights (1 << i in lane i) selected at unsigned lanes of each width up to `register_bits`
/// whose sums the target has an instruction for (`direct`), where the input has that bitcast
/// and the target lacks it.
pub fn weighted_mask_bits(
    t: VecType,
    register_bits: u32,
    own: Own,
    lacks: Lacks,
    direct: Direct,
) -> Vec<Rewrite> {
    let lanes = t.bits();
    let bools = VecType::new(lanes, Elem::Bool);
    if !t.elem.is_int()
        || !(8..=64).contains(&lanes)
        || !own("Bitcast", t)
        || !lacks("Bitcast", t, Some(bools))
    {
        return Vec::new();
    }
    let c = Term::Slot("c");
    let mut out = Vec::new();
    let set_lanes = std::iter::successors(Some(2), |k| Some(k * 2)).take_while(|&k| k <= 8);
    for k in set_lanes.filter(|&k| k <= lanes) {
        let lhs = match k == lanes {
            true => op("Bitcast", t, vec![c.clone()]),
            false => op(
                "Bitcast",
                t,
                vec![op(
                    "Concat",
                    bools,
                    vec![c.clone(), constant(VecType::new(lanes - k, Elem::Bool), 0)],
                )],
            ),
        };
        for elem in [Elem::U8, Elem::U16, Elem::U32, Elem::U64] {
            let weighted = VecType::new(k, elem);
            if weighted.bits() > register_bits || !direct("ReduceAdd", elem, elem) {
                continue;
            }
            let selected = op(
                "Select",
                weighted,
                vec![c.clone(), weights(weighted, 0), constant(weighted, 0)],
            );
            let sum = op("ReduceAdd", weighted.with_lanes(1), vec![selected]);
            out.push(fallback::rewrite(
                format!(
                    "the bits of {k} bool lanes as {}, their weights summed at {}",
                    type_name(t),
                    type_name(weighted)
                ),
                lhs.clone(),
                low_bits(t, sum, elem.bits()),
                vec![Condition::TypeOf(c.clone(), VecType::new(k, Elem::Bool))],
            ));
        }
    }
    out
}

/// The low bits of the one-lane `value` of `bits` bits as the one-lane type `t`: the value
/// itself, zero-extended, or its low lane read at `t`'s width (a sum below 256 fits any).
fn low_bits(t: VecType, value: Term, bits: u32) -> Term {
    let width = t.elem.bits();
    match bits.cmp(&width) {
        std::cmp::Ordering::Equal => reinterpret(t, value),
        std::cmp::Ordering::Less => op("Cast", t, vec![value]),
        std::cmp::Ordering::Greater => Term::Op {
            name: "Slice",
            ty: t,
            params: vec![0, 1],
            args: vec![reinterpret(VecType::new(bits / width, t.elem), value)],
        },
    }
}

/// The constant of type `ty` whose lane i is 1 << (first + i), as concatenated splats.
fn weights(ty: VecType, first: u32) -> Term {
    match ty.lanes {
        1 => constant(ty, 1 << first),
        n => {
            let half = ty.with_lanes(n / 2);
            op(
                "Concat",
                ty,
                vec![weights(half, first), weights(half, first + n / 2)],
            )
        }
    }
}

/// The bits of the bool vector `c` of `lanes` lanes, eight to a byte: `lanes / 8` bytes.
fn gathered_bytes(c: Term, lanes: u32) -> Term {
    let bytes = VecType::new(lanes, Elem::U8);
    let mut gathered = op(
        "Select",
        bytes,
        vec![c, constant(bytes, 1), constant(bytes, 0)],
    );
    for (elem, shift) in GATHER_ROUNDS {
        let wide = VecType::new(lanes * 8 / elem.bits(), elem);
        let x = reinterpret(wide, gathered);
        let shifted = op("Shr", wide, vec![x.clone(), constant(wide, shift.into())]);
        gathered = op("Add", wide, vec![x, shifted]);
    }
    // Byte 0 of every 64-bit lane (the stride of one lane is no matter).
    let stride = if lanes == 8 { 1 } else { 8 };
    Term::Op {
        name: "Slice",
        ty: VecType::new(lanes / 8, Elem::U8),
        params: vec![0, stride],
        args: vec![reinterpret(bytes, gathered)],
    }
}
