//! Cut points for proving two trees equal, as equivalence checkers sweep circuits: a subterm of
//! one tree and a subterm of the other that agree on random inputs are proven equal on their
//! own, and both are replaced by one fresh variable, over which the two cut trees are proven
//! equal. The proofs of the cuts and of the cut trees prove the whole (the fresh variable
//! takes every value, the subterms' among them); a failure proves nothing. z3 then meets small
//! queries instead of one whose products and selects the two sides build apart: NEON's
//! selection for `i16_sat((i32(select(x_i16 < z_i16, y_i16, z_i16)) * i32(max(x_i16,
//! z_i16))) >> 1)` (its halves: bsl, smax, smull, sqshrn) was undecided after six minutes and
//! went scalar; cut at the select and the max of each half, it is proven in 3 s.

use super::budget::spent_ms;
use super::context::in_a_fresh_context;
use super::interp::{eval_every_node, Env};
use super::sample::random_lanes;
use super::value::Value;
use crate::error::Result;
use crate::ir::{Elem, Expr, Op, VecType};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// How many random inputs tell subterms apart.
const SAMPLES: usize = 8;
/// The most cut points one proof takes.
const MOST_CUTS: usize = 24;
/// The seed of the random inputs (a proof does not depend on it, only which cuts are tried).
const SEED: u64 = 0x6375_7473;

/// A cut point: lanes `offset..` of a subterm of the left tree (`lhs`), or one word of each of
/// those lanes, which take the same values as a subterm of the right tree (`rhs`) on random
/// inputs. A selection computes its input's subterms in parts of registers as often as whole
/// (NEON's `smull` on halves), and 64-bit lanes on a target without them as their words
/// (HVX's unsigned products of words: the low word by `vmpyieo`, the high word by `vmpye` and
/// `vmpyo` corrected; the input's 64-bit product is cut once both words are).
struct Pair {
    lhs: Rc<Expr>,
    offset: u32,
    word: Option<Word>,
    rhs: Rc<Expr>,
}

/// A word of 64-bit lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Word {
    Low,
    High,
}

impl Word {
    /// The word's bits of a lane's.
    fn of(self, bits: u128) -> u128 {
        match self {
            Word::Low => bits & 0xffff_ffff,
            Word::High => (bits >> 32) & 0xffff_ffff,
        }
    }
}

impl Pair {
    /// The lanes the right subterm stands for, of `whole` (the left subterm or what stands
    /// for it), at the right subterm's type (the word cut to it).
    fn lanes_of(&self, whole: Rc<Expr>) -> Rc<Expr> {
        if self.offset == 0 && whole.ty.lanes == self.rhs.ty.lanes {
            return self.word_of(whole);
        }
        let slice = Op::Slice {
            start: self.offset,
            stride: 1,
            lanes: self.rhs.ty.lanes,
        };
        self.word_of(build(slice, vec![whole]))
    }

    /// `lanes` (the right subterm's lanes of the left one) at the right subterm's type: as
    /// they are, or the word cut to it.
    fn word_of(&self, lanes: Rc<Expr>) -> Rc<Expr> {
        let word = match self.word {
            None => return lanes,
            Some(Word::Low) => lanes,
            Some(Word::High) => {
                let by = Rc::new(Expr::constant(lanes.ty, vec![32]));
                build(Op::Shr, vec![lanes, by])
            }
        };
        build(Op::Cast(self.rhs.ty.elem), vec![word])
    }
}

