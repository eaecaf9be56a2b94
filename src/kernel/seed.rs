//! A structured vectorization to start the search from (superword-level parallelism over the
//! output lanes): each `Vec` of outputs is built lane-aligned, top down. Lanes that are sums are
//! flattened into signed terms and the terms grouped across lanes, each group one vector
//! operation (products fused as multiply-accumulates); a group takes from every lane the term
//! most like the group's first (same shape, same arrays, the same element for a broadcast or the
//! next element for a contiguous load), so gathers stay cheap. Lanes of the same operator become
//! that vector operator over their aligned operands; a lane that is missing is zero (or, past the
//! last output, anything). Every step is an instance of the dialect's proven rules with
//! commutativity and associativity; the result is only a starting point: it enters the first
//! e-graph unioned with the spec, and the compiled program is proven equal to the spec anyway.

use super::term::{Dag, Id, Op};
use std::collections::HashMap;

/// One lane of a vector being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Lane {
    /// Past the last output: any value will do.
    Any,
    Zero,
    Term(Id),
}

struct Vectorizer<'a> {
    dag: &'a mut Dag,
    memo: HashMap<Vec<Lane>, Id>,
}

/// The outputs as a chain of `Concat`s of `width`-lane vectors built from their terms.
pub fn vectorize(dag: &mut Dag, outputs: &[Id], width: usize) -> Id {
    let mut v = Vectorizer {
        dag,
        memo: HashMap::new(),
    };
    let chunks: Vec<Id> = outputs
        .chunks(width)
        .map(|c| {
            let mut lanes: Vec<Lane> = c.iter().map(|&id| v.lane(id)).collect();
            lanes.resize(width, Lane::Any);
            v.build(&lanes)
        })
        .collect();
    v.dag.concat(&chunks)
}

