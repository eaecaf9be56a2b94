//! The pattern of a rule side or an instruction semantics as an e-graph query: variables are
//! wildcards (with a `type-of` condition where no parent fixes their type), constant wildcards
//! (`c0`) bind the lane value of a `Const` node, and constant arithmetic over them becomes i64
//! arithmetic in the rewrite's conditions and right-hand side.

use super::encode::{fold, has_vars, node};
use super::term::{Cmp, Condition, Int, IntOp, Term};
use crate::ir::{Elem, Expr, Op};
use crate::rules::syntax::is_constant_wildcard;
use std::collections::{BTreeMap, BTreeSet};

/// Whether operand `i` of an `op` node has the node's own type.
fn operand_typed_by_node(op: &Op, i: usize) -> bool {
    op.is_lanewise_uniform() || (matches!(op, Op::Select) && i > 0)
}

/// Builds the query and actions of one rewrite: wildcards seen on the left, the conditions
/// they need, and fresh variables for computed constants.
#[derive(Default)]
pub struct Pattern {
    /// Non-constant wildcards with their types.
    pub wildcards: BTreeMap<String, crate::ir::VecType>,
    bound_constants: BTreeSet<String>,
    /// For each wildcard, whether each of its uses is typed by its parent.
    typed: BTreeMap<String, Vec<bool>>,
    pending: Vec<(usize, Int)>,
    /// The conditions of the rewrite, in order.
    pub conditions: Vec<Condition>,
    fresh: usize,
}

impl Pattern {
    /// The left-hand side pattern of `e`.
    pub fn lhs(&mut self, e: &Expr) -> Result<Term, String> {
        self.lhs_node(e, false)
    }

