//! The kernel rules in the database: `specs/dsp/*.rules` synced into the `rules` table (target
//! `dsp`, kind and phase from Isaria's assignment under the tuned alpha and beta, verification
//! kept while a rule's hash is unchanged) beside the rules `isadb synth --dialect dsp` stored,
//! the proven rules of a [`RuleSet`] read back by phase, and the `kernel_tuning` rows of each set.

use super::phase::{assign, cost_point, Phase};
use super::rule::{self, KernelRule};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::spec::hash_text;
use crate::words::text_enum;
use rusqlite::{params, OptionalExtension};
use std::path::Path;

/// The `target` column of the kernel rules.
pub const RULES_TARGET: &str = "dsp";

text_enum! {
    /// Which kernel rules a compilation uses: those of `specs/dsp/` (hand-written, or imported
    /// from Diospyros), or those rule synthesis found. Each set has its own alpha and beta.
    pub enum RuleSet("rule set") {
        /// The rules of `specs/dsp/`.
        Given = "given",
        /// The rules `isadb synth --dialect dsp` found.
        Synthesized = "synthesized",
    }
}

impl RuleSet {
    /// The SQL condition on a `rules` row of the set.
    fn condition(&self) -> String {
        let op = match self {
            RuleSet::Given => "<>",
            RuleSet::Synthesized => "=",
        };
        format!("target = '{RULES_TARGET}' AND provenance {op} 'synthesized'")
    }
}

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

/// The newest tuning of a rule set, if any.
pub fn tuning(db: &Database, set: RuleSet) -> Result<Option<Tuning>> {
    Ok(db
        .conn()
        .query_row(
            "SELECT alpha, beta FROM kernel_tuning WHERE rule_set = ?1 ORDER BY id DESC LIMIT 1",
            [set.as_str()],
            |r| {
                Ok(Tuning {
                    alpha: r.get(0)?,
                    beta: r.get(1)?,
                })
            },
        )
        .optional()?)
}

/// Records a tuning of a rule set.
#[allow(clippy::too_many_arguments)]
pub fn record_tuning(
    db: &mut Database,
    set: RuleSet,
    t: Tuning,
    score: f64,
    candidates: usize,
    kernels: &str,
    rules_hash: &str,
) -> Result<()> {
    db.transaction(|tx| {
        tx.execute(
            "INSERT INTO kernel_tuning(alpha, beta, cost_model, score, candidates, kernels, rules_hash, tuned_at, rule_set)
             VALUES (?1, ?2, 'diospyros', ?3, ?4, ?5, ?6, ?7, ?8)",
            params![t.alpha, t.beta, score, candidates as i64, kernels, rules_hash, crate::clock::now(), set.as_str()],
        )?;
        Ok(())
    })
}

/// The kind and phase column values of a rule under a tuning (kind `expand` and no phase until
/// the rule's set is tuned).
fn kind_and_phase(r: &KernelRule, tuning: Option<Tuning>) -> (&'static str, Option<i64>) {
    match tuning {
        Some(t) => {
            let p = assign(cost_point(r), t.alpha, t.beta);
            (p.name(), Some(p.number()))
        }
        None => ("expand", None),
    }
}

/// Writes the rules files into the `rules` table: new and changed rules unverified, kinds and
/// phases from `tuning` (rules without one get kind `expand` and no phase until tuned), rules
/// gone from the files deleted. Synthesized rules are left as they are.
pub fn sync(db: &mut Database, specs: &Path, tuning: Option<Tuning>) -> Result<Vec<KernelRule>> {
    let rules = rule::load(specs)?;
    db.transaction(|tx| {
        type Row = (String, String, String, Option<i64>);
        let stored: Vec<Row> = {
            let mut stmt = tx.prepare(&format!(
                "SELECT name, rule_hash, kind, phase FROM rules WHERE {}",
                RuleSet::Given.condition()
            ))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for (name, hash, _, _) in &stored {
            let current = rules.iter().find(|r| &r.name == name).map(rule_hash);
            if current.as_ref() != Some(hash) {
                tx.execute("DELETE FROM rules WHERE name = ?1", [name])?;
            }
        }
        for r in &rules {
            let (kind, phase) = kind_and_phase(r, tuning);
            // An unchanged row is not written again: a write changes the file, and a changed
            // file is checked for damage (about 15 ms) at the next open.
            let hash = rule_hash(r);
            if stored
                .iter()
                .any(|(n, h, k, p)| n == &r.name && h == &hash && k.as_str() == kind && *p == phase)
            {
                continue;
            }
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
                    hash
                ],
            )
            .map_err(|e| Error::data("rules", format!("kernel rule {}: {e}", r.name)))?;
        }
        Ok(())
    })?;
    Ok(rules)
}

/// Gives the stored rules of a set their kinds and phases under a tuning.
pub fn apply_tuning(db: &mut Database, set: RuleSet, tuning: Tuning) -> Result<()> {
    let rules = set_rules(db, set, false)?;
    db.transaction(|tx| {
        for r in &rules {
            let (kind, phase) = kind_and_phase(r, Some(tuning));
            tx.execute(
                "UPDATE rules SET kind = ?2, phase = ?3 WHERE name = ?1",
                params![r.name, kind, phase],
            )?;
        }
        Ok(())
    })
}

/// The rules of a set read back from the table (the proven ones, or all).
pub fn set_rules(db: &Database, set: RuleSet, proven_only: bool) -> Result<Vec<KernelRule>> {
    let only = if proven_only {
        " AND status = 'proven'"
    } else {
        ""
    };
    Ok(stored(db, set, only)?.into_iter().map(|(r, _)| r).collect())
}

/// The rows of a set meeting a further SQL condition, with their kind column, parsed.
fn stored(db: &Database, set: RuleSet, and: &str) -> Result<Vec<(KernelRule, String)>> {
    let rows = db.text_rows(&format!(
        "SELECT name, lhs, rhs, kind, provenance FROM rules WHERE {}{and} ORDER BY id",
        set.condition(),
    ))?;
    let mut out = Vec::new();
    for row in rows {
        let bad = |m: String| Error::data("rules", format!("kernel rule {}: {m}", row[0]));
        let side = |text: &str| -> Result<_> {
            rule::pattern(&read_one(text, "rules table").map_err(|e| bad(e.to_string()))?)
        };
        out.push((
            KernelRule {
                name: row[0].clone(),
                lhs: side(&row[1])?,
                rhs: side(&row[2])?,
                lhs_text: row[1].clone(),
                rhs_text: row[2].clone(),
                provenance: row[4].clone(),
                loc: Default::default(),
            },
            row[3].clone(),
        ));
    }
    Ok(out)
}

/// The proven kernel rules of a set with their phases, read back from the table (not the
/// files): a rule that is not proven, or not yet given a phase, is never used.
pub fn phased_rules(db: &Database, set: RuleSet) -> Result<Vec<(KernelRule, Phase)>> {
    let mut out = Vec::new();
    for (rule, kind) in stored(db, set, " AND status = 'proven' AND phase IS NOT NULL")? {
        let phase = Phase::from_name(&kind).ok_or_else(|| {
            Error::data("rules", format!("kernel rule {}: kind {kind}", rule.name))
        })?;
        out.push((rule, phase));
    }
    Ok(out)
}
