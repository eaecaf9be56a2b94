//! The last resort of instruction selection: an IR operator that extraction left in the term
//! (no instruction sequence the rules reach computes it) is computed lane by lane in scalar
//! code. This file is the one place its cost model lives, and where the e-graph's operator
//! node becomes the IR operator again ([`ir_op`]), so the scalarized node proves like any other
//! (its IR is the operator over its operands') and runs through the scalar C of `scalar_c.rs`.
//!
//! The cost model, in the units of instruction costs (cycles of latency): every lane of the
//! result costs [`SCALAR_LANE_COST`] (the scalar operation and inserting its result into the
//! vector), and every lane read from a vector operand [`LANE_EXTRACT_COST`] (a lane move to a
//! general register); an integer division or remainder adds [`SCALAR_DIVIDE_COST`] a lane. A
//! one-register add of 16 u8 lanes thus costs 16 * 3 + 2 * 16 = 80, where the vector
//! instruction costs 1: a vector sequence is preferred wherever one exists, as extraction
//! already prefers one (operator nodes cost 1,000,000 in the e-graph).

use super::term::{spells, CONSTRUCTORS};
use crate::ir::expr::{infer, SIMPLE_OPS};
use crate::ir::{Op, VecType};

/// The scalar operation and the insert of its result into the vector, per result lane.
pub const SCALAR_LANE_COST: f64 = 3.0;
/// Moving one lane of a vector operand into a scalar register.
pub const LANE_EXTRACT_COST: f64 = 1.0;
/// What a scalar integer division or remainder adds per lane: its latency, roughly (about 12
/// cycles on a Cortex-A72's `sdiv`, 23 to 26 on Skylake's 8- to 32-bit `idiv`), where the
/// other scalar operations take one.
pub const SCALAR_DIVIDE_COST: f64 = 20.0;

/// The cost of computing `op` at `ty` lane by lane from operands of types `operands`, of
/// which those that are constants (`constant[i]`) are immediates and need no extract.
pub fn scalar_cost(op: &Op, ty: VecType, operands: &[(VecType, bool)]) -> f64 {
    let read = |t: VecType| match op {
        // A slice reads only the lanes it keeps.
        Op::Slice { lanes, .. } => *lanes,
        _ => t.lanes,
    };
    let extracts: u32 = operands
        .iter()
        .filter(|(_, constant)| !constant)
        .map(|(t, _)| read(*t))
        .sum();
    let divide = match op {
        Op::Div | Op::Mod if ty.elem.is_int() => SCALAR_DIVIDE_COST,
        _ => 0.0,
    };
    (SCALAR_LANE_COST + divide) * ty.lanes as f64 + LANE_EXTRACT_COST * extracts as f64
}

/// The IR operator an e-graph operator node `(name ty params... args...)` stands for, given
/// the types of its operands; Err when no IR operator has that name and typing.
pub fn ir_op(name: &str, ty: VecType, params: &[i64], operands: &[VecType]) -> Result<Op, String> {
    let first = operands.first().copied();
    let lanes_ratio = |wide: u32, narrow: u32| {
        (narrow > 0 && wide.is_multiple_of(narrow))
            .then(|| wide / narrow)
            .ok_or_else(|| format!("{name} from {wide} to {narrow} lanes"))
    };
    let op = match name {
        "Select" => Op::Select,
        "Cast" => Op::Cast(ty.elem),
        "SatCast" => Op::SatCast(ty.elem),
        "Bitcast" => Op::Bitcast(ty.elem),
        "Concat" => Op::Concat,
        "Interleave" => Op::Interleave,
        "Lookup" => Op::Lookup,
        "Compress" => Op::Compress,
        "Expand" => Op::Expand,
        "Broadcast" => Op::Broadcast(lanes_ratio(ty.lanes, first.map_or(0, |t| t.lanes))?),
        "ReduceAdd" => Op::ReduceAdd(lanes_ratio(first.map_or(0, |t| t.lanes), ty.lanes)?),
        "Slice" => match params {
            [start, stride] => Op::Slice {
                start: u32::try_from(*start).map_err(|_| format!("slice start {start}"))?,
                stride: u32::try_from(*stride).map_err(|_| format!("slice stride {stride}"))?,
                lanes: ty.lanes,
            },
            _ => return Err(format!("slice with parameters {params:?}")),
        },
        other => SIMPLE_OPS
            .iter()
            .find(|(n, _)| spells(other, n))
            .map(|(_, op)| op.clone())
            .ok_or_else(|| format!("unknown operator {other}"))?,
    };
    debug_assert!(CONSTRUCTORS.iter().any(|c| c.name == name));
    let typed = infer(&op, operands)?;
    if typed != ty {
        return Err(format!(
            "{} of {operands:?} is {typed}, not {ty}",
            op.name()
        ));
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Elem;

    #[test]
    fn operator_nodes_become_ir_operators_and_cost_per_lane() {
        let u8x16 = VecType::new(16, Elem::U8);
        let u16x8 = VecType::new(8, Elem::U16);
        assert_eq!(ir_op("Add", u8x16, &[], &[u8x16, u8x16]), Ok(Op::Add));
        assert_eq!(
            ir_op("Cast", u16x8, &[], &[u16x8.with_elem(Elem::U8)]),
            Ok(Op::Cast(Elem::U16))
        );
        assert_eq!(
            ir_op("ReduceAdd", u16x8, &[], &[u16x8.with_lanes(16)]),
            Ok(Op::ReduceAdd(2))
        );
        assert_eq!(
            ir_op("Slice", u8x16.with_lanes(8), &[1, 2], &[u8x16]),
            Ok(Op::Slice {
                start: 1,
                stride: 2,
                lanes: 8
            })
        );
        assert!(ir_op("Add", u8x16, &[], &[u16x8, u16x8]).is_err());
        assert!(ir_op("Frobnicate", u8x16, &[], &[u8x16]).is_err());
        assert_eq!(
            scalar_cost(&Op::Add, u8x16, &[(u8x16, false), (u8x16, false)]),
            80.0
        );
        assert_eq!(
            scalar_cost(&Op::Add, u8x16, &[(u8x16, false), (u8x16, true)]),
            64.0
        );
    }
}
