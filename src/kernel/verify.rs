//! The kernel rules' part of `isadb verify-rules`: each rule instantiated at 2 and 4 lanes, its
//! wildcards read as fresh reals (a vector wildcard as a `Vec` of fresh reals), both sides read
//! lane by lane and proven equal over the reals (the normal form, else z3 with `sqrt` and `sgn`
//! uninterpreted). Verdicts go into the `rules` table and `rules.db/rules.csv`.

use super::rule::{instantiate, KernelRule, Term};
use super::store::{self, rule_hash, RULES_TARGET};
use super::term::{Dag, Id, Op};
use super::validate::{lanes, prove_pairs};
use crate::database::Layout;
use crate::error::{Error, Result};
use rusqlite::params;
use serde::Serialize;
use std::time::Instant;

/// The widths a rule is proven at.
pub const WIDTHS: [usize; 2] = [2, 4];

#[derive(Clone, Debug, Serialize)]
pub struct RuleVerdict {
    pub name: String,
    pub status: String,
    pub counterexample: Option<String>,
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    pub rules: Vec<RuleVerdict>,
    pub proven: usize,
    pub refuted: usize,
    pub skipped: usize,
}

/// A rule side as a term of `dag`, its wildcards fresh reals; `vector` says what it computes.
fn side(dag: &mut Dag, t: &Term, vector: bool, width: usize) -> Id {
    match t {
        Term::Wild(w) if vector => {
            let lanes: Vec<Id> = (0..width).map(|k| dag.get(w, k as u32)).collect();
            dag.add(Op::Vec, &lanes)
        }
        Term::Wild(w) => dag.get(w, 0),
        Term::Num(n) => dag.num(*n),
        Term::App(op, args) => {
            let operands_are_vectors = op.is_vector() && *op != Op::Vec;
            let ids: Vec<Id> = args
                .iter()
                .map(|a| side(dag, a, operands_are_vectors, width))
                .collect();
            dag.add(*op, &ids)
        }
    }
}

/// Proves one rule at every width; the verdict.
pub fn verify_rule(rule: &KernelRule) -> Result<RuleVerdict> {
    let start = Instant::now();
    for width in WIDTHS {
        let mut dag = Dag::new();
        let lhs = instantiate(&rule.lhs, width);
        let vector = matches!(&lhs, Term::App(op, _) if op.is_vector());
        let l = side(&mut dag, &lhs, vector, width);
        let r = side(&mut dag, &instantiate(&rule.rhs, width), vector, width);
        let (ll, rl) = (lanes(&mut dag, l), lanes(&mut dag, r));
        if ll.len() != rl.len() {
            return Err(Error::data(
                "rules",
                format!(
                    "kernel rule {}: the sides have {} and {} lanes",
                    rule.name,
                    ll.len(),
                    rl.len()
                ),
            ));
        }
        let pairs: Vec<(Id, Id)> = ll.into_iter().zip(rl).collect();
        if let (_, _, Some((k, why))) = prove_pairs(&dag, &pairs)? {
            return Ok(RuleVerdict {
                name: rule.name.clone(),
                status: "refuted".into(),
                counterexample: Some(format!("{width} lanes, lane {k}: {why}")),
                ms: start.elapsed().as_secs_f64() * 1000.0,
            });
        }
    }
    Ok(RuleVerdict {
        name: rule.name.clone(),
        status: "proven".into(),
        counterexample: None,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Syncs the rules files and proves the kernel rules not yet proven (all with `force`), or only
/// the one named; records the verdicts and exports `rules.csv`.
pub fn verify_rules(layout: &Layout, only: Option<&str>, force: bool) -> Result<VerifyReport> {
    let mut db = layout.open()?;
    let tuning = store::tuning(&db)?;
    let rules = store::sync(&mut db, &layout.specs, tuning)?;
    let mut verdicts = Vec::new();
    let mut skipped = 0;
    for r in rules.iter().filter(|r| only.is_none_or(|n| n == r.name)) {
        let status: String = db.conn().query_row(
            "SELECT status FROM rules WHERE name = ?1 AND target = ?2",
            params![r.name, RULES_TARGET],
            |row| row.get(0),
        )?;
        if status == "proven" && !force {
            skipped += 1;
            continue;
        }
        verdicts.push((r, verify_rule(r)?));
    }
    let now = crate::rules::verify::now_text();
    db.transaction(|tx| {
        for (r, v) in &verdicts {
            tx.execute(
                "UPDATE rules SET status = ?2, lanes_proven = ?3, types_proven = 'f32', counterexample = ?4,
                 solver_ms = ?5, verified_at = ?6, rule_hash = ?7 WHERE name = ?1",
                params![
                    r.name,
                    v.status,
                    WIDTHS.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
                    v.counterexample,
                    (v.ms * 10.0).round() / 10.0,
                    now,
                    rule_hash(r)
                ],
            )?;
        }
        Ok(())
    })?;
    if !verdicts.is_empty() {
        db.export_tables(&layout.tables, &["rules"])?;
    }
    let count = |s: &str| verdicts.iter().filter(|(_, v)| v.status == s).count();
    Ok(VerifyReport {
        proven: count("proven"),
        refuted: count("refuted"),
        skipped,
        rules: verdicts.into_iter().map(|(_, v)| v).collect(),
    })
}
