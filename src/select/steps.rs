//! The selection as the straight-line sequence `compile` prints: one step per distinct
//! instruction (shared subterms computed once), operands as inputs, lanes of inputs, splats and
//! earlier temporaries, and the output parts with their lane ranges.

use super::catalog::Catalog;
use super::compile::Compiled;
use super::node::{flatten_parts, input_types, Node};
use crate::ir::print::op_head;
use crate::ir::{Elem, VecType};
use serde::Serialize;
use std::collections::HashMap;

/// One line of the printed sequence.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The temporary it defines (`t0`).
    pub temp: String,
    /// The intrinsic (or instruction) called on its operands.
    pub call: String,
    /// The assembly form.
    pub asm: String,
    /// The instruction's cost.
    pub cost: f64,
}

/// The selection as straight-line steps (shared subterms computed once) and the names of the
/// output parts with their lane ranges.
pub fn steps(compiled: &Compiled, catalog: &Catalog) -> (Vec<Step>, Vec<(String, u32, u32)>) {
    let root = &compiled.root;
    let full = input_types(&compiled.input);
    let mut steps = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut outputs = Vec::new();
    let mut parts = Vec::new();
    flatten_parts(root, &mut parts);
    let mut lane = 0;
    for p in parts {
        let name = operand_text(p, catalog, &full, &mut steps, &mut seen);
        let n = p.ty(catalog).lanes;
        outputs.push((name, lane, lane + n));
        lane += n;
    }
    (steps, outputs)
}

fn operand_text(
    n: &Node,
    catalog: &Catalog,
    full: &HashMap<String, VecType>,
    steps: &mut Vec<Step>,
    seen: &mut HashMap<String, String>,
) -> String {
    match n {
        Node::Input { name, ty, offset } => {
            if *offset == 0 && full.get(name) == Some(ty) {
                name.clone()
            } else {
                format!("{name}[{offset}..{}]", offset + ty.lanes)
            }
        }
        Node::Const { value, ty } if ty.elem == Elem::F32 => {
            format!("splat({:?}) {ty}", f32::from_bits(*value as u32))
        }
        Node::Const { value, ty } => format!("splat({value}) {ty}"),
        Node::Literal { values, ty } => {
            let lanes: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let call = format!("literal({}) {ty}", lanes.join(", "));
            step(call, "load".into(), n.own_cost(catalog), steps, seen)
        }
        Node::Reinterpret { ty, arg } | Node::Spread { ty, arg } => {
            format!("({ty}) {}", operand_text(arg, catalog, full, steps, seen))
        }
        Node::Nonzero { arg, .. } => {
            format!("{} != 0", operand_text(arg, catalog, full, steps, seen))
        }
        Node::Lanes { ty, offset, arg } => format!(
            "{}[{offset}..{}]",
            operand_text(arg, catalog, full, steps, seen),
            offset + ty.lanes
        ),
        Node::Parts(ps) => {
            let mut parts = Vec::new();
            ps.iter().for_each(|p| flatten_parts(p, &mut parts));
            let texts: Vec<String> = parts
                .iter()
                .map(|p| operand_text(p, catalog, full, steps, seen))
                .collect();
            format!("concat({})", texts.join(", "))
        }
        Node::Scalar { op, ty, args } => {
            let texts: Vec<String> = args
                .iter()
                .map(|a| operand_text(a, catalog, full, steps, seen))
                .collect();
            // The operator's parameters are part of the call: slices of other lanes differ.
            let call = match op_head(op).split_once(' ') {
                Some((name, params)) => format!("{name}<{params}>({})", texts.join(", ")),
                None => format!("{}({})", op.name(), texts.join(", ")),
            };
            let asm = format!("scalarized {} ({} lanes)", op.name(), ty.lanes);
            step(call, asm, n.own_cost(catalog), steps, seen)
        }
        Node::Instr { index, args } => {
            let ins = &catalog.instructions[*index];
            let texts: Vec<String> = args
                .iter()
                .zip(&ins.operands)
                .map(|(a, op)| match a.scalar() {
                    Some(value) if op.ty.lanes == 1 || op.c_type.is_some() => value.to_string(),
                    _ => operand_text(a, catalog, full, steps, seen),
                })
                .collect();
            let call = format!(
                "{}({})",
                ins.intrinsic.as_deref().unwrap_or(&ins.name),
                texts.join(", ")
            );
            step(call, ins.asm.clone(), ins.cost, steps, seen)
        }
    }
}

/// The temporary of a call: a new step, or the one an identical call defined before.
fn step(
    call: String,
    asm: String,
    cost: f64,
    steps: &mut Vec<Step>,
    seen: &mut HashMap<String, String>,
) -> String {
    if let Some(t) = seen.get(&call) {
        return t.clone();
    }
    let temp = format!("t{}", steps.len());
    seen.insert(call.clone(), temp.clone());
    steps.push(Step {
        temp: temp.clone(),
        call,
        asm,
        cost,
    });
    temp
}
