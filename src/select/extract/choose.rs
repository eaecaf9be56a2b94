//! The top-down choice of one root's term with shared sub-terms counted once (see the
//! parent module): every e-class takes the e-node whose cost added to what is already chosen
//! is lowest, looking a few levels ahead, per operand or with an e-class two operands reach
//! counted once ([`LookAhead`]).

use super::Graph;
use egglog::{EGraph, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// How many levels of e-classes not yet chosen an e-node's added cost looks through.
const LOOK_AHEAD: usize = 3;

/// The most views [`Graph::under_views`] takes off.
const MAX_VIEWS: usize = 16;

/// The most e-classes one root's choice may visit (dead ends undone included) before it gives
/// up and the tree extraction stands.
const MAX_VISITS: usize = 100_000;

impl Graph {
    /// The term of `root` chosen top-down with shared sub-terms counted once, as egglog
    /// prints terms, with its cost as a DAG; `None` where no term is found.
    pub fn extract(
        &self,
        egraph: &EGraph,
        root: Value,
        look_ahead: LookAhead,
    ) -> Option<(u64, String)> {
        let mut chooser = Chooser {
            graph: self,
            chosen: HashMap::new(),
            open: HashSet::new(),
            memo: RefCell::new(HashMap::new()),
            visits: 0,
            look_ahead,
        };
        let root = *self.index.get(&root)?;
        chooser.choose(root)?;
        let cost = chooser.chosen.values().map(|&n| self.nodes[n].cost).sum();
        Some((cost, self.print(egraph, root, &|c| chooser.chosen[&c])))
    }

    /// The e-class whose cheapest tree `class`'s is with views of one operand taken off
    /// (reinterpretations, lane ranges): the pair instruction under both halves' lane views.
    fn under_views(&self, class: usize) -> usize {
        let mut class = class;
        // The cheapest trees have no cycles of e-nodes that cost nothing; the bound is a guard.
        for _ in 0..MAX_VIEWS {
            let Some(node) = self.nodes.get(self.best[class]) else {
                break;
            };
            let mut operands = node.classes();
            match (operands.next(), operands.next()) {
                (Some(operand), None) if node.is_view() => class = operand,
                _ => break,
            }
        }
        class
    }
}

/// The top-down choice for one root.
struct Chooser<'g> {
    graph: &'g Graph,
    /// The e-node chosen for each e-class chosen so far.
    chosen: HashMap<usize, usize>,
    /// E-classes being chosen (ancestors of the current one): choosing them below would
    /// make a cycle.
    open: HashSet<usize>,
    /// What choosing an e-class adds, by look-ahead depth, while `chosen` and `open` stay as
    /// they are.
    memo: Memo,
    /// E-classes visited so far, against [`MAX_VISITS`].
    visits: usize,
    /// How the look-ahead counts an e-class two operands reach.
    look_ahead: LookAhead,
}

impl Chooser<'_> {
    fn choose(&mut self, class: usize) -> Option<()> {
        if self.chosen.contains_key(&class) {
            return Some(());
        }
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return None;
        }
        self.open.insert(class);
        self.memo.borrow_mut().clear();
        let graph = self.graph;
        let mut candidates: Vec<(u64, usize)> = graph.members[class]
            .iter()
            .filter(|&&n| graph.nodes[n].classes().all(|c| !self.open.contains(&c)))
            .filter_map(|&n| Some((total(&self.added_node(n, LOOK_AHEAD)?), n)))
            .collect();
        candidates.sort_unstable();
        for (_, node) in candidates {
            let before: HashSet<usize> = self.chosen.keys().copied().collect();
            if graph.nodes[node]
                .classes()
                .all(|c| self.choose(c).is_some())
            {
                self.open.remove(&class);
                self.chosen.insert(class, node);
                return Some(());
            }
            // A dead end below: undo what this candidate chose.
            self.chosen.retain(|k, _| before.contains(k));
        }
        self.open.remove(&class);
        None
    }

    /// What `class` adds to what is chosen, looking `depth` levels ahead: the e-classes its
    /// cheapest choice computes.
    fn added_class(&self, class: usize, depth: usize) -> Option<Rc<Added>> {
        if self.chosen.contains_key(&class) {
            return Some(Rc::default());
        }
        if self.open.contains(&class) {
            return None;
        }
        if depth == 0 {
            let tree = self.graph.tree[class];
            let key = match self.look_ahead {
                LookAhead::PerOperand => class,
                LookAhead::Shared => self.graph.under_views(class),
            };
            return (tree != u64::MAX).then(|| Rc::new(HashMap::from([(key, tree)])));
        }
        if let Some(known) = self.memo.borrow().get(&(class, depth)) {
            return known.clone();
        }
        let added = self.graph.members[class]
            .iter()
            .filter_map(|&n| self.added_node(n, depth - 1))
            .min_by_key(total)
            .map(Rc::new);
        self.memo.borrow_mut().insert((class, depth), added.clone());
        added
    }

    /// What choosing `node` adds: its own cost, and its distinct operand e-classes' additions,
    /// an e-class two of them reach counted as the look-ahead says.
    fn added_node(&self, node: usize, depth: usize) -> Option<Added> {
        let node = &self.graph.nodes[node];
        let mut added = HashMap::from([(node.class, node.cost)]);
        let operands: HashSet<usize> = node.classes().collect();
        for c in operands {
            for (&class, &cost) in self.added_class(c, depth)?.iter() {
                let entry = added.entry(class).or_insert(0);
                *entry = match self.look_ahead {
                    LookAhead::PerOperand => entry.saturating_add(cost),
                    LookAhead::Shared => (*entry).max(cost),
                };
            }
        }
        Some(added)
    }
}

/// How the top-down choice's look-ahead counts an e-class that two operands of a candidate
/// reach below them (HVX reads the two registers of a pair instruction, `vaddubh`, through
/// two lane views, whose e-classes differ but reach the instruction's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookAhead {
    /// Once per operand reaching it, as if each operand were computed alone.
    PerOperand,
    /// Once.
    Shared,
}

/// The e-classes a choice would compute, each at the cost it adds (its e-node's own, or past
/// the look-ahead its cheapest tree's).
type Added = HashMap<usize, u64>;

/// What choosing each e-class adds, by e-class and look-ahead depth.
type Memo = RefCell<HashMap<(usize, usize), Option<Rc<Added>>>>;

/// The cost of what a choice adds.
fn total(added: &Added) -> u64 {
    added.values().fold(0, |sum, &c| sum.saturating_add(c))
}
