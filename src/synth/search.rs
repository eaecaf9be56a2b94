//! The search of one lifting/simplification piece (Ruler's loop): enumerate the workload,
//! fingerprint, pair equal fingerprints, and walk the candidates smallest first: a candidate
//! the kept rules derive (egglog) is dropped, otherwise z3 proves it (generalised over its
//! literal when that proves too) and it joins the kept rules. Then predicated candidates, and
//! each kept equality gets its direction, kind and types.

use super::candidate::{classes, pairs, Candidate};
use super::cost::CostModel;
use super::derive::{Deriver, Equation};
use super::fingerprint::{fingerprint, Inputs};
use super::generalise::{
    abstract_literal, claim_types, concretise, polymorphic, single_literal, Relation,
};
use super::phase::classify;
use super::predicate::{predicate_text, ranges};
use super::proof::{at_one_lane, predicate_at_one_lane, prove, Outcome};
use super::term::{side_text, Term};
use super::workload::{enumerate, Grammar};
use super::Found;
use crate::error::Result;
use crate::ir::{Elem, Expr, Macros};
use serde::Serialize;
use std::collections::HashMap;
use std::rc::Rc;

/// Largest term (each side) considered for predicated rules.
const PREDICATED_MAX_SIZE: usize = 3;

/// What one piece's search did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub terms: usize,
    pub candidates: usize,
    /// Both sides expand to the same IR (an idiom's own definition).
    pub definitional: usize,
    pub derived: usize,
    pub proven: usize,
    pub refuted: usize,
    pub unknown: usize,
    pub predicated: usize,
}

/// An equality kept by the search, before generalisation over types.
struct Kept {
    a: Rc<Term>,
    b: Rc<Term>,
    /// The concrete pair the costs are computed on (the literals, not wildcards).
    concrete: (Rc<Term>, Rc<Term>),
    predicate: Option<String>,
}

