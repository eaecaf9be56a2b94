//! `isadb prove` and `isadb verify-rules`: z3's verdict on two expressions, and on every stored
//! rewrite rule (the hand-written ones and the kernel rules, in one report).

use super::{render_table, Context, Outcome};
use crate::error::Result;
use crate::rules::verify::{Options, Report};
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

/// `verify-rules`: proves the stored rules (the hand-written ones and the kernel rules) and
/// records the verdicts in the project; exit 1 if one is refuted.
pub fn verify_rules(ctx: &Context, options: &Options) -> Result<Outcome> {
    let report = crate::kernel::verify::verify_rules(&ctx.project, options)?;
    ctx.print(&report, || {
        let mut out = String::new();
        if let Some(rules) = &report.rules {
            out += &render_report(rules, "");
        }
        if let Some(kernel_rules) = &report.kernel_rules {
            out += &render_report(kernel_rules, "kernel rules: ");
        }
        out
    })?;
    ctx.note_writes();
    Ok(Outcome::negative_if(report.refuted()))
}

/// One set's verdicts as a table, the rules not proven with their counterexamples, and a
/// summary line starting with `label`.
fn render_report(report: &Report, label: &str) -> String {
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
        "{label}{} proven, {} refuted, {} unknown, {} already proven (skipped) in {:.1} s\n",
        report.proven,
        report.refuted,
        report.unknown,
        report.skipped,
        report.wall_ms / 1000.0
    )
}
