//! `isadb synth --dialect dsp`: the kernel rules synthesized as Isaria does (Ruler over the
//! dialect with lane generalization). The terms of [`enumerate`] are grouped by fingerprint;
//! each pair of a group's smallest term with another member is a candidate equality, taken
//! smallest first. A direction of a candidate is kept as a rule when it is a valid rewrite (its
//! left side is not a bare wildcard and binds every wildcard of its right side), the rules kept
//! so far do not derive it ([`derive`], an egglog run), and z3 proves the equality over the reals
//! at 2 and 4 lanes. The rules are stored in the `rules` table (target `dsp`, provenance
//! `synthesized`, the run, the search parameters and the costs behind their phase) and Isaria's
//! alpha and beta are swept for them as a set of their own (`kernel::tune`); `isadb kernel
//! --rules synthesized` compiles with them alone.

pub mod derive;
pub mod enumerate;

use super::phase::cost_point;
use super::rule::{KernelRule, Pat};
use super::store::{rule_hash, RuleSet, RULES_TARGET};
use super::verify::verify_rule;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::rules::RuleStatus;
use crate::spec::hash_text;
use derive::Deriver;
use enumerate::{fingerprint, lane_meaning, packed, size, text, wildcards_of, Samples};
use rusqlite::params;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

/// Bumped whenever the search changes what it finds.
const VERSION: &str = "1";
/// The `synthesis_pieces` row of the dialect's search.
pub const PIECE: &str = "dialect dsp";
/// Random sample points besides those with zeros.
const RANDOM_POINTS: usize = 6;
/// A rule's right side has at most this many nodes more than its left: a larger expansion is
/// a chain of smaller ones, or a detour.
const MAX_GROWTH: usize = 2;

/// The bounds of the search.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Largest scalar term (nodes).
    pub scalar_size: usize,
    /// Largest vector term (nodes) compared with other vector terms.
    pub vector_size: usize,
    /// Largest vector term whose lane-wise packing is a candidate.
    pub packing_size: usize,
    /// Search again even when nothing it reads changed.
    pub force: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            scalar_size: 5,
            vector_size: 5,
            packing_size: 4,
            force: false,
        }
    }
}

