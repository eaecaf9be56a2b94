//! Splitting lane-wise work into halves: every lane-wise node of the input is also the
//! concatenation of its two halves, down to the narrowest register worth using, so a target
//! whose registers are narrower than the input computes it in parts. An interleave is split
//! too: its halves are the interleaves of its operands' halves (`interleave(a_u16, b_u16)` of
//! two HVX registers each is two `vshuff`; it was scalarized whole).

use crate::ir::{Expr, Op};
use std::rc::Rc;

/// The two halves of `e` (lanes `[0, n/2)` and `[n/2, n)`), down to the variables, when every
/// node is lane-wise or an interleave and each half keeps at least `min_bits`.
fn halves(e: &Rc<Expr>, min_bits: u32) -> Option<(Rc<Expr>, Rc<Expr>)> {
    let widest = e
        .args
        .iter()
        .map(|a| a.ty.bits())
        .fold(e.ty.bits(), u32::max);
    if !e.ty.lanes.is_multiple_of(2) || widest / 2 < min_bits {
        return None;
    }
    let half = |start: u32| -> Option<Rc<Expr>> { half_of(e, start) };
    Some((half(0)?, half(e.ty.lanes / 2)?))
}

fn half_of(e: &Rc<Expr>, start_lane: u32) -> Option<Rc<Expr>> {
    let lanes = e.ty.lanes / 2;
    let ty = e.ty.with_lanes(lanes);
    if !e.ty.lanes.is_multiple_of(2) {
        return None;
    }
    match &e.op {
        Op::Var(_) => Some(Rc::new(Expr {
            op: Op::Slice {
                start: start_lane,
                stride: 1,
                lanes,
            },
            ty,
            args: vec![e.clone()],
        })),
        Op::Const(v) if v.len() == 1 => Some(Rc::new(Expr::constant(ty, v.clone()))),
        // A constant written lane by lane (an immediate folded into a shift's count): its lanes.
        Op::Const(v) if v.len() == e.ty.lanes as usize => {
            let at = start_lane as usize;
            Some(Rc::new(Expr::constant(
                ty,
                v[at..at + lanes as usize].to_vec(),
            )))
        }
        Op::Slice {
            start, stride: 1, ..
        } if matches!(e.args[0].op, Op::Var(_)) => Some(Rc::new(Expr {
            op: Op::Slice {
                start: start + start_lane,
                stride: 1,
                lanes,
            },
            ty,
            args: e.args.clone(),
        })),
        // The bits of a half are the bits of the operand's half.
        Op::Bitcast(_) if e.args[0].ty.lanes.is_multiple_of(2) => {
            let arg_start = start_lane * e.args[0].ty.lanes / e.ty.lanes;
            let arg = half_of(&e.args[0], arg_start)?;
            Some(Rc::new(Expr::build(e.op.clone(), vec![arg]).ok()?))
        }
        // Every other lane of all the operand's lanes: every other lane of each half.
        Op::Slice {
            start,
            stride: 2,
            lanes: all,
        } if *start < 2 && e.args[0].ty.lanes == 2 * all => {
            let arg = half_of(&e.args[0], 2 * start_lane)?;
            let op = Op::Slice {
                start: *start,
                stride: 2,
                lanes,
            };
            Some(Rc::new(Expr::build(op, vec![arg]).ok()?))
        }
        // A half of one value in every lane (a shift's count) is that value in half the lanes.
        Op::Broadcast(_) if e.args[0].ty.lanes == 1 => Some(Rc::new(
            Expr::build(Op::Broadcast(lanes), e.args.clone()).ok()?,
        )),
        // The low half of an interleave is the interleave of its operands' low halves, the
        // high half that of their high halves: lanes of the operands as they are, so that an
        // operand computed whole is read by both (x86's `unpacklo` and `unpackhi` of one
        // `add` each), its own halves being split beside it.
        Op::Interleave if e.args[0].ty.lanes.is_multiple_of(2) => {
            let args = e
                .args
                .iter()
                .map(|a| slice_of(a, start_lane / 2, a.ty.lanes / 2))
                .collect::<Option<Vec<_>>>()?;
            Some(Rc::new(Expr::build(Op::Interleave, args).ok()?))
        }
        Op::ReduceAdd(k) => {
            let arg = half_of(&e.args[0], start_lane * k)?;
            Some(Rc::new(Expr::build(Op::ReduceAdd(*k), vec![arg]).ok()?))
        }
        op if op.is_lanewise() => {
            let args = e
                .args
                .iter()
                .map(|a| half_of(a, start_lane))
                .collect::<Option<Vec<_>>>()?;
            Some(Rc::new(Expr::build(op.clone(), args).ok()?))
        }
        _ => None,
    }
}

