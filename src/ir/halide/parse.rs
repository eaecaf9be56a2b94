//! The recursive-descent parser of Halide-style expressions: C precedence levels, unary
//! operators, parentheses and calls, within the limits of [`crate::ir::limits`] (a chain
//! `a + b + ...` nests one level per operator, as the tree it builds does).

use super::lex::{Tok, Token};
use super::lower::{as_int, call, combine, elem_named, int, list, sym, template_cast, BRACE_LIST};
use super::Shifts;
use crate::error::{Error, Location, Result};
use crate::ir::limits::TreeBudget;
use crate::ir::sexpr::{SExpr, SKind};

/// Binary operators from the loosest to the tightest binding level, with their IR names.
const LEVELS: [&[(&str, &str)]; 10] = [
    &[("||", "or")],
    &[("&&", "and")],
    &[("|", "or")],
    &[("^", "xor")],
    &[("&", "and")],
    &[("==", "eq"), ("!=", "ne")],
    &[("<", "lt"), ("<=", "le"), (">", "gt"), (">=", "ge")],
    &[("<<", "shl"), (">>", "shr")],
    &[("+", "add"), ("-", "sub")],
    &[("*", "mul"), ("/", "div"), ("%", "mod")],
];

pub(super) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    budget: TreeBudget,
    shifts: Shifts,
}

impl Parser {
    pub(super) fn new(toks: Vec<Token>, shifts: Shifts) -> Parser {
        Parser {
            toks,
            pos: 0,
            budget: TreeBudget::default(),
            shifts,
        }
    }

    pub(super) fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn next(&mut self) -> &Token {
        let t = &self.toks[self.pos];
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn at_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }

    pub(super) fn expr(&mut self) -> Result<SExpr> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<SExpr> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        let mut chain = 0;
        loop {
            let t = self.peek();
            let Some((op, name)) = LEVELS[level].iter().find(|(op, _)| t.tok == Tok::Punct(op))
            else {
                (0..chain).for_each(|_| self.budget.leave());
                return Ok(lhs);
            };
            let loc = t.loc.clone();
            self.budget.enter(&loc)?;
            chain += 1;
            self.next();
            let rhs = self.binary(level + 1)?;
            lhs = combine(op, name, lhs, rhs, self.shifts, &loc)?;
        }
    }

    fn unary(&mut self) -> Result<SExpr> {
        let t = self.peek();
        let loc = t.loc.clone();
        let op = match t.tok {
            Tok::Punct(p @ ("-" | "~" | "!")) => p,
            _ => return self.primary(),
        };
        self.next();
        self.budget.enter(&loc)?;
        let x = self.unary()?;
        self.budget.leave();
        Ok(match (op, as_int(&x)) {
            ("-", Some(v)) => int(
                v.checked_neg()
                    .ok_or_else(|| Error::parse(&loc, "constant overflows"))?,
                &loc,
            ),
            ("~", Some(v)) => int(!v, &loc),
            ("-", None) => match x.kind {
                SKind::Float(v) => SExpr {
                    kind: SKind::Float(-v),
                    loc,
                },
                _ => list("neg", vec![x], &loc),
            },
            _ => list("not", vec![x], &loc),
        })
    }

    fn primary(&mut self) -> Result<SExpr> {
        let t = self.next();
        let (loc, tok) = (t.loc.clone(), t.tok.clone());
        self.budget.term(&loc)?;
        match tok {
            Tok::Int(v) => Ok(int(v, &loc)),
            Tok::Float(x) => Ok(SExpr {
                kind: SKind::Float(x),
                loc,
            }),
            // Halide's C++ casts: `cast<uint8_t>(e)`, `saturating_cast<int8_t>(e)`,
            // `reinterpret<uint16_t>(e)`.
            Tok::Ident(name)
                if matches!(name.as_str(), "cast" | "saturating_cast" | "reinterpret")
                    && self.at_punct("<") =>
            {
                self.next();
                let mut token = || {
                    let t = self.next();
                    (t.loc.clone(), t.tok.clone())
                };
                let (ty_loc, ty_tok) = token();
                let Tok::Ident(ty) = ty_tok else {
                    return Err(Error::parse(
                        &ty_loc,
                        format!("expected a type after '{name}<', found {ty_tok}"),
                    ));
                };
                let elem = elem_named(&ty).ok_or_else(|| {
                    Error::parse(&ty_loc, format!("unknown type '{ty}' in {name}<{ty}>"))
                })?;
                for close in [">", "("] {
                    let (at, found) = token();
                    if found != Tok::Punct(close) {
                        return Err(Error::parse(
                            &at,
                            format!("expected '{close}' in {name}<{ty}>(...), found {found}"),
                        ));
                    }
                }
                self.budget.enter(&loc)?;
                let args = self.call_args(&name, &loc)?;
                self.budget.leave();
                let head = match name.as_str() {
                    "cast" => "cast",
                    "saturating_cast" => "sat-cast",
                    _ => "bitcast",
                };
                template_cast(head, elem, &name, args, &loc)
            }
            Tok::Ident(name) if self.at_punct("(") => {
                self.next();
                self.budget.enter(&loc)?;
                let args = self.call_args(&name, &loc)?;
                self.budget.leave();
                call(&name, args, self.shifts, &loc)
            }
            Tok::Ident(name) => Ok(sym(&name, &loc)),
            Tok::Punct("(") => {
                self.budget.enter(&loc)?;
                let e = self.expr()?;
                self.budget.leave();
                let t = self.peek();
                if t.tok != Tok::Punct(")") {
                    return Err(Error::parse(
                        &t.loc,
                        format!(
                            "expected ')' to close '(' at {}:{}, found {}",
                            loc.line, loc.col, t.tok
                        ),
                    ));
                }
                self.next();
                Ok(e)
            }
            Tok::Eof => Err(Error::parse(
                &loc,
                "expected an expression, found end of input",
            )),
            other => Err(Error::parse(
                &loc,
                format!("unexpected token {other}, expected an expression"),
            )),
        }
    }

    /// A brace list of expressions, `{a, b, c}` (an argument of Halide's `mux`), as the form
    /// `({} a b c)`.
    fn brace_list(&mut self) -> Result<SExpr> {
        let open = self.next().loc.clone();
        let what = format!("the list at {}:{}", open.line, open.col);
        let items = self.items("}", &what, Self::expr)?;
        Ok(list(BRACE_LIST, items, &open))
    }

    /// The arguments of a call whose '(' has just been read.
    fn call_args(&mut self, name: &str, loc: &Location) -> Result<Vec<SExpr>> {
        let what = format!("the call to {name} at {}:{}", loc.line, loc.col);
        self.items(")", &what, |p| match p.at_punct("{") {
            true => p.brace_list(),
            false => p.expr(),
        })
    }

    /// Items read by `item`, separated by ',', up to `close` (the opening one read); `what`
    /// names the list in errors.
    fn items(
        &mut self,
        close: &'static str,
        what: &str,
        mut item: impl FnMut(&mut Self) -> Result<SExpr>,
    ) -> Result<Vec<SExpr>> {
        let mut out = Vec::new();
        if self.at_punct(close) {
            self.next();
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            let t = self.peek();
            match t.tok {
                Tok::Punct(",") => {}
                Tok::Punct(p) if p == close => {
                    self.next();
                    return Ok(out);
                }
                _ => {
                    return Err(Error::parse(
                        &t.loc,
                        format!("expected ',' or '{close}' in {what}, found {}", t.tok),
                    ))
                }
            }
            self.next();
        }
    }
}