    /// `typed_by_parent`: the node's parent in the pattern has operands of its own type (an
    /// e-graph node `(Add "u16x8" a b)` has operands of type u16x8), so a wildcard here needs
    /// no `type-of` condition.
    fn lhs_node(&mut self, e: &Expr, typed_by_parent: bool) -> Result<Term, String> {
        match &e.op {
            Op::Var(name) if !is_constant_wildcard(name) => {
                match self.wildcards.insert(name.clone(), e.ty) {
                    Some(t) if t != e.ty => {
                        return Err(format!("wildcard {name} is used at {t} and {}", e.ty));
                    }
                    _ => {}
                }
                self.typed
                    .entry(name.clone())
                    .or_default()
                    .push(typed_by_parent);
                Ok(Term::Wildcard(name.clone()))
            }
            _ if !has_vars(e) => Ok(Term::constant(e.ty, fold(e)?)),
            _ if !has_non_constant_vars(e) => {
                if let Some(name) = value_preserving_wildcard(e) {
                    self.bound_constants.insert(name.to_string());
                    return Ok(Term::Const {
                        ty: e.ty,
                        value: Int::Wildcard(name.to_string()),
                    });
                }
                let k = self.fresh;
                self.fresh += 1;
                self.pending.push((k, self.int(e)?));
                Ok(Term::Const {
                    ty: e.ty,
                    value: Int::Fresh(k),
                })
            }
            _ => {
                let args = e
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| self.lhs_node(a, operand_typed_by_node(&e.op, i)))
                    .collect::<Result<_, _>>()?;
                node(e, args)
            }
        }
    }

    /// Checks every constant wildcard is bound, adds a `type-of` condition for each wildcard
    /// whose type no parent fixes, and turns computed constants into conditions.
    pub fn finish_lhs(&mut self) -> Result<(), String> {
        let untyped: Vec<Condition> = std::mem::take(&mut self.typed)
            .into_iter()
            .filter(|(_, uses)| !uses.contains(&true))
            .map(|(name, _)| {
                let ty = self.wildcards[&name];
                Condition::TypeOf(Term::Wildcard(name), ty)
            })
            .collect();
        self.conditions.splice(0..0, untyped);
        for (k, value) in std::mem::take(&mut self.pending) {
            self.check_bound(&value)?;
            self.conditions
                .push(Condition::Compare(Cmp::Eq, Int::Fresh(k), value));
        }
        Ok(())
    }

    /// Every constant wildcard `value` reads is bound by the left side.
    fn check_bound(&self, value: &Int) -> Result<(), String> {
        match value {
            Int::Wildcard(w) if is_constant_wildcard(w) && !self.bound_constants.contains(w) => {
                Err(format!(
                    "constant wildcard {w} is only used inside arithmetic on the left side"
                ))
            }
            Int::Bin(_, a, b) => {
                self.check_bound(a)?;
                self.check_bound(b)
            }
            Int::Log2(a) => self.check_bound(a),
            _ => Ok(()),
        }
    }

    /// The right-hand side term of `e`, over the wildcards bound on the left.
    pub fn rhs(&self, e: &Expr) -> Result<Term, String> {
        match &e.op {
            Op::Var(name) if !is_constant_wildcard(name) => {
                if !self.wildcards.contains_key(name) {
                    return Err(format!("{name} is not bound by the left side"));
                }
                Ok(Term::Wildcard(name.clone()))
            }
            _ if !has_vars(e) => Ok(Term::constant(e.ty, fold(e)?)),
            _ if !has_non_constant_vars(e) => {
                let v = self.int(e)?;
                self.check_bound(&v)?;
                Ok(Term::Const { ty: e.ty, value: v })
            }
            _ => {
                let args = e
                    .args
                    .iter()
                    .map(|a| self.rhs(a))
                    .collect::<Result<_, _>>()?;
                node(e, args)
            }
        }
    }

    /// Conditions for a rule predicate: comparisons of constants, and bounds of wildcards.
    pub fn predicate(&mut self, e: &Expr) -> Result<(), String> {
        if e.op == Op::And && e.ty.elem == Elem::Bool {
            self.predicate(&e.args[0])?;
            return self.predicate(&e.args[1]);
        }
        let cmp = match e.op {
            Op::Le => Cmp::Le,
            Op::Lt => Cmp::Lt,
            Op::Ge => Cmp::Ge,
            Op::Gt => Cmp::Gt,
            Op::Eq => Cmp::Eq,
            Op::Ne => Cmp::Ne,
            _ => return Err(format!("unsupported predicate {e}")),
        };
        let (a, b) = (&e.args[0], &e.args[1]);
        let side = |p: &Self, x: &Expr, upper: bool| -> Result<Int, String> {
            match &x.op {
                Op::Var(n) if !is_constant_wildcard(n) => {
                    if !p.wildcards.contains_key(n) {
                        return Err(format!("{n} is not bound by the left side"));
                    }
                    Ok(if upper {
                        Int::Hi(n.clone())
                    } else {
                        Int::Lo(n.clone())
                    })
                }
                _ => p.int(x),
            }
        };
        // x <= k needs x's upper bound; k <= x its lower bound.
        let upper_left = matches!(e.op, Op::Le | Op::Lt);
        let l = side(self, a, upper_left)?;
        let r = side(self, b, !upper_left)?;
        if matches!(e.op, Op::Eq | Op::Ne) && (has_non_constant_vars(a) || has_non_constant_vars(b))
        {
            return Err(format!("unsupported predicate {e}"));
        }
        if cmp == Cmp::Eq {
            self.solve_power_of_two(&l, &r);
            self.solve_power_of_two(&r, &l);
        }
        self.check_bound(&l)?;
        self.check_bound(&r)?;
        self.conditions.push(Condition::Compare(cmp, l, r));
        Ok(())
    }

    /// For a predicate `value == 1 << w` whose `w` the left side does not bind (a rule
    /// `x * c0 => x << c1` when `c0 == 1 << c1`), binds `w` to the logarithm of `value`; the
    /// predicate is then checked as every other.
    fn solve_power_of_two(&mut self, value: &Int, power: &Int) {
        let Int::Bin(IntOp::Shl, one, w) = power else {
            return;
        };
        let (Int::Lit(1), Int::Wildcard(w)) = (&**one, &**w) else {
            return;
        };
        if self.bound_constants.contains(w) || self.check_bound(value).is_err() {
            return;
        }
        self.conditions.push(Condition::Compare(
            Cmp::Eq,
            Int::Wildcard(w.clone()),
            Int::Log2(Box::new(value.clone())),
        ));
        self.bound_constants.insert(w.clone());
    }

    /// The i64 arithmetic of a constant subexpression.
    fn int(&self, e: &Expr) -> Result<Int, String> {
        if !has_vars(e) {
            return Ok(Int::Lit(fold(e)? as i128));
        }
        let bin = |op: IntOp| -> Result<Int, String> {
            Ok(Int::Bin(
                op,
                Box::new(self.int(&e.args[0])?),
                Box::new(self.int(&e.args[1])?),
            ))
        };
        match &e.op {
            Op::Var(name) => Ok(Int::Wildcard(name.clone())),
            Op::Broadcast(_) | Op::Cast(_) => self.int(&e.args[0]),
            Op::Add => bin(IntOp::Add),
            Op::Sub => bin(IntOp::Sub),
            Op::Mul => bin(IntOp::Mul),
            Op::Shl => bin(IntOp::Shl),
            Op::Shr => bin(IntOp::Shr),
            Op::And => bin(IntOp::And),
            Op::Or => bin(IntOp::Or),
            Op::Xor => bin(IntOp::Xor),
            Op::Min => bin(IntOp::Min),
            Op::Max => bin(IntOp::Max),
            Op::Neg => Ok(Int::Bin(
                IntOp::Sub,
                Box::new(Int::Lit(0)),
                Box::new(self.int(&e.args[0])?),
            )),
            _ => Err(format!("cannot compute {e} on constants")),
        }
    }
}

fn has_non_constant_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |n| {
        if let Op::Var(name) = &n.op {
            if !is_constant_wildcard(name) {
                found = true;
            }
        }
    });
    found
}

/// `c0`, or `c0` broadcast or cast to a type that holds every value of its own.
fn value_preserving_wildcard(e: &Expr) -> Option<&str> {
    match &e.op {
        Op::Var(name) => Some(name),
        Op::Broadcast(_) => value_preserving_wildcard(&e.args[0]),
        Op::Cast(to) => {
            let from = e.args[0].ty.elem;
            let widens = to.bits() > from.bits() && (!from.is_signed() || to.is_signed());
            let same = *to == from;
            (widens || same)
                .then(|| value_preserving_wildcard(&e.args[0]))
                .flatten()
        }
        _ => None,
    }
}
