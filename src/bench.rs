//! `isadb bench`: the speed figures the issues set targets for, measured on this machine —
//! database build, whole-process query latency, interpreter throughput, proof time, and
//! instruction selection per expression.

use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::ir::Scope;
use crate::project::{Matching, Project};
use crate::select::Selector;
use crate::semantics::{eval, prove_equivalent, Env, Value};
use crate::spec::load_dir;
use crate::spec::TARGETS;
use serde::Serialize;
use std::collections::HashMap;
use std::process::Command;
use std::time::Instant;

#[derive(Debug, Serialize)]
pub struct Figures {
    /// Fresh build of the database from specs and committed tables (cached idiom matches).
    pub db_build_ms: f64,
    pub instructions: usize,
    /// Median wall time of a whole `isadb query` process, per query text.
    pub query_process_ms: Vec<(String, f64)>,
    /// Interpreter evaluations per second over every instruction, at full width.
    pub interpreter_evals_per_s: f64,
    /// z3 time of the halving_add proof at 64 u8 lanes.
    pub prove_halving_add_u8x64_ms: f64,
    /// Loading each target's catalog (instructions, facts, rules) from the database.
    pub compile_catalog_ms: Vec<(String, f64)>,
    /// Instruction selection per expression of the corpus: cold (program generation + egglog,
    /// no cache) and cached (a selection cache hit), median and maximum, and the median z3
    /// translation validation of the cold selections.
    pub compile_expressions: usize,
    pub compile_cold_median_ms: f64,
    pub compile_cold_max_ms: f64,
    pub compile_cached_median_ms: f64,
    pub compile_cached_max_ms: f64,
    pub compile_validate_median_ms: f64,
    /// A whole `isadb compile` process per corpus expression (no selection cache): median and
    /// maximum.
    pub compile_process_median_ms: f64,
    pub compile_process_max_ms: f64,
}