/// `lanes` lanes of `e` from `start`: a slice of it, or of what it slices.
fn slice_of(e: &Rc<Expr>, start: u32, lanes: u32) -> Option<Rc<Expr>> {
    let (of, start) = match e.op {
        Op::Slice {
            start: outer,
            stride: 1,
            ..
        } => (&e.args[0], outer + start),
        _ => (e, start),
    };
    let op = Op::Slice {
        start,
        stride: 1,
        lanes,
    };
    Expr::build(op, vec![of.clone()]).ok().map(Rc::new)
}

/// Every node of `e` and of its halves (recursively), each with its split.
pub fn splits(e: &Rc<Expr>, min_bits: u32, out: &mut Vec<(Rc<Expr>, Rc<Expr>, Rc<Expr>)>) {
    let mut nodes: Vec<Rc<Expr>> = Vec::new();
    collect(e, &mut nodes);
    for n in nodes {
        if matches!(
            n.op,
            Op::Var(_) | Op::Const(_) | Op::Slice { stride: 1, .. }
        ) {
            continue;
        }
        if let Some((lo, hi)) = halves(&n, min_bits) {
            if out.iter().any(|(m, _, _)| *m == n) {
                continue;
            }
            out.push((n.clone(), lo.clone(), hi.clone()));
            splits(&lo, min_bits, out);
            splits(&hi, min_bits, out);
        }
    }
}

fn collect(e: &Rc<Expr>, out: &mut Vec<Rc<Expr>>) {
    for a in &e.args {
        collect(a, out);
    }
    if !out.contains(e) {
        out.push(e.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Elem, VecType};

    /// `interleave(a, b)` of 128 u16 lanes each, split down to `min_bits`: the operands' lanes
    /// each half of the result reads (start, count), in order.
    fn interleave_halves(min_bits: u32) -> Vec<Vec<(u32, u32)>> {
        let ty = VecType::new(128, Elem::U16);
        let (a, b) = (Rc::new(Expr::var("a", ty)), Rc::new(Expr::var("b", ty)));
        let whole = Rc::new(Expr::build(Op::Interleave, vec![a, b]).unwrap());
        let mut out = Vec::new();
        splits(&whole, min_bits, &mut out);
        let reads = |half: &Rc<Expr>| -> Vec<(u32, u32)> {
            assert_eq!(half.op, Op::Interleave);
            half.args
                .iter()
                .map(|arg| match arg.op {
                    Op::Slice { start, lanes, .. } => (start, lanes),
                    _ => panic!("not a slice of an operand: {arg:?}"),
                })
                .collect()
        };
        out.iter()
            .filter(|(node, _, _)| *node == whole)
            .flat_map(|(_, lo, hi)| [reads(lo), reads(hi)])
            .collect()
    }

    #[test]
    fn an_interleave_is_split_into_the_interleaves_of_its_operands_halves() {
        // Halves of two HVX registers each; none where a half would be narrower than a register.
        assert_eq!(
            interleave_halves(1024),
            vec![vec![(0, 64), (0, 64)], vec![(64, 64), (64, 64)]]
        );
        assert!(interleave_halves(4096).is_empty());
    }
}
