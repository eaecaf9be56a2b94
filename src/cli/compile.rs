//! `isadb compile`: the instructions selected for an expression on a target, proven equivalent,
//! with their cost; optionally the egglog program that ran, the C function, and the C run on
//! random inputs.

use super::{print_out, text_choice, Context, Outcome};
use crate::error::{Error, Result};
use crate::ir::Elem;
use crate::port::native::CrossRun;
use crate::select::check::{Floats, RunCheck};
use crate::select::{self, Proof, Report, Request, Selector, Step};
use crate::spec::Target;
use crate::words::text_enum;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

text_enum! {
    /// What `compile --emit` prints besides the sequence.
    pub enum Emit("output form") {
        /// The egglog program that selected it.
        Egglog = "egglog",
        /// A C function with intrinsics computing the expression over arrays.
        C = "c",
    }
}

text_choice!(Emit, "output form");

/// The flags of `isadb compile` besides the expression and the target.
pub struct Options<'a> {
    /// Lanes of the result (default: the widest variable fills one register).
    pub lanes: Option<u32>,
    /// `--var NAME:TYPE` declarations.
    pub vars: &'a [String],
    /// What to print besides the sequence.
    pub emit: Option<Emit>,
    /// Iterations of random inputs to run the C on.
    pub run: Option<usize>,
    /// Reuse and record selections in the selection cache (`--emit egglog` bypasses it, since
    /// it prints the program that ran).
    pub cache: bool,
    /// How long z3 may take over the selection's proof (per query).
    pub proof_timeout_ms: u32,
}

/// `compile`: selects, proves and prints the instruction sequence; exit 1 when the C run
/// disagrees with the interpreter.
pub fn compile(ctx: &Context, expr: &str, target: Target, options: Options) -> Result<Outcome> {
    // The expression may start with '-' (a negation); an unknown option is not read as one.
    if expr.starts_with("--") {
        return Err(Error::Usage(format!(
            "compile: unexpected argument '{expr}' (see isadb compile --help)"
        )));
    }
    let Options {
        lanes,
        vars,
        emit,
        run,
        cache,
        proof_timeout_ms,
    } = options;
    let declared = declarations(vars)?;
    let request = Request {
        lanes,
        declared,
        program: emit == Some(Emit::Egglog),
        c: emit == Some(Emit::C),
        run,
    };
    let mut selector = Selector::load(&ctx.project, target)?;
    selector.set_proof_timeout(proof_timeout_ms);
    let mut db = if cache {
        Some(ctx.project.open()?)
    } else {
        None
    };
    let found = match selector.report(expr, &request, db.as_mut()) {
        Ok(found) => found,
        Err(e) => {
            // The program that failed is what one needs to see to find out why.
            if request.program {
                if let Some(text) = selector.program_text(expr, &request) {
                    print_out(&text)?;
                }
            }
            return Err(e);
        }
    };
    let printed = print_report(ctx, &found, target, None);
    // The process ends with this command: the catalog, the program and their rewrites (tens of
    // megabytes in small allocations, about 10 ms to free) are left to the operating system.
    std::mem::forget(selector);
    std::mem::forget(found);
    printed
}

/// Prints a selection's report as `compile` does; exit 1 when the C run disagrees with the
/// interpreter.
/// Prints a selection report; `beside` is what running a ported instruction beside its port
/// found (`port --run`).
pub fn print_report(
    ctx: &Context,
    found: &Report,
    target: Target,
    beside: Option<&CrossRun>,
) -> Result<Outcome> {
    let report = View {
        beside,
        ..View::of(found, target)
    };
    ctx.print(&report, || {
        let mut out = format!(
            "{} on {} ({}):
",
            report.expression, report.target, report.result
        );
        for s in report.steps {
            out += &format!(
                "  {} = {:<48} {:<40} cost {}
",
                s.temp, s.call, s.asm, s.cost
            );
        }
        for o in &report.outputs {
            out += &format!(
                "  {o}
"
            );
        }
        let proof = if report.cached {
            "from the selection cache (proven equivalent by z3 when stored)".to_string()
        } else if report.same_tree {
            "equivalent as the input's own tree (z3 not needed)".to_string()
        } else {
            format!("proven equivalent by z3 in {:.1} ms", report.validate_ms)
        };
        out += &format!(
            "cost {} ({} instructions); selected in {:.1} ms, {proof}
",
            report.cost,
            report.steps.len(),
            report.select_ms,
        );
        if !report.scalarized.is_empty() {
            out += &format!(
                "scalarized (no instruction sequence covers them): {}\n",
                report.scalarized.join(", ")
            );
        }
        if let Some(r) = &report.run {
            out += &format!("{r}\n");
        }
        if let Some(b) = report.beside {
            out += &format!("{}\n", b.line());
        }
        if let Some(p) = &report.egglog {
            out += &format!("\n{p}");
        }
        if let Some(c) = &report.c {
            out += &format!("\n{c}");
        }
        out
    })?;
    Ok(Outcome::negative_if(
        matches!(found.run, Some(RunCheck::Mismatch(_)))
            || matches!(beside, Some(CrossRun::Mismatch { .. })),
    ))
}

