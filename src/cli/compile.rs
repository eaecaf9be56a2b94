//! `isadb compile`: the instructions selected for an expression on a target, proven equivalent,
//! with their cost; optionally the egglog program that ran, the C function, and the C run on
//! random inputs.

use super::{Choice, Context, Outcome};
use crate::error::{Error, Result};
use crate::select::check::RunCheck;
use crate::spec::Target;
use crate::words::text_enum;
use serde::Serialize;
use std::collections::HashMap;

text_enum! {
    /// What `compile --emit` prints besides the sequence.
    pub enum Emit("output form") {
        /// The egglog program that selected it.
        Egglog = "egglog",
        /// A C function with intrinsics computing the expression over arrays.
        C = "c",
    }
}

impl clap::ValueEnum for Emit {
    fn value_variants<'a>() -> &'a [Self] {
        Emit::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

impl Choice for Emit {
    const NOUN: &'static str = "output form";
}

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
}

/// `compile`: selects, proves and prints the instruction sequence; exit 1 when the C run
/// disagrees with the interpreter.
pub fn compile(ctx: &Context, expr: &str, target: Target, options: Options) -> Result<Outcome> {
    let Options {
        lanes,
        vars,
        emit,
        run,
        cache,
    } = options;
    let mut declared = HashMap::new();
    for v in vars {
        let (name, ty) = v
            .split_once(':')
            .ok_or_else(|| Error::Usage(format!("--var {v}: expected NAME:TYPE, e.g. z:u16")))?;
        let elem = crate::ir::Elem::parse(ty)
            .ok_or_else(|| Error::Usage(format!("--var {v}: unknown element type '{ty}'")))?;
        declared.insert(name.to_string(), elem);
    }
    let catalog = crate::select::Catalog::load(&ctx.project, target)?;
    let mut db = if cache && emit != Some(Emit::Egglog) {
        Some(ctx.project.open()?)
    } else {
        None
    };
    let compiled = match crate::select::compile(&catalog, expr, lanes, &declared, db.as_mut()) {
        Ok(c) => c,
        Err(e) => {
            // The program that failed is what one needs to see to find out why.
            if emit == Some(Emit::Egglog) {
                if let Ok((_, p)) = crate::select::prepare(&catalog, expr, lanes, &declared) {
                    print!("{}", p.text);
                }
            }
            return Err(e);
        }
    };
    let (steps, outputs) = crate::select::steps(&compiled, &catalog);
    let run_check = match run {
        Some(iterations) => {
            let dir = tempfile::Builder::new()
                .prefix("isadb-compile-")
                .tempdir()
                .map_err(|e| Error::io(std::env::temp_dir(), e))?;
            let host = crate::toolchain::features::Host::detect();
            Some(crate::select::check::run_c(
                &compiled,
                &catalog,
                iterations,
                1,
                dir.path(),
                &host,
            )?)
        }
        None => None,
    };
    let report = CompileReport {
        expression: expr.to_string(),
        target: target.name.to_string(),
        result: compiled.input.ty.to_string(),
        steps: steps
            .iter()
            .map(|s| StepReport {
                temp: s.temp.clone(),
                call: s.call.clone(),
                asm: s.asm.clone(),
                cost: s.cost,
            })
            .collect(),
        outputs: outputs
            .iter()
            .map(|(t, from, to)| format!("out[{from}..{to}] = {t}"))
            .collect(),
        cost: compiled.cost,
        select_ms: compiled.select_ms,
        validate_ms: compiled.validate_ms,
        run: run_check.as_ref().map(|check| match check {
            RunCheck::Equal { lanes } => format!(
                "ran the C on {}: {lanes} lanes equal the interpreter's",
                target.name
            ),
            RunCheck::Mismatch(m) => format!("MISMATCH running the C on {}: {m}", target.name),
            RunCheck::NotRun(why) => format!(
                "compiled the C for {} but did not run it: {why}",
                target.name
            ),
        }),
        not_run: match &run_check {
            Some(RunCheck::NotRun(why)) => Some(why.clone()),
            _ => None,
        },
        features: crate::select::check::features(&compiled, &catalog),
        cached: compiled.cached,
        rewrites: compiled.program.as_ref().map(|p| p.rewrites),
        egglog: compiled
            .program
            .as_ref()
            .filter(|_| emit == Some(Emit::Egglog))
            .map(|program| {
                let skipped: String = program
                    .skipped
                    .iter()
                    .map(|s| format!("; not in the e-graph: {s}\n"))
                    .collect();
                format!("{skipped}{}", program.text)
            }),
        c: match emit {
            Some(Emit::C) => Some(crate::select::emit_c::function(
                &compiled, &catalog, "kernel",
            )?),
            _ => None,
        },
    };
    ctx.print(&report, || {
        let mut out = format!(
            "{} on {} ({}):
",
            report.expression, report.target, report.result
        );
        for s in &report.steps {
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
        if let Some(r) = &report.run {
            out += &format!("{r}\n");
        }
        if let Some(p) = &report.egglog {
            out += &format!("\n{p}");
        }
        if let Some(c) = &report.c {
            out += &format!("\n{c}");
        }
        out
    });
    Ok(match run_check {
        Some(RunCheck::Mismatch(_)) => Outcome::Negative,
        _ => Outcome::Success,
    })
}

#[derive(Serialize)]
struct StepReport {
    temp: String,
    call: String,
    asm: String,
    cost: f64,
}

#[derive(Serialize)]
struct CompileReport {
    expression: String,
    target: String,
    result: String,
    steps: Vec<StepReport>,
    outputs: Vec<String>,
    cost: f64,
    select_ms: f64,
    validate_ms: f64,
    /// Whether the selection came from the selection cache (no egglog, no z3 this time).
    cached: bool,
    /// Rewrites in the egglog program; `None` for a cached selection.
    rewrites: Option<usize>,
    /// What `--run` found, as a sentence.
    run: Option<String>,
    /// Why `--run` only compiled the C: this machine cannot run a feature of the selection.
    not_run: Option<String>,
    /// The CPU features of the selected instructions.
    features: Vec<String>,
    egglog: Option<String>,
    c: Option<String>,
}
