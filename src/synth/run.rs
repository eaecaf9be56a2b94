//! The `isadb synth` command: the pieces of the search, which of them need searching (their
//! input hash changed, or `--force`), searching them on `--jobs` threads with a progress bar,
//! proving every rule found at each type it claims (4 lanes and one full register), and
//! storing the run: into the database and `rules.db/`, or, for one shard, as CSV in a
//! directory that `isadb db import --merge` adds to the database.

use super::cost::CostModel;
use super::instructions::target_instructions;
use super::lower;
use super::search::{self, Tally};
use super::store::{piece_hashes, rules_of, write_run, PieceResult, RunRecord};
use super::workload::{lifting, Grammar};
use crate::cli::{render_table, Outcome};
use crate::database::{Database, Layout};
use crate::error::{Error, Result};
use crate::ir::{Elem, Macros};
use crate::rules::load::rule_macros;
use crate::rules::syntax::Rule;
use crate::rules::verify::{now_text, verify_rule, RuleVerdict};
use crate::select::target::TARGETS;
use crate::spec::{hash_text, load_macros};
use serde::Serialize;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Solver budget per proof when a run proves its rules (a rule z3 cannot decide in time is
/// stored `unknown`, unused by selection, for `verify-rules` to prove with its larger budget).
pub const VERIFY_TIMEOUT_MS: u32 = 3_000;

/// Bumped whenever the search changes what it finds, so every piece is searched again.
pub const SYNTH_VERSION: &str = "2";

/// The element types the lifting workloads and lowering goals are instantiated at.
pub const SEARCH_TYPES: [Elem; 6] = [
    Elem::U8,
    Elem::U16,
    Elem::U32,
    Elem::I8,
    Elem::I16,
    Elem::I32,
];

/// What `isadb synth` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Largest term of the lifting workloads.
    pub max_size: usize,
    /// Largest term of the lowering search.
    pub lower_size: usize,
    /// `(k, n)`: search only pieces `k` (1-based), `k + n`, ... of the `n` shards.
    pub shard: Option<(usize, usize)>,
    /// Where a shard writes its CSV rows (default: into the database and `rules.db/`).
    pub out: Option<PathBuf>,
    pub jobs: usize,
    /// Search every piece, changed or not.
    pub force: bool,
    /// Only these element types (default: [`SEARCH_TYPES`]).
    pub types: Vec<Elem>,
    /// Only these targets' lowering pieces (default: every target).
    pub targets: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_size: 4,
            lower_size: 5,
            shard: None,
            out: None,
            jobs: 2,
            force: false,
            types: SEARCH_TYPES.to_vec(),
            targets: TARGETS.iter().map(|t| t.name.to_string()).collect(),
        }
    }
}

/// One independent piece of the search.
#[derive(Clone)]
pub enum Piece {
    Lift(Grammar),
    Lower {
        target: &'static str,
        grammar: Grammar,
    },
}

impl Piece {
    pub fn name(&self) -> String {
        match self {
            Piece::Lift(g) => format!("lift {}", g.base),
            Piece::Lower { target, grammar } => format!("lower {target} {}", grammar.base),
        }
    }

    fn params(&self) -> String {
        match self {
            Piece::Lift(g) | Piece::Lower { grammar: g, .. } => g.describe(),
        }
    }
}

/// Every piece of a run, in a fixed order (shards take every n-th).
pub fn pieces(options: &Options) -> Vec<Piece> {
    let mut out: Vec<Piece> = options
        .types
        .iter()
        .map(|&t| Piece::Lift(lifting(t, options.max_size)))
        .collect();
    for t in TARGETS
        .iter()
        .filter(|t| options.targets.iter().any(|n| n == t.name))
    {
        for &e in &options.types {
            out.push(Piece::Lower {
                target: t.name,
                grammar: lower::grammar(e, options.lower_size),
            });
        }
    }
    out
}

/// The hash of everything a piece reads: its parameters, the macros and idioms, and the
/// instruction rows of every target (costs decide kinds and lowerings).
fn piece_hash(piece: &Piece, macros_text: &str, instructions_text: &str) -> String {
    hash_text(&format!(
        "synth {SYNTH_VERSION}\n{}\n{}\n{macros_text}\n{instructions_text}",
        piece.name(),
        piece.params()
    ))
}

fn macros_text(macros: &Macros) -> String {
    let mut names: Vec<&String> = macros.map.keys().collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let m = &macros.map[*n];
            format!("({n} ({}) {})\n", m.params.join(" "), m.body)
        })
        .collect()
}

/// The cost models of every target, read from the database.
pub fn cost_models(db: &Database, macros: &Macros) -> Result<Vec<CostModel>> {
    TARGETS
        .iter()
        .map(|t| Ok(CostModel::new(t.name, target_instructions(db, t, macros)?)))
        .collect()
}

