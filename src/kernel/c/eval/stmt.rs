//! Statements: blocks with their scopes, declarations, assignments (plain and compound, to
//! variables and to array elements), `for` loops unrolled with a step limit, `if` on integers.

use super::arith::int_op;
use super::{err, Eval, Flow, Val};
use crate::error::{Location, Result};
use crate::kernel::c::ast::{Expr, ExprKind, Stmt, Ty};
use std::collections::HashMap;

impl Eval<'_> {
    pub(super) fn block(&mut self, stmts: &[Stmt]) -> Result<Flow> {
        self.scopes.push(HashMap::new());
        let mut flow = Flow::Normal;
        for s in stmts {
            flow = self.stmt(s)?;
            if matches!(flow, Flow::Return(_)) {
                break;
            }
        }
        self.scopes.pop();
        Ok(flow)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow> {
        match s {
            Stmt::Decl {
                ty,
                name,
                pointer,
                dims,
                init,
                loc,
            } => {
                self.step(loc)?;
                let v = if *pointer {
                    let Some(e) = init else {
                        return Err(err(loc, format!("pointer '{name}' needs an initializer")));
                    };
                    match self.expr(e)? {
                        Val::Arr(a) => Val::Arr(self.flat(a)),
                        _ => {
                            return Err(err(
                                &e.loc,
                                format!("pointer '{name}' must point into an array (calloc, malloc, &a[i], an array)"),
                            ))
                        }
                    }
                } else if dims.is_empty() {
                    match (ty, init) {
                        (_, Some(e)) if matches!(e.kind, ExprKind::List(_)) => {
                            return Err(err(&e.loc, "a brace initializer of a scalar"))
                        }
                        (Ty::Int, Some(e)) => Val::Int(self.int(e, "an int")?),
                        (Ty::Int, None) => Val::Int(0),
                        (Ty::Float, Some(e)) => Val::Float(self.float(e)?),
                        (Ty::Float, None) => Val::Float(self.dag.num(0)),
                        (Ty::Void, _) => return Err(err(loc, "a void variable")),
                    }
                } else {
                    if *ty != Ty::Float {
                        return Err(err(loc, "only float arrays are in the kernel subset"));
                    }
                    self.array_decl(name, dims, init.as_ref(), loc)?
                };
                self.scopes
                    .last_mut()
                    .expect("a scope")
                    .insert(name.clone(), v);
                Ok(Flow::Normal)
            }
            Stmt::Assign {
                target,
                op,
                value,
                loc,
            } => {
                self.step(loc)?;
                self.assign(target, op, value, loc)?;
                Ok(Flow::Normal)
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                loc,
            } => {
                self.scopes.push(HashMap::new());
                if let Some(i) = init {
                    self.stmt(i)?;
                }
                loop {
                    self.step(loc)?;
                    if let Some(c) = cond {
                        if self.int(c, "a loop condition")? == 0 {
                            break;
                        }
                    }
                    if let Flow::Return(v) = self.stmt(body)? {
                        self.scopes.pop();
                        return Ok(Flow::Return(v));
                    }
                    match step {
                        Some(s) => {
                            self.stmt(s)?;
                        }
                        None => return Err(err(loc, "a for loop needs a step")),
                    }
                }
                self.scopes.pop();
                Ok(Flow::Normal)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.int(cond, "an if condition")? != 0 {
                    self.stmt(then)
                } else if let Some(o) = otherwise {
                    self.stmt(o)
                } else {
                    Ok(Flow::Normal)
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Return(e) => Ok(Flow::Return(match e {
                Some(e) => Some(self.expr(e)?),
                None => None,
            })),
            Stmt::Expr(e) => {
                self.expr(e)?;
                Ok(Flow::Normal)
            }
        }
    }

    /// The storage slot an indexed expression names.
    fn element(&mut self, e: &Expr) -> Result<(usize, usize)> {
        match self.expr(e)? {
            Val::Arr(a) if a.dims.is_empty() => Ok((a.store, a.offset)),
            Val::Arr(_) => Err(err(&e.loc, "an array, not an element: index it fully")),
            _ => Err(err(&e.loc, "not an array element")),
        }
    }

    fn assign(&mut self, target: &Expr, op: &str, value: &Expr, loc: &Location) -> Result<()> {
        let bin = op.strip_suffix('=').filter(|b| !b.is_empty());
        match &target.kind {
            ExprKind::Var(name) => {
                let old = self.lookup(name, &target.loc)?;
                let new = match (old, bin) {
                    (Val::Int(_), None) => Val::Int(self.int(value, "an int")?),
                    (Val::Int(a), Some(b)) => {
                        let v = self.int(value, "an int")?;
                        Val::Int(int_op(b, a, v, loc)?)
                    }
                    (Val::Float(_), None) => Val::Float(self.float(value)?),
                    (Val::Float(a), Some(b)) => {
                        let v = self.float(value)?;
                        Val::Float(self.float_op(b, a, v, loc)?)
                    }
                    (Val::Arr(_), None) => match self.expr(value)? {
                        // A pointer pointed elsewhere (`p = q`, `p = &a[i]`).
                        Val::Arr(a) => Val::Arr(self.flat(a)),
                        _ => return Err(err(loc, "a pointer assigned something not an array")),
                    },
                    (Val::Arr(_), _) => return Err(err(loc, "arrays cannot be assigned")),
                };
                self.set(name, new, loc)?;
            }
            ExprKind::Index(..) => {
                let (s, k) = self.element(target)?;
                let v = self.float(value)?;
                let new = match bin {
                    None => v,
                    Some(b) => {
                        let old = self.read(s, k, loc)?;
                        self.float_op(b, old, v, loc)?
                    }
                };
                self.write(s, k, new);
            }
            _ => return Err(err(&target.loc, "cannot assign to this expression")),
        }
        Ok(())
    }
}
