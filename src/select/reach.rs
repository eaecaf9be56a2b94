//! Which rewrites of a program can apply to its input: those whose left side needs only node
//! kinds the input holds or that rewrites reached before make. Lowerings (into instructions,
//! and the rewrites sound by construction that lead to them) are followed to a fixpoint; the
//! stored rules (lift, simplify and lower), whose identities chain without end, for
//! [`IR_ROUNDS`] rounds (simplify rules for one), each followed by lowerings to a fixpoint.
//! Node kinds are operator names for a first untyped cut over the rules, and typed heads for
//! the rewrites of the program.

use super::term::{Rewrite, Ruleset};
use crate::ir::VecType;
use rustc_hash::FxHashMap;
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// Rounds of stored lift and lower rules followed from the input (simplify rules, the most
/// numerous, in the first round only). Lifting often takes two rules (`(x + 8) / 16` to a
/// rounding shift, then its saturating narrow); deeper chains make the e-graph larger without
/// changing what the compile tests select.
pub const IR_ROUNDS: usize = 2;

/// The typed heads of the e-graph a rewrite can match: an operator at a type.
pub type Heads = BTreeSet<(&'static str, VecType)>;

/// Operator names, whatever their type: the untyped view of what a rewrite needs and makes.
pub type Names = BTreeSet<&'static str>;

/// What one rewrite needs before it can match and what its right side makes.
pub struct Step<'s, N> {
    /// A lowering (followed to a fixpoint) rather than a stored rule.
    pub lowering: bool,
    /// A simplify rule, followed in the first round only.
    pub simplify: bool,
    pub needs: &'s BTreeSet<N>,
    pub makes: &'s BTreeSet<N>,
}

/// A rewrite with the operators its sides name, typed and untyped, read off its terms once: a
/// program holds thousands of rewrites, most of them the same from one input to the next
/// (lowerings, stored rules at a type), which are shared rather than copied or walked again.
pub struct Headed {
    pub rewrite: Rc<Rewrite>,
    /// The typed heads of its left side.
    pub needs: Heads,
    /// The typed heads of its right side.
    pub makes: Heads,
    /// The operators of its left side.
    pub needs_names: Names,
    /// The operators of its right side.
    pub makes_names: Names,
    /// The types its right side holds.
    pub makes_types: BTreeSet<VecType>,
    /// A hash of its sides and conditions, to find repeats.
    hash: u64,
}

impl Headed {
    /// The rewrite with its heads, shared.
    pub fn new(rewrite: Rewrite) -> Rc<Headed> {
        let (mut needs, mut makes) = (Heads::new(), Heads::new());
        rewrite
            .lhs
            .typed_heads(&mut |n, t| _ = needs.insert((n, t)));
        rewrite
            .rhs
            .typed_heads(&mut |n, t| _ = makes.insert((n, t)));
        let names = |heads: &Heads| heads.iter().map(|(n, _)| *n).collect();
        let mut makes_types = BTreeSet::new();
        rewrite.rhs.types(&mut makes_types);
        let mut hasher = rustc_hash::FxHasher::default();
        (&rewrite.lhs, &rewrite.rhs, &rewrite.conditions).hash(&mut hasher);
        Rc::new(Headed {
            needs_names: names(&needs),
            makes_names: names(&makes),
            needs,
            makes,
            makes_types,
            hash: hasher.finish(),
            rewrite: Rc::new(rewrite),
        })
    }

    /// Whether the two are the same rewrite (whatever they were made from).
    fn same(&self, other: &Headed) -> bool {
        let (a, b) = (&self.rewrite, &other.rewrite);
        self.hash == other.hash
            && (Rc::ptr_eq(a, b)
                || a.lhs == b.lhs && a.rhs == b.rhs && a.conditions == b.conditions)
    }
}

