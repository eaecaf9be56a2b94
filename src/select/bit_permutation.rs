//! A permutation of the bits of every byte (NEON's `rbit`: the bits of a vector of bytes
//! shuffled, each output bit one of its own byte's, chosen alike in every byte) as the or of two
//! lookups in tables of 16 bytes, one at each byte's low four bits and one at its high four
//! (x86's `pshufb`; HVX has no such lookup and keeps the bits scalar): the table at a nibble
//! holds the bits that nibble gives.
//! Input-driven equalities, as widened shifts are (`per_lane_shifts::widened_shift_nodes`);
//! sound by construction, and every selection is proven.

use crate::ir::{Elem, Expr, Op, VecType};
use std::rc::Rc;

/// Every bit permutation of bytes in `inputs` with the or of the lookups of its nibbles, the
/// same value.
pub fn byte_bit_permutations(inputs: &[Rc<Expr>]) -> Vec<(Rc<Expr>, Rc<Expr>)> {
    let mut out = Vec::new();
    for input in inputs {
        input.walk_distinct(&mut |n| {
            if let Some(by_lookups) = nibble_lookups(n) {
                out.push((Rc::new(n.clone()), Rc::new(by_lookups)));
            }
        });
    }
    out
}

/// For each bit of a byte, the bit of the same byte `n` takes it from, where `n` reads the
/// bits of bytes `(bitcast T (shuffle idx (bitcast bool x)))` so, alike in every byte.
fn bit_sources(n: &Expr) -> Option<([u32; 8], &Rc<Expr>)> {
    let (Op::Bitcast(elem), [shuffled]) = (&n.op, n.args.as_slice()) else {
        return None;
    };
    let (Op::Shuffle(idx), [bits]) = (&shuffled.op, shuffled.args.as_slice()) else {
        return None;
    };
    let (Op::Bitcast(Elem::Bool), [x]) = (&bits.op, bits.args.as_slice()) else {
        return None;
    };
    if !elem.is_int() || elem.bits() != 8 || idx.len() as u32 != n.ty.bits() {
        return None;
    }
    let mut sources = [0; 8];
    sources.copy_from_slice(idx.get(..8)?);
    let alike = idx
        .iter()
        .enumerate()
        .all(|(o, &i)| i / 8 == o as u32 / 8 && i % 8 == sources[o % 8]);
    alike.then_some((sources, x))
}

/// `n`, a bit permutation of bytes, as `lookup(low, x & 15) | lookup(high, x >> 4)` on `x`'s
/// bytes read unsigned.
fn nibble_lookups(n: &Expr) -> Option<Expr> {
    let (sources, x) = bit_sources(n)?;
    let bytes = VecType::new(n.ty.lanes, Elem::U8);
    let unsigned = match x.ty == bytes {
        true => x.clone(),
        false => Rc::new(Expr::build(Op::Bitcast(Elem::U8), vec![x.clone()]).ok()?),
    };
    let splat = |v: u128| Rc::new(Expr::constant(bytes, vec![v]));
    let lookup = |nibble: u32, index: Expr| {
        let table = (0..16u32)
            .map(|v| {
                let bit = |j: usize| {
                    let s = sources[j];
                    (s / 4 == nibble && v >> (s % 4) & 1 == 1) as u128
                };
                (0..8).map(|j| bit(j) << j).sum()
            })
            .collect();
        let table = Rc::new(Expr::constant(VecType::new(16, Elem::U8), table));
        Expr::build(Op::Lookup, vec![table, Rc::new(index)])
    };
    let low = Expr::build(Op::And, vec![unsigned.clone(), splat(15)]).ok()?;
    let high = Expr::build(Op::Shr, vec![unsigned, splat(4)]).ok()?;
    let both = vec![
        Rc::new(lookup(0, low).ok()?),
        Rc::new(lookup(1, high).ok()?),
    ];
    let or = Expr::build(Op::Or, both).ok()?;
    match n.ty.elem {
        Elem::U8 => Some(or),
        elem => Expr::build(Op::Bitcast(elem), vec![Rc::new(or)]).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::{eval, Env, Value};

    /// NEON's `rbit` on 16 bytes.
    fn reversed_bits(elem: Elem) -> Expr {
        let x = Rc::new(Expr::var("a", VecType::new(16, elem)));
        let bits = Rc::new(Expr::build(Op::Bitcast(Elem::Bool), vec![x]).unwrap());
        let idx = (0..128).map(|i| 8 * (i / 8) + 7 - i % 8).collect();
        let shuffled = Rc::new(Expr::build(Op::Shuffle(idx), vec![bits]).unwrap());
        Expr::build(Op::Bitcast(elem), vec![shuffled]).unwrap()
    }

    #[test]
    fn reversed_bits_are_two_nibble_lookups_computing_the_same() {
        for elem in [Elem::U8, Elem::I8] {
            let n = reversed_bits(elem);
            let by_lookups = nibble_lookups(&n).expect("a bit permutation of bytes");
            assert_eq!(by_lookups.ty, n.ty);
            let mut env = Env::new();
            let lanes = (0..16).map(|i| (i * 37 + 11) & 0xff).collect();
            let ty = VecType::new(16, elem);
            env.insert("a".to_string(), Value { ty, lanes });
            let reversed: Vec<u128> = (0..16u8)
                .map(|i| u128::from((i * 37 + 11).reverse_bits()))
                .collect();
            assert_eq!(eval(&n, &env).unwrap().lanes, reversed);
            assert_eq!(eval(&by_lookups, &env).unwrap().lanes, reversed);
        }
    }

    #[test]
    fn a_shuffle_across_bytes_is_no_bit_permutation_of_bytes() {
        let x = Rc::new(Expr::var("a", VecType::new(2, Elem::U8)));
        let bits = Rc::new(Expr::build(Op::Bitcast(Elem::Bool), vec![x]).unwrap());
        let idx = (0..16).rev().collect();
        let shuffled = Rc::new(Expr::build(Op::Shuffle(idx), vec![bits]).unwrap());
        let n = Expr::build(Op::Bitcast(Elem::U8), vec![shuffled]).unwrap();
        assert!(nibble_lookups(&n).is_none());
    }
}
