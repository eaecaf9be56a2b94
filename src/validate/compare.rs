//! Comparing the interpreter's lanes with the executed ones, and describing a difference: the
//! instruction's inputs (every operand's lanes), the expected and the actual lanes.

use crate::ir::print::lane_text;
use crate::ir::{Elem, VecType};
use crate::spec::Operand;
use crate::toolchain::ctype::INCONSISTENT;
use serde::Serialize;

/// Most mismatching inputs described per instruction.
pub const MAX_EXAMPLES: usize = 3;

/// One input on which execution and semantics disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// Index of the input in the instruction's input set.
    pub input: usize,
    /// Every operand's lanes (immediates as their value), in operand order.
    pub operands: Vec<(String, String)>,
    pub expected: String,
    pub actual: String,
    /// The differing result lanes.
    pub lanes: Vec<usize>,
}

impl Mismatch {
    /// One line: `a=[..] b=[..] expected [..] actual [..] (lanes 1, 3)`.
    pub fn one_line(&self) -> String {
        let ops: Vec<String> = self
            .operands
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!(
            "{} expected {} actual {} (lanes {})",
            ops.join(" "),
            self.expected,
            self.actual,
            lane_list(&self.lanes)
        )
    }
}

/// `1, 3, 5` (the first 16 of them).
pub fn lane_list(lanes: &[usize]) -> String {
    let mut s: Vec<String> = lanes.iter().take(16).map(|l| l.to_string()).collect();
    if lanes.len() > 16 {
        s.push(format!("... {} in all", lanes.len()));
    }
    s.join(", ")
}

pub use crate::semantics::value::lane_eq;

/// The result lanes that differ.
pub fn differing_lanes(ty: VecType, expected: &[u128], actual: &[u128]) -> Vec<usize> {
    (0..expected.len().max(actual.len()))
        .filter(|&i| match (expected.get(i), actual.get(i)) {
            (Some(&e), Some(&a)) => !lane_eq(ty.elem, e, a),
            _ => true,
        })
        .collect()
}

/// Lanes as `[1 -2 3]`; an inconsistent bool lane (mixed bytes) is `?`.
pub fn lanes_text(elem: Elem, lanes: &[u128]) -> String {
    let parts: Vec<String> = lanes
        .iter()
        .map(|&l| {
            if elem == Elem::Bool && l == INCONSISTENT {
                "?".to_string()
            } else {
                lane_text(elem, l)
            }
        })
        .collect();
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("[{}]", parts.join(" "))
    }
}

/// Describes a mismatch on input `index`.
pub fn describe(
    index: usize,
    operands: &[Operand],
    input: &[Vec<u128>],
    result: VecType,
    expected: &[u128],
    actual: &[u128],
    lanes: Vec<usize>,
) -> Mismatch {
    Mismatch {
        input: index,
        operands: operands
            .iter()
            .zip(input)
            .map(|(o, l)| (o.name.clone(), lanes_text(o.ty.elem, l)))
            .collect(),
        expected: lanes_text(result.elem, expected),
        actual: lanes_text(result.elem, actual),
        lanes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_and_text() {
        let nan1 = f32::NAN.to_bits() as u128;
        let nan2 = 0xffc0_0001u128;
        assert!(lane_eq(Elem::F32, nan1, nan2));
        assert!(!lane_eq(Elem::F32, 0, 0x8000_0000));
        let ty = VecType::parse("<4 x i8>").unwrap();
        assert_eq!(
            differing_lanes(ty, &[1, 2, 3, 4], &[1, 0, 3, 5]),
            vec![1, 3]
        );
        assert_eq!(lanes_text(Elem::I8, &[0xff, 1]), "[-1 1]");
        assert_eq!(lanes_text(Elem::Bool, &[1, INCONSISTENT]), "[1 ?]");
        let ops = [Operand {
            name: "a".into(),
            ty,
            c_type: None,
            imm: None,
        }];
        let m = describe(
            3,
            &ops,
            &[vec![1, 2, 3, 4]],
            ty,
            &[1, 2, 3, 4],
            &[1, 2, 3, 5],
            vec![3],
        );
        assert_eq!(
            m.one_line(),
            "a=[1 2 3 4] expected [1 2 3 4] actual [1 2 3 5] (lanes 3)"
        );
    }
}
