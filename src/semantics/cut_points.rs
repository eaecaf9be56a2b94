//! Cut points for proving two trees equal, as equivalence checkers sweep circuits: a subterm of
//! one tree and a subterm of the other that agree on random inputs are proven equal on their
//! own, and both are replaced by one fresh variable, over which the two cut trees are proven
//! equal. The proofs of the cuts and of the cut trees prove the whole (the fresh variable
//! takes every value, the subterms' among them); a failure proves nothing. z3 then meets small
//! queries instead of one whose products and selects the two sides build apart: NEON's
//! selection for `i16_sat((i32(select(x_i16 < z_i16, y_i16, z_i16)) * i32(max(x_i16,
//! z_i16))) >> 1)` (its halves: bsl, smax, smull, sqshrn) was undecided after six minutes and
//! went scalar; cut at the select and the max of each half, it is proven in 3 s.

use super::interp::{eval_every_node, Env};
use super::sample::random_lanes;
use super::value::Value;
use crate::error::Result;
use crate::ir::{Elem, Expr, Op, VecType};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Instant;

/// How many random inputs tell subterms apart.
const SAMPLES: usize = 8;
/// The most cut points one proof takes.
const MOST_CUTS: usize = 24;
/// The seed of the random inputs (a proof does not depend on it, only which cuts are tried).
const SEED: u64 = 0x6375_7473;

/// A cut point: lanes `offset..` of a subterm of the left tree (`lhs`), which take the same
/// values as a subterm of the right tree (`rhs`) on random inputs. A selection computes its
/// input's subterms in parts of registers as often as whole (NEON's `smull` on halves).
struct Pair {
    lhs: Rc<Expr>,
    offset: u32,
    rhs: Rc<Expr>,
}

impl Pair {
    /// The lanes the right subterm stands for, of `whole` (the left subterm or what stands
    /// for it).
    fn lanes_of(&self, whole: Rc<Expr>) -> Rc<Expr> {
        if self.offset == 0 && whole.ty == self.rhs.ty {
            return whole;
        }
        let slice = Op::Slice {
            start: self.offset,
            stride: 1,
            lanes: self.rhs.ty.lanes,
        };
        Rc::new(Expr::build(slice, vec![whole]).expect("the lanes lie within"))
    }
}

/// The cut points of `lhs` and `rhs`: the subterms of `rhs` (not its root) whose values on
/// random inputs vary and are those of some lanes of a subterm of `lhs`, each with the deepest
/// such, in the order of those subterms of `lhs` (every subterm after its operands).
fn candidates(lhs: &Rc<Expr>, rhs: &Rc<Expr>) -> Vec<Pair> {
    let mut vars: Vec<(String, VecType)> = lhs.vars();
    for (name, ty) in rhs.vars() {
        if !vars.iter().any(|(n, _)| *n == name) {
            vars.push((name, ty));
        }
    }
    let mut rng = SmallRng::seed_from_u64(SEED);
    let envs: Vec<Env> = (0..SAMPLES)
        .map(|_| {
            vars.iter()
                .map(|(name, ty)| {
                    let lanes = random_lanes(*ty, ty.lanes as usize, &mut rng);
                    (name.clone(), Value::new(*ty, lanes))
                })
                .collect()
        })
        .collect();
    let every_node = |tree: &Rc<Expr>| -> Option<Vec<HashMap<*const Expr, Value>>> {
        envs.iter()
            .map(|env| eval_every_node(tree, env).ok())
            .collect()
    };
    let (Some(left), Some(right)) = (every_node(lhs), every_node(rhs)) else {
        return vec![];
    };
    // A subterm's values on the random inputs; None for an input, a constant or bool lanes
    // (whose few bits agree by chance).
    let values = |of: &[HashMap<*const Expr, Value>], e: &Rc<Expr>| -> Option<Vec<Value>> {
        if e.args.is_empty() || e.ty.elem == Elem::Bool {
            return None;
        }
        of.iter().map(|m| m.get(&Rc::as_ptr(e)).cloned()).collect()
    };
    // Lanes of the inputs: a subterm that only moves them (a slice, `min(y, y)`) is no cut, for
    // the other side may read them elsewhere whole.
    let inputs: HashSet<Vec<Value>> = (vars.iter())
        .filter_map(|(name, _)| envs.iter().map(|env| env.get(name).cloned()).collect())
        .flat_map(|whole: Vec<Value>| lane_groups(&whole).into_iter().map(|(_, part)| part))
        .collect();
    let mut by_values: HashMap<Vec<Value>, (Rc<Expr>, u32)> = HashMap::new();
    let lhs_order = post_order_below(lhs);
    for node in &lhs_order {
        let Some(whole) = values(&left, node) else {
            continue;
        };
        for (offset, part) in lane_groups(&whole) {
            if !inputs.contains(&part) {
                by_values.entry(part).or_insert((node.clone(), offset));
            }
        }
    }
    let mut pairs = Vec::new();
    for node in post_order_below(rhs) {
        if pairs.len() == MOST_CUTS {
            break;
        }
        let found = values(&right, &node)
            .filter(|v| v.windows(2).any(|w| w[0] != w[1]))
            .and_then(|v| by_values.get(&v));
        if let Some((lhs, offset)) = found {
            pairs.push(Pair {
                lhs: lhs.clone(),
                offset: *offset,
                rhs: node,
            });
        }
    }
    let position: HashMap<*const Expr, usize> = (lhs_order.iter().enumerate())
        .map(|(k, e)| (Rc::as_ptr(e), k))
        .collect();
    pairs.sort_by_key(|p| position[&Rc::as_ptr(&p.lhs)]);
    pairs
}