impl Options {
    fn params(&self) -> String {
        format!(
            "scalar_size {} vector_size {} packing_size {} max_growth {MAX_GROWTH} wildcards {} literals {:?} random_points {}",
            self.scalar_size,
            self.vector_size,
            self.packing_size,
            enumerate::WILDCARDS.join(" "),
            enumerate::LITERALS,
            RANDOM_POINTS
        )
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Nothing the search reads changed since the stored run: nothing was searched.
    pub unchanged: bool,
    pub terms: usize,
    pub candidates: usize,
    /// Candidates whose every valid direction the kept rules derive.
    pub derived: usize,
    pub proven: usize,
    pub refuted: usize,
    pub unknown: usize,
    /// Synthesized dialect rules stored, by phase.
    pub by_phase: Vec<(String, usize)>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub search_ms: f64,
    pub wall_ms: f64,
}

/// The candidate with its wildcards renamed in order of first appearance, so candidates equal
/// up to renaming are searched once.
fn canonical(l: &Pat, r: &Pat) -> (Pat, Pat) {
    fn order(p: &Pat, seen: &mut Vec<String>) {
        match p {
            Pat::Wild(w) if !seen.contains(w) => seen.push(w.clone()),
            Pat::App(_, args) => args.iter().for_each(|a| order(a, seen)),
            Pat::Lanes(p) => order(p, seen),
            _ => {}
        }
    }
    fn rename(p: &Pat, seen: &[String]) -> Pat {
        match p {
            Pat::Wild(w) => {
                let k = seen.iter().position(|s| s == w).unwrap_or(0);
                Pat::Wild(enumerate::WILDCARDS[k].to_string())
            }
            Pat::App(op, args) => Pat::App(*op, args.iter().map(|a| rename(a, seen)).collect()),
            Pat::Lanes(p) => Pat::Lanes(Box::new(rename(p, seen))),
            Pat::Num(n) => Pat::Num(*n),
        }
    }
    let mut seen = Vec::new();
    order(l, &mut seen);
    order(r, &mut seen);
    (rename(l, &seen), rename(r, &seen))
}

/// Whether `l => r` is a rewrite worth keeping: its left side is not a bare wildcard and binds
/// every wildcard of its right side; it grows a term by at most [`MAX_GROWTH`] nodes; a literal
/// expands into one operation over literals (`0 => (+ 0 0)`, a lane shaped like its
/// neighbours), not into any constant expression that happens to equal it.
fn valid(l: &Pat, r: &Pat) -> bool {
    let (mut lw, mut rw) = (BTreeSet::new(), BTreeSet::new());
    wildcards_of(l, &mut lw);
    wildcards_of(r, &mut rw);
    let literal_expansion = match (l, r) {
        (Pat::Num(_), Pat::App(_, args)) => args.iter().all(|a| matches!(a, Pat::Num(_))),
        (Pat::Num(_), _) => false,
        _ => true,
    };
    !matches!(l, Pat::Wild(_))
        && rw.is_subset(&lw)
        && size(r) <= size(l) + MAX_GROWTH
        && literal_expansion
}

/// Whether an equality follows by congruence from equalities of its operands: the same
/// operator on both sides, operand by operand equal in value (`(neg a) = (neg (+ a 0))`). Its
/// operands' equality was a smaller candidate: kept, derived, or not a rewrite at all.
fn congruent(a: &Pat, b: &Pat, samples: &Samples) -> bool {
    match (a, b) {
        (Pat::App(x, xs), Pat::App(y, ys)) if x == y => xs
            .iter()
            .zip(ys)
            .all(|(p, q)| fingerprint(p, samples) == fingerprint(q, samples)),
        (Pat::Lanes(p), Pat::Lanes(q)) => fingerprint(p, samples) == fingerprint(q, samples),
        _ => false,
    }
}

/// The candidate equalities, smallest first: within each fingerprint group of scalar terms and
/// of vector terms, the smallest member against each other; and each vector term's packing.
fn candidates(opts: &Options, report: &mut Report) -> Vec<(Pat, Pat)> {
    let samples = Samples::new(RANDOM_POINTS);
    let mut out = Vec::new();
    for terms in [
        enumerate::scalar_terms(opts.scalar_size),
        enumerate::vector_terms(opts.vector_size),
    ] {
        report.terms += terms.len();
        let mut groups: HashMap<Vec<u64>, Vec<&Pat>> = HashMap::new();
        for t in &terms {
            groups.entry(fingerprint(t, &samples)).or_default().push(t);
        }
        for t in &terms {
            let group = &groups[&fingerprint(t, &samples)];
            if !std::ptr::eq(group[0], t) && !congruent(group[0], t, &samples) {
                out.push((group[0].clone(), t.clone()));
            }
        }
    }
    for v in enumerate::vector_terms(opts.packing_size) {
        if !matches!(v, Pat::Wild(_)) {
            out.push((Pat::Lanes(Box::new(lane_meaning(&v))), packed(&v)));
        }
    }
    let mut seen = HashSet::new();
    out.retain(|(l, r)| seen.insert(canonical(l, r)));
    out.sort_by_key(|(l, r)| (size(l).max(size(r)), size(l) + size(r)));
    out
}

/// A found rule named by the hash of its sides.
fn found_rule(l: &Pat, r: &Pat) -> KernelRule {
    let (lhs_text, rhs_text) = (text(l), text(r));
    KernelRule {
        name: format!(
            "syn-dsp-{}",
            &hash_text(&format!("{lhs_text} => {rhs_text}"))[..10]
        ),
        lhs: l.clone(),
        rhs: r.clone(),
        lhs_text,
        rhs_text,
        provenance: "synthesized".into(),
        loc: Default::default(),
    }
}

/// Runs the search; the rules kept, each with its proof's verdict.
fn search(
    opts: &Options,
    report: &mut Report,
    progress: bool,
) -> Result<Vec<(KernelRule, crate::rules::verdict::RuleVerdict)>> {
    let candidates = candidates(opts, report);
    report.candidates = candidates.len();
    let mut deriver = Deriver::new()?;
    let mut kept = Vec::new();
    for (k, (a, b)) in candidates.iter().enumerate() {
        if progress && k % 500 == 0 {
            eprint!(
                "\risadb synth: dialect dsp: candidate {k}/{}, {} rules kept ",
                candidates.len(),
                kept.len()
            );
        }
        let mut open = Vec::new();
        for (l, r) in [(a, b), (b, a)] {
            if valid(l, r) && !deriver.derives(l, r)? {
                open.push(found_rule(l, r));
            }
        }
        if open.is_empty() {
            report.derived += 1;
            continue;
        }
        let verdict = verify_rule(&open[0])?;
        match verdict.status {
            RuleStatus::Proven => report.proven += 1,
            RuleStatus::Refuted => {
                report.refuted += 1;
                continue;
            }
            _ => {
                report.unknown += 1;
                continue;
            }
        }
        for rule in open {
            deriver.keep(&rule)?;
            let mut v = verdict.clone();
            v.name = rule.name.clone();
            kept.push((rule, v));
        }
    }
    if progress {
        eprintln!();
    }
    Ok(kept)
}

/// The hash of everything the search reads.
fn input_hash(project: &Project, opts: &Options) -> Result<String> {
    let spec = crate::error::read_text(project.specs.join("dsp").join("dsp.spec"))?;
    Ok(hash_text(&format!(
        "dialect synthesis {VERSION} {} {spec}",
        opts.params()
    )))
}

/// `isadb synth --dialect dsp`.
pub fn synthesize(project: &Project, opts: &Options, progress: bool) -> Result<Report> {
    let started = Instant::now();
    let started_at = crate::clock::now();
    let hash = input_hash(project, opts)?;
    let mut report = Report::default();
    let stored: Option<String> = {
        let db = project.open()?;
        db.text_rows(&format!(
            "SELECT input_hash FROM synthesis_pieces WHERE piece = '{PIECE}'"
        ))?
        .into_iter()
        .next()
        .map(|r| r[0].clone())
    };
    if stored.as_deref() == Some(hash.as_str()) && !opts.force {
        report.unchanged = true;
    } else {
        let kept = search(opts, &mut report, progress)?;
        report.search_ms = started.elapsed().as_secs_f64() * 1000.0;
        store(project, opts, &hash, &started_at, &kept, &report)?;
        super::tune::tune(project, RuleSet::Synthesized)?;
    }
    let db = project.open()?;
    report.by_phase = db
        .text_rows(&format!(
            "SELECT kind, CAST(count(*) AS TEXT) FROM rules WHERE target = '{RULES_TARGET}'
             AND provenance = 'synthesized' GROUP BY kind ORDER BY min(phase)"
        ))?
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap_or(0)))
        .collect();
    if let Some(t) = super::store::tuning(&db, RuleSet::Synthesized)? {
        (report.alpha, report.beta) = (Some(t.alpha), Some(t.beta));
    }
    report.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Replaces the stored synthesized dialect rules with the run's, with the run's rows; one
