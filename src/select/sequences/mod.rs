//! Synthesis of instruction sequences beyond the stored rules: Hydride's Algorithm 2 as an
//! enumerative CEGIS over the target's instructions. Where the rules leave an operator (or a
//! whole ported instruction) scalarized, sequences of up to [`MAX_STEPS`] of the target's
//! instructions, each at a choice of its immediates, are enumerated bottom-up from the
//! operands and the goal's constants. Values are told apart by their bytes on a few test
//! inputs (observational equivalence: of two values equal on every test only the cheaper is
//! kept), and a value whose bytes are the goal's on every test is a candidate. A candidate is
//! checked on more inputs and then proven by z3; an input on which it differs (from the
//! checks, or z3's counterexample) joins the tests and the search starts again.
//!
//! Hydride restricts its grammar to instructions similar to the specification; here a
//! component may only compute operators the goal computes, besides moving data, bitwise
//! operators and selects (a goal that compares or takes a minimum may use every comparison,
//! minimum and maximum; one that adds may subtract, negate and sum lanes). Instructions that
//! compute the same bytes on sampled inputs are one component, the cheapest. The search
//! costs a fixed number of candidate evaluations, so its answers do not depend on the
//! machine's speed.

mod components;
mod enumerate;

use super::catalog::Catalog;
use super::node::{input_types, instruction, Node};
use crate::ir::{Elem, Expr, VecType};
use crate::semantics::sample::random_lanes;
use crate::semantics::{eval, prove_equivalent, Env, Value, Verdict};
use components::Component;
pub use components::Components;
use enumerate::{enumerate, Found, From};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::HashMap;
use std::rc::Rc;

/// Instructions in a sequence, at most.
pub const MAX_STEPS: usize = 6;
/// Test inputs values are told apart by, at first.
const TESTS: usize = 3;
/// Further inputs a candidate is checked on before z3 is asked.
const CHECKS: usize = 24;
/// Attempts (each after a counterexample), at most.
const ATTEMPTS: usize = 4;
const PROOF_TIMEOUT_MS: u32 = 20_000;

/// The cheapest sequence of the target's instructions found computing `goal` for less than
/// `below`, proven by z3 (with the proof's time in ms); None if none is found within the
/// search's budget.
pub fn search(
    catalog: &Catalog,
    components: &Components,
    goal: &Rc<Expr>,
    below: f64,
) -> Option<(Rc<Node>, f64)> {
    let operands = goal.vars();
    let ints = operands.iter().all(|(_, t)| t.elem.is_int());
    if !ints || !(goal.ty.elem.is_int() || goal.ty.elem == Elem::Bool) {
        return None;
    }
    let components = components.for_goal(goal);
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let draw = |rng: &mut SmallRng| -> Env {
        operands
            .iter()
            .map(|(name, ty)| {
                let lanes = random_lanes(*ty, ty.lanes as usize, rng);
                (name.clone(), Value::new(*ty, lanes))
            })
            .collect()
    };
    // Random tests, and the operands all zero, all ones and all the same.
    let mut tests: Vec<Env> = (0..TESTS).map(|_| draw(&mut rng)).collect();
    let same = draw(&mut rng);
    let first = operands.first().map(|(name, _)| same[name].to_bytes());
    for fill in [Some(0u8), Some(0xff), None] {
        let env: Env = operands
            .iter()
            .map(|(name, ty)| {
                let bytes = match (fill, &first) {
                    (Some(b), _) => vec![b; (ty.bits() / 8) as usize],
                    (None, Some(f)) => f
                        .iter()
                        .cycle()
                        .take((ty.bits() / 8) as usize)
                        .copied()
                        .collect(),
                    (None, None) => vec![],
                };
                (name.clone(), Value::from_bytes(*ty, &bytes))
            })
            .collect();
        tests.push(env);
    }
    let checks: Vec<Env> = (0..CHECKS).map(|_| draw(&mut rng)).collect();
    for _ in 0..ATTEMPTS {
        let (values, best) = enumerate(
            &components,
            goal,
            &tests,
            below,
            catalog.target.register_bits,
        )?;
        let root = node(&values, best, &components, catalog, &operands, goal)?;
        let selected = root.to_expr(catalog, &input_types(goal)).ok()?;
        if let Some(differs) = checks.iter().find(
            |env| !matches!((eval(goal, env), eval(&selected, env)), (Ok(a), Ok(b)) if a == b),
        ) {
            tests.push(differs.clone());
            continue;
        }
        match prove_equivalent(goal, &selected, None, PROOF_TIMEOUT_MS).ok()? {
            Verdict::Proven { ms, .. } => return Some((root, ms)),
            Verdict::Counterexample { model, .. } => tests.push(model),
            Verdict::Unknown { .. } => return None,
        }
    }
    None
}

/// The selection making value `i`, typed as the goal.
fn node(
    values: &[Found],
    i: usize,
    components: &[&Component],
    catalog: &Catalog,
    operands: &[(String, VecType)],
    goal: &Expr,
) -> Option<Rc<Node>> {
    let mut made = HashMap::new();
    let root = made_node(values, i, components, catalog, operands, &mut made);
    let ty = values[i].ty;
    Some(match goal.ty.elem {
        Elem::Bool => {
            let size = ty.bits() / goal.ty.lanes;
            let mask = VecType::new(goal.ty.lanes, Elem::int(size, false)?);
            Rc::new(Node::Nonzero {
                ty: goal.ty,
                arg: fitted(root, ty, mask),
            })
        }
        _ => fitted(root, ty, goal.ty),
    })
}

/// `n`, of type `from`, as a value of type `to`: its low lanes where it is wider, read as `to`.
fn fitted(n: Rc<Node>, from: VecType, to: VecType) -> Rc<Node> {
    let n = match from.bits() > to.bits() {
        true => Rc::new(Node::Lanes {
            ty: from.with_lanes(to.bits() / from.elem.bits()),
            offset: 0,
            arg: n,
        }),
        false => n,
    };
    let now = from.with_lanes(to.bits() / from.elem.bits().max(1));
    match now == to {
        true => n,
        false => Rc::new(Node::Reinterpret { ty: to, arg: n }),
    }
}

fn made_node(
    values: &[Found],
    i: usize,
    components: &[&Component],
    catalog: &Catalog,
    operands: &[(String, VecType)],
    made: &mut HashMap<usize, Rc<Node>>,
) -> Rc<Node> {
    if let Some(n) = made.get(&i) {
        return n.clone();
    }
    let n = match &values[i].from {
        From::Operand(k) => Rc::new(Node::Input {
            name: operands[*k].0.clone(),
            ty: values[i].ty,
            offset: 0,
        }),
        From::Const(ty, value) => Rc::new(Node::Const {
            ty: *ty,
            value: *value,
        }),
        From::Step(c, args) => {
            let comp = components[*c];
            let vectors = comp
                .vectors
                .iter()
                .zip(args)
                .map(|((_, ty), &a)| {
                    let arg = made_node(values, a, components, catalog, operands, made);
                    fitted(arg, values[a].ty, *ty)
                })
                .collect();
            instruction(catalog, comp.index, &comp.imms, vectors)
        }
    };
    made.insert(i, n.clone());
    n
}
