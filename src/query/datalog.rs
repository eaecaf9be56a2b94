//! A small Datalog evaluated on datafrog: rules are text (queries/*.dl), relations are sets of
//! interned string tuples, and datafrog's variables carry the semi-naive fixpoint (each round
//! joins the recent tuples of one body atom with everything known of the others).

use crate::error::{Error, Location, Result};
use datafrog::{Iteration, Relation, Variable};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, PartialEq)]
enum Term {
    Var(String),
    Const(String),
}

#[derive(Debug, Clone)]
struct Atom {
    relation: String,
    terms: Vec<Term>,
}

/// `left != right` or `left = right` between terms of a rule body.
#[derive(Debug, Clone)]
struct Constraint {
    left: Term,
    right: Term,
    equal: bool,
}

#[derive(Debug, Clone)]
struct Rule {
    head: Atom,
    body: Vec<Atom>,
    constraints: Vec<Constraint>,
    /// Where the rule starts, for errors found after parsing (unknown relations, arities).
    loc: Location,
}

/// Parsed rules, in file order.
#[derive(Debug, Clone, Default)]
pub struct Program {
    rules: Vec<Rule>,
}

/// Interns strings so tuples are vectors of small integers.
#[derive(Debug, Default)]
pub struct Symbols {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Symbols {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), self.names.len() as u32 - 1);
        self.names.len() as u32 - 1
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// Facts by relation name: the input (from the database) and, after `run`, the derived ones.
#[derive(Debug, Default)]
pub struct Facts {
    pub symbols: Symbols,
    pub relations: HashMap<String, BTreeSet<Vec<u32>>>,
}

impl Facts {
    pub fn add(&mut self, relation: &str, tuple: &[&str]) {
        let t = tuple.iter().map(|s| self.symbols.id(s)).collect();
        self.relations
            .entry(relation.to_string())
            .or_default()
            .insert(t);
    }

