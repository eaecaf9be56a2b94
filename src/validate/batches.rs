//! Running one ISA's instructions on worker threads: the main thread generates inputs batch by
//! batch; a worker compiles and runs a batch of harnesses while a helper thread evaluates the
//! semantics on the same inputs; every lane is compared and judged.

use super::compare::{self, MAX_EXAMPLES};
use super::exec::{self, JobResult};
use super::harness::{Harness, Job};
use super::inputs::{self, InputSet};
use super::report::{skipped, InstrResult, Options};
use super::store::ValidationStatus;
use crate::ir::sexpr::read_one;
use crate::ir::{Macros, Scope, VecType};
use crate::semantics::{self, Env, Value};
use crate::spec::{Instruction, Operand};
use crate::toolchain::Toolchain;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// One instruction to execute.
pub(super) struct Work<'a> {
    /// Position in the ISA's selection (for stable output order).
    pub index: usize,
    pub ins: &'a Instruction,
    pub harness: Harness,
    pub flags: Vec<String>,
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
pub(super) fn run_target(
    target: Toolchain,
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
        (ValidationStatus::Validated, String::new())
    } else {
        (
            ValidationStatus::Mismatch,
            format!(
                "{bad} of {count} inputs differ; first: {}",
                mismatches[0].one_line()
            ),
        )
    };
    InstrResult {
        name: ins.name.clone(),
        isa: ins.isa,
        status,
        detail,
        inputs: count,
        cached: false,
        mismatched_inputs: bad,
        mismatches,
    }
}
