//! The rules in the database: the hand-written rules written into the `rules` table at build
//! time (keeping the verification record of an unchanged rule), rules read back by status, the
//! synthesized rules (`isadb synth`) read back as rule lines, and verification verdicts recorded.

use super::load::{elaborate, load_rules, rule_hash, rule_macros, rule_types};
use super::syntax::{parse_rules, rule_body, Rule, RuleKind};
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
    rules_where(db, "status = ?1 ORDER BY id", [status])
}

/// The synthesized rules (`isadb synth`) stored in the `rules` table, in name order, each parsed
/// from its rule line: the text its rule hash covers, as for a hand-written rule. The kernel
/// rules of the DSP dialect (`synth --dialect dsp`) are not rule lines and are left out.
pub fn synthesized_rules(db: &Database) -> Result<Vec<Rule>> {
    let mut out = Vec::new();
    let condition = "provenance = 'synthesized' AND coalesce(target, '') <> 'dsp' ORDER BY name";
    for r in rules_where(db, condition, [])? {
        let body = rule_body(
            &r.types,
            &r.lhs,
            &r.rhs,
            r.predicate.as_deref(),
            r.kind,
            r.target,
        );
        let line = format!("rule {}{body}", r.name);
        out.extend(parse_rules(&line, &r.file)?);
    }
    Ok(out)
}

/// The rows of the `rules` table matching an SQL condition (with its ordering), as rules
/// without a rule line.
fn rules_where(db: &Database, condition: &str, params: impl rusqlite::Params) -> Result<Vec<Rule>> {
    let mut stmt = db.conn().prepare(&format!(
        "SELECT name, lhs, rhs, predicate, kind, target FROM rules WHERE {condition}"
    ))?;
    let rows = stmt.query_map(params, |r| {
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
            let lhs = lhs_column(r);
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

/// A rule's `lhs` column: a polymorphic rule's types go in front (`for T in u8 u16: LHS`).
pub fn lhs_column(rule: &Rule) -> String {
    if rule.types.is_empty() {
        rule.lhs.clone()
    } else {
        let types: Vec<&str> = rule.types.iter().map(|t| t.name()).collect();
        format!("{TYPES_PREFIX}{}{TYPES_END}{}", types.join(" "), rule.lhs)
    }
}

/// The status of the stored rule `name` if its hash is still `hash`, with the solver time its
/// last verdict took (ms; 0 where none is recorded).
pub fn stored_status(db: &Database, name: &str, hash: &str) -> Result<Option<(RuleStatus, f64)>> {
    use rusqlite::OptionalExtension;
    Ok(db
        .conn()
        .query_row(
            "SELECT status, COALESCE(solver_ms, 0) FROM rules WHERE name = ?1 AND rule_hash = ?2",
            params![name, hash],
            |row| Ok((row.get(0)?, row.get(1)?)),
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
