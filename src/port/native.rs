//! `port X --run N`, the check across two real executions: the port's drop-in C function
//! ([`super::dropin`]; natively, or under qemu for NEON and HVX) and X itself, called through validation's harness on its own ISA
//! (natively for x86, under qemu for NEON and HVX), run on the same N inputs; every lane of
//! the two outputs is compared.

use super::dropin::DropIn;
use crate::error::{Error, Result};
use crate::select::catalog::Catalog;
use crate::select::check::{random_inputs, run_entry};
use crate::select::Compiled;
use crate::semantics::sample::random_lanes;
use crate::semantics::value::lane_eq;
use crate::spec::Instruction;
use crate::toolchain::features::{support, Host, Support};
use crate::toolchain::Toolchain;
use crate::validate::exec::{run_batch, JobResult};
use crate::validate::harness::{Harness, Job};
use crate::validate::inputs::{Input, InputSet};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;
use std::path::Path;

/// Seed of the shared inputs.
const SEED: u64 = 0x9047;

/// What running X beside its port found.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum CrossRun {
    /// Every lane of both outputs equal.
    Equal {
        /// The source instruction.
        instruction: String,
        /// How it ran (`natively`, `under qemu-aarch64`, `under qemu-hexagon`).
        how: String,
        /// Lanes compared.
        lanes: usize,
    },
    /// The first differing lane.
    Mismatch {
        /// Where and what.
        detail: String,
    },
    /// One of the two could not run here.
    NotRun {
        /// Why.
        reason: String,
    },
}

impl CrossRun {
    /// One line for the report.
    pub fn line(&self) -> String {
        match self {
            CrossRun::Equal {
                instruction,
                how,
                lanes,
            } => format!(
                "ran {instruction} {how} on the same inputs: {lanes} lanes equal the port's"
            ),
            CrossRun::Mismatch { detail } => {
                format!("MISMATCH with the source instruction: {detail}")
            }
            CrossRun::NotRun { reason } => {
                format!("did not run the source instruction beside the port: {reason}")
            }
        }
    }
}

fn how(toolchain: Toolchain) -> &'static str {
    match toolchain {
        Toolchain::X86 => "natively",
        Toolchain::Neon => "under qemu-aarch64",
        Toolchain::Hvx => "under qemu-hexagon",
    }
}

/// Runs `source` at the immediates `imms` and its port `compiled`, called through its drop-in
/// function, on the same `iterations` random inputs and compares their outputs.
pub fn run_beside(
    source: &Instruction,
    imms: &[String],
    compiled: &Compiled,
    catalog: &Catalog,
    drop_in: &DropIn,
    iterations: usize,
    workdir: &Path,
) -> Result<CrossRun> {
    let host = Host::detect();
    let not_run = |reason: String| Ok(CrossRun::NotRun { reason });
    let Some(toolchain) = Toolchain::of(source.isa) else {
        return not_run(format!("no C toolchain runs {}", source.isa));
    };
    let flags = match support(toolchain, &source.feature, &host) {
        Support::Flags(f) => f,
        Support::Unsupported(reason) => return not_run(format!("{}: {reason}", source.name)),
    };
    let inputs = random_inputs(compiled, iterations, SEED)?;
    let entry = drop_in.entry(&inputs)?;
    let ported = match run_entry(compiled, catalog, &inputs, &entry, workdir, &host)? {
        Ok(lanes) => lanes,
        Err(reason) => return not_run(format!("the port: {reason}")),
    };
    let harness = Harness::new(toolchain, source)
        .map_err(|e| Error::Tool(format!("{} cannot be called from C: {e}", source.name)))?;
    // Operands the port does not read (folded away at these immediates) still need values.
    let mut rng = SmallRng::seed_from_u64(SEED + 1);
    let imm_values = source.immediate_values(imms)?;
    let records: Vec<Vec<Vec<u128>>> = (0..iterations)
        .map(|it| {
            let mut imm = imm_values.iter();
            source
                .operands
                .iter()
                .map(|o| match o.imm {
                    Some(_) => vec![*imm.next().unwrap_or(&0) as u128 & o.ty.elem.mask()],
                    None => inputs
                        .at(&o.name, it)
                        .map(|l| l.to_vec())
                        .unwrap_or_else(|| random_lanes(o.ty, o.ty.lanes as usize, &mut rng)),
                })
                .collect()
        })
        .collect();
    let set = InputSet {
        imm_cases: vec![imm_values.clone()],
        inputs: records
            .into_iter()
            .map(|lanes| Input { lanes, imm_case: 0 })
            .collect(),
    };
    let job = Job::new(harness.clone(), &set, flags);
    let bytes = match run_batch(toolchain, vec![job], workdir).remove(0) {
        JobResult::Output(bytes) => bytes,
        JobResult::Failed(why) => {
            return Err(Error::Tool(format!("running {}: {why}", source.name)))
        }
    };
    let mut native = harness.decode(&bytes);
    let result = compiled.input.ty;
    if drop_in.packed() {
        // The port delivers the bool lanes as the bits of an integer, lane i at bit i.
        for lanes in &mut native {
            let bits = lanes.iter().enumerate().map(|(i, &b)| (b & 1) << i).sum();
            *lanes = vec![bits];
        }
    }
    let n = result.lanes as usize;
    for (it, expected) in native.iter().enumerate() {
        for (lane, (e, a)) in expected.iter().zip(&ported[it * n..]).enumerate() {
            if !lane_eq(result.elem, *e, *a) {
                return Ok(CrossRun::Mismatch {
                    detail: format!(
                        "iteration {it} lane {lane}: {} {e:#x}, {} port {a:#x}",
                        source.name, catalog.target.name
                    ),
                });
            }
        }
    }
    Ok(CrossRun::Equal {
        instruction: source.name.clone(),
        how: how(toolchain).to_string(),
        lanes: native.len() * n,
    })
}
