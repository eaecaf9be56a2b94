//! `isadb bench`: the speed figures, measured on this machine; `isadb bench kernels`: the
//! kernel benchmark; `isadb bench totality`: the totality table.

use super::{text_choice, Context, Outcome};
use crate::error::Result;
use crate::select::totality::{cells, walk, Coverage, Detail};
use crate::spec::{Target, TARGETS};
use crate::words::text_enum;
use std::io::Write;

text_enum! {
    /// A benchmark suite besides the default one.
    pub enum Suite("benchmark") {
        /// Every kernel of the Diospyros/Isaria evaluations, compiled and run.
        Kernels = "kernels",
        /// The operator x type x lanes x target table of instruction selection.
        Totality = "totality",
        /// The selection corpus compiled with `compile --batch` on every target.
        Batch = "batch",
    }
}

text_choice!(Suite, "benchmark");

/// `bench kernels [--only NAME]`: costs, compile times and memory of every benchmark kernel, and
/// the emitted code timed against gcc and Eigen.
pub fn kernels(ctx: &Context, only: Option<&str>) -> Result<Outcome> {
    let b = crate::kernel::bench::run(&ctx.project, only)?;
    ctx.print(&b, || b.to_string())?;
    Ok(Outcome::Success)
}

/// `bench totality [--target T]...`: every cell selected and proven, progress on stderr, the
/// table (and each cell that is not direct) on stdout; exit 1 when a cell fails.
pub fn totality(ctx: &Context, targets: &[Target]) -> Result<Outcome> {
    let targets: Vec<Target> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        targets.to_vec()
    };
    let mut tables = Vec::new();
    for target in targets {
        let all = cells(target);
        let total = all.len();
        let mut done = 0;
        let table = walk(
            &ctx.project,
            target,
            all,
            Detail::DirectOrRules,
            &mut |cell, coverage| {
                done += 1;
                if let Coverage::Failed(e) = coverage {
                    eprintln!(
                        "{}: {} at {} lanes FAILED: {e}",
                        target.name, cell.expression, cell.lanes
                    );
                }
                if done % 50 == 0 || done == total {
                    eprint!("\r{}: {done}/{total} cells", target.name);
                    let _ = std::io::stderr().flush();
                    if done == total {
                        eprintln!();
                    }
                }
            },
        )?;
        tables.push(table);
    }
    let failing = tables.iter().map(|t| t.counts().failed).sum::<usize>();
    ctx.print(&tables, || {
        let mut out = String::new();
        for t in &tables {
            for (cell, coverage) in &t.cells {
                match coverage {
                    Coverage::Scalarized(ops) => {
                        out += &format!(
                            "{}: {} at {} lanes: scalarized {}\n",
                            t.target,
                            cell.expression,
                            cell.lanes,
                            ops.join(", ")
                        )
                    }
                    Coverage::Failed(e) => {
                        out += &format!(
                            "{}: {} at {} lanes: FAILED {e}\n",
                            t.target, cell.expression, cell.lanes
                        )
                    }
                    _ => {}
                }
            }
        }
        out += &format!(
            "{:<12} {:>6} {:>8} {:>6} {:>10} {:>8}\n",
            "target", "cells", "direct", "rules", "scalarized", "failing"
        );
        for t in &tables {
            let c = t.counts();
            out += &format!(
                "{:<12} {:>6} {:>8} {:>6} {:>10} {:>8}\n",
                t.target,
                t.cells.len(),
                c.direct,
                c.rules,
                c.scalarized,
                c.failed
            );
        }
        out
    })?;
    Ok(Outcome::negative_if(failing > 0))
}

/// `bench batch [--target T]... [--jobs N] [--corpus]`: the selection corpus compiled in batch
/// on each target (or, with `corpus`, the corpus printed as `compile --batch` JSONL).
pub fn batch(ctx: &Context, targets: &[Target], jobs: usize, corpus: bool) -> Result<Outcome> {
    let targets: Vec<Target> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        targets.to_vec()
    };
    if corpus {
        let mut out = String::new();
        for target in &targets {
            for e in crate::select::corpus::corpus() {
                let line = serde_json::json!({"expr": e.text, "target": target.name});
                out += &format!("{line}\n");
            }
        }
        super::print_out(&out)?;
        return Ok(Outcome::Success);
    }
    let figures = crate::select::corpus::measure(&ctx.project, &targets, jobs)?;
    ctx.print(&figures, || {
        let mut out = String::new();
        for f in &figures {
            for (e, why) in &f.failed {
                out += &format!("{}: {e}: FAILED {why}\n", f.target);
            }
            for (e, cost, idiomatic) in &f.dearer {
                out += &format!(
                    "{}: {e}: cost {cost}, the idiomatic instruction {idiomatic}\n",
                    f.target
                );
            }
        }
        out += &format!(
            "{:<11} {:>5} {:>8} {:>10} {:>6} {:>15} {:>8} {:>12} {:>12} {:>10}\n",
            "target",
            "exprs",
            "selected",
            "scalarized",
            "failed",
            "no dearer/idiom",
            "programs",
            "select/expr",
            "total/expr",
            "z3 median"
        );
        for f in &figures {
            let n = f.expressions as f64;
            out += &format!(
                "{:<11} {:>5} {:>8} {:>10} {:>6} {:>15} {:>8} {:>9.1} ms {:>9.1} ms {:>7.1} ms\n",
                f.target,
                f.expressions,
                f.selected,
                f.scalarized,
                f.failed.len(),
                format!("{}/{}", f.no_dearer, f.with_idiom),
                f.programs,
                f.select_ms / n,
                f.wall_ms / n,
                f.prove_median_ms
            );
        }
        out
    })?;
    Ok(Outcome::negative_if(
        figures.iter().any(|f| !f.failed.is_empty()),
    ))
}

/// `bench [--rounds N]`.
pub fn bench(ctx: &Context, rounds: usize) -> Result<Outcome> {
    let f = crate::bench::run(&ctx.project, rounds)?;
    ctx.print(&f, || {
        let mut out = format!(
            "db build (fresh, {} instructions): {:.0} ms\n",
            f.instructions, f.db_build_ms
        );
        for (q, ms) in &f.query_process_ms {
            out += &format!("query process {q:?}: {ms:.1} ms (median)\n");
        }
        out += &format!(
            "interpreter: {:.0} instruction evaluations/s\n",
            f.interpreter_evals_per_s
        );
        out += &format!(
            "prove halving_add u8 x 64: {:.1} ms\n",
            f.prove_halving_add_u8x64_ms
        );
        for (t, ms) in &f.compile_catalog_ms {
            out += &format!("compile: load the {t} catalog: {ms:.0} ms\n");
        }
        out += &format!(
            "compile: selection over {} expressions: cold median {:.1} ms, max {:.1} ms; cached median {:.1} ms, max {:.1} ms; z3 translation validation median {:.1} ms\n",
            f.compile_expressions,
            f.compile_cold_median_ms,
            f.compile_cold_max_ms,
            f.compile_cached_median_ms,
            f.compile_cached_max_ms,
            f.compile_validate_median_ms
        );
        out += &format!(
            "compile process (catalog, selection, proof; no cache; each expression's median of {}) over {} expressions: median {:.1} ms, max {:.1} ms\n",
            crate::bench::PROCESS_RUNS,
            f.compile_expressions,
            f.compile_process_median_ms,
            f.compile_process_max_ms
        );
        out
    })?;
    Ok(Outcome::Success)
}
