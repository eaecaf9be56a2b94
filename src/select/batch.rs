//! `isadb compile --batch`: many expressions at once. Each target's rules are compiled into
//! egglog once per chunk of expressions rather than once per expression (one program declares
//! the rewrites any of them can use, and saturates and extracts them together; see
//! [`Selector::select_many`]), and the z3 proofs run on worker threads while selection goes on.
//! A chunk whose program fails (a budget, an expression that cannot be grounded) is split in
//! halves until the failing expression stands alone with its own error, and the chunks after
//! it are smaller.

use super::compile::{Compiled, Extracted, Selector};
use super::node::Node;
use super::program::agree_on_variables;
use super::prove::{prove_selection, Proof};
use super::steps::steps;
use crate::error::{Error, Result};
use crate::ir::{Elem, Expr, VecType};
use crate::project::Project;
use crate::spec::Target;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Expressions selected together in one egglog program, at first; after a chunk whose program
/// passed a budget, half as many, down to [`MIN_CHUNK`].
pub const CHUNK: usize = 64;
/// The fewest expressions of a chunk after halving.
pub const MIN_CHUNK: usize = 4;

/// One expression of a batch.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its line in the batch file (1-based).
    pub line: usize,
    /// The target it is selected for.
    pub target: Target,
    /// The expression as written.
    pub text: String,
    /// Lanes of the result (default: the widest variable fills one register).
    pub lanes: Option<u32>,
}

/// A JSONL line: `{"expr": "...", "target": "neon", "lanes": 16}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonItem {
    expr: String,
    target: Option<String>,
    lanes: Option<u32>,
}

/// Reads a batch: one expression per line (for `target`), or a JSON object per line with
/// `expr` and optionally `target` and `lanes`; blank lines and lines starting with `#` are
/// skipped. A line that cannot be read is an error naming the file and line.
pub fn read(path: &Path, target: Option<Target>) -> Result<Vec<Item>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(&text, &path.display().to_string(), target)
}

/// Reads a batch from its text; `file` names it in errors.
pub fn parse(text: &str, file: &str, target: Option<Target>) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let at = |m: String| Error::Usage(format!("{file}:{line_no}: {m}"));
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let item = if trimmed.starts_with('{') {
            let json: JsonItem = serde_json::from_str(trimmed)
                .map_err(|e| at(format!("not a batch JSON object: {e}")))?;
            let target = match json.target {
                Some(name) => Target::parse(&name).map_err(|e| at(format!("target: {e}")))?,
                None => target
                    .ok_or_else(|| at("no \"target\" here and no --target given".to_string()))?,
            };
            Item {
                line: line_no,
                target,
                text: json.expr,
                lanes: json.lanes,
            }
        } else {
            Item {
                line: line_no,
                target: target
                    .ok_or_else(|| at("a plain expression needs --target".to_string()))?,
                text: trimmed.to_string(),
                lanes: None,
            }
        };
        items.push(item);
    }
    if items.is_empty() {
        return Err(Error::Usage(format!("{file}: no expressions in the batch")));
    }
    Ok(items)
}

/// A selection, proven.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The result's type.
    pub result: VecType,
    /// The sequence's cost.
    pub cost: f64,
    /// The instructions called, in order (one per distinct instruction node).
    pub calls: Vec<String>,
    /// The operators computed lane by lane.
    pub scalarized: Vec<String>,
    /// How it was proven.
    pub proof: Proof,
    /// Time of its proof.
    pub prove_ms: f64,
}

/// One expression's outcome.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The expression.
    pub item: Item,
    /// Its proven selection, or why there is none.
    pub outcome: std::result::Result<Selected, String>,
}

/// What a batch did.
pub struct Report {
    /// Every expression, in the order of the file.
    pub entries: Vec<Entry>,
    /// Proof threads.
    pub jobs: usize,
    /// egglog programs run (one per chunk, more where a chunk was split).
    pub programs: usize,
    /// Time spent loading catalogs, elaborating and selecting (the selecting thread).
    pub select_ms: f64,
    /// From the start to the last proof.
    pub wall_ms: f64,
}

