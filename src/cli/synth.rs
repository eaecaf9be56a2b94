//! `isadb synth` (and `synth --rederive`): runs the search, renders its report.

use super::{render_table, Context, Outcome};
use crate::error::Result;
use crate::ir::Elem;
use crate::synth::{Options, Shard, SEARCH_TYPES};
use std::io::IsTerminal;

/// `--shard K/N`.
pub fn parse_shard(text: &str) -> std::result::Result<Shard, String> {
    let (k, n) = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)))
        .ok_or_else(|| format!("'{text}': expected K/N, e.g. 2/8"))?;
    Shard::new(k, n).map_err(|e| e.to_string())
}

/// One of `--types`: an element type the search is instantiated at.
pub fn parse_search_type(text: &str) -> std::result::Result<Elem, String> {
    Elem::parse(text)
        .filter(|e| SEARCH_TYPES.contains(e))
        .ok_or_else(|| {
            let known: Vec<&str> = SEARCH_TYPES.iter().map(|t| t.name()).collect();
            format!("'{text}' is not one of {}", known.join(" "))
        })
}

/// `isadb synth`: searches, proves and stores; exit 1 if a synthesized rule is refuted.
pub fn synth(ctx: &Context, options: Options) -> Result<Outcome> {
    let r = crate::synth::synth(&ctx.project, &options, std::io::stderr().is_terminal())?;
    ctx.print(&r, || {
        let rows: Vec<Vec<String>> = r
            .pieces
            .iter()
            .map(|p| match &p.tally {
                Some(t) => vec![
                    p.piece.clone(),
                    t.terms.to_string(),
                    t.candidates.to_string(),
                    t.derived.to_string(),
                    t.proven.to_string(),
                    t.refuted.to_string(),
                    t.predicated.to_string(),
                    p.rules.to_string(),
                    format!("{:.1}", p.wall_ms / 1000.0),
                ],
                None => vec![p.piece.clone(), "unchanged".into()],
            })
            .collect();
        let kinds: Vec<String> = r.by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        render_table(
            &[
                "piece",
                "terms",
                "candidates",
                "derived",
                "proven",
                "refuted",
                "predicated",
                "rules",
                "s",
            ],
            &rows,
        ) + &format!(
            "synthesized rules by kind: {}\n{} proven, {} refuted, {} unknown; run {} in {:.1} s{}\n",
            kinds.join(", "),
            r.proven,
            r.refuted,
            r.unknown,
            r.run,
            r.wall_ms / 1000.0,
            r.out.as_ref().map_or(String::new(), |d| format!(
                "; rows written to {} (merge with `isadb db import --merge {}`)",
                d.display(),
                d.display()
            ))
        )
    })?;
    if r.out.is_none() {
        ctx.note_writes();
    }
    Ok(Outcome::negative_if(r.refuted > 0))
}

/// `isadb synth --dialect dsp`: the kernel rules synthesized, stored and tuned.
pub fn dialect(ctx: &Context, force: bool) -> Result<Outcome> {
    let options = crate::kernel::synth::Options {
        force,
        ..Default::default()
    };
    let r =
        crate::kernel::synth::synthesize(&ctx.project, &options, std::io::stderr().is_terminal())?;
    ctx.print(&r, || {
        let phases: Vec<String> = r.by_phase.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        let tuning = match (r.alpha, r.beta) {
            (Some(a), Some(b)) => format!("alpha {a}, beta {b}"),
            _ => "not tuned".into(),
        };
        if r.unchanged {
            format!(
                "dialect dsp: unchanged since the stored run (--force searches again); rules by phase: {}; {tuning}\n",
                phases.join(", ")
            )
        } else {
            format!(
                "dialect dsp: {} terms, {} candidates: {} derived, {} proven, {} refuted, {} unknown; searched in {:.1} s\n\
                 rules by phase: {}; {tuning}; {:.1} s with the tuning\n",
                r.terms,
                r.candidates,
                r.derived,
                r.proven,
                r.refuted,
                r.unknown,
                r.search_ms / 1000.0,
                phases.join(", "),
                r.wall_ms / 1000.0
            )
        }
    })?;
    ctx.note_writes();
    Ok(Outcome::Success)
}

/// `isadb synth --rederive`: which hand-written rules the proven synthesized rules derive.
pub fn rederive(ctx: &Context) -> Result<Outcome> {
    let r = crate::synth::rederive_hand_rules(&ctx.project)?;
    ctx.print(&r.rules, || {
        let rows: Vec<Vec<String>> = r
            .rules
            .iter()
            .map(|v| vec![v.rule.clone(), v.verdict.to_string()])
            .collect();
        let mut counts: Vec<(String, usize)> = Vec::new();
        for v in &r.rules {
            let verdict = v.verdict.to_string();
            match counts.iter_mut().find(|(k, _)| *k == verdict) {
                Some(c) => c.1 += 1,
                None => counts.push((verdict, 1)),
            }
        }
        let shown: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        render_table(&["hand-written rule", "by the synthesized rules"], &rows)
            + &format!(
                "{} hand-written rules against {} proven synthesized rules: {}\n",
                r.rules.len(),
                r.synthesized,
                shown.join(", ")
            )
    })?;
    Ok(Outcome::Success)
}
