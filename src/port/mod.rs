//! `isadb port --all`: every instruction of a source set (an ISA, or some of its features)
//! ported to a target through instruction selection and proven, as `port X` does one. The
//! selections run in batch ([`crate::select::batch`]); results are stored in `port_results`
//! and committed as CSV, and a row is reused while the ported semantics and the target's
//! catalog are unchanged. `--shard K/N` ports every N-th source into CSV rows for
//! `db import --merge`.

pub mod candidate;
pub mod dropin;
pub mod native;
pub mod sources;
pub mod store;

use crate::database::Database;
use crate::error::Result;
use crate::project::Project;
use crate::select::batch::{self, Item};
use crate::select::steps::steps;
use crate::select::{Proof, Selector};
use crate::spec::{hash_text, Isa, Target};
use crate::synth::Shard;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;
pub use store::{Row, Status};

/// Sources selected per batch run (and per step of the progress bar).
const BLOCK: usize = 64;

/// What `port --all` ports and how.
pub struct Options {
    /// The source ISA.
    pub from: Isa,
    /// Only instructions of these features (all of the ISA when empty).
    pub features: Vec<String>,
    /// Only this instruction (at its sampled immediates).
    pub only: Option<String>,
    #[allow(missing_docs)]
    pub target: Target,
    /// Worker threads (each selects a chunk of sources and proves it).
    pub jobs: usize,
    /// Port again what is stored.
    pub force: bool,
    /// Only every N-th source, written as CSV into `out`.
    pub shard: Option<Shard>,
    /// Where a shard writes its rows.
    pub out: Option<PathBuf>,
}

/// Instruction counts of the proven sequences, as the distribution is reported.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Distribution {
    /// One instruction, or none (the result is an operand or a constant).
    pub at_most_one: usize,
    #[allow(missing_docs)]
    pub two: usize,
    /// Three or four.
    pub three_to_four: usize,
    /// Five or more.
    pub five_or_more: usize,
    /// Proven, but with operators computed lane by lane.
    pub scalarized: usize,
    /// Without a proven sequence.
    pub failed: usize,
}

/// What `port --all` did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// One row per source, in database order.
    pub rows: Vec<Row>,
    #[allow(missing_docs)]
    pub distribution: Distribution,
    /// Rows reused from the database.
    pub cached: usize,
    /// Rows ported in this run.
    pub ported: usize,
    #[allow(missing_docs)]
    pub wall_ms: f64,
    /// Where a shard's rows went.
    pub out: Option<PathBuf>,
}