/// An expression the cut points make, typed by construction.
fn build(op: Op, args: Vec<Rc<Expr>>) -> Rc<Expr> {
    Rc::new(Expr::build(op, args).expect("lanes and words lie within"))
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
    let mut by_values: HashMap<Vec<Value>, (Rc<Expr>, u32, Option<Word>)> = HashMap::new();
    // The root too, at its words only: a 64-bit result computed by words (HVX's
    // `widening_mul(x_u32, y_u32)`) is proven a word at a time.
    let mut lhs_order = post_order_below(lhs);
    lhs_order.push(lhs.clone());
    for node in &lhs_order {
        let Some(whole) = values(&left, node) else {
            continue;
        };
        let root = Rc::ptr_eq(node, lhs);
        let views = word_views(whole)
            .into_iter()
            .filter(|(word, _)| !root || word.is_some());
        for (word, whole) in views {
            for (offset, part) in lane_groups(&whole) {
                if !inputs.contains(&part) {
                    by_values
                        .entry(part)
                        .or_insert((node.clone(), offset, word));
                }
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
        if let Some((lhs, offset, word)) = found {
            pairs.push(Pair {
                lhs: lhs.clone(),
                offset: *offset,
                word: *word,
                rhs: node,
            });
        }
    }
    // A subterm is cut at its words only where both words of the same lanes are found: a
    // variable for a widening of inputs whose high word is zero (found only at its low word)
    // would lose those zeros.
    let both_words = |p: &Pair| {
        let words: HashSet<Option<Word>> = (pairs.iter())
            .filter(|q| Rc::ptr_eq(&q.lhs, &p.lhs) && q.offset == p.offset)
            .filter(|q| q.rhs.ty.lanes == p.rhs.ty.lanes)
            .map(|q| q.word)
            .collect();
        words.contains(&Some(Word::Low)) && words.contains(&Some(Word::High))
    };
    let keep: Vec<bool> = (pairs.iter())
        .map(|p| p.word.is_none() || both_words(p))
        .collect();
    let mut pairs: Vec<Pair> = (pairs.into_iter().zip(keep))
        .filter_map(|(p, keep)| keep.then_some(p))
        .collect();
    let position: HashMap<*const Expr, usize> = (lhs_order.iter().enumerate())
        .map(|(k, e)| (Rc::as_ptr(e), k))
        .collect();
    pairs.sort_by_key(|p| position[&Rc::as_ptr(&p.lhs)]);
    pairs
}

/// A subterm's values as they are and, for 64-bit integer lanes, each word of them as 32-bit
/// lanes of either signedness.
fn word_views(whole: Vec<Value>) -> Vec<(Option<Word>, Vec<Value>)> {
    let ty = whole[0].ty;
    let mut views = vec![];
    if matches!(ty.elem, Elem::U64 | Elem::I64) {
        for word in [Word::Low, Word::High] {
            for elem in [Elem::U32, Elem::I32] {
                let view = (whole.iter())
                    .map(|v| {
                        Value::new(
                            ty.with_elem(elem),
                            v.lanes.iter().map(|&b| word.of(b)).collect(),
                        )
                    })
                    .collect();
                views.push((Some(word), view));
            }
        }
    }
    views.push((None, whole));
    views
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
    let start = spent_ms();
    // Each distinct subterm once: cuts replace subterms by address, and a selection's tree
    // repeats what its instructions share (HVX's low word of a product, read by a sum and by
    // its carry).
    let (lhs, rhs) = (Rc::new(lhs.clone()), Rc::new(rhs.clone()));
    let mut sharing = Sharing::default();
    let (lhs, rhs) = (sharing.shared(&lhs), sharing.shared(&rhs));
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
    let mut proven_words: HashMap<_, Rc<Expr>> = HashMap::new();
    let candidates = candidates(&lhs, &rhs);
    let mut last_key = None;
    for (k, pair) in candidates.iter().enumerate() {
        if spent_ms() - start > 4.0 * f64::from(timeout_ms) {
            break;
        }
        let key = Rc::as_ptr(&pair.lhs);
        last_key = Some((key, pair.lhs.ty));
        'pair: {
            let lanes = pair.offset..pair.offset + pair.rhs.ty.lanes;
            let same_lanes =
                |at: u32, v: &Rc<Expr>| at == pair.offset && v.ty.lanes == lanes.len() as u32;
            let these = pieces.entry(key).or_default();
            let overlapping = these.iter().any(|(at, v)| {
                !same_lanes(*at, v) && *at < lanes.end && lanes.start < at + v.ty.lanes
            });
            if overlapping {
                break 'pair;
            }
            // A word proven at a subterm of the right tree already: this one is proven equal to
            // that (mostly its reinterpretation), not to the left tree's product again.
            let shown = proven_words.get(&(key, pair.offset, lanes.len(), pair.word));
            let l = match shown {
                Some(earlier) if earlier.ty == pair.rhs.ty => cut(earlier, &right),
                Some(earlier) => build(Op::Bitcast(pair.rhs.ty.elem), vec![cut(earlier, &right)]),
                None => pair.lanes_of(cut_below(&pair.lhs, &left)),
            };
            let r = cut(&pair.rhs, &right);
            // A word of 64-bit lanes computed by words is the crux of such a selection (the high
            // word of a product, which z3 meets whole where no cut is made), and gets the whole
            // query's time (pairs get a 16th of it): z3 decides HVX's high word of unsigned
            // products of words by one attempt with a part of its time, in 2-3 s alone, and not
            // within a part of a pair's. So does a word the input cuts from a 64-bit product
            // itself (a division's multiply-high).
            let crux =
                (pair.word.is_some() || a_word_of_a_wide_product(&pair.lhs)) && shown.is_none();
            let budget = match crux {
                true => 16 * timeout_ms,
                false => timeout_ms,
            };
            // A word's proof in a context of its own: after the whole query's attempts z3 took
            // 48 s and gave up on HVX's high word of unsigned products of words that it proves in
            // 2-3 s alone.
            let ok = match crux {
                true => in_a_fresh_context(|| equal(&l, &r, budget))?,
                false => equal(&l, &r, budget)?,
            };
            if !ok {
                break 'pair;
            }
            if pair.word.is_some() {
                (proven_words.entry((key, pair.offset, lanes.len(), pair.word)))
                    .or_insert_with(|| pair.rhs.clone());
            }
            let v = match these.iter().find(|(at, v)| same_lanes(*at, v)) {
                Some((_, v)) => v.clone(),
                None => {
                    let ty = pair.lhs.ty.with_lanes(pair.rhs.ty.lanes);
                    let v = Rc::new(Expr::var(&cut_name(k, &taken), ty));
                    these.push((pair.offset, v.clone()));
                    these.sort_by_key(|(at, _)| *at);
                    v
                }
            };
            waiting
                .entry(key)
                .or_default()
                .push((Rc::as_ptr(&pair.rhs), pair.word_of(v)));
        }
        let next_key = candidates.get(k + 1).map(|next| Rc::as_ptr(&next.lhs));
        if next_key != Some(key) {
            last_key = None;
            cut_where_whole(
                key,
                pair.lhs.ty,
                &pieces,
                &mut waiting,
                &mut left,
                &mut right,
            );
        }
    }
    if let Some((key, ty)) = last_key {
        cut_where_whole(key, ty, &pieces, &mut waiting, &mut left, &mut right);
    }
    if left.is_empty() {
        return Ok(false);
    }
    let (lhs, rhs) = (cut(&lhs, &left), cut(&rhs, &right));
    equal(&lhs, &rhs, timeout_ms)
}

/// Once a subterm of the left tree (`key`, of type `ty`) has every lane cut (all its pairs
/// proven, each pair's proof not yet seeing the subterm's own cut), it stands for the
/// concatenation of its variables, and the subterms of the right tree proven equal to its lanes
/// or words for those of the variables.
fn cut_where_whole(
    key: *const Expr,
    ty: VecType,
    pieces: &HashMap<*const Expr, Vec<(u32, Rc<Expr>)>>,
    waiting: &mut HashMap<*const Expr, Vec<(*const Expr, Rc<Expr>)>>,
    left: &mut HashMap<*const Expr, Rc<Expr>>,
    right: &mut HashMap<*const Expr, Rc<Expr>>,
) {
    let whole = (pieces.get(&key)).and_then(|these| joined(these));
    if let Some(whole) = whole.filter(|w| w.ty == ty) {
        left.insert(key, whole);
        right.extend(waiting.remove(&key).unwrap_or_default());
    }
}

/// The name of the variable of candidate `k`'s cut: `cut%k`, or where the sides already have
/// a variable of that name (the cut of a proof this one decides a pair of, of any type), the
/// first of `cut%k.1`, `cut%k.2`, ... they do not.
/// Whether `e` cuts 32-bit lanes from a product of 64-bit lanes shifted right (the high word of
/// a multiply-high).
fn a_word_of_a_wide_product(e: &Expr) -> bool {
    let [shifted] = &e.args[..] else {
        return false;
    };
    matches!(e.op, Op::Cast(_) | Op::SatCast(_))
        && e.ty.elem.bits() == 32
        && shifted.op == Op::Shr
        && shifted.ty.elem.bits() == 64
        && shifted.args[0].op == Op::Mul
}

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

/// Subterms made one node by [`Sharing::shared`]: by operator, type and (shared) operands,
/// and by the address of each node already seen.
#[derive(Default)]
struct Sharing {
    by_structure: HashMap<(Op, VecType, Vec<*const Expr>), Rc<Expr>>,
    by_address: HashMap<*const Expr, Rc<Expr>>,
}

impl Sharing {
    /// `tree` with structurally equal subterms one node; each node of `tree` visited once
    /// (a selection's tree shares what its instructions share, and walked as a tree it is
    /// exponential: HVX's psadbw, 19,000 distinct nodes, took minutes).
    fn shared(&mut self, tree: &Rc<Expr>) -> Rc<Expr> {
        if let Some(node) = self.by_address.get(&Rc::as_ptr(tree)) {
            return Rc::clone(node);
        }
        let args: Vec<Rc<Expr>> = tree.args.iter().map(|a| self.shared(a)).collect();
        let key = (
            tree.op.clone(),
            tree.ty,
            args.iter().map(Rc::as_ptr).collect(),
        );
        let node = self.by_structure.entry(key).or_insert_with(|| {
            Rc::new(Expr {
                op: tree.op.clone(),
                ty: tree.ty,
                args,
            })
        });
        let node = Rc::clone(node);
        self.by_address.insert(Rc::as_ptr(tree), Rc::clone(&node));
        node
    }
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
