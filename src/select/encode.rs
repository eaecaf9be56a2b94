//! The IR as e-graph terms: the ground term of an input expression ([`ground`]), its
//! constants as e-graph lanes and its shuffles as slices, and the nodes patterns
//! (`super::pattern`) share with it.

use super::term::{reinterpret, spells, Term, CONSTRUCTORS};
use crate::ir::{Elem, Expr, Op};
use crate::semantics::{eval, Env};
use std::rc::Rc;

/// The constructor and i64 parameters of an operator; None for what the e-graph does not hold.
pub fn constructor(op: &Op, args: usize) -> Option<(&'static str, Vec<i64>)> {
    let name = match op {
        Op::Slice { start, stride, .. } => {
            return Some(("Slice", vec![*start as i64, *stride as i64]))
        }
        Op::Concat | Op::Interleave if args != 2 => return None,
        Op::Var(_) | Op::Const(_) | Op::Shuffle(_) => return None,
        Op::Cast(_) => "Cast",
        Op::SatCast(_) => "SatCast",
        Op::Bitcast(_) => "Bitcast",
        Op::Broadcast(_) => "Broadcast",
        Op::ReduceAdd(_) => "ReduceAdd",
        Op::Concat => "Concat",
        Op::Interleave => "Interleave",
        Op::Lookup => "Lookup",
        Op::Select => "Select",
        other => {
            let n = other.name();
            CONSTRUCTORS.iter().find(|c| spells(c.name, n))?.name
        }
    };
    Some((name, vec![]))
}

pub(super) fn has_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |n| found |= matches!(n.op, Op::Var(_)));
    found
}

/// The splat value of a variable-free expression.
pub(super) fn fold(e: &Expr) -> Result<i64, String> {
    let v = eval(e, &Env::new()).map_err(|err| err.to_string())?;
    let first = v.lanes[0];
    if v.lanes.iter().any(|l| *l != first) {
        return Err(format!("the constant {e} differs between lanes"));
    }
    let value = super::term::lane_value(e.ty.elem, first);
    if super::term::lane_bits(e.ty.elem, value) != first {
        return Err(format!(
            "the constant {e} does not fit in the 64 bits of an e-graph lane"
        ));
    }
    Ok(value)
}

/// Whether every lane of a variable-free expression is a value of an e-graph lane.
fn fits_a_lane(e: &Expr) -> bool {
    lanes_of(e).is_ok_and(|lanes| {
        lanes.iter().all(|&bits| {
            super::term::lane_bits(e.ty.elem, super::term::lane_value(e.ty.elem, bits)) == bits
        })
    })
}

/// `x + c` whose constant `c` does not fit an e-graph lane (a rounding constant of 128-bit
/// lanes, `2^63`) as `(x + (c >> 1)) + (c - (c >> 1))`: equal in wrapping arithmetic, and each
/// addend has one bit less.
fn constant_addend_halved(e: &Expr) -> Result<Expr, String> {
    let at = usize::from(!has_vars(&e.args[1]));
    let lanes = lanes_of(&e.args[at])?;
    let half = |lanes: Vec<u128>| Rc::new(Expr::constant(e.args[at].ty, lanes));
    let low = half(lanes.iter().map(|l| l >> 1).collect());
    let high = half(lanes.iter().map(|l| l - (l >> 1)).collect());
    let inner = Expr::build(Op::Add, vec![e.args[1 - at].clone(), low])?;
    Expr::build(Op::Add, vec![Rc::new(inner), high])
}

/// The raw lanes of a variable-free expression.
fn lanes_of(e: &Expr) -> Result<Vec<u128>, String> {
    Ok(eval(e, &Env::new()).map_err(|err| err.to_string())?.lanes)
}