/// Ports every source of `options`, reusing stored rows; `progress` shows a progress bar.
pub fn port_all(project: &Project, options: &Options, progress: bool) -> Result<Report> {
    let started = Instant::now();
    let mut db = project.open()?;
    let mut all = sources::sources(
        &db,
        options.from,
        &options.features,
        options.only.as_deref(),
        options.target,
    )?;
    if let Some(s) = &options.shard {
        all = all
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % s.n == s.k - 1)
            .map(|(_, src)| src)
            .collect();
    }
    let mut selector = Selector::load(project, options.target)?;
    let fingerprint = selector.catalog.fingerprint.clone();
    let stored = store::rows(&db, options.target.name)?;
    let hash =
        |s: &sources::Source| hash_text(&format!("{:?}\n{}\n{fingerprint}", s.text, s.lanes));
    let mut rows: Vec<Option<Row>> = all
        .iter()
        .map(|s| {
            stored
                .get(&s.label)
                .filter(|r| !options.force && r.input_hash == hash(s))
                .cloned()
        })
        .collect();
    let cached = rows.iter().flatten().count();
    let todo: Vec<usize> = (0..all.len()).filter(|&i| rows[i].is_none()).collect();
    let bar = (progress && !todo.is_empty()).then(|| {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "port {bar:40} {pos}/{len} instructions {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut fresh = Vec::new();
    for block in todo.chunks(BLOCK) {
        let mut items = Vec::new();
        let mut at = Vec::new();
        for &i in block {
            let s = &all[i];
            match &s.text {
                Ok(text) => {
                    items.push(Item {
                        line: i + 1,
                        target: options.target,
                        text: text.clone(),
                        lanes: Some(s.lanes),
                    });
                    at.push(i);
                }
                Err(e) => rows[i] = Some(failed(s, options.target, hash(s), e)),
            }
        }
        if !items.is_empty() {
            let report = batch::run(project, items, &HashMap::new(), options.jobs)?;
            for (i, entry) in at.into_iter().zip(report.entries) {
                let s = &all[i];
                rows[i] = Some(match entry.outcome {
                    Ok(sel) => Row {
                        source: s.label.clone(),
                        target: options.target.name.to_string(),
                        instruction: s.instruction.clone(),
                        input_hash: hash(s),
                        status: if sel.scalarized.is_empty() {
                            Status::Proven
                        } else {
                            Status::Scalarized
                        },
                        instructions: sel.calls.len(),
                        sequence: sel.calls,
                        cost: sel.cost,
                        proof: match sel.proof {
                            Proof::Z3 => "z3",
                            Proof::SameTree => "same tree",
                        }
                        .to_string(),
                        prove_ms: sel.prove_ms,
                    },
                    Err(e) => failed(s, options.target, hash(s), &e),
                });
            }
        }
        // Data movement the rules leave dear, and what they leave scalarized: the cheapest
        // sequence of the target's own moves, or one synthesized.
        for &i in block {
            let (Some(row), Ok(text)) = (&mut rows[i], &all[i].text) else {
                continue;
            };
            // One step (no output pieces to join) is as cheap as a move gets.
            if row.status == Status::Proven && row.instructions <= 1 && row.cost <= 1.0 {
                continue;
            }
            let input = selector.elaborate(text, Some(all[i].lanes), &HashMap::new())?;
            let bound = if row.status == Status::Failed {
                f64::INFINITY
            } else {
                row.cost
            };
            let scalarized = row.status != Status::Proven;
            let better = selector.search_cheaper(&input, bound, row.instructions, scalarized)?;
            if let Some(better) = better {
                let (steps, _) = steps(&better, &selector.catalog);
                row.status = Status::Proven;
                row.instructions = steps.len();
                row.sequence = steps.into_iter().map(|s| s.call).collect();
                row.cost = better.cost;
                row.proof = match better.proof {
                    Some(Proof::SameTree) => "same tree",
                    _ => "z3",
                }
                .to_string();
                row.prove_ms = better.validate_ms;
            }
        }
        for &i in block {
            fresh.extend(rows[i].clone());
        }
        if let Some(b) = &bar {
            b.inc(block.len() as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let ported = fresh.len();
    match &options.out {
        Some(dir) => {
            let mut out = Database::open_in_memory()?;
            store::write(&mut out, &fresh)?;
            out.export_tables(dir, &["port_results"])?;
        }
        None => {
            store::write(&mut db, &fresh)?;
            db.export_tables(&project.tables, &["port_results"])?;
        }
    }
    let rows: Vec<Row> = rows.into_iter().flatten().collect();
    Ok(Report {
        distribution: distribution(&rows),
        rows,
        cached,
        ported,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
        out: options.out.clone(),
    })
}

fn failed(s: &sources::Source, target: Target, input_hash: String, error: &str) -> Row {
    Row {
        source: s.label.clone(),
        target: target.name.to_string(),
        instruction: s.instruction.clone(),
        input_hash,
        status: Status::Failed,
        sequence: vec![crate::error::one_line(&error)],
        instructions: 0,
        cost: 0.0,
        proof: String::new(),
        prove_ms: 0.0,
    }
}

fn distribution(rows: &[Row]) -> Distribution {
    let mut d = Distribution::default();
    for r in rows {
        match (r.status, r.instructions) {
            (Status::Failed, _) => d.failed += 1,
            (Status::Scalarized, _) => d.scalarized += 1,
            (Status::Proven, 0..=1) => d.at_most_one += 1,
            (Status::Proven, 2) => d.two += 1,
            (Status::Proven, 3..=4) => d.three_to_four += 1,
            (Status::Proven, _) => d.five_or_more += 1,
        }
    }
    d
}
