//! The kernel targets: `dsp` (the peers' 4-wide float DSP, plain C), `x86-avx2` (8 x f32),
//! `x86-avx512` (16 x f32) and `neon` (4 x f32), named as [`crate::spec::Target`] names them
//! (the DSP is [`Isa::Dsp`]), with their vector width and instruction costs. The DSP's costs are
//! its instructions' rows in the database (`specs/dsp/dsp.spec`). For x86 and NEON the f32
//! arithmetic the emitted C calls (`specs/x86/float.spec`, `specs/neon/float.spec`) and the
//! lane moves a gather is made of (as their 32-bit integer forms, which move f32 lanes alike:
//! `vpermd` for `vpermps`, NEON's lane copy) are read from their rows ([`ROWS`]); the database
//! has no fused multiply-add (IEEE's single rounding is not the IR's), loads or stores, so
//! those costs come from [`SIMD_COSTS`].

use super::term::{Leaf, Op, Operand};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::spec::Isa;
use crate::words::text_enum;
use std::collections::HashMap;

text_enum! {
    /// A target `isadb kernel` compiles for.
    pub enum KernelTarget("kernel target") {
        /// The peers' 4-wide float DSP (plain C).
        Dsp = "dsp",
        /// AVX2 with FMA, 8 x f32.
        Avx2 = "x86-avx2",
        /// AVX-512F, 16 x f32.
        Avx512 = "x86-avx512",
        /// AArch64 Advanced SIMD, 4 x f32.
        Neon = "neon",
    }
}

impl KernelTarget {
    /// The instruction set its code is in.
    pub fn isa(self) -> Isa {
        match self.spec_target() {
            Some(t) => t.isa,
            None => Isa::Dsp,
        }
    }

    /// The selection target of the same name (none for the DSP).
    pub fn spec_target(self) -> Option<crate::spec::Target> {
        crate::spec::TARGETS
            .iter()
            .find(|t| t.name == self.as_str())
            .copied()
    }

    /// f32 lanes per vector register.
    pub fn width(self) -> usize {
        self.spec_target()
            .map_or(4, |t| t.register_bits as usize / 32)
    }
}

/// One kernel target.
#[derive(Clone, Debug)]
pub struct Target {
    pub kind: KernelTarget,
    pub name: &'static str,
    /// f32 lanes per vector register.
    pub width: usize,
    /// Instruction costs by dialect name (`VecAdd`, `Vec`, `LitVec`, `+`, ...).
    costs: HashMap<String, f64>,
}

/// The costs the database has no instruction rows for (reciprocal throughputs in cycles, Zen 3
/// / Skylake / Cortex-A76 class cores), and the defaults of those [`ROWS`] reads: fused
/// multiply-add (`vfmadd`, `fmla`), x86's negation (an xor of the sign), the sign, scalar
/// arithmetic, loads (`LitVec`), stores (`Concat`) and, on x86, a lane insert (`Gather`:
/// `vinsertps`). `Vec` (one more source array merged in) is a load plus the permute read from
/// the database.
const SIMD_COSTS: [(&str, f64); 19] = [
    ("VecAdd", 1.0),
    ("VecMinus", 1.0),
    ("VecMul", 1.0),
    ("VecMAC", 1.0),
    ("VecNeg", 1.0),
    ("VecDiv", 5.0),
    ("VecSqrt", 6.0),
    ("VecSgn", 3.0),
    ("LitVec", 1.0),
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

/// The operations whose cost is read from the database: the kernel operation, and per target
/// the instruction row of the intrinsic the emitted C calls (for lane moves, the 32-bit integer
/// form of the f32 instruction). A row's reciprocal throughput is used where the database has
/// one (x86), else its cost (NEON).
const ROWS: [(KernelTarget, &str, &str); 20] = [
    (KernelTarget::Avx2, "VecAdd", "_mm256_add_ps"),
    (KernelTarget::Avx2, "VecMinus", "_mm256_sub_ps"),
    (KernelTarget::Avx2, "VecMul", "_mm256_mul_ps"),
    (KernelTarget::Avx2, "VecDiv", "_mm256_div_ps"),
    (KernelTarget::Avx2, "VecSqrt", "_mm256_sqrt_ps"),
    (KernelTarget::Avx2, "permute", "_mm256_permutevar8x32_epi32"),
    (KernelTarget::Avx512, "VecAdd", "_mm512_add_ps"),
    (KernelTarget::Avx512, "VecMinus", "_mm512_sub_ps"),
    (KernelTarget::Avx512, "VecMul", "_mm512_mul_ps"),
    (KernelTarget::Avx512, "VecDiv", "_mm512_div_ps"),
    (KernelTarget::Avx512, "VecSqrt", "_mm512_sqrt_ps"),
    (KernelTarget::Avx512, "permute", "_mm512_permutexvar_epi32"),
    (KernelTarget::Neon, "VecAdd", "vaddq_f32"),
    (KernelTarget::Neon, "VecMinus", "vsubq_f32"),
    (KernelTarget::Neon, "VecMul", "vmulq_f32"),
    (KernelTarget::Neon, "VecDiv", "vdivq_f32"),
    (KernelTarget::Neon, "VecSqrt", "vsqrtq_f32"),
    (KernelTarget::Neon, "VecNeg", "vnegq_f32"),
    (KernelTarget::Neon, "permute", "vcopyq_laneq_u32"),
    (KernelTarget::Neon, "Gather", "vsetq_lane_u32"),
];

impl Target {
    /// The target `kind`, its costs read from the database where it has them.
    pub fn load(db: &Database, kind: KernelTarget) -> Result<Target> {
        let costs = if kind == KernelTarget::Dsp {
            dsp_costs(db)?
        } else {
            simd_costs(db, kind)?
        };
        Ok(Target {
            kind,
            name: kind.as_str(),
            width: kind.width(),
            costs,
        })
    }

    /// A target with every operation costing 1 (for the `diospyros` and `isaria` models, which
    /// do not read it, and for tests).
    pub fn unit(kind: KernelTarget) -> Target {
        Target {
            kind,
            name: kind.as_str(),
            width: kind.width(),
            costs: HashMap::new(),
        }
    }

    /// Whether the emitted code is plain C (the DSP dialect) rather than intrinsics.
    pub fn is_plain_c(&self) -> bool {
        self.kind == KernelTarget::Dsp
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
                } else if self.is_plain_c() {
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

/// An x86 or NEON target's costs: [`SIMD_COSTS`], with those of [`ROWS`] read from the
/// database.
fn simd_costs(db: &Database, kind: KernelTarget) -> Result<HashMap<String, f64>> {
    let mut costs: HashMap<String, f64> = SIMD_COSTS
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    for (_, op, name) in ROWS.iter().filter(|m| m.0 == kind) {
        let row = db.find_instruction(name).map_err(|_| {
            Error::data(
                "instructions",
                format!("{kind}: no row for {name}, the cost of a kernel {op}"),
            )
        })?;
        costs.insert(op.to_string(), row.throughput.unwrap_or(row.cost));
    }
    // One more source array merged into a vector: its load and a permute.
    let permute = costs.get("permute").copied().unwrap_or(1.0);
    costs.insert("Vec".into(), costs["LitVec"] + permute);
    Ok(costs)
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
