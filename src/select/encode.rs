//! The IR as e-graph terms: the ground term of an input expression ([`ground`]), and the
//! pattern of a rule side or an instruction semantics ([`Pattern`]): variables are wildcards
//! (with a `type-of` condition where no parent fixes their type), constant wildcards (`c0`)
//! bind the lane value of a `Const` node, and constant arithmetic over them becomes i64
//! arithmetic in the rewrite's conditions and right-hand side.

use super::term::{reinterpret, Cmp, Condition, Int, IntOp, Term, CONSTRUCTORS};
use crate::ir::{Elem, Expr, Op};
use crate::rules::syntax::is_constant_wildcard;
use crate::semantics::{eval, Env};
use std::collections::{BTreeMap, BTreeSet};
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
            CONSTRUCTORS
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(n))?
                .name
        }
    };
    Some((name, vec![]))
}

fn has_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |n| found |= matches!(n.op, Op::Var(_)));
    found
}

/// The splat value of a variable-free expression.
fn fold(e: &Expr) -> Result<i64, String> {
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
fn node(e: &Expr, mut args: Vec<Term>) -> Result<Term, String> {
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
            if idx.iter().any(|&i| i >= table) || idx.iter().all(|&i| i == idx[0]) {
                let args = e.args.iter().map(|a| ground(a)).collect::<Result<_, _>>()?;
                return node(e, args);
            }
            let idx: Vec<u32> = idx.into_iter().map(|i| i as u32).collect();
            ground(&slices(e.args[0].clone(), &idx)?)
        }
        Op::Shuffle(idx) => ground(&shuffle_as_slices(e, idx)?),
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
