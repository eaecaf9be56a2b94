//! Expressions: `?:`, binary operators by precedence, unary operators, casts, calls, indexing,
//! and integer constant expressions.

use super::{Parser, BINARY};
use crate::error::{Error, Result};
use crate::kernel::c::ast::{Expr, ExprKind, Ty};
use crate::kernel::c::lex::Tok;
use std::collections::HashMap;

impl Parser<'_> {
    pub fn expr(&mut self) -> Result<Expr> {
        let cond = self.binary(1)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            let loc = cond.loc.clone();
            return Ok(Expr {
                kind: ExprKind::Ternary(Box::new(cond), Box::new(a), Box::new(b)),
                loc,
            });
        }
        Ok(cond)
    }

    fn binary(&mut self, min: u8) -> Result<Expr> {
        let mut lhs = self.unary()?;
        while let Some(&(op, prec)) = BINARY.iter().find(|(o, p)| *p >= min && self.is(o)) {
            let loc = self.loc();
            self.pos += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                loc,
            };
        }
        Ok(lhs)
    }

    pub(super) fn unary(&mut self) -> Result<Expr> {
        let loc = self.loc();
        for op in ["-", "!", "+"] {
            if self.eat(op) {
                let e = self.unary()?;
                let op: &'static str = ["-", "!", "+"]
                    .into_iter()
                    .find(|o| *o == op)
                    .expect("listed");
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    loc,
                });
            }
        }
        if self.is("(") {
            let save = self.pos;
            self.pos += 1;
            if let Some(ty) = self.ty()? {
                let pointer = self.stars() > 0;
                self.expect(")")?;
                let e = self.unary()?;
                if pointer && ty != Ty::Int {
                    // `(float *)calloc(...)`: the allocation itself.
                    return Ok(e);
                }
                if pointer || ty == Ty::Void {
                    return Err(Error::parse(&loc, "this cast is outside the kernel subset"));
                }
                return Ok(Expr {
                    kind: ExprKind::Cast(ty, Box::new(e)),
                    loc,
                });
            }
            self.pos = save;
        }
        if self.is_word("sizeof") {
            return self.size_of();
        }
        if self.eat("&") {
            let e = self.unary()?;
            return Ok(Expr {
                kind: ExprKind::AddressOf(Box::new(e)),
                loc,
            });
        }
        if self.is("*") {
            return Err(Error::parse(
                &loc,
                "'*' of a pointer is outside the kernel subset (index it: p[0])",
            ));
        }
        let mut e = self.primary()?;
        loop {
            if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                let l = e.loc.clone();
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    loc: l,
                };
            } else if self.is("(") {
                let ExprKind::Var(name) = &e.kind else {
                    return Err(Error::parse(
                        &self.loc(),
                        "only named functions can be called",
                    ));
                };
                let name = name.clone();
                self.pos += 1;
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                e = Expr {
                    kind: ExprKind::Call(name, args),
                    loc: e.loc,
                };
            } else {
                break;
            }
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr> {
        let loc = self.loc();
        let kind = match self.peek().cloned() {
            Some(Tok::Int(n)) => ExprKind::Int(n),
            Some(Tok::Float(f)) => ExprKind::Float(f),
            Some(Tok::Ident(w)) => ExprKind::Var(w),
            Some(Tok::Punct("(")) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(e);
            }
            _ => {
                return Err(Error::parse(
                    &loc,
                    format!("expected an expression, found {}", self.found()),
                ))
            }
        };
        self.pos += 1;
        Ok(Expr { kind, loc })
    }

    /// `sizeof(TYPE)` in bytes: 4 for `float` and `int`, 8 for `long`, `size_t` and pointers.
    fn size_of(&mut self) -> Result<Expr> {
        let loc = self.loc();
        self.pos += 1;
        let open = self.eat("(");
        let wide = self.toks[self.pos..]
            .iter()
            .take_while(|t| t.tok != Tok::Punct(")"))
            .any(|t| matches!(&t.tok, Tok::Ident(w) if w == "long" || w == "size_t"));
        let ty = if open { self.ty()? } else { None };
        let Some(ty) = ty else {
            return Err(Error::parse(
                &loc,
                "sizeof of an expression is outside the kernel subset (write sizeof(float))",
            ));
        };
        let pointer = self.stars() > 0;
        self.expect(")")?;
        let bytes = match ty {
            _ if pointer || wide => 8,
            Ty::Void => return Err(Error::parse(&loc, "sizeof(void)")),
            Ty::Int | Ty::Float => 4,
        };
        Ok(Expr {
            kind: ExprKind::Int(bytes),
            loc,
        })
    }
}

/// The value of an integer constant expression (literals, the global int constants `names`,
/// `+ - * / %`, unary `-` and `+`, as C computes them); None for anything else, a division by
/// zero or an overflow.
pub(super) fn constant(e: &Expr, names: &HashMap<String, i64>) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        ExprKind::Var(name) => names.get(name).copied(),
        ExprKind::Unary("-", a) => constant(a, names)?.checked_neg(),
        ExprKind::Unary("+", a) => constant(a, names),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (constant(a, names)?, constant(b, names)?);
            match *op {
                "+" => a.checked_add(b),
                "-" => a.checked_sub(b),
                "*" => a.checked_mul(b),
                "/" => a.checked_div(b),
                "%" => a.checked_rem(b),
                _ => None,
            }
        }
        _ => None,
    }
}
