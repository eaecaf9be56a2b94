//! Bit counts a target has no instruction for at a type, by others, sound by construction.
//! Population counts:
//! - where it counts the bits of narrower lanes (NEON's `cnt` of bytes, HVX's `vpopcount` of
//!   halfwords), the count of a lane is the sum of its parts' counts (`cnt` + `uaddlp`);
//! - where it counts the bits of lanes twice as wide, the count of a lane is the truncated
//!   count of the lane zero-extended (HVX's bytes);
//! - anywhere, the bit-slicing count: pairs, nibbles, then bytes summed by shifts (x86 has no
//!   vector population count before AVX-512).
//!
//! Leading zeros: where the target counts them in lanes twice as wide, the count of the lane
//! zero-extended less the added width; anywhere, the population count of the complement of the
//! lane with every bit below its leading one set (`x | x >> 1 | x >> 2 ...`).

use super::fallback::{constant, Lacks};
use super::signedness::Direct;
use super::term::{op, reinterpret, type_name, Rewrite, Ruleset, Term};
use crate::ir::{Elem, VecType};

/// The rewrites of a population count at integer type `t` where the program `lacks` it.
pub fn popcount_rewrites(t: VecType, lacks: Lacks, has: Direct) -> Vec<Rewrite> {
    let Some(u) = lacked_count(t, "Popcount", lacks) else {
        return vec![];
    };
    let bits = t.elem.bits();
    let x = Term::Slot("x");
    let as_u = |v: Term| if u == t { v } else { reinterpret(u, v) };
    let as_t = |v: Term| if u == t { v } else { reinterpret(t, v) };
    let rewrite = |how: &str, rhs: Term| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("popcount at {} {how}", type_name(t)),
        lhs: op("Popcount", t, vec![x.clone()]),
        rhs: as_t(rhs),
        conditions: vec![],
    };
    let mut out = Vec::new();
    if slicing_pays(t.lanes) {
        out.push(rewrite("by bit slicing", bit_slicing(u, as_u(x.clone()))));
    }
    // The narrowest lanes the target counts: `cnt` of bytes summed by `uaddlp` on NEON.
    let narrower = [8, 16, 32]
        .into_iter()
        .filter(|&n| n < bits)
        .filter_map(|n| Elem::int(n, false))
        .find(|&n| counts(has, "Popcount", n));
    if let Some(n) = narrower {
        let parts = t.lanes * (bits / n.bits());
        let counts = op(
            "Popcount",
            VecType::new(parts, n),
            vec![reinterpret(VecType::new(parts, n), x.clone())],
        );
        let widened = op("Cast", u.with_lanes(parts), vec![counts]);
        out.push(rewrite(
            "as the sums of its parts' counts",
            op("ReduceAdd", u, vec![widened]),
        ));
    }
    let double = Elem::int(2 * bits, false).filter(|d| counts(has, "Popcount", *d));
    if let Some(d) = double {
        let wide = t.with_elem(d);
        let counts = op(
            "Popcount",
            wide,
            vec![op("Cast", wide, vec![as_u(x.clone())])],
        );
        out.push(rewrite(
            "as the count of the lane widened",
            op("Cast", u, vec![counts]),
        ));
    }
    out
}

/// The unsigned type of integer type `t` (at most 64 bits) where the program lacks the bit
/// count `name` at `t`.
fn lacked_count(t: VecType, name: &'static str, lacks: Lacks) -> Option<VecType> {
    let bits = t.elem.bits();
    if !t.elem.is_int() || bits > 64 || !lacks(name, t, None) {
        return None;
    }
    Some(t.with_elem(Elem::int(bits, false)?))
}

/// Whether bit slicing (13 to 17 instructions, and 6 to 12 more for leading zeros) pays against
/// `lanes` scalar lanes (about 4 each): from 8 lanes. Extraction counts a scalarized operator as
/// dearer than any instruction sequence, so where it does not pay it is not offered (AVX2's
/// `clz(a_u64)`: 30 against 16 scalar; NEON's 4-lane `vclzq_u32` ported to AVX2: 26 against 16).
fn slicing_pays(lanes: u32) -> bool {
    lanes >= 8
}

