//! What the matcher proves: a [`Fact`] says an instruction implements an idiom, with what each
//! of its operands receives ([`OperandBinding`]) and the idiom's meta parameters. The text forms
//! (`x y^ =0`, `k=4 T=i32`) exist only where facts are stored ([`super::store`]).

use crate::ir::print::lane_text;
use crate::ir::sexpr::{read_one, SExpr};
use crate::ir::{Elem, VecType};
use crate::spec::load::Idiom;
use crate::spec::Instruction;
use crate::words::text_enum;
use serde::Serialize;
use std::fmt;

text_enum! {
    /// How sure a fact is.
    pub enum FactStatus("fact status") {
        /// z3 proved the instantiation equal to the instruction.
        Proven = "proven",
        /// The fingerprint agreed but z3 gave up.
        Unknown = "unknown",
    }
}

/// A proven (or undecided) instance of `instruction` implementing `idiom`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    /// The idiom.
    pub idiom: String,
    /// The instruction.
    pub instruction: String,
    /// Human-readable instantiation, e.g. `u8 x i8 -> i32, 4-way, acc`.
    pub binding: String,
    /// What each instruction operand receives, in operand order.
    #[serde(serialize_with = "serialize_display")]
    pub operands: Operands,
    /// The idiom's meta parameters as instantiated (`k=4 T=i32`).
    #[serde(serialize_with = "serialize_display")]
    pub meta: MetaValues,
    /// Proven or unknown.
    pub status: FactStatus,
    /// The lane count it was proven at.
    pub lanes: u32,
    /// Solver time.
    pub ms: f64,
}

/// What one instruction operand receives in a fact.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandBinding {
    /// The idiom parameter of this name (`x`).
    Param(String),
    /// The idiom parameter of this name, a vector, whose lanes this scalar operand splats
    /// (`x^`).
    Splat(String),
    /// A constant the operand is fixed to (`=0`): zero, an all-true mask, an immediate's lowest
    /// value.
    Fixed(Constant),
    /// The idiom parameter of this name clamped to `lo..=hi` (`y[-128,127]`): the instruction
    /// reads only part of the operand (NEON's `srshl` a count's low byte), and the idiom's value
    /// is the same for every count past that range.
    Clamped { param: String, lo: i128, hi: i128 },
}

/// A constant lane value as facts record it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constant {
    /// An integer (or a truth value, 0 or 1), as a number of its element type.
    Int(i128),
    /// An f32 lane, by its bits.
    Float(u32),
}

impl Constant {
    /// Lane bits of `elem` as the constant they stand for.
    pub fn of_lane(elem: Elem, bits: u128) -> Constant {
        match elem {
            Elem::F32 => Constant::Float(bits as u32),
            e => Constant::Int(crate::semantics::value::as_int(e, bits)),
        }
    }
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::Int(i) => write!(f, "{i}"),
            Constant::Float(bits) => f.write_str(&lane_text(Elem::F32, *bits as u128)),
        }
    }
}

/// An operand of the instruction clamped to `lo..=hi` before the instruction reads it, where
/// the idiom's parameter is the unclamped value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clamp {
    /// The operand's index.
    pub operand: usize,
    /// The range, inclusive.
    pub lo: i128,
    /// The range's top, inclusive.
    pub hi: i128,
}

/// Every operand's binding, in operand order; stored as `x y^ =0 z[-128,127]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Operands(pub Vec<OperandBinding>);

impl fmt::Display for Operands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self
            .0
            .iter()
            .map(|b| match b {
                OperandBinding::Param(p) => p.clone(),
                OperandBinding::Splat(p) => format!("{p}^"),
                OperandBinding::Fixed(c) => format!("={c}"),
                OperandBinding::Clamped { param, lo, hi } => format!("{param}[{lo},{hi}]"),
            })
            .collect();
        f.write_str(&words.join(" "))
    }
}

impl Operands {
    /// Reads the stored form back; None when a word is malformed.
    pub fn parse(text: &str) -> Option<Operands> {
        text.split_whitespace()
            .map(|w| {
                Some(if let Some(v) = w.strip_prefix('=') {
                    OperandBinding::Fixed(match v.parse() {
                        Ok(i) => Constant::Int(i),
                        Err(_) => Constant::Float(v.parse::<f32>().ok()?.to_bits()),
                    })
                } else if let Some(p) = w.strip_suffix('^') {
                    OperandBinding::Splat(p.to_string())
                } else if let Some((param, range)) =
                    w.strip_suffix(']').and_then(|w| w.split_once('['))
                {
                    let (lo, hi) = range.split_once(',')?;
                    OperandBinding::Clamped {
                        param: param.to_string(),
                        lo: lo.parse().ok()?,
                        hi: hi.parse().ok()?,
                    }
                } else {
                    OperandBinding::Param(w.to_string())
                })
            })
            .collect::<Option<Vec<_>>>()
            .map(Operands)
    }
}

/// The idiom's meta parameters with their values, in the idiom's order; stored as `k=4 T=i32`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetaValues(pub Vec<(String, SExpr)>);

impl fmt::Display for MetaValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&words.join(" "))
    }
}

impl MetaValues {
    /// Reads the stored form back; None when a word is malformed.
    pub fn parse(text: &str) -> Option<MetaValues> {
        text.split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), read_one(v, "meta").ok()?))
            })
            .collect::<Option<Vec<_>>>()
            .map(MetaValues)
    }

    /// The values alone, in order.
    pub fn values(&self) -> Vec<SExpr> {
        self.0.iter().map(|(_, v)| v.clone()).collect()
    }
}

/// The human-readable instantiation of a fact: input and result types, meta values and the
/// operands fixed to constants (`u8 x i8 -> i32, 4-way, acc`).
pub(super) fn binding_text(
    idiom: &Idiom,
    meta: &[SExpr],
    types: &[VecType],
    ins: &Instruction,
    fixed: &[(usize, u128)],
    clamp: Option<Clamp>,
) -> String {
    let inputs: Vec<&str> = types.iter().map(|t| t.elem.name()).collect();
    let mut parts = vec![format!("{} -> {}", inputs.join(" x "), ins.result.elem)];
    for ((name, _), v) in idiom.meta.iter().zip(meta) {
        match name.as_str() {
            "k" => parts.push(format!("{v}-way")),
            "T" => {}
            _ => parts.push(format!("{name}={v}")),
        }
    }
    for (i, v) in fixed {
        let op = &ins.operands[*i];
        let shown = match op.ty.elem {
            Elem::Bool => "all-true".to_string(),
            e => lane_text(e, *v),
        };
        parts.push(format!("{}={shown}", op.name));
    }
    if let Some(Clamp { operand, lo, hi }) = clamp {
        parts.push(format!(
            "{} clamped to [{lo}, {hi}]",
            ins.operands[operand].name
        ));
    }
    parts.join(", ")
}

fn serialize_display<T: fmt::Display, S: serde::Serializer>(
    value: &T,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_forms_read_back_exactly() {
        for text in [
            "a b",
            "x y^ =0",
            "=1 a =-3 =0.0 =1.5e-7 b^",
            "x y[-128,127]",
            "",
        ] {
            assert_eq!(Operands::parse(text).unwrap().to_string(), text);
        }
        for text in ["k=4 T=i32", ""] {
            assert_eq!(MetaValues::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            Operands::parse("x =0.0").unwrap().0[1],
            OperandBinding::Fixed(Constant::Float(0))
        );
        assert!(Operands::parse("=zero").is_none());
        assert!(Operands::parse("y[-128]").is_none());
    }
}
