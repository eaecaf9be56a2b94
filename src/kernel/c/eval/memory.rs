//! The C library's memory functions on the kernel's arrays, sizes in bytes (4 per `float`):
//! `calloc` allocates a zeroed array, `malloc` one whose elements must be written before they
//! are read, `free` does nothing, `memcpy`/`memmove` copy elements (reading all before writing,
//! as `memmove`), `memset` to 0 zeroes them.

use super::{err, ArrRef, Eval, Val};
use crate::error::{Location, Result};
use crate::kernel::c::ast::Expr;

impl Eval<'_> {
    /// The library call `name(args)`; None if `name` is not one of these functions.
    pub(super) fn library(
        &mut self,
        name: &str,
        args: &[Expr],
        loc: &Location,
    ) -> Result<Option<Val>> {
        let arity = match name {
            "malloc" | "free" => 1,
            "calloc" => 2,
            "memcpy" | "memmove" | "memset" => 3,
            _ => return Ok(None),
        };
        if args.len() != arity {
            return Err(err(loc, format!("{name} takes {arity} arguments")));
        }
        Ok(Some(match name {
            "calloc" | "malloc" => {
                let mut bytes = 1i64;
                for a in args {
                    let n = self.int(a, "an allocation size")?;
                    bytes = bytes
                        .checked_mul(n)
                        .ok_or_else(|| err(&a.loc, "an allocation size overflows"))?;
                }
                let n = floats(bytes, loc)?.max(1);
                let v = self.array(vec![n], None, name, loc)?;
                if let (Val::Arr(a), "malloc") = (&v, name) {
                    self.stores[a.store].undefined = true;
                }
                v
            }
            "free" => {
                self.pointer_arg(&args[0], name)?;
                Val::Int(0)
            }
            "memset" => {
                let dst = self.pointer_arg(&args[0], name)?;
                if self.int(&args[1], "memset's value")? != 0 {
                    return Err(err(
                        &args[1].loc,
                        "memset to a value other than 0 is outside the kernel subset",
                    ));
                }
                let n = self.run(&dst, &args[2], name)?;
                self.steps_of(n, loc)?;
                let zero = self.dag.num(0);
                for i in 0..n {
                    self.write(dst.store, dst.offset + i, zero);
                }
                Val::Arr(dst)
            }
            _ => {
                let dst = self.pointer_arg(&args[0], name)?;
                let src = self.pointer_arg(&args[1], name)?;
                let n = self
                    .run(&dst, &args[2], name)?
                    .min(self.run(&src, &args[2], name)?);
                self.steps_of(n, loc)?;
                let mut values = Vec::with_capacity(n);
                for i in 0..n {
                    values.push(self.read(src.store, src.offset + i, loc)?);
                }
                for (i, v) in values.into_iter().enumerate() {
                    self.write(dst.store, dst.offset + i, v);
                }
                Val::Arr(dst)
            }
        }))
    }

    /// An argument that must be an array (a pointer into one), flat.
    fn pointer_arg(&mut self, a: &Expr, name: &str) -> Result<ArrRef> {
        match self.expr(a)? {
            Val::Arr(r) => Ok(self.flat(r)),
            _ => Err(err(&a.loc, format!("{name} takes an array here"))),
        }
    }

    /// The elements `bytes` covers from `at`, within its storage.
    fn run(&mut self, at: &ArrRef, bytes: &Expr, name: &str) -> Result<usize> {
        let n = floats(self.int(bytes, "a size in bytes")?, &bytes.loc)?;
        if n > at.dims[0] {
            return Err(err(
                &bytes.loc,
                format!(
                    "{name} of {n} floats runs past the end of its array ({} left)",
                    at.dims[0]
                ),
            ));
        }
        Ok(n)
    }
}

/// The floats `bytes` bytes hold.
fn floats(bytes: i64, loc: &Location) -> Result<usize> {
    if bytes < 0 || bytes % 4 != 0 {
        return Err(err(
            loc,
            format!("{bytes} bytes is not a whole number of floats"),
        ));
    }
    Ok((bytes / 4) as usize)
}
