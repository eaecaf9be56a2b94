//! Literals in expressions: the element type a cast gives one (`i8(1)` wrapped, `u8_sat(300)`
//! clamped), the type its sibling operands give it (Halide's typing of constants), and its bits
//! as a lane.

use super::{Elab, Scope};
use crate::error::{Error, Result};
use crate::ir::expr::{Expr, Op};
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::types::{Elem, VecType};
use std::rc::Rc;

/// An integer literal as a cast to `elem` leaves it: wrapped, or clamped when `saturating`
/// (other literals as they are).
pub(super) fn literal_as(lit: SExpr, elem: Elem, saturating: bool) -> SExpr {
    match lit.kind {
        SKind::Int(v) if elem.is_int() => {
            let v = if saturating {
                v.clamp(elem.min_value(), elem.max_value())
            } else {
                let bits = (v as u128) & elem.mask();
                let sign = 1u128 << (elem.bits() - 1);
                if elem.is_signed() && bits & sign != 0 {
                    bits as i128 - (1i128 << elem.bits())
                } else {
                    bits as i128
                }
            };
            SExpr {
                kind: SKind::Int(v),
                loc: lit.loc,
            }
        }
        _ => lit,
    }
}

impl Scope<'_> {
    /// Gives each literal operand the type its typed siblings imply: a plain literal takes the
    /// type of the first typed operand (not a mask), else the element type of a cast literal
    /// sibling at the lanes of any typed operand; a cast literal keeps its element type (cast to
    /// its typed siblings' where they differ, as Halide coerces).
    pub(super) fn type_literals(
        &self,
        op: &Op,
        elabs: Vec<Elab>,
        args: &[SExpr],
        s: &SExpr,
    ) -> Result<Vec<Rc<Expr>>> {
        let hint = elabs.iter().enumerate().find_map(|(i, e)| match e {
            Elab::Typed(t) if (!op.is_masked() || i != 0) && !matches!(op, Op::Lookup) => {
                Some(t.ty)
            }
            _ => None,
        });
        let lanes = hint
            .map(|t| t.lanes)
            .or_else(|| {
                elabs.iter().find_map(|e| match e {
                    Elab::Typed(t) if !matches!(op, Op::Lookup) => Some(t.ty.lanes),
                    _ => None,
                })
            })
            .or(self.implicit_lanes);
        let cast_elem = elabs.iter().find_map(|e| match e {
            Elab::Lit(_, elem) => *elem,
            Elab::Typed(_) => None,
        });
        elabs
            .into_iter()
            .zip(args)
            .enumerate()
            .map(|(i, (e, a))| match e {
                Elab::Typed(t) => Ok(t),
                Elab::Lit(lit, elem) => {
                    let untyped = || {
                        s.err(format!(
                            "cannot tell the type of the literal {lit}; write (const TYPE {lit})"
                        ))
                    };
                    if op.is_masked() && i == 0 {
                        return Err(untyped());
                    }
                    let Some(elem) = elem else {
                        let ty = hint
                            .or_else(|| Some(VecType::new(lanes?, cast_elem?)))
                            .or_else(|| Some(VecType::new(lanes?, self.halide_literal(&lit)?)))
                            .ok_or_else(untyped)?;
                        return Ok(Rc::new(self.constant(ty, &[lit], a)?));
                    };
                    let own = VecType::new(lanes.ok_or_else(untyped)?, elem);
                    let c = Rc::new(self.constant(own, &[lit], a)?);
                    match hint {
                        Some(h) if h.elem != elem => Expr::build(Op::Cast(h.elem), vec![c])
                            .map(Rc::new)
                            .map_err(|m| Error::ty(&a.loc, m)),
                        _ => Ok(c),
                    }
                }
            })
            .collect()
    }

    /// The type Halide gives a literal nothing else types (`select(c, 1.0f, 2.0f)`): i32 for
    /// an integer, f32 for a float; None outside Halide's front end.
    fn halide_literal(&self, lit: &SExpr) -> Option<Elem> {
        match lit.kind {
            _ if !self.is_halide(lit) => None,
            SKind::Int(_) => Some(Elem::I32),
            SKind::Float(_) => Some(Elem::F32),
            _ => None,
        }
    }

    /// A constant of type `ty` from one (splat) or `ty.lanes` literal values.
    pub(super) fn constant(&self, ty: VecType, vals: &[SExpr], at: &SExpr) -> Result<Expr> {
        if vals.len() != 1 && vals.len() != ty.lanes as usize {
            return Err(at.err(format!(
                "{ty} needs 1 or {} values, got {}",
                ty.lanes,
                vals.len()
            )));
        }
        let lanes = vals
            .iter()
            .map(|v| lane_bits(ty.elem, v))
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr::constant(ty, lanes))
    }
}

/// The bits of a literal as a lane of `elem`; rejects values that fit neither signed nor unsigned.
fn lane_bits(elem: Elem, v: &SExpr) -> Result<u128> {
    match (&v.kind, elem) {
        (SKind::Float(x), Elem::F32) => Ok((*x as f32).to_bits() as u128),
        (SKind::Int(i), Elem::F32) => Ok((*i as f32).to_bits() as u128),
        (SKind::Sym(n), Elem::F32) => {
            let x: f32 = match n.as_str() {
                "nan" => f32::NAN,
                "inf" => f32::INFINITY,
                _ => f32::NEG_INFINITY,
            };
            Ok(x.to_bits() as u128)
        }
        (SKind::Int(i), e) => {
            let lo = e.signed().map_or(0, Elem::min_value);
            let hi = e.unsigned().map_or(1, Elem::max_value);
            if *i < lo || *i > hi {
                return Err(v.err(format!("literal {i} does not fit in {e}")));
            }
            Ok(*i as u128 & e.mask())
        }
        _ => Err(v.err(format!("literal {v} is not a {elem} value"))),
    }
}