/// Whether the variables of `a` then `b`, in first-use order, are a prefix of `vars` (so a
/// candidate is considered once up to renaming).
fn canonical_pair(c: &Candidate, vars: &[&str]) -> bool {
    let mut seen = c.a.vars();
    for v in c.b.vars() {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.iter().zip(vars).all(|((name, _), want)| name == want)
}

/// Searches one piece; the rules found, with their kind, types and reason.
pub fn search(
    grammar: &Grammar,
    piece: &str,
    macros: &Macros,
    models: &[CostModel],
) -> Result<(Vec<Found>, Tally)> {
    let mut tally = Tally::default();
    let terms = enumerate(grammar, &|_| true);
    tally.terms = terms.len();
    let vars: Vec<(String, Elem)> = grammar
        .vars
        .iter()
        .map(|v| (v.to_string(), grammar.base))
        .collect();
    let inputs = Inputs::new(&vars, None);
    let printed: Vec<(Rc<Term>, Vec<u128>)> = terms
        .iter()
        .filter_map(|t| Some((t.clone(), fingerprint(t, macros, &inputs)?)))
        .collect();
    let full: HashMap<Rc<Term>, Vec<u128>> = printed.iter().cloned().collect();
    let mut candidates: Vec<(Candidate, Rc<Expr>, Rc<Expr>)> = Vec::new();
    for c in pairs(&classes(&printed)) {
        if !canonical_pair(&c, &grammar.vars) {
            continue;
        }
        let (a, b) = (at_one_lane(&c.a, macros)?, at_one_lane(&c.b, macros)?);
        if a == b {
            tally.definitional += 1;
            continue;
        }
        candidates.push((c, a, b));
    }
    tally.candidates = candidates.len();
    let exprs: Vec<Rc<Expr>> = candidates
        .iter()
        .flat_map(|(_, a, b)| [a.clone(), b.clone()])
        .collect();
    let mut deriver = Deriver::new(&exprs)?;
    let mut kept: Vec<Kept> = Vec::new();
    let mut stale = false;
    for (c, a, b) in &candidates {
        if stale {
            deriver.saturate()?;
            stale = false;
        }
        if deriver.equal(a, b) {
            tally.derived += 1;
            continue;
        }
        match prove(a, b, None)? {
            Outcome::Proven => tally.proven += 1,
            Outcome::Refuted => {
                tally.refuted += 1;
                continue;
            }
            Outcome::Unknown => {
                tally.unknown += 1;
                continue;
            }
        }
        let (k, instances) = generalise_literal(c, grammar, macros)?;
        let mut eqs = vec![Equation {
            lhs: a.clone(),
            rhs: b.clone(),
        }];
        for (x, y) in instances {
            eqs.push(Equation {
                lhs: at_one_lane(&x, macros)?,
                rhs: at_one_lane(&y, macros)?,
            });
        }
        deriver.add(&eqs)?;
        stale = true;
        kept.push(k);
    }
    kept.extend(predicated(grammar, &printed, &full, &vars, macros, &mut tally)?);
    let mut found = Vec::new();
    for k in kept {
        if let Some(f) = finish(k, grammar.base, piece, macros, models)? {
            found.push(f);
        }
    }
    Ok((found, tally))
}

/// The candidate with its literal made a constant wildcard, when one relation between the
/// literals of the two sides proves at the piece's type; else the candidate as it is. Also
/// the concrete instances of the generalised rule at the workload's literals, for the e-graph.
fn generalise_literal(
    c: &Candidate,
    grammar: &Grammar,
    macros: &Macros,
) -> Result<(Kept, Vec<(Rc<Term>, Rc<Term>)>)> {
    let plain = Kept {
        a: c.a.clone(),
        b: c.b.clone(),
        concrete: (c.a.clone(), c.b.clone()),
        predicate: None,
    };
    let (Some((la, ea)), Some((lb, eb))) = (single_literal(&c.a), single_literal(&c.b)) else {
        return Ok((plain, vec![]));
    };
    if ea != eb {
        return Ok((plain, vec![]));
    }
    for rel in Relation::ALL {
        if !rel.holds(la, lb) {
            continue;
        }
        let a = abstract_literal(&c.a, la, "c0");
        let b = if rel == Relation::Same {
            abstract_literal(&c.b, lb, "c0")
        } else {
            abstract_literal(&c.b, lb, "c1")
        };
        let predicate = rel.predicate(ea);
        let p = match &predicate {
            Some(p) => Some(predicate_at_one_lane(p, macros)?),
            None => None,
        };
        let (ga, gb) = (at_one_lane(&a, macros)?, at_one_lane(&b, macros)?);
        if prove(&ga, &gb, p.as_deref())? != Outcome::Proven {
            continue;
        }
        let literals = grammar.literals_at(ea);
        let mut instances = Vec::new();
        for &x in &literals {
            for &y in &literals {
                if rel.holds(x, y) && (rel != Relation::Same || x == y) {
                    let ia = concretise(&a, "c0", x);
                    let ib = concretise(&concretise(&b, "c0", x), "c1", y);
                    instances.push((ia, ib));
                }
            }
        }
        return Ok((
            Kept {
                a,
                b,
                concrete: (c.a.clone(), c.b.clone()),
                predicate,
            },
            instances,
        ));
    }
    Ok((plain, vec![]))
}

/// Predicated candidates: small terms equal on inputs within a narrower range but not on all
/// inputs; the first proven pair of each such group under the range's predicate.
fn predicated(
    grammar: &Grammar,
    printed: &[(Rc<Term>, Vec<u128>)],
    full: &HashMap<Rc<Term>, Vec<u128>>,
    vars: &[(String, Elem)],
    macros: &Macros,
    tally: &mut Tally,
) -> Result<Vec<Kept>> {
    let mut out = Vec::new();
    let small: Vec<&Rc<Term>> = printed
        .iter()
        .map(|(t, _)| t)
        .filter(|t| t.size() <= PREDICATED_MAX_SIZE && t.vars().len() == 1)
        .collect();
    for range in ranges(grammar.base) {
        let inputs = Inputs::new(vars, Some(range));
        let bounded: Vec<(Rc<Term>, Vec<u128>)> = small
            .iter()
            .filter_map(|t| Some(((*t).clone(), fingerprint(t, macros, &inputs)?)))
            .collect();
        for group in classes(&bounded) {
            let rep = &group[0];
            for other in &group[1..] {
                if full.get(rep) == full.get(other) {
                    continue;
                }
                let text = predicate_text(&rep.vars(), range);
                let p = predicate_at_one_lane(&text, macros)?;
                let (a, b) = (at_one_lane(rep, macros)?, at_one_lane(other, macros)?);
                if prove(&a, &b, Some(&p))? == Outcome::Proven {
                    tally.predicated += 1;
                    out.push(Kept {
                        a: rep.clone(),
                        b: other.clone(),
                        concrete: (rep.clone(), other.clone()),
                        predicate: Some(text),
                    });
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// Direction, kind and claimed types of a kept equality; None when no phase wants it or the
/// right side would use a variable the left side does not bind.
fn finish(
    k: Kept,
    base: Elem,
    piece: &str,
    macros: &Macros,
    models: &[CostModel],
) -> Result<Option<Found>> {
    let (ca, cb) = (
        at_one_lane(&k.concrete.0, macros)?,
        at_one_lane(&k.concrete.1, macros)?,
    );
    let a_first = (k.a.size(), k.a.to_string()) > (k.b.size(), k.b.to_string());
    let Some(phase) = classify(&ca, &cb, models, a_first) else {
        return Ok(None);
    };
    let (lhs, rhs) = if phase.flipped { (k.b, k.a) } else { (k.a, k.b) };
    let bound: Vec<String> = lhs.vars().into_iter().map(|(n, _)| n).collect();
    if rhs.vars().iter().any(|(n, _)| !bound.contains(n)) || lhs.vars().is_empty() {
        return Ok(None);
    }
    let (lt, rt) = (side_text(&lhs), side_text(&rhs));
    let poly_predicate: Option<Option<String>> = match &k.predicate {
        None => Some(None),
        Some(p) => polymorphic(p, base).map(Some),
    };
    let general = match (polymorphic(&lt, base), polymorphic(&rt, base), poly_predicate) {
        (Some(l), Some(r), Some(p)) => {
            let types = claim_types(&l, &r, p.as_deref(), macros)?;
            types.contains(&base).then_some((types, l, r, p))
        }
        _ => None,
    };
    let (types, lhs_text, rhs_text, predicate) =
        general.unwrap_or((vec![], lt, rt, k.predicate));
    Ok(Some(Found {
        types,
        lhs: lhs_text,
        rhs: rhs_text,
        predicate,
        kind: phase.kind,
        isas: phase.isas,
        reason: phase.reason,
        piece: piece.to_string(),
    }))
}
