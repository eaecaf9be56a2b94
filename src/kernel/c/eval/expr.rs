//! Expressions: literals (decimals kept exact as `n / d`), variables, indexing with bounds
//! checks, unary, binary and ternary operators, casts; integers concrete, floats terms.

use super::arith::int_op;
use super::{err, ArrRef, Eval, Val};
use crate::error::{Location, Result};
use crate::kernel::c::ast::{Expr, ExprKind, Ty};
use crate::kernel::literal::{decimal, fraction};
use crate::kernel::term::{Id, Op};

impl Eval<'_> {
    pub(super) fn int(&mut self, e: &Expr, what: &str) -> Result<i64> {
        match self.value(e)? {
            Val::Int(v) => Ok(v),
            Val::Float(id) => match self.dag.op(id) {
                Op::Num(n) => Ok(n),
                _ => Err(err(
                    &e.loc,
                    format!("{what} depends on the input data (outside the kernel subset)"),
                )),
            },
            Val::Arr(_) => Err(err(&e.loc, format!("{what} is an array"))),
        }
    }

    pub(super) fn float(&mut self, e: &Expr) -> Result<Id> {
        let v = self.value(e)?;
        self.float_of(v, &e.loc)
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<Val> {
        Ok(match &e.kind {
            ExprKind::Int(v) => Val::Int(*v),
            ExprKind::Float(text) => {
                let exact = decimal(text).ok_or_else(|| {
                    err(
                        &e.loc,
                        format!("float literal {text} is not exact enough for the kernel subset"),
                    )
                })?;
                Val::Float(fraction(&mut self.dag, exact))
            }
            ExprKind::Var(name) => self.lookup(name, &e.loc)?,
            ExprKind::Index(a, i) => {
                let arr = match self.expr(a)? {
                    Val::Arr(r) => r,
                    _ => return Err(err(&a.loc, "indexing something that is not an array")),
                };
                let idx = self.int(i, "an index")?;
                let Some((&n, rest)) = arr.dims.split_first() else {
                    return Err(err(&e.loc, "too many indices"));
                };
                if idx < 0 || idx as usize >= n {
                    return Err(err(&i.loc, format!("index {idx} is out of bounds 0..{n}")));
                }
                let stride: usize = rest.iter().product();
                let r = ArrRef {
                    store: arr.store,
                    offset: arr.offset + idx as usize * stride,
                    dims: rest.to_vec(),
                };
                Val::Arr(r)
            }
            ExprKind::Call(name, args) => self.call(name, args, &e.loc)?,
            ExprKind::Unary(op, x) => match (*op, self.value(x)?) {
                ("-", Val::Int(v)) => Val::Int(-v),
                ("-", Val::Float(id)) => Val::Float(self.neg(id)),
                ("+", v) => v,
                ("!", Val::Int(v)) => Val::Int((v == 0) as i64),
                _ => {
                    return Err(err(
                        &e.loc,
                        format!("'{op}' of this operand is outside the kernel subset"),
                    ))
                }
            },
            ExprKind::Binary(op, a, b) => {
                if *op == "&&" || *op == "||" {
                    let l = self.int(a, "a condition")?;
                    let short = if *op == "&&" { l == 0 } else { l != 0 };
                    return Ok(Val::Int(if short {
                        (*op == "||") as i64
                    } else {
                        (self.int(b, "a condition")? != 0) as i64
                    }));
                }
                match (self.value(a)?, self.value(b)?) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(int_op(op, x, y, &e.loc)?),
                    (Val::Arr(p), Val::Int(k)) if *op == "+" => self.moved(p, k, &e.loc)?,
                    (Val::Arr(p), Val::Int(k)) if *op == "-" => self.moved(p, -k, &e.loc)?,
                    (Val::Int(k), Val::Arr(p)) if *op == "+" => self.moved(p, k, &e.loc)?,
                    (x, y) => {
                        if ["<", "<=", ">", ">=", "==", "!="].contains(op) {
                            return Err(err(&e.loc, format!("comparison '{op}' of input data is outside the kernel subset (if only on loop indices)")));
                        }
                        let x = self.float_of(x, &a.loc)?;
                        let y = self.float_of(y, &b.loc)?;
                        Val::Float(self.float_op(op, x, y, &e.loc)?)
                    }
                }
            }
            ExprKind::Ternary(c, a, b) => {
                if self.int(c, "a condition")? != 0 {
                    self.value(a)?
                } else {
                    self.value(b)?
                }
            }
            ExprKind::AddressOf(x) => match self.expr(x)? {
                Val::Arr(a) => Val::Arr(self.flat(a)),
                _ => return Err(err(&e.loc, "'&' of something not an array element")),
            },
            ExprKind::List(_) => {
                return Err(err(&e.loc, "a brace list outside an array's initializer"))
            }
            ExprKind::Cast(ty, x) => match (ty, self.value(x)?) {
                (Ty::Float, Val::Int(v)) => Val::Float(self.dag.num(v)),
                (Ty::Float, v @ Val::Float(_)) => v,
                (Ty::Int, Val::Int(v)) => Val::Int(v),
                _ => return Err(err(&e.loc, "this cast is outside the kernel subset")),
            },
        })
    }

    /// An expression's value with array elements read.
    pub(super) fn value(&mut self, e: &Expr) -> Result<Val> {
        match self.expr(e)? {
            Val::Arr(a) if a.dims.is_empty() => {
                Ok(Val::Float(self.read(a.store, a.offset, &e.loc)?))
            }
            v => Ok(v),
        }
    }

    pub(super) fn float_of(&mut self, v: Val, loc: &Location) -> Result<Id> {
        match v {
            Val::Float(id) => Ok(id),
            Val::Int(n) => Ok(self.dag.num(n)),
            Val::Arr(_) => Err(err(loc, "an array where a value is expected")),
        }
    }
}
