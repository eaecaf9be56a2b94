//! Generalisation of a rule found at one element type: over element types (the concrete types
//! written as the aliases `T WT NT ST UT SWT SNT UNT` of the rule syntax, each claimed type
//! proven) and over literals (Pitchfork's constant wildcards related by a predicate, proven).
//! Lane counts need nothing: rules are lane-wise and `verify_rule` proves 4 lanes and one full
//! register at every claimed type.

use super::proof::{self, Outcome};
use super::term::{Head, Term};
use crate::error::Result;
use crate::ir::halide::elaborate_halide;
use crate::ir::{Elem, Macros};
use crate::rules::load::broadcast_constants;
use crate::rules::syntax::{alias_type, instantiate, ALIASES};
use std::rc::Rc;

/// The element types a polymorphic rule may claim.
pub const RULE_TYPES: [Elem; 8] = [
    Elem::U8,
    Elem::U16,
    Elem::U32,
    Elem::U64,
    Elem::I8,
    Elem::I16,
    Elem::I32,
    Elem::I64,
];

/// The alias of `e` relative to `base`, preferring the plainest (`T` over `ST`).
fn alias_of(e: Elem, base: Elem) -> Option<&'static str> {
    ["T", "WT", "NT", "ST", "UT", "SWT", "SNT", "UNT"]
        .into_iter()
        .find(|a| alias_type(a, base) == Some(e))
}

/// The text with every concrete element type written as its alias relative to `base` (`x_u8`
/// becomes `x`, `u16(` becomes `WT(`); None when some type has no alias.
pub fn polymorphic(text: &str, base: Elem) -> Option<String> {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| -> Option<()> {
        if word.is_empty() {
            return Some(());
        }
        let w = std::mem::take(word);
        if w.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            out.push_str(&w);
            return Some(());
        }
        if let Some(e) = Elem::parse(&w) {
            out.push_str(alias_of(e, base)?);
            return Some(());
        }
        if let Some((stem, suffix)) = w.rsplit_once('_') {
            if suffix == "sat" {
                if let Some(e) = Elem::parse(stem) {
                    out.push_str(&format!("{}_sat", alias_of(e, base)?));
                    return Some(());
                }
            }
            if let Some(e) = Elem::parse(suffix) {
                let a = alias_of(e, base)?;
                if a == "T" {
                    out.push_str(stem);
                } else {
                    out.push_str(&format!("{stem}_{a}"));
                }
                return Some(());
            }
        }
        debug_assert!(!ALIASES.contains(&w.as_str()));
        out.push_str(&w);
        Some(())
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out)?;
            out.push(c);
        }
    }
    flush(&mut word, &mut out)?;
    Some(out)
}

/// The types at which the polymorphic rule `lhs => rhs [if predicate]` is proven (at one lane):
/// `base` with the search's budget, the others with a short one.
pub fn claim_types(
    lhs: &str,
    rhs: &str,
    predicate: Option<&str>,
    base: Elem,
    macros: &Macros,
) -> Result<Vec<Elem>> {
    let mut out = Vec::new();
    let order = std::iter::once(base).chain(RULE_TYPES.into_iter().filter(|t| *t != base));
    for t in order {
        let side = |text: &str| -> Option<Rc<crate::ir::Expr>> {
            let inst = instantiate(text, Some(t)).ok()?;
            let e = elaborate_halide(&inst, "synthesized rule", macros, 1).ok()?;
            Some(broadcast_constants(&e))
        };
        let (Some(l), Some(r)) = (side(lhs), side(rhs)) else {
            continue;
        };
        if !literals_fit_i64(&l) || !literals_fit_i64(&r) {
            continue;
        }
        let p = match predicate {
            Some(p) => match side(p) {
                Some(p) => Some(p),
                None => continue,
            },
            None => None,
        };
        // Rules over related constant wildcards are few and hard for the solver (a
        // multiplication by a symbolic power of two): they get the search's budget.
        let budget = if t == base || predicate.is_some() {
            proof::SEARCH_TIMEOUT_MS
        } else {
            proof::CLAIM_TIMEOUT_MS
        };
        // A claim z3 cannot decide in time is asked again with a larger budget: a run on a
        // loaded machine lost the i64 claim of `x * c0 => x << c1` to the first budget, and
        // without it a run alone claimed fewer types than the run before for 30 rules (with
        // it, for 4).
        let claim = |budget| proof::prove_within(&l, &r, p.as_deref(), budget);
        let outcome = match claim(budget)? {
            Outcome::Unknown => claim(budget * proof::RETRY_FACTOR)?,
            decided => decided,
        };
        if l.ty == r.ty && outcome == Outcome::Proven {
            out.push(t);
        } else if t == base {
            return Ok(vec![]);
        }
    }
    out.sort();
    Ok(out)
}

