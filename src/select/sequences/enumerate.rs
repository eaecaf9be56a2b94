//! The bottom-up enumeration of a search: values made from the operands and the goal's
//! constants by one component at a time, depth by depth, told apart by their bytes on the
//! tests, within a fixed number of candidate evaluations.

use super::components::Component;
use super::MAX_STEPS;
use crate::ir::{Elem, Expr, VecType};
use crate::semantics::{eval, Env, Value};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// Candidate evaluations per attempt.
const EVALUATIONS: usize = 60_000;
/// Operand tuples looked at (and passed over as too dear) per evaluation allowed.
const VISITS_PER_EVALUATION: usize = 16;
/// How a value of the search is made.
#[derive(Clone)]
pub(super) enum From {
    Operand(usize),
    Const(VecType, i64),
    Step(usize, Vec<usize>),
}

pub(super) struct Found {
    /// Its bytes on each test.
    pub(super) bytes: Vec<Vec<u8>>,
    pub(super) ty: VecType,
    pub(super) cost: f64,
    pub(super) steps: usize,
    pub(super) from: From,
}
/// The goal's bytes on each test: as they are, or for bool lanes one flag per lane.
fn goal_bytes(goal: &Expr, tests: &[Env]) -> Option<Vec<Vec<u8>>> {
    tests
        .iter()
        .map(|env| eval(goal, env).ok().map(|v| v.to_bytes()))
        .collect()
}

/// Whether `v` holds the goal: its bytes, in its low bytes (in whole lanes of `v`), or for
/// bool lanes a lane of `v` per goal lane, nonzero where the goal's is true.
fn holds(v: &Found, goal: &VecType, want: &[Vec<u8>]) -> bool {
    let width = v.bytes[0].len();
    if goal.elem == Elem::Bool {
        let lanes = goal.lanes as usize;
        if lanes == 0 || !width.is_multiple_of(lanes) || !(width / lanes).is_power_of_two() {
            return false;
        }
        let size = width / lanes;
        return v.bytes.iter().zip(want).all(|(b, w)| {
            b.chunks(size)
                .zip(w)
                .all(|(lane, &flag)| lane.iter().any(|&x| x != 0) == (flag != 0))
        });
    }
    let size = want[0].len();
    let lane = (v.ty.elem.bits() / 8).max(1) as usize;
    width >= size
        && size.is_multiple_of(lane)
        && v.bytes.iter().zip(want).all(|(b, w)| b[..size] == w[..])
}

/// How many of the goal's lanes `v` holds in its low lanes, summed over the tests: among
/// values of one cost, those nearer the goal (one of a minimum's operands in each lane) are
/// tried first.
fn agrees(v: &Found, goal: &VecType, want: &[Vec<u8>]) -> usize {
    let size = want[0].len();
    let lane = (goal.elem.bits() / 8) as usize;
    if goal.elem == Elem::Bool || lane == 0 || v.bytes[0].len() < size {
        return 0;
    }
    v.bytes
        .iter()
        .zip(want)
        .map(|(b, w)| {
            (0..size / lane)
                .filter(|l| b[l * lane..(l + 1) * lane] == w[l * lane..(l + 1) * lane])
                .count()
        })
        .sum()
}

