//! The idiom facts in the database: `idiom_matches` (every fact by instruction, semantics hash
//! and idiom catalogue, committed as CSV so unchanged instructions are not matched again),
//! `idiom_catalogue` (the idiom hashes of each catalogue) and `implements` (the current facts,
//! by row id, for the queries). The only place their text forms are read and written.

use super::fact::{Fact, MetaValues, Operands};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::spec::SpecSet;
use rusqlite::params;
use std::collections::{BTreeMap, HashMap};

/// A row of `idiom_matches`: the fact, or None for the row saying an instruction was matched
/// against the catalogue and implements none of it.
pub(super) struct Cached {
    pub sem_hash: String,
    pub catalogue: String,
    pub fact: Option<Fact>,
}

/// Idiom hashes by idiom, for every catalogue hash in `idiom_catalogue`.
pub(super) fn catalogue_versions(
    db: &Database,
) -> Result<HashMap<String, HashMap<String, String>>> {
    let mut versions: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut stmt = db
        .conn()
        .prepare("SELECT catalogue_hash, idiom, idiom_hash FROM idiom_catalogue")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    for row in rows {
        let (catalogue, idiom, hash): (String, String, String) = row?;
        versions.entry(catalogue).or_default().insert(idiom, hash);
    }
    Ok(versions)
}

/// Every row of `idiom_matches`, by instruction name.
pub(super) fn cached_matches(db: &Database) -> Result<HashMap<String, Vec<Cached>>> {
    let mut stmt = db.conn().prepare(
        "SELECT instruction, sem_hash, catalogue_hash, idiom, binding, status, lanes, solver_ms, operands, meta FROM idiom_matches",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Cached {
                sem_hash: r.get(1)?,
                catalogue: r.get(2)?,
                fact: None,
            },
            Stored {
                idiom: r.get(3)?,
                binding: r.get(4)?,
                status: r.get(5)?,
                lanes: r.get(6)?,
                ms: r.get(7)?,
                operands: r.get(8)?,
                meta: r.get(9)?,
            },
        ))
    })?;
    let mut cached: HashMap<String, Vec<Cached>> = HashMap::new();
    for row in rows {
        let (name, mut c, stored) = row?;
        if !stored.idiom.is_empty() {
            c.fact = Some(stored.fact(&name)?);
        }
        cached.entry(name).or_default().push(c);
    }
    Ok(cached)
}

/// The proven facts, ordered by instruction and idiom: what instruction selection lowers by.
pub fn proven_facts(db: &Database) -> Result<Vec<Fact>> {
    let mut stmt = db.conn().prepare(
        "SELECT instruction, idiom, binding, status, lanes, solver_ms, operands, meta FROM idiom_matches
         WHERE status = 'proven' ORDER BY instruction, idiom",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Stored {
                idiom: r.get(1)?,
                binding: r.get(2)?,
                status: r.get(3)?,
                lanes: r.get(4)?,
                ms: r.get(5)?,
                operands: r.get(6)?,
                meta: r.get(7)?,
            },
        ))
    })?;
    rows.map(|row| {
        let (name, stored) = row?;
        stored.fact(&name)
    })
    .collect()
}

/// A fact's columns as stored.
struct Stored {
    idiom: String,
    binding: String,
    status: String,
    lanes: u32,
    ms: f64,
    operands: String,
    meta: String,
}

impl Stored {
    fn fact(self, instruction: &str) -> Result<Fact> {
        let bad = |what: &str, text: &str| {
            Error::data(
                "idiom_matches",
                format!(
                    "{instruction} implements {}: bad {what} {text:?}",
                    self.idiom
                ),
            )
        };
        Ok(Fact {
            operands: Operands::parse(&self.operands)
                .ok_or_else(|| bad("operands", &self.operands))?,
            meta: MetaValues::parse(&self.meta).ok_or_else(|| bad("meta", &self.meta))?,
            status: self
                .status
                .parse()
                .map_err(|_| bad("status", &self.status))?,
            idiom: self.idiom,
            instruction: instruction.to_string(),
            binding: self.binding,
            lanes: self.lanes,
            ms: self.ms,
        })
    }
}

/// Writes the facts kept for each instruction of `specs` (in order): with `rematch` (the
/// catalogue hash and its idiom hashes) into `idiom_matches` and `idiom_catalogue`, replacing
/// them; always into `implements`. Returns the number of `implements` rows.
pub(super) fn write(
    db: &mut Database,
    specs: &SpecSet,
    keep: &[Vec<Fact>],
    rematch: Option<(&String, &BTreeMap<String, String>)>,
) -> Result<usize> {
    db.transaction(|tx| {
        if let Some((catalogue, now)) = rematch {
            tx.execute("DELETE FROM idiom_matches", [])?;
            tx.execute("DELETE FROM idiom_catalogue", [])?;
            let mut version = tx.prepare("INSERT INTO idiom_catalogue(catalogue_hash, idiom, idiom_hash) VALUES (?1, ?2, ?3)")?;
            for (d, h) in now {
                version.execute(params![catalogue, d, h])?;
            }
            let mut insert = tx.prepare(
                "INSERT OR IGNORE INTO idiom_matches(instruction, sem_hash, catalogue_hash, idiom, binding, status, lanes, solver_ms, operands, meta)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (ins, facts) in specs.instructions.iter().zip(keep) {
                if facts.is_empty() {
                    insert.execute(params![ins.name, ins.sem_hash, catalogue, "", "", "none", 0, 0.0, "", ""])?;
                }
                for f in facts {
                    let ms = (f.ms * 10.0).round() / 10.0;
                    insert.execute(params![
                        ins.name,
                        ins.sem_hash,
                        catalogue,
                        f.idiom,
                        f.binding,
                        f.status,
                        f.lanes,
                        ms,
                        f.operands.to_string(),
                        f.meta.to_string()
                    ])?;
                }
            }
        }
        tx.execute("DELETE FROM implements", [])?;
        let mut insert = tx.prepare(
            "INSERT OR IGNORE INTO implements(idiom_id, instruction_id, binding, status, sem_hash)
             SELECT d.id, i.id, ?3, ?4, i.sem_hash FROM idioms d, instructions i WHERE d.name = ?1 AND i.name = ?2",
        )?;
        let mut rows = 0;
        for (ins, facts) in specs.instructions.iter().zip(keep) {
            for f in facts {
                rows += insert.execute(params![f.idiom, ins.name, f.binding, f.status])?;
            }
        }
        Ok(rows)
    })
}
