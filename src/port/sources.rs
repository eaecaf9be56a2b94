//! What `port --all` ports: every instruction of a source set, each immediate operand at a few
//! sampled values (its bounds, the one after the lowest, the middle, and one more drawn from the
//! instruction's name), since the best sequence of a shuffle, shift, alignr or blend depends on
//! the immediate.

use crate::database::{Database, Filter};
use crate::error::{Error, Result};
use crate::ir::{Elem, Expr, Op};
use crate::spec::{hash_text, Instruction, Isa, Target};
use std::rc::Rc;

/// Immediate combinations ported per instruction, at most.
const MAX_IMMEDIATE_CHOICES: usize = 6;

/// One port to do: an instruction at one choice of its immediates.
#[derive(Debug, Clone)]
pub struct Source {
    /// The instruction, with its immediates: `_mm_slli_epi16[imm8=3]`.
    pub label: String,
    /// The instruction's name.
    pub instruction: String,
    /// The ported semantics (immediates substituted and folded) as text, or why there is none.
    pub text: std::result::Result<String, String>,
    /// The lanes of its result.
    pub lanes: u32,
}

/// What a port of `ins` at the immediates `values` to `target` computes: its semantics, and
/// where its ISA hands bool lanes over as the bits of an integer and the target's do not
/// ([`Isa::bool_lanes_as_bits`]), those bits (`_mm_movemask_epi8` is a `u16`, not 16 bool
/// lanes NEON would leave in a vector): a port must deliver the integer, and its cost counts
/// the packing.
pub fn goal(ins: &Instruction, values: &[String], target: Target) -> Result<Rc<Expr>> {
    let semantics = ins.at_immediates(values)?;
    let ty = semantics.ty;
    if ty.elem != Elem::Bool || !ins.isa.bool_lanes_as_bits() || target.isa.bool_lanes_as_bits() {
        return Ok(semantics);
    }
    let bits = ty.lanes.next_power_of_two().max(8);
    let int = Elem::int(bits, false).ok_or_else(|| {
        Error::Usage(format!(
            "{}: {ty} has more bool lanes than bits in an integer",
            ins.name
        ))
    })?;
    let padded = if bits == ty.lanes {
        semantics
    } else {
        let unset = Expr::constant(ty.with_lanes(bits - ty.lanes), vec![0]);
        Rc::new(Expr::build(Op::Concat, vec![semantics, Rc::new(unset)]).map_err(Error::Usage)?)
    };
    Ok(Rc::new(
        Expr::build(Op::Bitcast(int), vec![padded]).map_err(Error::Usage)?,
    ))
}

/// The instructions of `isa` (only those of `features` when given, only the one named `only`
/// when given), in database order, each at its sampled immediates.
pub fn sources(
    db: &Database,
    isa: Isa,
    features: &[String],
    only: Option<&str>,
    target: Target,
) -> Result<Vec<Source>> {
    for f in features {
        db.check_feature(f)?;
    }
    let names: Vec<&str> = features.iter().map(String::as_str).collect();
    let instructions = db.instructions(&Filter {
        isa: Some(isa),
        features: (!features.is_empty()).then_some(&names[..]),
    })?;
    Ok(instructions
        .iter()
        .filter(|ins| only.is_none_or(|name| ins.name == name))
        .flat_map(|ins| at_sampled_immediates(ins, target))
        .collect())
}

fn at_sampled_immediates(ins: &Instruction, target: Target) -> Vec<Source> {
    let imms: Vec<(&str, (i128, i128))> = ins
        .operands
        .iter()
        .filter_map(|o| Some((o.name.as_str(), o.imm?)))
        .collect();
    let mut choices: Vec<Vec<i128>> = vec![vec![]];
    for (name, (lo, hi)) in &imms {
        let drawn = u64::from_str_radix(&hash_text(&format!("{}/{name}", ins.name))[..12], 16)
            .unwrap_or(0) as i128;
        let mut values: Vec<i128> = Vec::new();
        let span = hi - lo + 1;
        for v in [
            *lo,
            lo + 1,
            lo + (hi - lo) / 2,
            *hi,
            lo + drawn.rem_euclid(span.max(1)),
        ] {
            if v <= *hi && !values.contains(&v) {
                values.push(v);
            }
        }
        choices = choices
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(*v);
                    c
                })
            })
            .take(MAX_IMMEDIATE_CHOICES)
            .collect();
    }
    choices
        .into_iter()
        .map(|values| {
            let label = if imms.is_empty() {
                ins.name.clone()
            } else {
                let parts: Vec<String> = imms
                    .iter()
                    .zip(&values)
                    .map(|((n, _), v)| format!("{n}={v}"))
                    .collect();
                format!("{}[{}]", ins.name, parts.join(","))
            };
            let texts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let at = goal(ins, &texts, target);
            Source {
                label,
                instruction: ins.name.clone(),
                lanes: at.as_ref().map_or(ins.result.lanes, |e| e.ty.lanes),
                text: at.map(|e| e.to_string()).map_err(|e| e.to_string()),
            }
        })
        .collect()
}