/// Which steps can apply, starting from `nodes` (which ends holding every kind reached);
/// `close` adds the kinds the e-graph derives by itself from those it holds.
///
/// A worklist: each step counts the kinds it still needs, and a kind's arrival counts down
/// the steps that need it, so every need is looked at once rather than once per pass.
pub fn reach<N: Ord + Hash + Clone>(
    steps: &[Step<N>],
    nodes: &mut BTreeSet<N>,
    close: impl Fn(&mut BTreeSet<N>),
) -> Vec<bool> {
    let mut walk = Walk::new(steps, nodes);
    walk.lower(nodes, &close);
    for round in 0..IR_ROUNDS {
        // The rules whose needs the kinds at the start of the round meet.
        let ready: Vec<usize> = (0..steps.len())
            .filter(|&i| {
                let s = &steps[i];
                !s.lowering && (round == 0 || !s.simplify) && walk.unmet[i] == 0
            })
            .collect();
        for i in ready {
            walk.reached[i] = true;
            for kind in steps[i].makes {
                walk.add(kind, nodes);
            }
        }
        walk.lower(nodes, &close);
    }
    walk.reached
}

/// A program's rewrites that can apply to its input (whose typed heads are `nodes`), without
/// repeats: the first `from_rules` are stored rules, followed for [`IR_ROUNDS`] rounds (simplify
/// rules for one); the rest (instruction lowerings and rewrites sound by construction) to a fixpoint.
pub fn live(
    rewrites: &[Rc<Headed>],
    from_rules: usize,
    mut nodes: Heads,
    lane_layout: bool,
) -> Vec<Rc<Rewrite>> {
    let steps: Vec<Step<(&'static str, VecType)>> = rewrites
        .iter()
        .enumerate()
        .map(|(i, h)| Step {
            lowering: i >= from_rules,
            simplify: h.rewrite.ruleset == Ruleset::Simplify,
            needs: &h.needs,
            makes: &h.makes,
        })
        .collect();
    let live = reach(&steps, &mut nodes, |nodes| {
        // A cast of a constant folds to a constant of the cast's type.
        let folded: Vec<VecType> = nodes
            .iter()
            .filter(|(n, _)| *n == "Cast")
            .map(|(_, t)| *t)
            .collect();
        nodes.extend(folded.into_iter().map(|t| ("Const", t)));
        if lane_layout {
            // The even and odd lanes of a node are the same operator at half the lanes.
            let halved: Vec<(&'static str, VecType)> = nodes
                .iter()
                .filter(|(_, t)| t.lanes.is_multiple_of(2))
                .map(|(n, t)| (*n, t.with_lanes(t.lanes / 2)))
                .collect();
            nodes.extend(halved);
        }
    });
    // The first of equal rewrites is kept (found by their hashes, kept since they were made).
    let mut seen: FxHashMap<u64, Vec<&Headed>> = FxHashMap::default();
    rewrites
        .iter()
        .zip(live)
        .filter(|(h, live)| {
            let r = &h.rewrite;
            if !*live || r.lhs == r.rhs {
                return false;
            }
            let same_hash = seen.entry(h.hash).or_default();
            let new = !same_hash.iter().any(|k| k.same(h));
            if new {
                same_hash.push(h);
            }
            new
        })
        .map(|(h, _)| h.rewrite.clone())
        .collect()
}

/// The state of [`reach`]: which steps need each kind, how many kinds each still lacks, and
/// the lowerings whose needs are met but whose kinds are not yet added.
struct Walk<'s, N> {
    steps: &'s [Step<'s, N>],
    needed_by: HashMap<&'s N, Vec<usize>>,
    unmet: Vec<usize>,
    reached: Vec<bool>,
    ready: Vec<usize>,
}

