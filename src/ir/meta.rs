//! Values of the meta level: family parameters, `let`s and the compile-time arithmetic that
//! instantiates a family's templates, types and semantics.

use super::types::Elem;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Sym(String),
    Elem(Elem),
}

impl Meta {
    /// A value as [`Display`](fmt::Display) prints it, read back (text that is not a number,
    /// a truth value or an element type is a symbol).
    pub fn from_text(text: &str) -> Meta {
        if let Ok(i) = text.parse() {
            return Meta::Int(i);
        }
        match text {
            "true" => return Meta::Bool(true),
            "false" => return Meta::Bool(false),
            _ => {}
        }
        if let Some(e) = Elem::parse(text) {
            return Meta::Elem(e);
        }
        match text.parse() {
            Ok(x) if text.contains('.') => Meta::Float(x),
            _ => Meta::Sym(text.to_string()),
        }
    }

    /// Loose equality used by `case`, `=` and `in`: symbols, strings and types compare by text.
    pub fn same(&self, other: &Meta) -> bool {
        match (self, other) {
            (Meta::Int(a), Meta::Int(b)) => a == b,
            (Meta::Bool(a), Meta::Bool(b)) => a == b,
            (Meta::Float(a), Meta::Float(b)) => a == b,
            (a, b) => {
                !matches!(a, Meta::Int(_) | Meta::Bool(_) | Meta::Float(_))
                    && a.to_string() == b.to_string()
            }
        }
    }
}

impl fmt::Display for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Meta::Int(i) => write!(f, "{i}"),
            Meta::Float(x) => write!(f, "{x}"),
            Meta::Bool(b) => write!(f, "{b}"),
            Meta::Str(s) | Meta::Sym(s) => f.write_str(s),
            Meta::Elem(e) => write!(f, "{e}"),
        }
    }
}

/// Operators evaluated at the meta level, never part of the IR.
pub const META_OPS: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "!",
    "in",
    "case",
    "if",
    "bits",
    "wide",
    "narrow",
    "signed",
    "unsigned",
    "is-signed",
    "tmin",
    "tmax",
    "str",
    "elem-name",
    "lanes",
    "elem",
    "log2",
];
