//! Candidate equalities: terms grouped by fingerprint (and type); within a group each term is
//! paired with the group's smallest term, smallest pairs first (Ruler's candidate generation).

use super::term::Term;
use crate::ir::Elem;
use std::collections::HashMap;
use std::rc::Rc;

/// Two terms the interpreter cannot tell apart, possibly under a precondition on the inputs.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub a: Rc<Term>,
    pub b: Rc<Term>,
}

impl Candidate {
    pub fn size(&self) -> usize {
        self.a.size() + self.b.size()
    }
}

/// Groups of equal fingerprints; each group sorted smallest first (then by text).
pub fn classes(terms: &[(Rc<Term>, Vec<u128>)]) -> Vec<Vec<Rc<Term>>> {
    let mut groups: HashMap<(Elem, &Vec<u128>), Vec<Rc<Term>>> = HashMap::new();
    for (t, fp) in terms {
        groups.entry((t.elem, fp)).or_default().push(t.clone());
    }
    let mut out: Vec<Vec<Rc<Term>>> = groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|mut g| {
            g.sort_by_cached_key(|t| (t.size(), t.to_string()));
            g
        })
        .collect();
    out.sort_by_cached_key(|g| (g[0].size(), g[0].to_string()));
    out
}

/// The candidate pairs of a set of classes: every member with its class's smallest member,
/// ordered by total size (then text), so small rules are considered first.
pub fn pairs(classes: &[Vec<Rc<Term>>]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = classes
        .iter()
        .flat_map(|g| {
            g[1..].iter().map(|b| Candidate {
                a: g[0].clone(),
                b: b.clone(),
            })
        })
        .collect();
    out.sort_by_cached_key(|c| (c.size(), c.a.to_string(), c.b.to_string()));
    out
}