/// transaction, then the tables written back to `rules.db/`.
fn store(
    project: &Project,
    opts: &Options,
    hash: &str,
    started_at: &str,
    kept: &[(KernelRule, crate::rules::verdict::RuleVerdict)],
    report: &Report,
) -> Result<()> {
    let mut db = project.open()?;
    let finished_at = crate::clock::now();
    let key = format!("{finished_at} {PIECE}");
    let params_text = opts.params();
    db.transaction(|tx| {
        tx.execute(
            "DELETE FROM rules WHERE target = ?1 AND provenance = 'synthesized'",
            [RULES_TARGET],
        )?;
        for (rule, v) in kept {
            let point = cost_point(rule);
            let reason = format!(
                "isaria-model cost differential {:.3}, aggregate {:.3} at 4 lanes",
                point.differential, point.aggregate
            );
            let lanes: Vec<String> = v.lanes_proven.iter().map(u32::to_string).collect();
            tx.execute(
                "INSERT INTO rules(name, lhs, rhs, kind, target, provenance, rule_hash, status,
                   lanes_proven, types_proven, solver_ms, verified_at, synthesis_run, search, reason)
                 VALUES (?1, ?2, ?3, 'expand', ?4, 'synthesized', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    rule.name,
                    rule.lhs_text,
                    rule.rhs_text,
                    RULES_TARGET,
                    rule_hash(rule),
                    v.status,
                    lanes.join(","),
                    v.types_proven.join(" "),
                    (v.solver_ms * 10.0).round() / 10.0,
                    finished_at,
                    key,
                    format!("{PIECE}: {params_text}"),
                    reason
                ],
            )
            .map_err(|e| Error::data("rules", format!("rule {}: {e}", rule.name)))?;
        }
        tx.execute(
            "INSERT INTO synthesis_runs(started_at, finished_at, isa, params, rules_found, wall_ms, run_key, shard)
             VALUES (?1, ?2, 'dsp', ?3, ?4, ?5, ?6, NULL)",
            params![started_at, finished_at, params_text, kept.len() as i64, report.search_ms.round(), key],
        )?;
        let names: Vec<&str> = kept.iter().map(|(r, _)| r.name.as_str()).collect();
        tx.execute(
            "INSERT OR REPLACE INTO synthesis_pieces(piece, input_hash, synthesis_run, params, candidates, rules, wall_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![PIECE, hash, key, params_text, report.candidates as i64, names.join(" "), report.search_ms.round()],
        )?;
        Ok(())
    })?;
    db.export_tables(
        &project.tables,
        &["rules", "synthesis_runs", "synthesis_pieces"],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::sexpr::read_one;
    use crate::kernel::rule::pattern;

    fn pat(s: &str) -> Pat {
        pattern(&read_one(s, "t").unwrap()).unwrap()
    }

    #[test]
    fn candidates_are_canonical_and_directions_valid() {
        assert_eq!(
            canonical(&pat("(+ c b)"), &pat("(+ b c)")),
            (pat("(+ a b)"), pat("(+ b a)"))
        );
        assert!(valid(&pat("(+ a 0)"), &pat("a")));
        assert!(!valid(&pat("a"), &pat("(+ a 0)")));
        assert!(!valid(&pat("0"), &pat("(* a 0)")));
        assert!(valid(&pat("0"), &pat("(+ 0 0)")));
        assert!(!valid(&pat("0"), &pat("(* 0 (sgn 1))")));
        assert!(!valid(&pat("(neg a)"), &pat("(- a (+ a a))")));
        let s = Samples::new(2);
        assert!(congruent(&pat("(neg a)"), &pat("(neg (+ a 0))"), &s));
        assert!(!congruent(&pat("(+ a b)"), &pat("(+ b a)"), &s));
    }
}
