//! Storing synthesized rules: each found rule becomes a rule line (the syntax of
//! `specs/rules/`), named by the hash of its text, and a `rules` row with provenance
//! `synthesized`, the run and search piece that found it, the reason for its kind and its
//! verification record; the pieces table keys each piece by the hash of what it read, so a
//! later run searches only the pieces whose inputs changed.

use super::Found;
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::Macros;
use crate::rules::load::rule_hash;
use crate::rules::store::lhs_column;
use crate::rules::syntax::{parse_rules, rule_body, Rule};
use crate::rules::verdict::RuleVerdict;
use crate::spec::{hash_text, Isa};
use rusqlite::params;
use std::collections::{BTreeSet, HashMap};

/// The rule line of a found rule for one ISA (None: every target), named by its kind and the
/// hash of the rest of the line.
pub fn rule_line(found: &Found, isa: Option<Isa>) -> String {
    let body = rule_body(
        &found.types,
        &found.lhs,
        &found.rhs,
        found.predicate.as_deref(),
        found.kind,
        isa,
    );
    let name = format!("syn_{}_{}", found.kind, &hash_text(&body)[..10]);
    format!("rule {name}{body}")
}

/// The rules of a found rule: one per ISA it is for, or one for every target.
pub fn rules_of(found: &Found) -> Result<Vec<Rule>> {
    let lines: Vec<String> = if found.isas.is_empty() {
        vec![rule_line(found, None)]
    } else {
        found
            .isas
            .iter()
            .map(|i| rule_line(found, Some(*i)))
            .collect()
    };
    let mut out = Vec::new();
    for line in lines {
        let mut parsed = parse_rules(&line, "synthesized")?;
        out.push(parsed.remove(0));
    }
    Ok(out)
}

/// One searched piece with its results.
pub struct PieceResult {
    pub piece: String,
    pub input_hash: String,
    pub params: String,
    pub candidates: usize,
    pub found: Vec<Found>,
    /// The rules of `found`, in order.
    pub rules: Vec<Rule>,
    pub wall_ms: f64,
}

/// A synthesis run, as the `synthesis_runs` row records it.
pub struct RunRecord {
    pub key: String,
    pub started_at: String,
    pub finished_at: String,
    pub targets: String,
    pub params: String,
    pub shard: Option<String>,
    pub wall_ms: f64,
}

/// The stored input hash of every piece.
pub fn piece_hashes(db: &Database) -> Result<HashMap<String, String>> {
    Ok(db
        .text_rows("SELECT piece, input_hash FROM synthesis_pieces")?
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect())
}

/// Writes a run: its row, its pieces (replacing earlier rows of the same pieces), their rules
/// (a rule another piece already stored is kept as it is) with their verification record, and
/// drops synthesized rules no piece lists any more. One transaction.
pub fn write_run(
    db: &mut Database,
    run: &RunRecord,
    pieces: &[PieceResult],
    verdicts: &HashMap<String, RuleVerdict>,
    macros: &Macros,
) -> Result<usize> {
    let found = verdicts.len();
    db.transaction(|tx| {
        tx.execute(
            "INSERT INTO synthesis_runs(started_at, finished_at, isa, params, rules_found, wall_ms, run_key, shard)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                run.started_at,
                run.finished_at,
                run.targets,
                run.params,
                found as i64,
                run.wall_ms.round(),
                run.key,
                run.shard
            ],
        )?;
        for p in pieces {
            let names: Vec<&str> = p.rules.iter().map(|r| r.name.as_str()).collect();
            tx.execute(
                "INSERT OR REPLACE INTO synthesis_pieces(piece, input_hash, synthesis_run, params, candidates, rules, wall_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    p.piece,
                    p.input_hash,
                    run.key,
                    p.params,
                    p.candidates as i64,
                    names.join(" "),
                    p.wall_ms.round()
                ],
            )?;
            for (rule, found) in p.rules.iter().zip(rule_sources(p)) {
                let v = verdicts.get(&rule.name).ok_or_else(|| {
                    Error::data("synthesis", format!("rule {} was not verified", rule.name))
                })?;
                let lanes: Vec<String> = v.lanes_proven.iter().map(u32::to_string).collect();
                tx.execute(
                    "INSERT INTO rules(name, lhs, rhs, predicate, kind, target, provenance, rule_hash, status,
                       lanes_proven, types_proven, counterexample, solver_ms, verified_at, synthesis_run, search, reason)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'synthesized', ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                     ON CONFLICT(name) DO NOTHING",
                    params![
                        rule.name,
                        lhs_column(rule),
                        rule.rhs,
                        rule.predicate,
                        rule.kind,
                        rule.target,
                        rule_hash(rule, macros),
                        v.status,
                        lanes.join(","),
                        v.types_proven.join(" "),
                        v.counterexample,
                        (v.solver_ms * 10.0).round() / 10.0,
                        run.finished_at,
                        run.key,
                        format!("{}: {}", p.piece, p.params),
                        found.reason
                    ],
                )?;
            }
        }
        drop_unlisted(tx)
    })?;
    Ok(found)
}

/// Drops the synthesized rules no search piece lists any more (a piece searched again lists
/// what it found now).
pub fn drop_unlisted(tx: &rusqlite::Transaction) -> Result<()> {
    let listed: BTreeSet<String> = {
        let mut stmt = tx.prepare("SELECT rules FROM synthesis_pieces")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut set = BTreeSet::new();
        for row in rows {
            set.extend(row?.split_whitespace().map(String::from));
        }
        set
    };
    let stored: Vec<String> = {
        let mut stmt = tx.prepare("SELECT name FROM rules WHERE provenance = 'synthesized'")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for name in stored.iter().filter(|n| !listed.contains(*n)) {
        tx.execute("DELETE FROM rules WHERE name = ?1", [name])?;
    }
    Ok(())
}

/// The found rule each of a piece's rules came from (a found rule for several ISAs gives
/// several rules).
fn rule_sources(p: &PieceResult) -> Vec<&Found> {
    p.found
        .iter()
        .flat_map(|f| std::iter::repeat_n(f, f.isas.len().max(1)))
        .collect()
}
