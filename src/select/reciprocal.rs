//! f32 division by a power of two is the product by its reciprocal: both are the one real
//! `x * 2^-k` rounded once, so they are the same f32 for every `x` (NaN, infinities, zeros and
//! subnormal results alike), and a multiply takes a fraction of a divide's latency (`divps` 11,
//! `mulps` 4 on AVX2; `fdiv` 10, `fmul` 3 on NEON). A product by a power of two is likewise the
//! division by its reciprocal, the form of NEON's fixed-point conversions (`vcvtq_n_f32_s32`
//! is the conversion divided by `2^n`).

use super::encode::fold;
use super::fallback::rewrite;
use super::term::{lane_value, op, type_name, Rewrite, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::BTreeSet;
use std::rc::Rc;

/// For every f32 type among `types` and every power of two some input divides by (multiplies
/// by): the division by it is the product by its reciprocal (the product the division).
pub fn reciprocal_products(inputs: &[Rc<Expr>], types: &BTreeSet<VecType>) -> Vec<Rewrite> {
    let mut constants = BTreeSet::new();
    for input in inputs {
        input.walk(&mut |n| {
            let operation = match n.op {
                Op::Div => "Div",
                Op::Mul => "Mul",
                _ => return,
            };
            if n.ty.elem == Elem::F32 {
                if let Ok(bits) = fold(&n.args[1]) {
                    constants.insert((operation, bits as u32));
                }
            }
        });
    }
    let x = Term::Slot("x");
    let mut out = Vec::new();
    for &(operation, bits) in &constants {
        let Some(reciprocal) = exact_reciprocal(f32::from_bits(bits)) else {
            continue;
        };
        let (other, word, other_word) = match operation {
            "Div" => ("Mul", "division", "product"),
            _ => ("Div", "product", "division"),
        };
        for &t in types.iter().filter(|t| t.elem == Elem::F32) {
            let lane = |v: f32| Term::constant(t, lane_value(Elem::F32, v.to_bits().into()));
            out.push(rewrite(
                format!(
                    "{word} by {} at {} is the {other_word} by {reciprocal}",
                    f32::from_bits(bits),
                    type_name(t),
                ),
                op(operation, t, vec![x.clone(), lane(f32::from_bits(bits))]),
                op(other, t, vec![x.clone(), lane(reciprocal)]),
                vec![],
            ));
        }
    }
    out
}

/// `1 / c` where `c` and it are both normal powers of two (so the reciprocal is exact).
fn exact_reciprocal(c: f32) -> Option<f32> {
    let power_of_two = |v: f32| v.is_normal() && v.to_bits() & 0x007f_ffff == 0;
    let reciprocal = 1.0 / c;
    (power_of_two(c) && power_of_two(reciprocal)).then_some(reciprocal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_powers_of_two_with_a_normal_reciprocal_have_an_exact_one() {
        assert_eq!(exact_reciprocal(4.0), Some(0.25));
        assert_eq!(exact_reciprocal(-0.5), Some(-2.0));
        assert_eq!(exact_reciprocal(3.0), None);
        assert_eq!(exact_reciprocal(0.0), None);
        assert_eq!(exact_reciprocal(f32::INFINITY), None);
        // 2^127's reciprocal 2^-127 is subnormal.
        assert_eq!(exact_reciprocal(f32::from_bits(0x7f00_0000)), None);
        assert_eq!(
            exact_reciprocal(f32::from_bits(0x7e80_0000)),
            Some(f32::from_bits(0x0080_0000))
        );
    }
}