/// Equalities for every lookup of one lane of an input at every lane (a lane broadcast, as
/// NEON's `dup` by lane): it is also the broadcast of that lane loaded as the low lane of a
/// register of `register_bits` (x86's `vpbroadcastw` of a load into an xmm register), and a
/// lookup of one lane is that lane itself.
pub fn lane_broadcast_facts(input: &Expr, register_bits: u32) -> Vec<(Term, Term)> {
    let mut out = Vec::new();
    input.walk(&mut |n| {
        let (Op::Lookup, [table, index]) = (&n.op, &n.args[..]) else {
            return;
        };
        let Op::Var(name) = &table.op else {
            return;
        };
        let Ok(lanes) = lanes_of(index).map_err(|_| ()).and_then(|l| {
            (!has_vars(index) && l.iter().all(|&i| i == l[0]) && l[0] < table.ty.lanes as u128)
                .then_some(l)
                .ok_or(())
        }) else {
            return;
        };
        let (elem, offset) = (n.ty.elem, lanes[0] as i64);
        let Ok(lookup) = ground(n) else {
            return;
        };
        let one = n.ty.with_lanes(1);
        let lane = if n.ty.lanes == 1 {
            Term::Part {
                ty: one,
                name: name.clone(),
                offset,
            }
        } else {
            let loaded = Term::Part {
                ty: one.with_lanes((register_bits / elem.bits()).max(1)),
                name: name.clone(),
                offset,
            };
            Term::Op {
                name: "Broadcast",
                ty: n.ty,
                params: vec![],
                args: vec![Term::Op {
                    name: "Slice",
                    ty: one,
                    params: vec![0, 1],
                    args: vec![loaded],
                }],
            }
        };
        out.push((lookup, lane));
    });
    out
}

/// A constant whose lanes differ as the concatenation of its runs of equal lanes, each a splat;
/// None for one run.
fn constant_runs(e: &Expr) -> Option<Expr> {
    let lanes = lanes_of(e).ok()?;
    let mut parts: Vec<Rc<Expr>> = Vec::new();
    let mut start = 0;
    for i in 1..=lanes.len() {
        if i == lanes.len() || lanes[i] != lanes[start] {
            let ty = e.ty.with_lanes((i - start) as u32);
            parts.push(Rc::new(Expr::constant(ty, vec![lanes[start]])));
            start = i;
        }
    }
    if parts.len() < 2 {
        return None;
    }
    Some((*balanced_concat(&parts).ok()?).clone())
}

/// The node of `e` over the terms of its operands.
pub(super) fn node(e: &Expr, mut args: Vec<Term>) -> Result<Term, String> {
    if e.op == Op::Concat && args.len() != 2 {
        return concat(e, args);
    }
    // A bitcast is its operand's bits read as another type (`vbslq`'s mask operand).
    let bools = e.ty.elem == Elem::Bool || e.args.iter().any(|a| a.ty.elem == Elem::Bool);
    if let (Op::Bitcast(_), 1, false) = (&e.op, args.len(), bools) {
        let arg = args.remove(0);
        return Ok(match e.args[0].ty == e.ty {
            true => arg,
            false => reinterpret(e.ty, arg),
        });
    }
    let (name, params) = constructor(&e.op, e.args.len())
        .ok_or_else(|| format!("'{}' has no instruction-selection form", e.op.name()))?;
    Ok(Term::Op {
        name,
        ty: e.ty,
        params,
        args,
    })
}

/// A concatenation of any number of parts as nested pairs, `(Concat t a (Concat t' b c))`.
fn concat(e: &Expr, mut args: Vec<Term>) -> Result<Term, String> {
    match args.len() {
        0 => Err("an empty concatenation".into()),
        1 => Ok(args.remove(0)),
        _ => {
            let first = args.remove(0);
            let rest_ty =
                e.ty.with_lanes(e.args[1..].iter().map(|a| a.ty.lanes).sum());
            let rest = Expr {
                op: Op::Concat,
                ty: rest_ty,
                args: e.args[1..].to_vec(),
            };
            Ok(Term::Op {
                name: "Concat",
                ty: e.ty,
                params: vec![],
                args: vec![first, concat(&rest, args)?],
            })
        }
    }
}

