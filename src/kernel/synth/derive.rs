//! Whether the rules kept so far already derive a candidate, one direction at a time (rules
//! rewrite left to right, so `0 => (+ 0 0)` is not derived by `(+ a 0) => a`): an e-graph
//! holding only the left side, its wildcards opaque constants, runs the kept rules for a few
//! iterations, and the right side must then be a term of the left side's e-class. One egglog
//! session holds the kept rules; each question is asked between a push and a pop.

use crate::error::Result;
use crate::kernel::phase::Phase;
use crate::kernel::program::{declarations, rewrite};
use crate::kernel::rule::{instantiate, KernelRule, Pat, Term};
use crate::kernel::saturate::{Limits, Session};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The width rules are instantiated at when derivations are asked for.
const WIDTH: usize = 2;
/// Iterations of the kept rules per question.
const ITERATIONS: usize = 4;
/// E-graph size at which a question stops growing it.
const NODES: usize = 20_000;

/// Questions asked of one egglog session before it is built again from the kept rules (a
/// session grows with every push and pop).
const QUESTIONS_PER_SESSION: usize = 100;

/// The kept rules in one ruleset, ready for questions.
pub struct Deriver {
    session: Session,
    kept: Vec<KernelRule>,
    asked: usize,
}

/// A term as egglog text, every wildcard an opaque constant: `(Get 0 k)` for a scalar, `(VecVar
/// k)` for a vector.
fn ground(t: &Term, vector: bool, names: &mut HashMap<String, usize>) -> String {
    match t {
        Term::Wild(w) => {
            let n = names.len();
            let k = *names.entry(w.clone()).or_insert(n);
            if vector {
                format!("(VecVar {k})")
            } else {
                format!("(Get 0 {k})")
            }
        }
        Term::Num(n) => format!("(Num {n})"),
        Term::App(op, args) => {
            let operands_are_vectors =
                op.is_vector() && !matches!(op, crate::kernel::term::Op::Vec);
            let args: Vec<String> = args
                .iter()
                .map(|a| ground(a, operands_are_vectors, names))
                .collect();
            format!(
                "({} {})",
                crate::kernel::program::constructor(*op),
                args.join(" ")
            )
        }
    }
}

/// Whether a side computes a vector (a bare wildcard is what the other side computes).
pub fn is_vector(side: &Pat, other: &Pat) -> bool {
    match side {
        Pat::App(op, _) => op.is_vector(),
        Pat::Lanes(_) => true,
        _ => !matches!(other, Pat::Wild(_) | Pat::Num(_)) && is_vector(other, side),
    }
}

/// A session holding the rules.
fn session(rules: &[KernelRule]) -> Result<Session> {
    let mut text = format!(
        "{}(ruleset {})\n",
        declarations(WIDTH),
        Phase::Expand.name()
    );
    for r in rules {
        text.push_str(&rewrite(r, Phase::Expand, WIDTH));
    }
    Session::new(&text)
}

impl Deriver {
    pub fn new() -> Result<Deriver> {
        Ok(Deriver {
            session: session(&[])?,
            kept: Vec::new(),
            asked: 0,
        })
    }

    /// Keeps a rule: later questions may use it.
    pub fn keep(&mut self, rule: &KernelRule) -> Result<()> {
        self.kept.push(rule.clone());
        self.session.exec(&rewrite(rule, Phase::Expand, WIDTH))
    }

    /// Whether the kept rules rewrite `lhs` into a term equal to `rhs`.
    pub fn derives(&mut self, lhs: &Pat, rhs: &Pat) -> Result<bool> {
        self.asked += 1;
        if self.asked.is_multiple_of(QUESTIONS_PER_SESSION) {
            self.session = session(&self.kept)?;
        }
        let vector = is_vector(lhs, rhs);
        let mut names = HashMap::new();
        let l = ground(&instantiate(lhs, WIDTH), vector, &mut names);
        let r = ground(&instantiate(rhs, WIDTH), vector, &mut names);
        self.session.push();
        self.session.exec(&format!("(let lhs {l})\n"))?;
        let limits = Limits {
            nodes: NODES,
            iterations: ITERATIONS,
            deadline: Instant::now() + Duration::from_millis(500),
        };
        self.session.run(Phase::Expand, limits)?;
        let found = self.session.exec(&format!("(check (= lhs {r}))\n")).is_ok();
        self.session.pop()?;
        self.session.text.clear();
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rule::parse;

    #[test]
    fn derivations_follow_the_rules_direction() {
        let rules = parse(
            "(rule add-zero (+ a 0) a)\n(rule vec-add (Vec (+ a b) ...) (VecAdd (Vec a ...) (Vec b ...)))",
            "t.rules",
        )
        .unwrap();
        let mut d = Deriver::new().unwrap();
        for r in &rules {
            d.keep(r).unwrap();
        }
        let p = |l: &str, r: &str| {
            let rr = parse(&format!("(rule q {l} {r})"), "t").unwrap().remove(0);
            (rr.lhs, rr.rhs)
        };
        let (l, r) = p("(+ (+ a 0) 0)", "a");
        assert!(d.derives(&l, &r).unwrap());
        let (l, r) = p("0", "(+ 0 0)");
        assert!(!d.derives(&l, &r).unwrap());
        assert!(d.derives(&r, &l).unwrap());
        let (l, r) = p(
            "(Vec (+ (+ a 0) b) ...)",
            "(VecAdd (Vec a ...) (Vec b ...))",
        );
        assert!(d.derives(&l, &r).unwrap());
        let (l, r) = p("(VecAdd a b)", "(VecAdd b a)");
        assert!(!d.derives(&l, &r).unwrap());
    }
}