/// The `--var NAME:TYPE` declarations.
fn declarations(vars: &[String]) -> Result<HashMap<String, Elem>> {
    let mut declared = HashMap::new();
    for v in vars {
        let (name, ty) = v
            .split_once(':')
            .ok_or_else(|| Error::Usage(format!("--var {v}: expected NAME:TYPE, e.g. z:u16")))?;
        let elem = Elem::parse(ty)
            .ok_or_else(|| Error::Usage(format!("--var {v}: unknown element type '{ty}'")))?;
        declared.insert(name.to_string(), elem);
    }
    Ok(declared)
}

/// `compile --batch FILE`: every expression of the file selected (each target's rules compiled
/// into egglog once per chunk) and proven on `jobs` threads; a line per expression and a
/// summary; exit 1 when any expression has no proven selection.
pub fn batch(
    ctx: &Context,
    file: &Path,
    target: Option<Target>,
    vars: &[String],
    jobs: usize,
) -> Result<Outcome> {
    let declared = declarations(vars)?;
    let items = select::batch::read(file, target)?;
    let report = select::batch::run(&ctx.project, items, &declared, jobs)?;
    let view = BatchView::of(&report);
    ctx.print(&view, || {
        let mut out = String::new();
        for e in &view.expressions {
            let head = format!("{}:{} {}", view.file_name(file), e.line, e.target);
            out += &match &e.error {
                Some(error) => format!("{head} {}: FAILED: {error}\n", e.expression),
                None => format!(
                    "{head} {}: cost {} {}{}\n",
                    e.expression,
                    e.cost.unwrap_or_default(),
                    e.calls.join(" "),
                    if e.scalarized.is_empty() {
                        String::new()
                    } else {
                        format!(" (scalarized: {})", e.scalarized.join(", "))
                    }
                ),
            };
        }
        out + &view.summary() + "\n"
    })?;
    Ok(Outcome::negative_if(view.failed > 0))
}

/// The batch as printed.
#[derive(Serialize)]
struct BatchView {
    expressions: Vec<BatchEntry>,
    count: usize,
    selected: usize,
    failed: usize,
    /// Selected with an operator computed lane by lane.
    scalarized: usize,
    /// egglog programs run.
    programs: usize,
    jobs: usize,
    select_ms: f64,
    wall_ms: f64,
    select_ms_per_expression: f64,
    wall_ms_per_expression: f64,
}

#[derive(Serialize)]
struct BatchEntry {
    line: usize,
    target: &'static str,
    expression: String,
    result: Option<String>,
    cost: Option<f64>,
    calls: Vec<String>,
    scalarized: Vec<String>,
    /// "z3" or "same tree".
    proof: Option<&'static str>,
    prove_ms: Option<f64>,
    error: Option<String>,
}