/// Whether `lhs` and `rhs` are proven equal by cut points, taken operands first: each pair of
/// subterms, with the cuts made so far, proven equal by `equal` and cut to one variable (a
/// subterm of `lhs` once its every lane is cut: the concatenation of their variables), then
/// the cut trees proven equal; each query within `timeout_ms`, the pairs within four times
/// that.
pub fn proven(
    lhs: &Expr,
    rhs: &Expr,
    timeout_ms: u32,
    equal: impl Fn(&Expr, &Expr, u32) -> Result<bool>,
) -> Result<bool> {
    let start = Instant::now();
    let (lhs, rhs) = (Rc::new(lhs.clone()), Rc::new(rhs.clone()));
    let taken: HashSet<String> = lhs
        .vars()
        .into_iter()
        .chain(rhs.vars())
        .map(|v| v.0)
        .collect();
    // By subterm of `lhs`: the variables of its lanes cut so far (first lane, variable), and
    // the subterms of `rhs` each stands for, cut once all its lanes are.
    let mut pieces: HashMap<*const Expr, Vec<(u32, Rc<Expr>)>> = HashMap::new();
    let mut waiting: HashMap<*const Expr, Vec<(*const Expr, Rc<Expr>)>> = HashMap::new();
    let (mut left, mut right) = (HashMap::new(), HashMap::new());
    for (k, pair) in candidates(&lhs, &rhs).iter().enumerate() {
        if start.elapsed().as_millis() > 4 * timeout_ms as u128 {
            break;
        }
        let key = Rc::as_ptr(&pair.lhs);
        let lanes = pair.offset..pair.offset + pair.rhs.ty.lanes;
        let same_lanes = |at: u32, v: &Rc<Expr>| at == pair.offset && v.ty == pair.rhs.ty;
        let these = pieces.entry(key).or_default();
        let overlapping = these
            .iter()
            .any(|(at, v)| !same_lanes(*at, v) && *at < lanes.end && lanes.start < at + v.ty.lanes);
        if overlapping {
            continue;
        }
        let l = pair.lanes_of(cut_below(&pair.lhs, &left));
        let r = cut(&pair.rhs, &right);
        if !equal(&l, &r, timeout_ms)? {
            continue;
        }
        if let Some(whole) = left.get(&key) {
            right.insert(Rc::as_ptr(&pair.rhs), pair.lanes_of(Rc::clone(whole)));
            continue;
        }
        let v = match these.iter().find(|(at, v)| same_lanes(*at, v)) {
            Some((_, v)) => v.clone(),
            None => {
                let v = Rc::new(Expr::var(&cut_name(k, &taken), pair.rhs.ty));
                these.push((pair.offset, v.clone()));
                these.sort_by_key(|(at, _)| *at);
                v
            }
        };
        waiting
            .entry(key)
            .or_default()
            .push((Rc::as_ptr(&pair.rhs), v));
        if let Some(whole) = joined(these).filter(|w| w.ty == pair.lhs.ty) {
            left.insert(key, whole);
            right.extend(waiting.remove(&key).unwrap_or_default());
        }
    }
    if left.is_empty() {
        return Ok(false);
    }
    let (lhs, rhs) = (cut(&lhs, &left), cut(&rhs, &right));
    equal(&lhs, &rhs, timeout_ms)
}

/// The name of the variable of candidate `k`'s cut: `cut%k`, or where the sides already have
/// a variable of that name (the cut of a proof this one decides a pair of, of any type), the
/// first of `cut%k.1`, `cut%k.2`, ... they do not.
fn cut_name(k: usize, taken: &HashSet<String>) -> String {
    (0..)
        .map(|d| match d {
            0 => format!("cut%{k}"),
            d => format!("cut%{k}.{d}"),
        })
        .find(|name| !taken.contains(name))
        .expect("names are endless")
}

/// A subterm's values cut into every group of lanes of a size that divides its lanes (the
/// whole among them), each with its first lane.
fn lane_groups(values: &[Value]) -> Vec<(u32, Vec<Value>)> {
    let Some(ty) = values.first().map(|v| v.ty) else {
        return vec![];
    };
    (1..=ty.lanes)
        .filter(|n| ty.lanes % n == 0)
        .flat_map(|n| (0..ty.lanes / n).map(move |k| (k * n, n)))
        .map(|(offset, n)| {
            let part = values
                .iter()
                .map(|v| {
                    let lanes = v.lanes[offset as usize..(offset + n) as usize].to_vec();
                    Value::new(ty.with_lanes(n), lanes)
                })
                .collect();
            (offset, part)
        })
        .collect()
}

