//! Running one batch of jobs: a single compile and run when all is well. A compile error is pinned
//! on the instruction whose function it is in (by the error's source line or gcc's "In function"
//! context; otherwise by bisecting the batch), a crash or hang on the instruction that was running
//! (the per-job output markers say which), and the rest of the batch runs again without it. So one
//! bad intrinsic is reported on its own and never sinks or mislabels its neighbours.

use super::harness::{self, Job, Source};
use crate::toolchain::{self, Failure, Toolchain};
use std::path::Path;

/// What became of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobResult {
    /// The raw output records.
    Output(Vec<u8>),
    /// It could not be run; the reason starts with "does not compile", "does not link",
    /// "run failed" or "harness".
    Failed(String),
}

/// Flags every harness compile gets: an unknown intrinsic is an error in its own function rather
/// than an undefined symbol at link time; gcc optimizes with `-Og`, which compiles about twice as
/// fast as `-O1` and, unlike `-O0`, still defines `__OPTIMIZE__`, so the headers' inline-function
/// intrinsics are used (gcc 12's `-O0` macro forms of e.g. `_mm_mask_alignr_epi8` ignore their
/// pass-through operand). clang's HVX intrinsics are the same macros at every level, so HVX
/// compiles with `-O0`, several times faster than `-O1`.
fn strict_flags(target: Toolchain) -> Vec<String> {
    let opt = if target == Toolchain::Hvx {
        "-O0"
    } else {
        "-Og"
    };
    vec![
        "-Werror=implicit-function-declaration".to_string(),
        opt.to_string(),
    ]
}

/// Runs `jobs` for `target`, returning one result per job. A job that does not compile with its
/// default C types is tried once more with their alternatives ([`Harness::with_alternatives`]).
///
/// [`Harness::with_alternatives`]: super::harness::Harness::with_alternatives
pub fn run_batch(target: Toolchain, jobs: Vec<Job>, workdir: &Path) -> Vec<JobResult> {
    let mut state = State {
        jobs,
        results: Vec::new(),
        first_error: Vec::new(),
    };
    state.results = vec![None; state.jobs.len()];
    state.first_error = vec![None; state.jobs.len()];
    let all = (0..state.jobs.len()).collect();
    run_subset(target, &mut state, all, workdir);
    state
        .results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| JobResult::Failed("harness: no result".into())))
        .collect()
}

struct State {
    jobs: Vec<Job>,
    results: Vec<Option<JobResult>>,
    /// The compile error with the default C types, for jobs now trying their alternatives.
    first_error: Vec<Option<String>>,
}

impl State {
    /// Records that job `i` does not compile (with `msg`), unless it has alternative C types left
    /// to try: then it switches to them and returns true (keep it pending).
    fn compile_failed(&mut self, i: usize, what: &str, msg: String) -> bool {
        if self.first_error[i].is_none() {
            if let Some(h) = self.jobs[i].harness.with_alternatives() {
                self.first_error[i] =
                    Some(format!("{msg} [C: {}]", self.jobs[i].harness.prototype()));
                self.jobs[i].harness = h;
                return true;
            }
        }
        let detail = match self.first_error[i].take() {
            Some(first) => format!("{what}: {first}"),
            None => format!("{what}: {msg} [C: {}]", self.jobs[i].harness.prototype()),
        };
        self.results[i] = Some(JobResult::Failed(detail));
        false
    }
}

