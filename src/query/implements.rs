//! Keeps the `implements` facts current: cached matches are reused when the instruction's
//! semantics and the idiom catalogue are unchanged; everything else is matched again.

use super::matcher::{Fact, Matcher};
use crate::database::Database;
use crate::error::Result;
use crate::spec::{hash_text, SpecSet};
use rusqlite::params;
use std::collections::HashMap;

/// Hash of the idioms and of every macro they use (transitively): a change to any of them
/// invalidates all cached matches; ISA-specific macros do not.
pub fn catalogue_hash(specs: &SpecSet) -> String {
    let mut used: Vec<&str> = specs.idioms.iter().map(|i| i.name.as_str()).collect();
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
    used.sort();
    let text: String = used
        .iter()
        .map(|n| {
            let m = &specs.macros.map[*n];
            format!("{} ({}) {}\n", m.name, m.params.join(" "), m.body)
        })
        .collect();
    let idioms: String = specs
        .idioms
        .iter()
        .map(|i| format!("{:?} {:?} {:?}\n", i.meta, i.condition, i.aliases))
        .collect();
    hash_text(&(text + &idioms))
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
    pub reused: usize,
    pub matched: usize,
    pub facts: usize,
}

/// Matches the given instructions on every core. Specs hold shared (non-Send) trees, so each
/// worker thread reloads them from their directory and matches its share.
fn match_parallel(specs: &SpecSet, which: &[usize]) -> Result<Vec<(String, String, Vec<Fact>)>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(which.len().max(1));
    let dir = specs.dir.clone();
    if workers <= 1 || dir.is_none() {
        let mut matcher = Matcher::new(specs);
        return which
            .iter()
            .map(|&i| one(&mut matcher, &specs.instructions[i]))
            .collect();
    }
    let dir = dir.unwrap();
    let results: Vec<Result<Vec<_>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let dir = dir.clone();
                let share: Vec<usize> = which.iter().copied().skip(w).step_by(workers).collect();
                scope.spawn(move || -> Result<Vec<_>> {
                    let local = crate::spec::load_dir(&dir)?;
                    let mut matcher = Matcher::new(&local);
                    share
                        .iter()
                        .map(|&i| one(&mut matcher, &local.instructions[i]))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("matcher thread"))
            .collect()
    });
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

fn one(
    matcher: &mut Matcher,
    ins: &crate::spec::Instruction,
) -> Result<(String, String, Vec<Fact>)> {
    Ok((ins.name.clone(), ins.sem_hash.clone(), matcher.facts(ins)?))
}

/// Re-matches stale instructions into `idiom_matches` (when `rematch`; otherwise stale ones are
/// left out until the next full build), then rebuilds `implements` from it.
pub fn refresh(db: &mut Database, specs: &SpecSet, rematch: bool) -> Result<Refresh> {
    let catalogue = catalogue_hash(specs);
    let mut cached: HashMap<String, String> = HashMap::new();
    {
        let mut stmt = db.conn().prepare(
            "SELECT DISTINCT instruction, sem_hash FROM idiom_matches WHERE catalogue_hash = ?1",
        )?;
        for row in stmt.query_map([&catalogue], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })? {
            let (name, hash) = row?;
            cached.insert(name, hash);
        }
    }
    let stale: Vec<usize> = (0..specs.instructions.len())
        .filter(|&i| {
            rematch
                && cached.get(&specs.instructions[i].name) != Some(&specs.instructions[i].sem_hash)
        })
        .collect();
    let mut stats = Refresh {
        reused: cached.len(),
        matched: stale.len(),
        facts: 0,
    };
    let fresh = match_parallel(specs, &stale)?;
    let names: Vec<&str> = specs.instructions.iter().map(|i| i.name.as_str()).collect();
    db.transaction(|tx| {
        tx.execute_batch("CREATE TEMP TABLE IF NOT EXISTS live(name TEXT PRIMARY KEY); DELETE FROM live;")?;
        for n in &names {
            tx.execute("INSERT OR IGNORE INTO live(name) VALUES (?1)", [n])?;
        }
        if rematch {
            tx.execute("DELETE FROM idiom_matches WHERE instruction NOT IN (SELECT name FROM live) OR catalogue_hash != ?1", [&catalogue])?;
        }
        for (name, hash, facts) in &fresh {
            tx.execute("DELETE FROM idiom_matches WHERE instruction = ?1", [name])?;
            let mut insert = tx.prepare(
                "INSERT OR IGNORE INTO idiom_matches(instruction, sem_hash, catalogue_hash, idiom, binding, status, lanes, solver_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            if facts.is_empty() {
                insert.execute(params![name, hash, catalogue, "", "", "none", 0, 0.0])?;
            }
            for f in facts {
                insert.execute(params![name, hash, catalogue, f.idiom, f.binding, f.status, f.lanes, (f.ms * 10.0).round() / 10.0])?;
            }
        }
        tx.execute("DELETE FROM implements", [])?;
        stats.facts = tx.execute(
            "INSERT INTO implements(idiom_id, instruction_id, binding, status, sem_hash)
             SELECT d.id, i.id, m.binding, m.status, m.sem_hash FROM idiom_matches m
             JOIN idioms d ON d.name = m.idiom JOIN instructions i ON i.name = m.instruction AND i.sem_hash = m.sem_hash
             WHERE m.catalogue_hash = ?1",
            [&catalogue],
        )?;
        Ok(())
    })?;
    Ok(stats)
}
