//! Rewrites declared on demand. A program holds every rewrite its input could reach (see
//! [`super::reach`]), most of which never match: declaring one costs egglog about 0.06 ms
//! (parsing, type-checking, planning its query), the most of a small selection, and every
//! declared rewrite is planned again at every iteration of its ruleset. So each is declared
//! only once its left side could match the e-graph ([`Index::could_match`]: its operators at
//! their types, nested as the pattern nests them, with its literals and the types its
//! conditions require); egglog runs a rule declared late against every e-node, old ones
//! included, so what saturation derives is the same. The instruction constructors a rewrite
//! makes are declared with it (a program names hundreds; declaring one makes an egglog table),
//! in the program's order.

use super::prematch::{Index, Needs};
use super::term::Rewrite;
use crate::error::{Error, Result};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The rewrites of a program not declared yet, and what the e-graph holds.
pub struct Pending<'p> {
    /// Each rewrite waiting (the program's, not copied), with the typed operators its left
    /// side names.
    waiting: Vec<(Needs, &'p Rewrite)>,
    /// The constructors the waiting left sides name.
    names: HashSet<&'static str>,
    /// Each instruction constructor not declared yet, by name, with its position in the
    /// program and its declaration.
    constructors: HashMap<String, (usize, String)>,
}

impl<'p> Pending<'p> {
    /// The rewrites and the instruction constructors (name, declaration) they make, none
    /// declared yet.
    pub fn new(
        rewrites: impl IntoIterator<Item = &'p Rewrite>,
        constructors: Vec<(String, String)>,
    ) -> Pending<'p> {
        let mut names = HashSet::new();
        let waiting = rewrites
            .into_iter()
            .map(|r| {
                let needs = Needs::of(&r.lhs, &r.conditions);
                names.extend(needs.heads.iter().map(|(name, _)| *name));
                (needs, r)
            })
            .collect();
        let constructors = constructors
            .into_iter()
            .enumerate()
            .map(|(i, (name, text))| (name, (i, text)))
            .collect();
        Pending {
            waiting,
            names,
            constructors,
        }
    }

    /// Declares every waiting rewrite of `ruleset`, the one about to run, whose left side
    /// could now match the e-graph.
    pub fn declare(&mut self, egraph: &mut egglog::EGraph, ruleset: &str) -> Result<()> {
        if !self
            .waiting
            .iter()
            .any(|(_, r)| r.ruleset.as_str() == ruleset)
        {
            return Ok(());
        }
        let index = Index::read(egraph, &self.names);
        // Only the few ready ones move; the thousands left keep their places.
        let ready: Vec<(Needs, &Rewrite)> = self
            .waiting
            .extract_if(.., |(needs, r)| {
                r.ruleset.as_str() == ruleset
                    && index.holds(needs)
                    && index.could_match(&r.lhs, &r.conditions)
            })
            .collect();
        if ready.is_empty() {
            return Ok(());
        }
        let mut made = BTreeSet::new();
        for (_, r) in &ready {
            r.lhs.instructions(&mut made);
            r.rhs.instructions(&mut made);
        }
        let mut constructors: Vec<(usize, String)> = made
            .into_iter()
            .filter_map(|name| self.constructors.remove(name))
            .collect();
        constructors.sort();
        let mut text: String = constructors.into_iter().map(|(_, c)| c).collect();
        text.extend(ready.iter().map(|(_, r)| r.to_string()));
        egraph
            .parse_and_run_program(None, &text)
            .map_err(|e| Error::data("egglog", crate::error::one_line(&e)))?;
        Ok(())
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
        let rewrites = [rewrite("Neg", "Abs"), rewrite("Abs", "Popcount")];
        let mut pending = Pending::new(&rewrites, vec![]);
        pending.declare(&mut egraph, "lower").unwrap();
        assert_eq!(pending.waiting.len(), 1, "Abs is not in the e-graph yet");
        egraph.parse_and_run_program(None, "(run lower 1)").unwrap();
        pending.declare(&mut egraph, "lower").unwrap();
        assert!(pending.waiting.is_empty(), "the run made an Abs");
        egraph.parse_and_run_program(None, "(run lower 1)").unwrap();
        egraph
            .parse_and_run_program(
                None,
                "(check (= n (Popcount \"i8x16\" (Var \"i8x16\" \"a\"))))",
            )
            .unwrap();
    }

    /// An instruction constructor is declared with the first rewrite that makes it, and not
    /// before: egglog does not know it until then.
    #[test]
    fn an_instruction_constructor_is_declared_with_the_rewrite_that_makes_it() {
        let mut egraph = egglog::EGraph::default();
        let program = concat!(
            include_str!("prelude.egg"),
            "(ruleset lower)\n",
            "(let n (Abs \"i8x16\" (Var \"i8x16\" \"a\")))\n",
        );
        egraph.parse_and_run_program(None, program).unwrap();
        let mut to_instruction = rewrite("Neg", "Abs");
        to_instruction.rhs = Term::Instr {
            name: "I_neg".to_string(),
            args: vec![Term::Slot("x")],
        };
        let rewrites = [to_instruction];
        let constructors = vec![(
            "I_neg".to_string(),
            "(constructor I_neg (Expr) Expr :cost 2)\n".to_string(),
        )];
        let mut pending = Pending::new(&rewrites, constructors);
        pending.declare(&mut egraph, "lower").unwrap();
        assert!(
            egraph.parse_and_run_program(None, "(I_neg n)").is_err(),
            "no Neg in the e-graph: I_neg is not declared"
        );
        egraph
            .parse_and_run_program(None, "(let m (Neg \"i8x16\" n))")
            .unwrap();
        pending.declare(&mut egraph, "lower").unwrap();
        assert!(pending.constructors.is_empty());
        egraph.parse_and_run_program(None, "(run lower 1)").unwrap();
        egraph
            .parse_and_run_program(None, "(check (= m (I_neg n)))")
            .unwrap();
    }
}