/// The text of every target's instruction rows, for the piece hashes.
fn instructions_text(db: &Database) -> Result<String> {
    let rows = db.text_rows(
        "SELECT i.name || ' ' || i.semantics || ' ' || CAST(i.cost AS TEXT) FROM instructions i ORDER BY i.name",
    )?;
    Ok(hash_text(
        &rows
            .into_iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

/// What a run did, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct PieceSummary {
    pub piece: String,
    pub searched: bool,
    pub tally: Option<Tally>,
    pub rules: usize,
    pub wall_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub run: String,
    pub pieces: Vec<PieceSummary>,
    /// Rules by kind and target (`lift`, `lower neon`, ...), over the whole database.
    pub by_kind: Vec<(String, usize)>,
    pub proven: usize,
    pub refuted: usize,
    pub unknown: usize,
    pub wall_ms: f64,
}

/// Searches one piece; each thread has its own macros and cost models (expressions are
/// reference-counted, not shared between threads).
fn run_piece(
    piece: &Piece,
    input_hash: String,
    macros: &Macros,
    models: &[CostModel],
) -> Result<(PieceResult, Tally)> {
    let started = Instant::now();
    let name = piece.name();
    let (found, tally) = match piece {
        Piece::Lift(g) => search::search(g, &name, macros, models)?,
        Piece::Lower { target, grammar } => {
            let model = models
                .iter()
                .find(|m| m.target == *target)
                .ok_or_else(|| Error::Usage(format!("no cost model for {target}")))?;
            lower::search(grammar, model, &name, macros)?
        }
    };
    let mut rules = Vec::new();
    for f in &found {
        rules.extend(rules_of(f)?);
    }
    Ok((
        PieceResult {
            piece: name,
            input_hash,
            params: piece.params(),
            candidates: tally.candidates,
            found,
            rules,
            wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        },
        tally,
    ))
}

/// Runs `work` on every item on `jobs` threads, each with its own macros and cost models
/// (expressions are reference-counted, not shared between threads), ticking `bar`.
fn parallel<T: Sync, R: Send>(
    layout: &Layout,
    items: &[T],
    jobs: usize,
    bar: Option<&indicatif::ProgressBar>,
    label: impl Fn(&T) -> String + Sync,
    work: impl Fn(&T, &Macros, &[CostModel]) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<R>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(items.len().max(1)) {
            s.spawn(|| {
                let setup = || -> Result<(Macros, Vec<CostModel>)> {
                    let m = rule_macros(&load_macros(&layout.specs)?.macros)?;
                    let models = cost_models(&layout.open()?, &m)?;
                    Ok((m, models))
                };
                let (own, models) = match setup() {
                    Ok(x) => x,
                    Err(e) => {
                        results.lock().unwrap().push((usize::MAX, Err(e)));
                        return;
                    }
                };
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= items.len() {
                        break;
                    }
                    if let Some(b) = bar {
                        b.set_message(label(&items[i]));
                    }
                    let r = work(&items[i], &own, &models);
                    if let Some(b) = bar {
                        b.inc(1);
                    }
                    results.lock().unwrap().push((i, r));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn progress(len: usize, what: &str) -> Option<indicatif::ProgressBar> {
    (std::io::stderr().is_terminal() && len > 0).then(|| {
        let b = indicatif::ProgressBar::new(len as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "synth {{bar:40}} {{pos}}/{{len}} {what} {{elapsed}} {{msg}}"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    })
}

/// The `isadb synth` command.
pub fn synth(layout: &Layout, options: &Options, json: bool) -> Result<Outcome> {
    let started = Instant::now();
    let started_at = now_text();
    let mut db = layout.open()?;
    let spec = load_macros(&layout.specs)?;
    let macros = rule_macros(&spec.macros)?;
    let all = pieces(options);
    let chosen: Vec<Piece> = match options.shard {
        Some((k, n)) => {
            if n == 0 || k == 0 || k > n {
                return Err(Error::Usage(format!(
                    "--shard {k}/{n}: expected K/N with 1 <= K <= N"
                )));
            }
            all.into_iter()
                .enumerate()
                .filter(|(i, _)| i % n == k - 1)
                .map(|(_, p)| p)
                .collect()
        }
        None => all,
    };
    let (mtext, itext) = (macros_text(&macros), instructions_text(&db)?);
    let stored = piece_hashes(&db)?;
    let mut todo: Vec<(Piece, String)> = Vec::new();
    let mut summaries: Vec<PieceSummary> = Vec::new();
    for p in chosen {
        let h = piece_hash(&p, &mtext, &itext);
        if !options.force && options.out.is_none() && stored.get(&p.name()) == Some(&h) {
            summaries.push(PieceSummary {
                piece: p.name(),
                searched: false,
                tally: None,
                rules: 0,
                wall_ms: 0.0,
            });
        } else {
            todo.push((p, h));
        }
    }
    let bar = progress(todo.len(), "pieces");
    let searched = parallel(
        layout,
        &todo,
        options.jobs,
        bar.as_ref(),
        |(p, _)| p.name(),
        |(p, h), macros, models| run_piece(p, h.clone(), macros, models),
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut done = Vec::new();
    let mut unique: Vec<Rule> = Vec::new();
    for (piece, tally) in searched {
        summaries.push(PieceSummary {
            piece: piece.piece.clone(),
            searched: true,
            tally: Some(tally),
            rules: piece.rules.len(),
            wall_ms: piece.wall_ms,
        });
        for r in &piece.rules {
            if !unique.iter().any(|u| u.name == r.name) {
                unique.push(r.clone());
            }
        }
        done.push(piece);
    }
    // Every rule found is proven again at each type it claims, at 4 lanes and one full
    // register (the record `verify-rules` keeps), once however many pieces found it.
    let bar = progress(unique.len(), "rules proven");
    let verdicts: HashMap<String, RuleVerdict> = parallel(
        layout,
        &unique,
        options.jobs,
        bar.as_ref(),
        |r| r.name.clone(),
        |r, macros, _| Ok((r.name.clone(), verify_rule(r, macros, VERIFY_TIMEOUT_MS)?)),
    )?
    .into_iter()
    .collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let shard = options.shard.map(|(k, n)| format!("{k}/{n}"));
    let finished_at = now_text();
    let run = RunRecord {
        key: format!(
            "{finished_at} {}",
            shard
                .as_deref()
                .map_or("all".to_string(), |s| format!("shard {s}"))
        ),
        started_at,
        finished_at,
        targets: options.targets.join(" "),
        params: format!(
            "max_size {} lower_size {} types {}",
            options.max_size,
            options.lower_size,
            options
                .types
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        shard,
        wall_ms,
    };
    let tables = ["rules", "synthesis_runs", "synthesis_pieces"];
    let report_db = match &options.out {
        Some(dir) => {
            let mut out = Database::open_in_memory()?;
            write_run(&mut out, &run, &done, &verdicts, &macros)?;
            out.export_tables(dir, &tables)?;
            out
        }
        None => {
            write_run(&mut db, &run, &done, &verdicts, &macros)?;
            db.export_tables(&layout.tables, &tables)?;
            db
        }
    };
    let report = report_of(&report_db, run.key, summaries, wall_ms)?;
    print_report(&report, json, options.out.as_ref());
    Ok(if report.refuted > 0 {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

fn report_of(
    db: &Database,
    run: String,
    pieces: Vec<PieceSummary>,
    wall_ms: f64,
) -> Result<Report> {
    let by_kind = db
        .text_rows(
            "SELECT kind || coalesce(' ' || target, ''), CAST(count(*) AS TEXT) FROM rules
             WHERE provenance = 'synthesized' GROUP BY 1 ORDER BY 1",
        )?
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap_or(0)))
        .collect();
    let count = |status: &str| -> Result<usize> {
        Ok(db.conn().query_row(
            "SELECT count(*) FROM rules WHERE provenance = 'synthesized' AND status = ?1",
            [status],
            |r| r.get::<_, i64>(0),
        )? as usize)
    };
    Ok(Report {
        run,
        pieces,
        by_kind,
        proven: count("proven")?,
        refuted: count("refuted")?,
        unknown: count("unknown")?,
        wall_ms,
    })
}

fn print_report(r: &Report, json: bool, out: Option<&PathBuf>) {
    if json {
        println!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
        return;
    }
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
    print!(
        "{}",
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
                "s"
            ],
            &rows
        )
    );
    let kinds: Vec<String> = r.by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!("synthesized rules by kind: {}", kinds.join(", "));
    println!(
        "{} proven, {} refuted, {} unknown; run {} in {:.1} s{}",
        r.proven,
        r.refuted,
        r.unknown,
        r.run,
        r.wall_ms / 1000.0,
        out.map_or(String::new(), |d| format!(
            "; rows written to {} (merge with `isadb db import --merge {}`)",
            d.display(),
            d.display()
        ))
    );
}

/// `isadb synth --rederive`: which hand-written rules the proven synthesized rules derive.
pub fn rederive_hand_rules(layout: &Layout, json: bool) -> Result<Outcome> {
    let db = layout.open()?;
    let macros = rule_macros(&load_macros(&layout.specs)?.macros)?;
    let hand = crate::rules::load::load_rules(&layout.specs)?;
    let proven: Vec<String> = db
        .text_rows("SELECT name FROM rules WHERE provenance = 'synthesized' AND status = 'proven'")?
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let synthesized: Vec<Rule> = crate::rules::load::synthesized_rules(&db)?
        .into_iter()
        .filter(|r| proven.contains(&r.name))
        .collect();
    let verdicts = super::rederive::rederive(&hand, &synthesized, &macros)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&verdicts).unwrap_or_default()
        );
        return Ok(Outcome::Success);
    }
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| vec![v.rule.clone(), v.verdict.clone()])
        .collect();
    print!(
        "{}",
        render_table(&["hand-written rule", "by the synthesized rules"], &rows)
    );
    let mut counts: Vec<(String, usize)> = Vec::new();
    for v in &verdicts {
        match counts.iter_mut().find(|(k, _)| *k == v.verdict) {
            Some(c) => c.1 += 1,
            None => counts.push((v.verdict.clone(), 1)),
        }
    }
    let shown: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "{} hand-written rules against {} proven synthesized rules: {}",
        verdicts.len(),
        synthesized.len(),
        shown.join(", ")
    );
    Ok(Outcome::Success)
}
