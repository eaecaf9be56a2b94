//! `isadb validate`: pick the instructions, reuse cached verdicts, generate inputs, evaluate the
//! semantics, run batches of compiled harnesses on worker threads, compare every lane and record
//! the outcome per (semantics hash, instruction).

use super::compare::{self, Mismatch, MAX_EXAMPLES};
use super::exec::{self, JobResult};
use super::features::{self, Host, Support};
use super::harness::{Harness, Job};
use super::inputs::{self, InputSet};
use super::store::{self, Row};
use super::toolchain::{self, Target};
use crate::database::Database;
use crate::database::Layout;
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::ir::{Macros, Scope, VecType};
use crate::semantics::{self, Env, Value};
use crate::spec::{Instruction, Operand};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// What to validate and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this ISA (`x86`, `neon`, `hvx`); all three when None.
    pub isa: Option<String>,
    /// Only these instructions (name or intrinsic); all when empty.
    pub instrs: Vec<String>,
    /// Inputs per instruction.
    pub inputs: usize,
    pub seed: u64,
    /// Re-run instructions whose (semantics hash, name) already has a result.
    pub force: bool,
    /// A missing compiler or emulator is an error instead of a skip (`ISADB_REQUIRE_TOOLS=1`).
    pub require_tools: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Most instructions compiled into one program.
    pub batch_size: usize,
    /// Batches compiled and run at once.
    pub workers: usize,
}

/// Default inputs per instruction.
pub const DEFAULT_INPUTS: usize = 100;
/// Default batch size: large enough to amortize compiler start-up, small enough to keep two cores busy.
pub const DEFAULT_BATCH: usize = 128;

impl Default for Options {
    fn default() -> Self {
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 4);
        Options {
            isa: None,
            instrs: Vec::new(),
            inputs: DEFAULT_INPUTS,
            seed: 1,
            force: false,
            require_tools: false,
            progress: false,
            batch_size: DEFAULT_BATCH,
            workers,
        }
    }
}

/// The outcome for one instruction.
#[derive(Debug, Clone, Serialize)]
pub struct InstrResult {
    pub name: String,
    pub isa: String,
    /// `validated`, `mismatch` or `skipped`.
    pub status: String,
    pub detail: String,
    pub inputs: usize,
    /// Taken from the database instead of run now.
    pub cached: bool,
    /// How many inputs disagreed (0 when cached).
    pub mismatched_inputs: usize,
    /// The first few disagreeing inputs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
}

/// Counts for one ISA.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IsaSummary {
    pub isa: String,
    /// Instructions of the ISA in the specs.
    pub instructions: usize,
    /// Selected instructions with an intrinsic (all of the ISA's unless --instr).
    pub with_intrinsic: usize,
    pub validated: usize,
    pub mismatched: usize,
    pub skipped: usize,
    /// Skip reason (the detail up to its first colon) → count.
    pub skip_reasons: BTreeMap<String, usize>,
    /// Executed in this run, and taken from the database.
    pub ran: usize,
    pub cached: usize,
    pub inputs_per_instruction: usize,
    pub wall_ms: f64,
    /// Executed instructions per second of wall time.
    pub instructions_per_second: f64,
}

/// Everything `validate` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub isas: Vec<IsaSummary>,
    pub results: Vec<InstrResult>,
    pub inputs: usize,
    pub seed: u64,
    pub wall_ms: f64,
    /// Database rows written or deleted.
    pub rows_changed: usize,
    /// Things the user should know that are not per-instruction results (a missing tool).
    pub warnings: Vec<String>,
}

impl Report {
    pub fn mismatched(&self) -> usize {
        self.isas.iter().map(|s| s.mismatched).sum()
    }
}

/// The reason category of a skip detail: the text before its first colon.
pub fn skip_category(detail: &str) -> String {
    detail
        .split(':')
        .next()
        .unwrap_or(detail)
        .trim()
        .to_string()
}

