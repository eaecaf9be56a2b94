//! Running a generated program in egglog: equality saturation in phases, then extraction of the
//! cheapest term, returned as the egglog text it prints (what the selection cache stores).
//!
//! The program's schedules are run step by step here rather than inside egglog, so that the
//! work has budgets ([`Budget`]): before every ruleset iteration the e-graph's size times the
//! growth of that ruleset's last iteration is checked against the size budget (one iteration
//! can multiply the e-graph, and its memory, several times over), and after it the time spent;
//! a run past either ends with a one-line error naming the budget instead of growing for
//! minutes and gigabytes (a 30-term sum grows 5x per simplify iteration).
//!
//! A `repeat` also stops once every root has a term of instructions and no root got cheaper
//! in [`PATIENCE`] iterations: lowering keeps growing the e-graph (about 1.5x per iteration)
//! long after the cheapest sequence is in it. In the last `repeat`, each root is extracted at
//! the iteration it settles so, where a program of its own would have stopped; a program of
//! several roots (a batch chunk) ends it once all but a few have settled, and leaves those for
//! a program of their own rather than growing the whole chunk's e-graph for them.

use super::extract::{Graph, LookAhead, Unlowered};
use super::pending::Pending;
use super::program::Program;
use super::term::{self, Rewrite, OPERATOR_COST};
use super::throttle::MatchLimit;
use crate::error::{Error, Result};
use egglog::ast::{Command, GenericSchedule, Schedule};
use egglog::scheduler::SchedulerId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bounds of one selection run.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The most tuples (e-nodes and analysis facts) the e-graph may hold.
    pub max_tuples: usize,
    /// The longest the saturation may take.
    pub max_time: Duration,
}

impl Budget {
    /// 1,000,000 tuples (the acceptance expressions stay under 10,000) and 60 seconds.
    pub const DEFAULT: Budget = Budget {
        max_tuples: 1_000_000,
        max_time: Duration::from_secs(60),
    };
}

/// Iterations of a `repeat` in which no root got cheaper after which it stops, once every root
/// has a term of instructions. Measured on the selection corpus (1,096 expressions, each
/// iteration's costs recorded, alone and in batch chunks): one iteration loses a cheaper
/// sequence for 4 AVX2 expressions (a scalarized lane found two iterations later), two lose
/// none.
pub const PATIENCE: usize = 2;

/// A program of several roots ends its last `repeat` once at most one in this many of its roots
/// has not settled. On the AVX2 selection corpus's first chunk (64 expressions) the two
/// iterations the last few roots needed grew the e-graph from 180,000 to 600,000 tuples and took
/// half of the saturation.
pub const UNSETTLED_FRACTION: usize = 8;

/// A root's extracted terms (egglog text): the cheapest with operators left unlowered priced
/// last, and where it differs, the cheapest with those at one lane priced as scalar code
/// ([`Unlowered`]); which is cheaper shows once the selection is read back and refined.
pub type Candidates = Vec<String>;

/// Runs the program under [`Budget::DEFAULT`]; the first root's extracted terms.
pub fn run(program: &Program) -> Result<Candidates> {
    run_within(program, Budget::DEFAULT)?
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| Error::data("egglog", "the program extracted nothing"))
}

/// Runs the program under `budget`; the extracted terms, in the order the program extracts
/// them, or none for a root the program left unsettled (see the module's notes).
pub fn run_within(program: &Program, budget: Budget) -> Result<Vec<Option<Candidates>>> {
    let mut egraph = egglog::EGraph::default();
    let (text, rewrites, constructors) = without_rewrites(program);
    let commands = egraph.parse_program(None, &text).map_err(egglog_error)?;
    // Every root is extracted at the end, with one computation of the costs.
    let roots: Vec<egglog::ast::Expr> = commands
        .iter()
        .filter_map(|command| match command {
            Command::Extract(_, root, _) => Some(root.clone()),
            _ => None,
        })
        .collect();
    let last_repeat = commands.iter().rev().find_map(|command| match command {
        Command::RunSchedule(schedule) => last_repeat(schedule),
        _ => None,
    });
    let mut steps = Steps {
        look_aheads: program.look_aheads,
        extracted: vec![None; roots.len()],
        budget,
        started: Instant::now(),
        growth: HashMap::new(),
        roots: roots.clone(),
        pending: Pending::new(rewrites, constructors),
        limited: None,
        last_repeat,
        unsettled: Vec::new(),
    };
    for command in &commands {
        match command {
            Command::Extract(..) => {}
            Command::RunSchedule(schedule) => {
                steps.run(&mut egraph, schedule)?;
            }
            command => {
                _ = egraph
                    .run_program(vec![command.clone()])
                    .map_err(egglog_error)?
            }
        }
    }
    let mut extracted = steps.extracted;
    if extracted.iter().any(Option::is_none) {
        let values = root_values(&mut egraph, &roots)?;
        let [last, priced] =
            [Unlowered::Last, Unlowered::OneLaneAsScalar].map(|u| Graph::read(&egraph, u));
        let moved = last.moves_as_found();
        for (index, value) in values.into_iter().enumerate() {
            if extracted[index].is_none() && !steps.unsettled.contains(&index) {
                let graphs = [&last, &priced, &moved];
                let terms = extract(&graphs, &mut egraph, value, program.look_aheads)?;
                extracted[index] = Some(terms);
            }
        }
    }
    Ok(extracted)
}

