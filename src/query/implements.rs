//! Keeps the `implements` facts current: cached matches are reused when the instruction's
//! semantics and the idiom catalogue are unchanged; everything else is matched again.

use super::matcher::{Fact, Matcher};
use crate::database::Database;
use crate::error::Result;
use crate::spec::load::Idiom;
use crate::spec::{hash_text, SpecSet};
use rusqlite::params;
use std::collections::{BTreeMap, HashMap};

/// Part of every idiom hash: bumped when the matcher records more per fact or decides matches
/// differently, so the cache is matched again.
const MATCHER_VERSION: &str = "operands-v5-full-width-meta-30s";

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

fn symbols<'a>(s: &'a crate::ir::sexpr::SExpr, out: &mut Vec<&'a str>) {
    match &s.kind {
        crate::ir::sexpr::SKind::Sym(x) => out.push(x),
        crate::ir::sexpr::SKind::List(items) => items.iter().for_each(|i| symbols(i, out)),
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

/// A cached row of `idiom_matches`.
struct Cached {
    sem_hash: String,
    catalogue: String,
    idiom: String,
    fact: Option<Fact>,
}

/// Brings `idiom_matches` up to date (when `rematch`: pairs whose instruction or idiom changed
/// are matched again; otherwise only what the cache holds is used), then rebuilds `implements`.
pub fn refresh(db: &mut Database, specs: &SpecSet, rematch: bool) -> Result<Refresh> {
    let now = idiom_hashes(specs);
    let catalogue = catalogue_hash(&now);
    let mut versions: HashMap<String, HashMap<String, String>> = HashMap::new();
    for t in db.text_rows("SELECT catalogue_hash, idiom, idiom_hash FROM idiom_catalogue")? {
        versions
            .entry(t[0].clone())
            .or_default()
            .insert(t[1].clone(), t[2].clone());
    }
    let mut cached: HashMap<String, Vec<Cached>> = HashMap::new();
    {
        let mut stmt = db.conn().prepare(
            "SELECT instruction, sem_hash, catalogue_hash, idiom, binding, status, lanes, solver_ms, operands, meta FROM idiom_matches",
        )?;
        let rows = stmt.query_map([], |r| {
            let (name, idiom): (String, String) = (r.get(0)?, r.get(3)?);
            let fact = (!idiom.is_empty()).then(|| -> rusqlite::Result<Fact> {
                Ok(Fact {
                    idiom: idiom.clone(),
                    instruction: name.clone(),
                    binding: r.get(4)?,
                    operands: r.get(8)?,
                    meta: r.get(9)?,
                    status: r.get(5)?,
                    lanes: r.get(6)?,
                    ms: r.get(7)?,
                })
            });
            Ok((
                name,
                Cached {
                    sem_hash: r.get(1)?,
                    catalogue: r.get(2)?,
                    idiom,
                    fact: fact.transpose()?,
                },
            ))
        })?;
        for row in rows {
            let (name, c) = row?;
            cached.entry(name).or_default().push(c);
        }
    }
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
        let unchanged = |d: &str| old.is_some_and(|o| o.get(d) == now.get(d));
        keep.push(
            rows.iter()
                .filter(|c| {
                    !c.idiom.is_empty() && c.sem_hash == ins.sem_hash && unchanged(&c.idiom)
                })
                .filter_map(|c| c.fact.clone())
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
    db.transaction(|tx| {
        if rematch {
            tx.execute("DELETE FROM idiom_matches", [])?;
            tx.execute("DELETE FROM idiom_catalogue", [])?;
            let mut version = tx.prepare("INSERT INTO idiom_catalogue(catalogue_hash, idiom, idiom_hash) VALUES (?1, ?2, ?3)")?;
            for (d, h) in &now {
                version.execute(params![catalogue, d, h])?;
            }
            let mut insert = tx.prepare(
                "INSERT OR IGNORE INTO idiom_matches(instruction, sem_hash, catalogue_hash, idiom, binding, status, lanes, solver_ms, operands, meta)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (ins, facts) in specs.instructions.iter().zip(&keep) {
                if facts.is_empty() {
                    insert.execute(params![ins.name, ins.sem_hash, catalogue, "", "", "none", 0, 0.0, "", ""])?;
                }
                for f in facts {
                    let ms = (f.ms * 10.0).round() / 10.0;
                    insert.execute(params![ins.name, ins.sem_hash, catalogue, f.idiom, f.binding, f.status, f.lanes, ms, f.operands, f.meta])?;
                }
            }
        }
        tx.execute("DELETE FROM implements", [])?;
        let mut insert = tx.prepare(
            "INSERT OR IGNORE INTO implements(idiom_id, instruction_id, binding, status, sem_hash)
             SELECT d.id, i.id, ?3, ?4, i.sem_hash FROM idioms d, instructions i WHERE d.name = ?1 AND i.name = ?2",
        )?;
        for (ins, facts) in specs.instructions.iter().zip(&keep) {
            for f in facts {
                stats.facts += insert.execute(params![f.idiom, ins.name, f.binding, f.status])?;
            }
        }
        Ok(())
    })?;
    Ok(stats)
}
