//! `isadb port X --target T`: the cheapest sequence of T's instructions proven equal to
//! instruction X's semantics (of any ISA in the database), found by instruction selection over
//! that semantics, printed as `compile` prints a selection; with `--emit c` the C function, and
//! with `--run` that C run against the interpreter of X's semantics and beside X itself on the
//! same inputs ([`crate::port::native`]). `port --all --from S`
//! ports every instruction of the source set S ([`crate::port`]) and prints the table.

use super::compile::{print_report, Emit};
use super::{print_out, render_table, Context, Outcome, Output};
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::port::candidate::{check, Checked, Refutation};
use crate::port::dropin::DropIn;
use crate::port::native::run_beside;
use crate::port::{self, Report, Status};
use crate::select::{Compiled, Request, Selector};
use crate::spec::{Isa, Target};
use crate::synth::Shard;
use serde::Serialize;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

/// The flags of `isadb port` besides the instruction and the target.
pub struct Options<'a> {
    /// The values of X's immediate operands, in operand order.
    pub imms: &'a [String],
    /// What to print besides the sequence.
    pub emit: Option<Emit>,
    /// Iterations of random inputs to run the C on.
    pub run: Option<usize>,
    /// A translation written by hand, to check instead of selecting one.
    pub check: Option<&'a str>,
}

/// An immediate operand's name and value as a label writes them (`n=1`).
type Immediate<'a> = (&'a str, &'a str);

