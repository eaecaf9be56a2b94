//! For the integration tests: the internals they check directly (rule elaboration, the z3
//! evaluator, the kernel rules and benchmark kernels, validation harnesses and inputs, the C
//! toolchains and their feature table, running a selection's C) and helpers of their own ([`mutants`]: unsound variants of a rule
//! instance, for testing that the verifier refutes them: operand swaps of non-commutative
//! operators, constants off by one, an operator replaced by a sibling, a signedness flip of a
//! variable, a dropped predicate).

pub use crate::ir::sexpr::read_one;
pub use crate::ir::Scope;
pub use crate::kernel::family as kernel_family;
pub use crate::kernel::rule::load as load_kernel_rules;
pub use crate::rules::load::{elaborate, load_rules, rule_macros, rule_types, Instance};
pub use crate::select::check::{features as selection_features, run_c};
pub use crate::semantics::smt::eval_with_z3;
pub use crate::toolchain::features::{missing, Host};
pub use crate::toolchain::{build_and_run, check_tools};
pub use crate::validate::harness;
pub use crate::validate::inputs::generate as generate_inputs;

use crate::ir::{Expr, Op};
use crate::semantics::{eval, Env};
use std::rc::Rc;

/// One mutant: the changed side, a description, and whether the predicate is kept.
pub struct Mutant {
    /// What was changed.
    pub what: String,
    /// The left-hand side after the change.
    pub lhs: Rc<Expr>,
    /// The right-hand side after the change.
    pub rhs: Rc<Expr>,
    /// The predicate, unless it was dropped.
    pub predicate: Option<Rc<Expr>>,
}

/// The operator a sibling mutation replaces `op` with, if any.
fn sibling(op: &Op) -> Option<Op> {
    Some(match op {
        Op::Add => Op::Sub,
        Op::Sub => Op::Add,
        Op::Shr => Op::Shl,
        Op::Shl => Op::Shr,
        Op::Min => Op::Max,
        Op::Max => Op::Min,
        Op::And => Op::Or,
        Op::Or => Op::And,
        Op::Xor => Op::And,
        Op::Lt => Op::Ge,
        Op::Le => Op::Gt,
        Op::Gt => Op::Le,
        Op::Ge => Op::Lt,
        Op::Eq => Op::Ne,
        Op::Ne => Op::Eq,
        _ => return None,
    })
}

fn non_commutative(op: &Op) -> bool {
    matches!(
        op,
        Op::Sub | Op::Shl | Op::Shr | Op::Lt | Op::Le | Op::Gt | Op::Ge
    )
}

/// Every node of a tree in pre-order, as paths of child indices.
fn paths(e: &Expr, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(prefix.clone());
    for (i, a) in e.args.iter().enumerate() {
        prefix.push(i);
        paths(a, prefix, out);
        prefix.pop();
    }
}

fn at<'a>(e: &'a Rc<Expr>, path: &[usize]) -> &'a Rc<Expr> {
    path.iter().fold(e, |n, &i| &n.args[i])
}

/// The tree with the node at `path` replaced.
fn replace(e: &Rc<Expr>, path: &[usize], new: Rc<Expr>) -> Rc<Expr> {
    match path.split_first() {
        None => new,
        Some((&i, rest)) => {
            let mut args = e.args.clone();
            args[i] = replace(&e.args[i], rest, new);
            Rc::new(Expr {
                op: e.op.clone(),
                ty: e.ty,
                args,
            })
        }
    }
}

/// Point mutations of one expression (types are preserved, so the mutant is well-typed).
pub fn mutate_expr(e: &Rc<Expr>) -> Vec<(String, Rc<Expr>)> {
    let mut ps = Vec::new();
    paths(e, &mut vec![], &mut ps);
    let mut out = Vec::new();
    for p in ps {
        let n = at(e, &p);
        let with = |op: Op, args: Vec<Rc<Expr>>| Rc::new(Expr { op, ty: n.ty, args });
        if let Some(s) = sibling(&n.op) {
            out.push((
                format!("{} -> {} at {p:?}", n.op.name(), s.name()),
                replace(e, &p, with(s, n.args.clone())),
            ));
        }
        let under_abs = !p.is_empty() && at(e, &p[..p.len() - 1]).op == Op::Abs;
        if non_commutative(&n.op) && n.args[0] != n.args[1] && !(n.op == Op::Sub && under_abs) {
            let swapped = vec![n.args[1].clone(), n.args[0].clone()];
            out.push((
                format!("swap operands of {} at {p:?}", n.op.name()),
                replace(e, &p, with(n.op.clone(), swapped)),
            ));
        }
        if let Op::Const(vals) = &n.op {
            if n.ty.elem.is_int() {
                let mask = n.ty.elem.mask();
                for (d, label) in [(1u128, "+1"), (mask, "-1")] {
                    let v: Vec<u128> = vals.iter().map(|x| x.wrapping_add(d) & mask).collect();
                    out.push((
                        format!("constant {label} at {p:?}"),
                        replace(e, &p, with(Op::Const(v), vec![])),
                    ));
                }
            }
        }
    }
    out.retain(|(_, m)| changes_closed_value(e, m));
    out
}

