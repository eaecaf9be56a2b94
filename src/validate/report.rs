//! What `isadb validate` is asked to do ([`Options`]) and what it found ([`Report`]): the
//! outcome per instruction and the counts per ISA.

use super::compare::Mismatch;
use super::store::{Row, ValidationStatus};
use crate::spec::{Instruction, Isa};
use serde::Serialize;
use std::collections::BTreeMap;

/// What to validate and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this ISA (`x86`, `neon`, `hvx`); all three when None.
    pub isa: Option<Isa>,
    /// Only these instructions (name or intrinsic); all when empty.
    pub instrs: Vec<String>,
    /// Inputs per instruction.
    pub inputs: usize,
    /// Seed of the input generator.
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
    pub isa: Isa,
    /// Validated, mismatch or skipped.
    pub status: ValidationStatus,
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
#[derive(Debug, Clone, Serialize)]
pub struct IsaSummary {
    pub isa: Isa,
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
    /// Counts per ISA.
    pub isas: Vec<IsaSummary>,
    /// The outcome per instruction.
    pub results: Vec<InstrResult>,
    /// Inputs per instruction.
    pub inputs: usize,
    /// Seed of the input generator.
    pub seed: u64,
    /// Wall time of the run.
    pub wall_ms: f64,
    /// Database rows written or deleted.
    pub rows_changed: usize,
    /// Things the user should know that are not per-instruction results (a missing tool).
    pub warnings: Vec<String>,
}

impl Report {
    /// Instructions whose execution disagreed with their semantics.
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

pub(super) fn cached(r: &Row) -> InstrResult {
    InstrResult {
        name: r.instruction_name.clone(),
        isa: r.isa,
        status: r.status,
        detail: r.detail.clone(),
        inputs: r.inputs.max(0) as usize,
        cached: true,
        mismatched_inputs: 0,
        mismatches: Vec::new(),
    }
}

pub(super) fn skipped(ins: &Instruction, reason: String, inputs: usize) -> InstrResult {
    InstrResult {
        name: ins.name.clone(),
        isa: ins.isa,
        status: ValidationStatus::Skipped,
        detail: reason,
        inputs,
        cached: false,
        mismatched_inputs: 0,
        mismatches: Vec::new(),
    }
}
