//! The rewrites of a generated program, typed: the i64 arithmetic of constant slots, conditions
//! and actions ([`Int`]), conditions ([`Condition`]), rulesets and the rewrites themselves, each
//! printed as egglog text.

use super::{type_name, Term};
use crate::ir::VecType;
use crate::words::text_enum;
use std::fmt;

/// An i64 in a rewrite: in a constant's slot, a condition or an action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Int {
    /// A literal (an i64, or a bound of a 64-bit type).
    Lit(i128),
    /// A rule's constant wildcard (printed `w_c0`).
    Wildcard(String),
    /// A value computed from constant wildcards, bound by a condition (printed `k0`).
    Fresh(usize),
    /// A variable of a rewrite isadb generates (printed as it is: `c`).
    Slot(&'static str),
    /// The lower bound of a wildcard's lanes (`(lo w_x)`).
    Lo(String),
    /// The upper bound of a wildcard's lanes (`(hi w_x)`).
    Hi(String),
    /// i64 arithmetic.
    Bin(IntOp, Box<Int>, Box<Int>),
    /// The base-2 logarithm, rounded down (no match for values below 1).
    Log2(Box<Int>),
}

text_enum! {
    /// An i64 operator of egglog.
    pub enum IntOp("integer operator") {
        Add = "+",
        Sub = "-",
        Mul = "*",
        Shl = "<<",
        Shr = ">>",
        And = "&",
        Or = "|",
        Xor = "^",
        Min = "min",
        Max = "max",
    }
}

text_enum! {
    /// A comparison of i64s.
    pub enum Cmp("comparison") {
        Eq = "=",
        Ne = "!=",
        Lt = "<",
        Le = "<=",
        Gt = ">",
        Ge = ">=",
    }
}

/// A condition of a rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Condition {
    /// The type of a pattern variable: `(= (type-of w_x) "u16x8")`.
    TypeOf(Term, VecType),
    /// A comparison: `(<= (hi w_x) 255)`, `(= k0 (+ w_c0 1))`.
    Compare(Cmp, Int, Int),
}

text_enum! {
    /// The rulesets rewrites go in; the schedule (`schedule.egg`) runs them in phases.
    pub enum Ruleset("ruleset") {
        /// Integer arithmetic into idioms (phase 1).
        Lift = "lift",
        /// Identities (both phases).
        Simplify = "simplify",
        /// Idioms and operators into instructions (phase 2).
        Lower = "lower",
    }
}

/// One rewrite of a ruleset, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub ruleset: Ruleset,
    /// A comment: the rule, fact or instruction it was made from.
    pub source: String,
    pub lhs: Term,
    pub rhs: Term,
    pub conditions: Vec<Condition>,
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Lit(v) => write!(f, "{v}"),
            Int::Wildcard(name) => write!(f, "w_{name}"),
            Int::Fresh(k) => write!(f, "k{k}"),
            Int::Slot(name) => f.write_str(name),
            Int::Lo(name) => write!(f, "(lo w_{name})"),
            Int::Hi(name) => write!(f, "(hi w_{name})"),
            Int::Bin(op, a, b) => write!(f, "({op} {a} {b})"),
            Int::Log2(a) => write!(f, "(log2 {a})"),
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::TypeOf(x, ty) => write!(f, "(= (type-of {x}) \"{}\")", type_name(*ty)),
            Condition::Compare(cmp, a, b) => write!(f, "({cmp} {a} {b})"),
        }
    }
}

impl fmt::Display for Rewrite {
    /// The rewrite after a comment naming its source.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "; {}", self.source)?;
        write!(f, "(rewrite {} {}", self.lhs, self.rhs)?;
        if !self.conditions.is_empty() {
            let conditions: Vec<String> = self.conditions.iter().map(|c| c.to_string()).collect();
            write!(f, " :when ({})", conditions.join(" "))?;
        }
        writeln!(f, " :ruleset {})", self.ruleset)
    }
}
