//! Selection by pieces, the last resort for an expression whose e-graph passes isadb's budget
//! and that cannot be selected by [`halves`](super::halves): each computed operand of the root
//! becomes a fresh input (a piece), the root over those inputs is selected, each piece is
//! selected on its own (by pieces again if it too passes the budget), and the pieces' extracted
//! terms take the place of the fresh inputs' reads. Fusions across a cut are lost, so the result
//! can cost more than one e-graph would have found, but every operator selects on its own (the
//! totality walk), so an expression of operators always gets a sequence. The whole is proven
//! equal to the expression like any selection.

use super::term::Term;
use crate::ir::{Expr, Op, VecType};
use std::rc::Rc;

/// An expression cut at its root: the root over fresh inputs, and what each input stands for.
pub struct Cut {
    pub root: Rc<Expr>,
    pub pieces: Vec<(String, Rc<Expr>)>,
}

/// The expression with each computed operand of its root replaced by a fresh input; `None`
/// when every operand is already an input or a constant.
pub fn cut_at_root(e: &Rc<Expr>) -> Option<Cut> {
    let taken: Vec<String> = e.vars().into_iter().map(|(name, _)| name).collect();
    let mut fresh = (0..)
        .map(|k| format!("piece{k}"))
        .filter(|n| !taken.contains(n));
    let mut pieces = Vec::new();
    let args = e
        .args
        .iter()
        .map(|a| match a.op {
            Op::Var(_) | Op::Const(_) => a.clone(),
            _ => {
                let name = fresh.next().expect("names are endless");
                pieces.push((name.clone(), a.clone()));
                Rc::new(Expr::var(&name, a.ty))
            }
        })
        .collect();
    if pieces.is_empty() {
        return None;
    }
    let root = Rc::new(Expr::build(e.op.clone(), args).ok()?);
    Some(Cut { root, pieces })
}

/// The value an extracted term computes (its `Out`, or the pair of its `OutPair` at `ty`, the
/// piece's type); `None` for a term that is not a selection's root.
pub fn computed(extracted: &Term, ty: VecType) -> Option<Term> {
    match extracted {
        Term::Out(x) => Some((**x).clone()),
        Term::OutPair(lo, hi) => Some(Term::Pair {
            ty,
            lo: lo.clone(),
            hi: hi.clone(),
        }),
        _ => None,
    }
}

/// A piece's selected value as the fresh input it stands for is read: `value` (of type
/// `value_ty`) computes the piece's `lanes` lanes first, and its lanes past them hold whatever
/// the instructions left there, which `padding` allows a read to see.
pub struct Value<'v> {
    pub term: &'v Term,
    pub ty: VecType,
    pub lanes: u32,
    pub padding: Padding,
}

/// What a read past a piece's own lanes (a narrow input padded to a register) sees.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Padding {
    /// The value's register as it is, when it is wide enough: no instruction spent.
    Register,
    /// Zeros, as an input padded to a register has, by a concatenation with zeros.
    Zeros,
}

/// `t` with every read of the input `name` replaced by those lanes of `value`; `None` where a
/// read has another element type.
pub fn substitute(t: &Term, name: &str, value: &Value) -> Option<Term> {
    match t {
        Term::Var { ty, name: n } if n == name => read(value, *ty, 0),
        Term::Part {
            ty,
            name: n,
            offset,
        } if n == name => read(value, *ty, u32::try_from(*offset).ok()?),
        _ => t.try_map_children(&mut |c| substitute(c, name, value)),
    }
}

/// Lanes `offset..` of `value` at type `ty`.
fn read(value: &Value, ty: VecType, offset: u32) -> Option<Term> {
    if ty.elem != value.ty.elem {
        return None;
    }
    let lanes_of = |ty: VecType, offset: u32| match offset == 0 && ty == value.ty {
        true => value.term.clone(),
        false => Term::Lanes {
            ty,
            offset: i64::from(offset),
            arg: Box::new(value.term.clone()),
        },
    };
    if value.padding == Padding::Register && offset + ty.lanes <= value.ty.lanes {
        return Some(lanes_of(ty, offset));
    }
    let own = value.lanes.saturating_sub(offset).min(ty.lanes);
    let zeros = |lanes| Term::constant(ty.with_lanes(lanes), 0);
    Some(match own {
        0 => zeros(ty.lanes),
        own if own == ty.lanes => lanes_of(ty, offset),
        own => Term::Op {
            name: "Concat",
            ty,
            params: vec![],
            args: vec![lanes_of(ty.with_lanes(own), offset), zeros(ty.lanes - own)],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;
    use std::collections::HashMap;

    fn expr(text: &str, lanes: u32) -> Rc<Expr> {
        elaborate_expression(text, "test", &Macros::default(), lanes, &HashMap::new()).unwrap()
    }

    #[test]
    fn the_root_keeps_its_operator_over_fresh_inputs_for_computed_operands_only() {
        let whole = expr("(x_u8 + y_u8) * 3 - piece0_u8", 16);
        let cut = cut_at_root(&whole).unwrap();
        assert_eq!(cut.pieces.len(), 1);
        assert_eq!(cut.pieces[0].0, "piece0");
        assert_eq!(cut.pieces[0].1.to_string(), whole.args[0].to_string());
        assert_eq!(cut.root.ty, whole.ty);
        assert!(cut_at_root(&expr("x_u8 + y_u8", 16)).is_none());
    }

    #[test]
    fn reads_of_a_piece_become_its_lanes_and_past_its_own_its_register_or_zeros() {
        let u8x16 = super::super::term::parse_type_name("u8x16").unwrap();
        let sum = r#"(I_vaddq_u8 (Var "u8x16" "x") (Var "u8x16" "y"))"#;
        let value = Term::parse(sum).unwrap();
        let t = r#"(Out (I_vsubq_u8 (Var "u8x16" "piece0") (Part "u8x8" "piece0" 8)))"#;
        let t = Term::parse(t).unwrap();
        // The piece has 12 lanes of its own in a 16-lane register.
        let piece = |padding| Value {
            term: &value,
            ty: u8x16,
            lanes: 12,
            padding,
        };
        let register = substitute(&t, "piece0", &piece(Padding::Register)).unwrap();
        assert_eq!(
            register.to_string(),
            format!(r#"(Out (I_vsubq_u8 {sum} (Lanes "u8x8" 8 {sum})))"#)
        );
        let zeros = substitute(&t, "piece0", &piece(Padding::Zeros)).unwrap();
        assert_eq!(
            zeros.to_string(),
            format!(
                r#"(Out (I_vsubq_u8 (Concat "u8x16" (Lanes "u8x12" 0 {sum}) (Const "u8x4" 0)) (Concat "u8x8" (Lanes "u8x4" 8 {sum}) (Const "u8x4" 0))))"#
            )
        );
        let other_type = Term::parse(r#"(Out (Part "i16x8" "piece0" 0))"#).unwrap();
        assert!(substitute(&other_type, "piece0", &piece(Padding::Register)).is_none());
    }
}
