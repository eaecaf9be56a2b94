//! The rules in the database: the hand-written rules written into the `rules` table at build
//! time (keeping the verification record of an unchanged rule), rules read back by status, and
//! verification verdicts recorded.

use super::load::{elaborate, load_rules, rule_hash, rule_macros, rule_types};
use super::syntax::{Rule, RuleKind};
use super::verdict::{RuleStatus, RuleVerdict};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::{Elem, Macros};
use crate::spec::Isa;
use rusqlite::params;
use std::collections::HashMap;
use std::path::Path;

/// How a polymorphic rule's types are stored in front of its `lhs` column: `for T in u8 u16: LHS`.
const TYPES_PREFIX: &str = "for T in ";
const TYPES_END: &str = ": ";

/// The rules stored in the `rules` table with this verification status, in id order.
pub fn stored_rules(db: &Database, status: RuleStatus) -> Result<Vec<Rule>> {
    let mut stmt = db.conn().prepare(
        "SELECT name, lhs, rhs, predicate, kind, target FROM rules WHERE status = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([status], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, RuleKind>(4)?,
            r.get::<_, Option<Isa>>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (name, stored_lhs, rhs, predicate, kind, target) = row?;
        let bad = |what: String| Error::data("rules", format!("rule {name}: {what}"));
        let (types, lhs) = match stored_lhs.strip_prefix(TYPES_PREFIX) {
            Some(rest) => {
                let (types, lhs) = rest
                    .split_once(TYPES_END)
                    .ok_or_else(|| bad(format!("lhs {stored_lhs:?} has no '{TYPES_END}'")))?;
                let types = types
                    .split_whitespace()
                    .map(|t| Elem::parse(t).ok_or_else(|| bad(format!("unknown type {t}"))))
                    .collect::<Result<Vec<_>>>()?;
                (types, lhs.to_string())
            }
            None => (vec![], stored_lhs.clone()),
        };
        out.push(Rule {
            types,
            lhs,
            rhs,
            predicate: predicate.filter(|p| !p.is_empty()),
            kind,
            target,
            text: String::new(),
            file: format!("rules table, rule {name}"),
            line: 1,
            lhs_col: 1,
            rhs_col: 1,
            pred_col: 1,
            name,
        });
    }
    Ok(out)
}

/// Checks every rule elaborates at every type, then writes them into the `rules` table, keeping
/// the verification fields of rows imported from `rules.db/rules.csv` with the same rule hash.
/// Called by `db build` after the committed tables are imported.
pub fn sync_rules(db: &mut Database, specs_dir: &Path, spec_macros: &Macros) -> Result<usize> {
    let rules = load_rules(specs_dir)?;
    let macros = rule_macros(spec_macros)?;
    let mut hashes = Vec::with_capacity(rules.len());
    for r in &rules {
        for t in rule_types(r) {
            elaborate(r, t, 4, &macros)?;
        }
        hashes.push(rule_hash(r, &macros));
    }
    db.transaction(|tx| {
        let mut kept: HashMap<String, String> = HashMap::new();
        {
            let mut stmt = tx.prepare("SELECT name, rule_hash FROM rules WHERE provenance = 'hand-written' AND coalesce(target, '') <> 'dsp'")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (n, h) = row?;
                kept.insert(n, h);
            }
        }
        for (name, hash) in &kept {
            let current = rules.iter().zip(&hashes).find(|(r, _)| &r.name == name).map(|(_, h)| h);
            if current != Some(hash) {
                tx.execute("DELETE FROM rules WHERE name = ?1", [name])?;
            }
        }
        for (r, h) in rules.iter().zip(&hashes) {
            let types = r.types.iter().map(|t| t.name()).collect::<Vec<_>>().join(" ");
            let lhs = if types.is_empty() { r.lhs.clone() } else { format!("{TYPES_PREFIX}{types}{TYPES_END}{}", r.lhs) };
            tx.execute(
                "INSERT INTO rules(name, lhs, rhs, predicate, kind, target, provenance, rule_hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'hand-written', ?7)
                 ON CONFLICT(name) DO UPDATE SET lhs = ?2, rhs = ?3, predicate = ?4, kind = ?5, target = ?6",
                params![r.name, lhs, r.rhs, r.predicate, r.kind, r.target, h],
            )?;
        }
        Ok(rules.len())
    })
}

/// The status of the stored rule `name` if its hash is still `hash`.
pub fn stored_status(db: &Database, name: &str, hash: &str) -> Result<Option<RuleStatus>> {
    use rusqlite::OptionalExtension;
    Ok(db
        .conn()
        .query_row(
            "SELECT status FROM rules WHERE name = ?1 AND rule_hash = ?2",
            params![name, hash],
            |row| row.get(0),
        )
        .optional()?)
}

/// One `verify-rules` run as recorded: when, how it was asked for and its counts.
pub struct Run<'a> {
    pub started_at: &'a str,
    pub finished_at: &'a str,
    pub command: &'a str,
    pub wall_ms: f64,
}

/// Records the verdicts (with each rule's current hash) and one `verification_runs` row, in one
/// transaction.
pub fn record_verdicts(
    db: &mut Database,
    verdicts: &[(RuleVerdict, String)],
    run: &Run,
) -> Result<()> {
    let count = |s: RuleStatus| verdicts.iter().filter(|(v, _)| v.status == s).count() as i64;
    db.transaction(|tx| {
        for (v, hash) in verdicts {
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
                    run.finished_at,
                    hash
                ],
            )?;
        }
        tx.execute(
            "INSERT INTO verification_runs(started_at, finished_at, command, proven, refuted, unknown, wall_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run.started_at,
                run.finished_at,
                run.command,
                count(RuleStatus::Proven),
                count(RuleStatus::Refuted),
                count(RuleStatus::Unknown),
                run.wall_ms.round()
            ],
        )?;
        Ok(())
    })
}
