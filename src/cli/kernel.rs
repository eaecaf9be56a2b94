//! `isadb kernel`: a whole kernel compiled by phased equality saturation, proven, with its costs,
//! e-graph sizes and times; optionally the C or the egglog that ran, and the C run on random
//! inputs. `isadb kernel --tune`: Isaria's alpha and beta chosen and recorded.

use super::compile::Emit;
use super::{print_out, text_choice, Context, Outcome};
use crate::error::{Error, Result};
use crate::kernel::{CostModel, KernelTarget, Outputs, RuleSet};
use std::path::Path;
use std::time::Duration;

/// The flags of `isadb kernel` besides the file and the target.
pub struct Options {
    /// The cost model extraction minimizes.
    pub cost_model: CostModel,
    /// Seconds for equality saturation.
    pub timeout_s: f64,
    /// What to print besides the report.
    pub emit: Option<Emit>,
    /// Iterations of random inputs to run the C on.
    pub run: Option<usize>,
    /// The kernel rules compiled with.
    pub rules: RuleSet,
    /// Start from the structured vectorization as well as from the spec.
    pub seed: bool,
    /// What a C kernel's output arrays hold before it writes them.
    pub outputs: Outputs,
}

/// `kernel FILE`: compiles, proves and prints the report (and the C or egglog asked for); exit
/// 1 when the C run disagrees with the spec.
pub fn kernel(ctx: &Context, file: &Path, target: KernelTarget, o: Options) -> Result<Outcome> {
    if !(o.timeout_s > 0.0 && o.timeout_s <= 86_400.0) {
        return Err(Error::Usage(format!(
            "--timeout {} is not in (0, 86400] seconds",
            o.timeout_s
        )));
    }
    let options = crate::kernel::Options {
        model: o.cost_model,
        timeout: Duration::from_secs_f64(o.timeout_s),
        seed: o.seed,
        run: o.run,
        keep_egglog: o.emit == Some(Emit::Egglog),
    };
    let report =
        crate::kernel::compile_file(&ctx.project, file, target, o.rules, o.outputs, &options)?;
    match o.emit {
        Some(Emit::C) => print_out(&report.c)?,
        Some(Emit::Egglog) => print_out(report.egglog.as_deref().unwrap_or(""))?,
        None => {}
    }
    ctx.print(&report, || report.to_string())?;
    Ok(Outcome::negative_if(
        report.run.as_ref().is_some_and(|r| !r.passed),
    ))
}

/// `kernel --tune`.
pub fn tune(ctx: &Context, rules: RuleSet) -> Result<Outcome> {
    let t = crate::kernel::tune::tune(&ctx.project, rules)?;
    ctx.print(&t, || {
        format!(
            "alpha {} beta {} ({} candidate pairs on {}): total diospyros cost {:.3}, {:.1} s\n",
            t.alpha,
            t.beta,
            t.candidates,
            t.kernels.join(", "),
            t.score,
            t.ms / 1000.0
        )
    })?;
    ctx.note_writes();
    Ok(Outcome::Success)
}

text_choice!(CostModel, "cost model");

text_choice!(KernelTarget, "kernel target");

text_choice!(RuleSet, "rule set");
