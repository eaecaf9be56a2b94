//! `isadb compile --batch`: many expressions at once. Each target's rules are compiled into
//! egglog once per chunk of expressions rather than once per expression (one program declares
//! the rewrites any of them can use, and saturates and extracts them together; see
//! [`Selector::select_many`]). The chunks go to `--jobs` worker threads, each selecting a chunk
//! and proving its selections with z3 before it takes the next. A chunk whose program fails (a
//! budget, an expression that cannot be grounded) is split in halves until the failing
//! expression stands alone with its own error.

use super::compile::{Compiled, Extracted, Selector};
use super::node::Node;
use super::prove::{Proof, VALIDATION_TIMEOUT_MS};
use super::steps::steps;
use crate::error::{Error, Result};
use crate::ir::{Elem, Expr, VecType};
use crate::project::Project;
use crate::spec::Target;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::Instant;

/// Expressions selected together in one egglog program, at most.
pub const CHUNK: usize = 64;

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
    /// Worker threads.
    pub jobs: usize,
    /// egglog programs run (one per chunk, more where a chunk was split).
    pub programs: usize,
    /// Time spent loading catalogs, elaborating and selecting, summed over the workers.
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

/// Expressions of one target selected with one program (at first: a chunk whose program fails
/// is split), by their index in the batch.
struct Chunk {
    target: Target,
    items: Vec<usize>,
}

/// What one worker did.
#[derive(Default)]
struct Worked {
    outcomes: Vec<(usize, std::result::Result<Selected, String>)>,
    programs: usize,
    select_ms: f64,
}

/// Selects and proves every item on `jobs` worker threads, each taking the next chunk of
/// expressions, selecting it with one program and proving what it selected. The chunks are
/// cut on this thread beforehand, each target's in the order of the file, so a batch selects
/// the same whatever the number of workers.
pub fn run(
    project: &Project,
    items: Vec<Item>,
    declared: &HashMap<String, Elem>,
    jobs: usize,
) -> Result<Report> {
    let started = Instant::now();
    let mut pending: Vec<Option<std::result::Result<Selected, String>>> = vec![None; items.len()];
    let chunks = cut(project, &items, declared, &mut pending)?;
    let mut select_ms = started.elapsed().as_secs_f64() * 1e3;
    let queue = Mutex::new(chunks.into_iter());
    let worked: Vec<Result<Worked>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| scope.spawn(|| work(project, &items, declared, &queue)))
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| Error::Tool("a batch worker panicked".into()))?
            })
            .collect()
    });
    let mut programs = 0;
    for w in worked {
        let w = w?;
        programs += w.programs;
        select_ms += w.select_ms;
        for (index, outcome) in w.outcomes {
            pending[index] = Some(outcome);
        }
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

/// The chunks of the batch: each target's expressions that elaborate, in the order of the
/// file, [`CHUNK`] at most to a chunk and agreeing on their variables; an expression that does
/// not elaborate gets its error in `pending`.
fn cut(
    project: &Project,
    items: &[Item],
    declared: &HashMap<String, Elem>,
    pending: &mut [Option<std::result::Result<Selected, String>>],
) -> Result<Vec<Chunk>> {
    let mut targets: Vec<Target> = Vec::new();
    for item in items {
        if !targets.contains(&item.target) {
            targets.push(item.target);
        }
    }
    let mut chunks = Vec::new();
    for target in targets {
        let selector = Selector::load(project, target)?;
        let mut inputs: Vec<(usize, Rc<Expr>)> = Vec::new();
        for (index, item) in items.iter().enumerate().filter(|(_, i)| i.target == target) {
            match elaborate(&selector, item, declared) {
                Ok((_, selected)) => inputs.push((index, selected)),
                Err(e) => pending[index] = Some(Err(e.to_string())),
            }
        }
        let mut rest = inputs.as_slice();
        while !rest.is_empty() {
            let chunk = next_chunk(rest, CHUNK);
            rest = &rest[chunk.len()..];
            chunks.push(Chunk {
                target,
                items: chunk.iter().map(|(index, _)| *index).collect(),
            });
        }
    }
    Ok(chunks)
}

/// A worker: takes chunks until none is left, selects each (its own selector per target,
/// loaded on first use) and proves what it selected.
fn work(
    project: &Project,
    items: &[Item],
    declared: &HashMap<String, Elem>,
    queue: &Mutex<std::vec::IntoIter<Chunk>>,
) -> Result<Worked> {
    let mut selectors: HashMap<&'static str, Selector> = HashMap::new();
    let mut worked = Worked::default();
    loop {
        let next = queue
            .lock()
            .map_err(|_| Error::Tool("a batch worker panicked".into()))?
            .next();
        let Some(chunk) = next else {
            return Ok(worked);
        };
        let started = Instant::now();
        let selector = selector_of(project, chunk.target, &mut selectors)?;
        let mut inputs = Vec::new();
        let mut own = HashMap::new();
        for &index in &chunk.items {
            let item = &items[index];
            match elaborate(selector, item, declared) {
                Ok((input, selected)) => {
                    inputs.push((index, selected));
                    own.insert(index, input);
                }
                Err(e) => worked.outcomes.push((index, Err(e.to_string()))),
            }
        }
        let mut selections = Vec::new();
        worked.programs += select_chunk(selector, &inputs, &mut selections);
        worked.select_ms += started.elapsed().as_secs_f64() * 1e3;
        for (index, selected, selection) in selections {
            let item = &items[index];
            let input = own.remove(&index).unwrap_or(selected.clone());
            // A padded input's selection is the low lanes of its own.
            let selection = match input.ty.lanes == selected.ty.lanes {
                true => selection,
                false => selection
                    .and_then(|(wide, _)| {
                        selector
                            .low_lanes(&input, &wide)
                            .ok_or_else(|| "the padded selection's low lanes differ".to_string())
                    })
                    .map(|padded| own_if_cheaper(selector, &input, padded)),
            };
            let outcome = selection.and_then(|(_, root)| {
                let proving = Instant::now();
                let (root, proof) = selector
                    .proven_or_scalarized(&input, root, VALIDATION_TIMEOUT_MS)
                    .map_err(|e| e.to_string())?;
                let selected = describe(selector, item, input.clone(), root);
                Ok(Selected {
                    proof,
                    prove_ms: proving.elapsed().as_secs_f64() * 1e3,
                    ..selected
                })
            });
            worked.outcomes.push((index, outcome));
        }
    }
}

/// An item's input, and what is selected for it: the input, or its padded form where its lane
/// count is not one the rules reach ([`Selector::padded`]).
fn elaborate(
    selector: &Selector,
    item: &Item,
    declared: &HashMap<String, Elem>,
) -> Result<(Rc<Expr>, Rc<Expr>)> {
    let input = selector.elaborate(&item.text, item.lanes, declared)?;
    let selected = selector
        .padded(&item.text, &input, declared)
        .unwrap_or_else(|| input.clone());
    Ok((input, selected))
}

/// A padded input's selection `padded`, or the input selected at its own lane count where
/// that may be cheaper ([`Selector::own_lanes_may_be_cheaper`]) and is, as `compile` chooses
/// alone.
fn own_if_cheaper(selector: &mut Selector, input: &Rc<Expr>, padded: Extracted) -> Extracted {
    if !selector.own_lanes_may_be_cheaper(input, &padded.1) {
        return padded;
    }
    match selector.select(input) {
        Ok((_, text, root)) if root.cost(&selector.catalog) <= padded.1.cost(&selector.catalog) => {
            (text, root)
        }
        _ => padded,
    }
}

/// The worker's selector of `target`, loaded on first use.
fn selector_of<'s>(
    project: &Project,
    target: Target,
    selectors: &'s mut HashMap<&'static str, Selector>,
) -> Result<&'s mut Selector> {
    Ok(match selectors.entry(target.name) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(Selector::load(project, target)?),
    })
}

