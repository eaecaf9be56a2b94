//! `isadb verify-rules`: prove every rule with z3 under its predicate, at every element type it
//! ranges over, at 4 lanes and at one full 128-bit register; record the verdicts in the `rules`
//! table and export `rules.db/rules.csv` and a `verification_runs` row.

use super::load::{elaborate, load_rules, rule_hash, rule_macros, rule_types};
use super::syntax::Rule;
use crate::cli::{render_table, Outcome};
use crate::database::Layout;
use crate::error::{Error, Result};
use crate::ir::{Elem, Macros};
use crate::semantics::{prove_equivalent, Verdict};
use crate::spec::load_macros;
use rusqlite::params;
use serde::Serialize;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Solver budget per proof.
pub const RULE_TIMEOUT_MS: u32 = 20_000;

/// The verdict on one rule over all its types and lane counts.
#[derive(Debug, Clone, Serialize)]
pub struct RuleVerdict {
    pub name: String,
    pub status: String,
    pub types_proven: Vec<String>,
    pub lanes_proven: Vec<u32>,
    pub counterexample: Option<String>,
    pub solver_ms: f64,
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
        status: "proven".into(),
        types_proven: vec![],
        lanes_proven: vec![],
        counterexample: None,
        solver_ms: 0.0,
    };
    for t in rule_types(rule) {
        let tname = t.map_or_else(String::new, |t| t.name().to_string());
        for lanes in lane_counts(rule, t, macros)? {
            let inst = elaborate(rule, t, lanes, macros)?;
            let verdict =
                prove_equivalent(&inst.lhs, &inst.rhs, inst.predicate.as_deref(), timeout_ms)?;
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
                    v.status = "refuted".into();
                    v.counterexample = Some(format!(
                        "{at}: {}; lhs = {lhs}, rhs = {rhs}",
                        ins.join(", ")
                    ));
                    return Ok(v);
                }
                Verdict::Unknown { reason, ms } => {
                    v.solver_ms += ms;
                    v.status = "unknown".into();
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

pub fn now_text() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The `verify-rules` command.
pub fn verify_rules(
    layout: &Layout,
    only: Option<&str>,
    jobs: usize,
    force: bool,
    json: bool,
) -> Result<Outcome> {
    let started = Instant::now();
    let started_at = now_text();
    let mut db = layout.open()?;
    let spec = load_macros(&layout.specs)?;
    let macros = rule_macros(&spec.macros)?;
    let rules = load_rules(&layout.specs)?;
    if let Some(name) = only {
        if !rules.iter().any(|r| r.name == name) {
            let known: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "no rule '{name}'{}",
                crate::ir::parse::did_you_mean(name, &known)
            )));
        }
    }
    let mut todo: Vec<&Rule> = Vec::new();
    let mut skipped = 0;
    for r in rules.iter().filter(|r| only.is_none_or(|n| n == r.name)) {
        let hash = rule_hash(r, &macros);
        let status: Option<String> = db
            .conn()
            .query_row(
                "SELECT status FROM rules WHERE name = ?1 AND rule_hash = ?2",
                params![r.name, hash],
                |row| row.get(0),
            )
            .ok();
        if !force && status.as_deref() == Some("proven") {
            skipped += 1;
        } else {
            todo.push(r);
        }
    }
    let bar = if std::io::stderr().is_terminal() && !todo.is_empty() {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<RuleVerdict>)>> = Mutex::new(Vec::new());
    let jobs = jobs.max(1).min(todo.len().max(1));
    let specs_dir = &layout.specs;
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
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= todo.len() {
                        break;
                    }
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
    let mut verdicts = Vec::new();
    for (_, r) in results {
        verdicts.push(r?);
    }
    let verified_at = now_text();
    let count = |s: &str| verdicts.iter().filter(|v| v.status == s).count() as i64;
    let (proven, refuted, unknown) = (count("proven"), count("refuted"), count("unknown"));
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let command = format!(
        "verify-rules{}{}{}",
        only.map_or(String::new(), |n| format!(" --rule {n}")),
        if jobs > 1 {
            format!(" --jobs {jobs}")
        } else {
            String::new()
        },
        if force { " --force" } else { "" }
    );
    db.transaction(|tx| {
        for v in &verdicts {
            let r = rules.iter().find(|r| r.name == v.name).expect("verdicts are for loaded rules");
            let lanes = v.lanes_proven.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            tx.execute(
                "UPDATE rules SET status = ?2, lanes_proven = ?3, types_proven = ?4, counterexample = ?5,
                 solver_ms = ?6, verified_at = ?7, rule_hash = ?8 WHERE name = ?1",
                params![
                    v.name,
                    v.status,
                    lanes,
                    v.types_proven.join(" "),
                    v.counterexample,
                    (v.solver_ms * 10.0).round() / 10.0,
                    verified_at,
                    rule_hash(r, &macros)
                ],
            )?;
        }
        tx.execute(
            "INSERT INTO verification_runs(started_at, finished_at, command, proven, refuted, unknown, wall_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![started_at, verified_at, command, proven, refuted, unknown, wall_ms.round()],
        )?;
        Ok(())
    })?;
    db.export_tables(&layout.tables, &["rules", "verification_runs"])?;
    #[derive(Serialize)]
    struct Report<'a> {
        rules: &'a [RuleVerdict],
        skipped: usize,
        proven: i64,
        refuted: i64,
        unknown: i64,
        wall_ms: f64,
    }
    if json {
        let rep = Report {
            rules: &verdicts,
            skipped,
            proven,
            refuted,
            unknown,
            wall_ms,
        };
        println!("{}", serde_json::to_string_pretty(&rep).unwrap_or_default());
    } else {
        let rows: Vec<Vec<String>> = verdicts
            .iter()
            .map(|v| {
                vec![
                    v.name.clone(),
                    v.status.clone(),
                    v.types_proven.join(" "),
                    v.lanes_proven
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                    format!("{:.0}", v.solver_ms),
                ]
            })
            .collect();
        if !rows.is_empty() {
            print!(
                "{}",
                render_table(&["rule", "status", "types", "lanes", "solver ms"], &rows)
            );
        }
        for v in verdicts.iter().filter(|v| v.status != "proven") {
            println!(
                "{} {}: {}",
                v.name,
                v.status,
                v.counterexample.as_deref().unwrap_or("")
            );
        }
        println!(
            "{proven} proven, {refuted} refuted, {unknown} unknown, {skipped} already proven (skipped) in {:.1} s",
            wall_ms / 1000.0
        );
    }
    Ok(if refuted > 0 {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}