impl BatchView {
    fn of(r: &select::batch::Report) -> BatchView {
        let expressions: Vec<BatchEntry> = r
            .entries
            .iter()
            .map(|e| {
                let ok = e.outcome.as_ref().ok();
                BatchEntry {
                    line: e.item.line,
                    target: e.item.target.name,
                    expression: e.item.text.clone(),
                    result: ok.map(|s| s.result.to_string()),
                    cost: ok.map(|s| s.cost),
                    calls: ok.map(|s| s.calls.clone()).unwrap_or_default(),
                    scalarized: ok.map(|s| s.scalarized.clone()).unwrap_or_default(),
                    proof: ok.map(|s| match s.proof {
                        Proof::Z3 => "z3",
                        Proof::SameTree => "same tree",
                    }),
                    prove_ms: ok.map(|s| s.prove_ms),
                    error: e.outcome.as_ref().err().cloned(),
                }
            })
            .collect();
        let count = expressions.len();
        let selected = r.selected();
        BatchView {
            count,
            selected,
            failed: count - selected,
            scalarized: expressions
                .iter()
                .filter(|e| !e.scalarized.is_empty())
                .count(),
            expressions,
            programs: r.programs,
            jobs: r.jobs,
            select_ms: r.select_ms,
            wall_ms: r.wall_ms,
            select_ms_per_expression: r.select_ms / count as f64,
            wall_ms_per_expression: r.wall_ms / count as f64,
        }
    }

    fn file_name(&self, file: &Path) -> String {
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn summary(&self) -> String {
        format!(
            "{} expressions: {} selected and proven ({} with scalarized lanes), {} failed; {} egglog \
             programs; selection {:.0} ms ({:.1} ms per expression, summed over the workers), \
             selected and proven on {} threads in {:.0} ms ({:.1} ms per expression)",
            self.count,
            self.selected,
            self.scalarized,
            self.failed,
            self.programs,
            self.select_ms,
            self.select_ms_per_expression,
            self.jobs,
            self.wall_ms,
            self.wall_ms_per_expression
        )
    }
}

/// The report as printed: the run as a sentence, the outputs as `out[0..8] = t1`.
#[derive(Serialize)]
struct View<'a> {
    expression: &'a str,
    target: &'static str,
    result: String,
    steps: &'a [Step],
    outputs: Vec<String>,
    cost: f64,
    select_ms: f64,
    validate_ms: f64,
    /// Whether the selection came from the selection cache (no egglog, no z3 this time).
    cached: bool,
    /// The selection is the input's own tree (scalarized): equivalent without asking z3.
    same_tree: bool,
    /// Rewrites in the egglog program; `None` for a cached selection.
    rewrites: Option<usize>,
    /// What `--run` found, as a sentence.
    run: Option<String>,
    /// Why `--run` only compiled the C: this machine cannot run a feature of the selection.
    not_run: Option<String>,
    /// The CPU features of the selected instructions.
    features: &'a [String],
    /// The operators computed lane by lane (`add at u8x16`): no instruction sequence covers them.
    scalarized: &'a [String],
    egglog: Option<&'a str>,
    c: Option<&'a str>,
    /// `port --run`: the source instruction run beside the port on the same inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    beside: Option<&'a CrossRun>,
}

impl<'a> View<'a> {
    fn of(r: &'a Report, target: Target) -> View<'a> {
        View {
            expression: &r.expression,
            target: target.name,
            result: r.result.to_string(),
            steps: &r.steps,
            outputs: r
                .outputs
                .iter()
                .map(|(t, from, to)| format!("out[{from}..{to}] = {t}"))
                .collect(),
            cost: r.cost,
            select_ms: r.select_ms,
            validate_ms: r.validate_ms,
            cached: r.cached,
            same_tree: r.same_tree,
            rewrites: r.rewrites,
            run: r.run.as_ref().map(|check| match check {
                RunCheck::Equal { lanes, floats } => format!(
                    "ran the C on {}: {lanes} lanes equal the interpreter's{}",
                    target.name,
                    match floats {
                        Floats::None => "",
                        Floats::Reals =>
                            " (f32 inputs finite, -0 equal to +0: the proof is over the reals)",
                        Floats::Ieee => " (f32 inputs with NaN and infinities, compared exactly)",
                    }
                ),
                RunCheck::Mismatch(m) => {
                    format!("MISMATCH running the C on {}: {m}", target.name)
                }
                RunCheck::NotRun(why) => format!(
                    "compiled the C for {} but did not run it: {why}",
                    target.name
                ),
            }),
            not_run: match &r.run {
                Some(RunCheck::NotRun(why)) => Some(why.clone()),
                _ => None,
            },
            features: &r.features,
            scalarized: &r.scalarized,
            egglog: r.program.as_deref(),
            c: r.c.as_deref(),
            beside: None,
        }
    }
}
