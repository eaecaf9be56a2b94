//! Identities folded out of instantiated instruction patterns, so a pattern reads the way the
//! input writes the same computation: a computation over constants is its value, a multiplier
//! of one disappears, as do an added or
//! subtracted zero and a maximum with the type's least value (a minimum with it is that
//! value); a slice of every lane is its operand, a concatenation of one operand is that
//! operand, a conversion to the type its operand already has is that operand, a value widened
//! and narrowed back is the value, bits read as another type and back are the bits, and a half
//! of a pair built from two registers is that register. With the ranges the pattern itself
//! gives (variables' types, conversions, sums of lanes): a saturating cast of what its type
//! holds is a plain one, and a narrowing of a sum of widened lanes that the narrower type holds
//! is the sum widened only that far.

use crate::ir::range::{holds, value_range};
use crate::ir::{Expr, Op};
use crate::semantics::{eval, Env};
use std::rc::Rc;

/// `e` with (at integer types) `x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0` and `max(x, least)`
/// replaced by `x`, `min(x, least)` by `least`, a slice of all of `x`'s lanes by `x`, a cast of
/// `x` to `x`'s own type by `x`, and the low or high half of a concatenation of two equal halves
/// replaced by that half.
pub fn simplify(e: &Rc<Expr>) -> Rc<Expr> {
    let args: Vec<Rc<Expr>> = e.args.iter().map(simplify).collect();
    let rebuilt = || {
        Rc::new(Expr {
            op: e.op.clone(),
            ty: e.ty,
            args: args.clone(),
        })
    };
    // A computation over constants alone is its value (HVX's rounding bias `(1 << 8) >> 1`).
    if !args.is_empty() && args.iter().all(|a| matches!(a.op, Op::Const(_))) {
        if let Ok(v) = eval(&rebuilt(), &Env::new()) {
            return Rc::new(Expr::constant(v.ty, v.lanes));
        }
    }
    let least = e.ty.elem.min_value();
    match &e.op {
        Op::Mul if e.ty.elem.is_int() => {
            if is_splat(&args[1], 1) && args[0].ty == e.ty {
                return args[0].clone();
            }
            if is_splat(&args[0], 1) && args[1].ty == e.ty {
                return args[1].clone();
            }
            rebuilt()
        }
        // A saturating conversion of what the type holds anyway is a plain one.
        Op::SatCast(to) if value_range(&args[0]).is_some_and(|r| holds(r, *to)) => {
            match Expr::build(Op::Cast(*to), args.clone()) {
                Ok(cast) => simplify(&Rc::new(cast)),
                Err(_) => rebuilt(),
            }
        }
        // A narrowing of a sum of widened lanes that the narrower type holds is the sum of the
        // lanes widened only that far (`pmaddubsw`'s sums of two bytes in 16 bits).
        Op::Cast(to)
            if matches!(args[0].op, Op::ReduceAdd(_))
                && matches!(args[0].args[0].op, Op::Cast(_))
                && value_range(&args[0]).is_some_and(|r| holds(r, *to)) =>
        {
            let lanes = &args[0].args[0].args[0];
            let narrower = Expr::build(Op::Cast(*to), vec![lanes.clone()])
                .and_then(|c| Expr::build(args[0].op.clone(), vec![Rc::new(c)]));
            match narrower {
                Ok(sum) => Rc::new(sum),
                Err(_) => rebuilt(),
            }
        }
        // A value widened and narrowed back (a saturating add of zero).
        Op::Cast(_)
            if matches!(args[0].op, Op::Cast(_))
                && args[0].args[0].ty == e.ty
                && args[0].ty.elem.bits() >= e.ty.elem.bits() =>
        {
            args[0].args[0].clone()
        }
        // Adding or subtracting zero.
        Op::Add if e.ty.elem.is_int() && is_splat(&args[0], 0) => args[1].clone(),
        Op::Add | Op::Sub if e.ty.elem.is_int() && is_splat(&args[1], 0) => args[0].clone(),
        // The maximum with the type's least value is the other operand, the minimum that value.
        Op::Max if e.ty.elem.is_int() && is_splat(&args[1], least) => args[0].clone(),
        Op::Max if e.ty.elem.is_int() && is_splat(&args[0], least) => args[1].clone(),
        Op::Min if e.ty.elem.is_int() && is_splat(&args[1], least) => args[1].clone(),
        Op::Min if e.ty.elem.is_int() && is_splat(&args[0], least) => args[0].clone(),
        // A slice of every lane (`(slice 0 1 16 a)` of a 16-lane `a`) is `a`.
        Op::Slice {
            start: 0,
            stride: 1,
            lanes,
        } if args[0].ty.lanes == *lanes => args[0].clone(),
        Op::Slice {
            start,
            stride: 1,
            lanes,
        } if args[0].op == Op::Concat => {
            let mut offset = 0;
            for part in &args[0].args {
                if offset == *start && part.ty.lanes == *lanes {
                    return part.clone();
                }
                offset += part.ty.lanes;
            }
            rebuilt()
        }
        // A conversion to its operand's own type is the operand (`uaba`'s cast of an absolute
        // difference that is already u16 once written as the input writes it).
        Op::Cast(_) | Op::SatCast(_) | Op::Bitcast(_) if args[0].ty == e.ty => args[0].clone(),
        // Bits read as another type and back are the operand (NEON's `-count` as an unsigned
        // amount, read as the shifted lanes' type).
        Op::Bitcast(_) if matches!(args[0].op, Op::Bitcast(_)) && args[0].args[0].ty == e.ty => {
            args[0].args[0].clone()
        }
        // A concatenation of one operand (a 128-bit block of x86's per-block forms) is it.
        Op::Concat if args.len() == 1 => args[0].clone(),
        _ => rebuilt(),
    }
}