/// The ground term of an input expression; constant subexpressions are folded.
pub fn ground(e: &Expr) -> Result<Term, String> {
    match &e.op {
        Op::Var(name) => Ok(Term::Var {
            ty: e.ty,
            name: name.clone(),
        }),
        Op::Slice {
            start, stride: 1, ..
        } => match &e.args[0].op {
            Op::Var(name) => Ok(Term::Part {
                ty: e.ty,
                name: name.clone(),
                offset: *start as i64,
            }),
            _ => node(e, vec![ground(&e.args[0])?]),
        },
        _ if !has_vars(e) => match fold(e) {
            Ok(value) => Ok(Term::constant(e.ty, value)),
            Err(_) if e.op == Op::Concat => {
                let args = e.args.iter().map(|a| ground(a)).collect::<Result<_, _>>()?;
                node(e, args)
            }
            Err(error) => ground(&constant_runs(e).ok_or(error)?),
        },
        Op::Select if !has_vars(&e.args[0]) => {
            // A constant mask picks each lane from one side: a shuffle of the two.
            let mask = lanes_of(&e.args[0])?;
            let n = e.ty.lanes;
            if mask.iter().all(|&m| m == mask[0]) {
                return ground(&e.args[if mask[0] != 0 { 1 } else { 2 }]);
            }
            let idx: Vec<u32> = (0..n)
                .map(|i| if mask[i as usize] != 0 { i } else { n + i })
                .collect();
            let both = Expr::build(Op::Concat, vec![e.args[1].clone(), e.args[2].clone()])?;
            ground(&slices(Rc::new(both), &idx)?)
        }
        Op::Lookup if !has_vars(&e.args[1]) => {
            // Constant indices, all in range and not all one: a shuffle of the table.
            let table = e.args[0].ty.lanes as u128;
            let idx = lanes_of(&e.args[1])?;
            // One index for every lane stays a lookup (a lane broadcast, as `dup` has it).
            if idx.iter().all(|&i| i == idx[0]) && idx[0] < table {
                let args = e.args.iter().map(|a| ground(a)).collect::<Result<_, _>>()?;
                return node(e, args);
            }
            // Every index past the table: zeros.
            if idx.iter().all(|&i| i >= table) {
                return Ok(Term::constant(e.ty, 0));
            }
            if idx.iter().all(|&i| i < table) {
                let idx: Vec<u32> = idx.into_iter().map(|i| i as u32).collect();
                return ground(&slices(e.args[0].clone(), &idx)?);
            }
            // Indices past the table read zeros: a shuffle of the table beside a register of
            // zeros (a byte shift of a register is `ext` with zeros).
            let (source, idx) = beside_zeros(&e.args[0], &idx)?;
            ground(&slices(source, &idx)?)
        }
        Op::Shuffle(idx) => ground(&shuffle_as_slices(e, idx)?),
        Op::Add if e.args.iter().any(|a| !has_vars(a) && !fits_a_lane(a)) => {
            ground(&constant_addend_halved(e)?)
        }
        Op::Interleave if e.args.len() != 2 => {
            let (k, n) = (e.args.len() as u32, e.args[0].ty.lanes);
            let idx: Vec<u32> = (0..k * n).map(|i| (i % k) * n + i / k).collect();
            ground(&shuffle_as_slices(e, &idx)?)
        }
        _ => {
            let args = e.args.iter().map(|a| ground(a)).collect::<Result<_, _>>()?;
            node(e, args)
        }
    }
}

/// The table of a lookup beside a register of zeros, before or after it, and the lookup's
/// constant indices into the two: an index past the table reads a zero lane, chosen to continue
/// the run of indices beside it where one does; of the two orders, the one with fewer runs.
fn beside_zeros(table: &Rc<Expr>, idx: &[u128]) -> Result<(Rc<Expr>, Vec<u32>), String> {
    let n = table.ty.lanes;
    let zeros = Rc::new(Expr::constant(table.ty, vec![0]));
    let layout = |zeros_first: bool| {
        let (table_at, zeros_at) = if zeros_first { (n, 0) } else { (0, n) };
        let is_zero_lane = |v: i64| (zeros_at as i64..(zeros_at + n) as i64).contains(&v);
        let mut mapped: Vec<Option<i64>> = idx
            .iter()
            .map(|&i| (i < n as u128).then(|| i as i64 + table_at as i64))
            .collect();
        for p in 1..mapped.len() {
            if let (None, Some(prev)) = (mapped[p], mapped[p - 1]) {
                mapped[p] = Some(prev + 1).filter(|&v| is_zero_lane(v));
            }
        }
        for p in (0..mapped.len().saturating_sub(1)).rev() {
            if let (None, Some(next)) = (mapped[p], mapped[p + 1]) {
                mapped[p] = Some(next - 1).filter(|&v| is_zero_lane(v));
            }
        }
        let idx: Vec<u32> = mapped
            .into_iter()
            .map(|m| m.unwrap_or(zeros_at as i64) as u32)
            .collect();
        let runs = idx.windows(2).filter(|w| w[1] != w[0] + 1).count();
        (runs, zeros_first, idx)
    };
    let (_, zeros_first, idx) = layout(false).min(layout(true));
    let pair = if zeros_first {
        vec![zeros, table.clone()]
    } else {
        vec![table.clone(), zeros]
    };
    Ok((Rc::new(Expr::build(Op::Concat, pair)?), idx))
}

/// A shuffle (or an interleave of other than two vectors) of `e`'s operands as the e-graph
/// holds it: a balanced concatenation of strided slices of the operands' concatenation, one
/// slice per run of indices in arithmetic progression.
fn shuffle_as_slices(e: &Expr, idx: &[u32]) -> Result<Expr, String> {
    let source = if e.args.len() == 1 {
        e.args[0].clone()
    } else {
        Rc::new(Expr::build(Op::Concat, e.args.clone())?)
    };
    slices(source, idx)
}