/// The bottom-up enumeration on `tests`: the values made and the cheapest holding the goal.
pub(super) fn enumerate(
    components: &[&Component],
    goal: &Expr,
    tests: &[Env],
    below: f64,
    register_bits: u32,
) -> Option<(Vec<Found>, usize)> {
    let want = goal_bytes(goal, tests)?;
    let mut values: Vec<Found> = Vec::new();
    for (k, (name, ty)) in goal.vars().iter().enumerate() {
        let bytes = tests.iter().map(|env| env[name].to_bytes()).collect();
        values.push(Found {
            bytes,
            ty: *ty,
            cost: 0.0,
            steps: 0,
            from: From::Operand(k),
        });
    }
    // Operands narrower than a register also as its low lanes, the rest zero.
    for k in 0..values.len() {
        let ty = values[k].ty;
        let lanes = register_bits / ty.elem.bits().max(1);
        if ty.bits() < register_bits && register_bits.is_multiple_of(ty.elem.bits()) {
            let bytes = values[k]
                .bytes
                .iter()
                .map(|b| {
                    let mut b = b.clone();
                    b.resize((register_bits / 8) as usize, 0);
                    b
                })
                .collect();
            values.push(Found {
                bytes,
                ty: ty.with_lanes(lanes),
                cost: 0.0,
                steps: 0,
                from: From::Operand(k),
            });
        }
    }
    let mut constants = BTreeSet::new();
    goal.walk(&mut |e| {
        if let crate::ir::Op::Const(lanes) = &e.op {
            if lanes.len() == 1 && e.ty.elem.is_int() {
                let v = crate::semantics::value::as_int(e.ty.elem, lanes[0]) as i64;
                constants.insert((e.ty, v));
            }
        }
    });
    for (ty, v) in constants {
        let value = Value::new(ty, vec![crate::select::term::lane_bits(ty.elem, v)]);
        let splat = Value::new(ty, vec![value.lanes[0]; ty.lanes as usize]);
        values.push(Found {
            bytes: vec![splat.to_bytes(); tests.len()],
            ty,
            cost: 0.0,
            steps: 0,
            from: From::Const(ty, v),
        });
    }
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        seen.entry(v.bytes.concat()).or_insert(i);
    }
    let mut best = values.iter().position(|v| holds(v, &goal.ty, &want));
    let mut budget = EVALUATIONS;
    let mut start = 0;
    for depth in 1..=MAX_STEPS {
        if best.is_some() || budget == 0 {
            break;
        }
        let end = values.len();
        let agreement: Vec<usize> = values.iter().map(|v| agrees(v, &goal.ty, &want)).collect();
        let mut candidates = Candidates::new(&values, &agreement);
        let mut cursors: Vec<Tuples> = components
            .iter()
            .map(|comp| Tuples::new(comp, &mut candidates, start, end))
            .collect();
        // The level's share of the budget, spread over the components that still have tuples
        // until it is spent or every one is done.
        let mut evaluations = budget / (MAX_STEPS + 1 - depth);
        let mut visits = evaluations * VISITS_PER_EVALUATION;
        loop {
            let active: Vec<usize> = (0..cursors.len()).filter(|&c| !cursors[c].done).collect();
            if active.is_empty() || evaluations == 0 || visits == 0 {
                break;
            }
            let share = (evaluations / active.len()).max(1);
            for c in active {
                let comp = components[c];
                let (mut spent, mut visited) = (0, 0);
                while spent < share && visited < share * VISITS_PER_EVALUATION {
                    let Some(args) = cursors[c].next() else {
                        break;
                    };
                    visited += 1;
                    let cost = comp.cost + args.iter().map(|&a| values[a].cost).sum::<f64>();
                    let steps = 1 + args.iter().map(|&a| values[a].steps).sum::<usize>();
                    let bound = best.map_or(below, |b| values[b].cost.min(below));
                    if cost >= bound || steps > MAX_STEPS {
                        continue;
                    }
                    spent += 1;
                    let Some(bytes) = apply(comp, &args, &values, tests) else {
                        continue;
                    };
                    let key = bytes.concat();
                    if seen.get(&key).is_some_and(|&i| values[i].cost <= cost) {
                        continue;
                    }
                    seen.insert(key, values.len());
                    values.push(Found {
                        bytes,
                        ty: comp.result,
                        cost,
                        steps,
                        from: From::Step(c, args),
                    });
                    if holds(&values[values.len() - 1], &goal.ty, &want) {
                        best = Some(values.len() - 1);
                    }
                }
                evaluations = evaluations.saturating_sub(spent);
                visits = visits.saturating_sub(visited);
                budget = budget.saturating_sub(spent);
            }
        }
        start = end;
    }
    best.map(|b| (values, b))
}

/// The values an operand can take, in order of cost, the more of the goal's lanes they hold
/// (`agreement`) the earlier among equal costs: sorted once per depth, each list of one
/// operand width and range of indices filtered from that order once and shared.
struct Candidates<'v> {
    values: &'v [Found],
    order: Vec<usize>,
    lists: HashMap<(usize, usize, usize), Rc<Vec<usize>>>,
}

