//! `isadb verify-rules`: prove every rule (hand-written in `specs/rules/`, synthesized in the
//! `rules` table) with z3 under its predicate, at every element type it
//! ranges over, at 4 lanes and at one full 128-bit register, and record the verdicts in the
//! `rules` table with a `verification_runs` row; the [`Report`] says what was found.

use super::load::{elaborate, load_rules, rule_hash, rule_macros, rule_types};
use super::store::{record_verdicts, stored_status, synthesized_rules, Run};
use super::syntax::Rule;
use super::verdict::{RuleStatus, RuleVerdict};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::{Elem, Macros};
use crate::semantics::{prove_equivalent, Verdict};
use crate::spec::load_macros;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Solver budget per proof.
pub const RULE_TIMEOUT_MS: u32 = 20_000;

/// Which rules to prove, and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this rule.
    pub rule: Option<String>,
    /// Proof threads.
    pub jobs: usize,
    /// Prove rules that already have a proven record again.
    pub force: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// What one `verify-rules` run found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The verdict on every rule proven now, in file order.
    pub rules: Vec<RuleVerdict>,
    /// Rules already proven with their current text (not proven again).
    pub skipped: usize,
    /// Rules proven now.
    pub proven: usize,
    /// Rules refuted now.
    pub refuted: usize,
    /// Rules z3 could not decide.
    pub unknown: usize,
    /// Wall time of the run.
    pub wall_ms: f64,
}

/// The lane counts a rule is checked at for type `t`: 4 and a full 128-bit register of the
/// widest element the rule's variables or result use.
fn lane_counts(rule: &Rule, t: Option<Elem>, macros: &Macros) -> Result<Vec<u32>> {
    let inst = elaborate(rule, t, 4, macros)?;
    let mut bits = inst.lhs.ty.elem.bits();
    for (_, ty) in inst.lhs.vars().into_iter().chain(inst.rhs.vars()) {
        bits = bits.max(ty.elem.bits());
    }
    let full = (128 / bits.max(1)).max(1);
    Ok(if full == 4 { vec![4] } else { vec![4, full] })
}

/// Proves one rule; stops at the first refutation or unknown.
pub fn verify_rule(rule: &Rule, macros: &Macros, timeout_ms: u32) -> Result<RuleVerdict> {
    let mut v = RuleVerdict {
        name: rule.name.clone(),
        status: RuleStatus::Proven,
        types_proven: vec![],
        lanes_proven: vec![],
        counterexample: None,
        solver_ms: 0.0,
    };
    for t in rule_types(rule) {
        let tname = t.map_or_else(String::new, |t| t.name().to_string());
        for lanes in lane_counts(rule, t, macros)? {
            let prove = || -> Result<Verdict> {
                let inst = elaborate(rule, t, lanes, macros)?;
                prove_equivalent(&inst.lhs, &inst.rhs, inst.predicate.as_deref(), timeout_ms)
            };
            // z3 that cannot decide is asked once more on a new thread, whose context is new:
            // how long it takes depends on what its context saw before (a shipped rule that
            // proves in seconds was once left unknown after 40 s on a busy thread).
            let verdict = match prove()? {
                Verdict::Unknown { .. } => std::thread::scope(|scope| {
                    scope
                        .spawn(prove)
                        .join()
                        .map_err(|_| Error::Tool("a proof thread panicked".into()))?
                })?,
                decided => decided,
            };
            match verdict {
                Verdict::Proven { ms, .. } => {
                    v.solver_ms += ms;
                    if !v.lanes_proven.contains(&lanes) {
                        v.lanes_proven.push(lanes);
                    }
                }
                Verdict::Counterexample {
                    inputs,
                    lhs,
                    rhs,
                    ms,
                    ..
                } => {
                    v.solver_ms += ms;
                    let ins: Vec<String> = inputs
                        .iter()
                        .map(|(n, val)| format!("{n} = {val}"))
                        .collect();
                    let at = if tname.is_empty() {
                        format!("{lanes} lanes")
                    } else {
                        format!("T = {tname}, {lanes} lanes")
                    };
                    v.status = RuleStatus::Refuted;
                    v.counterexample = Some(format!(
                        "{at}: {}; lhs = {lhs}, rhs = {rhs}",
                        ins.join(", ")
                    ));
                    return Ok(v);
                }
                Verdict::Unknown { reason, ms } => {
                    v.solver_ms += ms;
                    v.status = RuleStatus::Unknown;
                    v.counterexample = Some(format!(
                        "{reason} after {ms:.0} ms at {tname} {lanes} lanes"
                    ));
                    return Ok(v);
                }
            }
        }
        if !tname.is_empty() {
            v.types_proven.push(tname);
        }
    }
    v.lanes_proven.sort();
    Ok(v)
}

