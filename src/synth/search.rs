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
use super::term::{side_text, Head, Term};
use super::workload::{enumerate, Grammar};
use super::{Found, Tally};
use crate::error::Error;
use crate::error::Result;
use crate::ir::halide::elaborate_halide;
use crate::ir::{Elem, Expr, Macros};
use crate::rules::load::broadcast_constants;
use crate::rules::syntax::instantiate;
use std::collections::HashMap;
use std::rc::Rc;

/// Candidates per minimisation batch, and proven (kept) per round of a batch.
const BATCH: usize = 150;
const PER_ROUND: usize = 8;

/// Largest term (each side) considered for predicated rules.
const PREDICATED_MAX_SIZE: usize = 3;

/// An equality kept by the search.
struct Kept {
    a: Rc<Term>,
    b: Rc<Term>,
    /// The concrete pair the costs are computed on (the literals, not wildcards).
    concrete: TermPair,
    predicate: Option<String>,
    /// The equality over element types, when it generalises.
    general: Option<General>,
}

/// A kept equality written with type aliases, and the types it is proven at.
struct General {
    a: String,
    b: String,
    predicate: Option<String>,
    types: Vec<Elem>,
}

/// The kept equality over element types: its texts with aliases relative to `base`, proven
/// at every type it claims (None when a type has no alias or the base type does not prove).
fn generalise_types(k: &Kept, base: Elem, macros: &Macros) -> Result<Option<General>> {
    let predicate: Option<Option<String>> = match &k.predicate {
        None => Some(None),
        Some(p) => polymorphic(p, base).map(Some),
    };
    let (Some(a), Some(b), Some(predicate)) = (
        polymorphic(&side_text(&k.a), base),
        polymorphic(&side_text(&k.b), base),
        predicate,
    ) else {
        return Ok(None);
    };
    let types = claim_types(&a, &b, predicate.as_deref(), base, macros)?;
    Ok(types.contains(&base).then_some(General {
        a,
        b,
        predicate,
        types,
    }))
}

/// The equalities a kept rule adds to the derivation e-graph: its instance at every type it
/// claims (or, for a rule over related literals, its instances at the workload's literals).
fn instances(
    k: &Kept,
    literal_instances: Vec<TermPair>,
    types_in_play: &[Elem],
    macros: &Macros,
) -> Result<Vec<Equation>> {
    let mut out = Vec::new();
    for (x, y) in literal_instances {
        out.push(Equation {
            lhs: at_one_lane(&x, macros)?,
            rhs: at_one_lane(&y, macros)?,
        });
    }
    match &k.general {
        Some(g) if g.predicate.is_none() => {
            for &t in g.types.iter().filter(|t| types_in_play.contains(t)) {
                let side = |text: &str| -> Result<Rc<Expr>> {
                    let inst = instantiate(text, Some(t)).map_err(Error::Usage)?;
                    Ok(broadcast_constants(&elaborate_halide(
                        &inst,
                        "synthesized rule",
                        macros,
                        1,
                    )?))
                };
                out.push(Equation {
                    lhs: side(&g.a)?,
                    rhs: side(&g.b)?,
                });
            }
        }
        _ => {
            out.push(Equation {
                lhs: at_one_lane(&k.concrete.0, macros)?,
                rhs: at_one_lane(&k.concrete.1, macros)?,
            });
        }
    }
    Ok(out)
}

/// The candidate's text with every literal written `#`.
fn literal_shape(c: &Candidate) -> String {
    let text = format!("{} == {}", c.a, c.b);
    let mut out = String::new();
    let mut in_number = false;
    let mut prev_word = false;
    for ch in text.chars() {
        if ch.is_ascii_digit() && !prev_word {
            if !in_number {
                out.push('#');
            }
            in_number = true;
            continue;
        }
        in_number = false;
        prev_word = ch.is_ascii_alphanumeric() || ch == '_';
        out.push(ch);
    }
    out
}

