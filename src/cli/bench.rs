//! `isadb bench`: the speed figures, measured on this machine; `isadb bench kernels`: the
//! kernel benchmark.

use super::{text_choice, Context, Outcome};
use crate::error::Result;
use crate::words::text_enum;

text_enum! {
    /// A benchmark suite besides the default one.
    pub enum Suite("benchmark") {
        /// Every kernel of the Diospyros/Isaria evaluations, compiled and run.
        Kernels = "kernels",
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

/// `bench [--rounds N]`.
pub fn bench(ctx: &Context, rounds: usize) -> Result<Outcome> {
    let f = crate::bench::run(&ctx.project, rounds.max(1))?;
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
        out
    })?;
    Ok(Outcome::Success)
}
