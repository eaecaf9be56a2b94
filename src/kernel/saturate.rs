//! Running the phases on egglog: one ruleset iteration at a time, stopping at saturation, at the
//! node limit or at the phase's deadline; then reading the e-graph back (every e-node of every
//! constructor with its e-class) for extraction.

use super::phase::Phase;
use super::program::{Arg, Terms};
use super::term::Op;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// A phase stops once the e-graph has grown this many times over its size when the phase
/// began (and past [`GROWTH_FLOOR`]): a lane's forms multiply across the lanes of a `Vec`, so
/// the next iteration's matches of a packing rule could exhaust memory before any limit is
/// checked again. The given rules grow an e-graph at most four times.
pub const GROWTH: usize = 8;
/// The e-graph size below which [`GROWTH`] does not stop a phase.
pub const GROWTH_FLOOR: usize = 500;

/// A phase stops before an iteration in which a rule over the lanes of a `Vec` could match more
/// often than this: the product of its lanes' e-class sizes, summed over the `Vec`s. egglog
/// collects every match of a rule before any cap applies, so the product is what memory pays.
pub const LANE_MATCH_LIMIT: f64 = 500_000.0;

/// The scalar constructors (a `Vec`'s lanes are their e-classes).
const SCALAR_CONSTRUCTORS: [&str; 9] = [
    "Num", "Get", "Add", "Sub", "Mul", "Div", "Neg", "Sqrt", "Sgn",
];

/// Limits on one phase.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub nodes: usize,
    pub iterations: usize,
    pub deadline: Instant,
}

/// What one phase did.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseRun {
    pub phase: &'static str,
    pub iterations: usize,
    /// E-graph size (tuples in every table) after the phase.
    pub nodes: usize,
    pub ms: f64,
    /// "saturated", "node limit", "lane match limit", "iteration limit" or "time limit".
    pub stop: &'static str,
}

/// An e-node read back: its operator and operand e-classes.
#[derive(Clone, Debug, PartialEq)]
pub enum ENodeOp {
    Dialect(Op),
    /// The end of the chunk list.
    Nil,
}

#[derive(Clone, Debug)]
pub struct ENode {
    pub op: ENodeOp,
    pub args: Vec<usize>,
    pub class: usize,
}

/// The e-graph as e-nodes over dense e-class numbers.
#[derive(Debug, Default)]
pub struct EGraph {
    pub nodes: Vec<ENode>,
    pub classes: usize,
    /// E-class of each `let` binding the caller asked for.
    pub roots: Vec<usize>,
}

/// Matches one rule may apply in one iteration; the rest wait for later iterations (as egg's
/// backoff scheduler keeps associativity and commutativity from flooding the e-graph).
pub const MATCH_LIMIT: usize = 2_000;

/// Applies at most [`MATCH_LIMIT`] matches of each rule per iteration.
#[derive(Clone)]
struct Capped;

impl egglog::scheduler::Scheduler for Capped {
    fn filter_matches(
        &mut self,
        _rule: &str,
        _ruleset: &str,
        matches: &mut egglog::scheduler::Matches,
    ) -> bool {
        let n = matches.match_size();
        if n <= MATCH_LIMIT {
            matches.choose_all();
        } else {
            (0..MATCH_LIMIT).for_each(|i| matches.choose(i));
        }
        true
    }
}

/// An egglog session: the program text as run, for `--emit egglog`.
pub struct Session {
    egraph: egglog::EGraph,
    scheduler: egglog::scheduler::SchedulerId,
    pub text: String,
}

impl Session {
    pub fn new(program: &str) -> Result<Session> {
        let mut egraph = egglog::EGraph::default();
        let scheduler = egraph.add_scheduler(Box::new(Capped));
        let mut s = Session {
            egraph,
            scheduler,
            text: String::new(),
        };
        s.exec(program)?;
        Ok(s)
    }

    /// Saves the e-graph (declarations and rules), for a round to start from.
    pub fn push(&mut self) {
        self.egraph.push();
        self.text.push_str("(push)\n");
    }

    /// Back to the e-graph saved by [`Session::push`]: a fresh e-graph for the next round.
    pub fn pop(&mut self) -> Result<()> {
        self.egraph
            .pop()
            .map_err(|e| Error::data("egglog", e.to_string()))?;
        self.text.push_str("(pop)\n");
        Ok(())
    }