/// The last `repeat` a schedule runs, where it ends with one.
fn last_repeat(schedule: &Schedule) -> Option<*const Schedule> {
    match schedule {
        GenericSchedule::Repeat(..) => Some(schedule as *const Schedule),
        GenericSchedule::Sequence(_, parts) => parts.last().and_then(last_repeat),
        _ => None,
    }
}

/// The program's egglog text without its rewrites and instruction constructors, and those
/// (declared on demand, see [`Pending`]): a program names hundreds of instructions, of which a
/// selection's e-graph meets a few.
fn without_rewrites(program: &Program) -> (String, Vec<&Rewrite>, Vec<(String, String)>) {
    let mut text = String::new();
    let mut rewrites = Vec::new();
    let mut constructors = Vec::new();
    for command in &program.commands {
        match command {
            term::Command::Rewrite(r) => rewrites.push(r.as_ref()),
            term::Command::Instruction { name, .. } => {
                constructors.push((name.clone(), command.to_string()))
            }
            other => text.push_str(&other.to_string()),
        }
    }
    (text, rewrites, constructors)
}

/// The cheapest terms of a root, as text, from readings of the e-graph ([`Graph`]) in their
/// prices, without repeats: in each, its cheapest tree, and the terms chosen with shared
/// sub-terms counted once ([`Graph::extract`], with each of `look_aheads` in turn) that cost
/// less as a DAG than the tree. All are kept, not only the cheapest: they are priced before
/// the moves they leave are searched for, and the cheapest can refine dearer (NEON's
/// `_mm256_blend_ps` at 10: the shared look-ahead's term left a concatenation no move
/// computes, cost 49; the tree's is two `ins`, 2).
fn extract(
    graphs: &[&Graph],
    egraph: &mut egglog::EGraph,
    value: egglog::Value,
    look_aheads: &[LookAhead],
) -> Result<Candidates> {
    let mut terms: Candidates = Vec::new();
    for graph in graphs {
        for term in extract_from(graph, egraph, value, look_aheads)? {
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    Ok(terms)
}

/// The root's cheapest terms in one graph's prices: the tree, and the look-aheads' terms that
/// cost less than it as a DAG.
fn extract_from(
    graph: &Graph,
    egraph: &mut egglog::EGraph,
    value: egglog::Value,
    look_aheads: &[LookAhead],
) -> Result<Vec<String>> {
    let (_, tree) = graph
        .tree_term(egraph, value)
        .ok_or_else(|| Error::data("egglog", "a root has no term to extract"))?;
    let Some(tree_dag) = graph.dag_cost(&tree) else {
        return Ok(vec![tree]);
    };
    let mut terms: Vec<(u64, String)> = std::iter::once((tree_dag, tree))
        .chain(
            look_aheads
                .iter()
                .filter_map(|&look_ahead| graph.extract(egraph, value, look_ahead))
                .filter(|(dag, _)| *dag < tree_dag),
        )
        .collect();
    // The cheapest as a DAG first (the first of equal cost): selections that refine to equal
    // costs keep it.
    let cheapest = (0..terms.len()).min_by_key(|&k| terms[k].0).unwrap_or(0);
    terms[..=cheapest].rotate_right(1);
    Ok(terms.into_iter().map(|(_, text)| text).collect())
}

/// The e-graph values of the roots.
fn root_values(
    egraph: &mut egglog::EGraph,
    roots: &[egglog::ast::Expr],
) -> Result<Vec<egglog::Value>> {
    roots
        .iter()
        .map(|r| Ok(egraph.eval_expr(r).map_err(egglog_error)?.1))
        .collect()
}

/// A schedule interpreted as egglog does (`repeat` stops early when nothing changes,
/// `saturate` runs to a fixpoint), with the budget checked after every step.
struct Steps<'p> {
    budget: Budget,
    started: Instant,
    /// How many times over each ruleset's last two iterations grew the e-graph (the last, the
    /// one before).
    growth: HashMap<String, (f64, f64)>,
    /// The terms the program extracts, whose costs end a `repeat` early.
    roots: Vec<egglog::ast::Expr>,
    /// The program's rewrites, declared once the e-graph can match them.
    pending: Pending<'p>,
    /// The scheduler capping each rule's matches per iteration, once the e-graph is expected
    /// to pass a quarter of the budget ([`MatchLimit`]), with the most matches a rule had;
    /// from then on every step uses it, and one that held matches back ends the run.
    limited: Option<(SchedulerId, Arc<AtomicUsize>)>,
    /// The schedule's last `repeat`, in which roots are extracted as they settle and which a
    /// program of several roots may end early.
    last_repeat: Option<*const Schedule>,
    /// The extraction's look-aheads.
    look_aheads: &'p [LookAhead],
    /// Each root's term, once extracted.
    extracted: Vec<Option<Candidates>>,
    /// The roots (by index) left unsettled where the last `repeat` ended early.
    unsettled: Vec<usize>,
}

/// The e-graph size, as a fraction of the budget, past which iterations are capped.
const LIMITED_FROM: usize = 4;
/// The most matches of one rule an iteration applies once capped, as a fraction of the budget
/// (at a 4th and at a 16th the corpus ran its 20 programs as before; at a 64th its chunks split
/// into 60).
const MATCHES_PER_RULE_FRACTION: usize = 16;

/// Each root's cost over the iterations of one `repeat` (none while it has no term of
/// instructions), and for how many iterations it has not changed.
#[derive(Default)]
struct Settling {
    costs: Vec<Option<u64>>,
    unchanged: Vec<usize>,
}

/// What one step did: whether the e-graph changed, and whether a `repeat` may stop.
struct Progress {
    updated: bool,
    can_stop: bool,
}

impl Steps<'_> {
    fn run(&mut self, egraph: &mut egglog::EGraph, schedule: &Schedule) -> Result<Progress> {
        match schedule {
            GenericSchedule::Run(_, config) if config.until.is_none() => {
                self.pending.declare(egraph, &config.ruleset)?;
                let before = egraph.num_tuples();
                let expected = self.check_growth(before, &config.ruleset)?;
                let per_rule = self.budget.max_tuples / MATCHES_PER_RULE_FRACTION;
                if self.limited.is_none() && expected > self.budget.max_tuples / LIMITED_FROM {
                    let limit = MatchLimit {
                        per_rule,
                        most: Arc::default(),
                    };
                    let most = limit.most.clone();
                    self.limited = Some((egraph.add_scheduler(Box::new(limit)), most));
                }
                let report = match &self.limited {
                    Some((id, _)) => egraph.step_rules_with_scheduler(*id, &config.ruleset),
                    None => egraph.step_rules(&config.ruleset),
                }
                .map_err(egglog_error)?;
                if let Some((_, most)) = &self.limited {
                    let most = most.load(Ordering::Relaxed);
                    if most > per_rule {
                        return Err(Error::Budget(format!(
                            "selection stopped: one rule of {} matched {most} times in one \
                             iteration of an e-graph of {before} tuples, past isadb's budget of \
                             {per_rule} matches per rule near its budget of {} tuples; split \
                             the expression into smaller ones",
                            config.ruleset, self.budget.max_tuples
                        )));
                    }
                }
                let after = egraph.num_tuples();
                let last = after as f64 / before.max(1) as f64;
                let previous = self.growth.get(&config.ruleset).map_or(1.0, |g| g.0);
                self.growth.insert(config.ruleset.clone(), (last, previous));
                self.check(egraph, &config.ruleset)?;
                Ok(Progress {
                    updated: report.updated,
                    can_stop: report.can_stop,
                })
            }
            GenericSchedule::Run(_, config) => {
                // `:until` is egglog's own: run the step there, judging change by the size.
                self.pending.declare(egraph, &config.ruleset)?;
                let before = egraph.num_tuples();
                egraph
                    .run_program(vec![Command::RunSchedule(schedule.clone())])
                    .map_err(egglog_error)?;
                self.check(egraph, &config.ruleset)?;
                let updated = egraph.num_tuples() != before;
                Ok(Progress {
                    updated,
                    can_stop: !updated,
                })
            }
            GenericSchedule::Repeat(_, times, inner) => {
                let mut all = Progress {
                    updated: false,
                    can_stop: true,
                };
                let mut settling = Settling::default();
                let last = self.last_repeat == Some(schedule as *const Schedule);
                for _ in 0..*times {
                    let step = self.run(egraph, inner)?;
                    all.updated |= step.updated;
                    if step.can_stop {
                        break;
                    }
                    let unsettled = self.unsettled(egraph, &mut settling, last)?;
                    let few = unsettled.len() * UNSETTLED_FRACTION <= self.roots.len();
                    let some_roots = !self.roots.is_empty();
                    if some_roots && (unsettled.is_empty() || (last && self.roots.len() > 1 && few))
                    {
                        self.unsettled = unsettled;
                        break;
                    }
                }
                Ok(all)
            }
            GenericSchedule::Saturate(_, inner) => {
                let mut updated = false;
                while self.run(egraph, inner)?.updated {
                    updated = true;
                }
                Ok(Progress {
                    updated,
                    can_stop: !updated,
                })
            }
            GenericSchedule::Sequence(_, parts) => {
                let mut all = Progress {
                    updated: false,
                    can_stop: true,
                };
                for part in parts {
                    let step = self.run(egraph, part)?;
                    all.updated |= step.updated;
                    all.can_stop &= step.can_stop;
                }
                Ok(all)
            }
        }
    }

    /// The roots (by index) that have no term of instructions yet or got cheaper in the last
    /// [`PATIENCE`] iterations (costs in an e-graph only fall); with `extract`, every other
    /// root not yet extracted is extracted now.
    fn unsettled(
        &mut self,
        egraph: &mut egglog::EGraph,
        settling: &mut Settling,
        extract: bool,
    ) -> Result<Vec<usize>> {
        let graph = Graph::read(egraph, Unlowered::Last);
        let mut priced: Option<[Graph; 2]> = None;
        let values = root_values(egraph, &self.roots)?;
        let costs: Vec<Option<u64>> = values
            .iter()
            .map(|&value| graph.tree_cost(value).filter(|&c| c < OPERATOR_COST))
            .collect();
        settling.unchanged.resize(costs.len(), 0);
        settling.costs.resize(costs.len(), None);
        let mut unsettled = Vec::new();
        for (index, cost) in costs.into_iter().enumerate() {
            if cost.is_some() && cost == settling.costs[index] {
                settling.unchanged[index] += 1;
            } else {
                settling.costs[index] = cost;
                settling.unchanged[index] = 0;
            }
            if settling.unchanged[index] < PATIENCE {
                unsettled.push(index);
            } else if extract && self.extracted[index].is_none() {
                let [priced, moved] = priced.get_or_insert_with(|| {
                    [
                        Graph::read(egraph, Unlowered::OneLaneAsScalar),
                        graph.moves_as_found(),
                    ]
                });
                let graphs = [&graph, &*priced, &*moved];
                let terms = self::extract(&graphs, egraph, values[index], self.look_aheads)?;
                self.extracted[index] = Some(terms);
            }
        }
        Ok(unsettled)
    }

    /// The size the next iteration of `ruleset` is expected to grow the e-graph to, and an
    /// error naming the size budget when that passes it: as many times over as its last
    /// iteration grew it, and where growth speeds up (the last iteration grew it more times over
    /// than the one before), that much faster again (a NEON lowering iteration that grew 15,000
    /// tuples 4.9 times over, after 1.6, was followed by one that grew 125,000 to 113 million).
    fn check_growth(&self, tuples: usize, ruleset: &str) -> Result<usize> {
        let (last, previous) = self.growth.get(ruleset).copied().unwrap_or((1.0, 1.0));
        let growth = last.max(1.0) * (last / previous.max(1.0)).max(1.0);
        if tuples as f64 * growth > self.budget.max_tuples as f64 {
            return Err(Error::Budget(format!(
                "selection stopped: the e-graph has {tuples} tuples and {ruleset} grew it \
                 {last:.1}x last time (next, at this pace, {growth:.1}x), past isadb's budget \
                 of {} tuples; split the expression into smaller ones",
                self.budget.max_tuples
            )));
        }
        Ok((tuples as f64 * growth) as usize)
    }

    /// An error naming the budget when the e-graph or the time has passed it.
    fn check(&self, egraph: &egglog::EGraph, ruleset: &str) -> Result<()> {
        let tuples = egraph.num_tuples();
        if tuples > self.budget.max_tuples {
            return Err(Error::Budget(format!(
                "selection stopped: the e-graph grew to {tuples} tuples (running {ruleset}), past \
                 isadb's budget of {} tuples; split the expression into smaller ones",
                self.budget.max_tuples
            )));
        }
        let spent = self.started.elapsed();
        if spent > self.budget.max_time {
            return Err(Error::Budget(format!(
                "selection stopped: saturation took {:.1} s (running {ruleset}), past isadb's \
                 budget of {} s; split the expression into smaller ones",
                spent.as_secs_f64(),
                self.budget.max_time.as_secs()
            )));
        }
        Ok(())
    }
}

/// egglog's multi-line message on one line.
fn egglog_error(e: egglog::Error) -> Error {
    Error::data("egglog", crate::error::one_line(&e))
}
