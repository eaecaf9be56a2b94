//! Extraction that counts a shared sub-term once, as the emitted program computes it.
//!
//! egglog's extractor minimizes each root's cost as a tree: a sub-term used twice is paid
//! twice, so between two choices of equal tree cost it cannot prefer the one that reuses a
//! value already computed (`u32(v1_u8)` on NEON widened lanes 4..8 from `v1_u8[4..12]` again
//! instead of taking the high half of the `uxtl` it had: 7 instructions where 6 do). Here each
//! root is extracted again top-down: every e-class takes the e-node whose cost *added* to what
//! is already chosen is lowest, looking a few levels ahead through e-classes not yet chosen
//! (beyond that, their tree cost): per operand, or with an e-class two operands reach counted
//! once ([`LookAhead`]; HVX reads a pair instruction's two registers through two lane views).
//! The caller keeps the result only where its cost as a DAG is below the tree term's
//! ([`dag_cost`]). Both count an IR operator left unlowered at its cost times its lanes
//! ([`lane_scaled`]), egglog's own cost model everything else.

mod choose;

pub use choose::LookAhead;

use super::scalarize::{LANE_EXTRACT_COST, SCALAR_DIVIDE_COST, SCALAR_LANE_COST};
use super::term::{parse_type_name, spells, COST_SCALE, OPERATOR_COST};
use crate::ir::expr::SIMPLE_OPS;
use egglog::extract::{CostModel, TreeAdditiveCostModel};
use egglog::{EGraph, Value};
use std::collections::{HashMap, HashSet};

/// An operand of an e-node: an e-class (by its index), or a primitive value of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Operand {
    Class(usize),
    Literal(Value, Primitive),
}

/// The primitive sorts of the selection's constructors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Primitive {
    Int,
    Text,
}

/// One e-node: its constructor (an index into [`Graph::heads`]), operands, e-class and own cost
/// (its primitives' included, as egglog's tree cost counts them).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ENode {
    head: usize,
    operands: Vec<Operand>,
    class: usize,
    cost: u64,
}

impl ENode {
    /// Whether the e-node costs less than any instruction: a view (a reinterpretation, a
    /// lane range), a wrapper, a constant, whose cost is what egglog counts for its type name
    /// and offsets.
    fn is_view(&self) -> bool {
        (self.cost as f64) < COST_SCALE
    }

    fn classes(&self) -> impl Iterator<Item = usize> + '_ {
        self.operands.iter().filter_map(|o| match o {
            Operand::Class(c) => Some(*c),
            Operand::Literal(..) => None,
        })
    }
}

/// The e-graph's e-nodes of sort `Expr`, their e-classes numbered densely, with each class's
/// cheapest tree cost.
pub struct Graph {
    /// The e-class of each e-graph value.
    index: HashMap<Value, usize>,
    nodes: Vec<ENode>,
    /// The e-nodes of each e-class.
    members: Vec<Vec<usize>>,
    /// Each e-class's cheapest cost as a tree (`u64::MAX` where it has no finite term).
    tree: Vec<u64>,
    /// The e-node of each e-class's cheapest tree (`usize::MAX` where it has none).
    best: Vec<usize>,
    /// The constructors, with their e-node cost (the same for all their e-nodes).
    heads: Vec<(String, u64)>,
    unlowered: Unlowered,
}

/// How a graph prices an IR operator left unlowered ([`lane_scaled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlowered {
    /// Above any instructions, per lane: while the e-graph grows, a root whose every term
    /// still leaves one is not settled, so lowering goes on.
    Last,
    /// At one lane, at the cost of its scalar code ([`super::scalarize`]): for the terms
    /// extracted, so that a lane's scalar saturation (AVX2 `u32_sat(x_u64) --lanes 1`, 4) is
    /// taken over a clamp in vector lanes by emulated comparisons (8).
    OneLaneAsScalar,
    /// Lanes moved ([`MOVES`]) at [`MOVE_GUESS`], for the terms extracted: the search for the
    /// target's moves ([`super::refine`]) finds what the e-graph has no instruction for, so
    /// that AVX2's `reduce_add(16, i32(x_u8))` by `psadbw` and a swap of 64-bit halves (5) is
    /// a candidate beside the instructions that leave no move (16).
    MovesAsFound,
}