impl<'v> Candidates<'v> {
    fn new(values: &'v [Found], agreement: &[usize]) -> Candidates<'v> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| {
            values[a]
                .cost
                .total_cmp(&values[b].cost)
                .then(agreement[b].cmp(&agreement[a]))
                .then(a.cmp(&b))
        });
        Candidates {
            values,
            order,
            lists: HashMap::new(),
        }
    }

    /// The values of `range` that fit an operand of `bytes`, in order.
    fn list(&mut self, bytes: usize, range: std::ops::Range<usize>) -> Rc<Vec<usize>> {
        let (values, order) = (self.values, &self.order);
        self.lists
            .entry((bytes, range.start, range.end))
            .or_insert_with(|| {
                Rc::new(
                    order
                        .iter()
                        .copied()
                        .filter(|i| range.contains(i) && fits(&values[*i], bytes))
                        .collect(),
                )
            })
            .clone()
    }
}

/// The operand tuples of one component at one depth, each once: those with an operand made
/// at the last depth, the first such at position `p` (operands before it made earlier). They
/// come in shells, cheapest first: shell `m` holds the tuples whose largest index into the
/// operands' candidate lists is `m`, the position of its first such index being `k`.
struct Tuples {
    /// For each `p`, each operand's candidates.
    lists: Vec<Vec<Rc<Vec<usize>>>>,
    m: usize,
    p: usize,
    k: usize,
    at: Vec<usize>,
    fresh: bool,
    done: bool,
}

impl Tuples {
    /// Each operand's candidates, in the order of [`Candidates`].
    fn new(comp: &Component, candidates: &mut Candidates, start: usize, end: usize) -> Tuples {
        let arity = comp.vectors.len();
        let lists: Vec<Vec<Rc<Vec<usize>>>> = (0..arity)
            .map(|p| {
                (0..arity)
                    .map(|k| {
                        let range = match k.cmp(&p) {
                            std::cmp::Ordering::Less => 0..start,
                            std::cmp::Ordering::Equal => start..end,
                            std::cmp::Ordering::Greater => 0..end,
                        };
                        candidates.list((comp.vectors[k].1.bits() / 8) as usize, range)
                    })
                    .collect()
            })
            .collect();
        let longest = lists.iter().flatten().map(|l| l.len()).max().unwrap_or(0);
        Tuples {
            lists,
            m: 0,
            p: 0,
            k: 0,
            at: vec![0; arity],
            fresh: true,
            done: arity == 0 || longest == 0,
        }
    }

    /// The range of indices position `j` takes in the current shell.
    fn range(&self, j: usize) -> std::ops::Range<usize> {
        let len = self.lists[self.p][j].len();
        match j.cmp(&self.k) {
            std::cmp::Ordering::Less => 0..self.m.min(len),
            std::cmp::Ordering::Equal if self.m < len => self.m..self.m + 1,
            std::cmp::Ordering::Equal => 0..0,
            std::cmp::Ordering::Greater => 0..(self.m + 1).min(len),
        }
    }

    /// Starts the odometer of the current (m, p, k), or moves to the next one with tuples.
    fn start(&mut self) -> bool {
        let arity = self.at.len();
        let longest = self
            .lists
            .iter()
            .flatten()
            .map(|l| l.len())
            .max()
            .unwrap_or(0);
        while self.m < longest {
            if (0..arity).all(|j| !self.range(j).is_empty()) {
                for j in 0..arity {
                    self.at[j] = self.range(j).start;
                }
                return true;
            }
            self.k += 1;
            if self.k == arity {
                self.k = 0;
                self.p += 1;
                if self.p == arity {
                    self.p = 0;
                    self.m += 1;
                }
            }
        }
        false
    }

    fn next(&mut self) -> Option<Vec<usize>> {
        if self.done {
            return None;
        }
        if self.fresh {
            self.fresh = false;
            if !self.start() {
                self.done = true;
                return None;
            }
        }
        let args = self
            .at
            .iter()
            .enumerate()
            .map(|(j, &i)| self.lists[self.p][j][i])
            .collect();
        // The odometer's last digit first; past its end, the next (m, p, k).
        let mut j = self.at.len();
        loop {
            if j == 0 {
                self.k += 1;
                if self.k == self.at.len() {
                    self.k = 0;
                    self.p += 1;
                    if self.p == self.at.len() {
                        self.p = 0;
                        self.m += 1;
                    }
                }
                self.done = !self.start();
                break;
            }
            j -= 1;
            self.at[j] += 1;
            if self.at[j] < self.range(j).end {
                break;
            }
            self.at[j] = self.range(j).start;
        }
        Some(args)
    }
}

