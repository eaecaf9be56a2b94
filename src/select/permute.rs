//! Instructions that move lanes under the control of a scalar (HVX vshuff/vdeal(Vu,Vv,Rt)):
//! for each control value that makes one an interleave or a deal of its two registers at some
//! element width, a lowering with that fixed control. Found by running the semantics on
//! distinct bytes; translation validation proves every selection that uses one.

use super::lowering::{Arg, Lowering};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::semantics::{eval, Env, Value};
use crate::spec::Instruction;
use std::rc::Rc;

/// Control values tried: `-k` selects every butterfly stage above element size `k` bytes.
const CONTROLS: [i64; 3] = [-1, -2, -4];

/// The interleave and deal lowerings of `ins` (two byte vectors and one scalar control).
pub fn permutation_lowerings(ins: &Instruction, index: usize) -> Vec<Lowering> {
    let [a, b, t] = &ins.operands[..] else {
        return vec![];
    };
    let n = a.ty.lanes;
    let bytes = VecType::new(n, Elem::U8);
    if a.ty != bytes || b.ty != bytes || t.ty.lanes != 1 || t.imm.is_some() || n > 128 {
        return vec![];
    }
    // Byte k of the pair Vu:Vv (Vv low) holds k.
    let mut env = Env::new();
    env.insert(b.name.clone(), Value::new(bytes, (0..n as u128).collect()));
    env.insert(
        a.name.clone(),
        Value::new(bytes, (n as u128..2 * n as u128).collect()),
    );
    let mut out = Vec::new();
    for control in CONTROLS {
        env.insert(
            t.name.clone(),
            Value::new(t.ty, vec![control as i128 as u128]),
        );
        let Ok(result) = eval(&ins.semantics, &env) else {
            continue;
        };
        let moved: Vec<u32> = result.lanes.iter().map(|l| *l as u32).collect();
        for size in [1, 2, 4] {
            let permutation = if moved == interleaved(n, size) {
                Permutation::Interleave
            } else if moved == dealt(n, size) {
                Permutation::Deal
            } else {
                continue;
            };
            for elem in Elem::ALL
                .iter()
                .filter(|e| e.is_int() && e.bits() == 8 * size)
            {
                out.push(lowering(ins, index, permutation, *elem, control));
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Permutation {
    /// Elements of Vv and Vu alternate, Vv's first.
    Interleave,
    /// The even elements of the pair Vu:Vv, then its odd elements.
    Deal,
}

/// Source byte of every result byte when elements of `size` bytes of the two `n`-byte
/// halves alternate.
fn interleaved(n: u32, size: u32) -> Vec<u32> {
    (0..2 * n)
        .map(|k| {
            let (element, byte) = (k / size, k % size);
            let half = if element % 2 == 0 { 0 } else { n };
            half + (element / 2) * size + byte
        })
        .collect()
}

/// Source byte of every result byte when the even elements of the `2n`-byte pair come first.
fn dealt(n: u32, size: u32) -> Vec<u32> {
    let elements = 2 * n / size;
    (0..2 * n)
        .map(|k| {
            let (element, byte) = (k / size, k % size);
            let source = if element < elements / 2 {
                2 * element
            } else {
                2 * (element - elements / 2) + 1
            };
            source * size + byte
        })
        .collect()
}

fn lowering(
    ins: &Instruction,
    index: usize,
    permutation: Permutation,
    elem: Elem,
    control: i64,
) -> Lowering {
    let (a, b) = (&ins.operands[0], &ins.operands[1]);
    let half = VecType::new(a.ty.bits() / elem.bits(), elem);
    let pair = half.with_lanes(2 * half.lanes);
    let var = |name: &str| Rc::new(Expr::var(name, half));
    let built = |op, args| Rc::new(Expr::build(op, args).expect("lanes of one type"));
    let pattern = match permutation {
        Permutation::Interleave => built(Op::Interleave, vec![var(&b.name), var(&a.name)]),
        Permutation::Deal => {
            let both = built(Op::Concat, vec![var(&b.name), var(&a.name)]);
            let slice = |start| {
                built(
                    Op::Slice {
                        start,
                        stride: 2,
                        lanes: half.lanes,
                    },
                    vec![both.clone()],
                )
            };
            built(Op::Concat, vec![slice(0), slice(1)])
        }
    };
    debug_assert_eq!(pattern.ty, pair);
    Lowering {
        instruction: index,
        pattern,
        args: vec![
            Arg::Wildcard(a.name.clone()),
            Arg::Wildcard(b.name.clone()),
            Arg::Fixed(control),
        ],
        source: format!(
            "{} with control {control}: {} of {elem} lanes",
            ins.name,
            match permutation {
                Permutation::Interleave => "interleave",
                Permutation::Deal => "deal",
            }
        ),
        bounds: Vec::new(),
        one_lane: false,
        result_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_of_two_four_byte_halves() {
        assert_eq!(interleaved(4, 2), vec![0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(dealt(4, 2), vec![0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(interleaved(4, 1), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(dealt(4, 1), vec![0, 2, 4, 6, 1, 3, 5, 7]);
    }
}
