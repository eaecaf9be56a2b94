//! Vectorization rules of the DSP dialect as data: `(rule NAME LHS RHS)` in `specs/dsp/*.rules`,
//! written once per lane (Isaria's lane generalization) and instantiated at a target's vector
//! width. In a pattern, lower-case symbols are wildcards and `(Vec P ...)` is `P` repeated once per
//! lane with fresh wildcards (`a` becomes `a_0 .. a_{W-1}`).

use super::term::Op;
use crate::error::{Error, Location, Result};
use crate::ir::sexpr::{read_all, SExpr, SKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A pattern over the dialect, before lane instantiation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pat {
    Wild(String),
    Num(i64),
    App(Op, Vec<Pat>),
    /// `(Vec P ...)`: one `P` per lane.
    Lanes(Box<Pat>),
}

/// A pattern at one width: every `...` expanded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Wild(String),
    Num(i64),
    App(Op, Vec<Term>),
}

/// One rule as written in a rules file.
#[derive(Clone, Debug)]
pub struct KernelRule {
    pub name: String,
    pub lhs: Pat,
    pub rhs: Pat,
    /// The rule's source text (`LHS => RHS`), stored in the database.
    pub lhs_text: String,
    pub rhs_text: String,
    pub provenance: String,
    pub loc: Location,
}

/// The rules files of the DSP dialect, sorted.
pub fn rule_files(specs: &Path) -> Result<Vec<PathBuf>> {
    crate::rules::load::rule_files_in(&specs.join("dsp"))
}

/// Every rule of every rules file; names are unique.
pub fn load(specs: &Path) -> Result<Vec<KernelRule>> {
    let mut all: Vec<KernelRule> = Vec::new();
    for (text, shown) in crate::rules::load::read_rule_files(specs, &rule_files(specs)?)? {
        for r in parse(&text, &shown)? {
            if let Some(o) = all.iter().find(|o| o.name == r.name) {
                return Err(Error::parse(
                    &r.loc,
                    format!("rule '{}' is also defined at {}", r.name, o.loc),
                ));
            }
            all.push(r);
        }
    }
    Ok(all)
}

/// Parses a rules file: `(rule NAME LHS RHS [(provenance P)])` forms.
pub fn parse(text: &str, file: &str) -> Result<Vec<KernelRule>> {
    let forms = read_all(text, file)?;
    let mut out = Vec::new();
    for form in forms {
        let items = form.list().unwrap_or_default();
        if form.head() != Some("rule") || !(4..=5).contains(&items.len()) {
            return Err(Error::parse(
                &form.loc,
                "expected (rule NAME LHS RHS [(provenance P)])",
            ));
        }
        let name = match &items[1].kind {
            SKind::Sym(n) => n.clone(),
            _ => return Err(Error::parse(&items[1].loc, "a rule name is a symbol")),
        };
        let provenance = match items.get(4) {
            None => "hand-written".to_string(),
            Some(p) => match p.list().unwrap_or_default() {
                [h, v] if h.sym() == Some("provenance") => {
                    let v = v.sym().unwrap_or("");
                    if !["hand-written", "imported", "synthesized"].contains(&v) {
                        return Err(Error::parse(&p.loc, format!("unknown provenance '{v}'")));
                    }
                    v.to_string()
                }
                _ => return Err(Error::parse(&p.loc, "expected (provenance P)")),
            },
        };
        let lhs = pattern(&items[2])?;
        let rhs = pattern(&items[3])?;
        let rule = KernelRule {
            name,
            lhs,
            rhs,
            lhs_text: items[2].to_string(),
            rhs_text: items[3].to_string(),
            provenance,
            loc: form.loc.clone(),
        };
        check(&rule)?;
        out.push(rule);
    }
    Ok(out)
}