impl Report {
    /// Expressions with a proven selection.
    pub fn selected(&self) -> usize {
        self.entries.iter().filter(|e| e.outcome.is_ok()).count()
    }
}

/// A selection sent to a proof thread: enough to rebuild it there (terms hold `Rc`s).
struct ProofJob {
    index: usize,
    target: Target,
    text: String,
    /// The lanes the expression was elaborated at (not its result's: `reduce-add` halves them).
    lanes: Option<u32>,
    extracted: String,
}

type ProofAnswer = (usize, std::result::Result<(Proof, f64), String>);

/// Selects and proves every item: selection on this thread, chunk by chunk per target, proofs
/// on `jobs` threads.
pub fn run(
    project: &Project,
    items: Vec<Item>,
    declared: &HashMap<String, Elem>,
    jobs: usize,
) -> Result<Report> {
    let started = Instant::now();
    let (job_tx, job_rx) = mpsc::channel::<ProofJob>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (answer_tx, answer_rx) = mpsc::channel::<ProofAnswer>();
    let workers: Vec<_> = (0..jobs)
        .map(|_| {
            let (jobs, answers) = (job_rx.clone(), answer_tx.clone());
            let (project, declared) = (project.clone(), declared.clone());
            std::thread::spawn(move || prove_jobs(&project, &declared, &jobs, &answers))
        })
        .collect();
    drop(answer_tx);
    let mut pending: Vec<Option<std::result::Result<Selected, String>>> = vec![None; items.len()];
    let mut programs = 0;
    let mut targets: Vec<Target> = Vec::new();
    for item in &items {
        if !targets.contains(&item.target) {
            targets.push(item.target);
        }
    }
    for target in targets {
        let mut selector = Selector::load(project, target)?;
        let mut inputs: Vec<(usize, Rc<Expr>)> = Vec::new();
        for (index, item) in items.iter().enumerate().filter(|(_, i)| i.target == target) {
            match selector.elaborate(&item.text, item.lanes, declared) {
                Ok(input) => inputs.push((index, input)),
                Err(e) => pending[index] = Some(Err(e.to_string())),
            }
        }
        let mut size = CHUNK;
        let mut rest = inputs.as_slice();
        while !rest.is_empty() {
            let chunk = next_chunk(rest, size);
            rest = &rest[chunk.len()..];
            let mut selections = Vec::new();
            let ran = select_chunk(&mut selector, chunk, &mut selections);
            programs += ran;
            if ran > 1 {
                // A chunk past the budget: the next ones are smaller.
                size = (size / 2).max(MIN_CHUNK);
            }
            for (index, input, selection) in selections {
                let item = &items[index];
                match selection {
                    Ok((extracted, root)) => {
                        pending[index] = Some(Ok(describe(&selector, item, input.clone(), root)));
                        let job = ProofJob {
                            index,
                            target,
                            text: item.text.clone(),
                            lanes: item.lanes,
                            extracted,
                        };
                        job_tx
                            .send(job)
                            .map_err(|_| Error::Tool("the proof threads stopped".into()))?;
                    }
                    Err(e) => pending[index] = Some(Err(e)),
                }
            }
        }
    }
    let select_ms = started.elapsed().as_secs_f64() * 1e3;
    drop(job_tx);
    for (index, answer) in answer_rx {
        let slot = &mut pending[index];
        *slot = match (slot.take(), answer) {
            (Some(Ok(selected)), Ok((proof, prove_ms))) => Some(Ok(Selected {
                proof,
                prove_ms,
                ..selected
            })),
            (_, Err(e)) => Some(Err(e)),
            (other, _) => other,
        };
    }
    for w in workers {
        w.join()
            .map_err(|_| Error::Tool("a proof thread panicked".into()))?;
    }
    let entries = items
        .into_iter()
        .zip(pending)
        .map(|(item, outcome)| Entry {
            item,
            outcome: outcome.unwrap_or_else(|| Err("not selected".to_string())),
        })
        .collect();
    Ok(Report {
        entries,
        jobs,
        programs,
        select_ms,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// The longest prefix of `inputs`, at most `size` long, that agrees on its variables.
fn next_chunk(inputs: &[(usize, Rc<Expr>)], size: usize) -> &[(usize, Rc<Expr>)] {
    let mut len = 1;
    while len < size.min(inputs.len()) && agree_on_variables(inputs[..=len].iter().map(|(_, e)| e))
    {
        len += 1;
    }
    &inputs[..len]
}

/// One input's selection, or why it has none.
type Selection = std::result::Result<Extracted, String>;

/// Selects a chunk with one program, splitting it in halves while its program fails; the
/// number of programs run.
fn select_chunk(
    selector: &mut Selector,
    chunk: &[(usize, Rc<Expr>)],
    out: &mut Vec<(usize, Rc<Expr>, Selection)>,
) -> usize {
    let inputs: Vec<Rc<Expr>> = chunk.iter().map(|(_, e)| e.clone()).collect();
    match selector.select_many(&inputs) {
        Ok(selections) => {
            for ((index, input), s) in chunk.iter().zip(selections) {
                out.push((*index, input.clone(), s.map_err(|e| e.to_string())));
            }
            1
        }
        Err(e) if chunk.len() == 1 => {
            out.push((chunk[0].0, chunk[0].1.clone(), Err(e.to_string())));
            1
        }
        Err(_) => {
            let (a, b) = chunk.split_at(chunk.len() / 2);
            1 + select_chunk(selector, a, out) + select_chunk(selector, b, out)
        }
    }
}

/// The selection's cost, calls and scalarized operators (its proof still to come).
fn describe(selector: &Selector, item: &Item, input: Rc<Expr>, root: Rc<Node>) -> Selected {
    let catalog = &selector.catalog;
    let compiled = Compiled {
        source: item.text.clone(),
        cost: root.cost(catalog),
        input,
        root,
        program: None,
        select_ms: 0.0,
        validate_ms: 0.0,
        cached: false,
        proof: None,
    };
    let (steps, _) = steps(&compiled, catalog);
    Selected {
        result: compiled.input.ty,
        cost: compiled.cost,
        calls: steps.into_iter().map(|s| s.call).collect(),
        scalarized: compiled.root.scalarized(),
        proof: Proof::Z3,
        prove_ms: 0.0,
    }
}

/// A proof thread: takes selections until the channel closes, each target's catalog loaded on
/// first use.
fn prove_jobs(
    project: &Project,
    declared: &HashMap<String, Elem>,
    jobs: &Mutex<mpsc::Receiver<ProofJob>>,
    answers: &mpsc::Sender<ProofAnswer>,
) {
    let mut selectors: HashMap<&'static str, Selector> = HashMap::new();
    loop {
        let job = match jobs.lock() {
            Ok(rx) => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let answer = prove_job(project, declared, &mut selectors, &job)
            .or_else(|_| prove_in_a_fresh_context(project, declared, &job))
            .map_err(|e| e.to_string());
        if answers.send((job.index, answer)).is_err() {
            return;
        }
    }
}

/// `job` proven again on a new thread, whose z3 context is new: how long z3 takes depends on
/// what its context saw before (on AVX-512, `x_u32 % 7` proves in 6 s alone and times out
/// after the 150 proofs before it in the corpus).
fn prove_in_a_fresh_context(
    project: &Project,
    declared: &HashMap<String, Elem>,
    job: &ProofJob,
) -> Result<(Proof, f64)> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| prove_job(project, declared, &mut HashMap::new(), job))
            .join()
            .map_err(|_| Error::Tool("a proof thread panicked".into()))?
    })
}

fn prove_job(
    project: &Project,
    declared: &HashMap<String, Elem>,
    selectors: &mut HashMap<&'static str, Selector>,
    job: &ProofJob,
) -> Result<(Proof, f64)> {
    let selector = match selectors.entry(job.target.name) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(Selector::load(project, job.target)?)
        }
    };
    let started = Instant::now();
    let input = selector.elaborate(&job.text, job.lanes, declared)?;
    let root = selector.read(&job.extracted)?;
    let proof = prove_selection(&selector.catalog, &input, &root)?;
    Ok((proof, started.elapsed().as_secs_f64() * 1e3))
}
