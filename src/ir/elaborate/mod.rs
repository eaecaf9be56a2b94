//! Elaboration of s-expressions into typed IR: resolves names, expands macros and idioms,
//! evaluates meta expressions, gives integer literals the type of their sibling operands.

mod coerce;
mod divide;
mod halide_calls;
mod literal;
mod meta_eval;

use super::expr::{Expr, Op, SIMPLE_OPS};
use super::meta::{Meta, META_OPS};
use super::sexpr::{SExpr, SKind};
use super::types::{Elem, VecType};
use crate::error::{Error, Location, Result};
use crate::words::did_you_mean;
use literal::literal_as;
use std::collections::HashMap;
use std::rc::Rc;

/// A named template over s-expressions: `define`d helpers and idioms alike.
#[derive(Debug, Clone)]
pub struct Macro {
    pub name: String,
    pub params: Vec<String>,
    pub body: SExpr,
}

impl Macro {
    /// The body with each parameter replaced by its argument.
    pub(super) fn expand(&self, args: &[SExpr], at: &SExpr) -> Result<SExpr> {
        if args.len() != self.params.len() {
            return Err(at.err(format!(
                "{} takes {} argument(s) ({}), got {}",
                self.name,
                self.params.len(),
                self.params.join(" "),
                args.len()
            )));
        }
        let map: HashMap<&str, &SExpr> = self
            .params
            .iter()
            .map(String::as_str)
            .zip(args.iter())
            .collect();
        Ok(substitute(&self.body, &map))
    }
}

/// Replaces symbols by s-expressions throughout a tree.
pub fn substitute(s: &SExpr, map: &HashMap<&str, &SExpr>) -> SExpr {
    match &s.kind {
        SKind::Sym(name) => map
            .get(name.as_str())
            .map_or_else(|| s.clone(), |r| (*r).clone()),
        SKind::List(items) => SExpr {
            kind: SKind::List(items.iter().map(|i| substitute(i, map)).collect()),
            loc: s.loc.clone(),
        },
        _ => s.clone(),
    }
}

/// All macros (from `define` and `idiom` forms) visible to every spec and expression.
#[derive(Debug, Default, Clone)]
pub struct Macros {
    /// By name.
    pub map: HashMap<String, Macro>,
}

impl Macros {
    /// Adds a macro; a name already defined (or built in) is an error at `at`.
    pub fn insert(&mut self, m: Macro, at: &Location) -> Result<()> {
        if self.map.contains_key(&m.name) || is_builtin(&m.name) {
            return Err(Error::parse(at, format!("'{}' is already defined", m.name)));
        }
        self.map.insert(m.name.clone(), m);
        Ok(())
    }
}

fn is_builtin(name: &str) -> bool {
    SIMPLE_OPS.iter().any(|(n, _)| *n == name)
        || META_OPS.contains(&name)
        || [
            "var",
            "const",
            "divide-by",
            "remainder-by",
            "let",
            "as",
            "select",
            "compress",
            "expand",
            "cast",
            "sat-cast",
            "bitcast",
            "broadcast",
            "concat",
            "slice",
            "interleave",
            "shuffle",
            "blockwise",
            "lookup",
            "reduce-add",
            "tabulate",
            "vec",
            "mask",
        ]
        .contains(&name)
}

impl Macros {
    /// Checks that every operator `body` applies (the head of each list) is built in or one of
    /// these macros, so a macro or idiom with a misspelt operator is an error when it is read,
    /// not when (or if) some instruction is matched against it. `blockwise`'s operand list and
    /// `shuffle`'s index list are not applications.
    pub fn check_operators(&self, body: &SExpr) -> Result<()> {
        let mut todo = vec![body];
        while let Some(s) = todo.pop() {
            let Some(items) = s.list() else { continue };
            let skip = match s.head() {
                Some(head) if !is_builtin(head) && !self.map.contains_key(head) => {
                    let mut known: Vec<&str> = self.map.keys().map(String::as_str).collect();
                    known.extend(SIMPLE_OPS.iter().map(|(n, _)| *n));
                    return Err(s.err(format!(
                        "unknown operator '{head}'{}",
                        did_you_mean(head, &known)
                    )));
                }
                Some("blockwise") => 2,
                Some("shuffle") => 1,
                _ => 0,
            };
            todo.extend(
                items
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| skip == 0 || *i != skip)
                    .map(|(_, x)| x),
            );
        }
        Ok(())
    }
}

/// A subexpression before its literals are typed.
enum Elab {
    Typed(Rc<Expr>),
    /// A literal, with the element type a cast gave it (`i8(1)`), lanes still to come from its
    /// siblings.
    Lit(SExpr, Option<Elem>),
}