/// A move left unlowered in [`Unlowered::MovesAsFound`]: two instructions of cost 1.
const MOVE_GUESS: u64 = 202;

/// The price [`Unlowered::MovesAsFound`] gives an e-node of constructor `head` and cost `cost`
/// where it is a move left unlowered.
fn move_as_found(head: &str, cost: u64) -> Option<u64> {
    (cost >= OPERATOR_COST && MOVES.contains(&head)).then_some(MOVE_GUESS)
}

impl Graph {
    /// Reads every constructor of sort `Expr` from the e-graph, pricing operators left
    /// unlowered as `unlowered` says.
    pub fn read(egraph: &EGraph, unlowered: Unlowered) -> Graph {
        let model = TreeAdditiveCostModel::default();
        let mut index: HashMap<Value, usize> = HashMap::new();
        let class_of = |v: Value, index: &mut HashMap<Value, usize>| {
            let next = index.len();
            *index.entry(v).or_insert(next)
        };
        let mut nodes = Vec::new();
        let mut heads = Vec::new();
        // Instruction constructors are declared as the e-graph meets them (`pending.rs`), so
        // in an order that depends on the run; read in name order (the catalog's) after the
        // operators, ties between equal costs go the same way in every run, alone or in batch.
        let mut functions: Vec<(&String, &egglog::Function)> = egraph.functions_iter().collect();
        functions.sort_by_key(|(name, _)| name.starts_with("I_").then_some(*name));
        for (name, function) in functions {
            let ty = function.func_type();
            // Only constructors of `Expr` whose primitive operands print as below.
            let printable = ty
                .input
                .iter()
                .all(|s| s.is_eq_sort() || matches!(s.name(), "i64" | "String"));
            if ty.output.name() != "Expr" || function.is_hidden() || !printable {
                continue;
            }
            let head = heads.len();
            let mut head_cost = None;
            // Functions that are not constructors (analyses) are refused here, and skipped.
            _ = egraph.constructor_enodes(name, |enode| {
                if enode.subsumed {
                    return;
                }
                let mut cost = model.enode_cost(egraph, function, &enode);
                let mut operands = Vec::with_capacity(enode.children.len());
                for (value, sort) in enode.children.iter().zip(&ty.input) {
                    if sort.is_eq_sort() {
                        operands.push(Operand::Class(class_of(*value, &mut index)));
                    } else {
                        cost += model.base_value_cost(egraph, sort, *value);
                        let primitive = if sort.name() == "i64" {
                            Primitive::Int
                        } else {
                            Primitive::Text
                        };
                        operands.push(Operand::Literal(*value, primitive));
                    }
                }
                head_cost = Some(cost);
                if cost >= OPERATOR_COST {
                    let ty = operands.iter().find_map(|o| match *o {
                        Operand::Literal(v, Primitive::Text) => {
                            Some(egraph.value_to_base::<egglog::sort::S>(v).0.to_string())
                        }
                        _ => None,
                    });
                    let arity = operands
                        .iter()
                        .filter(|o| matches!(o, Operand::Class(_)))
                        .count();
                    cost = lane_scaled(name, cost, ty.as_deref(), arity, unlowered);
                }
                let class = class_of(enode.eclass, &mut index);
                nodes.push(ENode {
                    head,
                    operands,
                    class,
                    cost,
                });
            });
            if let Some(cost) = head_cost {
                heads.push((name.clone(), cost));
            }
        }
        let mut members = vec![Vec::new(); index.len()];
        for (i, node) in nodes.iter().enumerate() {
            members[node.class].push(i);
        }
        let (tree, best) = tree_costs(&nodes, index.len());
        Graph {
            index,
            nodes,
            members,
            tree,
            best,
            heads,
            unlowered,
        }
    }

