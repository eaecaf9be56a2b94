//! The `isadb synth` command: the pieces of the search, which of them need searching (their
//! input hash changed, or `--force`), searching them on `--jobs` threads with a progress bar,
//! proving every rule found at each type it claims (4 lanes and one full register), and
//! storing the run: into the database and `rules.db/`, or, for one shard, as CSV in a
//! directory that `isadb db import --merge` adds to the database.

use super::cost::CostModel;
use super::lower;
use super::rederive::{rederive, Rederived};
use super::search;
use super::store::{drop_unlisted, piece_hashes, rules_of, write_run, PieceResult, RunRecord};
use super::workload::{
    absolute_values, bit_counts, casts, lifting, signedness_casts, Grammar, SEARCH_TYPES,
};
use super::Tally;
use crate::database::{Database, Filter};
use crate::error::{Error, Result};
use crate::ir::{Elem, Macros};
use crate::project::Project;
use crate::rules::load::{load_rules, rule_macros};
use crate::rules::verdict::RuleVerdict;
use crate::rules::verify::verify_rule;
use crate::rules::{synthesized_rules, Rule, RuleStatus};
use crate::spec::{hash_text, load_macros, Target, TARGETS};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Solver budget per proof when a run proves its rules (a rule z3 cannot decide in time is
/// stored `unknown`, unused by selection, for `verify-rules` to prove with its larger budget).
pub const VERIFY_TIMEOUT_MS: u32 = 3_000;

/// Bumped whenever the search changes what it finds, so every piece is searched again.
pub const SYNTH_VERSION: &str = "5";

/// One of `n` independent parts of a run: pieces `k` (1-based), `k + n`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub k: usize,
    /// How many parts.
    pub n: usize,
}

impl Shard {
    /// The shard `k` of `n`; a usage error unless 1 <= k <= n.
    pub fn new(k: usize, n: usize) -> Result<Shard> {
        if k == 0 || k > n {
            return Err(Error::Usage(format!(
                "--shard {k}/{n}: expected K/N with 1 <= K <= N"
            )));
        }
        Ok(Shard { k, n })
    }

    /// Whether the piece at `index` (0-based) of a run belongs to this shard.
    fn holds(self, index: usize) -> bool {
        index % self.n == self.k - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// What `isadb synth` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Largest term of the lifting workloads.
    pub max_size: usize,
    /// Largest term of the lowering search.
    pub lower_size: usize,
    /// Search only this shard's pieces.
    pub shard: Option<Shard>,
    /// Where a shard writes its CSV rows (default: into the database and `rules.db/`).
    pub out: Option<PathBuf>,
    /// Search threads.
    pub jobs: usize,
    /// Search every piece, changed or not.
    pub force: bool,
    /// Only these element types (default: [`SEARCH_TYPES`]).
    pub types: Vec<Elem>,
    /// Only these targets' lowering pieces (default: every target).
    pub targets: Vec<Target>,
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
            targets: TARGETS.to_vec(),
        }
    }
}

/// One independent piece of the search.
#[derive(Clone)]
pub enum Piece {
    Lift(Grammar),
    Lower { target: Target, grammar: Grammar },
}

impl Piece {
    pub fn name(&self) -> String {
        match self {
            Piece::Lift(g) => format!("{} {}", g.workload, g.base),
            Piece::Lower { target, grammar } => format!("lower {} {}", target.name, grammar.base),
        }
    }