    /// Runs egglog commands, recording them.
    pub fn exec(&mut self, commands: &str) -> Result<()> {
        self.egraph
            .parse_and_run_program(None, commands)
            .map_err(|e| {
                Error::data(
                    "egglog",
                    e.to_string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            })?;
        self.text.push_str(commands);
        Ok(())
    }

    /// Adds the terms through egglog's API (parsing and type-checking them as commands took
    /// longer than the phases on small kernels), sets `(Root k)` to each root's list and unions
    /// the roots; records them as the equivalent commands.
    pub fn insert(&mut self, terms: &Terms, prefix: &str) -> Result<()> {
        use egglog::{Core, Write};
        // A root is a list when it is its own list; spec and seed partition the same outputs.
        let is_list = |k: usize| terms.lists[k] == terms.roots[k];
        if terms.roots.len() > 1 && is_list(0) != is_list(1) {
            return Err(Error::data(
                "egglog",
                "the programs to union are one a vector, the other a list of vectors",
            ));
        }
        self.egraph
            .update(|mut state| {
                let mut values: Vec<egglog::Value> = Vec::with_capacity(terms.nodes.len());
                for n in &terms.nodes {
                    let args: Vec<egglog::Value> = n
                        .args
                        .iter()
                        .map(|a| match a {
                            Arg::Node(i) => values[*i],
                            Arg::Int(x) => state.base_to_value::<i64>(*x),
                        })
                        .collect();
                    values.push(state.add(n.constructor, egglog::RawValues(args))?);
                }
                for (k, l) in terms.lists.iter().enumerate() {
                    state.set("Root", (k as i64,), values[*l])?;
                }
                if let [a, b, ..] = terms.roots[..] {
                    state.union(values[a], values[b])?;
                }
                Ok(())
            })
            .map_err(|e| Error::data("egglog", e.to_string()))?;
        self.text.push_str(&terms.text(prefix));
        Ok(())
    }

    /// Runs one phase's ruleset to saturation or a limit.
    pub fn run(&mut self, phase: Phase, limits: Limits) -> Result<PhaseRun> {
        let start = Instant::now();
        let mut iterations = 0;
        let nodes = limits
            .nodes
            .min((GROWTH * self.egraph.num_tuples()).max(GROWTH_FLOOR));
        let stop = loop {
            if iterations >= limits.iterations {
                break "iteration limit";
            }
            if Instant::now() >= limits.deadline {
                break "time limit";
            }
            if iterations > 0 && self.lane_matches()? > LANE_MATCH_LIMIT {
                break "lane match limit";
            }
            let report = self
                .egraph
                .step_rules_with_scheduler(self.scheduler, phase.name())
                .map_err(|e| Error::data("egglog", e.to_string()))?;
            iterations += 1;
            if !report.updated {
                break "saturated";
            }
            if self.egraph.num_tuples() > nodes {
                break "node limit";
            }
        };
        writeln!(
            self.text,
            "(run {} {iterations}) ; {stop} after {iterations} iteration(s), at most {MATCH_LIMIT} matches of a rule applied per iteration",
            phase.name()
        )
        .expect("string write");
        Ok(PhaseRun {
            phase: phase.name(),
            iterations,
            nodes: self.egraph.num_tuples(),
            ms: start.elapsed().as_secs_f64() * 1000.0,
            stop,
        })
    }

    /// How often a rule over a `Vec`'s lanes could match: for each `Vec`, the product of its
    /// lanes' e-class sizes.
    fn lane_matches(&mut self) -> Result<f64> {
        let mut class_size: HashMap<egglog::Value, f64> = HashMap::new();
        let egglog_error = |e: egglog::Error| Error::data("egglog", e.to_string());
        for name in SCALAR_CONSTRUCTORS {
            self.egraph
                .constructor_enodes(name, |e| {
                    if !e.subsumed {
                        *class_size.entry(e.eclass).or_insert(0.0) += 1.0;
                    }
                })
                .map_err(egglog_error)?;
        }
        let mut total = 0.0;
        self.egraph
            .constructor_enodes("Vec", |e| {
                if !e.subsumed {
                    total += e
                        .children
                        .iter()
                        .map(|c| class_size.get(c).copied().unwrap_or(1.0))
                        .product::<f64>();
                }
            })
            .map_err(egglog_error)?;
        Ok(total)
    }

    /// Reads the e-graph back, with the e-classes of `(Root 0)` .. `(Root roots - 1)` as roots.
    pub fn read(&mut self, roots: usize) -> Result<EGraph> {
        use egglog::Read;
        let root_values = self
            .egraph
            .read(|state| {
                (0..roots)
                    .map(|k| state.lookup("Root", (k as i64,)))
                    .collect::<std::result::Result<Option<Vec<egglog::Value>>, _>>()
            })
            .map_err(|e| Error::data("egglog", e.to_string()))?
            .ok_or_else(|| Error::data("egglog", "a root of the program is missing"))?;
        let mut class_of: HashMap<egglog::Value, usize> = HashMap::new();
        let mut out = EGraph::default();
        let mut dense = |v: egglog::Value, n: &mut usize| -> usize {
            *class_of.entry(v).or_insert_with(|| {
                *n += 1;
                *n - 1
            })
        };
        let constructors: [(&str, Option<ENodeOp>); 20] = [
            ("Num", None),
            ("Get", None),
            ("Add", Some(ENodeOp::Dialect(Op::Add))),
            ("Sub", Some(ENodeOp::Dialect(Op::Sub))),
            ("Mul", Some(ENodeOp::Dialect(Op::Mul))),
            ("Div", Some(ENodeOp::Dialect(Op::Div))),
            ("Neg", Some(ENodeOp::Dialect(Op::Neg))),
            ("Sqrt", Some(ENodeOp::Dialect(Op::Sqrt))),
            ("Sgn", Some(ENodeOp::Dialect(Op::Sgn))),
            ("Vec", Some(ENodeOp::Dialect(Op::Vec))),
            ("VecAdd", Some(ENodeOp::Dialect(Op::VecAdd))),
            ("VecMinus", Some(ENodeOp::Dialect(Op::VecMinus))),
            ("VecMul", Some(ENodeOp::Dialect(Op::VecMul))),
            ("VecDiv", Some(ENodeOp::Dialect(Op::VecDiv))),
            ("VecMAC", Some(ENodeOp::Dialect(Op::VecMAC))),
            ("VecNeg", Some(ENodeOp::Dialect(Op::VecNeg))),
            ("VecSqrt", Some(ENodeOp::Dialect(Op::VecSqrt))),
            ("VecSgn", Some(ENodeOp::Dialect(Op::VecSgn))),
            ("Concat", Some(ENodeOp::Dialect(Op::Concat))),
            ("LNil", Some(ENodeOp::Nil)),
        ];
        let mut raw: Vec<(ENodeOp, Vec<egglog::Value>, egglog::Value)> = Vec::new();
        for (name, op) in constructors.iter() {
            let mut rows: Vec<(Vec<egglog::Value>, egglog::Value)> = Vec::new();
            self.egraph
                .constructor_enodes(name, |e| {
                    if !e.subsumed {
                        rows.push((e.children.to_vec(), e.eclass));
                    }
                })
                .map_err(|e| Error::data("egglog", e.to_string()))?;
            for (children, class) in rows {
                let node_op = match (name, op) {
                    (&"Num", _) => {
                        ENodeOp::Dialect(Op::Num(self.egraph.value_to_base::<i64>(children[0])))
                    }
                    (&"Get", _) => ENodeOp::Dialect(Op::Get(
                        self.egraph.value_to_base::<i64>(children[0]) as u32,
                        self.egraph.value_to_base::<i64>(children[1]) as u32,
                    )),
                    (_, Some(op)) => op.clone(),
                    _ => unreachable!("every constructor has an operator"),
                };
                let children = if matches!(node_op, ENodeOp::Dialect(Op::Num(_) | Op::Get(..))) {
                    vec![]
                } else {
                    children
                };
                raw.push((node_op, children, class));
            }
        }
        let mut n = 0usize;
        for (op, children, class) in raw {
            let class = dense(class, &mut n);
            let args = children.into_iter().map(|c| dense(c, &mut n)).collect();
            out.nodes.push(ENode { op, args, class });
        }
        out.roots = root_values.into_iter().map(|v| dense(v, &mut n)).collect();
        out.classes = n;
        Ok(out)
    }
}

/// The deadline `fraction` of the way from now to `end`.
pub fn share(end: Instant, fraction: f64) -> Instant {
    let now = Instant::now();
    let left = end.saturating_duration_since(now);
    now + Duration::from_secs_f64(left.as_secs_f64() * fraction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::program::{declarations, terms};
    use crate::kernel::read::read_list;

    /// The e-graph as sorted (operator, operand count) pairs and its class count.
    fn shape(g: &EGraph) -> (Vec<String>, usize) {
        let mut nodes: Vec<String> = g
            .nodes
            .iter()
            .map(|n| format!("{:?}/{}", n.op, n.args.len()))
            .collect();
        nodes.sort();
        (nodes, g.classes)
    }

    #[test]
    fn the_recorded_commands_build_the_e_graph_the_api_built() {
        let list = "(List (+ (* (Get a 0) (Get b 0)) (* (Get a 1) (Get b 1))) \
                    (+ (* (Get a 0) (Get b 0)) (Get a 1)) (neg (Get b 1)))";
        let lifted = read_list(list, "t.sexp").unwrap();
        let mut dag = lifted.dag;
        let outputs: Vec<_> = dag.args(lifted.root).to_vec();
        // Three outputs are two vectors of two lanes; one output is a lone vector.
        let spec = dag.partition(&outputs, 2);
        let reversed: Vec<_> = outputs.iter().rev().copied().collect();
        let other = dag.partition(&reversed, 2);
        let t = terms(&dag, &[spec, other], 2);
        check(&t);
        let (lone, twin) = (
            dag.partition(&outputs[..1], 2),
            dag.partition(&outputs[2..], 2),
        );
        check(&terms(&dag, &[lone, twin], 2));
    }

    /// The terms added through the API and run as their recorded commands give one e-graph.
    fn check(t: &crate::kernel::program::Terms) {
        let text = t.text("t");
        assert!(
            text.contains("(set (Root 1) ") && text.contains("(union t"),
            "{text}"
        );
        let mut by_api = Session::new(&declarations(2)).unwrap();
        by_api.insert(t, "t").unwrap();
        let mut by_text = Session::new(&declarations(2)).unwrap();
        by_text.exec(&text).unwrap();
        let (a, b) = (by_api.read(2).unwrap(), by_text.read(2).unwrap());
        assert_eq!(shape(&a), shape(&b), "{text}");
        assert_eq!(a.roots[0], a.roots[1], "the roots are unioned");
        assert_eq!(b.roots[0], b.roots[1], "{text}");
    }
}