/// The variables of the cut lanes of one subterm of the left tree, by first lane, joined into
/// the whole subterm: None unless they cover its lanes one after another, from lane 0.
fn joined(pieces: &[(u32, Rc<Expr>)]) -> Option<Rc<Expr>> {
    let mut next = 0;
    let mut whole: Option<Rc<Expr>> = None;
    for (offset, v) in pieces {
        if *offset != next {
            return None;
        }
        next += v.ty.lanes;
        whole = Some(match whole {
            None => v.clone(),
            Some(w) => Rc::new(Expr::build(Op::Concat, vec![w, v.clone()]).ok()?),
        });
    }
    whole
}

/// Every distinct node of `tree` below its root, each after its operands.
fn post_order_below(tree: &Rc<Expr>) -> Vec<Rc<Expr>> {
    fn go(e: &Rc<Expr>, seen: &mut HashSet<*const Expr>, out: &mut Vec<Rc<Expr>>) {
        if seen.insert(Rc::as_ptr(e)) {
            for a in &e.args {
                go(a, seen, out);
            }
            out.push(e.clone());
        }
    }
    let (mut seen, mut out) = (HashSet::new(), Vec::new());
    for a in &tree.args {
        go(a, &mut seen, &mut out);
    }
    out
}

/// `tree` with each node of `cuts` (by address) replaced by its expression.
fn cut(tree: &Rc<Expr>, cuts: &HashMap<*const Expr, Rc<Expr>>) -> Rc<Expr> {
    fn go(
        e: &Rc<Expr>,
        cuts: &HashMap<*const Expr, Rc<Expr>>,
        done: &mut HashMap<*const Expr, Rc<Expr>>,
    ) -> Rc<Expr> {
        let key = Rc::as_ptr(e);
        if let Some(v) = cuts.get(&key).or_else(|| done.get(&key)) {
            return v.clone();
        }
        let args: Vec<Rc<Expr>> = e.args.iter().map(|a| go(a, cuts, done)).collect();
        let out = match args.iter().zip(&e.args).all(|(a, b)| Rc::ptr_eq(a, b)) {
            true => e.clone(),
            false => Rc::new(Expr {
                op: e.op.clone(),
                ty: e.ty,
                args,
            }),
        };
        done.insert(key, out.clone());
        out
    }
    go(tree, cuts, &mut HashMap::new())
}

/// `node` over its operands cut by `cuts` (itself not replaced).
fn cut_below(node: &Rc<Expr>, cuts: &HashMap<*const Expr, Rc<Expr>>) -> Rc<Expr> {
    let args: Vec<Rc<Expr>> = node.args.iter().map(|a| cut(a, cuts)).collect();
    Rc::new(Expr {
        op: node.op.clone(),
        ty: node.ty,
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;

    fn expr(text: &str) -> Rc<Expr> {
        elaborate_expression(text, "test", &Macros::default(), 8, &HashMap::new()).unwrap()
    }

    /// A proof deciding a pair of an outer one sees the outer one's cut variables; its own are
    /// named apart from them (the same name at two types failed AVX2's `mul_shr(x_i32, y_i32,
    /// 31)`'s whole proof with an error).
    #[test]
    fn cut_variables_are_named_apart_from_the_sides_own() {
        let taken: HashSet<String> = ["cut%3", "cut%3.1", "x_i16"].map(String::from).into();
        assert_eq!(cut_name(3, &taken), "cut%3.2");
        assert_eq!(cut_name(4, &taken), "cut%4");
    }

    #[test]
    fn the_largest_subterms_that_agree_are_paired_and_cut_to_one_variable() {
        let lhs = expr("(x_i16 - y_i16) * 3 + min(x_i16, y_i16)");
        let rhs = expr("min(y_i16, x_i16) + ((x_i16 - y_i16) << 1) + (x_i16 - y_i16)");
        let pairs = candidates(&lhs, &rhs);
        let shown: Vec<(String, String)> = pairs
            .iter()
            .map(|p| (p.lanes_of(p.lhs.clone()).to_string(), p.rhs.to_string()))
            .collect();
        let min_pair = shown
            .iter()
            .find(|(_, r)| r.contains("min"))
            .expect("the minima pair up");
        assert!(min_pair.0.contains("min"), "{shown:?}");
        // `(x - y) * 3` has no counterpart; `x - y` does, inside it.
        assert!(
            shown.iter().any(|(l, r)| l == r && l.contains("sub")),
            "{shown:?}"
        );
        let pair = pairs
            .iter()
            .find(|p| p.lhs.to_string().contains("min"))
            .unwrap();
        let v = Rc::new(Expr::var("cut", pair.lhs.ty));
        let cut_lhs = cut(&lhs, &HashMap::from([(Rc::as_ptr(&pair.lhs), v.clone())]));
        let cut_rhs = cut(&rhs, &HashMap::from([(Rc::as_ptr(&pair.rhs), v)]));
        assert!(!cut_lhs.to_string().contains("min"), "{cut_lhs}");
        assert!(!cut_rhs.to_string().contains("min"), "{cut_rhs}");
    }
}
