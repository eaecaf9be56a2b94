//! Arrays as C declares and points into them: a declaration's dimensions (the first may be `[]`,
//! sized by the initializer), its brace initializer (nested braces start a new row; elements
//! not given are zero, as in C), and pointers: an array or an element's address seen as the
//! flat run of elements from there to the end of its storage, moved by `p + k`.

use super::{elements, err, ArrRef, Eval, Val};
use crate::error::{Location, Result};
use crate::kernel::c::ast::{Expr, ExprKind};

impl Eval<'_> {
    /// The array declared as `name` with `dims` and an optional initializer.
    pub(super) fn array_decl(
        &mut self,
        name: &str,
        dims: &[Option<Expr>],
        init: Option<&Expr>,
        loc: &Location,
    ) -> Result<Val> {
        let mut sizes = Vec::new();
        for (level, d) in dims.iter().enumerate() {
            match d {
                Some(e) => {
                    let n = self.int(e, "an array size")?;
                    if !(1..=1 << 20).contains(&n) {
                        return Err(err(&e.loc, format!("array size {n} is out of range")));
                    }
                    sizes.push(n as usize);
                }
                None if level == 0 && init.is_some() => sizes.push(0),
                None => {
                    return Err(err(
                        loc,
                        format!("array '{name}' needs a size (or an initializer for its first)"),
                    ))
                }
            }
        }
        // A row of the dimensions after the first, within the limit (so `place` cannot overflow).
        let row = elements(&sizes[1..], name, loc)?;
        let mut values = Vec::new();
        if let Some(e) = init {
            let ExprKind::List(items) = &e.kind else {
                return Err(err(
                    &e.loc,
                    format!("array '{name}' is initialized by braces"),
                ));
            };
            let mut positions = Vec::new();
            place(items, &sizes, 0, 0, &mut positions)?;
            for (k, item) in positions {
                values.push((k, self.float(item)?));
            }
        }
        if sizes[0] == 0 {
            let used = values.iter().map(|&(k, _)| k + 1).max().unwrap_or(0);
            sizes[0] = used.div_ceil(row).max(1);
        }
        let v = self.array(sizes, None, name, loc)?;
        if let Val::Arr(a) = &v {
            for (k, id) in values {
                self.stores[a.store].elems[k] = Some(id);
            }
        }
        Ok(v)
    }

    /// The run of elements `a` starts, flat, to the end of its storage (a pointer to it).
    pub(super) fn flat(&self, a: ArrRef) -> ArrRef {
        let len = self.capacity(a.store) - a.offset;
        ArrRef {
            dims: vec![len],
            ..a
        }
    }

    /// The pointer `a + k`, within `a`'s storage (its end included).
    pub(super) fn moved(&self, a: ArrRef, k: i64, loc: &Location) -> Result<Val> {
        let stride: usize = a.dims[1..].iter().product();
        let offset = k
            .checked_mul(stride as i64)
            .and_then(|d| d.checked_add(a.offset as i64))
            .filter(|&o| o >= 0 && o as usize <= self.capacity(a.store))
            .ok_or_else(|| err(loc, "pointer arithmetic past the ends of its array"))?;
        Ok(Val::Arr(self.flat(ArrRef {
            offset: offset as usize,
            ..a
        })))
    }
}

/// The flat positions of a brace initializer's elements in an array of `dims` (a first of 0 is
/// unbounded), from `base`: a nested list starts the next row of the level below.
fn place<'e>(
    items: &'e [Expr],
    dims: &[usize],
    level: usize,
    base: usize,
    out: &mut Vec<(usize, &'e Expr)>,
) -> Result<()> {
    let row: usize = dims[level + 1..].iter().product();
    let capacity = match dims[level] {
        0 => usize::MAX,
        n => n * row,
    };
    let mut at = 0usize;
    for item in items {
        match &item.kind {
            ExprKind::List(inner) if level + 1 < dims.len() => {
                at = at.div_ceil(row) * row;
                if at >= capacity {
                    return Err(err(&item.loc, "too many initializers for the array"));
                }
                place(inner, dims, level + 1, base + at, out)?;
                at += row;
            }
            ExprKind::List(_) => return Err(err(&item.loc, "braces around a scalar initializer")),
            _ => {
                if at >= capacity {
                    return Err(err(&item.loc, "too many initializers for the array"));
                }
                out.push((base + at, item));
                at += 1;
            }
        }
    }
    Ok(())
}