/// Whether the target has the bit count `name` at lanes of `n`'s width, at either signedness
/// (a bit count is the same at both).
fn counts(has: Direct, name: &'static str, n: Elem) -> bool {
    [false, true]
        .into_iter()
        .filter_map(|signed| Elem::int(n.bits(), signed))
        .any(|e| has(name, e, e))
}

/// The rewrites of a count of leading zeros at integer type `t` where the program `lacks` it.
pub fn clz_rewrites(t: VecType, lacks: Lacks, has: Direct) -> Vec<Rewrite> {
    let Some(u) = lacked_count(t, "Clz", lacks) else {
        return vec![];
    };
    let bits = t.elem.bits();
    let x = if u == t {
        Term::Slot("x")
    } else {
        reinterpret(u, Term::Slot("x"))
    };
    let as_t = |v: Term| if u == t { v } else { reinterpret(t, v) };
    let rewrite = |how: &str, rhs: Term| Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("clz at {} {how}", type_name(t)),
        lhs: op("Clz", t, vec![Term::Slot("x")]),
        rhs: as_t(rhs),
        conditions: vec![],
    };
    let mut out = Vec::new();
    if slicing_pays(t.lanes) {
        let mut smeared = x.clone();
        for k in bit_slicing_shifts(bits) {
            let shifted = op("Shr", u, vec![smeared.clone(), constant(u, k as i128)]);
            smeared = op("Or", u, vec![smeared, shifted]);
        }
        let leading = op("Xor", u, vec![smeared, constant(u, -1)]);
        out.push(rewrite(
            "as the population count of the bits above the leading one",
            op("Popcount", u, vec![leading]),
        ));
    }
    if let Some(d) = Elem::int(2 * bits, false).filter(|d| counts(has, "Clz", *d)) {
        let wide = t.with_elem(d);
        let count = op("Clz", wide, vec![op("Cast", wide, vec![x])]);
        out.push(rewrite(
            "as the count of the lane widened, less the added width",
            op(
                "Sub",
                u,
                vec![op("Cast", u, vec![count]), constant(u, bits as i128)],
            ),
        ));
    }
    out
}

/// The amounts [`bit_slicing`] shifts lanes of `bits` bits right by (shifts by immediates
/// are instructions only for the amounts a program lists).
pub fn bit_slicing_shifts(bits: u32) -> impl Iterator<Item = i64> {
    (0..bits.max(2).ilog2()).map(|k| 1i64 << k)
}

/// The population count of unsigned `x` of type `u` by bit slicing: the counts of pairs of bits,
/// of nibbles, of bytes, then the bytes' counts summed by shifts and masked. Sums, differences
/// and masks at the signed type of the width (x86 has them there: `psubb` is of i8 lanes), the
/// shifts logical; every shifted value is masked or holds counts too small to reach the sign.
fn bit_slicing(u: VecType, x: Term) -> Term {
    let bits = u.elem.bits();
    let s = u.with_elem(Elem::int(bits, true).unwrap_or(u.elem));
    let repeated = |byte: i128| (0..bits / 8).fold(0i128, |v, _| (v << 8) | byte);
    let and = |a: Term, mask: i128| op("And", s, vec![a, constant(s, mask)]);
    let shr = |a: Term, by: u32| {
        reinterpret(
            s,
            op("Shr", u, vec![reinterpret(u, a), constant(u, by as i128)]),
        )
    };
    let add = |a: Term, b: Term| op("Add", s, vec![a, b]);
    let x = reinterpret(s, x);
    let pairs = op("Sub", s, vec![x.clone(), and(shr(x, 1), repeated(0x55))]);
    let nibbles = add(
        and(pairs.clone(), repeated(0x33)),
        and(shr(pairs, 2), repeated(0x33)),
    );
    let mut count = and(add(nibbles.clone(), shr(nibbles, 4)), repeated(0x0f));
    let mut width = 8;
    while width < bits {
        count = add(count.clone(), shr(count, width));
        width *= 2;
    }
    if bits > 8 {
        count = and(count, 0xff);
    }
    reinterpret(u, count)
}
