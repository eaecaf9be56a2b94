//! The cost models, as named options. `diospyros` is Diospyros's own (Num, Symbol and Get 0.001
//! each, so `(Get A 3)` with its symbol and index costs 0.003; List and Concat 0.1; a `Vec` whose
//! lanes are all reads of one array or zeros is its LitVec, 0.001; one whose lanes are all
//! literals or reads 0.1; one with any computed lane 100; every scalar or vector operation 1),
//! `isaria` the same with scalar binary operations 2, and `target` the target's instruction costs.
//! Costs are summed over the tree, as both peers extract.

use super::target::Target;
use super::term::{Dag, Id, Leaf, Op, Operand};
use crate::words::text_enum;

text_enum! {
    /// A named cost model.
    pub enum Model("cost model") {
        /// Diospyros's own.
        Diospyros = "diospyros",
        /// Isaria's: Diospyros's with scalar binary operations 2.
        Isaria = "isaria",
        /// The target's instruction costs.
        Target = "target",
    }
}

const LITERAL: f64 = 0.001;
const STRUCTURE: f64 = 0.1;
const COMPUTED_VEC: f64 = 100.0;

/// The cost of one node of the given operator over operands costing `args` (their own costs
/// are not included).
pub fn node_cost(model: Model, target: &Target, op: Op, args: &[Operand]) -> f64 {
    match model {
        Model::Diospyros | Model::Isaria => match op {
            Op::Num(_) => LITERAL,
            Op::Get(..) => 3.0 * LITERAL,
            Op::List | Op::Concat => STRUCTURE,
            Op::Vec => {
                let first_read = args.iter().find_map(|a| match a.leaf {
                    Leaf::Read(x) => Some(x),
                    _ => None,
                });
                let one_array = args.iter().all(|a| match a.leaf {
                    Leaf::Zero => true,
                    Leaf::Read(x) => Some(x) == first_read,
                    _ => false,
                });
                if one_array {
                    LITERAL
                } else if args.iter().all(|a| a.leaf != Leaf::No) {
                    STRUCTURE
                } else {
                    COMPUTED_VEC
                }
            }
            Op::Add | Op::Sub | Op::Mul | Op::Div if model == Model::Isaria => 2.0,
            _ => 1.0,
        },
        Model::Target => target.op_cost(op, args),
    }
}

/// The tree cost of `root` (shared sub-terms counted at every use).
pub fn tree_cost(dag: &Dag, root: Id, model: Model, target: &Target) -> f64 {
    let mut cost = vec![0.0; dag.len()];
    for id in dag.reachable(&[root]) {
        let args: Vec<Operand> = dag
            .args(id)
            .iter()
            .map(|&a| Operand {
                cost: cost[a as usize],
                leaf: Leaf::of(dag.op(a)),
            })
            .collect();
        cost[id as usize] =
            node_cost(model, target, dag.op(id), &args) + args.iter().map(|a| a.cost).sum::<f64>();
    }
    cost[root as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::read::read_list;
    use crate::kernel::target::KernelTarget;

    #[test]
    fn diospyros_cost_of_its_mat_mul_2x2_solution() {
        let k = read_list(
            "(List (VecMAC (VecMul (Vec (Get A 0) (Get A 0) (Get A 2) (Get A 2)) (Vec (Get B 0) (Get B 1) (Get B 0) (Get B 1)))
                           (Vec (Get A 1) (Get A 1) (Get A 3) (Get A 3)) (Vec (Get B 2) (Get B 3) (Get B 2) (Get B 3))))",
            "t",
        )
        .unwrap();
        let root = k.dag.args(k.root)[0];
        let t = Target::unit(KernelTarget::Dsp);
        let c = tree_cost(&k.dag, root, Model::Diospyros, &t);
        assert!((c - 2.052).abs() < 1e-9, "{c}");
        let scalar = read_list(
            "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))))",
            "t",
        )
        .unwrap();
        let s = scalar.dag.args(scalar.root)[0];
        assert!((tree_cost(&scalar.dag, s, Model::Isaria, &t) - 6.012).abs() < 1e-9);
    }
}