/// A variable-free integer expression whose every lane is `value`.
fn is_splat(e: &Expr, value: i128) -> bool {
    let mut has_vars = false;
    e.walk(&mut |n| has_vars |= matches!(n.op, Op::Var(_)));
    !has_vars
        && e.ty.elem.is_int()
        && eval(e, &Env::new())
            .map(|v| (0..v.lanes.len()).all(|i| v.int(i) == value))
            .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Elem, VecType};

    fn var(name: &str, lanes: u32) -> Rc<Expr> {
        Rc::new(Expr::var(name, VecType::new(lanes, Elem::I16)))
    }

    #[test]
    fn multiplier_of_one_and_halves_of_a_pair_fold_away() {
        let (lo, hi) = (var("lo", 4), var("hi", 4));
        let pair = Rc::new(Expr::build(Op::Concat, vec![lo.clone(), hi.clone()]).unwrap());
        let slice = |start| {
            Rc::new(
                Expr::build(
                    Op::Slice {
                        start,
                        stride: 1,
                        lanes: 4,
                    },
                    vec![pair.clone()],
                )
                .unwrap(),
            )
        };
        let one = Rc::new(Expr::constant(VecType::new(4, Elem::I16), vec![1]));
        let scaled = Rc::new(Expr::build(Op::Mul, vec![slice(4), one]).unwrap());
        let sum = Rc::new(Expr::build(Op::Add, vec![slice(0), scaled]).unwrap());
        let expected = Expr::build(Op::Add, vec![lo, hi]).unwrap();
        assert_eq!(*simplify(&sum), expected);
    }

    #[test]
    fn a_conversion_to_the_operands_own_type_folds_away_and_others_stay() {
        let x = var("x", 4);
        let same = Rc::new(Expr::build(Op::Cast(Elem::I16), vec![x.clone()]).unwrap());
        assert_eq!(simplify(&same), x);
        let wider = Rc::new(Expr::build(Op::Cast(Elem::I32), vec![x.clone()]).unwrap());
        assert_eq!(simplify(&wider), wider);
        let saturated = Rc::new(Expr::build(Op::SatCast(Elem::I16), vec![x.clone()]).unwrap());
        assert_eq!(simplify(&saturated), x);
    }

    /// `pmaddubsw` with its second operand all ones: the products by one go, the saturation of
    /// a sum of two bytes (which 16 bits hold) is a plain narrowing, and the narrowed sum of
    /// bytes widened to 32 bits is their sum widened to 16.
    #[test]
    fn a_sum_the_narrower_type_holds_is_summed_at_that_type() {
        let x = Rc::new(Expr::var("x", VecType::new(8, Elem::U8)));
        let build = |op, args| Rc::new(Expr::build(op, args).unwrap());
        let one = Rc::new(Expr::constant(VecType::new(8, Elem::I32), vec![1]));
        let wide = build(Op::Cast(Elem::I32), vec![x.clone()]);
        let products = build(Op::Mul, vec![wide, one]);
        let sums = build(Op::ReduceAdd(2), vec![products]);
        let saturated = build(Op::SatCast(Elem::I16), vec![sums]);
        let expected = build(
            Op::ReduceAdd(2),
            vec![build(Op::Cast(Elem::I16), vec![x.clone()])],
        );
        assert_eq!(simplify(&saturated), expected);
        // Four sums of 8-bit lanes widened to 32 bits do not fit 8 bits: the saturation stays.
        let bytes = build(
            Op::SatCast(Elem::I8),
            vec![build(
                Op::ReduceAdd(4),
                vec![build(Op::Cast(Elem::I32), vec![x.clone()])],
            )],
        );
        assert_eq!(simplify(&bytes), bytes);
    }

    #[test]
    fn an_added_zero_and_a_maximum_with_the_least_value_fold_away() {
        let x = var("x", 4);
        let build = |op, args| Rc::new(Expr::build(op, args).unwrap());
        let constant = |v: i128| Rc::new(Expr::constant(x.ty, vec![v as u16 as u128]));
        let sum = build(Op::Add, vec![constant(0), x.clone()]);
        assert_eq!(simplify(&sum), x);
        let difference = build(Op::Sub, vec![x.clone(), constant(0)]);
        assert_eq!(simplify(&difference), x);
        let most = build(Op::Max, vec![x.clone(), constant(-32768)]);
        assert_eq!(simplify(&most), x);
        let least = build(Op::Min, vec![x.clone(), constant(-32768)]);
        assert_eq!(simplify(&least), constant(-32768));
        let kept = build(Op::Max, vec![x.clone(), constant(0)]);
        assert_eq!(simplify(&kept), kept);
    }
}
