//! Canonical text form of the IR: fully typed s-expressions that parse back to the same tree.

use super::expr::{Expr, Op};
use super::types::Elem;
use std::fmt;

/// One lane's raw bits as text: signed or unsigned decimal, 0/1 for bool, a float for f32.
pub fn lane_text(elem: Elem, bits: u128) -> String {
    match elem {
        Elem::F32 => {
            let x = f32::from_bits(bits as u32);
            if x.is_nan() {
                "nan".into()
            } else if x.is_infinite() {
                if x > 0.0 { "inf" } else { "-inf" }.into()
            } else {
                format!("{x:?}")
            }
        }
        e if e.is_signed() => sign_extend(bits, e.bits()).to_string(),
        _ => bits.to_string(),
    }
}

/// Reads `bits` (truncated to `width`) as a two's-complement number.
pub fn sign_extend(bits: u128, width: u32) -> i128 {
    if width >= 128 {
        bits as i128
    } else {
        let shift = 128 - width;
        ((bits << shift) as i128) >> shift
    }
}

/// An operator with its parameters as the text form writes them after the parenthesis:
/// `slice 0 1 4`, `cast i32`, `add`.
pub fn op_head(op: &Op) -> String {
    match op {
        Op::Cast(e) | Op::SatCast(e) | Op::Bitcast(e) => format!("{} {e}", op.name()),
        Op::Broadcast(n) | Op::ReduceAdd(n) => format!("{} {n}", op.name()),
        Op::Slice {
            start,
            stride,
            lanes,
        } => format!("slice {start} {stride} {lanes}"),
        Op::Shuffle(idx) => {
            let list: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
            format!("shuffle ({})", list.join(" "))
        }
        op => op.name().to_string(),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.op {
            Op::Var(n) => return write!(f, "(var {n} {})", self.ty),
            Op::Const(vals) => {
                write!(f, "(const {}", self.ty)?;
                for v in vals {
                    write!(f, " {}", lane_text(self.ty.elem, *v))?;
                }
                return f.write_str(")");
            }
            op => write!(f, "({}", op_head(op))?,
        }
        for a in &self.args {
            write!(f, " {a}")?;
        }
        f.write_str(")")
    }
}