/// Validates the selected instructions against real execution and records the results.
pub fn validate(layout: &Layout, opts: &Options) -> Result<Report> {
    let start = Instant::now();
    let targets: Vec<Target> = match &opts.isa {
        None => Target::ALL.to_vec(),
        Some(isa) => vec![Target::from_isa(isa).ok_or_else(|| {
            Error::Usage(format!(
                "validate: unknown ISA '{isa}' (validation runs x86, neon and hvx)"
            ))
        })?],
    };
    if opts.inputs == 0 {
        return Err(Error::Usage("validate: --inputs must be at least 1".into()));
    }
    let mut db = layout.open()?;
    let all = load_instructions(&db)?;
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
            .filter(|i| Target::from_isa(&i.isa) == Some(target))
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
            .filter(|i| Target::from_isa(&i.isa) == Some(target))
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
    let rows_changed = record(&mut db, layout, &all, &selected, &targets, &results, opts)?;
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
    target: Target,
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
        let reusable =
            row.filter(|r| !(r.status == "skipped" && features::is_environmental(&r.detail)));
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
    match row.filter(|r| r.status != "skipped") {
        Some(r) => cached(r),
        None => skipped(ins, reason, inputs),
    }
}

/// Counts one ISA's results.
fn summarize(
    target: Target,
    isa_total: usize,
    results: &[InstrResult],
    ran: usize,
    t0: Instant,
    opts: &Options,
) -> IsaSummary {
    let secs = t0.elapsed().as_secs_f64();
    let mut s = IsaSummary {
        isa: target.name().to_string(),
        instructions: isa_total,
        with_intrinsic: results.len(),
        inputs_per_instruction: opts.inputs,
        ran,
        wall_ms: secs * 1000.0,
        instructions_per_second: if ran > 0 { ran as f64 / secs } else { 0.0 },
        ..IsaSummary::default()
    };
    for r in results {
        match r.status.as_str() {
            "validated" => s.validated += 1,
            "mismatch" => s.mismatched += 1,
            _ => {
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
    layout: &Layout,
    all: &[Instruction],
    selected: &[&Instruction],
    targets: &[Target],
    results: &[InstrResult],
    opts: &Options,
) -> Result<usize> {
    let today = store::today();
    let by_name: HashMap<&str, &Instruction> =
        selected.iter().map(|i| (i.name.as_str(), *i)).collect();
    let rows: Vec<Row> = results
        .iter()
        .filter(|r| !r.cached)
        .map(|r| Row {
            sem_hash: by_name[r.name.as_str()].sem_hash.clone(),
            instruction_name: r.name.clone(),
            isa: r.isa.clone(),
            inputs: r.inputs as i64,
            status: r.status.clone(),
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
                .filter(|i| Target::from_isa(&i.isa) == Some(*t))
                .map(|i| i.name.clone())
                .collect();
            scope.full_isas.insert(t.name().to_string(), names);
        }
    }
    let changed = store::save(db, &rows, &scope)?;
    store::export(db, &layout.tables)?;
    Ok(changed)
}

/// Every instruction of the database, in spec order (cheaper than expanding the spec files again
/// when the database is current). Only the semantics' canonical text is filled in: the workers
/// parse it where they evaluate it.
fn load_instructions(db: &Database) -> Result<Vec<Instruction>> {
    let mut stmt = db.conn().prepare(
        "SELECT i.name, i.intrinsic, i.asm, s.name, f.name, i.operands, i.result_type, i.semantics, i.sem_hash
         FROM instructions i JOIN isas s ON s.id = i.isa_id JOIN features f ON f.id = i.feature_id ORDER BY i.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, String>(6)?,
            r.get::<_, String>(7)?,
            r.get::<_, String>(8)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (name, intrinsic, asm, isa, feature, operands, result, sem_text, sem_hash) = row?;
        let bad = |what: &str| Error::data("instructions", format!("{name}: bad {what}"));
        let operands: Vec<Operand> =
            serde_json::from_str(&operands).map_err(|_| bad("operands"))?;
        let result = VecType::parse(&result).ok_or_else(|| bad("result type"))?;
        out.push(Instruction {
            name,
            intrinsic,
            asm,
            isa,
            feature,
            operands,
            result,
            sem_text,
            sem_hash,
            ..Instruction::default()
        });
    }
    Ok(out)
}

/// The instructions to validate: with an intrinsic, of the given targets, and (when `names` is not
/// empty) named by name or intrinsic. Unknown names are usage errors.
fn select<'a>(
    all: &'a [Instruction],
    targets: &[Target],
    names: &[String],
) -> Result<Vec<&'a Instruction>> {
    let on_target =
        |i: &Instruction| Target::from_isa(&i.isa).is_some_and(|t| targets.contains(&t));
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
                crate::ir::parse::did_you_mean(n, &known)
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

fn cached(r: &Row) -> InstrResult {
    InstrResult {
        name: r.instruction_name.clone(),
        isa: r.isa.clone(),
        status: r.status.clone(),
        detail: r.detail.clone(),
        inputs: r.inputs.max(0) as usize,
        cached: true,
        mismatched_inputs: 0,
        mismatches: Vec::new(),
    }
}

fn skipped(ins: &Instruction, reason: String, inputs: usize) -> InstrResult {
    InstrResult {
        name: ins.name.clone(),
        isa: ins.isa.clone(),
        status: "skipped".into(),
        detail: reason,
        inputs,
        cached: false,
        mismatched_inputs: 0,
        mismatches: Vec::new(),
    }
}

/// Checks that the target's tools exist and that a trivial harness compiles, runs and echoes its stdin.
fn tools_ready(target: Target, workdir: &Path) -> std::result::Result<(), String> {
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

/// One instruction to execute.
struct Work<'a> {
    /// Position in the ISA's selection (for stable output order).
    index: usize,
    ins: &'a Instruction,
    harness: Harness,
    flags: Vec<String>,
}

/// What the main thread keeps of a job while a worker runs it.
struct Pending<'a> {
    index: usize,
    ins: &'a Instruction,
    harness: Harness,
    set: Arc<InputSet>,
}

/// The interpreter's share of a job, evaluated on a worker thread (the IR is not `Send`, so the
/// worker parses the semantics' canonical text itself).
struct EvalTask {
    sem_text: String,
    name: String,
    operands: Vec<Operand>,
    result: VecType,
    set: Arc<InputSet>,
}

/// A batch for a worker: jobs to compile and run, and the semantics to evaluate meanwhile.
struct Batch {
    id: usize,
    jobs: Vec<Job>,
    evals: Vec<EvalTask>,
}

/// A worker's answer: per job its run result and the expected lanes (or why they are missing).
type Finished = (
    usize,
    Vec<JobResult>,
    Vec<std::result::Result<Vec<Vec<u128>>, String>>,
);

/// Runs the work for one target on `opts.workers` threads: the main thread generates inputs batch
/// by batch; a worker compiles and runs a batch while a helper thread evaluates its semantics.
fn run_target(
    target: Target,
    work: Vec<Work>,
    opts: &Options,
    workdir: &Path,
) -> Vec<(usize, InstrResult)> {
    let workers = opts.workers.max(1);
    let n = work.len();
    let mut batches = n.div_ceil(opts.batch_size.max(1));
    batches = batches.div_ceil(workers) * workers;
    let per_batch = n.div_ceil(batches).max(1);
    let progress = opts.progress.then(|| {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(n as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg:>5} [{bar:40}] {pos}/{len} instructions, {elapsed}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(target.name());
        bar
    });

    let mut out: Vec<(usize, InstrResult)> = Vec::new();
    let mut work = work.into_iter().peekable();
    std::thread::scope(|scope| {
        let (job_tx, job_rx) = mpsc::sync_channel::<Batch>(workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (res_tx, res_rx) = mpsc::channel::<Finished>();
        for _ in 0..workers {
            let rx = Arc::clone(&job_rx);
            let tx = res_tx.clone();
            scope.spawn(move || loop {
                let next = rx.lock().map(|r| r.recv());
                let Ok(Ok(batch)) = next else { break };
                let Batch { id, jobs, evals } = batch;
                let (results, expected) = std::thread::scope(|s| {
                    let eval = s.spawn(move || {
                        let t0 = Instant::now();
                        let out = evals.iter().map(evaluate).collect::<Vec<_>>();
                        if std::env::var_os("ISADB_VALIDATE_TIMING").is_some() {
                            use std::io::Write;
                            let ms = t0.elapsed().as_secs_f64() * 1000.0;
                            let _ = writeln!(
                                std::io::stderr(),
                                "interpreter for {} instructions: {ms:.0} ms",
                                out.len()
                            );
                        }
                        out
                    });
                    let results = exec::run_batch(target, jobs, workdir);
                    let n = results.len();
                    let expected = eval
                        .join()
                        .unwrap_or_else(|_| vec![Err("interpreter panicked".to_string()); n]);
                    (results, expected)
                });
                if tx.send((id, results, expected)).is_err() {
                    break;
                }
            });
        }
        // Only the workers hold the job receiver: if they all die, sending fails instead of blocking.
        drop(job_rx);
        drop(res_tx);
        let mut pending: HashMap<usize, Vec<Pending>> = HashMap::new();
        let finish = |(id, results, expected): Finished,
                      pending: &mut HashMap<usize, Vec<Pending>>,
                      out: &mut Vec<(usize, InstrResult)>| {
            let batch = pending.remove(&id).unwrap_or_default();
            if let Some(bar) = &progress {
                bar.inc(batch.len() as u64);
            }
            for ((p, r), e) in batch.into_iter().zip(results).zip(expected) {
                let result = match e {
                    Ok(e) => judge(&p, r, &e),
                    Err(why) => skipped(
                        p.ins,
                        format!("interpreter error: {why}"),
                        p.set.inputs.len(),
                    ),
                };
                out.push((p.index, result));
            }
        };
        let mut id = 0;
        while work.peek().is_some() {
            let chunk: Vec<Work> = work.by_ref().take(per_batch).collect();
            let mut batch = Batch {
                id,
                jobs: Vec::with_capacity(chunk.len()),
                evals: Vec::with_capacity(chunk.len()),
            };
            let mut kept = Vec::with_capacity(chunk.len());
            for w in chunk {
                let set = Arc::new(inputs::generate(
                    &w.ins.operands,
                    opts.inputs,
                    opts.seed,
                    &w.ins.name,
                ));
                batch.jobs.push(Job::new(w.harness.clone(), &set, w.flags));
                batch.evals.push(EvalTask {
                    sem_text: w.ins.sem_text.clone(),
                    name: w.ins.name.clone(),
                    operands: w.ins.operands.clone(),
                    result: w.ins.result,
                    set: Arc::clone(&set),
                });
                kept.push(Pending {
                    index: w.index,
                    ins: w.ins,
                    harness: w.harness,
                    set,
                });
            }
            pending.insert(id, kept);
            if job_tx.send(batch).is_err() {
                break;
            }
            id += 1;
            while let Ok(done) = res_rx.try_recv() {
                finish(done, &mut pending, &mut out);
            }
        }
        drop(job_tx);
        for done in res_rx {
            finish(done, &mut pending, &mut out);
        }
        // Anything a crashed worker left behind.
        for (_, batch) in pending.drain() {
            for p in batch {
                out.push((
                    p.index,
                    skipped(p.ins, "harness: worker thread failed".into(), opts.inputs),
                ));
            }
        }
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    out
}

/// The interpreter's result lanes for every input of a task.
fn evaluate(task: &EvalTask) -> std::result::Result<Vec<Vec<u128>>, String> {
    let macros = Macros::default();
    let sem = Scope::new(&macros)
        .expr(
            &read_one(&task.sem_text, &format!("semantics of {}", task.name))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(task.set.inputs.len());
    let mut env = Env::new();
    for input in &task.set.inputs {
        for (op, lanes) in task.operands.iter().zip(&input.lanes) {
            env.insert(op.name.clone(), Value::new(op.ty, lanes.clone()));
        }
        let v = semantics::eval(&sem, &env).map_err(|e| e.to_string())?;
        if v.ty != task.result {
            return Err(format!(
                "semantics produce {}, the result type is {}",
                v.ty, task.result
            ));
        }
        out.push(v.lanes);
    }
    Ok(out)
}

/// Compares a job's executed results with the expected ones.
fn judge(p: &Pending, r: JobResult, expected: &[Vec<u128>]) -> InstrResult {
    let ins = p.ins;
    let count = p.set.inputs.len();
    let bytes = match r {
        JobResult::Failed(reason) => return skipped(ins, reason, count),
        JobResult::Output(b) => b,
    };
    let actual = p.harness.decode(&bytes);
    if actual.len() != count || expected.len() != count {
        return skipped(
            ins,
            format!("harness: {} results for {count} inputs", actual.len()),
            count,
        );
    }
    let ty = p.harness.result.ty;
    let mut mismatches = Vec::new();
    let mut bad = 0;
    for (i, (exp, act)) in expected.iter().zip(&actual).enumerate() {
        let lanes = compare::differing_lanes(ty, exp, act);
        if lanes.is_empty() {
            continue;
        }
        bad += 1;
        if mismatches.len() < MAX_EXAMPLES {
            mismatches.push(compare::describe(
                i,
                &ins.operands,
                &p.set.inputs[i].lanes,
                ty,
                exp,
                act,
                lanes,
            ));
        }
    }
    let (status, detail) = if bad == 0 {
        ("validated", String::new())
    } else {
        (
            "mismatch",
            format!(
                "{bad} of {count} inputs differ; first: {}",
                mismatches[0].one_line()
            ),
        )
    };
    InstrResult {
        name: ins.name.clone(),
        isa: ins.isa.clone(),
        status: status.into(),
        detail,
        inputs: count,
        cached: false,
        mismatched_inputs: bad,
        mismatches,
    }
}