fn run_subset(target: Toolchain, st: &mut State, mut pending: Vec<usize>, workdir: &Path) {
    while !pending.is_empty() {
        let refs: Vec<&Job> = pending.iter().map(|&i| &st.jobs[i]).collect();
        let src = harness::source(target, &refs);
        let mut flags = strict_flags(target);
        for j in &refs {
            for f in j
                .flags
                .iter()
                .filter(|f| !harness::is_function_flag(target, f))
            {
                if !flags.contains(f) {
                    flags.push(f.clone());
                }
            }
        }
        let input = harness::stdin_bytes(&refs);
        let t0 = std::time::Instant::now();
        let r = toolchain::build_and_run(target, &src.text, &flags, workdir, &input);
        if std::env::var_os("ISADB_VALIDATE_TIMING").is_some() {
            use std::io::Write;
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            let _ = writeln!(
                std::io::stderr(),
                "{target} batch of {} ({} input bytes): {ms:.0} ms",
                refs.len(),
                input.len()
            );
        }
        match r {
            Ok(stdout) => {
                let parsed = harness::parse_output(&refs, &stdout);
                let done = parsed.outputs.len();
                for (k, out) in parsed.outputs.into_iter().enumerate() {
                    st.results[pending[k]] = Some(JobResult::Output(out));
                }
                if !parsed.complete {
                    for &i in &pending[done..] {
                        st.results[i] = Some(JobResult::Failed(format!(
                            "harness: output ends early or is malformed ({} bytes)",
                            stdout.len()
                        )));
                    }
                }
                return;
            }
            Err(Failure::Build {
                stage,
                summary,
                stderr,
            }) => {
                let blamed = if stage == "compile" {
                    attribute(&src, &stderr)
                } else {
                    Vec::new()
                };
                if !blamed.is_empty() {
                    let mut keep = Vec::with_capacity(pending.len());
                    for (k, &i) in pending.iter().enumerate() {
                        match blamed.iter().find(|b| b.0 == k) {
                            Some((_, msg)) => {
                                if st.compile_failed(i, "does not compile", msg.clone()) {
                                    keep.push(i);
                                }
                            }
                            None => keep.push(i),
                        }
                    }
                    pending = keep;
                    continue;
                }
                if pending.len() == 1 {
                    let what = if stage == "compile" {
                        "does not compile"
                    } else {
                        "does not link"
                    };
                    let msg = first_error(&stderr).unwrap_or(summary);
                    if st.compile_failed(pending[0], what, msg) {
                        continue;
                    }
                    return;
                }
                return bisect(target, st, pending, workdir);
            }
            Err(Failure::Run { summary, stdout }) => {
                let parsed = harness::parse_output(&refs, &stdout);
                let done = parsed.outputs.len();
                for (k, out) in parsed.outputs.into_iter().enumerate() {
                    st.results[pending[k]] = Some(JobResult::Output(out));
                }
                let culprit = match parsed.started {
                    Some(k) => k,
                    None if pending.len() - done == 1 => done,
                    None => {
                        let rest = pending[done..].to_vec();
                        return bisect(target, st, rest, workdir);
                    }
                };
                st.results[pending[culprit]] = Some(JobResult::Failed(format!(
                    "run failed: {}",
                    run_detail(&summary)
                )));
                pending = pending[culprit + 1..].to_vec();
            }
            Err(Failure::Setup(msg)) => {
                for &i in &pending {
                    st.results[i] = Some(JobResult::Failed(format!("harness: {msg}")));
                }
                return;
            }
        }
    }
}

/// Splits `pending` in halves and runs each on its own.
fn bisect(target: Toolchain, st: &mut State, pending: Vec<usize>, workdir: &Path) {
    let mid = pending.len() / 2;
    run_subset(target, st, pending[..mid].to_vec(), workdir);
    run_subset(target, st, pending[mid..].to_vec(), workdir);
}

/// The stable part of a run failure: its status and the program's stderr, without the program's
/// path or the byte count (which depend on the batch).
fn run_detail(summary: &str) -> String {
    let s = summary.split_once("` ").map_or(summary, |x| x.1);
    match s.split_once(" after writing ") {
        Some((status, rest)) => match rest.split_once("; stderr: ") {
            Some((_, err)) => format!("{status}; stderr: {err}"),
            None => status.to_string(),
        },
        None => s.to_string(),
    }
}

/// A diagnostic line `FILE:LINE:COL: error: MESSAGE` (or `fatal error`): (file, line, message).
fn error_line(line: &str) -> Option<(&str, usize, &str)> {
    let (loc, msg) = line
        .split_once(": error: ")
        .or_else(|| line.split_once(": fatal error: "))?;
    let mut it = loc.rsplitn(3, ':');
    let _col = it.next()?;
    let lno = it.next()?.parse().ok()?;
    Some((it.next()?, lno, msg.trim()))
}