/// An instruction named as `port --all` labels it at its immediates, `vrshr_n_s64[n=1]`: the
/// name and the `(operand, value)` pairs; a plain name has none.
fn split_label(text: &str) -> Result<(&str, Option<Vec<Immediate<'_>>>)> {
    let Some((name, rest)) = text.split_once('[') else {
        return Ok((text, None));
    };
    let inside = rest
        .strip_suffix(']')
        .ok_or_else(|| Error::Usage(format!("'{text}': expected NAME[OPERAND=VALUE,...]")))?;
    let pairs = inside
        .split(',')
        .map(|p| {
            p.split_once('=')
                .map(|(n, v)| (n.trim(), v.trim()))
                .ok_or_else(|| Error::Usage(format!("'{text}': '{p}' is not OPERAND=VALUE")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((name, Some(pairs)))
}

/// The values of the instruction's immediate operands, in operand order, from `pairs`.
fn immediates_by_name(
    instruction: &crate::spec::Instruction,
    pairs: &[Immediate],
) -> Result<Vec<String>> {
    let names: Vec<&str> = instruction
        .operands
        .iter()
        .filter(|o| o.imm.is_some())
        .map(|o| o.name.as_str())
        .collect();
    if let Some((extra, _)) = pairs.iter().find(|(n, _)| !names.contains(n)) {
        return Err(Error::Usage(format!(
            "{} has no immediate operand '{extra}' (its immediates: {})",
            instruction.name,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    names
        .iter()
        .map(|n| {
            pairs
                .iter()
                .find(|(p, _)| p == n)
                .map(|(_, v)| v.to_string())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "{}: give immediate '{n}' as well",
                        instruction.name
                    ))
                })
        })
        .collect()
}

/// `port`: selects and proves T's sequence for X and prints it.
pub fn port(ctx: &Context, name: &str, target: Target, options: Options) -> Result<Outcome> {
    let (name, labelled) = split_label(name)?;
    let instruction = ctx.project.open()?.find_instruction(name)?;
    let imms = match labelled {
        None => options.imms.to_vec(),
        Some(_) if !options.imms.is_empty() => {
            return Err(Error::Usage(format!(
                "give {name}'s immediates in its name ({name}[n=1]) or by --imm, not both"
            )))
        }
        Some(pairs) => immediates_by_name(&instruction, &pairs)?,
    };
    let imms = imms.as_slice();
    let immediates = instruction.operands.iter().any(|o| o.imm.is_some());
    let one_value = options.emit.is_some() || options.run.is_some() || options.check.is_some();
    if immediates && imms.is_empty() && !one_value {
        return port_sampled(ctx, &instruction, target);
    }
    let input = port::sources::goal(&instruction, imms, target)?;
    let mut selector = Selector::load(&ctx.project, target)?;
    let compiled = match options.check {
        Some(text) => match check(&instruction.name, input, text, &selector.catalog)? {
            Checked::Proven(compiled) => *compiled,
            Checked::Refuted(refutation) => {
                return print_refutation(ctx, &instruction.name, target, text, &refutation)
            }
            Checked::Unknown(reason) => {
                return Err(Error::Tool(format!(
                    "z3 could not decide the candidate: {reason}"
                )))
            }
        },
        None => select(&mut selector, &instruction.name, input)?,
    };
    let drop_in = if options.run.is_some() || options.emit == Some(Emit::C) {
        Some(DropIn::new(
            &instruction,
            imms,
            &compiled,
            &selector.catalog,
        )?)
    } else {
        None
    };
    let beside = match (options.run, &drop_in) {
        (Some(iterations), Some(drop_in)) => {
            let dir = tempfile::Builder::new()
                .prefix("isadb-port-")
                .tempdir()
                .map_err(|e| Error::Tool(format!("a scratch directory: {e}")))?;
            Some(run_beside(
                &instruction,
                imms,
                &compiled,
                &selector.catalog,
                drop_in,
                iterations,
                dir.path(),
            )?)
        }
        _ => None,
    };
    let request = Request {
        lanes: None,
        declared: HashMap::new(),
        program: options.emit == Some(Emit::Egglog),
        c: options.emit == Some(Emit::C),
        run: options.run,
    };
    let mut report = selector.describe(compiled, &request)?;
    if let (Some(c), Some(drop_in)) = (&mut report.c, drop_in) {
        *c = drop_in.text;
    }
    print_report(ctx, &report, target, beside.as_ref())
}

/// An instruction with immediates named without them: ported at the values `port --all` samples
/// (the stored rows reused), one row each, as `port --all` prints them.
fn port_sampled(
    ctx: &Context,
    instruction: &crate::spec::Instruction,
    target: Target,
) -> Result<Outcome> {
    let options = port::Options {
        from: instruction.isa,
        features: vec![],
        only: Some(instruction.name.clone()),
        target,
        jobs: 1,
        force: false,
        shard: None,
        out: None,
    };
    let report = port::port_all(&ctx.project, &options, false)?;
    ctx.print(&report, || {
        let names: Vec<String> = instruction
            .operands
            .iter()
            .filter(|o| o.imm.is_some())
            .map(|o| format!("{}=V", o.name))
            .collect();
        format!(
            "{}{} at sampled immediates; `isadb port '{}[{}]' --target {}` (or --imm) ports one value, with --emit c and --run\n",
            table(&report),
            instruction.name,
            instruction.name,
            names.join(","),
            target.name
        )
    })?;
    Ok(if report.rows.iter().all(|r| r.status != Status::Failed) {
        Outcome::Success
    } else {
        Outcome::Negative
    })
}

/// The cheapest sequence for `name`'s semantics `input`: selected and proven, then the search
/// over the target's own moves for data movement where that finds a cheaper one, and
/// synthesis where selection leaves operators scalarized.
fn select(selector: &mut Selector, name: &str, input: Rc<Expr>) -> Result<Compiled> {
    let (compiled, _) = selector.select_and_prove(name, input, Instant::now())?;
    let scalarized = !compiled.root.scalarized().is_empty();
    let instructions = compiled.root.operations();
    let searched =
        selector.search_cheaper(&compiled.input, compiled.cost, instructions, scalarized)?;
    Ok(match searched {
        Some(found) => Compiled {
            source: compiled.source,
            ..found
        },
        None => compiled,
    })
}

/// A refuted candidate: the inputs on which it differs from the instruction (exit 1).
fn print_refutation(
    ctx: &Context,
    name: &str,
    target: Target,
    candidate: &str,
    refutation: &Refutation,
) -> Result<Outcome> {
    #[derive(Serialize)]
    struct View<'a> {
        instruction: &'a str,
        target: &'a str,
        candidate: &'a str,
        verdict: &'static str,
        counterexample: &'a Refutation,
    }
    let view = View {
        instruction: name,
        target: target.name,
        candidate,
        verdict: "refuted",
        counterexample: refutation,
    };
    ctx.print(&view, || {
        let inputs: String = refutation
            .inputs
            .iter()
            .map(|(n, v)| format!("  {n} = {v}\n"))
            .collect();
        format!(
            "{candidate} is not {name} on {}; counterexample:\n{inputs}  {name} = {}\n  candidate = {}\n",
            target.name, refutation.expected, refutation.actual
        )
    })?;
    Ok(Outcome::Negative)
}

/// The flags of `isadb port --all` besides the source set and the target.
pub struct AllOptions {
    /// Print the table as CSV.
    pub csv: bool,
    /// Only shard K of N, into `out`.
    pub shard: Option<Shard>,
    #[allow(missing_docs)]
    pub out: Option<PathBuf>,
    /// Worker threads (each selects a chunk of sources and proves it).
    pub jobs: usize,
    /// Port stored sources again.
    pub force: bool,
}

/// Reads `ISA` or `ISA:FEATURE[,FEATURE...]`.
fn source_set(text: &str) -> Result<(Isa, Vec<String>)> {
    let (isa, features) = text.split_once(':').unwrap_or((text, ""));
    let isa: Isa = isa
        .parse()
        .map_err(|e: String| Error::Usage(format!("--from {text}: {e}")))?;
    let features = features
        .split(',')
        .filter(|f| !f.is_empty())
        .map(String::from)
        .collect();
    Ok((isa, features))
}

/// `port --all --from S --target T`: every instruction of S ported, the table and the
/// distribution of sequence lengths.
pub fn port_all(ctx: &Context, from: &str, target: Target, o: AllOptions) -> Result<Outcome> {
    let (from, features) = source_set(from)?;
    let options = port::Options {
        from,
        features,
        only: None,
        target,
        jobs: o.jobs,
        force: o.force,
        shard: o.shard,
        out: o.out,
    };
    let report = port::port_all(&ctx.project, &options, std::io::stderr().is_terminal())?;
    if o.csv && ctx.output == Output::Table {
        print_out(&csv_table(&report)?)?;
    } else {
        ctx.print(&report, || table(&report))?;
    }
    Ok(Outcome::Success)
}

fn cells(r: &port::Row) -> Vec<String> {
    vec![
        r.source.clone(),
        format!("{:?}", r.status).to_lowercase(),
        r.instructions.to_string(),
        r.cost.to_string(),
        r.sequence.join("; "),
    ]
}

const HEADERS: [&str; 5] = ["source", "status", "instructions", "cost", "sequence"];

fn csv_table(report: &Report) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let bad = |e: csv::Error| Error::Tool(format!("writing CSV: {e}"));
    w.write_record(HEADERS).map_err(bad)?;
    for r in &report.rows {
        w.write_record(cells(r)).map_err(bad)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Tool(format!("writing CSV: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn table(report: &Report) -> String {
    let rows: Vec<Vec<String>> = report.rows.iter().map(cells).collect();
    let d = &report.distribution;
    let proven = report
        .rows
        .iter()
        .filter(|r| r.status != Status::Failed)
        .count();
    let mut text = render_table(&HEADERS, &rows);
    text += &format!(
        "{} sources: {proven} proven ({} in 0-1 instruction, {} in 2, {} in 3-4, {} in 5 or more, \
         {} scalarized in part), {} without a sequence; {} reused, {} ported in {:.1} s\n",
        report.rows.len(),
        d.at_most_one,
        d.two,
        d.three_to_four,
        d.five_or_more,
        d.scalarized,
        d.failed,
        report.cached,
        report.ported,
        report.wall_ms / 1000.0
    );
    if let Some(dir) = &report.out {
        text += &format!(
            "rows written to {} (merge them with isadb db import --merge)\n",
            dir.display()
        );
    }
    text
}