/// Proves the rules of `specs/rules/` and the synthesized rules of `db` (all, or
/// `options.rule`) that have no proven record for their current text (all with
/// `options.force`) and records the verdicts in `db`.
pub fn verify(db: &mut Database, specs_dir: &Path, options: &Options) -> Result<Report> {
    let started = Instant::now();
    let started_at = crate::clock::now();
    let macros = rule_macros(&load_macros(specs_dir)?.macros)?;
    let mut rules = load_rules(specs_dir)?;
    rules.extend(synthesized_rules(db)?);
    let only = options.rule.as_deref();
    if let Some(name) = only {
        if !rules.iter().any(|r| r.name == name) {
            let known: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "no rule '{name}'{}",
                crate::words::did_you_mean(name, &known)
            )));
        }
    }
    let mut todo: Vec<&Rule> = Vec::new();
    let mut last_ms = Vec::new();
    let mut skipped = 0;
    for r in rules.iter().filter(|r| only.is_none_or(|n| n == r.name)) {
        let stored = stored_status(db, &r.name, &rule_hash(r, &macros))?;
        let proven = stored.is_some_and(|(status, _)| status == RuleStatus::Proven);
        if proven && !options.force {
            skipped += 1;
        } else {
            todo.push(r);
            last_ms.push(stored.map_or(0.0, |(_, ms)| ms));
        }
    }
    let jobs = options.jobs.max(1).min(todo.len().max(1));
    // The slowest proofs of the last run first, so that no thread is left with one at the end.
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by(|&a, &b| last_ms[b].total_cmp(&last_ms[a]));
    let verdicts = prove_all(&todo, &order, specs_dir, jobs, options.progress)?;
    let finished_at = crate::clock::now();
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let command = format!(
        "verify-rules{}{}{}",
        only.map_or(String::new(), |n| format!(" --rule {n}")),
        if jobs > 1 {
            format!(" --jobs {jobs}")
        } else {
            String::new()
        },
        if options.force { " --force" } else { "" }
    );
    let hashed: Vec<(RuleVerdict, String)> = verdicts
        .into_iter()
        .map(|v| {
            let r = rules
                .iter()
                .find(|r| r.name == v.name)
                .expect("verdicts are for loaded rules");
            let hash = rule_hash(r, &macros);
            (v, hash)
        })
        .collect();
    let run = Run {
        started_at: &started_at,
        finished_at: &finished_at,
        command: &command,
        wall_ms,
    };
    record_verdicts(db, &hashed, &run)?;
    let verdicts: Vec<RuleVerdict> = hashed.into_iter().map(|(v, _)| v).collect();
    let count = |s: RuleStatus| verdicts.iter().filter(|v| v.status == s).count();
    Ok(Report {
        skipped,
        proven: count(RuleStatus::Proven),
        refuted: count(RuleStatus::Refuted),
        unknown: count(RuleStatus::Unknown),
        wall_ms,
        rules: verdicts,
    })
}

/// Proves the rules on `jobs` threads, taken in `order` (indices into `todo`); the verdicts in
/// the order of `todo`.
fn prove_all(
    todo: &[&Rule],
    order: &[usize],
    specs_dir: &Path,
    jobs: usize,
    progress: bool,
) -> Result<Vec<RuleVerdict>> {
    let bar = (progress && !todo.is_empty()).then(|| {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<RuleVerdict>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                // Expressions are Rc-shared: each thread elaborates with its own macros.
                let own = match load_macros(specs_dir).and_then(|m| rule_macros(&m.macros)) {
                    Ok(m) => m,
                    Err(e) => {
                        results.lock().unwrap().push((usize::MAX, Err(e)));
                        return;
                    }
                };
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let v = verify_rule(todo[i], &own, RULE_TIMEOUT_MS);
                    if let Some(b) = &bar {
                        b.set_message(todo[i].name.clone());
                        b.inc(1);
                    }
                    results.lock().unwrap().push((i, v));
                }
            });
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
