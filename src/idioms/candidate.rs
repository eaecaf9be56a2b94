//! The instantiations the matcher tries for an idiom on an instruction: where each idiom
//! operand's value comes from ([`Source`]: an instruction operand, or a scalar splatted across
//! the lanes), the ordered choices of distinct operands, the idiom's meta-parameter
//! combinations, the constants the unused operands are fixed to, and the operand bindings a
//! proven fact records.

use super::fact::{Clamp, Constant, OperandBinding, Operands};
use crate::ir::sexpr::SExpr;
use crate::ir::{Elem, VecType};
use crate::spec::load::Idiom;
use crate::spec::Instruction;

/// Where an idiom operand's value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Source {
    Operand(usize),
    /// A scalar (often immediate) operand repeated across the lanes.
    Splat(usize, u32),
}

/// The candidate sources of idiom operands: every operand but masks, and scalars (immediates
/// among them) splatted to the instruction's vector width.
pub(super) fn sources(ins: &Instruction) -> Vec<Source> {
    let width = source_width(ins);
    let mut out = Vec::new();
    for (i, op) in ins.operands.iter().enumerate() {
        if op.ty.elem == Elem::Bool {
            continue;
        }
        out.push(Source::Operand(i));
        if op.ty.lanes == 1 && width > 1 {
            out.push(Source::Splat(i, width));
        }
    }
    out
}

/// The lane count scalars are splatted to: the widest operand or result.
pub(super) fn source_width(ins: &Instruction) -> u32 {
    ins.operands
        .iter()
        .map(|o| o.ty.lanes)
        .max()
        .unwrap_or(1)
        .max(ins.result.lanes)
}

/// The type of a source's value.
pub(super) fn source_type(ins: &Instruction, s: Source) -> VecType {
    match s {
        Source::Operand(i) => ins.operands[i].ty,
        Source::Splat(i, lanes) => ins.operands[i].ty.with_lanes(lanes),
    }
}

/// The instruction operand a source reads.
pub(super) fn source_index(s: Source) -> usize {
    match s {
        Source::Operand(i) | Source::Splat(i, _) => i,
    }
}

/// Ordered choices of `n` sources using distinct operands.
pub(super) fn assignments(sources: &[Source], n: usize) -> Vec<Vec<Source>> {
    let mut out = vec![vec![]];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|partial: Vec<Source>| {
                sources
                    .iter()
                    .filter(|s| {
                        !partial
                            .iter()
                            .any(|p| source_index(*p) == source_index(**s))
                    })
                    .map(|s| {
                        let mut next = partial.clone();
                        next.push(*s);
                        next
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    out
}

/// Every combination of the idiom's meta-parameter values.
pub(super) fn meta_combinations(idiom: &Idiom) -> Vec<Vec<SExpr>> {
    let mut out = vec![vec![]];
    for (_, values) in &idiom.meta {
        out = out
            .into_iter()
            .flat_map(|partial: Vec<SExpr>| {
                values.iter().map(move |v| {
                    let mut next = partial.clone();
                    next.push(v.clone());
                    next
                })
            })
            .collect();
    }
    out
}

/// The constant each operand that the idiom does not use is fixed to: all-true masks,
/// immediates at their lowest value, zero otherwise.
pub(super) fn fixed_operands(ins: &Instruction, assignment: &[Source]) -> Vec<(usize, u128)> {
    (0..ins.operands.len())
        .filter(|i| !assignment.iter().any(|s| source_index(*s) == *i))
        .map(|i| {
            let op = &ins.operands[i];
            let v = match (op.imm, op.ty.elem) {
                (Some((lo, _)), e) => lo as u128 & e.mask(),
                (None, Elem::Bool) => 1,
                _ => 0,
            };
            (i, v)
        })
        .collect()
}

/// What each instruction operand receives, in operand order.
pub(super) fn operand_bindings(
    ins: &Instruction,
    params: &[&str],
    assignment: &[Source],
    fixed: &[(usize, u128)],
    clamp: Option<Clamp>,
) -> Operands {
    Operands(
        (0..ins.operands.len())
            .map(|i| {
                if let Some((_, v)) = fixed.iter().find(|(j, _)| *j == i) {
                    return OperandBinding::Fixed(Constant::of_lane(ins.operands[i].ty.elem, *v));
                }
                let (p, s) = params
                    .iter()
                    .zip(assignment)
                    .find(|(_, s)| source_index(**s) == i)
                    .expect("every operand is fixed or assigned");
                match s {
                    Source::Operand(_) => match clamp.filter(|c| c.operand == i) {
                        Some(Clamp { lo, hi, .. }) => OperandBinding::Clamped {
                            param: p.to_string(),
                            lo,
                            hi,
                        },
                        None => OperandBinding::Param(p.to_string()),
                    },
                    Source::Splat(..) => OperandBinding::Splat(p.to_string()),
                }
            })
            .collect(),
    )
}