    /// The same e-graph with the moves left unlowered priced as [`Unlowered::MovesAsFound`]
    /// prices them ([`lane_scaled`]), from this reading rather than the e-graph again.
    pub fn moves_as_found(&self) -> Graph {
        let mut nodes = self.nodes.clone();
        for node in &mut nodes {
            if let Some(cost) = move_as_found(&self.heads[node.head].0, node.cost) {
                node.cost = cost;
            }
        }
        let (tree, best) = tree_costs(&nodes, self.members.len());
        Graph {
            index: self.index.clone(),
            nodes,
            members: self.members.clone(),
            tree,
            best,
            heads: self.heads.clone(),
            unlowered: Unlowered::MovesAsFound,
        }
    }

    /// The cheapest cost as a tree of the e-class of `root` (egglog's tree-additive cost);
    /// `None` where it has no finite term.
    pub fn tree_cost(&self, root: Value) -> Option<u64> {
        let class = *self.index.get(&root)?;
        Some(self.tree[class]).filter(|&c| c != u64::MAX)
    }

    /// The cheapest term of `root` as a tree, as egglog prints terms, with its cost.
    pub fn tree_term(&self, egraph: &EGraph, root: Value) -> Option<(u64, String)> {
        let cost = self.tree_cost(root)?;
        let class = self.index[&root];
        Some((cost, self.print(egraph, class, &|c| self.best[c])))
    }

    /// The term of `class` with the e-node `choice` gives each e-class.
    fn print(&self, egraph: &EGraph, class: usize, choice: &dyn Fn(usize) -> usize) -> String {
        let node = &self.nodes[choice(class)];
        let mut text = format!("({}", self.heads[node.head].0);
        for operand in &node.operands {
            text.push(' ');
            match *operand {
                Operand::Class(c) => text.push_str(&self.print(egraph, c, choice)),
                Operand::Literal(v, Primitive::Int) => {
                    text.push_str(&egraph.value_to_base::<i64>(v).to_string())
                }
                Operand::Literal(v, Primitive::Text) => {
                    let s = egraph.value_to_base::<egglog::sort::S>(v);
                    text.push_str(&format!("\"{}\"", s.0));
                }
            }
        }
        text.push(')');
        text
    }

    /// The cost of an extracted term (egglog's text) as a DAG: each distinct sub-term once,
    /// each at its e-node's cost. `None` for a head the e-graph does not have.
    pub fn dag_cost(&self, term: &str) -> Option<u64> {
        let costs: HashMap<&str, u64> = self.heads.iter().map(|(h, c)| (h.as_str(), *c)).collect();
        let mut seen = HashSet::new();
        let mut total = 0;
        let mut stack = vec![term.trim()];
        while let Some(t) = stack.pop() {
            let Some(inner) = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
                continue;
            };
            if !seen.insert(t) {
                continue;
            }
            let parts = split_operands(inner);
            let ty = parts
                .get(1)
                .and_then(|p| p.strip_prefix('"')?.strip_suffix('"'));
            let head = parts.first()?;
            let arity = parts.iter().skip(1).filter(|p| p.starts_with('(')).count();
            total += lane_scaled(head, *costs.get(head)?, ty, arity, self.unlowered);
            stack.extend(parts.into_iter().skip(1));
        }
        Some(total)
    }
}

/// The IR operators that only move lanes: left in a selection, they are searched for among the
/// target's own moves ([`super::refine`]), whatever their lanes.
const MOVES: [&str; 4] = ["Broadcast", "Concat", "Interleave", "Slice"];