impl<'s, N: Ord + Hash + Clone> Walk<'s, N> {
    fn new(steps: &'s [Step<'s, N>], nodes: &BTreeSet<N>) -> Walk<'s, N> {
        let mut needed_by: HashMap<&N, Vec<usize>> = HashMap::new();
        let mut unmet = vec![0; steps.len()];
        let mut ready = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            for kind in s.needs {
                if !nodes.contains(kind) {
                    needed_by.entry(kind).or_default().push(i);
                    unmet[i] += 1;
                }
            }
            if unmet[i] == 0 && s.lowering {
                ready.push(i);
            }
        }
        Walk {
            steps,
            needed_by,
            unmet,
            reached: vec![false; steps.len()],
            ready,
        }
    }

    /// Adds a kind, counting down the steps that need it.
    fn add(&mut self, kind: &N, nodes: &mut BTreeSet<N>) {
        if !nodes.insert(kind.clone()) {
            return;
        }
        for &i in self.needed_by.get(kind).into_iter().flatten() {
            self.unmet[i] -= 1;
            if self.unmet[i] == 0 && self.steps[i].lowering {
                self.ready.push(i);
            }
        }
    }

    /// Follows the lowerings, and what `close` derives, to a fixpoint.
    fn lower(&mut self, nodes: &mut BTreeSet<N>, close: &impl Fn(&mut BTreeSet<N>)) {
        loop {
            while let Some(i) = self.ready.pop() {
                self.reached[i] = true;
                for kind in self.steps[i].makes {
                    self.add(kind, nodes);
                }
            }
            let mut closed = nodes.clone();
            close(&mut closed);
            let derived: Vec<N> = closed.difference(nodes).cloned().collect();
            if derived.is_empty() {
                return;
            }
            for kind in &derived {
                self.add(kind, nodes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::term::{op, Term};
    use super::*;
    use crate::ir::Elem;

    const LOWERING: u8 = 0;
    const RULE: u8 = 1;
    const SIMPLIFY: u8 = 2;

    type Sets = (u8, BTreeSet<&'static str>, BTreeSet<&'static str>);

    fn sets(kind: u8, needs: &[&'static str], makes: &[&'static str]) -> Sets {
        let set = |names: &[&'static str]| names.iter().copied().collect();
        (kind, set(needs), set(makes))
    }

    fn step((kind, needs, makes): &Sets) -> Step<'_, &'static str> {
        Step {
            lowering: *kind == LOWERING,
            simplify: *kind == SIMPLIFY,
            needs,
            makes,
        }
    }

    #[test]
    fn lowerings_chain_to_a_fixpoint_rules_for_two_rounds_and_simplify_rules_for_one() {
        assert_eq!(IR_ROUNDS, 2);
        let sets = [
            sets(LOWERING, &["Add"], &["Shl"]),
            sets(LOWERING, &["Shl"], &["Sub"]),
            sets(RULE, &["Sub"], &["Neg"]),
            sets(RULE, &["Neg"], &["Not"]),
            sets(RULE, &["Not"], &["Xor"]),
            sets(SIMPLIFY, &["Neg"], &["Or"]),
            sets(LOWERING, &["Mul"], &["And"]),
            sets(SIMPLIFY, &["Add"], &["Min"]),
        ];
        let steps: Vec<_> = sets.iter().map(step).collect();
        let mut nodes: BTreeSet<&str> = ["Add"].into_iter().collect();
        let reached = reach(&steps, &mut nodes, |_| {});
        assert_eq!(reached, [true, true, true, true, false, false, false, true]);
        assert_eq!(
            nodes.into_iter().collect::<Vec<_>>(),
            ["Add", "Min", "Neg", "Not", "Shl", "Sub"]
        );
    }

    fn lowering(source: &str, from: &'static str, to: &'static str) -> Rc<Headed> {
        let ty = VecType::new(16, Elem::U8);
        let op = |name, x| op(name, ty, vec![x]);
        Headed::new(Rewrite {
            ruleset: Ruleset::Lower,
            source: source.to_string(),
            lhs: op(from, Term::Slot("x")),
            rhs: op(to, Term::Slot("x")),
            conditions: vec![],
        })
    }

    #[test]
    fn live_keeps_the_first_of_equal_rewrites_and_only_those_the_input_reaches() {
        let ty = VecType::new(16, Elem::U8);
        let rewrites = [
            lowering("first", "Not", "Neg"),
            lowering("same again", "Not", "Neg"),
            lowering("from what Not makes", "Neg", "Abs"),
            lowering("unreached", "Popcount", "Clz"),
        ];
        assert_eq!(rewrites[0].needs_names, ["Not"].into_iter().collect());
        assert_eq!(rewrites[0].makes, [("Neg", ty)].into_iter().collect());
        let nodes: Heads = [("Not", ty)].into_iter().collect();
        let kept: Vec<String> = live(&rewrites, 0, nodes, false)
            .iter()
            .map(|r| r.source.clone())
            .collect();
        assert_eq!(kept, ["first", "from what Not makes"]);
    }
}
