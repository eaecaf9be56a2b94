//! What a kernel compile reports (the CLI prints it as text or JSON): costs in the chosen model,
//! in both peers' models and on the target, program size, each round's phases with e-graph
//! sizes and times, the proof, the run, wall time and peak memory.

use super::run::RunReport;
use super::saturate::PhaseRun;
use super::validate::Proof;
use serde::Serialize;
use std::fmt;

/// The compiled program's cost in every model.
#[derive(Clone, Debug, Serialize)]
pub struct Costs {
    /// In the model extraction used.
    pub chosen: f64,
    /// In Diospyros's model.
    pub diospyros: f64,
    /// In Isaria's model.
    pub isaria: f64,
    /// The target's instruction costs, each distinct node once.
    pub target: f64,
    /// The unvectorized kernel (its outputs partitioned) under the `diospyros` model.
    pub scalar_diospyros: f64,
    /// The structured vectorization the search started from, in the chosen model.
    pub seed: Option<f64>,
}

/// One round of Isaria's loop: its phases and the cost extracted after them.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// Each phase's e-graph size and time.
    pub phases: Vec<PhaseRun>,
    /// The cost extracted after the round.
    pub cost: f64,
}

/// What one kernel compile found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The target's name.
    pub target: String,
    /// f32 lanes per vector.
    pub width: usize,
    /// The cost model extraction used.
    pub model: String,
    /// Scalar outputs of the kernel.
    pub outputs: usize,
    /// Distinct nodes of the spec, and how many it prints as.
    pub spec_nodes: usize,
    /// Nodes the spec prints as (a tree).
    pub printed_nodes: u64,
    /// The program's costs.
    pub costs: Costs,
    /// The emitted flat function (`kernel`, or `NAME_isadb` beside the drop-in `NAME` of a
    /// kernel lifted from C) and its input arrays (name, length), then `out`.
    pub function: String,
    pub inputs: Vec<(String, usize)>,
    /// Distinct nodes of the compiled program and statements of its C.
    pub program_nodes: usize,
    /// Statements of the C.
    pub instructions: usize,
    /// The rounds of Isaria's loop.
    pub rounds: Vec<Round>,
    /// The translation validation of every output.
    pub proof: Proof,
    /// The C run on random inputs, when asked for.
    pub run: Option<RunReport>,
    /// Time in equality saturation and extraction.
    pub saturation_ms: f64,
    /// Wall time of the compile.
    pub wall_ms: f64,
    /// This process's peak resident memory.
    pub peak_rss_mb: f64,
    /// The C.
    #[serde(skip)]
    pub c: String,
    /// The egglog that ran, when kept.
    #[serde(skip)]
    pub egglog: Option<String>,
}

/// This process's peak resident memory (VmHWM), in MB.
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel: {} outputs, {} distinct nodes (prints as {}); target {} ({} x f32)",
            self.outputs, self.spec_nodes, self.printed_nodes, self.target, self.width
        )?;
        let c = &self.costs;
        writeln!(
            f,
            "cost: {:.3} ({}); diospyros {:.3}, isaria {:.3}, target {:.1}; unvectorized diospyros {:.3}{}",
            c.chosen,
            self.model,
            c.diospyros,
            c.isaria,
            c.target,
            c.scalar_diospyros,
            c.seed.map_or(String::new(), |s| format!("; seed {s:.3}"))
        )?;
        writeln!(
            f,
            "program: {} distinct nodes, {} C statements",
            self.program_nodes, self.instructions
        )?;
        for (k, r) in self.rounds.iter().enumerate() {
            let last = k + 1 == self.rounds.len();
            let phases: Vec<String> = r
                .phases
                .iter()
                .map(|p| {
                    format!(
                        "{} {} it, {} nodes, {:.0} ms ({})",
                        p.phase, p.iterations, p.nodes, p.ms, p.stop
                    )
                })
                .collect();
            writeln!(
                f,
                "{} {}: {} -> cost {:.3}",
                if last { "final" } else { "round" },
                k + 1,
                phases.join("; "),
                r.cost
            )?;
        }
        writeln!(
            f,
            "proven: {} outputs ({} by normal form, {} by z3) in {:.0} ms",
            self.proof.outputs, self.proof.by_normal_form, self.proof.by_z3, self.proof.ms
        )?;
        if let Some(r) = &self.run {
            writeln!(
                f,
                "run ({}): {} ({})",
                r.how,
                if r.max_error <= super::run::TOLERANCE {
                    "passed"
                } else {
                    "MISMATCH"
                },
                r.detail
            )?;
            if let Some(s) = &r.source {
                let verdict = match s.max_error {
                    None => "not compared",
                    Some(e) if e <= super::run::TOLERANCE => "agrees",
                    Some(_) => "MISMATCH",
                };
                writeln!(f, "run against the source: {verdict} ({})", s.detail)?;
            }
        }
        writeln!(
            f,
            "time: {:.0} ms (saturation {:.0} ms); peak memory {:.0} MB",
            self.wall_ms, self.saturation_ms, self.peak_rss_mb
        )
    }
}
