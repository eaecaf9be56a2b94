//! `isadb db build | export | import | stats`.

use super::{print_out, render_table, Context, Outcome};
use crate::error::Result;
use crate::project::Home;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The `db` subcommands.
#[derive(clap::Subcommand)]
pub enum DbAction {
    /// Rebuild rules.db/isadb.sqlite from specs/ and the committed CSV tables.
    Build {
        /// Also match again the instruction-idiom pairs whose proof z3 left unknown (after the
        /// prover improved), and record the new verdicts.
        #[arg(long)]
        retry_unknown: bool,
    },
    /// Write the committed tables as CSV into a directory (default rules.db/).
    Export {
        /// The directory (default rules.db/).
        dir: Option<PathBuf>,
    },
    /// Load the committed tables from CSV files in a directory (default rules.db/).
    Import {
        /// The directory (default rules.db/).
        dir: Option<PathBuf>,
        /// Add the rows to the tables (a row replaces the one with its name or key) instead of
        /// replacing the tables, and write the merged tables to rules.db/ (for `synth --shard`).
        #[arg(long)]
        merge: bool,
    },
    /// Instruction counts per ISA and feature, and the other tables' sizes.
    Stats,
}

/// Runs one `db` subcommand.
pub fn run(ctx: &Context, action: DbAction) -> Result<Outcome> {
    match action {
        DbAction::Build { retry_unknown } => build(ctx, retry_unknown),
        DbAction::Export { dir } => export(ctx, dir),
        DbAction::Import { dir, merge } => import(ctx, dir, merge),
        DbAction::Stats => stats(ctx),
    }
}

/// `db build`: rebuilds the database, matching idioms again where they changed (and, with
/// `retry_unknown`, where z3 left a match unknown).
pub fn build(ctx: &Context, retry_unknown: bool) -> Result<Outcome> {
    let b = ctx.project.rebuild(retry_unknown)?;
    ctx.print(&b, || {
        format!(
            "built {} ({} instructions from {} families, {} idioms) in {:.0} ms\n",
            b.path, b.instructions, b.families, b.idioms, b.ms
        )
    })?;
    ctx.note_writes();
    Ok(Outcome::Success)
}

/// `db export [DIR]`: the committed tables as CSV (default: into the project).
pub fn export(ctx: &Context, dir: Option<PathBuf>) -> Result<Outcome> {
    let into_home = dir.is_none();
    let dir = dir.unwrap_or_else(|| ctx.project.tables.clone());
    let n = ctx.project.export(&dir)?;
    print_out(&format!("exported {n} tables to {}\n", dir.display()))?;
    if into_home {
        ctx.note_writes();
    }
    Ok(Outcome::Success)
}

/// `db import [DIR]`: the committed tables from CSV (default: from the project); with
/// `merge`, DIR's rows are added to the tables (`synth --shard` output) and the merged tables
/// written to the project.
pub fn import(ctx: &Context, dir: Option<PathBuf>, merge: bool) -> Result<Outcome> {
    let dir = dir.unwrap_or_else(|| ctx.project.tables.clone());
    if merge {
        let n = crate::synth::merge_shards(&ctx.project, &dir)?;
        print_out(&format!(
            "merged {n} tables from {} into the database and {}\n",
            dir.display(),
            ctx.project.tables.display()
        ))?;
        ctx.note_writes();
    } else {
        let n = ctx.project.import(&dir)?;
        print_out(&format!("imported {n} tables from {}\n", dir.display()))?;
    }
    Ok(Outcome::Success)
}

/// `db stats`: the home in use, instruction counts per ISA and feature, the other tables.
pub fn stats(ctx: &Context) -> Result<Outcome> {
    #[derive(Serialize)]
    struct HomeStats<'a> {
        home: &'a Home,
        #[serde(flatten)]
        stats: crate::database::Stats,
    }
    let report = HomeStats {
        home: &ctx.home,
        stats: ctx.project.open()?.stats()?,
    };
    let stats = &report.stats;
    ctx.print(&report, || {
        let mut rows = Vec::new();
        for isa in &stats.isas {
            rows.push(vec![
                isa.name.clone(),
                "(all)".into(),
                isa.instructions.to_string(),
                isa.with_intrinsic.to_string(),
            ]);
            for f in &isa.features {
                rows.push(vec![
                    String::new(),
                    f.name.clone(),
                    f.instructions.to_string(),
                    f.with_intrinsic.to_string(),
                ]);
            }
        }
        let counts = |m: &BTreeMap<String, u64>| {
            if m.is_empty() {
                "none".to_string()
            } else {
                m.iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        format!("home: {}\n", ctx.home.describe())
            + &render_table(&["isa", "feature", "instructions", "with intrinsic"], &rows)
            + &format!(
                "idioms: {}\nclasses: {}\nrules: {}\nvalidation: {}\n",
                stats.idioms,
                stats.classes,
                counts(&stats.rules_by_status),
                counts(&stats.validation_by_status)
            )
    })?;
    Ok(Outcome::Success)
}
