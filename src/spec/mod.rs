//! The spec language: families of instructions, semantic macros and idioms, read from `specs/`.

pub mod family;
pub mod load;
pub mod template;

use crate::error::Location;
use crate::ir::meta::Meta;
use crate::ir::{Expr, VecType};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::rc::Rc;

pub use family::Family;
pub use load::{load_dir, load_macros, SpecSet};

/// One operand of an instruction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Operand {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: VecType,
    /// The C type a harness passes, when it is not the default for the ISA and IR type.
    pub c_type: Option<String>,
    /// An immediate: a compile-time constant in `[lo, hi]`.
    pub imm: Option<(i128, i128)>,
}

/// One expanded instruction with its semantics.
#[derive(Debug, Clone, Default)]
pub struct Instruction {
    pub name: String,
    pub intrinsic: Option<String>,
    pub asm: String,
    pub isa: String,
    pub feature: String,
    pub family: String,
    pub binding: Vec<(String, Meta)>,
    pub operands: Vec<Operand>,
    pub result: VecType,
    pub semantics: Rc<Expr>,
    /// Canonical text of the semantics and its SHA-256, the key of cached verdicts.
    pub sem_text: String,
    pub sem_hash: String,
    pub latency: Option<f64>,
    pub throughput: Option<f64>,
    pub cost: f64,
    pub loc: Location,
}

impl Instruction {
    pub fn set_semantics(&mut self, sem: Rc<Expr>) {
        self.sem_text = sem.to_string();
        self.sem_hash = hash_text(&self.sem_text);
        self.semantics = sem;
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

impl Default for VecType {
    fn default() -> Self {
        VecType::new(0, crate::ir::Elem::Bool)
    }
}

impl Default for Expr {
    fn default() -> Self {
        Expr::constant(VecType::new(1, crate::ir::Elem::Bool), vec![0])
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
