//! Extraction: the cheapest term of each e-class under a cost model, bottom-up to a fixpoint (a
//! `Vec`'s cost depends on whether its lanes' best terms are reads, as in Diospyros), and the
//! chosen terms of the roots rebuilt as a hash-consed [`Dag`].

use super::cost::{node_cost, Model};
use super::saturate::{EGraph, ENodeOp};
use super::target::Target;
use super::term::{Dag, Id, Op};
use super::term::{Leaf, Operand};
use crate::error::{Error, Result};

/// The best e-node and cost of every e-class.
pub struct Choice {
    pub best: Vec<Option<usize>>,
}

fn leaf_of(g: &EGraph, best: &[Option<usize>], class: usize) -> Leaf {
    match best[class].map(|n| &g.nodes[n].op) {
        Some(ENodeOp::Dialect(op)) => Leaf::of(*op),
        _ => Leaf::No,
    }
}

/// Costs to a fixpoint: passes over every e-node until no class gets cheaper.
pub fn choose(g: &EGraph, model: Model, target: &Target) -> Choice {
    let mut cost = vec![f64::INFINITY; g.classes];
    let mut best: Vec<Option<usize>> = vec![None; g.classes];
    loop {
        let mut changed = false;
        for (i, n) in g.nodes.iter().enumerate() {
            if n.args.iter().any(|&a| cost[a].is_infinite()) {
                continue;
            }
            let args: Vec<Operand> = n
                .args
                .iter()
                .map(|&a| Operand {
                    cost: cost[a],
                    leaf: leaf_of(g, &best, a),
                })
                .collect();
            let own = match &n.op {
                ENodeOp::Dialect(op) => node_cost(model, target, *op, &args),
                ENodeOp::Nil => 0.0,
            };
            let total = own + args.iter().map(|a| a.cost).sum::<f64>();
            if total < cost[n.class] - 1e-12 {
                cost[n.class] = total;
                best[n.class] = Some(i);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Choice { best }
}

/// The chosen term of `class` as a node of `dag` (a chunk list as nested `Concat`s).
pub fn build(g: &EGraph, choice: &Choice, class: usize, dag: &mut Dag) -> Result<Id> {
    let mut memo: Vec<Option<Id>> = vec![None; g.classes];
    let mut stack = vec![(class, false)];
    while let Some((c, expanded)) = stack.pop() {
        if memo[c].is_some() {
            continue;
        }
        let n = &g.nodes[choice.best[c]
            .ok_or_else(|| Error::data("extraction", "an e-class has no finite-cost term"))?];
        if !expanded {
            stack.push((c, true));
            for &a in n.args.iter().rev() {
                if memo[a].is_none() {
                    stack.push((a, false));
                }
            }
            continue;
        }
        let args: Vec<Id> = n
            .args
            .iter()
            .map(|&a| {
                memo[a].ok_or_else(|| Error::data("extraction", "a cycle among the chosen terms"))
            })
            .collect::<Result<_>>()?;
        let id = match &n.op {
            ENodeOp::Dialect(Op::Concat) => {
                // (Concat v rest): rest is a chunk list, or the end.
                if dag.op(args[1]) == Op::List && dag.args(args[1]).is_empty() {
                    args[0]
                } else {
                    dag.add(Op::Concat, &args)
                }
            }
            ENodeOp::Dialect(op) => dag.add(*op, &args),
            ENodeOp::Nil => dag.add(Op::List, &[]),
        };
        memo[c] = Some(id);
    }
    memo[class].ok_or_else(|| Error::data("extraction", "the root has no term"))
}
