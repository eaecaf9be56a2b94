//! `isadb prove` and `isadb verify-rules`: z3's verdict on two expressions, and on every stored
//! rewrite rule.

use super::{render_table, Context, Outcome};
use crate::error::Result;
use crate::rules::verify::Options;
use crate::rules::RuleStatus;
use crate::semantics::prove::prove_texts;
use crate::semantics::Verdict;
use crate::spec::load_macros;

/// `prove LHS RHS`: proven, or a counterexample with concrete lanes (exit 1).
pub fn prove(ctx: &Context, lhs: &str, rhs: &str, lanes: u32, timeout_ms: u32) -> Result<Outcome> {
    let macros = load_macros(&ctx.project.specs)?.macros;
    let verdict = prove_texts(lhs, rhs, &macros, lanes, timeout_ms)?;
    ctx.print(&verdict, || match &verdict {
        Verdict::Proven { ty, ms, .. } => format!("proven: equivalent at {ty} ({ms:.1} ms)\n"),
        Verdict::Counterexample {
            inputs, lhs, rhs, ..
        } => {
            let ins: String = inputs
                .iter()
                .map(|(n, v)| format!("  {n} = {v}\n"))
                .collect();
            format!("not equivalent; counterexample:\n{ins}  lhs = {lhs}\n  rhs = {rhs}\n")
        }
        Verdict::Unknown { reason, ms } => format!("unknown after {ms:.0} ms: {reason}\n"),
    })?;
    Ok(Outcome::negative_if(!verdict.is_proven()))
}

/// `verify-rules`: proves the stored rules and records the verdicts in the project; exit 1 if
/// one is refuted.
pub fn verify_rules(ctx: &Context, options: &Options) -> Result<Outcome> {
    let report = ctx.project.verify_rules(options)?;
    ctx.print(&report, || {
        let rows: Vec<Vec<String>> = report
            .rules
            .iter()
            .map(|v| {
                vec![
                    v.name.clone(),
                    v.status.to_string(),
                    v.types_proven.join(" "),
                    v.lanes_proven
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                    format!("{:.0}", v.solver_ms),
                ]
            })
            .collect();
        let mut out = String::new();
        if !rows.is_empty() {
            out += &render_table(&["rule", "status", "types", "lanes", "solver ms"], &rows);
        }
        for v in report
            .rules
            .iter()
            .filter(|v| v.status != RuleStatus::Proven)
        {
            out += &format!(
                "{} {}: {}\n",
                v.name,
                v.status,
                v.counterexample.as_deref().unwrap_or("")
            );
        }
        out + &format!(
            "{} proven, {} refuted, {} unknown, {} already proven (skipped) in {:.1} s\n",
            report.proven,
            report.refuted,
            report.unknown,
            report.skipped,
            report.wall_ms / 1000.0
        )
    })?;
    ctx.note_writes();
    Ok(Outcome::negative_if(report.refuted > 0))
}