/// A pattern from its s-expression.
pub fn pattern(s: &SExpr) -> Result<Pat> {
    match &s.kind {
        SKind::Int(n) => Ok(Pat::Num(*n as i64)),
        SKind::Sym(w)
            if w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && Op::named(w).is_none() =>
        {
            Ok(Pat::Wild(w.clone()))
        }
        SKind::List(items) => {
            let head = s.head().unwrap_or("");
            let rest = &items[1.min(items.len())..];
            let ellipsis = rest.last().and_then(|x| x.sym()) == Some("...");
            match (head, ellipsis) {
                ("Vec", true) if rest.len() == 2 => Ok(Pat::Lanes(Box::new(pattern(&rest[0])?))),
                (_, true) => Err(Error::parse(&s.loc, "'...' repeats a lane: (Vec P ...)")),
                _ => {
                    let op = Op::named(head)
                        .filter(|op| !matches!(op, Op::Vec | Op::List | Op::Concat))
                        .ok_or_else(|| {
                            Error::parse(&s.loc, format!("unknown operator '{head}' in a rule"))
                        })?;
                    let args = rest.iter().map(pattern).collect::<Result<Vec<_>>>()?;
                    if op.arity() != Some(args.len()) {
                        return Err(Error::parse(
                            &s.loc,
                            format!("'{head}' takes {} operand(s)", op.arity().unwrap_or(0)),
                        ));
                    }
                    Ok(Pat::App(op, args))
                }
            }
        }
        _ => Err(Error::parse(
            &s.loc,
            format!("expected a pattern, found {s}"),
        )),
    }
}

/// Wildcards inside and outside `...` on each side.
fn wildcards(p: &Pat, in_lanes: bool, lane: &mut BTreeSet<String>, shared: &mut BTreeSet<String>) {
    match p {
        Pat::Wild(w) => {
            if in_lanes {
                lane.insert(w.clone());
            } else {
                shared.insert(w.clone());
            }
        }
        Pat::Num(_) => {}
        Pat::App(_, args) => args
            .iter()
            .for_each(|a| wildcards(a, in_lanes, lane, shared)),
        Pat::Lanes(p) => wildcards(p, true, lane, shared),
    }
}

/// The right side uses only wildcards the left side binds, each as lane-wise or shared as there.
fn check(rule: &KernelRule) -> Result<()> {
    let (mut ll, mut ls, mut rl, mut rs) = Default::default();
    wildcards(&rule.lhs, false, &mut ll, &mut ls);
    wildcards(&rule.rhs, false, &mut rl, &mut rs);
    let bad: Vec<&String> = rl.difference(&ll).chain(rs.difference(&ls)).collect();
    if let Some(w) = bad.first() {
        return Err(Error::parse(
            &rule.loc,
            format!(
                "rule '{}': wildcard '{w}' on the right is not bound the same way on the left",
                rule.name
            ),
        ));
    }
    if matches!(rule.lhs, Pat::Wild(_)) {
        return Err(Error::parse(
            &rule.loc,
            format!(
                "rule '{}': a left side that is a bare wildcard matches everything",
                rule.name
            ),
        ));
    }
    Ok(())
}

/// The pattern at vector width `width`.
pub fn instantiate(p: &Pat, width: usize) -> Term {
    lanes(p, width, None)
}

fn lanes(p: &Pat, width: usize, lane: Option<usize>) -> Term {
    match p {
        Pat::Wild(w) => Term::Wild(match lane {
            Some(k) => format!("{w}_{k}"),
            None => w.clone(),
        }),
        Pat::Num(n) => Term::Num(*n),
        Pat::App(op, args) => Term::App(*op, args.iter().map(|a| lanes(a, width, lane)).collect()),
        Pat::Lanes(p) => Term::App(
            Op::Vec,
            (0..width).map(|k| lanes(p, width, Some(k))).collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_instantiated_with_fresh_wildcards() {
        let rules = parse(
            "(rule vec-add (Vec (+ a b) ...) (VecAdd (Vec a ...) (Vec b ...)) (provenance imported))",
            "t.rules",
        )
        .unwrap();
        let t = instantiate(&rules[0].rhs, 2);
        let v = |w: &str| {
            Term::App(
                Op::Vec,
                vec![Term::Wild(format!("{w}_0")), Term::Wild(format!("{w}_1"))],
            )
        };
        assert_eq!(t, Term::App(Op::VecAdd, vec![v("a"), v("b")]));
        assert_eq!(rules[0].provenance, "imported");
    }

    #[test]
    fn unbound_or_misplaced_wildcards_are_errors() {
        let e = parse(
            "(rule bad (Vec (+ a b) ...) (VecAdd (Vec a ...) c))",
            "t.rules",
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "t.rules:1:1: rule 'bad': wildcard 'c' on the right is not bound the same way on the left");
        let e = parse("(rule bad (Vec a ...) (VecNeg a))", "t.rules")
            .err()
            .unwrap();
        assert!(e.to_string().contains("wildcard 'a'"), "{e}");
        let e = parse("(rule bad (frob a) a)", "t.rules").err().unwrap();
        assert_eq!(
            e.to_string(),
            "t.rules:1:11: unknown operator 'frob' in a rule"
        );
    }
}