/// A line of our source file referenced by a diagnostic line (`FILE.c:LINE:...`).
fn source_line_ref(line: &str) -> Option<usize> {
    let i = line.find(".c:")?;
    line[i + 3..].split(':').next()?.parse().ok()
}

/// The first error message in compiler output.
fn first_error(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find_map(|l| error_line(l).map(|(_, _, m)| m.to_string()))
}

/// Pins each compile error on a job: (job index, its first error message). Errors whose job
/// cannot be told are left out.
fn attribute(src: &Source, stderr: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut blamed: Vec<(usize, String)> = Vec::new();
    let mut context: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.split_once("In function 'isadb_run_").map(|x| x.1) {
            context = rest.split('\'').next().and_then(|k| k.parse().ok());
            continue;
        }
        if line.contains(": In function '") {
            context = None;
            continue;
        }
        let Some((file, lno, msg)) = error_line(line) else {
            continue;
        };
        let job = if file.ends_with(".c") {
            src.job_at_line(lno)
        } else {
            // In a header (an inline intrinsic): gcc's function context, or the first later note in our file.
            context.or_else(|| {
                lines[i + 1..]
                    .iter()
                    .take_while(|l| error_line(l).is_none())
                    .find_map(|l| source_line_ref(l))
                    .and_then(|n| src.job_at_line(n))
            })
        };
        if let Some(k) = job {
            if !blamed.iter().any(|b| b.0 == k) {
                blamed.push((k, msg.to_string()));
            }
        }
    }
    blamed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VecType;
    use crate::spec::{Instruction, Operand};
    use crate::toolchain::features;
    use crate::validate::harness::Harness;
    use crate::validate::inputs;

    /// A job for a two-operand x86 intrinsic on `<N x i16>` with the given C type and flags.
    fn job(intrinsic: &str, lanes: u32, c: Option<&str>, flags: &[&str]) -> Job {
        let ty = VecType::parse(&format!("<{lanes} x i16>")).unwrap();
        let op = |n: &str| Operand {
            name: n.into(),
            ty,
            c_type: c.map(str::to_string),
            imm: None,
        };
        let ins = Instruction::for_harness_tests(intrinsic, vec![op("a"), op("b")], ty);
        let h = Harness::new(Toolchain::X86, &ins).unwrap();
        let set = inputs::generate(&ins.operands, 5, 1, intrinsic);
        Job::new(h, &set, flags.iter().map(|s| s.to_string()).collect())
    }

    /// A job for one instruction of the shipped specs.
    fn spec_job(ins: &Instruction, flags: Vec<String>) -> Option<Job> {
        let h = Harness::new(Toolchain::X86, ins).ok()?;
        let name = ins.intrinsic.as_deref()?;
        let set = inputs::generate(&ins.operands, 5, 1, name);
        Some(Job::new(h, &set, flags))
    }

    #[test]
    fn a_crash_or_compile_error_is_pinned_on_its_instruction() {
        if toolchain::check_tools(Toolchain::X86).is_err() || !cfg!(target_arch = "x86_64") {
            eprintln!("skipping: no gcc for x86-64 here");
            return;
        }
        let workdir = tempfile::tempdir().unwrap();
        let workdir = workdir.path();
        // A compile error in the middle of a batch.
        let jobs = vec![
            job("_mm_add_epi16", 8, None, &[]),
            job("_mm_nonexistent_epi16", 8, None, &[]),
            job("_mm_sub_epi16", 8, None, &[]),
        ];
        let r = run_batch(Toolchain::X86, jobs, workdir);
        assert!(matches!(&r[0], JobResult::Output(b) if b.len() == 5 * 16));
        assert!(
            matches!(&r[1], JobResult::Failed(m) if m.starts_with("does not compile: implicit declaration")),
            "{:?}",
            r[1]
        );
        assert!(matches!(&r[2], JobResult::Output(_)));
        // An instruction of a feature this CPU lacks (by the feature table validation uses),
        // compiled anyway, dies with SIGILL; its neighbours still run. The first lacking feature
        // with an instruction in the specs that this gcc compiles is the one tried.
        let lacking = features::x86_features_missing(&features::Host::detect());
        let specs =
            crate::spec::load_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs"))
                .unwrap();
        for feature in &lacking {
            let Some(ins) = specs.instructions.iter().find(|i| {
                i.isa == crate::spec::Isa::X86
                    && i.feature == *feature
                    && i.intrinsic.is_some()
                    && i.operands.iter().all(|o| o.imm.is_none())
            }) else {
                continue;
            };
            let Some(lacking_job) = spec_job(ins, features::compile_flags(Toolchain::X86, feature))
            else {
                continue;
            };
            let jobs = vec![
                job("_mm_add_epi16", 8, None, &[]),
                lacking_job,
                job("_mm_sub_epi16", 8, None, &[]),
            ];
            let r = run_batch(Toolchain::X86, jobs, workdir);
            if matches!(&r[1], JobResult::Failed(m) if m.starts_with("does not compile")) {
                continue;
            }
            let name = ins.intrinsic.as_deref().unwrap_or_default();
            assert!(matches!(&r[0], JobResult::Output(_)), "{name}: {:?}", r[0]);
            assert!(
                matches!(&r[1], JobResult::Failed(m) if m.starts_with("run failed: killed by signal 4")),
                "{name} ({feature}, which this CPU lacks): {:?}",
                r[1]
            );
            assert!(matches!(&r[2], JobResult::Output(_)), "{name}: {:?}", r[2]);
            return;
        }
        eprintln!(
            "skipping the SIGILL assertion: this CPU has every x86 feature of the specs that gcc compiles (lacks {lacking:?})"
        );
    }

    #[test]
    fn attributes_gcc_and_clang_errors() {
        let src = Source {
            text: String::new(),
            lines: vec![(10, 20), (21, 30), (31, 40)],
        };
        let gcc = "/tmp/x/isadb_x86_1.c: In function 'isadb_run_1':\n\
                   /tmp/x/isadb_x86_1.c:25:11: error: incompatible type for argument 1 of '_mm_add_epi16'\n\
                   /tmp/x/isadb_x86_1.c: In function 'isadb_run_2':\n\
                   /usr/lib/gcc/x86_64-linux-gnu/12/include/emmintrin.h:1200:1: error: inlining failed in call to 'always_inline' '_mm_foo': target specific option mismatch\n\
                   /tmp/x/isadb_x86_1.c:35:9: note: called from here\n";
        assert_eq!(
            attribute(&src, gcc),
            vec![(1, "incompatible type for argument 1 of '_mm_add_epi16'".to_string()), (2, "inlining failed in call to 'always_inline' '_mm_foo': target specific option mismatch".to_string())]
        );
        let clang = "/tmp/isadb_hvx_2.c:12:13: error: passing 'HVX_Vector' to parameter of incompatible type 'HVX_VectorPred'\n";
        assert_eq!(attribute(&src, clang)[0].0, 0);
        let global = "/tmp/isadb_hvx_2.c:3:1: error: unknown type name 'foo'\n";
        assert!(attribute(&src, global).is_empty());
        assert_eq!(
            first_error(global).as_deref(),
            Some("unknown type name 'foo'")
        );
        assert_eq!(
            run_detail(
                "x86 run failed: `/tmp/a.elf` killed by signal 4 after writing 96 stdout bytes"
            ),
            "killed by signal 4"
        );
        assert_eq!(
            run_detail("neon run failed: `qemu-aarch64` exit status 1 after writing 0 stdout bytes; stderr: qemu: oops"),
            "exit status 1; stderr: qemu: oops"
        );
        assert_eq!(
            run_detail("hvx run: `qemu-hexagon` timed out after 120s"),
            "timed out after 120s"
        );
    }
}
