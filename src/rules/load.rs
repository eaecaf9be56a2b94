//! Reading `specs/rules/*.rules`, elaborating a rule at one element type and lane count, and the
//! rule hash.

use super::syntax::{instantiate, is_constant_wildcard, parse_rules, Rule};
use crate::error::{Error, Location, Result};
use crate::ir::expr::Op;
use crate::ir::halide::elaborate_halide;
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::{Elem, Expr, Macro, Macros, VecType};
use crate::spec::hash_text;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Predicate helpers available to rules (not idioms: they only exist here).
const PREDICATE_MACROS: [(&str, &[&str], &str); 3] = [
    ("is_pow2", &["x"], "(and (ne x 0) (eq (and x (sub x 1)) 0))"),
    ("upper_bounded", &["x", "k"], "(le x k)"),
    ("lower_bounded", &["x", "k"], "(ge x k)"),
];

/// The spec macros plus the predicate helpers.
pub fn rule_macros(spec_macros: &Macros) -> Result<Macros> {
    let mut m = spec_macros.clone();
    for (name, params, body) in PREDICATE_MACROS {
        if m.map.contains_key(name) {
            continue;
        }
        let body = read_one(body, "<rules prelude>")?;
        m.map.insert(
            name.to_string(),
            Macro {
                name: name.to_string(),
                params: params.iter().map(|p| p.to_string()).collect(),
                body,
            },
        );
    }
    Ok(m)
}

/// The rule files under `specs/rules/`, sorted.
pub fn rule_files(specs: &Path) -> Result<Vec<PathBuf>> {
    rule_files_in(&specs.join("rules"))
}

/// The `*.rules` files of a directory, sorted (none if it does not exist).
pub fn rule_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(vec![]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    out.sort();
    Ok(out)
}

/// Each file's text and the name errors show it by (its path below the project home).
pub fn read_rule_files(specs: &Path, files: &[PathBuf]) -> Result<Vec<(String, String)>> {
    files
        .iter()
        .map(|path| {
            let text = crate::error::read_text(path)?;
            let shown = path
                .strip_prefix(specs.parent().unwrap_or(specs))
                .unwrap_or(path);
            Ok((text, shown.display().to_string()))
        })
        .collect()
}

/// Parses every rule file; names are unique across files.
pub fn load_rules(specs: &Path) -> Result<Vec<Rule>> {
    let mut all: Vec<Rule> = Vec::new();
    for (text, shown) in read_rule_files(specs, &rule_files(specs)?)? {
        for r in parse_rules(&text, &shown)? {
            if let Some(o) = all.iter().find(|o| o.name == r.name) {
                let loc = Location {
                    file: r.file.clone(),
                    line: r.line,
                    col: 1,
                };
                return Err(Error::parse(
                    &loc,
                    format!("rule '{}' is also defined at {}:{}", r.name, o.file, o.line),
                ));
            }
            all.push(r);
        }
    }
    Ok(all)
}

/// One rule at one element type and lane count, ready for the prover.
pub struct Instance {
    /// The left-hand side.
    pub lhs: Rc<Expr>,
    /// The right-hand side, of the same type.
    pub rhs: Rc<Expr>,
    /// Where the rule holds: bool lanes, when it does not always.
    pub predicate: Option<Rc<Expr>>,
}

/// The element types to check a rule at (one `None` for a monomorphic rule).
pub fn rule_types(rule: &Rule) -> Vec<Option<Elem>> {
    if rule.types.is_empty() {
        vec![None]
    } else {
        rule.types.iter().map(|t| Some(*t)).collect()
    }
}

