//! `isadb verify-rules`: the hand-written rules of `specs/rules/` (proven by
//! [`crate::rules::verify`] with z3 over bit-vectors) and the kernel rules of `specs/dsp/`, each
//! instantiated at 2 and 4 lanes, its wildcards read as fresh reals (a vector wildcard as a `Vec`
//! of fresh reals), both sides read lane by lane and proven equal over the reals (the normal
//! form, else z3 with `sqrt` and `sgn` uninterpreted). Verdicts go into the `rules` table and
//! `rules.db/rules.csv`; one [`Report`] covers both sets.

use super::rule::{instantiate, KernelRule, Term};
use super::store::{self, rule_hash, RuleSet, RULES_TARGET};
use super::term::{Dag, Id, Op};
use super::validate::{lanes, prove_pairs};
use crate::error::{Error, Result};
use crate::project::Project;
use crate::rules::store::{record_verdicts, Run};
use crate::rules::verdict::RuleVerdict;
use crate::rules::verify::{self as rules_verify, Options};
use crate::rules::RuleStatus;
use rusqlite::params;
use serde::Serialize;
use std::time::Instant;

/// The widths a rule is proven at.
pub const WIDTHS: [usize; 2] = [2, 4];

/// What one `verify-rules` run found: the hand-written rules' report (absent when `--rule`
/// names a kernel rule) and the kernel rules' (absent when it names a hand-written one).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The rules of `specs/rules/`, at the top level of the JSON document.
    #[serde(flatten)]
    pub rules: Option<rules_verify::Report>,
    /// The kernel rules of `specs/dsp/`.
    pub kernel_rules: Option<rules_verify::Report>,
}

impl Report {
    /// Whether any rule of either set was refuted.
    pub fn refuted(&self) -> bool {
        [&self.rules, &self.kernel_rules]
            .into_iter()
            .flatten()
            .any(|r| r.refuted > 0)
    }
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
            return Ok(verdict(
                rule,
                RuleStatus::Refuted,
                Some(format!("{width} lanes, lane {k}: {why}")),
                start,
            ));
        }
    }
    Ok(verdict(rule, RuleStatus::Proven, None, start))
}

/// The verdict on a kernel rule: over the reals (`f32` in the table), at every width when proven.
fn verdict(
    rule: &KernelRule,
    status: RuleStatus,
    counterexample: Option<String>,
    start: Instant,
) -> RuleVerdict {
    let proven = status == RuleStatus::Proven;
    RuleVerdict {
        name: rule.name.clone(),
        status,
        types_proven: if proven { vec!["f32".into()] } else { vec![] },
        lanes_proven: if proven {
            WIDTHS.iter().map(|&w| w as u32).collect()
        } else {
            vec![]
        },
        counterexample,
        solver_ms: start.elapsed().as_secs_f64() * 1000.0,
    }
}

/// `verify-rules`: the hand-written rules and the kernel rules (`options.rule` picks the set its
/// rule is in); records the verdicts and writes `rules.csv` and `verification_runs.csv` back.
pub fn verify_rules(project: &Project, options: &Options) -> Result<Report> {
    let kernel_rules = super::rule::load(&project.specs)?;
    let only = options.rule.as_deref();
    let is_kernel = only.is_some_and(|n| kernel_rules.iter().any(|r| r.name == n));
    let rules = if is_kernel {
        None
    } else {
        Some(project.verify_rules(options)?)
    };
    let kernel_rules = if only.is_none() || is_kernel {
        Some(verify_kernel_rules(project, options)?)
    } else {
        None
    };
    Ok(Report {
        rules,
        kernel_rules,
    })
}

/// Syncs the kernel rules into the database and proves those not yet proven (all with
/// `force`), or only the one named.
fn verify_kernel_rules(project: &Project, options: &Options) -> Result<rules_verify::Report> {
    let started = Instant::now();
    let started_at = crate::clock::now();
    let mut db = project.open()?;
    let tuning = store::tuning(&db, RuleSet::Given)?;
    let mut rules = store::sync(&mut db, &project.specs, tuning)?;
    rules.extend(store::set_rules(&db, RuleSet::Synthesized, false)?);
    let only = options.rule.as_deref();
    let mut verdicts = Vec::new();
    let mut skipped = 0;
    for r in rules.iter().filter(|r| only.is_none_or(|n| n == r.name)) {
        let status: RuleStatus = db.conn().query_row(
            "SELECT status FROM rules WHERE name = ?1 AND target = ?2",
            params![r.name, RULES_TARGET],
            |row| row.get(0),
        )?;
        if status == RuleStatus::Proven && !options.force {
            skipped += 1;
            continue;
        }
        verdicts.push((verify_rule(r)?, rule_hash(r)));
    }
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !verdicts.is_empty() {
        let command = format!(
            "verify-rules (kernel rules){}{}",
            only.map_or(String::new(), |n| format!(" --rule {n}")),
            if options.force { " --force" } else { "" }
        );
        let run = Run {
            started_at: &started_at,
            finished_at: &crate::clock::now(),
            command: &command,
            wall_ms,
        };
        record_verdicts(&mut db, &verdicts, &run)?;
        db.export_tables(&project.tables, &["rules", "verification_runs"])?;
    }
    let count = |s: RuleStatus| verdicts.iter().filter(|(v, _)| v.status == s).count();
    Ok(rules_verify::Report {
        skipped,
        proven: count(RuleStatus::Proven),
        refuted: count(RuleStatus::Refuted),
        unknown: count(RuleStatus::Unknown),
        wall_ms,
        rules: verdicts.into_iter().map(|(v, _)| v).collect(),
    })
}
