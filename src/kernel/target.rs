//! The kernel targets: `dsp` (the peers' 4-wide float DSP, plain C), `x86-avx2` (8 x f32),
//! `x86-avx512` (16 x f32) and `neon` (4 x f32), with their vector width and instruction costs.
//! The DSP's costs are its instructions' rows in the database (`specs/dsp/dsp.spec`); the f32
//! instructions of x86 and NEON are not in the database's specs yet, so their costs are the
//! reciprocal throughputs below (cycles, Zen 3 / Skylake / Cortex-A76 class cores).

use super::cost::{Leaf, Operand};
use super::term::Op;
use crate::database::Database;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// One kernel target.
#[derive(Clone, Debug)]
pub struct Target {
    pub name: &'static str,
    /// f32 lanes per vector register.
    pub width: usize,
    /// Instruction costs by dialect name (`VecAdd`, `Vec`, `LitVec`, `+`, ...).
    costs: HashMap<String, f64>,
}

pub const NAMES: [&str; 4] = ["dsp", "x86-avx2", "x86-avx512", "neon"];

/// Costs of the x86 and NEON f32 operations a kernel lowers to: arithmetic (`vaddps`, `vfmadd`,
/// `fmla`), division and square root, and data movement (`Vec`: one load or broadcast per source
/// array plus a permute, `Gather`: one lane insert, `Concat`: a store).
const SIMD_COSTS: [(&str, f64); 20] = [
    ("VecAdd", 1.0),
    ("VecMinus", 1.0),
    ("VecMul", 1.0),
    ("VecMAC", 1.0),
    ("VecNeg", 1.0),
    ("VecDiv", 5.0),
    ("VecSqrt", 6.0),
    ("VecSgn", 3.0),
    ("LitVec", 1.0),
    ("Vec", 2.0),
    ("Gather", 1.0),
    ("Concat", 1.0),
    ("+", 1.0),
    ("-", 1.0),
    ("*", 1.0),
    ("/", 4.0),
    ("neg", 1.0),
    ("sqrt", 6.0),
    ("sgn", 3.0),
    ("Get", 0.0),
];

impl Target {
    /// The target named `name`, its costs read from the database where it has them.
    pub fn load(db: &Database, name: &str) -> Result<Target> {
        let width = match name {
            "dsp" | "neon" => 4,
            "x86-avx2" => 8,
            "x86-avx512" => 16,
            _ => {
                return Err(Error::Usage(format!(
                    "unknown kernel target '{name}' (targets: {})",
                    NAMES.join(", ")
                )))
            }
        };
        let name = NAMES.iter().find(|n| **n == name).copied().unwrap_or("dsp");
        let costs = if name == "dsp" {
            dsp_costs(db)?
        } else {
            SIMD_COSTS
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect()
        };
        Ok(Target { name, width, costs })
    }

    /// A target with every operation costing 1 (for the `diospyros` and `isaria` models, which
    /// do not read it, and for tests).
    pub fn unit(name: &'static str, width: usize) -> Target {
        Target {
            name,
            width,
            costs: HashMap::new(),
        }
    }

    /// Whether the emitted code is plain C (the DSP dialect) rather than intrinsics.
    pub fn is_plain_c(&self) -> bool {
        self.name == "dsp"
    }

    pub fn cost_of(&self, what: &str) -> f64 {
        self.costs.get(what).copied().unwrap_or(1.0)
    }

    /// The cost of one node under this target's instruction costs: a `Vec` of reads of one array
    /// (or zeros) is a load and a permute (LitVec), other `Vec`s pay for each lane they insert.
    pub fn op_cost(&self, op: Op, args: &[Operand]) -> f64 {
        match op {
            Op::Num(_) => 0.0,
            Op::Get(..) => self.cost_of("Get"),
            Op::List => 0.0,
            Op::Vec => {
                let mut arrays: Vec<u32> = args
                    .iter()
                    .filter_map(|a| match a.leaf {
                        Leaf::Read(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                arrays.sort_unstable();
                arrays.dedup();
                let computed = args.iter().filter(|a| a.leaf == Leaf::No).count() as f64;
                if computed == 0.0 && arrays.len() <= 1 {
                    self.cost_of("LitVec")
                } else if self.name == "dsp" {
                    self.cost_of("Vec")
                } else {
                    self.cost_of("LitVec") * arrays.len() as f64
                        + self.cost_of("Vec") * arrays.len().saturating_sub(1) as f64
                        + self.cost_of("Gather") * computed
                }
            }
            _ => self.cost_of(op.name()),
        }
    }
}

/// The DSP instructions' costs from the database (`VecAdd`, `Vec`, `LitVec`, `+`, ...).
fn dsp_costs(db: &Database) -> Result<HashMap<String, f64>> {
    let rows = db.text_rows(
        "SELECT i.name, CAST(i.cost AS TEXT) FROM instructions i JOIN isas s ON s.id = i.isa_id
         WHERE s.name = 'dsp' AND i.cost IS NOT NULL",
    )?;
    let mut costs: HashMap<String, f64> = HashMap::new();
    for row in rows {
        let cost: f64 = row[1]
            .parse()
            .map_err(|_| Error::data("instructions", format!("{}: cost {:?}", row[0], row[1])))?;
        costs.insert(row[0].clone(), cost);
    }
    if !costs.contains_key("VecAdd") {
        return Err(Error::data(
            "instructions",
            "the DSP dialect (specs/dsp/dsp.spec) is not in the database",
        ));
    }
    costs.insert("Get".into(), 0.0);
    Ok(costs)
}