impl Vectorizer<'_> {
    fn lane(&self, id: Id) -> Lane {
        if self.dag.op(id) == Op::Num(0) {
            Lane::Zero
        } else {
            Lane::Term(id)
        }
    }

    fn term(&self, l: Lane) -> Option<Id> {
        match l {
            Lane::Term(id) => Some(id),
            _ => None,
        }
    }

    fn gather(&mut self, lanes: &[Lane]) -> Id {
        let zero = self.dag.num(0);
        let ids: Vec<Id> = lanes
            .iter()
            .map(|l| self.term(*l).unwrap_or(zero))
            .collect();
        self.dag.add(Op::Vec, &ids)
    }

    /// A vector whose lane `k` is `lanes[k]`.
    fn build(&mut self, lanes: &[Lane]) -> Id {
        if let Some(&id) = self.memo.get(lanes) {
            return id;
        }
        let id = self.build_new(lanes);
        self.memo.insert(lanes.to_vec(), id);
        id
    }

    fn build_new(&mut self, lanes: &[Lane]) -> Id {
        let terms: Vec<Id> = lanes.iter().filter_map(|l| self.term(*l)).collect();
        if terms.iter().all(|&t| self.dag.op(t).is_leaf()) {
            return self.gather(lanes);
        }
        if terms
            .iter()
            .any(|&t| matches!(self.dag.op(t), Op::Add | Op::Sub))
        {
            return self.sum(lanes);
        }
        let first = self.dag.op(terms[0]);
        let same = terms.iter().all(|&t| self.dag.op(t) == first);
        let mostly_products = terms
            .iter()
            .all(|&t| matches!(self.dag.op(t), Op::Mul) || self.dag.op(t).is_leaf());
        if same || mostly_products {
            let op = if same { first } else { Op::Mul };
            if let Some(v) = self.lanewise(op, lanes) {
                return v;
            }
        }
        self.gather(lanes)
    }

    /// The vector operator `op` over operands aligned lane by lane.
    fn lanewise(&mut self, op: Op, lanes: &[Lane]) -> Option<Id> {
        let vop = op.vector_of()?;
        let arity = op.arity()?;
        let one = self.dag.num(1);
        let mut operands: Vec<Vec<Lane>> = vec![Vec::with_capacity(lanes.len()); arity];
        let reference = lanes.iter().find_map(|l| match *l {
            Lane::Term(t) if self.dag.op(t) == op => Some(self.dag.args(t).to_vec()),
            _ => None,
        })?;
        for l in lanes {
            let args: Vec<Lane> = match *l {
                Lane::Any => vec![Lane::Any; arity],
                Lane::Zero => match op {
                    Op::Add | Op::Sub | Op::Mul | Op::Neg => vec![Lane::Zero; arity],
                    Op::Div => vec![Lane::Zero, Lane::Term(one)],
                    _ => return None,
                },
                Lane::Term(t) if self.dag.op(t) == op => {
                    let mut a: Vec<Id> = self.dag.args(t).to_vec();
                    if op == Op::Mul
                        && self.similarity(a[1], reference[0]) + self.similarity(a[0], reference[1])
                            > self.similarity(a[0], reference[0])
                                + self.similarity(a[1], reference[1])
                    {
                        a.swap(0, 1);
                    }
                    a.into_iter().map(|x| self.lane(x)).collect()
                }
                // A read where the others multiply: x = x * 1.
                Lane::Term(t) if op == Op::Mul => vec![Lane::Term(t), Lane::Term(one)],
                Lane::Term(_) => return None,
            };
            for (k, a) in args.into_iter().enumerate() {
                operands[k].push(a);
            }
        }
        let built: Vec<Id> = operands.iter().map(|o| self.build(o)).collect();
        Some(self.dag.add(vop, &built))
    }

    /// How alike two terms are for sharing a vector: same operator, same arrays, the same or
    /// a neighbouring element.
    fn similarity(&self, a: Id, b: Id) -> i64 {
        match (self.dag.op(a), self.dag.op(b)) {
            (Op::Get(x, i), Op::Get(y, j)) if x == y => 3 - (i as i64 - j as i64).abs().min(2),
            (Op::Get(..), Op::Get(..)) => 1,
            (Op::Num(m), Op::Num(n)) => 1 + (m == n) as i64,
            (p, q) if p == q => {
                1 + self
                    .dag
                    .args(a)
                    .iter()
                    .zip(self.dag.args(b))
                    .map(|(&x, &y)| self.similarity(x, y).min(3))
                    .sum::<i64>()
            }
            _ => 0,
        }
    }

    /// The signed terms of a sum, flattened through `+`, `-` and `neg`.
    fn signed_terms(&self, id: Id, positive: bool, out: &mut Vec<(bool, Id)>) {
        let args = self.dag.args(id);
        match self.dag.op(id) {
            Op::Add => {
                self.signed_terms(args[0], positive, out);
                self.signed_terms(args[1], positive, out);
            }
            Op::Sub => {
                self.signed_terms(args[0], positive, out);
                self.signed_terms(args[1], !positive, out);
            }
            Op::Neg => self.signed_terms(args[0], !positive, out),
            Op::Num(0) => {}
            _ => out.push((positive, id)),
        }
    }

    /// Lanes that are sums: their terms grouped across lanes, one vector operation a group.
    fn sum(&mut self, lanes: &[Lane]) -> Id {
        let mut left: Vec<Vec<(bool, Id)>> = lanes
            .iter()
            .map(|l| {
                let mut t = Vec::new();
                if let Lane::Term(id) = l {
                    self.signed_terms(*id, true, &mut t);
                }
                t
            })
            .collect();
        let mut acc: Option<Id> = None;
        while let Some(r) = (0..lanes.len())
            .max_by_key(|&k| (left[k].len(), std::cmp::Reverse(k)))
            .filter(|&k| !left[k].is_empty())
        {
            // The sign most lanes still have, preferring + for the first group.
            let plus = left.iter().filter(|t| t.iter().any(|x| x.0)).count();
            let minus = left.iter().filter(|t| t.iter().any(|x| !x.0)).count();
            let sign = plus >= minus && plus > 0;
            let reference = left[r]
                .iter()
                .find(|x| x.0 == sign)
                .map(|x| x.1)
                .unwrap_or(left[r][0].1);
            let mut group: Vec<Lane> = Vec::with_capacity(lanes.len());
            for (k, l) in lanes.iter().enumerate() {
                let pick = left[k]
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| x.0 == sign)
                    .max_by_key(|(i, x)| (self.similarity(x.1, reference), std::cmp::Reverse(*i)))
                    .map(|(i, _)| i);
                group.push(match pick {
                    Some(i) => Lane::Term(left[k].remove(i).1),
                    None if *l == Lane::Any => Lane::Any,
                    None => Lane::Zero,
                });
            }
            let products = group
                .iter()
                .filter_map(|l| self.term(*l))
                .all(|t| self.dag.op(t) == Op::Mul);
            let value = if products {
                let (b, c) = self.factors(&group);
                let (b, c) = (self.build(&b), self.build(&c));
                match (acc, sign) {
                    (Some(a), true) => self.dag.add(Op::VecMAC, &[a, b, c]),
                    (Some(a), false) => {
                        let m = self.dag.add(Op::VecMul, &[b, c]);
                        self.dag.add(Op::VecMinus, &[a, m])
                    }
                    (None, s) => {
                        let m = self.dag.add(Op::VecMul, &[b, c]);
                        if s {
                            m
                        } else {
                            self.dag.add(Op::VecNeg, &[m])
                        }
                    }
                }
            } else {
                let v = self.build(&group);
                match (acc, sign) {
                    (Some(a), true) => self.dag.add(Op::VecAdd, &[a, v]),
                    (Some(a), false) => self.dag.add(Op::VecMinus, &[a, v]),
                    (None, true) => v,
                    (None, false) => self.dag.add(Op::VecNeg, &[v]),
                }
            };
            acc = Some(value);
        }
        acc.unwrap_or_else(|| self.gather(lanes))
    }

    /// The two factors of each product lane, ordered alike across lanes.
    fn factors(&mut self, group: &[Lane]) -> (Vec<Lane>, Vec<Lane>) {
        let reference = group
            .iter()
            .find_map(|l| self.term(*l))
            .map(|t| self.dag.args(t).to_vec());
        let mut b = Vec::new();
        let mut c = Vec::new();
        for l in group {
            match *l {
                Lane::Term(t) => {
                    let mut a = self.dag.args(t).to_vec();
                    if let Some(r) = &reference {
                        if self.similarity(a[1], r[0]) + self.similarity(a[0], r[1])
                            > self.similarity(a[0], r[0]) + self.similarity(a[1], r[1])
                        {
                            a.swap(0, 1);
                        }
                    }
                    b.push(self.lane(a[0]));
                    c.push(self.lane(a[1]));
                }
                other => {
                    b.push(other);
                    c.push(other);
                }
            }
        }
        (b, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::cost::{tree_cost, Model};
    use crate::kernel::read::read_list;
    use crate::kernel::target::{KernelTarget, Target};
    use crate::kernel::validate::validate;

    #[test]
    fn mat_mul_2x2_is_one_multiply_and_one_mac() {
        let text = "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))) (+ (* (Get A 0) (Get B 1)) (* (Get A 1) (Get B 3))) (+ (* (Get A 2) (Get B 0)) (* (Get A 3) (Get B 2))) (+ (* (Get A 2) (Get B 1)) (* (Get A 3) (Get B 3))))";
        let mut k = read_list(text, "t").unwrap();
        let outputs = k.dag.args(k.root).to_vec();
        let v = vectorize(&mut k.dag, &outputs, 4);
        let c = tree_cost(
            &k.dag,
            v,
            Model::Diospyros,
            &Target::unit(KernelTarget::Dsp),
        );
        assert!((c - 2.052).abs() < 1e-9, "{c}: {}", k.dag.print(v));
        validate(&mut k.dag, &outputs, v).unwrap();
    }
}