/// The longest prefix of `inputs`, at most `size` long, that agrees on its variables.
pub(crate) fn next_chunk(inputs: &[(usize, Rc<Expr>)], size: usize) -> &[(usize, Rc<Expr>)] {
    let mut len = 1;
    while len < size.min(inputs.len()) && agree_on_variables(inputs[..=len].iter().map(|(_, e)| e))
    {
        len += 1;
    }
    &inputs[..len]
}

/// One input's selection, or why it has none.
pub(crate) type Selection = std::result::Result<Extracted, String>;

/// Selects a chunk with one program, splitting it in halves while its program fails, and the
/// inputs a program left unsettled with another of their own; the number of programs run.
pub(crate) fn select_chunk(
    selector: &mut Selector,
    chunk: &[(usize, Rc<Expr>)],
    out: &mut Vec<(usize, Rc<Expr>, Selection)>,
) -> usize {
    let inputs: Vec<Rc<Expr>> = chunk.iter().map(|(_, e)| e.clone()).collect();
    match selector.select_many(&inputs) {
        Ok(selections) => {
            let mut unsettled = Vec::new();
            for ((index, input), s) in chunk.iter().zip(selections) {
                match s {
                    Some(s) => out.push((*index, input.clone(), s.map_err(|e| e.to_string()))),
                    None => unsettled.push((*index, input.clone())),
                }
            }
            match unsettled.is_empty() {
                true => 1,
                false => 1 + select_chunk(selector, &unsettled, out),
            }
        }
        Err(e) if chunk.len() == 1 => {
            let (index, input) = &chunk[0];
            let selection = match e {
                Error::Budget(_) => selector
                    .select_past_budget(input, e)
                    .map(|(_, text, root)| (text, root)),
                e => Err(e),
            };
            out.push((*index, input.clone(), selection.map_err(|e| e.to_string())));
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

/// Whether the inputs can share one program: every variable name has one type among them
/// (a variable's parts are named by the variable alone).
pub fn agree_on_variables<'a>(inputs: impl IntoIterator<Item = &'a Rc<Expr>>) -> bool {
    let mut types = HashMap::new();
    inputs.into_iter().all(|input| {
        input
            .vars()
            .iter()
            .all(|(name, ty)| *types.entry(name.clone()).or_insert(*ty) == *ty)
    })
}