    /// The tuples of a relation as strings.
    pub fn tuples(&self, relation: &str) -> Vec<Vec<&str>> {
        self.relations
            .get(relation)
            .map(|r| {
                r.iter()
                    .map(|t| t.iter().map(|&i| self.symbols.name(i)).collect())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Program {
    /// Parses `head(X, Y) :- body(X, Z), other(Z, Y), X != Y.` rules; `%` starts a comment.
    pub fn parse(text: &str, file: &str) -> Result<Program> {
        let mut rules = Vec::new();
        let mut pending = String::new();
        let mut start = 1;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('%').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if pending.is_empty() {
                start = n + 1;
            }
            pending.push_str(line);
            pending.push(' ');
            if line.ends_with('.') {
                let loc = Location {
                    file: file.to_string(),
                    line: start,
                    col: 1,
                };
                rules.push(parse_rule(pending.trim().trim_end_matches('.'), &loc)?);
                pending.clear();
            }
        }
        if !pending.trim().is_empty() {
            let loc = Location {
                file: file.to_string(),
                line: start,
                col: 1,
            };
            return Err(Error::parse(&loc, "rule does not end with '.'"));
        }
        Ok(Program { rules })
    }

    /// This program's rules followed by `more`'s (a query after the shared library).
    pub fn then(mut self, more: Program) -> Program {
        self.rules.extend(more.rules);
        self
    }

    /// Checks every relation a rule uses against the input relations (`inputs`: name and
    /// arity) and the derived ones: an unknown relation, or one used with another number of
    /// terms than it has, is an error at the rule's line.
    pub fn check(&self, inputs: &[(&str, usize)]) -> Result<()> {
        let mut arity: HashMap<&str, usize> = inputs.iter().copied().collect();
        for r in &self.rules {
            arity.entry(&r.head.relation).or_insert(r.head.terms.len());
        }
        for r in &self.rules {
            for atom in std::iter::once(&r.head).chain(&r.body) {
                let Some(&n) = arity.get(atom.relation.as_str()) else {
                    let mut known: Vec<&str> = arity.keys().copied().collect();
                    known.sort();
                    return Err(Error::parse(
                        &r.loc,
                        format!(
                            "unknown relation '{}'{}; relations: {}",
                            atom.relation,
                            crate::words::did_you_mean(&atom.relation, &known),
                            known.join(", ")
                        ),
                    ));
                };
                if atom.terms.len() != n {
                    return Err(Error::parse(
                        &r.loc,
                        format!(
                            "relation '{}' has {n} terms, used here with {}",
                            atom.relation,
                            atom.terms.len()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Only the rules `goal` depends on (through rule bodies, transitively): a query's answer
    /// need not derive every relation of the shared library.
    pub fn slice(&self, goal: &str) -> Program {
        let mut needed: BTreeSet<&str> = BTreeSet::from([goal]);
        loop {
            let before = needed.len();
            let found: Vec<&str> = self
                .rules
                .iter()
                .filter(|r| needed.contains(r.head.relation.as_str()))
                .flat_map(|r| r.body.iter().map(|a| a.relation.as_str()))
                .collect();
            needed.extend(found);
            if needed.len() == before {
                break;
            }
        }
        let rules = self
            .rules
            .iter()
            .filter(|r| needed.contains(r.head.relation.as_str()))
            .cloned()
            .collect();
        Program { rules }
    }

    /// Replaces, in the rules for `goal`, every atom of a derived, non-recursive relation by
    /// the bodies of that relation's rules: constants of the query then reach the joins, so a
    /// question about one instruction does not derive the relation for all of them.
    pub fn unfold(&self, goal: &str) -> Program {
        let derived: BTreeSet<&str> = self
            .rules
            .iter()
            .map(|r| r.head.relation.as_str())
            .collect();
        let unfoldable =
            |rel: &str| derived.contains(rel) && rel != goal && !self.reaches(rel, rel);
        let mut done: Vec<Rule> = Vec::new();
        let mut todo: Vec<Rule> = self
            .rules
            .iter()
            .filter(|r| r.head.relation == goal)
            .cloned()
            .collect();
        let mut fresh = 0;
        while let Some(rule) = todo.pop() {
            let Some(k) = rule.body.iter().position(|a| unfoldable(&a.relation)) else {
                done.push(rule);
                continue;
            };
            let atom = &rule.body[k];
            for def in self
                .rules
                .iter()
                .filter(|d| d.head.relation == atom.relation)
            {
                fresh += 1;
                let rename = |t: &Term| -> Term {
                    match t {
                        Term::Var(v) => match def
                            .head
                            .terms
                            .iter()
                            .position(|h| *h == Term::Var(v.clone()))
                        {
                            Some(i) => atom.terms[i].clone(),
                            None => Term::Var(format!("_{fresh}_{v}")),
                        },
                        c => c.clone(),
                    }
                };
                let mut body = rule.body.clone();
                body.splice(
                    k..=k,
                    def.body.iter().map(|a| Atom {
                        relation: a.relation.clone(),
                        terms: a.terms.iter().map(rename).collect(),
                    }),
                );
                let mut constraints = rule.constraints.clone();
                constraints.extend(def.constraints.iter().map(|c| Constraint {
                    left: rename(&c.left),
                    right: rename(&c.right),
                    equal: c.equal,
                }));
                todo.push(Rule {
                    head: rule.head.clone(),
                    body,
                    constraints,
                    loc: rule.loc.clone(),
                });
            }
        }
        let mut rules = done;
        rules.extend(
            self.rules
                .iter()
                .filter(|r| r.head.relation != goal)
                .cloned(),
        );
        Program { rules }.slice(goal)
    }

    /// Whether relation `to` is derived, directly or not, from `from`'s rules.
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(rel) = stack.pop() {
            for r in self.rules.iter().filter(|r| r.head.relation == rel) {
                for a in &r.body {
                    if a.relation == to {
                        return true;
                    }
                    if seen.insert(a.relation.as_str()) {
                        stack.push(&a.relation);
                    }
                }
            }
        }
        false
    }

    /// Derives every head relation to a fixpoint, adding them to `facts`.
    pub fn run(&self, facts: &mut Facts) {
        let mut iteration = Iteration::new();
        let mut vars: HashMap<String, Variable<Vec<u32>>> = HashMap::new();
        let names: BTreeSet<&str> = self
            .rules
            .iter()
            .flat_map(|r| std::iter::once(&r.head).chain(&r.body))
            .map(|a| a.relation.as_str())
            .collect();
        for name in names {
            let var = iteration.variable::<Vec<u32>>(name);
            if let Some(known) = facts.relations.get(name) {
                var.extend(known.iter().cloned());
            }
            vars.insert(name.to_string(), var);
        }
        let consts: Vec<Vec<Option<u32>>> = self
            .rules
            .iter()
            .map(|r| {
                r.body
                    .iter()
                    .flat_map(|a| &a.terms)
                    .chain(r.constraints.iter().flat_map(|c| [&c.left, &c.right]))
                    .map(|t| match t {
                        Term::Const(c) => Some(facts.symbols.id(c)),
                        Term::Var(_) => None,
                    })
                    .collect()
            })
            .collect();
        while iteration.changed() {
            for (rule, consts) in self.rules.iter().zip(&consts) {
                let derived = derive(rule, consts, &vars);
                vars[&rule.head.relation].insert(Relation::from_vec(derived));
            }
        }
        for (name, var) in vars {
            let all: BTreeSet<Vec<u32>> = var.complete().elements.into_iter().collect();
            facts.relations.insert(name, all);
        }
    }
}

/// New head tuples for one rule: for each body position, its recent tuples joined with the
/// tuples of the other atoms (semi-naive). Variables live in slots (`UNBOUND` until an atom binds them).
fn derive(
    rule: &Rule,
    consts: &[Option<u32>],
    vars: &HashMap<String, Variable<Vec<u32>>>,
) -> Vec<Vec<u32>> {
    const UNBOUND: u32 = u32::MAX;
    let mut names: Vec<String> = Vec::new();
    let mut slot = |t: &Term| -> Option<usize> {
        let Term::Var(v) = t else { return None };
        Some(names.iter().position(|n| n == v).unwrap_or_else(|| {
            names.push(v.clone());
            names.len() - 1
        }))
    };
    // Per body atom and term: the slot of a variable or the constant's id.
    let mut const_at = consts.iter();
    let atoms: Vec<Vec<(Option<usize>, Option<u32>)>> = rule
        .body
        .iter()
        .map(|a| {
            a.terms
                .iter()
                .map(|t| (slot(t), *const_at.next().unwrap()))
                .collect()
        })
        .collect();
    let constraints: Vec<[(Option<usize>, Option<u32>); 2]> = rule
        .constraints
        .iter()
        .map(|c| {
            [
                (slot(&c.left), *const_at.next().unwrap()),
                (slot(&c.right), *const_at.next().unwrap()),
            ]
        })
        .collect();
    let head: Vec<Option<usize>> = rule.head.terms.iter().map(slot).collect();
    let width = names.len();
    // The tuples an atom sees while `delta` takes the recent ones: earlier atoms see only the
    // stable tuples and later ones everything, so each combination is derived once.
    let snapshot = |name: &str, stable: bool, recent: bool| -> Vec<Vec<u32>> {
        let v = &vars[name];
        let mut out: Vec<Vec<u32>> = if recent {
            v.recent.borrow().elements.clone()
        } else {
            Vec::new()
        };
        if stable {
            for batch in v.stable.borrow().iter() {
                out.extend(batch.elements.iter().cloned());
            }
        }
        out
    };
    let mut out = Vec::new();
    for delta in 0..rule.body.len() {
        // An atom that sees no tuples at this position makes the whole join empty (in the first
        // round every earlier atom's stable part is still empty).
        let seen = |i: usize| {
            let v = &vars[&rule.body[i].relation];
            let stable: usize = if i != delta {
                v.stable.borrow().iter().map(|r| r.len()).sum()
            } else {
                0
            };
            stable
                + if i >= delta {
                    v.recent.borrow().len()
                } else {
                    0
                }
        };
        if (0..rule.body.len()).any(|i| seen(i) == 0) {
            continue;
        }
        let mut bindings: Vec<Vec<u32>> = vec![vec![UNBOUND; width]];
        let mut bound = vec![false; width];
        for (i, (atom, terms)) in rule.body.iter().zip(&atoms).enumerate() {
            let table = snapshot(&atom.relation, i != delta, i >= delta);
            // Hash join on the terms already known: constants and variables bound earlier.
            let keyed: Vec<usize> = (0..terms.len())
                .filter(|&k| terms[k].0.is_none_or(|s| bound[s]))
                .collect();
            let mut index: HashMap<Vec<u32>, Vec<&Vec<u32>>> = HashMap::new();
            for t in table.iter().filter(|t| t.len() == terms.len()) {
                index
                    .entry(keyed.iter().map(|&k| t[k]).collect())
                    .or_default()
                    .push(t);
            }
            let mut next = Vec::new();
            for b in &bindings {
                let key: Vec<u32> = keyed
                    .iter()
                    .map(|&k| match terms[k] {
                        (Some(s), _) => b[s],
                        (None, c) => c.unwrap_or(UNBOUND),
                    })
                    .collect();
                'tuple: for t in index.get(&key).into_iter().flatten() {
                    let mut nb = b.clone();
                    for (&(s, _), &v) in terms.iter().zip(t.iter()) {
                        if let Some(s) = s {
                            if nb[s] == UNBOUND {
                                nb[s] = v;
                            } else if nb[s] != v {
                                continue 'tuple;
                            }
                        }
                    }
                    next.push(nb);
                }
            }
            for &(s, _) in terms {
                if let Some(s) = s {
                    bound[s] = true;
                }
            }
            bindings = next;
        }
        let value = |b: &[u32], (s, c): (Option<usize>, Option<u32>)| s.map(|s| b[s]).or(c);
        for b in bindings {
            let ok = rule
                .constraints
                .iter()
                .zip(&constraints)
                .all(|(c, [l, r])| (value(&b, *l) == value(&b, *r)) == c.equal);
            if ok {
                if let Some(tuple) = head
                    .iter()
                    .map(|s| s.map(|s| b[s]))
                    .collect::<Option<Vec<u32>>>()
                {
                    out.push(tuple);
                }
            }
        }
    }
    out
}

fn parse_rule(text: &str, loc: &Location) -> Result<Rule> {
    let (head, body) = text
        .split_once(":-")
        .ok_or_else(|| Error::parse(loc, "expected 'head(...) :- body(...).'"))?;
    let head = parse_atom(head.trim(), loc)?;
    let mut atoms = Vec::new();
    let mut constraints = Vec::new();
    for part in split_top(body) {
        let part = part.trim();
        if let Some((l, r)) = part.split_once("!=") {
            constraints.push(Constraint {
                left: term(l.trim()),
                right: term(r.trim()),
                equal: false,
            });
        } else if !part.contains('(') && part.contains('=') {
            let (l, r) = part.split_once('=').unwrap();
            constraints.push(Constraint {
                left: term(l.trim()),
                right: term(r.trim()),
                equal: true,
            });
        } else {
            atoms.push(parse_atom(part, loc)?);
        }
    }
    if atoms.is_empty() {
        return Err(Error::parse(loc, "a rule needs at least one body atom"));
    }
    for t in &head.terms {
        if let Term::Var(v) = t {
            if !atoms.iter().flat_map(|a| &a.terms).any(|x| x == t) {
                return Err(Error::parse(
                    loc,
                    format!("head variable {v} does not occur in the body"),
                ));
            }
        } else {
            return Err(Error::parse(loc, "head terms must be variables"));
        }
    }
    Ok(Rule {
        head,
        body: atoms,
        constraints,
        loc: loc.clone(),
    })
}

/// Splits at commas outside parentheses and quotes.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut quoted) = (Vec::new(), String::new(), 0, false);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

fn parse_atom(s: &str, loc: &Location) -> Result<Atom> {
    let open = s
        .find('(')
        .ok_or_else(|| Error::parse(loc, format!("expected relation(args) in '{s}'")))?;
    let inner = s[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| Error::parse(loc, format!("expected ')' at the end of '{s}'")))?;
    let relation = s[..open].trim().to_string();
    if relation.is_empty() || !relation.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(Error::parse(loc, format!("bad relation name in '{s}'")));
    }
    Ok(Atom {
        relation,
        terms: split_top(inner).iter().map(|t| term(t.trim())).collect(),
    })
}

/// Capitalised names and `_` are variables; quoted strings and other words are constants.
fn term(s: &str) -> Term {
    if let Some(q) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Term::Const(q.to_string())
    } else if s.starts_with(|c: char| c.is_uppercase() || c == '_') {
        Term::Var(s.to_string())
    } else {
        Term::Const(s.to_string())
    }
}

#[cfg(test)]
mod tests;