/// False when the mutation sits inside a variable-free subtree whose value it does not change
/// (`(gt 15 0)` to `(gt 15 1)`): evaluated exactly, no sampling.
fn changes_closed_value(e: &Rc<Expr>, m: &Rc<Expr>) -> bool {
    fn diff(a: &Rc<Expr>, b: &Rc<Expr>, path: &mut Vec<usize>) -> Option<Vec<usize>> {
        if Rc::ptr_eq(a, b) {
            return None;
        }
        for (i, (x, y)) in a.args.iter().zip(&b.args).enumerate() {
            path.push(i);
            if let Some(p) = diff(x, y, path) {
                return Some(p);
            }
            path.pop();
        }
        Some(path.clone())
    }
    let Some(p) = diff(e, m, &mut vec![]) else {
        return false;
    };
    for depth in 0..=p.len() {
        let (a, b) = (at(e, &p[..depth]), at(m, &p[..depth]));
        if a.vars().is_empty() {
            let env = Env::new();
            return match (eval(a, &env), eval(b, &env)) {
                (Ok(x), Ok(y)) => x != y,
                _ => true,
            };
        }
    }
    true
}

/// Signedness flips: a widening `cast` extends by the other signedness (`u16(x_u8)` becomes
/// `u16(i8(x_u8))`), which changes every lane whose top bit is set.
pub fn flip_signedness(e: &Rc<Expr>) -> Vec<(String, Rc<Expr>)> {
    let mut ps = Vec::new();
    paths(e, &mut vec![], &mut ps);
    let mut out = Vec::new();
    for p in ps {
        let n = at(e, &p);
        if let (Op::Cast(to), [arg]) = (&n.op, n.args.as_slice()) {
            let from = arg.ty.elem;
            if from.is_int() && to.bits() > from.bits() && !only_low_bits_used(e, &p, from.bits()) {
                if let Some(f) = from.other_signedness() {
                    let inner = Rc::new(Expr {
                        op: Op::Cast(f),
                        ty: arg.ty.with_elem(f),
                        args: vec![arg.clone()],
                    });
                    let new = Rc::new(Expr {
                        op: Op::Cast(*to),
                        ty: n.ty,
                        args: vec![inner],
                    });
                    out.push((
                        format!("extend as {} at {p:?}", f.name()),
                        replace(e, &p, new),
                    ));
                }
            }
        }
    }
    out
}

/// Whether only the low `bits` bits of the node at `path` reach the result: every operator on
/// the way up computes its low bits from its operands' low bits, up to a truncating cast. A
/// different extension there changes nothing, so such a flip is not a mutant.
fn only_low_bits_used(e: &Rc<Expr>, path: &[usize], bits: u32) -> bool {
    for depth in (0..path.len()).rev() {
        let parent = at(e, &path[..depth]);
        match &parent.op {
            Op::Add | Op::Sub | Op::Mul | Op::And | Op::Or | Op::Xor | Op::Not | Op::Neg => {}
            Op::Shl if path[depth] == 0 => {}
            Op::Cast(to) if to.bits() <= bits => return true,
            // A shift amount with its top bit set is at least the width either way.
            Op::Shl | Op::Shr => return true,
            _ => return false,
        }
    }
    false
}

/// All mutants of a rule instance: the left-hand side mutated (the right-hand side and
/// predicate kept), and the predicate dropped.
pub fn mutants(inst: &Instance) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (what, m) in mutate_expr(&inst.lhs)
        .into_iter()
        .chain(flip_signedness(&inst.lhs))
    {
        out.push(Mutant {
            what: format!("lhs: {what}"),
            lhs: m,
            rhs: inst.rhs.clone(),
            predicate: inst.predicate.clone(),
        });
    }
    if inst.predicate.is_some() {
        out.push(Mutant {
            what: "predicate dropped".into(),
            lhs: inst.lhs.clone(),
            rhs: inst.rhs.clone(),
            predicate: None,
        });
    }
    out
}