/// Whether both sides use the same variables (a side without variables would be a bare
/// literal, which the rule syntax cannot type).
fn same_vars(c: &Candidate) -> bool {
    let names = |t: &Term| {
        let mut v: Vec<String> = t.vars().into_iter().map(|(n, _)| n).collect();
        v.sort();
        v
    };
    names(&c.a) == names(&c.b)
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
    let vars = grammar.variables();
    let inputs = Inputs::new(&vars, None);
    let printed: Vec<(Rc<Term>, Vec<u128>)> = terms
        .iter()
        .filter_map(|t| Some((t.clone(), fingerprint(t, macros, &inputs)?)))
        .collect();
    let full: HashMap<Rc<Term>, Vec<u128>> = printed.iter().cloned().collect();
    let mut candidates: Vec<(Candidate, Rc<Expr>, Rc<Expr>)> = Vec::new();
    for c in pairs(&classes(&printed)) {
        if !canonical_pair(&c, &grammar.vars) || !same_vars(&c) {
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
    // Ruler's minimisation in rounds: a fresh e-graph of the pending candidates of a batch
    // runs every rule kept so far; the derivable ones are dropped, the smallest few of the
    // rest are proven and kept, and the batch goes round again until it is empty.
    let mut kept: Vec<Kept> = Vec::new();
    let mut equations: Vec<Equation> = Vec::new();
    for batch in candidates.chunks(BATCH) {
        let mut pending: Vec<&(Candidate, Rc<Expr>, Rc<Expr>)> = batch.iter().collect();
        while !pending.is_empty() {
            let exprs: Vec<Rc<Expr>> = pending
                .iter()
                .flat_map(|(_, a, b)| [a.clone(), b.clone()])
                .collect();
            let mut deriver = Deriver::new(&exprs, &equations)?;
            let before = pending.len();
            pending.retain(|(_, a, b)| !deriver.equal(a, b));
            tally.derived += before - pending.len();
            // The round's picks: the smallest pending candidates, at most one per shape (a
            // candidate whose literals are another's is likely its instance: next round).
            let mut shapes: Vec<String> = Vec::new();
            let mut picked = Vec::new();
            let mut deferred = Vec::new();
            for item in pending.drain(..) {
                let shape = literal_shape(&item.0);
                if picked.len() < PER_ROUND && !shapes.contains(&shape) {
                    shapes.push(shape);
                    picked.push(item);
                } else {
                    deferred.push(item);
                }
            }
            pending = deferred;
            for (c, a, b) in picked {
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
                let (mut k, literal_instances) = generalise_literal(c, grammar, macros)?;
                k.general = generalise_types(&k, grammar.base, macros)?;
                equations.extend(instances(&k, literal_instances, &grammar.types, macros)?);
                kept.push(k);
            }
        }
    }
    kept.extend(predicated(
        grammar, &printed, &full, &vars, macros, &mut tally,
    )?);
    let mut found = Vec::new();
    for k in kept {
        found.extend(finish(k, piece, macros, models)?);
    }
    Ok((found, tally))
}

/// Two terms of one equality.
type TermPair = (Rc<Term>, Rc<Term>);

/// The candidate with its literal made a constant wildcard, when one relation between the
/// literals of the two sides proves at the piece's type; else the candidate as it is. Also
/// the concrete instances of the generalised rule at the workload's literals, for the e-graph.
fn generalise_literal(
    c: &Candidate,
    grammar: &Grammar,
    macros: &Macros,
) -> Result<(Kept, Vec<TermPair>)> {
    let plain = Kept {
        a: c.a.clone(),
        b: c.b.clone(),
        concrete: (c.a.clone(), c.b.clone()),
        predicate: None,
        general: None,
    };
    let (Some((la, ea)), Some((lb, eb))) = (single_literal(&c.a), single_literal(&c.b)) else {
        return Ok((plain, vec![]));
    };
    for rel in Relation::ALL {
        if !rel.applies(ea, eb) || !rel.holds(la, lb) {
            continue;
        }
        let a0 = abstract_literal(&c.a, la, "c0");
        // The same value at another type is that type's cast of the right side's wildcard.
        let b = if rel == Relation::Same {
            abstract_literal(&c.b, lb, "c0")
        } else {
            abstract_literal(&c.b, lb, "c1")
        };
        let a = if rel == Relation::SameValue {
            let cast = Term::node(Head::Cast(ea), ea, vec![Term::var("c1", eb)]);
            a0.replace(&|n| (n.head == Head::Var("c0".into())).then(|| cast.clone()))
        } else {
            a0.clone()
        };
        let predicate = rel.predicate(ea, eb);
        let p = match &predicate {
            Some(p) => Some(predicate_at_one_lane(p, macros)?),
            None => None,
        };
        let (ga, gb) = (at_one_lane(&a, macros)?, at_one_lane(&b, macros)?);
        if prove(&ga, &gb, p.as_deref())? != Outcome::Proven {
            continue;
        }
        let mut instances = Vec::new();
        for &x in &grammar.literals_at(ea) {
            for &y in &grammar.literals_at(eb) {
                if rel.holds(x, y) && (rel != Relation::Same || x == y) {
                    let ia = concretise(&concretise(&a0, "c0", x), "c1", y);
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
                general: None,
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
        .filter(|t| t.size() <= PREDICATED_MAX_SIZE)
        .filter(|t| matches!(t.vars().as_slice(), [(x, _)] if x == "x"))
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
                    let mut k = Kept {
                        a: rep.clone(),
                        b: other.clone(),
                        concrete: (rep.clone(), other.clone()),
                        predicate: Some(text),
                        general: None,
                    };
                    k.general = generalise_types(&k, grammar.base, macros)?;
                    out.push(k);
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// Direction, kind and claimed types of a kept equality, one rule per phase that wants it
/// (none where the right side would use a variable the left side does not bind).
fn finish(k: Kept, piece: &str, macros: &Macros, models: &[CostModel]) -> Result<Vec<Found>> {
    let (ca, cb) = (
        at_one_lane(&k.concrete.0, macros)?,
        at_one_lane(&k.concrete.1, macros)?,
    );
    let a_first = (k.a.size(), k.a.to_string()) > (k.b.size(), k.b.to_string());
    let mut found = Vec::new();
    for phase in classify(&ca, &cb, models, a_first) {
        let (lhs, rhs) = if phase.flipped {
            (&k.b, &k.a)
        } else {
            (&k.a, &k.b)
        };
        // A constant wildcard the predicate relates to the left side's is bound by it.
        let mut bound: Vec<String> = lhs.vars().into_iter().map(|(n, _)| n).collect();
        if k.predicate.is_some() {
            bound.extend(["c0".to_string(), "c1".to_string()]);
        }
        if rhs.vars().iter().any(|(n, _)| !bound.contains(n)) || lhs.vars().is_empty() {
            continue;
        }
        let (types, lhs_text, rhs_text, predicate) = match &k.general {
            Some(g) if phase.flipped => (
                g.types.clone(),
                g.b.clone(),
                g.a.clone(),
                g.predicate.clone(),
            ),
            Some(g) => (
                g.types.clone(),
                g.a.clone(),
                g.b.clone(),
                g.predicate.clone(),
            ),
            None => (vec![], side_text(lhs), side_text(rhs), k.predicate.clone()),
        };
        found.push(Found {
            types,
            lhs: lhs_text,
            rhs: rhs_text,
            predicate,
            kind: phase.kind,
            isas: phase.isas,
            reason: phase.reason,
            piece: piece.to_string(),
        });
    }
    Ok(found)
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
