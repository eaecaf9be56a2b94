//! The constants an instruction's scalar operands (immediates, scalar registers) are
//! instantiated at in a program: those of the inputs and those their rewrites call for.

use super::mask_bits::GATHER_ROUNDS;
use super::popcount::bit_slicing_shifts;
use super::term::lane_value;
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::BTreeSet;
use std::rc::Rc;

/// The count of the one right shift that `n`, a right shift by a constant of a right shift by a
/// constant (or of its narrowing), is.
fn joined_shift_count(n: &Expr) -> Option<i64> {
    let count = |e: &Expr| match (&e.op, e.args.get(1).map(|a| &a.op)) {
        (Op::Shr, Some(Op::Const(v))) if v.len() == 1 => Some(lane_value(e.ty.elem, v[0])),
        _ => None,
    };
    let outer = count(n)?;
    let inner = match &n.args[0].op {
        Op::Cast(_) => &n.args[0].args[0],
        _ => &n.args[0],
    };
    Some(outer + count(inner)?)
}

/// `|k|` for the f32 bits of `±2^k` (normal), else None.
fn power_of_two_exponent(bits: u32) -> Option<i64> {
    let exponent = (bits >> 23) & 0xff;
    (bits & 0x7f_ffff == 0 && exponent != 0 && exponent != 0xff)
        .then(|| (i64::from(exponent) - 127).abs())
}

/// The constants scalar operands take: the inputs' constants, each lane width in play less one
/// (an oversized arithmetic shift becomes one by that much) and each lane width (the odd lanes
/// are the high halves of lanes twice as wide), the bits a truncation extended back to its
/// width drops, the logarithm of each power of two (rules solve `c0 == 1 << c1`), one less than
/// each shift count (a rounding shift by `c` reads bit `c - 1`), and the bounds of 32-bit lanes
/// for a saturating narrowing of 64-bit ones.
pub fn constants_in_play(in_play: &BTreeSet<VecType>, inputs: &[Rc<Expr>]) -> BTreeSet<i64> {
    let mut constants: BTreeSet<i64> = in_play
        .iter()
        .filter(|t| t.elem.is_int())
        .flat_map(|t| [t.elem.bits() as i64 - 1, t.elem.bits() as i64])
        .collect();
    for input in inputs {
        input.walk(&mut |n| {
            if let Op::Const(v) = &n.op {
                constants.extend(v.iter().map(|b| lane_value(n.ty.elem, *b)));
                // An f32 power of two 2^k or 2^-k: k (the fraction bits of a fixed-point
                // conversion, NEON's `vcvtq_n`).
                if n.ty.elem == Elem::F32 {
                    constants.extend(v.iter().filter_map(|b| power_of_two_exponent(*b as u32)));
                }
            }
            if matches!(n.op, Op::Popcount | Op::Clz) {
                constants.extend(bit_slicing_shifts(n.ty.elem.bits()));
            }
            if matches!(n.op, Op::Bitcast(_)) && n.args[0].ty.elem == Elem::Bool {
                constants.extend(GATHER_ROUNDS.map(|(_, shift)| shift));
            }
            // A multiply by `2^a + 2^b` or `2^a - 2^b` is two shifts (`multiply_by_shifts`).
            if n.op == Op::Mul && n.ty.elem.is_int() {
                for a in &n.args {
                    if let Op::Const(v) = &a.op {
                        let values = v.iter().map(|b| lane_value(n.ty.elem, *b));
                        constants.extend(values.flat_map(multiplier_shift_counts));
                    }
                }
            }
            // A truncation extended back to its operand's width is a pair of shifts by the
            // bits it drops (the cast workload's rules: `i32(i8(x))` is `(x << 24) >> 24`).
            if let (Op::Cast(_), Some(narrow)) = (&n.op, n.args.first()) {
                let dropped = i64::from(n.ty.elem.bits()) - i64::from(narrow.ty.elem.bits());
                let same_width = narrow
                    .args
                    .first()
                    .map(|x| x.ty.elem.bits() == n.ty.elem.bits());
                if matches!(narrow.op, Op::Cast(_)) && dropped > 0 && same_width == Some(true) {
                    constants.insert(dropped);
                }
            }
            // Two right shifts by constants, one of them of a narrowing of the other, join into
            // one by the sum (`shift_of_narrowing`, `shift_of_shift`).
            if let Some(sum) = joined_shift_count(n) {
                constants.insert(sum);
            }
            // A 64-bit shift by 32-bit words (`word_pairs`), and a right shift of a product
            // by less than half its width cut to the half (`product_bits_across_halves`), move
            // bits across the halves by the rest.
            let product = n.op == Op::Shr && n.args[0].op == Op::Mul && n.ty.elem.bits() >= 32;
            if matches!(n.op, Op::Shl | Op::Shr) && n.ty.elem.bits() == 64 || product {
                let half = i64::from(n.ty.elem.bits() / 2);
                if let Op::Const(v) = &n.args[1].op {
                    for c in v.iter().map(|b| lane_value(n.ty.elem, *b)) {
                        constants.extend([half - c, c - half].into_iter().filter(|k| *k > 0));
                    }
                }
            }
            // A saturating narrowing of 64-bit lanes clamps them to 32-bit bounds where the
            // target has no instruction for it (`fallback::saturating_conversion`).
            if matches!(n.op, Op::SatCast(_)) && n.args[0].ty.elem.bits() == 64 {
                constants.extend(
                    [Elem::I32, Elem::U32]
                        .into_iter()
                        .flat_map(|e| [e.min_value(), e.max_value()].map(|v| v as i64)),
                );
            }
        });
    }
    let logarithms = constants
        .iter()
        .filter(|&&c| c > 1 && (c as u64).is_power_of_two())
        .map(|&c| i64::from(c.ilog2()));
    let counts_less_one = constants
        .iter()
        .filter(|&&c| (2..=64).contains(&c))
        .map(|c| c - 1);
    let more: Vec<i64> = logarithms.chain(counts_less_one).collect();
    constants.extend(more);
    constants
}

/// The shift counts of a multiply by `c` as two shifts: `a` and `b` where `c = 2^a + 2^b` or
/// `c = 2^a - 2^b`, or `-c = 2^a - 2^b` or `2^a` (`multiply_by_shifts`).
fn multiplier_shift_counts(c: i64) -> Vec<i64> {
    // A negative multiplier's counts are those of its magnitude (`2^b - 2^a`, `-2^a`).
    let c = c.checked_abs().unwrap_or(0);
    if !(2..=1 << 62).contains(&c) {
        return vec![];
    }
    if (c as u64).is_power_of_two() {
        return vec![i64::from(c.ilog2())];
    }
    let high = c.ilog2();
    let below = c - (1 << high);
    let above = (1i64 << (high + 1)) - c;
    let mut out = Vec::new();
    for (a, rest) in [(high, below), (high + 1, above)] {
        if (rest as u64).is_power_of_two() {
            out.extend([i64::from(a), i64::from(rest.ilog2())]);
        }
    }
    out
}
