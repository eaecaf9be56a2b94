//! Validation results in the database (`validation_results`, keyed by semantics hash and
//! instruction name) and their committed CSV export.
//!
//! A row is only rewritten when its ISA, input count, status or detail change, so re-running an
//! unchanged validation leaves `validated_at` (a date) and the exported CSV byte-identical.

use crate::database::Database;
use crate::error::Result;
use crate::spec::Isa;
use crate::words::text_enum;
use rusqlite::params;
use std::collections::{HashMap, HashSet};
use std::path::Path;

text_enum! {
    /// The outcome of running one instruction for real.
    pub enum ValidationStatus("validation status") {
        /// Every lane of every input agreed with the interpreter.
        Validated = "validated",
        /// Some lane differed.
        Mismatch = "mismatch",
        /// Not run: no way to call it from C, or this machine lacks a tool or feature.
        Skipped = "skipped",
    }
}

/// One row of `validation_results`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub sem_hash: String,
    pub instruction_name: String,
    pub isa: Isa,
    pub inputs: i64,
    pub status: ValidationStatus,
    pub detail: String,
    pub validated_at: String,
}

impl Row {
    /// Same outcome, ignoring the date.
    fn same_outcome(&self, other: &Row) -> bool {
        self.isa == other.isa
            && self.inputs == other.inputs
            && self.status == other.status
            && self.detail == other.detail
    }
}

/// All rows, by (sem_hash, instruction_name).
pub fn load(db: &Database) -> Result<HashMap<(String, String), Row>> {
    let mut stmt = db.conn().prepare(
        "SELECT sem_hash, instruction_name, isa, inputs, status, detail, validated_at FROM validation_results",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Row {
            sem_hash: r.get(0)?,
            instruction_name: r.get(1)?,
            isa: r.get(2)?,
            inputs: r.get(3)?,
            status: r.get(4)?,
            detail: r.get(5)?,
            validated_at: r.get(6)?,
        })
    })?;
    let mut out = HashMap::new();
    for row in rows {
        let row = row?;
        out.insert((row.sem_hash.clone(), row.instruction_name.clone()), row);
    }
    Ok(out)
}

/// What to remove as stale before saving.
#[derive(Debug, Default)]
pub struct Scope {
    /// Instructions validated now: their rows under another semantics hash go.
    pub names: HashMap<String, String>,
    /// ISAs validated in full, with every instruction name they still have: rows of these ISAs
    /// for other names go.
    pub full_isas: HashMap<Isa, HashSet<String>>,
}

/// Writes `rows` (keeping a row's date when its outcome is unchanged) and removes stale rows, in
/// one transaction. Returns the number of rows inserted, changed or deleted.
pub fn save(db: &mut Database, rows: &[Row], scope: &Scope) -> Result<usize> {
    let existing = load(db)?;
    db.transaction(|tx| {
        let mut changed = 0;
        let mut del = tx.prepare("DELETE FROM validation_results WHERE sem_hash = ?1 AND instruction_name = ?2")?;
        for (key, row) in &existing {
            let stale_hash = scope.names.get(&row.instruction_name).is_some_and(|h| *h != row.sem_hash);
            let gone = scope.full_isas.get(&row.isa).is_some_and(|names| !names.contains(&row.instruction_name));
            if stale_hash || gone {
                changed += del.execute(params![key.0, key.1])?;
            }
        }
        let mut put = tx.prepare(
            "INSERT OR REPLACE INTO validation_results
             (sem_hash, instruction_name, isa, inputs, status, detail, validated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for row in rows {
            let key = (row.sem_hash.clone(), row.instruction_name.clone());
            if existing.get(&key).is_some_and(|old| old.same_outcome(row)) {
                continue;
            }
            put.execute(params![
                row.sem_hash,
                row.instruction_name,
                row.isa,
                row.inputs,
                row.status,
                row.detail,
                row.validated_at
            ])?;
            changed += 1;
        }
        Ok(changed)
    })
}

/// Writes `rules.db/validation_results.csv` (or into `dir`).
pub fn export(db: &Database, dir: &Path) -> Result<()> {
    db.export_tables(dir, &["validation_results"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(hash: &str, name: &str, status: ValidationStatus, date: &str) -> Row {
        Row {
            sem_hash: hash.into(),
            instruction_name: name.into(),
            isa: Isa::X86,
            inputs: 24,
            status,
            detail: String::new(),
            validated_at: date.into(),
        }
    }

    #[test]
    fn unchanged_rows_keep_their_date_and_stale_rows_go() {
        let mut db = Database::open_in_memory().unwrap();
        save(
            &mut db,
            &[
                row("h1", "a", ValidationStatus::Validated, "2020-01-01"),
                row("h1", "b", ValidationStatus::Validated, "2020-01-01"),
            ],
            &Scope::default(),
        )
        .unwrap();
        let mut scope = Scope::default();
        scope.names.insert("a".into(), "h2".into());
        scope
            .full_isas
            .insert(Isa::X86, ["a".to_string(), "c".to_string()].into());
        let n = save(
            &mut db,
            &[
                row("h2", "a", ValidationStatus::Validated, "2021-01-01"),
                row("h3", "c", ValidationStatus::Mismatch, "2021-01-01"),
            ],
            &scope,
        )
        .unwrap();
        assert_eq!(n, 4); // two deleted (old a, vanished b), two written
        let all = load(&db).unwrap();
        assert_eq!(all.len(), 2);
        let n = save(
            &mut db,
            &[row("h2", "a", ValidationStatus::Validated, "2022-02-02")],
            &scope,
        )
        .unwrap();
        assert_eq!(n, 0);
        assert_eq!(
            load(&db).unwrap()[&("h2".into(), "a".into())].validated_at,
            "2021-01-01"
        );
    }
}
