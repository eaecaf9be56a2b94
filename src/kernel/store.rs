//! The kernel rules in the database: `specs/dsp/*.rules` synced into the `rules` table (target
//! `dsp`, kind and phase from Isaria's assignment under the tuned alpha and beta, verification
//! kept while a rule's hash is unchanged), the proven rules read back by phase, and the
//! `kernel_tuning` rows.

use super::phase::{assign, cost_point, Phase};
use super::rule::{self, KernelRule};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::spec::hash_text;
use rusqlite::{params, OptionalExtension};
use std::path::Path;

/// The `target` column of the kernel rules.
pub const RULES_TARGET: &str = "dsp";

/// Isaria's phase boundaries in force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    pub alpha: f64,
    pub beta: f64,
}

pub fn rule_hash(r: &KernelRule) -> String {
    hash_text(&format!(
        "kernel rule {} {} {}",
        r.name, r.lhs_text, r.rhs_text
    ))
}

/// A hash of the whole rule set (what a tuning was made for).
pub fn rules_hash(rules: &[KernelRule]) -> String {
    hash_text(&rules.iter().map(rule_hash).collect::<Vec<_>>().join(" "))
}

/// The newest tuning, if any.
pub fn tuning(db: &Database) -> Result<Option<Tuning>> {
    Ok(db
        .conn()
        .query_row(
            "SELECT alpha, beta FROM kernel_tuning ORDER BY id DESC LIMIT 1",
            [],
            |r| {
                Ok(Tuning {
                    alpha: r.get(0)?,
                    beta: r.get(1)?,
                })
            },
        )
        .optional()?)
}

/// Records a tuning.
pub fn record_tuning(
    db: &mut Database,
    t: Tuning,
    score: f64,
    candidates: usize,
    kernels: &str,
    rules_hash: &str,
) -> Result<()> {
    db.transaction(|tx| {
        tx.execute(
            "INSERT INTO kernel_tuning(alpha, beta, cost_model, score, candidates, kernels, rules_hash, tuned_at)
             VALUES (?1, ?2, 'diospyros', ?3, ?4, ?5, ?6, ?7)",
            params![t.alpha, t.beta, score, candidates as i64, kernels, rules_hash, crate::clock::now()],
        )?;
        Ok(())
    })
}

/// Writes the rules files into the `rules` table: new and changed rules unverified, kinds and
/// phases from `tuning` (rules without one get kind `expand` and no phase until tuned), rules
/// gone from the files deleted.
pub fn sync(db: &mut Database, specs: &Path, tuning: Option<Tuning>) -> Result<Vec<KernelRule>> {
    let rules = rule::load(specs)?;
    db.transaction(|tx| {
        let stored: Vec<(String, String)> = {
            let mut stmt = tx.prepare("SELECT name, rule_hash FROM rules WHERE target = ?1")?;
            let rows = stmt.query_map([RULES_TARGET], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for (name, hash) in &stored {
            let current = rules.iter().find(|r| &r.name == name).map(rule_hash);
            if current.as_ref() != Some(hash) {
                tx.execute("DELETE FROM rules WHERE name = ?1", [name])?;
            }
        }
        for r in &rules {
            let (kind, phase) = match tuning {
                Some(t) => {
                    let p = assign(cost_point(r), t.alpha, t.beta);
                    (p.name(), Some(p.number()))
                }
                None => ("expand", None),
            };
            tx.execute(
                "INSERT INTO rules(name, lhs, rhs, kind, phase, target, provenance, rule_hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT(name) DO UPDATE SET kind = ?4, phase = ?5",
                params![
                    r.name,
                    r.lhs_text,
                    r.rhs_text,
                    kind,
                    phase,
                    RULES_TARGET,
                    r.provenance,
                    rule_hash(r)
                ],
            )
            .map_err(|e| Error::data("rules", format!("kernel rule {}: {e}", r.name)))?;
        }
        Ok(())
    })?;
    Ok(rules)
}

/// The proven kernel rules with their phases, read back from the table (not the files): a rule
/// that is not proven is never used.
pub fn phased_rules(db: &Database) -> Result<Vec<(KernelRule, Phase)>> {
    let rows = db.text_rows(&format!(
        "SELECT name, lhs, rhs, kind, provenance FROM rules
         WHERE target = '{RULES_TARGET}' AND status = 'proven' AND phase IS NOT NULL ORDER BY id"
    ))?;
    let mut out = Vec::new();
    for row in rows {
        let bad = |m: String| Error::data("rules", format!("kernel rule {}: {m}", row[0]));
        let lhs =
            rule::pattern(&read_one(&row[1], "rules table").map_err(|e| bad(e.to_string()))?)?;
        let rhs =
            rule::pattern(&read_one(&row[2], "rules table").map_err(|e| bad(e.to_string()))?)?;
        let phase = Phase::from_name(&row[3]).ok_or_else(|| bad(format!("kind {}", row[3])))?;
        out.push((
            KernelRule {
                name: row[0].clone(),
                lhs,
                rhs,
                lhs_text: row[1].clone(),
                rhs_text: row[2].clone(),
                provenance: row[4].clone(),
                loc: Default::default(),
            },
            phase,
        ));
    }
    Ok(out)
}