/// Whether `v` can be an operand of `bytes` bytes: as it is, or its low lanes.
fn fits(v: &Found, bytes: usize) -> bool {
    let width = v.bytes[0].len();
    let lane = (v.ty.elem.bits() / 8).max(1) as usize;
    width == bytes || (width > bytes && bytes.is_multiple_of(lane))
}

/// `comp` on the values `args`, on each test.
fn apply(
    comp: &Component,
    args: &[usize],
    values: &[Found],
    tests: &[Env],
) -> Option<Vec<Vec<u8>>> {
    (0..tests.len())
        .map(|t| {
            let env: Env = comp
                .vectors
                .iter()
                .zip(args)
                .map(|((name, ty), &a)| {
                    let bytes = &values[a].bytes[t][..(ty.bits() / 8) as usize];
                    (name.clone(), Value::from_bytes(*ty, bytes))
                })
                .collect();
            eval(&comp.semantics, &env).ok().map(|v| v.to_bytes())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn found(width: usize) -> Found {
        Found {
            bytes: vec![vec![0; width]],
            ty: VecType::new(width as u32, Elem::U8),
            cost: 0.0,
            steps: 0,
            from: From::Operand(0),
        }
    }

    /// A component of four u8 lanes over `operands` that returns its first.
    fn first_operand(operands: &[&str]) -> Component {
        let ty = VecType::new(4, Elem::U8);
        Component {
            index: 0,
            imms: vec![],
            semantics: Rc::new(Expr::var("a", ty)),
            vectors: operands.iter().map(|n| (n.to_string(), ty)).collect(),
            result: ty,
            cost: 1.0,
            ops: BTreeSet::new(),
            typed_ops: BTreeSet::new(),
        }
    }

    /// Of five values of the operands' width, two made at the last depth, and one too narrow
    /// to be an operand: every tuple of three with one of the two comes once, shell by shell
    /// (the cheapest first), and none other.
    #[test]
    fn each_operand_tuple_with_a_value_of_the_last_depth_comes_once() {
        let comp = first_operand(&["a", "b", "c"]);
        let mut values: Vec<Found> = (0..3).map(|_| found(4)).collect();
        values.push(found(2));
        values.extend((0..2).map(|_| found(4)));
        let mut tuples = Tuples::new(&comp, &mut Candidates::new(&values, &[0; 6]), 3, 6);
        let mut all = Vec::new();
        while let Some(args) = tuples.next() {
            all.push(args);
        }
        // The first shell: the first value of the last depth with the cheapest others.
        assert_eq!(&all[..3], &[vec![4, 0, 0], vec![0, 4, 0], vec![0, 0, 4]]);
        assert!(all.iter().all(|t| t.contains(&4) || t.contains(&5)));
        assert!(all.iter().all(|t| !t.contains(&3)));
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!((count, all.len()), (5 * 5 * 5 - 3 * 3 * 3, 98));
    }

    /// Among values of one cost, the one holding more of the goal's lanes comes first.
    #[test]
    fn values_nearer_the_goal_are_tried_first() {
        let ty = VecType::new(4, Elem::U8);
        let comp = first_operand(&["a"]);
        let want = vec![vec![1, 2, 3, 4]];
        let mut values: Vec<Found> = (0..3).map(|_| found(4)).collect();
        values[2].bytes = vec![vec![1, 2, 9, 9]];
        let agreement: Vec<usize> = values.iter().map(|v| agrees(v, &ty, &want)).collect();
        assert_eq!(agreement, [0, 0, 2]);
        let mut tuples = Tuples::new(&comp, &mut Candidates::new(&values, &agreement), 0, 3);
        assert_eq!(tuples.next(), Some(vec![2]));
        assert_eq!(tuples.next(), Some(vec![0]));
    }
}
