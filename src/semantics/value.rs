//! Concrete vector values: one raw bit pattern per lane, truncated to the lane width.

use crate::ir::print::{lane_text, sign_extend};
use crate::ir::{Elem, VecType};
use std::fmt;

/// A vector value: its type and one raw bit pattern per lane.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Value {
    /// The type.
    pub ty: VecType,
    /// The lanes' bits, truncated to the lane width.
    pub lanes: Vec<u128>,
}

impl Value {
    /// A value of `ty`, every lane truncated to the lane width.
    pub fn new(ty: VecType, mut lanes: Vec<u128>) -> Value {
        let mask = ty.elem.mask();
        for lane in &mut lanes {
            *lane &= mask;
        }
        Value { ty, lanes }
    }

    /// Lane `i` as a number: sign-extended for signed types, zero-extended otherwise.
    pub fn int(&self, i: usize) -> i128 {
        as_int(self.ty.elem, self.lanes[i])
    }

    /// Lane `i` as an f32.
    pub fn f32(&self, i: usize) -> f32 {
        f32::from_bits(self.lanes[i] as u32)
    }

    /// The lanes as little-endian bytes, as a register in memory holds them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let bits = self.ty.elem.bits();
        if self.ty.elem == Elem::Bool {
            return self.lanes.iter().map(|&l| l as u8).collect();
        }
        let bytes = (bits / 8) as usize;
        self.lanes
            .iter()
            .flat_map(|l| l.to_le_bytes().into_iter().take(bytes))
            .collect()
    }

    /// Reads lanes of `ty` from little-endian bytes (bool lanes: one byte each, nonzero is true).
    pub fn from_bytes(ty: VecType, bytes: &[u8]) -> Value {
        if ty.elem == Elem::Bool {
            return Value::new(ty, bytes.iter().map(|&b| (b != 0) as u128).collect());
        }
        let n = (ty.elem.bits() / 8) as usize;
        let lanes = bytes
            .chunks(n)
            .take(ty.lanes as usize)
            .map(|c| {
                c.iter()
                    .rev()
                    .fold(0u128, |acc, &byte| acc << 8 | byte as u128)
            })
            .collect();
        Value::new(ty, lanes)
    }
}

/// Lane equality: exact bits, except that any two f32 NaNs are equal.
pub fn lane_eq(elem: Elem, expected: u128, actual: u128) -> bool {
    if elem == Elem::F32 {
        let (x, y) = (
            f32::from_bits(expected as u32),
            f32::from_bits(actual as u32),
        );
        return expected == actual || (x.is_nan() && y.is_nan());
    }
    expected == actual
}

/// Raw lane bits as a number of type `elem`.
pub fn as_int(elem: Elem, bits: u128) -> i128 {
    if elem.is_signed() {
        sign_extend(bits, elem.bits())
    } else {
        bits as i128
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lanes: Vec<String> = self
            .lanes
            .iter()
            .map(|&l| lane_text(self.ty.elem, l))
            .collect();
        write!(f, "[{}]", lanes.join(" "))
    }
}
