//! Calls: the builtins `sqrtf`/`sqrt` and `sgn`/`sgnf` as terms, `powf`/`pow` by a constant
//! exponent from 0 to [`POW_LIMIT`] as a product, and the kernel's own helper
//! functions inlined with their arguments bound in a fresh frame (arrays by reference, reshaped
//! to the parameter's inner dimensions), nested at most [`CALL_DEPTH`] deep.

use super::{err, Eval, Flow, Val, CALL_DEPTH};
use crate::error::{Location, Result};
use crate::kernel::c::ast::{Expr, Ty};
use crate::kernel::term::Op;
use std::collections::HashMap;

/// The largest constant exponent of `pow`.
const POW_LIMIT: i64 = 16;

impl Eval<'_> {
    pub(super) fn call(&mut self, name: &str, args: &[Expr], loc: &Location) -> Result<Val> {
        match name {
            "sqrtf" | "sqrt" | "sgn" | "sgnf" => {
                if args.len() != 1 {
                    return Err(err(loc, format!("{name} takes one argument")));
                }
                let x = self.value(&args[0])?;
                let x = self.float_of(x, &args[0].loc)?;
                let op = if name.starts_with("sqrt") {
                    Op::Sqrt
                } else {
                    Op::Sgn
                };
                return Ok(Val::Float(self.dag.add(op, &[x])));
            }
            "powf" | "pow" => {
                if args.len() != 2 {
                    return Err(err(loc, format!("{name} takes two arguments")));
                }
                let x = self.value(&args[0])?;
                let x = self.float_of(x, &args[0].loc)?;
                let k = self
                    .int(&args[1], "an exponent")
                    .ok()
                    .filter(|k| (0..=POW_LIMIT).contains(k));
                let Some(k) = k else {
                    return Err(err(
                        &args[1].loc,
                        format!(
                            "{name}'s exponent must be an integer constant from 0 to {POW_LIMIT}"
                        ),
                    ));
                };
                let mut product = self.dag.num(1);
                for _ in 0..k {
                    product = self.float_op("*", product, x, loc)?;
                }
                return Ok(Val::Float(product));
            }
            _ => {}
        }
        if let Some(v) = self.library(name, args, loc)? {
            return Ok(v);
        }
        let f = self
            .funcs
            .iter()
            .find(|f| f.name == name && f.defined())
            .ok_or_else(|| {
                err(
                    loc,
                    format!("call of '{name}', which is neither defined here nor sqrtf/sgn/pow or a memory function"),
                )
            })?;
        if let Some((loc, msg)) = &f.unparsed {
            return Err(err(loc, msg.clone()));
        }
        if f.params.len() != args.len() {
            return Err(err(
                loc,
                format!(
                    "'{name}' takes {} arguments, given {}",
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        self.depth += 1;
        if self.depth > CALL_DEPTH {
            return Err(err(
                loc,
                "calls nest too deeply (recursion is outside the kernel subset)",
            ));
        }
        let mut frame = HashMap::new();
        for (p, a) in f.params.iter().zip(args) {
            let v = if p.dims.is_empty() {
                match p.ty {
                    Ty::Int => Val::Int(self.int(a, "an int argument")?),
                    _ => {
                        let v = self.value(a)?;
                        Val::Float(self.float_of(v, &a.loc)?)
                    }
                }
            } else {
                match self.expr(a)? {
                    Val::Arr(r) => {
                        let mut r = r;
                        if p.dims.len() > 1 {
                            let want: Vec<usize> =
                                p.dims[1..].iter().map(|d| d.unwrap_or(0)).collect();
                            if want.iter().all(|&d| d > 0) {
                                let total: usize = r.dims.iter().product();
                                let inner: usize = want.iter().product();
                                r.dims =
                                    std::iter::once(total / inner.max(1)).chain(want).collect();
                            }
                        } else {
                            r.dims = vec![r.dims.iter().product()];
                        }
                        Val::Arr(r)
                    }
                    _ => {
                        return Err(err(
                            &a.loc,
                            format!("argument '{}' of '{name}' must be an array", p.name),
                        ))
                    }
                }
            };
            frame.insert(p.name.clone(), v);
        }
        let saved = std::mem::replace(&mut self.scopes, vec![frame]);
        let flow = self.block(f.body.as_ref().expect("has a body"));
        self.scopes = saved;
        self.depth -= 1;
        match flow? {
            Flow::Return(Some(v)) => Ok(v),
            _ if f.ret == Ty::Void => Ok(Val::Int(0)),
            _ => Err(err(
                &f.loc,
                format!("'{name}' ends without returning a value"),
            )),
        }
    }
}
