//! Evaluation of meta expressions during elaboration: family parameters, `let`s, `case`, `if`
//! and the type and integer operators of [`crate::ir::meta::META_OPS`]. Part of the elaborator:
//! a meta expression may ask for the type of an IR expression (`(elem x)`, `(lanes x)`), which
//! it elaborates.

use super::Scope;
use crate::error::Result;
use crate::ir::limits::{check_lanes, lanes_message, MAX_LANES};
use crate::ir::meta::Meta;
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::types::{Elem, VecType};

/// Evaluation of meta expressions in a scope: family parameters, `let`s, `case`, `if` and the
/// type and integer operators of [`crate::ir::meta::META_OPS`].
impl Scope<'_> {
    /// Picks the branch of an `if` or `case` form.
    pub(super) fn choose(&mut self, head: &str, args: &[SExpr], s: &SExpr) -> Result<SExpr> {
        if head == "if" {
            if args.len() != 3 {
                return Err(s.err("if takes a condition and two branches"));
            }
            return match self.meta(&args[0])? {
                Meta::Bool(c) => Ok(args[if c { 1 } else { 2 }].clone()),
                other => Err(args[0].err(format!("if needs a true/false condition, got {other}"))),
            };
        }
        let Some((scrutinee, arms)) = args.split_first() else {
            return Err(s.err("case takes a value and pairs of alternatives"));
        };
        if arms.len() % 2 != 0 {
            return Err(s.err("case needs pairs of value and result"));
        }
        let v = self.meta(scrutinee)?;
        for pair in arms.chunks(2) {
            if pair[0].sym() == Some("_") || self.meta(&pair[0])?.same(&v) {
                return Ok(pair[1].clone());
            }
        }
        Err(s.err(format!("case has no alternative for {v}")))
    }

    /// Evaluates a meta expression.
    pub fn meta(&mut self, s: &SExpr) -> Result<Meta> {
        match &s.kind {
            SKind::Int(i) => Ok(Meta::Int(*i)),
            SKind::Float(x) => Ok(Meta::Float(*x)),
            SKind::Str(t) => Ok(Meta::Str(t.clone())),
            SKind::Sym(name) => Ok(match self.meta.get(name) {
                Some(v) => v.clone(),
                None => match name.as_str() {
                    "true" => Meta::Bool(true),
                    "false" => Meta::Bool(false),
                    _ => Elem::parse(name).map_or_else(|| Meta::Sym(name.clone()), Meta::Elem),
                },
            }),
            SKind::List(items) => {
                let head = s.head().ok_or_else(|| s.err("expected an operator"))?;
                let args = &items[1..];
                if head == "if" || head == "case" {
                    let branch = self.choose(head, args, s)?;
                    return self.meta(&branch);
                }
                if let Some(m) = self.macros.map.get(head) {
                    let expanded = m.expand(args, s)?;
                    return self.meta(&expanded);
                }
                self.meta_op(head, args, s)
            }
        }
    }

    fn meta_op(&mut self, head: &str, args: &[SExpr], s: &SExpr) -> Result<Meta> {
        let ints = |sc: &mut Self| {
            args.iter()
                .map(|a| sc.meta_int(a))
                .collect::<Result<Vec<_>>>()
        };
        let fold = |v: Vec<i128>, f: fn(i128, i128) -> Option<i128>| -> Result<Meta> {
            let mut it = v.into_iter();
            let first = it
                .next()
                .ok_or_else(|| s.err(format!("{head} needs operands")))?;
            it.try_fold(first, f)
                .map(Meta::Int)
                .ok_or_else(|| s.err(format!("{head}: overflow or division by zero")))
        };
        let elem_op = |sc: &mut Self, f: fn(Elem) -> Option<Elem>| -> Result<Meta> {
            let [a] = args else {
                return Err(s.err(format!("{head} takes one type")));
            };
            let e = sc.elem(a)?;
            f(e).map(Meta::Elem)
                .ok_or_else(|| s.err(format!("{head} of {e} does not exist")))
        };
        match head {
            "+" => fold(ints(self)?, i128::checked_add),
            "-" if args.len() == 1 => Ok(Meta::Int(-self.meta_int(&args[0])?)),
            "-" => fold(ints(self)?, i128::checked_sub),
            "*" => fold(ints(self)?, i128::checked_mul),
            "/" => fold(ints(self)?, i128::checked_div),
            "%" => fold(ints(self)?, i128::checked_rem),
            "=" | "!=" | "<" | "<=" | ">" | ">=" => {
                if args.len() != 2 {
                    return Err(s.err(format!("{head} takes two operands")));
                }
                let (a, b) = (self.meta(&args[0])?, self.meta(&args[1])?);
                let r = match (head, &a, &b) {
                    ("=", ..) => a.same(&b),
                    ("!=", ..) => !a.same(&b),
                    (_, Meta::Int(x), Meta::Int(y)) => match head {
                        "<" => x < y,
                        "<=" => x <= y,
                        ">" => x > y,
                        _ => x >= y,
                    },
                    _ => return Err(s.err(format!("{head} compares integers, got {a} and {b}"))),
                };
                Ok(Meta::Bool(r))
            }
            "&&" | "||" => {
                for a in args {
                    let b = self.meta_bool(a)?;
                    if b != (head == "&&") {
                        return Ok(Meta::Bool(b));
                    }
                }
                Ok(Meta::Bool(head == "&&"))
            }
            "!" => match args {
                [a] => Ok(Meta::Bool(!self.meta_bool(a)?)),
                _ => Err(s.err("! takes one operand")),
            },
            "in" => {
                let (x, rest) = args
                    .split_first()
                    .ok_or_else(|| s.err("in takes a value and a list"))?;
                let v = self.meta(x)?;
                for r in rest {
                    if self.meta(r)?.same(&v) {
                        return Ok(Meta::Bool(true));
                    }
                }
                Ok(Meta::Bool(false))
            }
            "bits" => match args {
                [a] => Ok(Meta::Int(self.elem(a)?.bits() as i128)),
                _ => Err(s.err("bits takes one type")),
            },
            "log2" => match args {
                [a] => {
                    let v = self.meta_int(a)?;
                    if v > 0 && v & (v - 1) == 0 {
                        Ok(Meta::Int(v.trailing_zeros() as i128))
                    } else {
                        Err(a.err(format!("log2 needs a power of two, got {v}")))
                    }
                }
                _ => Err(s.err("log2 takes one integer")),
            },
            "wide" => elem_op(self, Elem::wide),
            "narrow" => elem_op(self, Elem::narrow),
            "signed" => elem_op(self, Elem::signed),
            "unsigned" => elem_op(self, Elem::unsigned),
            "elem" => match args {
                [a] => match self.meta(a) {
                    Ok(Meta::Elem(e)) => Ok(Meta::Elem(e)),
                    _ => Ok(Meta::Elem(self.expr(a)?.ty.elem)),
                },
                _ => Err(s.err("elem takes one expression or type")),
            },
            "is-signed" => match args {
                [a] => Ok(Meta::Bool(self.elem(a)?.is_signed())),
                _ => Err(s.err("is-signed takes one type")),
            },
            "tmin" | "tmax" => match args {
                [a] => {
                    let e = self.elem(a)?;
                    Ok(Meta::Int(if head == "tmin" {
                        e.min_value()
                    } else {
                        e.max_value()
                    }))
                }
                _ => Err(s.err(format!("{head} takes one type"))),
            },
            "elem-name" => match args {
                [a] => {
                    let e = self.elem(a)?;
                    let n = e.name();
                    Ok(Meta::Sym(if e.is_signed() && e.is_int() {
                        n.replacen('i', "s", 1)
                    } else {
                        n.to_string()
                    }))
                }
                _ => Err(s.err("elem-name takes one type")),
            },
            "str" => {
                let mut out = String::new();
                for a in args {
                    out.push_str(&self.meta(a)?.to_string());
                }
                Ok(Meta::Sym(out))
            }
            "lanes" => match args {
                [a] => Ok(Meta::Int(self.expr(a)?.ty.lanes as i128)),
                _ => Err(s.err("lanes takes one expression")),
            },
            _ => Err(s.err(format!("'{head}' is not a meta operator"))),
        }
    }

    /// A meta expression that must be an integer.
    pub fn meta_int(&mut self, s: &SExpr) -> Result<i128> {
        match self.meta(s)? {
            Meta::Int(i) => Ok(i),
            other => Err(s.err(format!("expected an integer, got {other}"))),
        }
    }

    fn meta_bool(&mut self, s: &SExpr) -> Result<bool> {
        match self.meta(s)? {
            Meta::Bool(b) => Ok(b),
            other => Err(s.err(format!("expected true or false, got {other}"))),
        }
    }

    /// A meta expression that must be a non-negative count.
    pub fn meta_u32(&mut self, s: &SExpr) -> Result<u32> {
        let v = self.meta_int(s)?;
        u32::try_from(v).map_err(|_| s.err(format!("expected a non-negative count, got {v}")))
    }

    /// An element type: a name, a bound parameter, `(elem X)`, or `(wide T)`-style forms.
    pub fn elem(&mut self, s: &SExpr) -> Result<Elem> {
        match self.meta(s)? {
            Meta::Elem(e) => Ok(e),
            Meta::Sym(_) if over_lanes(s).is_some() => Err(s.err(lanes_message(
                over_lanes(s).unwrap_or_default(),
                "vector type",
            ))),
            other => Err(s.err(format!(
                "expected an element type ({}), got {other}",
                Elem::ALL.map(Elem::name).join(" ")
            ))),
        }
    }

    /// A vector type: `<N x T>`, `(vec N T)`, `(mask N)` or an element type (one lane).
    pub fn vec_type(&mut self, s: &SExpr) -> Result<VecType> {
        if let Some(t) = s.sym().and_then(VecType::parse) {
            return Ok(t);
        }
        if let Some(lanes) = s.sym().and_then(VecType::lanes_of_text) {
            return Err(s.err(lanes_message(lanes, "vector type")));
        }
        match s.head() {
            Some("vec") | Some("mask") => {
                let items = s.list().unwrap();
                let elem = match (s.head(), items.len()) {
                    (Some("vec"), 3) => self.elem(&items[2])?,
                    (Some("mask"), 2) => Elem::Bool,
                    _ => return Err(s.err("expected (vec LANES ELEM) or (mask LANES)")),
                };
                let lanes = self.meta_u32(&items[1])?;
                check_lanes(lanes, "vector type").map_err(|e| items[1].err(e.to_string()))?;
                Ok(VecType::new(lanes, elem))
            }
            _ => Ok(VecType::new(1, self.elem(s)?)),
        }
    }
}

/// The lane count of a type atom `<N x T>` with N over [`MAX_LANES`].
fn over_lanes(s: &SExpr) -> Option<u128> {
    s.sym()
        .and_then(VecType::lanes_of_text)
        .filter(|&n| n > MAX_LANES.into())
}
