//! `isadb validate`: per-ISA counts, skips and mismatches of running every instruction for real.

use super::{render_table, Context, Outcome};
use crate::error::Result;
use crate::validate::{Options, Report, ValidationStatus};

/// `validate`: exit 1 when an instruction disagrees with its semantics.
pub fn validate(ctx: &Context, options: &Options) -> Result<Outcome> {
    let report = crate::validate::validate(&ctx.project, options)?;
    ctx.print(&report, || text(&report))?;
    ctx.note_writes();
    Ok(Outcome::negative_if(report.mismatched() > 0))
}

/// The human-readable validation report.
fn text(report: &Report) -> String {
    let rows: Vec<Vec<String>> = report
        .isas
        .iter()
        .map(|s| {
            vec![
                s.isa.to_string(),
                s.with_intrinsic.to_string(),
                s.validated.to_string(),
                s.mismatched.to_string(),
                s.skipped.to_string(),
                s.ran.to_string(),
                s.cached.to_string(),
                format!("{:.1}", s.wall_ms / 1000.0),
            ]
        })
        .collect();
    let mut out = render_table(
        &[
            "isa",
            "with intrinsic",
            "validated",
            "mismatched",
            "skipped",
            "ran",
            "cached",
            "seconds",
        ],
        &rows,
    );
    out += &format!(
        "{} inputs per instruction, seed {}, {:.1} s\n",
        report.inputs,
        report.seed,
        report.wall_ms / 1000.0
    );
    for w in &report.warnings {
        out += &format!("warning: {w}\n");
    }
    let skipped: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.status == ValidationStatus::Skipped)
        .collect();
    if !skipped.is_empty() {
        out += "skipped:\n";
        for r in skipped.iter().take(40) {
            out += &format!("  {} ({}): {}\n", r.name, r.isa, r.detail);
        }
        if skipped.len() > 40 {
            out += &format!("  ... and {} more (see --json)\n", skipped.len() - 40);
        }
    }
    for r in report
        .results
        .iter()
        .filter(|r| r.status == ValidationStatus::Mismatch)
    {
        if r.mismatches.is_empty() {
            out += &format!(
                "MISMATCH {} ({}, recorded earlier): {}\n",
                r.name, r.isa, r.detail
            );
            continue;
        }
        out += &format!(
            "MISMATCH {} ({}): {} of {} inputs differ\n",
            r.name, r.isa, r.mismatched_inputs, r.inputs
        );
        for m in &r.mismatches {
            out += &format!("  input {}:\n", m.input);
            for (name, lanes) in &m.operands {
                out += &format!("    {name:<8} = {lanes}\n");
            }
            out += &format!(
                "    expected = {}\n    actual   = {}\n    differing lanes: {}\n",
                m.expected,
                m.actual,
                crate::validate::compare::lane_list(&m.lanes)
            );
        }
    }
    out
}
