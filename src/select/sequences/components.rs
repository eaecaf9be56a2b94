//! The components of synthesized sequences: the target's instructions over integer lanes,
//! each at a choice of its immediates, one per computation (instructions computing the same
//! bytes on sampled inputs are one, the cheapest), and those a goal may use.

use crate::ir::{Elem, Expr, VecType};
use crate::select::catalog::Catalog;
use crate::semantics::{eval, Env, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// Immediate combinations tried per instruction, at most.
const MAX_IMMEDIATES: usize = 16;
/// Components of one search, at most (the most similar to the goal first).
const MAX_COMPONENTS: usize = 160;
/// Random inputs instructions are told apart by (besides two others).
const PROBES: usize = 12;
/// Operators every component may compute besides the goal's own.
const FREE: [&str; 14] = [
    "var",
    "const",
    "bitcast",
    "broadcast",
    "concat",
    "slice",
    "interleave",
    "shuffle",
    "cast",
    "select",
    "and",
    "or",
    "xor",
    "not",
];
/// Groups of operators: a goal computing one of a group may use all of it.
const RELATED: [&[&str]; 2] = [
    &["eq", "ne", "lt", "le", "gt", "ge", "min", "max", "select"],
    &["add", "sub", "neg", "reduce-add"],
];

/// One of the target's instructions at one choice of its immediates.
pub(super) struct Component {
    pub(super) index: usize,
    pub(super) imms: Vec<i64>,
    pub(super) semantics: Rc<Expr>,
    /// Its vector operands, in order.
    pub(super) vectors: Vec<(String, VecType)>,
    pub(super) result: VecType,
    pub(super) cost: f64,
    /// The operators its semantics computes, and the element types it computes them at.
    pub(super) ops: BTreeSet<&'static str>,
    pub(super) typed_ops: BTreeSet<(&'static str, Elem)>,
}

/// The target's instructions over integer lanes, each at its immediates (up to a bound), the
/// cheapest of those computing the same bytes: what [`search`] combines, computed once per
/// catalog.
pub struct Components(Vec<Component>);

impl Components {
    /// The components of `catalog`'s target.
    pub fn of(catalog: &Catalog) -> Components {
        // The same bytes for every instruction's operands, so that equal computations meet.
        let mut rng = SmallRng::seed_from_u64(0xc0de);
        // Several inputs, as one lane of random bytes tells few comparisons apart: random
        // operands, operands all the same, and random ones with a lane's top bit flipped.
        let random: Vec<Vec<u8>> = (0..3 * PROBES)
            .map(|_| (0..256).map(|_| rng.gen()).collect())
            .collect();
        let probes: Vec<Vec<Vec<u8>>> = (0..PROBES)
            .map(|p| (0..3).map(|k| random[3 * p + k].clone()).collect())
            .chain([vec![random[0].clone(); 3]])
            .chain([(0..3)
                .map(|k| random[k].iter().map(|b| b ^ 0x80).collect())
                .collect()])
            .collect();
        let mut best: HashMap<(Vec<u32>, u32, Vec<u8>), Component> = HashMap::new();
        for (index, ins) in catalog.instructions.iter().enumerate() {
            let vectors = ins.vector_operands();
            let ints = vectors.iter().all(|(_, t)| t.elem.is_int()) && ins.result.elem.is_int();
            if vectors.is_empty() || vectors.len() > 3 || !ints {
                continue;
            }
            let ranges: Vec<(i128, i128)> = ins.operands.iter().filter_map(|o| o.imm).collect();
            for imms in immediate_choices(&ranges) {
                let texts: Vec<String> = imms.iter().map(|v| v.to_string()).collect();
                let Ok(semantics) = ins.at_immediates(&texts) else {
                    continue;
                };
                let outs: Option<Vec<Vec<u8>>> = probes
                    .iter()
                    .map(|probe| {
                        let env: Env = vectors
                            .iter()
                            .zip(probe)
                            .map(|((name, ty), bytes)| {
                                (name.clone(), Value::from_bytes(*ty, bytes))
                            })
                            .collect();
                        eval(&semantics, &env).ok().map(|v| v.to_bytes())
                    })
                    .collect();
                let Some(outs) = outs else {
                    continue;
                };
                let (ops, typed_ops) = operators(&semantics);
                let key = (
                    vectors.iter().map(|(_, t)| t.bits()).collect(),
                    ins.result.bits(),
                    outs.concat(),
                );
                let c = Component {
                    index,
                    imms: imms.iter().map(|&v| v as i64).collect(),
                    semantics,
                    vectors: vectors.clone(),
                    result: ins.result,
                    cost: ins.cost,
                    ops,
                    typed_ops,
                };
                match best.get(&key) {
                    Some(b) if b.cost <= c.cost => {}
                    _ => _ = best.insert(key, c),
                }
            }
        }
        let mut out: Vec<Component> = best.into_values().collect();
        out.sort_by(|a, b| (a.index, &a.imms).cmp(&(b.index, &b.imms)));
        Components(out)
    }

    /// The components a search for `goal` uses: those computing only operators it computes
    /// (or [`FREE`] and [`RELATED`] ones), most operators in common first, then cheapest.
    pub(super) fn for_goal(&self, goal: &Expr) -> Vec<&Component> {
        let (wanted, typed) = operators(goal);
        let mut allowed: BTreeSet<&str> = wanted.iter().copied().chain(FREE).collect();
        for group in RELATED {
            if group.iter().any(|op| wanted.contains(op)) {
                allowed.extend(group.iter().copied());
            }
        }
        let mut out: Vec<&Component> = self
            .0
            .iter()
            .filter(|c| c.ops.iter().all(|op| allowed.contains(op)))
            .collect();
        let elems: BTreeSet<Elem> = typed.iter().map(|(_, e)| *e).collect();
        let shared = |c: &Component| {
            (
                c.typed_ops.intersection(&typed).count(),
                c.ops
                    .intersection(&wanted)
                    .filter(|op| !matches!(**op, "var" | "const"))
                    .count(),
                c.typed_ops
                    .iter()
                    .filter(|(_, e)| elems.contains(e))
                    .count(),
            )
        };
        out.sort_by(|a, b| {
            shared(b)
                .cmp(&shared(a))
                .then(a.cost.total_cmp(&b.cost))
                .then(a.index.cmp(&b.index))
        });
        out.truncate(MAX_COMPONENTS);
        out
    }
}

/// The operators `e` computes, alone and with the element type of their first operand.
fn operators(e: &Expr) -> (BTreeSet<&'static str>, BTreeSet<(&'static str, Elem)>) {
    let (mut ops, mut typed) = (BTreeSet::new(), BTreeSet::new());
    e.walk(&mut |n| {
        ops.insert(n.op.name());
        if let Some(a) = n.args.first() {
            typed.insert((n.op.name(), a.ty.elem));
        }
    });
    (ops, typed)
}

/// Every combination of immediates if there are at most [`MAX_IMMEDIATES`], else each
/// immediate's ends, its low values and powers of two, up to that many combinations.
fn immediate_choices(ranges: &[(i128, i128)]) -> Vec<Vec<i128>> {
    let all = ranges.iter().try_fold(1usize, |n, (lo, hi)| {
        n.checked_mul((hi - lo + 1).max(1) as usize)
    });
    let values = |&(lo, hi): &(i128, i128)| -> Vec<i128> {
        if all.is_some_and(|n| n <= MAX_IMMEDIATES) {
            return (lo..=hi).collect();
        }
        let mut v: Vec<i128> = [lo, lo + 1, hi]
            .into_iter()
            .chain((0..16).map(|k| 1i128 << k))
            .filter(|x| (lo..=hi).contains(x))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut choices: Vec<Vec<i128>> = vec![vec![]];
    for r in ranges {
        choices = choices
            .into_iter()
            .flat_map(|c| {
                values(r).into_iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(v);
                    c
                })
            })
            .collect();
    }
    choices.truncate(MAX_IMMEDIATES);
    choices
}
