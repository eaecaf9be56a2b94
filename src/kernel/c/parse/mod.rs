//! The C subset's recursive-descent parser: tokens to the syntax tree of `ast.rs`, with array
//! parameters' sizes computed from integer constant expressions over the global constants.
//! This file holds the parser's state and token helpers, types, global constants and functions;
//! [`stmt`] parses statements and [`expr`] expressions.

mod expr;
mod stmt;

use super::ast::{Func, Global, Param, Ty, Unit};
use super::lex::{Tok, Token};
use crate::error::{Error, Location, Result};
use expr::constant;
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

/// Words before or inside a type that change nothing the kernel computes.
const QUALIFIERS: [&str; 9] = [
    "const",
    "static",
    "inline",
    "__inline",
    "__inline__",
    "restrict",
    "__restrict",
    "extern",
    "volatile",
];

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
            Some(Tok::Str(v)) => format!("\"{v}\""),
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

    /// A type, skipping qualifiers, storage classes and `__attribute__((...))`; None if none is
    /// here.
    fn ty(&mut self) -> Result<Option<Ty>> {
        loop {
            if QUALIFIERS.iter().any(|w| self.is_word(w)) {
                self.pos += 1;
            } else if self.is_word("__attribute__") {
                self.skip_attribute()?;
            } else {
                break;
            }
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
        while ["const", "restrict", "__restrict", "int", "long"]
            .iter()
            .any(|w| self.is_word(w))
        {
            self.pos += 1;
        }
        Ok(Some(t))
    }

    /// `__attribute__((...))` (GCC's, as on Diospyros's `always_inline` prototypes), skipped.
    fn skip_attribute(&mut self) -> Result<()> {
        let loc = self.loc();
        self.pos += 1;
        if !self.is("(") {
            return Err(Error::parse(
                &self.loc(),
                format!("expected '(', found {}", self.found()),
            ));
        }
        let mut depth = 0;
        loop {
            match self.peek() {
                None => return Err(Error::parse(&loc, "__attribute__ without its closing ')'")),
                Some(Tok::Punct("(")) => depth += 1,
                Some(Tok::Punct(")")) => depth -= 1,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// Every `__attribute__((...))` here, skipped.
    fn skip_attributes(&mut self) -> Result<()> {
        while self.is_word("__attribute__") {
            self.skip_attribute()?;
        }
        Ok(())
    }

    /// Skips the braced block starting here to its matching `}`; false at the end of the file.
    fn skip_block(&mut self) -> bool {
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") => depth -= 1,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 {
                return true;
            }
        }
        false
    }

    /// The `*`s of a pointer declarator (with the qualifiers after each): how many.
    fn stars(&mut self) -> usize {
        let mut n = 0;
        while self.eat("*") {
            n += 1;
            while ["const", "restrict", "__restrict", "volatile"]
                .iter()
                .any(|w| self.is_word(w))
            {
                self.pos += 1;
            }
        }
        n
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
                let start = self.pos;
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
                let declared_const = self.toks[start..self.pos]
                    .iter()
                    .any(|t| t.tok == Tok::Ident("const".into()));
                let mut dims = vec![None; self.stars()];
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
                    constant: declared_const,
                    loc: ploc,
                });
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.skip_attributes()?;
        let mut unparsed = None;
        let body = if self.eat(";") {
            None
        } else {
            let open = self.pos;
            match self.block() {
                Ok(b) => Some(b),
                // A body outside the subset (a test's `main` with `printf`) is an error only
                // where the kernel runs it.
                Err(e) => {
                    self.pos = open;
                    if !self.skip_block() {
                        return Err(e);
                    }
                    unparsed = Some(match e {
                        Error::Parse { loc, msg } => (loc, msg),
                        other => (loc.clone(), other.to_string()),
                    });
                    None
                }
            }
        };
        Ok(Func {
            ret,
            name,
            params,
            body,
            unparsed,
            loc,
        })
    }
}
