//! The cost of a term on a target, from the target's instruction costs: the cheapest tiling of
//! the term's IR (idioms expanded) by instruction semantics, each instruction's semantics a
//! pattern whose variables match any subterm of their element type and whose scalar operands
//! match literals. A node no instruction covers costs [`SCALARIZED`] (computed lane by lane);
//! a cast between types of one width is a free reinterpretation.

use crate::ir::range::{holds, value_range};
use crate::ir::{Elem, Expr, Op};
use crate::spec::{Instruction, Target};
use std::collections::HashMap;
use std::mem::discriminant;

/// The cost of a node computed lane by lane, the last resort.
pub const SCALARIZED: f64 = 20.0;

/// An instruction pattern's top operator and the bits of its result lanes.
type PatternKey = (std::mem::Discriminant<Op>, u32);

/// A target's instruction semantics indexed by top operator and result element type.
pub struct CostModel {
    /// The target whose instructions these are.
    pub target: Target,
    /// Instructions (index, cost) by top operator and result bits.
    patterns: HashMap<PatternKey, Vec<(usize, f64)>>,
    /// The target's instructions, by name.
    instructions: Vec<Instruction>,
}

impl CostModel {
    /// The model of `target` from its instructions (any order).
    pub fn new(target: Target, mut instructions: Vec<Instruction>) -> CostModel {
        instructions.sort_by(|a, b| a.name.cmp(&b.name));
        let mut patterns: HashMap<_, Vec<(usize, f64)>> = HashMap::new();
        for (i, ins) in instructions.iter().enumerate() {
            let s = &ins.semantics;
            if matches!(s.op, Op::Var(_) | Op::Const(_)) {
                continue;
            }
            patterns
                .entry((discriminant(&s.op), key_bits(&s.op, s.ty.elem)))
                .or_default()
                .push((i, ins.cost));
        }
        CostModel {
            target,
            patterns,
            instructions,
        }
    }

    /// The cheapest cost of `e`, and the instructions of the tiling that achieves it.
    pub fn cost(&self, e: &Expr) -> (f64, Vec<String>) {
        match &e.op {
            Op::Var(_) | Op::Const(_) => return (0.0, vec![]),
            Op::Cast(to) | Op::Bitcast(to) if to.bits() == e.args[0].ty.elem.bits() => {
                return self.cost(&e.args[0])
            }
            Op::Broadcast(_) if matches!(e.args[0].op, Op::Var(_) | Op::Const(_)) => {
                return (0.0, vec![])
            }
            _ => {}
        }
        let mut best = (SCALARIZED, vec![format!("scalarized {}", e.op.name())]);
        for a in &e.args {
            let (c, names) = self.cost(a);
            best.0 += c;
            best.1.extend(names);
        }
        let key = (discriminant(&e.op), key_bits(&e.op, e.ty.elem));
        let Some(candidates) = self.patterns.get(&key) else {
            return best;
        };
        for &(i, ins_cost) in candidates {
            if ins_cost >= best.0 {
                continue;
            }
            let mut binds: Vec<(&str, &Expr)> = Vec::new();
            let p = &self.instructions[i].semantics;
            if !matches(p, e, bits_only(&p.op), &mut binds) {
                continue;
            }
            let mut total = (ins_cost, vec![self.instructions[i].name.clone()]);
            for (_, sub) in &binds {
                let (c, names) = self.cost(sub);
                total.0 += c;
                total.1.extend(names);
            }
            if total.0 < best.0 {
                best = total;
            }
        }
        best
    }
}

/// Operators whose result bits do not depend on the signedness of their lanes (wrapping
/// arithmetic, shifts left, bitwise logic): an instruction for i8 lanes computes them on u8.
fn sign_agnostic(op: &Op) -> bool {
    matches!(
        op,
        Op::Add | Op::Sub | Op::Mul | Op::Neg | Op::Shl | Op::And | Op::Or | Op::Xor | Op::Not
    )
}

/// Bitwise logic works on lanes of any width.
fn bitwise(op: &Op) -> bool {
    matches!(op, Op::And | Op::Or | Op::Xor | Op::Not)
}

/// The lane width an operator's patterns are indexed by (0: any).
fn key_bits(op: &Op, elem: Elem) -> u32 {
    if bitwise(op) {
        0
    } else {
        elem.bits()
            + if sign_agnostic(op) {
                0
            } else {
                1000 * elem.is_signed() as u32
            }
    }
}

/// How strictly a pattern's element types must match the term's.
#[derive(Clone, Copy, PartialEq)]
enum Strictness {
    Exact,
    SameBits,
    AnyInteger,
}

fn bits_only(op: &Op) -> Strictness {
    if bitwise(op) {
        Strictness::AnyInteger
    } else if sign_agnostic(op) {
        Strictness::SameBits
    } else {
        Strictness::Exact
    }
}

fn elems_match(p: Elem, t: Elem, how: Strictness) -> bool {
    match how {
        Strictness::Exact => p == t,
        Strictness::SameBits => p.bits() == t.bits() && p.is_int() == t.is_int(),
        Strictness::AnyInteger => p.is_int() && t.is_int(),
    }
}

/// Whether pattern `p` (an instruction's semantics) matches term `t`, lane counts aside; with
/// a sign-agnostic or bitwise root, element types need only agree in width (or be integers).
fn matches<'a>(
    p: &'a Expr,
    t: &'a Expr,
    how: Strictness,
    binds: &mut Vec<(&'a str, &'a Expr)>,
) -> bool {
    // A reinterpretation that keeps every value its operand can take is the operand: NEON's
    // `sqabs` is `i8_sat(abs(i16(x_i8)))` with `abs` at i16, which Halide's `abs` (unsigned)
    // reads as u16, its lanes 0 to 128 either way.
    if let (Op::Cast(to), false) = (&t.op, matches!(p.op, Op::Var(_) | Op::Cast(_))) {
        let operand = &t.args[0];
        let kept = value_range(operand).is_some_and(|r| holds(r, *to));
        if to.bits() == operand.ty.elem.bits() && kept {
            return matches(p, operand, how, binds);
        }
    }
    match &p.op {
        Op::Var(n) => {
            if !elems_match(p.ty.elem, t.ty.elem, how) {
                return false;
            }
            match binds.iter().find(|(m, _)| m == n) {
                Some((_, bound)) => *bound == t,
                None => {
                    binds.push((n, t));
                    true
                }
            }
        }
        // A scalar operand broadcast to every lane: an immediate or a scalar register.
        Op::Broadcast(_) if p.args[0].ty.lanes == 1 => matches!(t.op, Op::Const(_)),
        Op::Const(v) => {
            matches!(&t.op, Op::Const(w) if v.len() == 1 && w.len() == 1 && v[0] == w[0])
        }
        op => {
            let same_op = match (op, &t.op) {
                (Op::Broadcast(_), Op::Broadcast(_)) => true,
                (a, b) => a == b,
            };
            let how = if how == Strictness::Exact || !sign_agnostic(op) {
                Strictness::Exact
            } else {
                how
            };
            same_op
                && elems_match(p.ty.elem, t.ty.elem, how)
                && p.args.len() == t.args.len()
                && p.args
                    .iter()
                    .zip(&t.args)
                    .all(|(pa, ta)| matches(pa, ta, how, binds))
        }
    }
}
