//! Identities folded out of instantiated instruction patterns, so a pattern reads the way the
//! input writes the same computation: a multiplier of one disappears, a slice of every lane is
//! its operand, a concatenation of one operand is that operand, a conversion to the type its
//! operand already has is that operand, bits read as another type and back are the bits, and a half of a pair built from two registers is that
//! register.

use crate::ir::{Expr, Op};
use crate::semantics::{eval, Env};
use std::rc::Rc;

/// `e` with `x * 1` and `1 * x` replaced by `x`, a slice of all of `x`'s lanes by `x`, a cast
/// of `x` to `x`'s own type by `x`, and the low or high half of a concatenation of two equal
/// halves replaced by that half.
pub fn simplify(e: &Rc<Expr>) -> Rc<Expr> {
    let args: Vec<Rc<Expr>> = e.args.iter().map(simplify).collect();
    let rebuilt = || {
        Rc::new(Expr {
            op: e.op.clone(),
            ty: e.ty,
            args: args.clone(),
        })
    };
    match &e.op {
        Op::Mul => {
            if is_one(&args[1]) && args[0].ty == e.ty {
                return args[0].clone();
            }
            if is_one(&args[0]) && args[1].ty == e.ty {
                return args[1].clone();
            }
            rebuilt()
        }
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

/// A variable-free expression whose every lane is one.
fn is_one(e: &Expr) -> bool {
    let mut has_vars = false;
    e.walk(&mut |n| has_vars |= matches!(n.op, Op::Var(_)));
    !has_vars
        && eval(e, &Env::new())
            .map(|v| (0..v.lanes.len()).all(|i| v.int(i) == 1))
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
}
