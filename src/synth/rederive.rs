//! Which hand-written rules the synthesized ones re-derive (`isadb synth --rederive`): every
//! hand rule at every type it covers goes into one egglog e-graph with the proven synthesized
//! rules (each at every type it claims); a hand rule whose sides meet at every type is derived
//! and can be dropped. A rule whose sides expand to the same IR is definitional (it does
//! nothing in an e-graph of expanded idioms); constant wildcards are tried at the small
//! literals their predicate allows; a rule predicated on its variables is derived only by a
//! synthesized rule with the same sides and predicate.

use super::derive::{Deriver, Equation};
use crate::error::Result;
use crate::ir::{Expr, Macros};
use crate::rules::load::{elaborate, rule_types, Instance};
use crate::rules::syntax::{is_constant_wildcard, Rule};
use crate::semantics::{eval, Env, Value};
use crate::words::text_enum;
use serde::Serialize;
use std::collections::HashMap;
use std::rc::Rc;

/// The two sides of a rule instance.
type Pair = (Rc<Expr>, Rc<Expr>);

/// Literals tried for a hand rule's constant wildcards.
const LITERALS: [i64; 10] = [0, 1, 2, 3, 4, 7, 8, 15, 16, 255];

text_enum! {
    /// What the synthesized rules make of a hand rule.
    pub enum Rederivation("rederivation") {
        /// Its sides expand to the same IR: it does nothing in an e-graph of expanded idioms.
        Definitional = "definitional",
        /// The synthesized rules derive it at every type (or one has its sides and predicate).
        Derived = "derived",
        /// They do not.
        NotDerived = "not derived",
        /// Predicated on its variables, and no synthesized rule has its sides and predicate.
        PredicatedNotDerived = "predicated (not derived)",
    }
}

/// The verdict on one hand rule.
#[derive(Debug, Clone, Serialize)]
pub struct Rederived {
    /// The hand rule's name.
    pub rule: String,
    /// What the synthesized rules make of it.
    pub verdict: Rederivation,
}

/// The instances of a rule at one lane: every type, and for constant wildcards every
/// assignment of small literals its predicate allows; None when its predicate constrains
/// variables (not only constants).
fn instances(rule: &Rule, macros: &Macros) -> Option<Vec<Pair>> {
    let mut out = Vec::new();
    for t in rule_types(rule) {
        let Ok(inst) = elaborate(rule, t, 1, macros) else {
            continue;
        };
        let consts: Vec<(String, crate::ir::VecType)> = inst
            .lhs
            .vars()
            .into_iter()
            .chain(inst.rhs.vars())
            .filter(|(n, _)| is_constant_wildcard(n))
            .collect();
        if let Some(p) = &inst.predicate {
            if p.vars().iter().any(|(n, _)| !is_constant_wildcard(n)) {
                return None;
            }
        }
        out.extend(assignments(&inst, &consts));
    }
    Some(out)
}

/// The instance with its constant wildcards replaced by every literal assignment that
/// satisfies the predicate.
fn assignments(inst: &Instance, consts: &[(String, crate::ir::VecType)]) -> Vec<Pair> {
    let mut names: Vec<(String, crate::ir::VecType)> = Vec::new();
    for c in consts {
        if !names.iter().any(|(n, _)| *n == c.0) {
            names.push(c.clone());
        }
    }
    let mut out = Vec::new();
    let total = LITERALS.len().pow(names.len() as u32);
    for k in 0..total {
        let mut map: HashMap<String, Rc<Expr>> = HashMap::new();
        let mut env = Env::new();
        let mut rest = k;
        for (name, ty) in &names {
            let v = LITERALS[rest % LITERALS.len()];
            rest /= LITERALS.len();
            let bits = (v as i128 as u128) & ty.elem.mask();
            map.insert(name.clone(), Rc::new(Expr::constant(*ty, vec![bits])));
            env.insert(name.clone(), Value::new(*ty, vec![bits]));
        }
        let allowed = inst
            .predicate
            .as_ref()
            .is_none_or(|p| eval(p, &env).is_ok_and(|v| v.lanes.iter().all(|l| *l != 0)));
        if allowed {
            out.push((inst.lhs.substitute(&map), inst.rhs.substitute(&map)));
        }
    }
    out
}

/// The text of a rule's sides and predicate with its types, for comparing predicated rules.
fn shape(r: &Rule) -> String {
    let types: Vec<&str> = r.types.iter().map(|t| t.name()).collect();
    format!(
        "{} => {} if {} at {}",
        r.lhs,
        r.rhs,
        r.predicate.as_deref().unwrap_or(""),
        types.join(" ")
    )
}

/// The verdict on every hand rule against the synthesized rules.
pub fn rederive(hand: &[Rule], synthesized: &[Rule], macros: &Macros) -> Result<Vec<Rederived>> {
    let mut equations = Vec::new();
    for r in synthesized {
        for (lhs, rhs) in instances(r, macros).unwrap_or_default() {
            equations.push(Equation { lhs, rhs });
        }
    }
    let per_rule: Vec<Option<Vec<Pair>>> = hand.iter().map(|r| instances(r, macros)).collect();
    let terms: Vec<Rc<Expr>> = per_rule
        .iter()
        .flatten()
        .flatten()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let mut deriver = Deriver::new(&terms, &equations)?;
    let mut out = Vec::new();
    for (r, inst) in hand.iter().zip(per_rule) {
        let verdict = match inst {
            None => {
                let same = synthesized.iter().any(|s| shape(s) == shape(r));
                if same {
                    Rederivation::Derived
                } else {
                    Rederivation::PredicatedNotDerived
                }
            }
            Some(pairs) if pairs.iter().all(|(a, b)| a == b) => Rederivation::Definitional,
            Some(pairs) if !pairs.is_empty() && pairs.iter().all(|(a, b)| deriver.equal(a, b)) => {
                Rederivation::Derived
            }
            Some(_) => Rederivation::NotDerived,
        };
        out.push(Rederived {
            rule: r.name.clone(),
            verdict,
        });
    }
    Ok(out)
}
