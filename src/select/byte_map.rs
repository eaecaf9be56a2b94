//! Byte maps: where each byte of an expression's value comes from, for expressions that only
//! move their operands' bytes (a shuffle, a shift of whole bytes, an insert, a blend at constant
//! positions). The interpreter computes them: each operand's bytes in turn are tagged with
//! distinct values (twice, in opposite orders; the other operands zero), and every output byte
//! must carry the same source byte both times, and again on random bytes.

use crate::ir::{Elem, Expr, VecType};
use crate::semantics::{eval, Env, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Where each byte of a value comes from: (operand, byte), or zero.
pub type ByteMap = Vec<Option<(u8, u16)>>;

/// The byte map of `e` over `operands`, if `e` only moves their bytes.
pub fn byte_map(e: &Expr, operands: &[(String, VecType)]) -> Option<ByteMap> {
    byte_map_with(e, operands, &Env::new())
}

/// The byte map of `e` over `operands` with its other variables bound in `fixed`, if `e` only
/// moves the operands' bytes.
pub fn byte_map_with(e: &Expr, operands: &[(String, VecType)], fixed: &Env) -> Option<ByteMap> {
    let sizes: Vec<usize> = operands
        .iter()
        .map(|(_, t)| (t.bits() / 8) as usize)
        .collect();
    let total: usize = sizes.iter().sum();
    // f32 lanes move as their bits (moves copy values, NaNs' bits included).
    let bits = |t: &VecType| (t.elem.is_int() || t.elem == Elem::F32) && t.bits().is_multiple_of(8);
    let moved = operands.iter().all(|(_, t)| bits(t));
    // Each operand's bytes are tagged 1 to its size, so an operand has fewer than 255.
    if total == 0 || sizes.iter().any(|&n| n >= 255) || !moved || !bits(&e.ty) {
        return None;
    }
    let run = |byte: &dyn Fn(usize, usize) -> u8| -> Option<Vec<u8>> {
        let mut env = fixed.clone();
        for (k, ((name, ty), &n)) in operands.iter().zip(&sizes).enumerate() {
            let bytes: Vec<u8> = (0..n).map(|i| byte(k, i)).collect();
            env.insert(name.clone(), Value::from_bytes(*ty, &bytes));
        }
        Some(eval(e, &env).ok()?.to_bytes())
    };
    // One operand at a time tagged (twice, in opposite orders), the others zero: a byte of the
    // result holding a tag the same way both times comes from that byte of the operand.
    let mut map: ByteMap = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let up = run(&|o, i| if o == k { (i + 1) as u8 } else { 0 })?;
        // Tags run from 1 to `n`: a byte above is computed (no need to tag the other way).
        if up.iter().any(|&b| b as usize > n) {
            return None;
        }
        let down = run(&|o, i| if o == k { (n - i) as u8 } else { 0 })?;
        map.resize(up.len(), None);
        for ((slot, &a), &b) in map.iter_mut().zip(&up).zip(&down) {
            match (a, b) {
                (0, 0) => {}
                // A byte from two operands, or not one byte of this one: computed.
                (0, _) | (_, 0) => return None,
                _ if slot.is_some() || n.checked_sub(b as usize) != Some(a as usize - 1) => {
                    return None
                }
                _ => *slot = Some((k as u8, a as u16 - 1)),
            }
        }
    }
    // The tags alone do not show value-dependent operators (`x == y` is false on distinct
    // tags): the map must also hold on random bytes, on every operand holding the same, and on
    // all-ones bytes, where every f32 lane is a NaN (random ones rarely are: x86's unordered
    // comparison looked like a constant zero, which the reals, where no lane is a NaN, prove).
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let random: Vec<u8> = (0..total).map(|_| rng.gen()).collect();
    let offsets: Vec<usize> = sizes
        .iter()
        .scan(0, |at, n| Some(std::mem::replace(at, *at + n)))
        .collect();
    for fill in [Fill::Random, Fill::Same, Fill::Ones] {
        let byte = |i: usize| {
            let k = offsets.iter().rposition(|&o| o <= i).unwrap_or(0);
            match fill {
                Fill::Random => random[i],
                Fill::Same => random[i - offsets[k]],
                Fill::Ones => 0xff,
            }
        };
        let out = run(&|k, i| byte(offsets[k] + i))?;
        let follows = map.iter().zip(&out).all(|(m, &b)| match m {
            None => b == 0,
            Some((k, j)) => b == byte(offsets[*k as usize] + *j as usize),
        });
        if !follows {
            return None;
        }
    }
    Some(map)
}

/// The bytes a byte map is checked on besides the tags.
enum Fill {
    Random,
    /// Every operand the same random bytes.
    Same,
    Ones,
}

/// Whether `input` only moves the bytes of its variables (a shuffle, a shift of whole bytes,
/// an insert, a blend at constant positions).
pub fn only_moves_bytes(input: &Expr) -> bool {
    byte_map(input, &input.vars()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;
    use std::collections::HashMap;

    fn map(text: &str) -> Option<ByteMap> {
        let e = elaborate_expression(text, "test", &Macros::default(), 4, &HashMap::new()).unwrap();
        byte_map(&e, &e.vars())
    }

    #[test]
    fn byte_maps_follow_moved_bytes_and_reject_computation() {
        // Lanes 1 and 0 of a, then lane 0 of b: bytes 2-3, 0-1 of a, 0-1 of b.
        let m = map("(shuffle (1 0 4 0) (var a <4 x i16>) (var b <4 x i16>))").unwrap();
        let expected: ByteMap = [
            (0, 2),
            (0, 3),
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (0, 0),
            (0, 1),
        ]
        .into_iter()
        .map(Some)
        .collect();
        assert_eq!(m, expected);
        // Zeros shifted in.
        let z = map("(concat (const <2 x u8> 0) (slice 0 1 2 (var a <4 x u8>)))").unwrap();
        assert_eq!(z, vec![None, None, Some((0, 0)), Some((0, 1))]);
        // Operands of 128 bytes each (HVX registers): tagged one at a time, 256 bytes map.
        let pair = map("(concat (var a <128 x u8>) (var b <128 x u8>))").unwrap();
        assert_eq!(
            (pair[0], pair[127], pair[128]),
            (Some((0, 0)), Some((0, 127)), Some((1, 0)))
        );
        assert_eq!(map("(or (var a <128 x u8>) (var b <128 x u8>))"), None);
        // Comparisons and arithmetic depend on the values, not only on where bytes go.
        assert_eq!(map("(select (eq (var a <4 x u8>) (var b <4 x u8>)) (var a <4 x u8>) (const <4 x u8> 0))"), None);
        assert_eq!(map("(add (var a <4 x u8>) (var b <4 x u8>))"), None);
        // An unordered f32 comparison is zero unless a lane is a NaN: not a constant.
        let unordered = "(select (not (eq (var a <4 x f32>) (var a <4 x f32>))) (const <4 x u32> 4294967295) (const <4 x u32> 0))";
        assert_eq!(map(unordered), None);
    }
}
