//! The range of values an expression's lanes can take, as far as its operators alone bound it:
//! the small interval analysis selection's simplifier and the synthesis cost model share.

use super::{Elem, Expr, Op};

/// The least and greatest value of `e`'s lanes its operators alone bound them to, if `e` is an
/// integer of at most 64 bits and the bound fits its type: a variable's type, a cast's operand's
/// where the cast keeps it, an absolute value's of its operand's, a sum of `k` lanes `k` times
/// its operand's.
pub fn value_range(e: &Expr) -> Option<(i128, i128)> {
    let elem = e.ty.elem;
    if !elem.is_int() || elem.bits() > 64 {
        return None;
    }
    let range = match &e.op {
        Op::Var(_) => (elem.min_value(), elem.max_value()),
        Op::Cast(_) => value_range(&e.args[0])?,
        Op::Abs => {
            let (lo, hi) = value_range(&e.args[0])?;
            let nearest = if lo <= 0 && hi >= 0 {
                0
            } else {
                lo.abs().min(hi.abs())
            };
            (nearest, lo.abs().max(hi.abs()))
        }
        Op::ReduceAdd(k) => {
            let (lo, hi) = value_range(&e.args[0])?;
            (lo * *k as i128, hi * *k as i128)
        }
        _ => return None,
    };
    holds(range, elem).then_some(range)
}

/// Whether lanes of `elem` hold every value of `range`.
pub fn holds(range: (i128, i128), elem: Elem) -> bool {
    elem.is_int() && range.0 >= elem.min_value() && range.1 <= elem.max_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VecType;
    use std::rc::Rc;

    fn var(elem: Elem) -> Rc<Expr> {
        Rc::new(Expr::var("x", VecType::new(8, elem)))
    }

    fn build(op: Op, arg: Rc<Expr>) -> Rc<Expr> {
        Rc::new(Expr::build(op, vec![arg]).unwrap())
    }

    #[test]
    fn casts_abs_and_sums_bound_their_lanes() {
        let abs = build(Op::Abs, build(Op::Cast(Elem::I16), var(Elem::I8)));
        assert_eq!(value_range(&abs), Some((0, 128)));
        // abs(x_i8) of -128 is -128 in i8 lanes: no bound within the type.
        assert_eq!(value_range(&build(Op::Abs, var(Elem::I8))), None);
        let widened = build(Op::Cast(Elem::U16), var(Elem::U8));
        assert_eq!(value_range(&widened), Some((0, 255)));
        let sum = build(Op::ReduceAdd(4), widened);
        assert_eq!(value_range(&sum), Some((0, 1020)));
        // A truncation to u8 of a u16 does not keep its values: no bound.
        let truncated = build(Op::Cast(Elem::U8), var(Elem::U16));
        assert_eq!(value_range(&truncated), None);
        assert!(holds((0, 128), Elem::U8) && !holds((0, 128), Elem::I8));
    }
}