/// The lanes `idx` of `source` as a balanced concatenation of strided slices (and broadcasts of
/// one lane, where an index repeats).
fn slices(source: Rc<Expr>, idx: &[u32]) -> Result<Expr, String> {
    let mut runs: Vec<(u32, u32, u32)> = Vec::new(); // start, stride, lanes
    for &i in idx {
        match runs.last_mut() {
            // A run of one index repeated (stride 0) is a broadcast of that lane.
            Some((start, stride, lanes)) if *lanes == 1 && i >= *start => {
                *stride = i - *start;
                *lanes = 2;
            }
            Some((start, stride, lanes)) if *lanes > 1 && i == *start + *stride * *lanes => {
                *lanes += 1;
            }
            _ => runs.push((i, 1, 1)),
        }
    }
    let parts: Vec<Rc<Expr>> = runs
        .into_iter()
        .map(|(start, stride, lanes)| {
            let (step, count) = if stride == 0 { (1, 1) } else { (stride, lanes) };
            let slice = Expr::build(
                Op::Slice {
                    start,
                    stride: step,
                    lanes: count,
                },
                vec![source.clone()],
            )?;
            let part = if stride == 0 {
                Expr::build(Op::Broadcast(lanes), vec![Rc::new(slice)])?
            } else {
                slice
            };
            Ok::<_, String>(Rc::new(part))
        })
        .collect::<Result<_, _>>()?;
    Ok((*balanced_concat(&parts)?).clone())
}

fn balanced_concat(parts: &[Rc<Expr>]) -> Result<Rc<Expr>, String> {
    if parts.len() == 1 {
        return Ok(parts[0].clone());
    }
    let (lo, hi) = parts.split_at(parts.len() / 2);
    Ok(Rc::new(Expr::build(
        Op::Concat,
        vec![balanced_concat(lo)?, balanced_concat(hi)?],
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VecType;

    #[test]
    fn an_addend_wider_than_a_lane_is_added_in_halves() {
        let ty = VecType::new(2, Elem::U128);
        let x = Rc::new(Expr::var("x", ty));
        let constant = |v: u128| Rc::new(Expr::constant(ty, vec![v; 2]));
        let sum = Expr::build(Op::Add, vec![x.clone(), constant(1 << 63)]).unwrap();
        assert!(fold(&constant(1 << 63)).is_err());
        let inner = Expr::build(Op::Add, vec![x, constant(1 << 62)]).unwrap();
        let halves = Expr::build(Op::Add, vec![Rc::new(inner), constant(1 << 62)]).unwrap();
        assert_eq!(ground(&sum), ground(&halves));
        assert!(ground(&sum).is_ok());
    }

    #[test]
    fn indices_past_a_lookups_table_read_a_register_of_zeros_beside_it() {
        let table = Rc::new(Expr::var("t", VecType::new(4, Elem::U8)));
        let past = 200;
        // A shift up by one lane: zeros first, one run from the last zero.
        let (source, idx) = beside_zeros(&table, &[past, 0, 1, 2]).unwrap();
        assert_eq!(idx, [3, 4, 5, 6]);
        assert_eq!(source.args[0].op, Op::Const(vec![0]));
        // A shift down by two: the table first, the run going on into the zeros.
        let (source, idx) = beside_zeros(&table, &[2, 3, past, past]).unwrap();
        assert_eq!(idx, [2, 3, 4, 5]);
        assert_eq!(source.args[1].op, Op::Const(vec![0]));
        // The shuffle reads the same lanes as the lookup.
        let index = Rc::new(Expr::constant(
            VecType::new(4, Elem::U8),
            vec![2, past, 0, past],
        ));
        let lookup = Expr::build(Op::Lookup, vec![table.clone(), index]).unwrap();
        let (source, idx) = beside_zeros(&table, &[2, past, 0, past]).unwrap();
        let shuffled = slices(source, &idx).unwrap();
        let env: Env = [(
            "t".to_string(),
            crate::semantics::Value {
                ty: table.ty,
                lanes: vec![10, 11, 12, 13],
            },
        )]
        .into_iter()
        .collect();
        assert_eq!(eval(&lookup, &env).unwrap().lanes, [12, 0, 10, 0]);
        assert_eq!(eval(&shuffled, &env).unwrap().lanes, [12, 0, 10, 0]);
    }
}
