//! The C subset's recursive-descent parser: tokens to the syntax tree of `ast.rs`, with array
//! parameters' sizes computed from integer constant expressions over the global constants.

use super::ast::{Expr, ExprKind, Func, Global, Param, Stmt, Ty, Unit};
use super::lex::{Tok, Token};
use crate::error::{Error, Location, Result};
use std::collections::HashMap;

struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    end: Location,
    /// The global int constants so far with their values, for array parameters' sizes.
    constants: HashMap<String, i64>,
}

/// Parses a translation unit.
pub fn parse(toks: &[Token], file: &str) -> Result<Unit> {
    let end = toks.last().map_or(
        Location {
            file: file.to_string(),
            line: 1,
            col: 1,
        },
        |t| t.loc.clone(),
    );
    let mut p = Parser {
        toks,
        pos: 0,
        end,
        constants: HashMap::new(),
    };
    let mut unit = Unit::default();
    while p.pos < toks.len() {
        match p.global()? {
            Some(g) => unit.globals.push(g),
            None => unit.funcs.push(p.func()?),
        }
    }
    Ok(unit)
}

const BINARY: [(&str, u8); 13] = [
    ("||", 1),
    ("&&", 2),
    ("==", 3),
    ("!=", 3),
    ("<", 4),
    ("<=", 4),
    (">", 4),
    (">=", 4),
    ("+", 5),
    ("-", 5),
    ("*", 6),
    ("/", 6),
    ("%", 6),
];

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn loc(&self) -> Location {
        self.toks
            .get(self.pos)
            .map_or(self.end.clone(), |t| t.loc.clone())
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if q == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the file".into(),
            Some(Tok::Ident(w)) => format!("'{w}'"),
            Some(Tok::Int(v)) => format!("'{v}'"),
            Some(Tok::Float(v)) => format!("'{v}'"),
            Some(Tok::Punct(p)) => format!("'{p}'"),
        }
    }

    fn expect(&mut self, p: &str) -> Result<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(Error::parse(
                &self.loc(),
                format!("expected '{p}', found {}", self.found()),
            ))
        }
    }

    fn ident(&mut self) -> Result<String> {
        match self.peek() {
            Some(Tok::Ident(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(Error::parse(
                &self.loc(),
                format!("expected a name, found {}", self.found()),
            )),
        }
    }

    /// A type, skipping `const`, `static`, `inline`, `restrict`; None if none is here.
    fn ty(&mut self) -> Result<Option<Ty>> {
        while ["const", "static", "inline", "restrict", "__restrict"]
            .iter()
            .any(|w| self.is_word(w))
        {
            self.pos += 1;
        }
        let t = match self.peek() {
            Some(Tok::Ident(w)) => match w.as_str() {
                "void" => Ty::Void,
                "int" | "unsigned" | "long" | "size_t" => Ty::Int,
                "float" => Ty::Float,
                "double" | "char" | "short" | "struct" | "union" | "enum" | "bool" => {
                    return Err(Error::parse(
                        &self.loc(),
                        format!("type '{w}' is outside the kernel subset (float, int, void)"),
                    ))
                }
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        self.pos += 1;
        while ["const", "restrict", "__restrict", "int"]
            .iter()
            .any(|w| self.is_word(w))
        {
            self.pos += 1;
        }
        Ok(Some(t))
    }

    /// A global constant (`[static] const int|float NAME = EXPR;`), or None (leaving the
    /// position) where a function starts; a global variable is outside the subset.
    fn global(&mut self) -> Result<Option<Global>> {
        let start = self.pos;
        let loc = self.loc();
        let is_const = self.toks[start..]
            .iter()
            .take_while(|t| matches!(&t.tok, Tok::Ident(_)))
            .any(|t| t.tok == Tok::Ident("const".into()));
        let Some(ty) = self.ty()? else {
            return Ok(None);
        };
        let is_global = matches!(
            self.toks.get(self.pos + 1).map(|t| &t.tok),
            Some(Tok::Punct("=" | ";" | "[" | ","))
        );
        if !is_global {
            self.pos = start;
            return Ok(None);
        }
        let name = self.ident()?;
        if !is_const || ty == Ty::Void || !self.is("=") {
            return Err(Error::parse(
                &loc,
                format!("global '{name}': only global constants (const int or const float NAME = VALUE;) are in the kernel subset"),
            ));
        }
        self.pos += 1;
        let init = self.expr()?;
        self.expect(";")?;
        if let Some(v) = constant(&init, &self.constants).filter(|_| ty == Ty::Int) {
            self.constants.insert(name.clone(), v);
        }
        Ok(Some(Global {
            ty,
            name,
            init,
            loc,
        }))
    }

    fn func(&mut self) -> Result<Func> {
        let loc = self.loc();
        let ret = self.ty()?.ok_or_else(|| {
            Error::parse(
                &loc,
                format!("expected a function definition, found {}", self.found()),
            )
        })?;
        let name = self.ident()?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.eat(")") {
            loop {
                let ploc = self.loc();
                let ty = self.ty()?.ok_or_else(|| {
                    Error::parse(
                        &ploc,
                        format!("expected a parameter type, found {}", self.found()),
                    )
                })?;
                if ty == Ty::Void && self.is(")") {
                    self.pos += 1;
                    break;
                }
                let mut dims = Vec::new();
                while self.eat("*") {
                    dims.push(None);
                    while ["const", "restrict", "__restrict"]
                        .iter()
                        .any(|w| self.is_word(w))
                    {
                        self.pos += 1;
                    }
                }
                let pname = self.ident()?;
                while self.eat("[") {
                    if self.eat("]") {
                        dims.push(None);
                        continue;
                    }
                    let size = self.expr()?;
                    match constant(&size, &self.constants) {
                        Some(n) if n > 0 => dims.push(Some(n as usize)),
                        _ => {
                            return Err(Error::parse(
                                &size.loc,
                                "an array parameter's size must be a positive integer constant",
                            ))
                        }
                    }
                    self.expect("]")?;
                }
                params.push(Param {
                    ty,
                    name: pname,
                    dims,
                    loc: ploc,
                });
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let body = if self.eat(";") {
            None
        } else {
            let b = self.block()?;
            Some(b)
        };
        Ok(Func {
            ret,
            name,
            params,
            body,
            loc,
        })
    }

    fn block(&mut self) -> Result<Vec<Stmt>> {
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
            let name = self.ident()?;
            let mut dims = Vec::new();
            while self.eat("[") {
                dims.push(self.expr()?);
                self.expect("]")?;
            }
            let init = if self.eat("=") {
                if self.is("{") {
                    return Err(Error::parse(
                        &self.loc(),
                        "array initializers are outside the kernel subset",
                    ));
                }
                Some(self.expr()?)
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

    fn unary(&mut self) -> Result<Expr> {
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
                self.expect(")")?;
                let e = self.unary()?;
                return Ok(Expr {
                    kind: ExprKind::Cast(ty, Box::new(e)),
                    loc,
                });
            }
            self.pos = save;
        }
        if self.is("&") || self.is("*") {
            return Err(Error::parse(&loc, "pointers are outside the kernel subset"));
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
}

/// The value of an integer constant expression (literals, the global int constants `names`,
/// `+ - * / %`, unary `-` and `+`, as C computes them); None for anything else, a division by
/// zero or an overflow.
fn constant(e: &Expr, names: &HashMap<String, i64>) -> Option<i64> {
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
