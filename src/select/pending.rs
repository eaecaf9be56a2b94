//! Rewrites declared on demand. A program holds every rewrite its input could reach (see
//! [`super::reach`]), most of which never match: declaring one costs egglog about 0.06 ms
//! (parsing, type-checking, planning its query), the most of a small selection, and every
//! declared rewrite is planned again at every iteration of its ruleset. A rewrite whose left
//! side needs an operator at a type the e-graph does not hold cannot match, so each is declared
//! only once the e-graph holds every typed operator its left side needs; egglog runs a rule
//! declared late against every e-node, old ones included, so what saturation derives is the
//! same.

use super::term::{type_name, Rewrite};
use crate::error::{Error, Result};
use std::collections::{HashMap, HashSet};

/// A typed operator: the constructor's name and the type it is applied at (its first operand).
type Head = (&'static str, String);

/// The rewrites of a program not declared yet, and what the e-graph holds.
pub struct Pending {
    waiting: Vec<(Vec<Head>, Rewrite)>,
    /// The typed operators the e-graph held when last read.
    held: HashSet<Head>,
    /// The rows of each constructor a left side names when it was last read.
    rows: HashMap<&'static str, usize>,
    /// Whether the waiting rewrites were checked against the e-graph once.
    checked: bool,
}

impl Pending {
    /// The rewrites, none declared yet.
    pub fn new(rewrites: Vec<Rewrite>) -> Pending {
        let waiting = rewrites
            .into_iter()
            .map(|r| {
                let mut needs = Vec::new();
                r.lhs
                    .typed_heads(&mut |name, ty| needs.push((name, type_name(ty))));
                needs.sort();
                needs.dedup();
                (needs, r)
            })
            .collect();
        Pending {
            waiting,
            held: HashSet::new(),
            rows: HashMap::new(),
            checked: false,
        }
    }

    /// Declares every waiting rewrite whose left side the e-graph now can match.
    pub fn declare(&mut self, egraph: &mut egglog::EGraph) -> Result<()> {
        if self.waiting.is_empty() || !self.read(egraph) && self.checked {
            return Ok(());
        }
        self.checked = true;
        let held = &self.held;
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(needs, _)| needs.iter().all(|h| held.contains(h)));
        self.waiting = waiting;
        if ready.is_empty() {
            return Ok(());
        }
        let text: String = ready.iter().map(|(_, r)| r.to_string()).collect();
        egraph
            .parse_and_run_program(None, &text)
            .map_err(|e| Error::data("egglog", crate::error::one_line(&e)))?;
        Ok(())
    }

    /// Reads the typed operators of every constructor a waiting left side names whose rows
    /// changed since the last reading; whether the e-graph holds one it did not before.
    fn read(&mut self, egraph: &egglog::EGraph) -> bool {
        let names: HashSet<&'static str> = self
            .waiting
            .iter()
            .flat_map(|(needs, _)| needs.iter().map(|(name, _)| *name))
            .collect();
        let before = self.held.len();
        for name in names {
            // Only constructors whose first operand is the type name are read.
            let Some(function) = egraph.get_function(name) else {
                continue;
            };
            if function
                .func_type()
                .input
                .first()
                .is_none_or(|sort| sort.name() != "String")
            {
                continue;
            }
            let rows = egraph.get_size(name);
            if self.rows.get(name) == Some(&rows) {
                continue;
            }
            self.rows.insert(name, rows);
            let held = &mut self.held;
            // Functions that are not constructors are refused here (none is named).
            _ = egraph.constructor_enodes(name, |enode| {
                if let Some(&ty) = enode.children.first() {
                    let ty = egraph.value_to_base::<egglog::sort::S>(ty);
                    if !held.contains(&(name, ty.0.to_string())) {
                        held.insert((name, ty.0.to_string()));
                    }
                }
            });
        }
        self.held.len() > before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Elem, VecType};
    use crate::select::term::{Ruleset, Term};

    fn rewrite(from: &'static str, to: &'static str) -> Rewrite {
        let ty = VecType::new(16, Elem::I8);
        let op = |name, x| Term::Op {
            name,
            ty,
            params: vec![],
            args: vec![x],
        };
        Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{from} to {to}"),
            lhs: op(from, Term::Slot("x")),
            rhs: op(to, Term::Slot("x")),
            conditions: vec![],
        }
    }

    /// A rewrite waits until the e-graph holds its left side's operator at its type; declared
    /// then, it rewrites e-nodes made before it was declared.
    #[test]
    fn a_rewrite_is_declared_once_it_can_match_and_matches_older_e_nodes() {
        let mut egraph = egglog::EGraph::default();
        let program = concat!(
            include_str!("prelude.egg"),
            "(ruleset lower)\n",
            "(let n (Neg \"i8x16\" (Var \"i8x16\" \"a\")))\n",
        );
        egraph.parse_and_run_program(None, program).unwrap();
        let mut pending = Pending::new(vec![rewrite("Neg", "Abs"), rewrite("Abs", "Popcount")]);
        pending.declare(&mut egraph).unwrap();
        assert_eq!(pending.waiting.len(), 1, "Abs is not in the e-graph yet");
        egraph.parse_and_run_program(None, "(run lower 1)").unwrap();
        pending.declare(&mut egraph).unwrap();
        assert!(pending.waiting.is_empty(), "the run made an Abs");
        egraph.parse_and_run_program(None, "(run lower 1)").unwrap();
        egraph
            .parse_and_run_program(
                None,
                "(check (= n (Popcount \"i8x16\" (Var \"i8x16\" \"a\"))))",
            )
            .unwrap();
    }
}
