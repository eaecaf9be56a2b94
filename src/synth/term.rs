//! A candidate term of the search: a typed tree over IR operators and named idioms, printed in
//! the rule syntax (src/rules/syntax.rs) and elaborated into IR (idioms expanded) for the
//! interpreter and the prover.

use crate::error::Result;
use crate::ir::halide::elaborate_halide;
use crate::ir::{Elem, Expr, Macros};
use std::fmt;
use std::rc::Rc;

/// What a node computes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Head {
    /// A wildcard variable (`x`, `y`, `z`), printed with its type suffix.
    Var(String),
    /// A literal, typed by its sibling.
    Const(i64),
    /// An infix operator (`+ - * & | ^ << >>`) or a built-in call (`min max absd`).
    Binary(&'static str),
    /// A prefix operator (`~`, `-`) or a call of one operand (`count_leading_zeros`).
    Unary(&'static str),
    Cast(Elem),
    SatCast(Elem),
    /// A named idiom of `specs/idioms/` (a macro), called with the children.
    Idiom(&'static str),
}

/// A typed term. `elem` is the element type of its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    pub head: Head,
    pub elem: Elem,
    pub args: Vec<Rc<Term>>,
}

/// Infix operators and their printed form; the rest of [`Head::Binary`] are calls.
pub const INFIX: [&str; 8] = ["+", "-", "*", "&", "|", "^", "<<", ">>"];

impl Term {
    pub fn var(name: &str, elem: Elem) -> Rc<Term> {
        Rc::new(Term {
            head: Head::Var(name.to_string()),
            elem,
            args: vec![],
        })
    }

    pub fn constant(value: i64, elem: Elem) -> Rc<Term> {
        Rc::new(Term {
            head: Head::Const(value),
            elem,
            args: vec![],
        })
    }

    pub fn node(head: Head, elem: Elem, args: Vec<Rc<Term>>) -> Rc<Term> {
        Rc::new(Term { head, elem, args })
    }

    /// Nodes in the tree.
    pub fn size(&self) -> usize {
        1 + self.args.iter().map(|a| a.size()).sum::<usize>()
    }

    pub fn is_const(&self) -> bool {
        matches!(self.head, Head::Const(_))
    }

    /// Variables with their types, in first-use order.
    pub fn vars(&self) -> Vec<(String, Elem)> {
        let mut out: Vec<(String, Elem)> = Vec::new();
        self.walk(&mut |t| {
            if let Head::Var(n) = &t.head {
                if !out.iter().any(|(m, _)| m == n) {
                    out.push((n.clone(), t.elem));
                }
            }
        });
        out
    }

    /// The tree with every node for which `f` gives a replacement replaced (not descended).
    pub fn replace(self: &Rc<Term>, f: &dyn Fn(&Term) -> Option<Rc<Term>>) -> Rc<Term> {
        if let Some(r) = f(self) {
            return r;
        }
        if self.args.is_empty() {
            return self.clone();
        }
        let args = self.args.iter().map(|a| a.replace(f)).collect();
        Term::node(self.head.clone(), self.elem, args)
    }

    pub fn walk(&self, f: &mut impl FnMut(&Term)) {
        f(self);
        for a in &self.args {
            a.walk(f);
        }
    }

    /// The IR of the term at `lanes` lanes, idioms expanded.
    pub fn elaborate(&self, macros: &Macros, lanes: u32) -> Result<Rc<Expr>> {
        elaborate_halide(&self.to_string(), "synthesized term", macros, lanes)
    }
}

/// The variable name with its type suffix, as the rule syntax writes it.
pub fn typed_name(name: &str, elem: Elem) -> String {
    format!("{name}_{elem}")
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.args;
        match &self.head {
            Head::Var(n) => write!(f, "{}", typed_name(n, self.elem)),
            Head::Const(v) if self.elem.is_signed() || *v >= 0 => write!(f, "{v}"),
            Head::Const(v) => write!(f, "{}", *v as u64),
            Head::Binary(op) if INFIX.contains(op) => write!(f, "({} {op} {})", a[0], a[1]),
            Head::Binary(op) => write!(f, "{op}({}, {})", a[0], a[1]),
            Head::Unary(op) if op.chars().all(|c| c.is_alphabetic() || c == '_') => {
                write!(f, "{op}({})", a[0])
            }
            Head::Unary(op) => write!(f, "{op}{}", a[0]),
            Head::Cast(e) => write!(f, "{e}({})", a[0]),
            Head::SatCast(e) => write!(f, "{e}_sat({})", a[0]),
            Head::Idiom(name) => {
                let args: Vec<String> = a.iter().map(|t| t.to_string()).collect();
                write!(f, "{name}({})", args.join(", "))
            }
        }
    }
}

/// A rule side printed without its outermost parentheses.
pub fn side_text(t: &Term) -> String {
    let s = t.to_string();
    if matches!(&t.head, Head::Binary(op) if INFIX.contains(op)) {
        s[1..s.len() - 1].to_string()
    } else {
        s
    }
}