/// An IR operator's e-node cost (at least [`OPERATOR_COST`]) times the lanes of its type (its
/// first operand), but for the operators that only move lanes: an operator left in a selection
/// is computed lane by lane, so of two terms that both leave operators the one with fewer lanes
/// to compute so is cheaper; with [`Unlowered::OneLaneAsScalar`], one at one lane at the cost
/// of its scalar code over its `arity` operands if it is lane-wise. Other costs as they are.
fn lane_scaled(
    head: &str,
    cost: u64,
    type_name: Option<&str>,
    arity: usize,
    unlowered: Unlowered,
) -> u64 {
    let ty = type_name.and_then(parse_type_name);
    if let (Some(t), Unlowered::OneLaneAsScalar) = (ty, unlowered) {
        if cost >= OPERATOR_COST && t.lanes == 1 && lane_wise(head) {
            let divide = match head {
                "Div" | "Mod" if t.elem.is_int() => SCALAR_DIVIDE_COST,
                _ => 0.0,
            };
            let scalar = SCALAR_LANE_COST + divide + LANE_EXTRACT_COST * arity as f64;
            return (scalar * COST_SCALE) as u64;
        }
    }
    if unlowered == Unlowered::MovesAsFound {
        if let Some(cost) = move_as_found(head, cost) {
            return cost;
        }
    }
    match ty {
        // The e-graph's bitcasts are between bool lanes and integers (others are
        // reinterpretations): computed bool lane by bool lane, as many as the type has bits.
        Some(t) if cost >= OPERATOR_COST && head == "Bitcast" => {
            cost.saturating_mul(t.bits() as u64)
        }
        Some(t) if cost >= OPERATOR_COST && !MOVES.contains(&head) => {
            cost.saturating_mul(t.lanes as u64)
        }
        // A broadcast grows with its lanes, as its scalar fallback does: of two terms leaving
        // as many operators, a register-wide broadcast (64 halfwords on HVX) is dearer than a
        // scalar conversion and an instruction splatting it (`vsplat`), while one the target's
        // moves may cover later (a few lanes: NEON's `dup`) stays cheaper than an instruction.
        Some(t) if head == "Broadcast" => cost + BROADCAST_LANE_COST * t.lanes as u64,
        _ => cost,
    }
}

/// Whether the operator `head` computes each lane from the same lane of its operands (so at one
/// lane reads one of each).
fn lane_wise(head: &str) -> bool {
    matches!(head, "Select" | "Cast" | "SatCast")
        || SIMPLE_OPS
            .iter()
            .any(|(name, op)| spells(head, name) && op.is_lanewise())
}

/// A scalarized broadcast's cost per lane in e-graph units (an instruction of cost 1 is 101).
const BROADCAST_LANE_COST: u64 = 2;

/// Each e-class's cheapest cost as a tree and the e-node that has it, as egglog's extractor
/// finds them: passes over the e-nodes in reading order, each lowering its e-class's cost
/// where it can, until a pass changes nothing; then each e-class takes the first e-node of
/// its cost whose operands got their cost before the e-class last did (which rules out
/// cycles of e-nodes that cost nothing). Taking egglog's choice among terms of equal cost
/// keeps the selections the corpus was measured with.
fn tree_costs(nodes: &[ENode], classes: usize) -> (Vec<u64>, Vec<usize>) {
    let mut tree = vec![u64::MAX; classes];
    // When each e-class last got cheaper, counting improvements.
    let mut rank = vec![0usize; classes];
    let mut improvements = 0;
    let cost_of = |node: &ENode, tree: &[u64]| {
        node.classes().try_fold(node.cost, |sum, c| {
            Some(tree[c])
                .filter(|&x| x != u64::MAX)
                .map(|x| sum.saturating_add(x))
        })
    };
    let mut changed = true;
    while changed {
        changed = false;
        for node in nodes {
            if let Some(cost) = cost_of(node, &tree).filter(|&c| c < tree[node.class]) {
                tree[node.class] = cost;
                improvements += 1;
                rank[node.class] = improvements;
                changed = true;
            }
        }
    }
    let mut best = vec![usize::MAX; classes];
    for (i, node) in nodes.iter().enumerate() {
        let class = node.class;
        if best[class] == usize::MAX
            && cost_of(node, &tree) == Some(tree[class])
            && node.classes().all(|c| rank[c] < rank[class])
        {
            best[class] = i;
        }
    }
    (tree, best)
}

