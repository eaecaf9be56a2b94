//! The compile pipeline: lift, vectorize by Isaria's loop (Figure 3: expansion then compilation
//! to a fixpoint of the extracted cost, each round in a fresh e-graph holding only the last
//! extracted program, then optimization), prove, lower, and optionally run.

use super::cost::{tree_cost, Model};
use super::extract::{build, choose};
use super::phase::Phase;
use super::program::{declarations, rules as rules_text, terms};
use super::read::Lifted;
use super::report::{Costs, Report, Round};
use super::rule::KernelRule;
use super::saturate::{share, Limits, PhaseRun, Session};
use super::target::Target;
use super::term::{Dag, Id};
use super::{lower, report, run, seed, validate};
use crate::error::Result;
use std::time::{Duration, Instant};

/// E-graph size (tuples) at which a phase stops.
pub const NODE_LIMIT: usize = 400_000;
/// Iterations of one phase at most.
const ITERATIONS: usize = 30;
/// Rounds of expansion and compilation at most.
const ROUNDS: usize = 8;

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// The cost model extraction minimizes.
    pub model: Model,
    /// Time for equality saturation, shared among the phases.
    pub timeout: Duration,
    /// Start the search from the structured vectorization as well as from the spec.
    pub seed: bool,
    /// Compile and run the C on this many random inputs.
    pub run: Option<usize>,
    /// Keep the egglog text of every round for `--emit egglog`.
    pub keep_egglog: bool,
}

/// One round: a fresh e-graph (the session's declarations and rules) holding `start` (and
/// `also`, unioned with it), the phases run, the cheapest program extracted.
#[allow(clippy::too_many_arguments)]
fn round(
    session: &mut Session,
    dag: &mut Dag,
    target: &Target,
    model: Model,
    start: Id,
    also: Option<Id>,
    phases: &[Phase],
    deadline: Instant,
) -> Result<(Id, Vec<PhaseRun>)> {
    let mut roots = vec![start];
    roots.extend(also);
    let terms = terms(dag, &roots, target.width);
    session.push();
    session.insert(&terms, "t")?;
    let mut runs = Vec::new();
    for (k, &p) in phases.iter().enumerate() {
        let limits = Limits {
            nodes: NODE_LIMIT,
            iterations: ITERATIONS,
            deadline: share(deadline, 1.0 / (phases.len() - k) as f64),
        };
        runs.push(session.run(p, limits)?);
    }
    let g = session.read(1)?;
    session.pop()?;
    let choice = choose(&g, model, target);
    let best = build(&g, &choice, g.roots[0], dag)?;
    Ok((best, runs))
}

/// Compiles a lifted kernel for `target` with the phased rules.
pub fn compile(
    lifted: Lifted,
    target: &Target,
    rules: &[(KernelRule, Phase)],
    opts: &Options,
) -> Result<Report> {
    let started = Instant::now();
    let deadline = started + opts.timeout;
    let Lifted {
        mut dag,
        root,
        signature,
    } = lifted;
    let outputs: Vec<Id> = dag.args(root).to_vec();
    let spec_nodes = dag.reachable(&[root]).len();
    let printed = dag.tree_size(root);
    let mut session = Session::new(&format!(
        "{}{}",
        declarations(target.width),
        rules_text(rules, target.width)
    ))?;

    let spec = dag.partition(&outputs, target.width);
    let mut current = spec;
    let mut cost = tree_cost(&dag, spec, opts.model, target);
    let seeded = opts
        .seed
        .then(|| seed::vectorize(&mut dag, &outputs, target.width));
    let seed_cost = seeded.map(|s| tree_cost(&dag, s, opts.model, target));
    // The seed is a program in hand: a round makes progress only by beating it, as if Isaria's
    // loop had started from it (the first round's e-graph holds the spec as well).
    if let (Some(s), Some(c)) = (seeded, seed_cost) {
        if c < cost {
            (current, cost) = (s, c);
        }
    }
    let mut rounds = Vec::new();
    for k in 0..ROUNDS {
        if Instant::now() >= deadline {
            break;
        }
        let (start, also) = if k == 0 {
            (spec, seeded)
        } else {
            (current, None)
        };
        session.text.push_str(&format!(
            "; ---- round {}: expansion and compilation ----\n",
            k + 1
        ));
        let round_deadline = share(deadline, 0.5);
        let (best, phases) = round(
            &mut session,
            &mut dag,
            target,
            opts.model,
            start,
            also,
            &[Phase::Expand, Phase::Compile],
            round_deadline,
        )?;
        let new_cost = tree_cost(&dag, best, opts.model, target);
        rounds.push(Round {
            phases,
            cost: new_cost,
        });
        if new_cost >= cost - 1e-9 {
            if new_cost <= cost + 1e-9 {
                current = best;
            }
            break;
        }
        cost = new_cost;
        current = best;
    }
    session.text.push_str("; ---- optimization ----\n");
    let (optimized, phases) = round(
        &mut session,
        &mut dag,
        target,
        opts.model,
        current,
        None,
        &[Phase::Optimize],
        deadline.max(Instant::now() + Duration::from_millis(500)),
    )?;
    let optimized_cost = tree_cost(&dag, optimized, opts.model, target);
    if optimized_cost < cost - 1e-9 {
        current = optimized;
    }
    rounds.push(Round {
        phases,
        cost: optimized_cost,
    });
    if opts.model == Model::Target {
        // Extraction sums costs over the tree; on the target every distinct node is computed
        // once, so the program to emit is the one whose distinct nodes cost least: the search's,
        // the seed, or the kernel left scalar (heavily shared kernels such as qr-decomp).
        let dag_ref = &dag;
        current = [Some(current), seeded, Some(spec)]
            .into_iter()
            .flatten()
            .min_by(|&a, &b| {
                lower::dag_cost(dag_ref, a, target).total_cmp(&lower::dag_cost(dag_ref, b, target))
            })
            .expect("a program");
    }
    let saturation_ms = started.elapsed().as_secs_f64() * 1000.0;

    let proof = validate::validate(&mut dag, &outputs, current)?;
    let lowered = lower::lower(&dag, current, outputs.len(), target, signature.as_ref())?;
    let ran = match opts.run {
        Some(n) => Some(run::run(
            &dag,
            &outputs,
            &lowered,
            target,
            n,
            signature.as_ref(),
        )?),
        None => None,
    };
    let unit = Target::unit(target.kind);
    Ok(Report {
        target: target.name.to_string(),
        width: target.width,
        model: opts.model.as_str().to_string(),
        outputs: outputs.len(),
        spec_nodes,
        printed_nodes: printed,
        costs: Costs {
            chosen: tree_cost(&dag, current, opts.model, target),
            diospyros: tree_cost(&dag, current, Model::Diospyros, &unit),
            isaria: tree_cost(&dag, current, Model::Isaria, &unit),
            target: lowered.cost,
            scalar_diospyros: tree_cost(&dag, spec, Model::Diospyros, &unit),
            seed: seed_cost,
        },
        program_nodes: dag.reachable(&[current]).len(),
        instructions: lowered.instructions,
        rounds,
        proof,
        run: ran,
        saturation_ms,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        peak_rss_mb: report::peak_rss_mb(),
        c: format!("{}{}", lower::headers(target), lowered.c),
        function: lowered.function.clone(),
        inputs: lowered.inputs.clone(),
        egglog: opts.keep_egglog.then(|| std::mem::take(&mut session.text)),
    })
}