    fn params(&self) -> String {
        match self {
            Piece::Lift(g) => g.describe(),
            Piece::Lower { grammar: g, .. } => format!("{} {}", g.describe(), lower::COMPOSITION),
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
    // The cast and signedness workloads at each search type wider than a byte and at its
    // widening (64-bit lanes are reached from the 32-bit types).
    let mut cast_bases: Vec<Elem> = Vec::new();
    for &t in &options.types {
        for b in [Some(t), t.wide()].into_iter().flatten() {
            if b.bits() > 8 && b.bits() <= 64 && !cast_bases.contains(&b) {
                cast_bases.push(b);
            }
        }
    }
    out.extend(cast_bases.iter().map(|&b| Piece::Lift(casts(b))));
    out.extend(
        cast_bases
            .into_iter()
            .map(|b| Piece::Lift(signedness_casts(b))),
    );
    out.extend(options.types.iter().map(|&t| Piece::Lift(bit_counts(t))));
    out.extend(
        options
            .types
            .iter()
            .filter(|t| t.is_signed())
            .map(|&t| Piece::Lift(absolute_values(t))),
    );
    for t in TARGETS.iter().filter(|t| options.targets.contains(t)) {
        for &e in &options.types {
            out.push(Piece::Lower {
                target: *t,
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
pub fn cost_models(db: &Database) -> Result<Vec<CostModel>> {
    TARGETS
        .iter()
        .map(|t| {
            let instructions = db.instructions(&Filter {
                isa: Some(t.isa),
                features: Some(t.features),
            })?;
            Ok(CostModel::new(*t, instructions))
        })
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

/// What a run did with one piece.
#[derive(Debug, Clone, Serialize)]
pub struct PieceSummary {
    /// The piece (`lift u8`, `lower neon i16`).
    pub piece: String,
    /// Whether it was searched (false: its inputs are unchanged).
    pub searched: bool,
    /// What the search counted.
    pub tally: Option<Tally>,
    /// Rules it found.
    pub rules: usize,
    /// Its wall time.
    pub wall_ms: f64,
}

/// What one `isadb synth` run did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The run's key: its finish time and `all` or `shard K/N`.
    pub run: String,
    /// Every piece of the run, searched or unchanged.
    pub pieces: Vec<PieceSummary>,
    /// Synthesized rules by kind and target (`lift`, `lower neon`, ...), over the whole
    /// database (or the shard's rows).
    pub by_kind: Vec<(String, usize)>,
    /// Synthesized rules by verification status.
    pub proven: usize,
    #[allow(missing_docs)]
    pub refuted: usize,
    #[allow(missing_docs)]
    pub unknown: usize,
    /// Wall time of the run.
    pub wall_ms: f64,
    /// Where a shard's CSV rows were written.
    pub out: Option<PathBuf>,
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
                .ok_or_else(|| Error::Usage(format!("no cost model for {}", target.name)))?;
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
    project: &Project,
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
                    let m = rule_macros(&load_macros(&project.specs)?.macros)?;
                    let models = cost_models(&project.open()?)?;
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

fn progress(shown: bool, len: usize, what: &str) -> Option<indicatif::ProgressBar> {
    (shown && len > 0).then(|| {
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

/// `isadb synth`: searches the pieces whose inputs changed (all with `options.force`, the
/// shard's with `options.shard`), proves the rules found and stores the run, into the project's
/// database and `rules.db/`, or as CSV rows in `options.out`. `progress` shows progress bars on
/// stderr.
pub fn synth(project: &Project, options: &Options, progress_bars: bool) -> Result<Report> {
    if options.shard.is_some() && options.out.is_none() {
        return Err(Error::Usage(
            "--shard needs --out DIR for the shard's CSV rows".into(),
        ));
    }
    let started = Instant::now();
    let started_at = crate::clock::now();
    let mut db = project.open()?;
    let spec = load_macros(&project.specs)?;
    let macros = rule_macros(&spec.macros)?;
    let chosen: Vec<Piece> = pieces(options)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| options.shard.is_none_or(|s| s.holds(*i)))
        .map(|(_, p)| p)
        .collect();
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
    let bar = progress(progress_bars, todo.len(), "pieces");
    let searched = parallel(
        project,
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
    let bar = progress(progress_bars, unique.len(), "rules proven");
    let verdicts: HashMap<String, RuleVerdict> = parallel(
        project,
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
    let shard = options.shard.map(|s| s.to_string());
    let finished_at = crate::clock::now();
    let run = RunRecord {
        key: format!(
            "{finished_at} {}",
            shard
                .as_deref()
                .map_or("all".to_string(), |s| format!("shard {s}"))
        ),
        started_at,
        finished_at,
        targets: options
            .targets
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(" "),
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
            db.export_tables(&project.tables, &tables)?;
            db
        }
    };
    report_of(&report_db, run.key, summaries, wall_ms, options.out.clone())
}

fn report_of(
    db: &Database,
    run: String,
    pieces: Vec<PieceSummary>,
    wall_ms: f64,
    out: Option<PathBuf>,
) -> Result<Report> {
    let by_kind = db
        .text_rows(
            "SELECT kind || coalesce(' ' || target, ''), CAST(count(*) AS TEXT) FROM rules
             WHERE provenance = 'synthesized' GROUP BY 1 ORDER BY 1",
        )?
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap_or(0)))
        .collect();
    let count = |status: RuleStatus| -> Result<usize> {
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
        proven: count(RuleStatus::Proven)?,
        refuted: count(RuleStatus::Refuted)?,
        unknown: count(RuleStatus::Unknown)?,
        wall_ms,
        out,
    })
}

/// `isadb db import --merge DIR`: adds the CSV rows of `synth --shard` runs in `dir` to the
/// project's tables (a row replaces the one with its key: a rule's name, a search piece), drops
/// the synthesized rules no piece lists any more, as a whole run does, and writes the tables
/// back to `rules.db/`; returns how many tables were merged.
pub fn merge_shards(project: &Project, dir: &Path) -> Result<usize> {
    let present = project.tables_to_import(dir)?;
    let mut db = project.open()?;
    db.merge_tables(dir, &present)?;
    db.transaction(drop_unlisted)?;
    db.export_tables(&project.tables, &present)?;
    Ok(present.len())
}

/// What `isadb synth --rederive` found: the verdict on every hand-written rule against the
/// proven synthesized rules.
#[derive(Debug, Clone, Serialize)]
pub struct RederiveReport {
    /// One verdict per hand-written rule, in file order.
    pub rules: Vec<Rederived>,
    /// Proven synthesized rules they were derived with.
    pub synthesized: usize,
}

/// `isadb synth --rederive`: which hand-written rules the proven synthesized rules derive.
pub fn rederive_hand_rules(project: &Project) -> Result<RederiveReport> {
    let db = project.open()?;
    let macros = rule_macros(&load_macros(&project.specs)?.macros)?;
    let hand = load_rules(&project.specs)?;
    let proven: Vec<String> = crate::rules::stored_rules(&db, RuleStatus::Proven)?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let synthesized: Vec<Rule> = synthesized_rules(&db)?
        .into_iter()
        .filter(|r| proven.contains(&r.name))
        .collect();
    Ok(RederiveReport {
        rules: rederive(&hand, &synthesized, &macros)?,
        synthesized: synthesized.len(),
    })
}
