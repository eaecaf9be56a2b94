//! The cost of a term on a target, from the target's instruction costs: the cheapest tiling of
//! the term's IR (idioms expanded) by instruction semantics, each instruction's semantics a
//! pattern whose variables match any subterm of their element type and whose scalar operands
//! match literals. A node no instruction covers costs [`SCALARIZED`] (computed lane by lane);
//! a cast between types of one width is a free reinterpretation.

use super::instructions::TargetInstruction;
use crate::ir::{Elem, Expr, Op};
use std::collections::HashMap;
use std::mem::discriminant;

/// The cost of a node computed lane by lane, the last resort.
pub const SCALARIZED: f64 = 20.0;

/// A target's instruction semantics indexed by top operator and result element type.
pub struct CostModel {
    pub target: &'static str,
    patterns: HashMap<(std::mem::Discriminant<Op>, Elem), Vec<(usize, f64)>>,
    instructions: Vec<TargetInstruction>,
}

impl CostModel {
    pub fn new(target: &'static str, instructions: Vec<TargetInstruction>) -> CostModel {
        let mut patterns: HashMap<_, Vec<(usize, f64)>> = HashMap::new();
        for (i, ins) in instructions.iter().enumerate() {
            let s = &ins.semantics;
            if matches!(s.op, Op::Var(_) | Op::Const(_)) {
                continue;
            }
            patterns
                .entry((discriminant(&s.op), s.ty.elem))
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
        let Some(candidates) = self.patterns.get(&(discriminant(&e.op), e.ty.elem)) else {
            return best;
        };
        for &(i, ins_cost) in candidates {
            if ins_cost >= best.0 {
                continue;
            }
            let mut binds: Vec<(&str, &Expr)> = Vec::new();
            if !matches(&self.instructions[i].semantics, e, &mut binds) {
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

/// Whether pattern `p` (an instruction's semantics) matches term `t`, lane counts aside.
fn matches<'a>(p: &'a Expr, t: &'a Expr, binds: &mut Vec<(&'a str, &'a Expr)>) -> bool {
    match &p.op {
        Op::Var(n) => {
            if p.ty.elem != t.ty.elem {
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
        Op::Const(v) => matches!(&t.op, Op::Const(w) if v.len() == 1 && w.len() == 1 && v[0] == w[0]),
        op => {
            let same_op = match (op, &t.op) {
                (Op::Broadcast(_), Op::Broadcast(_)) => true,
                (a, b) => a == b,
            };
            same_op
                && p.ty.elem == t.ty.elem
                && p.args.len() == t.args.len()
                && p.args
                    .iter()
                    .zip(&t.args)
                    .all(|(pa, ta)| matches(pa, ta, binds))
        }
    }
}
