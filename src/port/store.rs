//! `port_results`: one row per source and target, read to reuse and written after a run. The
//! only place its rows are read and written.

use crate::database::Database;
use crate::error::{Error, Result};
use rusqlite::params;
use serde::Serialize;
use std::collections::HashMap;

/// How a port ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Target instructions only, proven.
    Proven,
    /// Proven, with some operators computed lane by lane.
    Scalarized,
    /// No proven sequence.
    Failed,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Proven => "proven",
            Status::Scalarized => "scalarized",
            Status::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        [Status::Proven, Status::Scalarized, Status::Failed]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

/// One port.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The instruction with its immediates.
    pub source: String,
    #[allow(missing_docs)]
    pub target: String,
    #[allow(missing_docs)]
    pub instruction: String,
    /// The hash of what the port depends on.
    #[serde(skip)]
    pub input_hash: String,
    #[allow(missing_docs)]
    pub status: Status,
    /// The calls in order; the error when failed.
    pub sequence: Vec<String>,
    /// Instructions in the sequence.
    pub instructions: usize,
    #[allow(missing_docs)]
    pub cost: f64,
    /// `z3` or `same tree`; empty when failed.
    pub proof: String,
    #[allow(missing_docs)]
    pub prove_ms: f64,
}

const SEPARATOR: &str = "; ";

/// The stored rows for `target`, by source.
pub fn rows(db: &Database, target: &str) -> Result<HashMap<String, Row>> {
    let mut stmt = db.conn().prepare(
        "SELECT source, target, instruction, input_hash, status, sequence, instructions, cost,
         proof, prove_ms FROM port_results WHERE target = ?1",
    )?;
    let read = stmt.query_map([target], |r| {
        Ok((
            Row {
                source: r.get(0)?,
                target: r.get(1)?,
                instruction: r.get(2)?,
                input_hash: r.get(3)?,
                status: Status::Failed,
                sequence: r
                    .get::<_, String>(5)?
                    .split(SEPARATOR)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
                instructions: r.get::<_, i64>(6)? as usize,
                cost: r.get(7)?,
                proof: r.get(8)?,
                prove_ms: r.get(9)?,
            },
            r.get::<_, String>(4)?,
        ))
    })?;
    let mut out = HashMap::new();
    for row in read {
        let (mut row, status) = row?;
        row.status = Status::parse(&status).ok_or_else(|| {
            Error::data(
                "port_results",
                format!(
                    "{} on {}: bad status {status:?} (proven, scalarized or failed)",
                    row.source, row.target
                ),
            )
        })?;
        out.insert(row.source.clone(), row);
    }
    Ok(out)
}

/// Stores `rows`, replacing those of the same source and target, in one transaction.
pub fn write(db: &mut Database, rows: &[Row]) -> Result<()> {
    db.transaction(|tx| {
        let mut insert = tx.prepare(
            "INSERT OR REPLACE INTO port_results(source, target, instruction, input_hash, status,
             sequence, instructions, cost, proof, prove_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for r in rows {
            insert.execute(params![
                r.source,
                r.target,
                r.instruction,
                r.input_hash,
                r.status.name(),
                r.sequence.join(SEPARATOR),
                r.instructions as i64,
                r.cost,
                r.proof,
                r.prove_ms
            ])?;
        }
        Ok(())
    })
}