/// The head and operands of a term's inside (`Add "t" (Var "a") (Const "t" 1)`), split at the
/// top level.
fn split_operands(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut quoted) = (0usize, None, false);
    for (i, ch) in inner.char_indices() {
        match ch {
            '"' => {
                quoted = !quoted;
                start.get_or_insert(i);
            }
            _ if quoted => {}
            '(' => {
                depth += 1;
                start.get_or_insert(i);
            }
            ')' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    parts.push(&inner[s..i]);
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        parts.push(&inner[s..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(Pair (F A) y)` where `y` is `(H A)` or `(H2 B)`: the tree extraction takes `H2 B`
    /// (5 against 6), the DAG one `H A` (A is already paid for).
    const PROGRAM: &str = "
        (datatype Expr)
        (constructor A () Expr :cost 5)
        (constructor B () Expr :cost 4)
        (constructor F (Expr) Expr :cost 1)
        (constructor H (Expr) Expr :cost 1)
        (constructor H2 (Expr) Expr :cost 1)
        (constructor Pair (Expr Expr) Expr :cost 0)
        (let y (H (A)))
        (union y (H2 (B)))
        (let root (Pair (F (A)) y))";

    /// The e-graph `program` makes, read, with the value of its `root`.
    fn read_root(program: &str) -> (EGraph, Graph, Value) {
        let mut egraph = EGraph::default();
        egraph.parse_and_run_program(None, program).unwrap();
        let root: egglog::ast::Expr = egraph
            .parse_program(None, "(extract root)")
            .ok()
            .and_then(|c| match c.into_iter().next() {
                Some(egglog::ast::Command::Extract(_, e, _)) => Some(e),
                _ => None,
            })
            .unwrap();
        let (_, value) = egraph.eval_expr(&root).unwrap();
        let graph = Graph::read(&egraph, Unlowered::Last);
        (egraph, graph, value)
    }

    #[test]
    fn a_shared_sub_term_is_paid_once() {
        let (egraph, graph, value) = read_root(PROGRAM);
        for look_ahead in [LookAhead::PerOperand, LookAhead::Shared] {
            assert_eq!(
                graph.extract(&egraph, value, look_ahead),
                Some((7, "(Pair (F (A)) (H (A)))".to_string()))
            );
        }
        assert_eq!(graph.dag_cost("(Pair (F (A)) (H2 (B)))"), Some(11));
        assert_eq!(graph.dag_cost("(Pair (F (A)) (H (A)))"), Some(7));
        assert_eq!(graph.dag_cost("(Nope)"), None);
    }

    /// A pair instruction `P` read through two lane views (`Lo`, `Hi`) and shuffled (20 as a
    /// DAG, 30 as a tree), against `Alt` (25): looking ahead per operand, the shuffle's two
    /// views each pay for `P` (30) and `Alt` is chosen; counting `P` once, the shuffle.
    #[test]
    fn the_shared_look_ahead_counts_a_pair_read_twice_once() {
        let (egraph, graph, value) = read_root(
            "
            (datatype Expr)
            (constructor P () Expr :cost 10)
            (constructor Lo (Expr) Expr :cost 0)
            (constructor Hi (Expr) Expr :cost 0)
            (constructor Shuf (Expr Expr) Expr :cost 10)
            (constructor Alt () Expr :cost 25)
            (let root (Alt))
            (union root (Shuf (Lo (P)) (Hi (P))))",
        );
        assert_eq!(
            graph.extract(&egraph, value, LookAhead::PerOperand),
            Some((25, "(Alt)".to_string()))
        );
        assert_eq!(
            graph.extract(&egraph, value, LookAhead::Shared),
            Some((20, "(Shuf (Lo (P)) (Hi (P)))".to_string()))
        );
    }

    /// Two terms that leave IR operators unlowered: one operator at 8 lanes against two at one
    /// lane. By egglog's costs the single operator is cheaper; computed lane by lane it is not.
    #[test]
    fn an_operator_left_unlowered_costs_its_lanes() {
        let program = "
            (datatype Expr)
            (constructor Var (String String) Expr :cost 0)
            (constructor Mul (String Expr Expr) Expr :cost 1000000)
            (constructor Lanes (String i64 Expr) Expr :cost 0)
            (let a (Var \"i32x1\" \"a\"))
            (let root (Mul \"i32x1\" a (Mul \"i32x1\" a a)))
            (union root (Lanes \"i32x1\" 0 (Mul \"i32x8\" (Var \"i32x8\" \"a\") (Var \"i32x8\" \"a\"))))";
        let mut egraph = EGraph::default();
        egraph.parse_and_run_program(None, program).unwrap();
        let expr = egglog::ast::Expr::Var(egglog::ast::Span::Panic, "root".to_string());
        let (_, value) = egraph.eval_expr(&expr).unwrap();
        let graph = Graph::read(&egraph, Unlowered::Last);
        let (cost, term) = graph.tree_term(&egraph, value).unwrap();
        assert!(term.starts_with("(Mul \"i32x1\""), "{term}");
        // Two operators of one lane, their type names and the variables' strings at 1 each.
        assert_eq!(cost / OPERATOR_COST, 2);
        assert_eq!(graph.dag_cost(&term).map(|c| c / OPERATOR_COST), Some(2));
        let wide =
            "(Lanes \"i32x1\" 0 (Mul \"i32x8\" (Var \"i32x8\" \"a\") (Var \"i32x8\" \"a\")))";
        assert_eq!(graph.dag_cost(wide).map(|c| c / OPERATOR_COST), Some(8));
    }

    /// Terms of equal cost, one through a cycle of e-nodes that cost nothing: the tree term
    /// is the one egglog's own extractor takes, root by root.
    #[test]
    fn the_tree_term_is_the_one_egglog_extracts() {
        let program = format!(
            "{PROGRAM}
            (constructor Z (Expr) Expr :cost 0)
            (let t (F (B)))
            (union t (H (B)))
            (union t (Z t))
            (let u (Pair t (H2 (A))))
            (union u (Pair (H (B)) (F (A))))"
        );
        let mut egraph = EGraph::default();
        egraph.parse_and_run_program(None, &program).unwrap();
        let graph = Graph::read(&egraph, Unlowered::Last);
        let sort = egraph.get_sort_by_name("Expr").cloned().unwrap();
        let extractor = egglog::extract::Extractor::compute_costs_from_rootsorts(
            Some(vec![sort]),
            &egraph,
            TreeAdditiveCostModel::default(),
        );
        for name in ["root", "y", "t", "u"] {
            let expr = egglog::ast::Expr::Var(egglog::ast::Span::Panic, name.to_string());
            let (_, value) = egraph.eval_expr(&expr).unwrap();
            let mut dag = egglog::TermDag::default();
            let (cost, term) = extractor.extract_best(&egraph, &mut dag, value).unwrap();
            assert_eq!(
                graph.tree_term(&egraph, value),
                Some((cost, dag.to_string(term))),
                "{name}"
            );
        }
    }

    #[test]
    fn operands_split_at_the_top_level_with_strings_whole() {
        assert_eq!(
            split_operands(r#"Add "u8 x16" (Var "a" "b c") 3"#),
            vec!["Add", r#""u8 x16""#, r#"(Var "a" "b c")"#, "3"]
        );
    }
}