/// Elaborates a rule at `T = t` with variables of `lanes` lanes; errors point into the rule file.
pub fn elaborate(rule: &Rule, t: Option<Elem>, lanes: u32, macros: &Macros) -> Result<Instance> {
    let part = |text: &str, col: usize| -> Result<Rc<Expr>> {
        let at = Location {
            file: rule.file.clone(),
            line: rule.line,
            col,
        };
        let inst = instantiate(text, t).map_err(|m| Error::ty(&at, m))?;
        let e = elaborate_halide(&inst, &rule.file, macros, lanes)
            .map_err(|e| relocate(e, rule, col, t))?;
        Ok(broadcast_constants(&e))
    };
    let lhs = part(&rule.lhs, rule.lhs_col)?;
    let rhs = part(&rule.rhs, rule.rhs_col)?;
    let at = |col| Location {
        file: rule.file.clone(),
        line: rule.line,
        col,
    };
    let tname = t.map_or(String::new(), |t| format!(" (T = {t})"));
    if lhs.ty != rhs.ty {
        return Err(Error::ty(
            &at(rule.rhs_col),
            format!(
                "the sides have different types{tname}: {} and {}",
                lhs.ty, rhs.ty
            ),
        ));
    }
    let predicate = match &rule.predicate {
        Some(p) => {
            let e = part(p, rule.pred_col)?;
            if e.ty.elem != Elem::Bool {
                return Err(Error::ty(
                    &at(rule.pred_col),
                    format!("the predicate is {}, not bool lanes{tname}", e.ty),
                ));
            }
            Some(e)
        }
        None => None,
    };
    // Every variable is bound: the right-hand side's by the left-hand side or the predicate
    // (`c1` with `c0 == 1 << c1`), the predicate's by one of the sides. A predicate naming a
    // variable of neither constrains nothing the rule rewrites, and would be proven vacuously.
    let names = |e: Option<&Rc<Expr>>| -> Vec<String> {
        e.map(|e| e.vars().into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default()
    };
    let (in_lhs, in_rhs, in_pred) = (
        names(Some(&lhs)),
        names(Some(&rhs)),
        names(predicate.as_ref()),
    );
    let unbound = |of: &[String], by: [&[String]; 2]| {
        of.iter()
            .find(|n| !by.iter().any(|b| b.contains(n)))
            .cloned()
    };
    if let Some(v) = unbound(&in_rhs, [&in_lhs, &in_pred]) {
        return Err(Error::parse(
            &at(rule.rhs_col),
            format!("'{v}' is bound by neither the left-hand side nor the predicate{tname}"),
        ));
    }
    if let Some(v) = unbound(&in_pred, [&in_lhs, &in_rhs]) {
        return Err(Error::parse(
            &at(rule.pred_col),
            format!("the predicate names '{v}', which is in neither side of the rule{tname}"),
        ));
    }
    if let Some(p) = &predicate {
        if p.ty.lanes != lhs.ty.lanes {
            return Err(Error::ty(
                &at(rule.pred_col),
                format!(
                    "the predicate has {} lanes, the rule {}",
                    p.ty.lanes, lhs.ty.lanes
                ),
            ));
        }
    }
    Ok(Instance {
        lhs,
        rhs,
        predicate,
    })
}

/// Moves an error in an expression (line 1 of its own text) to the rule's line and column.
fn relocate(e: Error, rule: &Rule, col: usize, t: Option<Elem>) -> Error {
    let fix = |loc: Location| Location {
        file: rule.file.clone(),
        line: rule.line,
        col: if loc.line <= 1 {
            col + loc.col.saturating_sub(1)
        } else {
            col
        },
    };
    let tname = t.map_or(String::new(), |t| format!(" (T = {t})"));
    match e {
        Error::Parse { loc, msg } => Error::Parse {
            loc: fix(loc),
            msg: format!("{msg}{tname} (reading a Halide-style expression)"),
        },
        Error::Type { loc, msg } => Error::Type {
            loc: fix(loc),
            msg: format!("{msg}{tname}"),
        },
        other => other,
    }
}

/// Replaces each constant wildcard (an N-lane variable `c0_T`) by one scalar broadcast to N lanes.
pub fn broadcast_constants(e: &Rc<Expr>) -> Rc<Expr> {
    let mut map: HashMap<String, Rc<Expr>> = HashMap::new();
    for (name, ty) in e.vars() {
        if is_constant_wildcard(&name) && ty.lanes > 1 {
            let scalar = Rc::new(Expr::var(&name, VecType::new(1, ty.elem)));
            map.insert(
                name,
                Rc::new(Expr {
                    op: Op::Broadcast(ty.lanes),
                    ty,
                    args: vec![scalar],
                }),
            );
        }
    }
    if map.is_empty() {
        e.clone()
    } else {
        e.substitute(&map)
    }
}

/// The rule's hash: its text and the text of every macro it uses, transitively.
pub fn rule_hash(rule: &Rule, macros: &Macros) -> String {
    let mut used = BTreeSet::new();
    let mut stack: Vec<String> = words(&rule.text);
    while let Some(w) = stack.pop() {
        if let Some(m) = macros.map.get(&w) {
            if used.insert(w.clone()) {
                collect_syms(&m.body, &mut stack);
            }
        }
    }
    let mut text = format!("rule {}\n", rule.text);
    for name in used {
        let m = &macros.map[&name];
        text.push_str(&format!("({name} ({}) {})\n", m.params.join(" "), m.body));
    }
    hash_text(&text)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn collect_syms(s: &SExpr, out: &mut Vec<String>) {
    match &s.kind {
        SKind::Sym(n) => out.push(n.clone()),
        SKind::List(items) => items.iter().for_each(|i| collect_syms(i, out)),
        _ => {}
    }
}