const MAX_EXPANSION_DEPTH: usize = 64;

/// The names an expression may use: meta values, IR variables and the macros.
#[derive(Clone)]
pub struct Scope<'m> {
    /// The macros and idioms.
    pub macros: &'m Macros,
    /// Meta values: family parameters and `let`s of the meta level.
    pub meta: HashMap<String, Meta>,
    /// IR variables and `let` bindings.
    pub vars: HashMap<String, Rc<Expr>>,
    /// With a lane count, a free name ending in a type suffix (`a_u8`) is a variable of that type.
    pub implicit_lanes: Option<u32>,
    /// The source text (its location's file) written in Halide's syntax, whose operators'
    /// operands of different types meet as Halide's front end converts them ([`coerce`]) and
    /// whose literals nothing else types are Halide's i32 or f32; the macros it calls, and the
    /// s-expression form, take operands of one type.
    pub halide_source: Option<String>,
    depth: usize,
}

impl<'m> Scope<'m> {
    /// An empty scope over `macros`.
    pub fn new(macros: &'m Macros) -> Scope<'m> {
        Scope {
            macros,
            meta: HashMap::new(),
            vars: HashMap::new(),
            implicit_lanes: None,
            halide_source: None,
            depth: 0,
        }
    }

    /// Declares the IR variable `name` of type `ty`.
    pub fn bind_var(&mut self, name: &str, ty: VecType) {
        self.vars
            .insert(name.to_string(), Rc::new(Expr::var(name, ty)));
    }

    /// Elaborates a complete IR expression.
    pub fn expr(&mut self, s: &SExpr) -> Result<Rc<Expr>> {
        let e = self.elab(s)?;
        self.typed(e, s)
    }

    fn typed(&self, e: Elab, at: &SExpr) -> Result<Rc<Expr>> {
        match e {
            Elab::Typed(e) => Ok(e),
            // A cast literal where implicit variables have lanes: it has as many.
            Elab::Lit(lit, Some(elem)) if self.implicit_lanes.is_some() => {
                let lanes = self.implicit_lanes.unwrap_or(1);
                Ok(Rc::new(self.constant(
                    VecType::new(lanes, elem),
                    &[lit],
                    at,
                )?))
            }
            Elab::Lit(lit, _) => Err(at.err(format!(
                "cannot tell the type of the literal {lit} here; write (const TYPE {lit})"
            ))),
        }
    }

    fn elab(&mut self, s: &SExpr) -> Result<Elab> {
        match &s.kind {
            SKind::Int(_) | SKind::Float(_) => Ok(Elab::Lit(s.clone(), None)),
            SKind::Str(text) => {
                Err(s.err(format!("expected an expression, found the string {text:?}")))
            }
            SKind::Sym(name) => self.name(name, s),
            SKind::List(items) => {
                let Some(head) = s.head() else {
                    return Err(s.err("expected an operator at the head of the list"));
                };
                self.list(head, &items[1..], s)
            }
        }
    }

    fn name(&self, name: &str, s: &SExpr) -> Result<Elab> {
        if let Some(v) = self.vars.get(name) {
            return Ok(Elab::Typed(v.clone()));
        }
        match self.meta.get(name) {
            Some(Meta::Int(i)) => {
                return Ok(Elab::Lit(
                    SExpr {
                        kind: SKind::Int(*i),
                        loc: s.loc.clone(),
                    },
                    None,
                ))
            }
            Some(other) => return Err(s.err(format!("'{name}' is {other}, not a value"))),
            None => {}
        }
        if let Some(lanes) = self.implicit_lanes {
            if let Some(elem) = Elem::of_variable(name) {
                return Ok(Elab::Typed(Rc::new(Expr::var(
                    name,
                    VecType::new(lanes, elem),
                ))));
            }
        }
        if self.macros.map.contains_key(name) {
            return Err(s.err(format!(
                "'{name}' is a function, not a value: call it, as {name}(...)"
            )));
        }
        let mut known: Vec<&str> = self.vars.keys().map(String::as_str).collect();
        known.extend(self.macros.map.keys().map(String::as_str));
        Err(s.err(format!(
            "unknown name '{name}'{}",
            did_you_mean(name, &known)
        )))
    }

    fn list(&mut self, head: &str, args: &[SExpr], s: &SExpr) -> Result<Elab> {
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(s.err(format!("{head} takes {n} argument(s), got {}", args.len())))
            }
        };
        let build = |op: Op, a: Vec<Rc<Expr>>| -> Result<Elab> {
            Expr::build(op, a)
                .map(|e| Elab::Typed(Rc::new(e)))
                .map_err(|m| Error::ty(&s.loc, m))
        };
        match head {
            "if" | "case" => {
                let branch = self.choose(head, args, s)?;
                self.elab(&branch)
            }
            _ if META_OPS.contains(&head) => match self.meta(s)? {
                Meta::Int(i) => Ok(Elab::Lit(
                    SExpr {
                        kind: SKind::Int(i),
                        loc: s.loc.clone(),
                    },
                    None,
                )),
                other => Err(s.err(format!("expected a value, but ({head} ...) is {other}"))),
            },
            "divide-by" | "remainder-by" => self.divide_by(head, args, s),
            "var" => {
                arity(2)?;
                let name = args[0]
                    .sym()
                    .ok_or_else(|| args[0].err("expected a variable name"))?;
                let ty = self.vec_type(&args[1])?;
                Ok(Elab::Typed(Rc::new(Expr::var(name, ty))))
            }
            "const" => {
                if args.len() < 2 {
                    return Err(s.err("const takes a type and one value or one per lane"));
                }
                let ty = self.vec_type(&args[0])?;
                let vals = self.const_values(&args[1..])?;
                Ok(Elab::Typed(Rc::new(self.constant(ty, &vals, s)?)))
            }
            "let" => {
                arity(3)?;
                let name = args[0]
                    .sym()
                    .ok_or_else(|| args[0].err("expected a name to bind"))?;
                let value = self.expr(&args[1])?;
                let saved = self.vars.insert(name.to_string(), value);
                let body = self.elab(&args[2]);
                match saved {
                    Some(v) => self.vars.insert(name.to_string(), v),
                    None => self.vars.remove(name),
                };
                body
            }
            "cast" | "sat-cast" | "bitcast" => {
                arity(2)?;
                let elem = self.elem(&args[0])?;
                let x = match self.elab(&args[1])? {
                    // A cast literal stays a literal of the cast's type (its value wrapped or
                    // clamped there); its sibling operands give it lanes later.
                    Elab::Lit(lit, _) if head != "bitcast" => {
                        return Ok(Elab::Lit(
                            literal_as(lit, elem, head == "sat-cast"),
                            Some(elem),
                        ))
                    }
                    other => self.typed(other, &args[1])?,
                };
                let op = match head {
                    "cast" => Op::Cast(elem),
                    "sat-cast" => Op::SatCast(elem),
                    _ => Op::Bitcast(elem),
                };
                build(op, vec![x])
            }
            "as" => {
                arity(2)?;
                let like = self.expr(&args[0])?;
                match self.elab(&args[1])? {
                    Elab::Lit(lit, _) => Ok(Elab::Typed(Rc::new(self.constant(
                        like.ty,
                        &[lit],
                        &args[1],
                    )?))),
                    Elab::Typed(x) if x.ty.elem == like.ty.elem => Ok(Elab::Typed(x)),
                    Elab::Typed(x) => build(Op::Cast(like.ty.elem), vec![x]),
                }
            }
            "broadcast" | "reduce-add" => {
                arity(2)?;
                let n = self.meta_u32(&args[0])?;
                let x = self.expr(&args[1])?;
                build(
                    if head == "broadcast" {
                        Op::Broadcast(n)
                    } else {
                        Op::ReduceAdd(n)
                    },
                    vec![x],
                )
            }
            "slice" => {
                arity(4)?;
                let start = self.meta_u32(&args[0])?;
                let stride = self.meta_u32(&args[1])?;
                let lanes = self.meta_u32(&args[2])?;
                let x = self.expr(&args[3])?;
                build(
                    Op::Slice {
                        start,
                        stride,
                        lanes,
                    },
                    vec![x],
                )
            }
            "blockwise" => {
                arity(3)?;
                let blocks = self.meta_u32(&args[0])?;
                let names = args[1]
                    .list()
                    .ok_or_else(|| args[1].err("expected a list of operand names"))?;
                let names = names
                    .iter()
                    .map(|n| n.sym().ok_or_else(|| n.err("expected an operand name")))
                    .collect::<Result<Vec<_>>>()?;
                let whole = names
                    .iter()
                    .map(|n| {
                        self.vars
                            .get(*n)
                            .cloned()
                            .ok_or_else(|| s.err(format!("blockwise: '{n}' is not an operand")))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let mut parts = Vec::new();
                for b in 0..blocks {
                    for (n, w) in names.iter().zip(&whole) {
                        let len = w.ty.lanes / blocks.max(1);
                        let part = Expr::build(
                            Op::Slice {
                                start: b * len,
                                stride: 1,
                                lanes: len,
                            },
                            vec![w.clone()],
                        )
                        .map_err(|m| Error::ty(&s.loc, format!("blockwise {blocks}: {m}")))?;
                        self.vars.insert(n.to_string(), Rc::new(part));
                    }
                    let part = self.expr(&args[2]);
                    for (n, w) in names.iter().zip(&whole) {
                        self.vars.insert(n.to_string(), w.clone());
                    }
                    parts.push(part?);
                }
                build(Op::Concat, parts)
            }
            "shuffle" => {
                if args.len() < 2 {
                    return Err(s.err("shuffle takes an index list and at least one vector"));
                }
                let idx = self
                    .int_list(&args[0])?
                    .into_iter()
                    .map(|i| {
                        u32::try_from(i).map_err(|_| args[0].err(format!("bad shuffle index {i}")))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let xs = args[1..]
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>>>()?;
                build(Op::Shuffle(idx), xs)
            }
            _ => {
                if let Some(m) = self.macros.map.get(head) {
                    if let Some(done) = self.halide_call(head, args, s)? {
                        return Ok(done);
                    }
                    if self.depth >= MAX_EXPANSION_DEPTH {
                        return Err(s.err(format!(
                            "expansion of {head} nests too deep (recursive macro?)"
                        )));
                    }
                    let expanded = m.expand(args, s)?;
                    self.depth += 1;
                    let r = self.elab(&expanded);
                    self.depth -= 1;
                    return r.map_err(|e| self.at_call(e, head, s));
                }
                let op = match head {
                    "select" => Op::Select,
                    "compress" => Op::Compress,
                    "expand" => Op::Expand,
                    "concat" => Op::Concat,
                    "interleave" => Op::Interleave,
                    "lookup" => Op::Lookup,
                    _ => match SIMPLE_OPS.iter().find(|(n, _)| *n == head) {
                        Some((_, op)) => op.clone(),
                        None => {
                            let mut known: Vec<&str> = SIMPLE_OPS.iter().map(|(n, _)| *n).collect();
                            known.extend(self.macros.map.keys().map(String::as_str));
                            known.extend([
                                "select",
                                "compress",
                                "expand",
                                "cast",
                                "sat-cast",
                                "slice",
                                "concat",
                                "broadcast",
                            ]);
                            return Err(s.err(format!(
                                "unknown operator '{head}'{}",
                                did_you_mean(head, &known)
                            )));
                        }
                    },
                };
                let elabs = args
                    .iter()
                    .map(|a| self.elab(a))
                    .collect::<Result<Vec<_>>>()?;
                let mut typed = self.type_literals(&op, elabs, args, s)?;
                if self.is_halide(s) {
                    typed = coerce::match_types(&op, typed).map_err(|m| Error::ty(&s.loc, m))?;
                }
                build(op, typed)
            }
        }
    }

    fn const_values(&mut self, args: &[SExpr]) -> Result<Vec<SExpr>> {
        if args.len() == 1 && args[0].head() == Some("tabulate") {
            let ints = self.int_list(&args[0])?;
            return Ok(ints
                .into_iter()
                .map(|i| SExpr {
                    kind: SKind::Int(i),
                    loc: args[0].loc.clone(),
                })
                .collect());
        }
        args.iter()
            .map(|a| match &a.kind {
                SKind::Int(_) | SKind::Float(_) => Ok(a.clone()),
                SKind::Sym(n) if ["nan", "inf", "-inf"].contains(&n.as_str()) => Ok(a.clone()),
                _ => Ok(SExpr {
                    kind: SKind::Int(self.meta_int(a)?),
                    loc: a.loc.clone(),
                }),
            })
            .collect()
    }

    /// `(i ...)` of meta integers, or `(tabulate VAR COUNT META)`.
    fn int_list(&mut self, s: &SExpr) -> Result<Vec<i128>> {
        let items = s
            .list()
            .ok_or_else(|| s.err("expected a list of integers or (tabulate i N expr)"))?;
        if s.head() == Some("tabulate") {
            if items.len() != 4 {
                return Err(s.err("tabulate takes a name, a count and an expression"));
            }
            let var = items[1]
                .sym()
                .ok_or_else(|| items[1].err("expected the index name"))?
                .to_string();
            let count = self.meta_u32(&items[2])?;
            let saved = self.meta.get(&var).cloned();
            let mut out = Vec::with_capacity(count as usize);
            for i in 0..count {
                self.meta.insert(var.clone(), Meta::Int(i as i128));
                out.push(self.meta_int(&items[3]));
            }
            match saved {
                Some(v) => self.meta.insert(var, v),
                None => self.meta.remove(&var),
            };
            return out.into_iter().collect();
        }
        items.iter().map(|i| self.meta_int(i)).collect()
    }
}
