//! Keeps the `implements` facts current at build time: cached matches are reused when the
//! instruction's semantics and the idiom catalogue are unchanged; everything else is matched
//! again, on every core.

use super::fact::{Fact, FactStatus};
use super::matcher::Matcher;
use super::store;
use crate::database::Database;
use crate::error::Result;
use crate::ir::sexpr::{SExpr, SKind};
use crate::spec::load::Idiom;
use crate::spec::{hash_text, SpecSet};
use std::collections::BTreeMap;

/// Part of every idiom hash: bumped when the matcher records more per fact or decides matches
/// differently, so the cache is matched again.
const MATCHER_VERSION: &str = "operands-v7-clamped-operands";

/// The hash of each idiom's definition together with every macro it uses (transitively), so
/// a change to a shared macro invalidates exactly the idioms built on it.
pub fn idiom_hashes(specs: &SpecSet) -> BTreeMap<String, String> {
    specs
        .idioms
        .iter()
        .map(|idiom| {
            let mut used: Vec<&str> = vec![idiom.name.as_str()];
            let mut i = 0;
            while i < used.len() {
                if let Some(m) = specs.macros.map.get(used[i]) {
                    let mut syms = Vec::new();
                    symbols(&m.body, &mut syms);
                    for s in syms {
                        if let Some((name, _)) = specs.macros.map.get_key_value(s) {
                            if !used.contains(&name.as_str()) {
                                used.push(name);
                            }
                        }
                    }
                }
                i += 1;
            }
            used[1..].sort();
            let mut text = format!(
                "{MATCHER_VERSION} {:?} {:?} {:?}\n",
                idiom.meta, idiom.condition, idiom.aliases
            );
            for n in used {
                let m = &specs.macros.map[n];
                text += &format!("{} ({}) {}\n", m.name, m.params.join(" "), m.body);
            }
            (idiom.name.clone(), hash_text(&text))
        })
        .collect()
}

/// One hash for a whole catalogue of idiom hashes.
pub fn catalogue_hash(idioms: &BTreeMap<String, String>) -> String {
    hash_text(
        &idioms
            .iter()
            .map(|(k, v)| format!("{k} {v}\n"))
            .collect::<String>(),
    )
}

fn symbols<'a>(s: &'a SExpr, out: &mut Vec<&'a str>) {
    match &s.kind {
        SKind::Sym(x) => out.push(x),
        SKind::List(items) => items.iter().for_each(|i| symbols(i, out)),
        _ => {}
    }
}

/// How much matching a refresh did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Refresh {
    /// Instruction-idiom pairs taken from the cache, and matched anew.
    pub reused: usize,
    pub matched: usize,
    pub facts: usize,
}

/// Work for one instruction: the idioms it still has to be matched against.
struct Job {
    instruction: usize,
    idioms: Vec<String>,
}

/// The facts found for the instruction with this index.
type Matched = (usize, Vec<Fact>);

/// Matches the jobs on every core. Specs hold shared (non-Send) trees, so each worker thread
/// reloads them from their directory and matches its share.
fn match_parallel(specs: &SpecSet, jobs: &[Job]) -> Result<Vec<Vec<Fact>>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    let run = |local: &SpecSet, share: &[&Job]| -> Result<Vec<Matched>> {
        let mut matcher = Matcher::new(local);
        share
            .iter()
            .map(|job| {
                let idioms: Vec<&Idiom> = local
                    .idioms
                    .iter()
                    .filter(|d| job.idioms.contains(&d.name))
                    .collect();
                Ok((
                    job.instruction,
                    matcher.facts_for(&local.instructions[job.instruction], &idioms)?,
                ))
            })
            .collect()
    };
    let mut results: Vec<Matched> = match specs.dir.clone() {
        Some(dir) if workers > 1 => {
            let parts: Vec<Result<Vec<Matched>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|w| {
                        let dir = dir.clone();
                        let share: Vec<&Job> = jobs.iter().skip(w).step_by(workers).collect();
                        scope.spawn(move || run(&crate::spec::load_dir(&dir)?, &share))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("matcher thread"))
                    .collect()
            });
            let mut all = Vec::new();
            for p in parts {
                all.extend(p?);
            }
            all
        }
        _ => run(specs, &jobs.iter().collect::<Vec<_>>())?,
    };
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, f)| f).collect())
}

/// Brings `idiom_matches` up to date (when `rematch`: pairs whose instruction or idiom changed
/// are matched again, and with `retry_unknown` the pairs holding a fact z3 left unknown;
/// otherwise only what the cache holds is used), then rebuilds `implements`.
pub fn refresh(
    db: &mut Database,
    specs: &SpecSet,
    rematch: bool,
    retry_unknown: bool,
) -> Result<Refresh> {
    let now = idiom_hashes(specs);
    let catalogue = catalogue_hash(&now);
    let versions = store::catalogue_versions(db)?;
    let cached = store::cached_matches(db)?;
    // For every instruction: the facts still valid, and the idioms to match again.
    let mut keep: Vec<Vec<Fact>> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut stats = Refresh::default();
    for (i, ins) in specs.instructions.iter().enumerate() {
        let rows = cached.get(&ins.name).map(Vec::as_slice).unwrap_or_default();
        let old = rows
            .first()
            .filter(|c| c.sem_hash == ins.sem_hash)
            .and_then(|c| versions.get(&c.catalogue));
        let undecided: Vec<&str> = rows
            .iter()
            .filter_map(|c| c.fact.as_ref())
            .filter(|f| retry_unknown && f.status == FactStatus::Unknown)
            .map(|f| f.idiom.as_str())
            .collect();
        let unchanged =
            |d: &str| old.is_some_and(|o| o.get(d) == now.get(d)) && !undecided.contains(&d);
        keep.push(
            rows.iter()
                .filter(|c| c.sem_hash == ins.sem_hash)
                .filter_map(|c| c.fact.clone())
                .filter(|f| unchanged(&f.idiom))
                .collect(),
        );
        let stale: Vec<String> = now.keys().filter(|d| !unchanged(d)).cloned().collect();
        stats.reused += now.len() - stale.len();
        if rematch && !stale.is_empty() {
            stats.matched += stale.len();
            jobs.push(Job {
                instruction: i,
                idioms: stale,
            });
        }
    }
    for (job, facts) in jobs.iter().zip(match_parallel(specs, &jobs)?) {
        keep[job.instruction].extend(facts);
    }
    stats.facts = store::write(db, specs, &keep, (rematch).then_some((&catalogue, &now)))?;
    Ok(stats)
}
