//! `isadb validate`: pick the instructions, reuse cached verdicts, run the rest in batches
//! ([`super::batches`]) and record the outcome per (semantics hash, instruction).

use super::batches::{run_target, Work};
use super::harness::Harness;
use super::report::{cached, skip_category, skipped, InstrResult, IsaSummary, Options, Report};
use super::store::{self, Row, ValidationStatus};
use crate::database::{Database, Filter};
use crate::error::{Error, Result};
use crate::project::Project;
use crate::spec::Instruction;
use crate::toolchain::features::{self, Host, Support};
use crate::toolchain::{self, Toolchain};
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

/// Validates the selected instructions against real execution and records the results.
pub fn validate(project: &Project, opts: &Options) -> Result<Report> {
    let start = Instant::now();
    let targets: Vec<Toolchain> = match opts.isa {
        None => Toolchain::ALL.to_vec(),
        Some(isa) => vec![Toolchain::of(isa).ok_or_else(|| {
            Error::Usage(format!(
                "validate: no toolchain runs {isa} code (validation runs x86, neon and hvx)"
            ))
        })?],
    };
    if opts.inputs == 0 {
        return Err(Error::Usage("validate: --inputs must be at least 1".into()));
    }
    let mut db = project.open()?;
    let all = db.instructions(&Filter::default())?;
    let selected = select(&all, &targets, &opts.instrs)?;
    let existing = store::load(&db)?;
    let host = Host::detect();
    let scratch = tempfile::Builder::new()
        .prefix("isadb-validate-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let workdir = scratch.path().to_path_buf();

    let mut results: Vec<InstrResult> = Vec::new();
    let mut summaries = Vec::new();
    let mut warnings = Vec::new();
    for &target in &targets {
        let t0 = Instant::now();
        let group: Vec<&Instruction> = selected
            .iter()
            .copied()
            .filter(|i| Toolchain::of(i.isa) == Some(target))
            .collect();
        let (mut out, work) = classify(target, &group, &existing, &host, opts);
        let mut ran = 0;
        if !work.is_empty() {
            match tools_ready(target, &workdir) {
                Err(e) if opts.require_tools => return Err(Error::Tool(e)),
                Err(e) => {
                    warnings.push(format!(
                        "{e}; {} instructions not run (earlier verdicts kept, the rest skipped); \
                         set ISADB_REQUIRE_TOOLS=1 to make this an error",
                        work.len()
                    ));
                    for w in &work {
                        let row = existing.get(&(w.ins.sem_hash.clone(), w.ins.name.clone()));
                        out.push((
                            w.index,
                            keep_or_skip(row, w.ins, format!("tool unavailable: {e}"), opts.inputs),
                        ));
                    }
                }
                Ok(()) => {
                    ran = work.len();
                    out.extend(run_target(target, work, opts, &workdir));
                }
            }
        }
        out.sort_by_key(|(i, _)| *i);
        let results_here: Vec<InstrResult> = out.into_iter().map(|(_, r)| r).collect();
        let isa_total = all
            .iter()
            .filter(|i| Toolchain::of(i.isa) == Some(target))
            .count();
        summaries.push(summarize(target, isa_total, &results_here, ran, t0, opts));
        results.extend(results_here);
    }
    if std::env::var_os("ISADB_KEEP_HARNESS").is_some() {
        eprintln!(
            "isadb: kept the harness sources in {}",
            scratch.keep().display()
        );
    }
    let rows_changed = record(&mut db, project, &all, &selected, &targets, &results, opts)?;
    Ok(Report {
        isas: summaries,
        results,
        inputs: opts.inputs,
        seed: opts.seed,
        wall_ms: start.elapsed().as_secs_f64() * 1000.0,
        rows_changed,
        warnings,
    })
}

/// Sorts one ISA's instructions into results known without running (cached verdicts, features
/// this machine lacks, no way to call from C) and work to run. Results carry their position in
/// `group`.
fn classify<'a>(
    target: Toolchain,
    group: &[&'a Instruction],
    existing: &HashMap<(String, String), Row>,
    host: &Host,
    opts: &Options,
) -> (Vec<(usize, InstrResult)>, Vec<Work<'a>>) {
    let mut out = Vec::new();
    let mut work = Vec::new();
    for (index, &ins) in group.iter().enumerate() {
        let row = existing.get(&(ins.sem_hash.clone(), ins.name.clone()));
        // Environmental skips are re-evaluated every run; everything else is reused unless --force.
        let reusable = row.filter(|r| {
            !(r.status == ValidationStatus::Skipped && features::is_environmental(&r.detail))
        });
        if let (Some(r), false) = (reusable, opts.force) {
            out.push((index, cached(r)));
            continue;
        }
        let flags = match features::support(target, &ins.feature, host) {
            Support::Unsupported(reason) => {
                out.push((index, keep_or_skip(row, ins, reason, opts.inputs)));
                continue;
            }
            Support::Flags(f) => f,
        };
        match Harness::new(target, ins) {
            Ok(harness) => work.push(Work {
                index,
                ins,
                harness,
                flags,
            }),
            Err(e) => out.push((
                index,
                skipped(ins, format!("cannot call from C: {e}"), opts.inputs),
            )),
        }
    }
    (out, work)
}

/// An instruction this machine cannot run: its earlier real verdict if there is one (a machine
/// lacking a tool or feature does not overwrite it), else skipped for `reason`.
fn keep_or_skip(
    row: Option<&Row>,
    ins: &Instruction,
    reason: String,
    inputs: usize,
) -> InstrResult {
    match row.filter(|r| r.status != ValidationStatus::Skipped) {
        Some(r) => cached(r),
        None => skipped(ins, reason, inputs),
    }
}

/// Counts one ISA's results.
fn summarize(
    target: Toolchain,
    isa_total: usize,
    results: &[InstrResult],
    ran: usize,
    t0: Instant,
    opts: &Options,
) -> IsaSummary {
    let secs = t0.elapsed().as_secs_f64();
    let mut s = IsaSummary {
        isa: target.isa(),
        instructions: isa_total,
        with_intrinsic: results.len(),
        inputs_per_instruction: opts.inputs,
        ran,
        wall_ms: secs * 1000.0,
        instructions_per_second: if ran > 0 { ran as f64 / secs } else { 0.0 },
        validated: 0,
        mismatched: 0,
        skipped: 0,
        skip_reasons: Default::default(),
        cached: 0,
    };
    for r in results {
        match r.status {
            ValidationStatus::Validated => s.validated += 1,
            ValidationStatus::Mismatch => s.mismatched += 1,
            ValidationStatus::Skipped => {
                s.skipped += 1;
                *s.skip_reasons.entry(skip_category(&r.detail)).or_default() += 1;
            }
        }
        s.cached += r.cached as usize;
    }
    s
}

/// Stores the new outcomes (dated today), removes rows of re-specified or vanished instructions
/// and exports the CSV. Returns the number of rows changed.
fn record(
    db: &mut Database,
    project: &Project,
    all: &[Instruction],
    selected: &[&Instruction],
    targets: &[Toolchain],
    results: &[InstrResult],
    opts: &Options,
) -> Result<usize> {
    let today = crate::clock::today();
    let by_name: HashMap<&str, &Instruction> =
        selected.iter().map(|i| (i.name.as_str(), *i)).collect();
    let rows: Vec<Row> = results
        .iter()
        .filter(|r| !r.cached)
        .map(|r| Row {
            sem_hash: by_name[r.name.as_str()].sem_hash.clone(),
            instruction_name: r.name.clone(),
            isa: r.isa,
            inputs: r.inputs as i64,
            status: r.status,
            detail: r.detail.clone(),
            validated_at: today.clone(),
        })
        .collect();
    let mut scope = store::Scope::default();
    for ins in selected {
        scope.names.insert(ins.name.clone(), ins.sem_hash.clone());
    }
    if opts.instrs.is_empty() {
        for t in targets {
            let names = all
                .iter()
                .filter(|i| Toolchain::of(i.isa) == Some(*t))
                .map(|i| i.name.clone())
                .collect();
            scope.full_isas.insert(t.isa(), names);
        }
    }
    let changed = store::save(db, &rows, &scope)?;
    store::export(db, &project.tables)?;
    Ok(changed)
}

/// The instructions to validate: with an intrinsic, of the given targets, and (when `names` is not
/// empty) named by name or intrinsic. Unknown names are usage errors.
fn select<'a>(
    all: &'a [Instruction],
    targets: &[Toolchain],
    names: &[String],
) -> Result<Vec<&'a Instruction>> {
    let on_target = |i: &Instruction| Toolchain::of(i.isa).is_some_and(|t| targets.contains(&t));
    if names.is_empty() {
        return Ok(all
            .iter()
            .filter(|i| i.intrinsic.is_some() && on_target(i))
            .collect());
    }
    let mut out: Vec<&Instruction> = Vec::new();
    for n in names {
        let found: Vec<&Instruction> = all
            .iter()
            .filter(|i| i.name == *n || i.intrinsic.as_deref() == Some(n.as_str()))
            .collect();
        if found.is_empty() {
            let known: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "unknown instruction '{n}'{}",
                crate::words::did_you_mean(n, &known)
            )));
        }
        let usable: Vec<&Instruction> = found
            .iter()
            .copied()
            .filter(|i| i.intrinsic.is_some() && on_target(i))
            .collect();
        if usable.is_empty() {
            let i = found[0];
            let why = if i.intrinsic.is_none() {
                "has no intrinsic".to_string()
            } else {
                format!("is {}, not a selected ISA", i.isa)
            };
            return Err(Error::Usage(format!(
                "instruction '{n}' {why}; nothing to validate"
            )));
        }
        for i in usable {
            if !out.iter().any(|o| std::ptr::eq(*o, i)) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

/// Checks that the target's tools exist and that a trivial harness compiles, runs and echoes its stdin.
fn tools_ready(target: Toolchain, workdir: &Path) -> std::result::Result<(), String> {
    toolchain::check_tools(target)?;
    let src = format!(
        "{}\nint harness_main(void) {{ unsigned char b[8]; if (read_in(b, 8) != 8) return 1; emit(b, 8); return 0; }}\n",
        toolchain::prelude(target)
    );
    let probe = *b"isadb-ok";
    match toolchain::build_and_run(target, &src, &[], workdir, &probe) {
        Ok(out) if out == probe => Ok(()),
        Ok(out) => Err(format!(
            "{target} smoke test echoed {} bytes instead of its input",
            out.len()
        )),
        Err(f) => Err(format!("{target} smoke test failed: {f}")),
    }
}
