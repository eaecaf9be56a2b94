//! Statements: blocks, `for`, `if`, `return`, declarations and assignments.

use super::Parser;
use crate::error::{Error, Result};
use crate::kernel::c::ast::{Expr, ExprKind, Stmt, Ty};
use crate::kernel::c::lex::Tok;

impl Parser<'_> {
    pub(super) fn block(&mut self) -> Result<Vec<Stmt>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            if self.peek().is_none() {
                return Err(Error::parse(
                    &self.loc(),
                    "expected '}', found the end of the file",
                ));
            }
            out.push(self.stmt()?);
        }
        Ok(out)
    }

    fn stmt(&mut self) -> Result<Stmt> {
        let loc = self.loc();
        if self.is("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if self.eat(";") {
            return Ok(Stmt::Block(vec![]));
        }
        if let Some(Tok::Ident(w)) = self.peek() {
            match w.as_str() {
                "for" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let init = if self.eat(";") {
                        None
                    } else {
                        let s = self.simple()?;
                        self.expect(";")?;
                        Some(Box::new(s))
                    };
                    let cond = if self.is(";") { None } else { Some(self.expr()?) };
                    self.expect(";")?;
                    let step = if self.is(")") { None } else { Some(Box::new(self.simple()?)) };
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    return Ok(Stmt::For {
                        init,
                        cond,
                        step,
                        body,
                        loc,
                    });
                }
                "if" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let then = Box::new(self.stmt()?);
                    let otherwise = if self.is_word("else") {
                        self.pos += 1;
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(Stmt::If { cond, then, otherwise });
                }
                "return" => {
                    self.pos += 1;
                    let e = if self.is(";") { None } else { Some(self.expr()?) };
                    self.expect(";")?;
                    return Ok(Stmt::Return(e));
                }
                "while" | "do" | "switch" | "goto" | "break" | "continue" => {
                    return Err(Error::parse(
                        &loc,
                        format!("'{w}' is outside the kernel subset (for loops with constant bounds, if on loop indices)"),
                    ))
                }
                _ => {}
            }
        }
        let s = self.simple()?;
        self.expect(";")?;
        Ok(s)
    }

    /// A declaration, assignment, increment or expression (no trailing ';').
    fn simple(&mut self) -> Result<Stmt> {
        let loc = self.loc();
        if let Some(ty) = self.ty()? {
            let stars = self.stars();
            let name = self.ident()?;
            let mut dims = Vec::new();
            while self.eat("[") {
                if self.eat("]") {
                    dims.push(None);
                    continue;
                }
                dims.push(Some(self.expr()?));
                self.expect("]")?;
            }
            self.skip_attributes()?;
            if stars > 1 || (stars == 1 && (!dims.is_empty() || ty != Ty::Float)) {
                return Err(Error::parse(
                    &loc,
                    format!("'{name}': only float pointers (float *p) are in the kernel subset"),
                ));
            }
            let init = if self.eat("=") {
                Some(if self.is("{") {
                    self.brace_list()?
                } else {
                    self.expr()?
                })
            } else {
                None
            };
            if self.is(",") {
                return Err(Error::parse(
                    &self.loc(),
                    "declare one variable per statement",
                ));
            }
            return Ok(Stmt::Decl {
                ty,
                name,
                pointer: stars == 1,
                dims,
                init,
                loc,
            });
        }
        // `++x`, `x++` (and `--`) are `x += 1` (`x -= 1`).
        let step = |p: &mut Parser| {
            [("++", "+="), ("--", "-=")]
                .into_iter()
                .find(|(t, _)| p.eat(t))
                .map(|(_, op)| op)
        };
        let pre = step(self);
        let target = if pre.is_some() {
            self.unary()?
        } else {
            self.expr()?
        };
        if let Some(op) = pre.or_else(|| step(self)) {
            let value = Expr {
                kind: ExprKind::Int(1),
                loc: loc.clone(),
            };
            return Ok(Stmt::Assign {
                target,
                op,
                value,
                loc,
            });
        }
        for op in ["=", "+=", "-=", "*=", "/=", "%="] {
            if self.eat(op) {
                let value = self.expr()?;
                let op: &'static str = ["=", "+=", "-=", "*=", "/=", "%="]
                    .into_iter()
                    .find(|o| *o == op)
                    .expect("listed");
                return Ok(Stmt::Assign {
                    target,
                    op,
                    value,
                    loc,
                });
            }
        }
        Ok(Stmt::Expr(target))
    }

    /// A brace initializer, `{a, b, {c, d},}`, nested braces kept.
    fn brace_list(&mut self) -> Result<Expr> {
        let loc = self.loc();
        self.expect("{")?;
        let mut items = Vec::new();
        while !self.eat("}") {
            items.push(if self.is("{") {
                self.brace_list()?
            } else {
                self.expr()?
            });
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        Ok(Expr {
            kind: ExprKind::List(items),
            loc,
        })
    }
}
