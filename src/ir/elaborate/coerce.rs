//! Halide's implicit conversions between the operands of a binary operator, as its front end
//! inserts them (`match_types` and, for bitwise operators, `match_types_bitwise` in Halide's
//! IROperator.cpp): `i16(x_i8) * y_i8` multiplies two i16s, `acc_u16 + absd(a_u8, b_u8)` adds
//! two u16s.

use crate::ir::expr::{Expr, Op};
use crate::ir::types::Elem;
use std::rc::Rc;

/// The element type both operands of `op` are converted to, where Halide converts them: an
/// integer meeting a float becomes the float; two unsigned integers meet at the wider; a signed
/// integer meeting any integer, at the signed integer of the wider width. A bitwise operator
/// converts only between integers of one signedness (to the wider; Halide rejects the rest).
/// None where no conversion applies (same types, booleans, operators of other shapes).
fn common_elem(op: &Op, a: Elem, b: Elem) -> Option<Elem> {
    let arithmetic = matches!(
        op,
        Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Mod
            | Op::Min
            | Op::Max
            | Op::Eq
            | Op::Ne
            | Op::Lt
            | Op::Le
            | Op::Gt
            | Op::Ge
    );
    let bitwise = matches!(op, Op::And | Op::Or | Op::Xor);
    if a == b || a == Elem::Bool || b == Elem::Bool || !(arithmetic || bitwise) {
        return None;
    }
    let wider = if a.bits() >= b.bits() { a } else { b };
    if bitwise {
        return (a.is_int() && b.is_int() && a.is_signed() == b.is_signed()).then_some(wider);
    }
    match (a.is_int(), b.is_int()) {
        (false, _) => Some(a),
        (_, false) => Some(b),
        _ if !a.is_signed() && !b.is_signed() => Some(wider),
        _ => Elem::int(wider.bits(), true),
    }
}

/// The operands of `op` converted as Halide converts them; unchanged where it does not.
pub(super) fn match_types(op: &Op, operands: Vec<Rc<Expr>>) -> Result<Vec<Rc<Expr>>, String> {
    let [a, b] = operands.as_slice() else {
        return Ok(operands);
    };
    let Some(elem) = common_elem(op, a.ty.elem, b.ty.elem) else {
        return Ok(operands);
    };
    operands
        .into_iter()
        .map(|x| {
            if x.ty.elem == elem {
                Ok(x)
            } else {
                Expr::build(Op::Cast(elem), vec![x]).map(Rc::new)
            }
        })
        .collect()
}
