//! The ranges an instruction's operand is read in part by: NEON's `sshl` reads each lane's
//! shift count from its low byte (`(cast i8 b)`), HVX's `vasl` from its low bits. Selection
//! specializes lowerings to such ranges (`select/ranged.rs`) and the idiom matcher tries an
//! operand clamped to one (`idioms/matcher.rs`).

use super::value::as_int;
use crate::ir::{Elem, Expr, Op};

/// A range of lane values, inclusive.
pub type Range = (i128, i128);

/// The ranges an operand is read in part by: the range of a narrower type it is converted to
/// (`(cast i8 b)`), that of the bits a shift left and back keeps (`(shr (shl b 11) 11)`), and
/// from a constant it is compared with up (`(lt b 0)`); each also from zero up.
pub fn candidate_ranges(pattern: &Expr) -> Vec<(String, Elem, Range)> {
    let mut out = Vec::new();
    pattern.walk(&mut |n| {
        let (arg, read) = match (&n.op, n.args.as_slice()) {
            (Op::Cast(to), [x]) if to.is_int() => (x, (to.min_value(), to.max_value())),
            (Op::Shr, [shl, k]) if shl.op == Op::Shl && shl.args[1] == *k => {
                let (Some(k), true) = (constant_value(k), n.ty.elem.is_int()) else {
                    return;
                };
                let kept = n.ty.elem.bits() as i128 - k;
                if !(1..n.ty.elem.bits() as i128).contains(&k) {
                    return;
                }
                let range = if n.ty.elem.is_signed() {
                    (-(1 << (kept - 1)), (1 << (kept - 1)) - 1)
                } else {
                    (0, (1 << kept) - 1)
                };
                (&shl.args[0], range)
            }
            // A lookup's index masked to low bits (the rest of the mask aside): the values
            // those bits hold, which the mask keeps (`pshufb`'s `(and b 0x8f)` keeps an index
            // into its 16 bytes).
            (Op::Lookup, [_, masked]) if masked.op == Op::And && masked.ty.elem.is_int() => {
                let elem = masked.ty.elem;
                let (x, ones) = match masked.args.as_slice() {
                    [x, c] | [c, x] if constant_value(c).is_some() => {
                        (x, constant_value(c).map_or(0, |c| low_ones(elem, c)))
                    }
                    _ => return,
                };
                if !(1..elem.bits()).contains(&ones) {
                    return;
                }
                (x, (0, (1 << ones) - 1))
            }
            // A comparison with a constant: from the constant up, where `lt` holds in no lane.
            (Op::Lt | Op::Le | Op::Gt | Op::Ge, [x, c]) => {
                let (Some(c), Some((_, elem))) = (constant_value(c), base_wildcard(x)) else {
                    return;
                };
                (x, (c, elem.max_value()))
            }
            _ => return,
        };
        let Some((name, elem)) = base_wildcard(arg) else {
            return;
        };
        if read.0 <= elem.min_value() && read.1 >= elem.max_value() {
            return;
        }
        for range in [read, (0, read.1)] {
            if !out.contains(&(name.clone(), elem, range)) {
                out.push((name.clone(), elem, range));
            }
        }
    });
    out
}

/// How many of the low bits of the lane value `c` (of type `elem`) are ones, in a row.
pub fn low_ones(elem: Elem, c: i128) -> u32 {
    let bits = (c as u128) & (u128::MAX >> (128 - elem.bits()));
    bits.trailing_ones()
}

/// The variable under conversions and reinterpretations of `e`, with its element type.
pub fn base_wildcard(e: &Expr) -> Option<(String, Elem)> {
    match (&e.op, e.args.as_slice()) {
        (Op::Var(name), _) if e.ty.elem.is_int() => Some((name.clone(), e.ty.elem)),
        (Op::Cast(_) | Op::Bitcast(_), [x]) => base_wildcard(x),
        _ => None,
    }
}

/// The value of every lane of a constant whose lanes are all the same.
pub fn constant_value(e: &Expr) -> Option<i128> {
    let Op::Const(lanes) = &e.op else {
        return None;
    };
    let first = *lanes.first()?;
    if !lanes.iter().all(|l| *l == first) || !e.ty.elem.is_int() {
        return None;
    }
    Some(as_int(e.ty.elem, first))
}