/// Whether every literal lane is an i64 (instruction selection's e-graph holds lane values as
/// i64: a u64 literal of 2^63 or more, such as -128 at u64, has no form there).
fn literals_fit_i64(e: &crate::ir::Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |n| {
        if let crate::ir::Op::Const(v) = &n.op {
            ok &= n.ty.elem.is_signed() || v.iter().all(|b| *b <= i64::MAX as u128);
        }
    });
    ok
}

/// A relation between the literal `a` of the left side and `b` of the right side, and the
/// predicate that states it over constant wildcards `c0` (left) and `c1` (right).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The same literal on both sides: one wildcard, no predicate.
    Same,
    /// `a == 1 << b` (a multiplier and its shift).
    LeftIsPow2OfRight,
    /// `b == 1 << a`.
    RightIsPow2OfLeft,
    /// The same value at two element types: the left literal becomes the cast of the right
    /// side's wildcard (`WT(c1)`), no predicate.
    SameValue,
}

impl Relation {
    pub const ALL: [Relation; 4] = [
        Relation::Same,
        Relation::LeftIsPow2OfRight,
        Relation::RightIsPow2OfLeft,
        Relation::SameValue,
    ];

    pub fn holds(self, a: i64, b: i64) -> bool {
        let pow = |k: i64| (0..63).contains(&k).then(|| 1i64 << k);
        match self {
            Relation::Same | Relation::SameValue => a == b,
            Relation::LeftIsPow2OfRight => pow(b) == Some(a),
            Relation::RightIsPow2OfLeft => pow(a) == Some(b),
        }
    }

    /// The predicate over the wildcards `c0` (typed `left`) and `c1` (typed `right`), if the
    /// relation needs one; the relations other than [`Relation::SameValue`] need one type.
    pub fn predicate(self, left: Elem, right: Elem) -> Option<String> {
        match self {
            Relation::Same => None,
            Relation::LeftIsPow2OfRight => Some(format!("c0_{left} == 1 << c1_{right}")),
            Relation::RightIsPow2OfLeft => Some(format!("c1_{right} == 1 << c0_{left}")),
            Relation::SameValue => None,
        }
    }

    /// Whether the relation applies to literals of these two types.
    pub fn applies(self, left: Elem, right: Elem) -> bool {
        (self == Relation::SameValue) == (left != right)
    }
}

/// The term with every literal `value` replaced by the constant wildcard `name`.
pub fn abstract_literal(t: &Rc<Term>, value: i64, name: &str) -> Rc<Term> {
    t.replace(&|n| (n.head == Head::Const(value)).then(|| Term::var(name, n.elem)))
}

/// The term with the constant wildcard `name` replaced by the literal `value`.
pub fn concretise(t: &Rc<Term>, name: &str, value: i64) -> Rc<Term> {
    t.replace(&|n| (n.head == Head::Var(name.to_string())).then(|| Term::constant(value, n.elem)))
}

/// The single nonzero literal of a term and its type, if it has exactly one.
pub fn single_literal(t: &Term) -> Option<(i64, Elem)> {
    let mut found: Vec<(i64, Elem)> = Vec::new();
    t.walk(&mut |n| {
        if let Head::Const(v) = n.head {
            if v != 0 && !found.iter().any(|(w, _)| *w == v) {
                found.push((v, n.elem));
            }
        }
    });
    (found.len() == 1).then(|| found[0])
}
