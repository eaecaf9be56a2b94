//! The spec language: families of instructions, semantic macros and idioms, read from `specs/`.

pub mod eval;
pub mod family;
#[cfg(test)]
mod halide_tests;
pub mod isa;
pub mod load;
pub mod target;
pub mod template;

use crate::error::Location;
use crate::ir::meta::Meta;
use crate::ir::{Expr, VecType};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::rc::Rc;

pub use family::Family;
pub use isa::Isa;
pub use load::{load_dir, load_macros, SpecSet};
pub use target::{Target, TARGETS};

/// One operand of an instruction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Operand {
    /// The name the semantics refer to it by.
    pub name: String,
    /// Its IR type.
    #[serde(rename = "type")]
    pub ty: VecType,
    /// The C type a harness passes, when it is not the default for the ISA and IR type.
    pub c_type: Option<String>,
    /// An immediate: a compile-time constant in `[lo, hi]`.
    pub imm: Option<(i128, i128)>,
}

/// One expanded instruction with its semantics.
#[derive(Debug, Clone)]
pub struct Instruction {
    /// Unique name: the intrinsic, or the spec's `(name ...)`.
    pub name: String,
    /// The C intrinsic, when there is one.
    pub intrinsic: Option<String>,
    /// The assembly mnemonic and operand form.
    pub asm: String,
    /// The instruction set.
    pub isa: Isa,
    /// The CPU feature (or feature expression, `avx512bw+avx512vl`) it needs.
    pub feature: String,
    /// The family it was expanded from.
    pub family: String,
    /// The family parameters it was expanded at.
    pub binding: Vec<(String, Meta)>,
    /// The operands, in intrinsic argument order.
    pub operands: Vec<Operand>,
    /// The result type (the type of the semantics).
    pub result: VecType,
    /// What it computes, over its operands.
    pub semantics: Rc<Expr>,
    /// Canonical text of the semantics and its SHA-256, the key of cached verdicts.
    pub sem_text: String,
    #[allow(missing_docs)]
    pub sem_hash: String,
    /// Latency in cycles, when known.
    pub latency: Option<f64>,
    /// Reciprocal throughput in cycles, when known.
    pub throughput: Option<f64>,
    /// The cost instruction selection minimises (the latency when known).
    pub cost: f64,
    /// Where its family is defined.
    pub loc: Location,
}

impl Serialize for Instruction {
    /// As `show --json` and `list --json` print it: the family parameters as `params` text,
    /// the result type and the semantics as their canonical text.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Instruction", 14)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("intrinsic", &self.intrinsic)?;
        st.serialize_field("asm", &self.asm)?;
        st.serialize_field("isa", &self.isa)?;
        st.serialize_field("feature", &self.feature)?;
        st.serialize_field("family", &self.family)?;
        st.serialize_field("params", &self.binding_text())?;
        st.serialize_field("operands", &self.operands)?;
        st.serialize_field("result_type", &self.result)?;
        st.serialize_field("semantics", &self.sem_text)?;
        st.serialize_field("sem_hash", &self.sem_hash)?;
        st.serialize_field("latency", &self.latency)?;
        st.serialize_field("throughput", &self.throughput)?;
        st.serialize_field("cost", &self.cost)?;
        st.end()
    }
}

impl Instruction {
    /// Its operands that are vectors (not immediates), by name and type, in order.
    pub fn vector_operands(&self) -> Vec<(String, VecType)> {
        self.operands
            .iter()
            .filter(|o| o.imm.is_none())
            .map(|o| (o.name.clone(), o.ty))
            .collect()
    }

    /// An x86 instruction for tests of the C harnesses: the intrinsic `name` over `operands`,
    /// whose semantics is a variable of the result type.
    #[cfg(test)]
    pub(crate) fn for_harness_tests(name: &str, operands: Vec<Operand>, result: VecType) -> Self {
        let semantics = Rc::new(Expr::var("result", result));
        let sem_text = semantics.to_string();
        Instruction {
            name: name.into(),
            intrinsic: Some(name.into()),
            asm: String::new(),
            isa: Isa::X86,
            feature: "sse2".into(),
            family: name.into(),
            binding: vec![],
            operands,
            result,
            semantics,
            sem_hash: hash_text(&sem_text),
            sem_text,
            latency: None,
            throughput: None,
            cost: 1.0,
            loc: Location::default(),
        }
    }

    /// The family binding as text, e.g. `W=256 T=i16`.
    pub fn binding_text(&self) -> String {
        self.binding
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Serialize for VecType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for VecType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        VecType::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("bad vector type {s:?}")))
    }
}

/// Hex SHA-256 of a text.
pub fn hash_text(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