/// The selection corpus: Pitchfork's and Halide's fixed-point patterns on each target.
const COMPILE_CORPUS: [(&str, &str); 16] = [
    ("neon", "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)"),
    ("neon", "absd(a_u16, b_u16)"),
    ("neon", "u8(min(z_u16, 255))"),
    ("neon", "u8((u16(a_u8) + u16(b_u8) + 1) / 2)"),
    (
        "neon",
        "i16_sat((i32(a_i16) * i32(b_i16) + (1 << 14)) / (1 << 15))",
    ),
    ("neon", "i8_sat((i32(a_i16) + 8) / 16)"),
    ("neon", "a_u16 + u16(absd(b_u8, c_u8))"),
    ("neon", "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))"),
    ("x86-avx2", "absd(a_u16, b_u16)"),
    ("x86-avx2", "u8(min(z_u16, 255))"),
    ("x86-avx2", "i16((i32(a_i16) * i32(b_i16) + 16384) >> 15)"),
    ("x86-avx2", "reduce_add(2, i32(a_i16) * i32(b_i16))"),
    (
        "x86-avx512",
        "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))",
    ),
    ("hvx", "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)"),
    ("hvx", "u8(min(u16(a_u8) + u16(b_u8), 255))"),
    ("hvx", "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))"),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Per-run times over the corpus, in ms.
struct SelectionTimes {
    /// Selection without the cache (program generation + egglog).
    cold: Vec<f64>,
    /// Selection answered by the cache.
    cached: Vec<f64>,
    /// z3 translation validation of the cold selections.
    validate: Vec<f64>,
}

/// Compiles each corpus expression `rounds` times without the cache, then once to store it in
/// `cache` and `rounds` times more from it.
fn selection_times(
    selectors: &mut [Selector],
    cache: &mut Database,
    rounds: usize,
) -> Result<SelectionTimes> {
    let mut times = SelectionTimes {
        cold: Vec::new(),
        cached: Vec::new(),
        validate: Vec::new(),
    };
    let declared = HashMap::new();
    for (target, text) in COMPILE_CORPUS {
        let selector = selectors
            .iter_mut()
            .find(|s| s.catalog.target.name == target)
            .expect("corpus targets exist");
        for _ in 0..rounds {
            let c = selector.compile(text, None, &declared, None)?;
            times.cold.push(c.select_ms);
            times.validate.push(c.validate_ms);
        }
        selector.compile(text, None, &declared, Some(&mut *cache))?;
        for _ in 0..rounds {
            let c = selector.compile(text, None, &declared, Some(&mut *cache))?;
            if !c.cached {
                return Err(Error::Tool(format!(
                    "{target} {text:?}: the stored selection was not found in the cache"
                )));
            }
            times.cached.push(c.select_ms);
        }
    }
    Ok(times)
}

/// The wall time of one `isadb --home HOME ARGS...` process; an error if it exits with 2 (bad
/// input or a failure).
fn process_ms(exe: &std::path::Path, home: &std::path::Path, args: &[&str]) -> Result<f64> {
    let t = Instant::now();
    let out = Command::new(exe)
        .arg("--home")
        .arg(home)
        .args(args)
        .output()
        .map_err(|e| Error::io(exe, e))?;
    if out.status.code() == Some(2) {
        return Err(Error::Tool(format!(
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// Processes run per expression for the whole-process figure.
pub const PROCESS_RUNS: usize = 3;

/// Measures every figure on `project`, each query process and selection `rounds` times (a
/// compile process [`PROCESS_RUNS`] times per expression).
pub fn run(project: &Project, rounds: usize) -> Result<Figures> {
    // Scratch databases live in a temporary directory removed when this function returns.
    let scratch = tempfile::Builder::new()
        .prefix("isadb-bench-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let fresh = Project {
        db: scratch.path().join("isadb.sqlite"),
        ..project.clone()
    };
    let start = Instant::now();
    let specs = load_dir(&fresh.specs)?;
    drop(fresh.build(&specs, Matching::Reuse)?);
    let db_build_ms = start.elapsed().as_secs_f64() * 1000.0;

    project.open()?;
    let exe = std::env::current_exe().map_err(|e| Error::io("isadb", e))?;
    let home = &project.home;
    let mut query_process_ms = Vec::new();
    for q in [
        "dot-product on hvx",
        "dot-product on x86",
        "equivalents of _mm256_avg_epu8 on neon",
        "idioms of vdotq_u32",
    ] {
        let times = (0..rounds)
            .map(|_| process_ms(&exe, home, &["query", q]))
            .collect::<Result<Vec<f64>>>()?;
        query_process_ms.push((q.to_string(), median(times)));
    }
    // Each corpus expression compiled by a process of its own, without the selection cache:
    // the whole of what one `isadb compile` costs (catalog, selection, proof), the median of
    // [`PROCESS_RUNS`] (one process varies by a fifth on a busy machine, and the first on each
    // target computes the catalog fingerprint the others find kept).
    let compile_process_ms = COMPILE_CORPUS
        .iter()
        .map(|(target, text)| {
            let runs = (0..PROCESS_RUNS)
                .map(|_| {
                    process_ms(
                        &exe,
                        home,
                        &["compile", text, "--target", target, "--no-cache"],
                    )
                })
                .collect::<Result<Vec<f64>>>()?;
            Ok(median(runs))
        })
        .collect::<Result<Vec<f64>>>()?;

    let envs: Vec<(usize, Env)> = specs
        .instructions
        .iter()
        .enumerate()
        .map(|(i, ins)| {
            let env = ins
                .operands
                .iter()
                .map(|o| {
                    (
                        o.name.clone(),
                        Value::new(o.ty, vec![3; o.ty.lanes as usize]),
                    )
                })
                .collect();
            (i, env)
        })
        .collect();
    let start = Instant::now();
    let mut evals = 0usize;
    while start.elapsed().as_secs_f64() < 1.0 {
        for (i, env) in &envs {
            eval(&specs.instructions[*i].semantics, env)?;
            evals += 1;
        }
    }
    let interpreter_evals_per_s = evals as f64 / start.elapsed().as_secs_f64();

    let mut scope = Scope::new(&specs.macros);
    scope.implicit_lanes = Some(64);
    let lhs = scope.expr(&read_one("(halving_add a_u8 b_u8)", "bench")?)?;
    let rhs = scope.expr(&read_one(
        "(add (and a_u8 b_u8) (shr (xor a_u8 b_u8) 1))",
        "bench",
    )?)?;
    let t = Instant::now();
    prove_equivalent(&lhs, &rhs, None, 60_000)?;
    let prove_halving_add_u8x64_ms = t.elapsed().as_secs_f64() * 1000.0;

    let mut compile_catalog_ms = Vec::new();
    let mut selectors = Vec::new();
    for t in TARGETS {
        let start = Instant::now();
        selectors.push(Selector::load(project, t)?);
        compile_catalog_ms.push((t.name.to_string(), start.elapsed().as_secs_f64() * 1000.0));
    }
    // The selection cache lives in a fresh database file, so the project's own cache is neither
    // used nor filled.
    let times = Database::open(scratch.path().join("cache.sqlite"))
        .and_then(|mut cache| selection_times(&mut selectors, &mut cache, rounds));
    let SelectionTimes {
        cold,
        cached,
        validate,
    } = times?;
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let compile_process_max_ms = max(&compile_process_ms);

    Ok(Figures {
        compile_catalog_ms,
        compile_expressions: COMPILE_CORPUS.len(),
        compile_cold_max_ms: max(&cold),
        compile_cold_median_ms: median(cold),
        compile_cached_max_ms: max(&cached),
        compile_cached_median_ms: median(cached),
        compile_validate_median_ms: median(validate),
        compile_process_median_ms: median(compile_process_ms),
        compile_process_max_ms,
        db_build_ms,
        instructions: specs.instructions.len(),
        query_process_ms,
        interpreter_evals_per_s,
        prove_halving_add_u8x64_ms,
    })
}
