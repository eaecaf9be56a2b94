//! Derivability (Ruler's minimisation): an egglog e-graph holds the candidate terms (idioms
//! expanded, every node typed) and runs the rules kept so far; a candidate whose two sides end up
//! in one e-class is derivable and is not kept.

use crate::error::{Error, Result};
use crate::ir::{Expr, Op};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::rc::Rc;

/// Iterations of the kept rules before the checks.
const ITERATIONS: usize = 3;

const DECLARATIONS: &str =
    "(datatype E (V String) (K String i64) (N1 String E) (N2 String E E) (N3 String E E E))\n";

/// The e-graph text of an expression; variables become `?`-free pattern variables when
/// `pattern` is set. None for nodes of more than three operands.
pub fn encode(e: &Expr, pattern: bool) -> Option<String> {
    match &e.op {
        Op::Var(n) if pattern => Some(format!("v_{n}")),
        Op::Var(n) => Some(format!("(V \"{n}\")")),
        Op::Const(v) if v.len() == 1 => Some(format!(
            "(K \"{}\" {})",
            e.ty.elem,
            crate::ir::print::sign_extend(v[0], e.ty.elem.bits().min(64)) as i64
        )),
        Op::Const(_) => None,
        op => {
            let args: Vec<String> = e
                .args
                .iter()
                .map(|a| encode(a, pattern))
                .collect::<Option<_>>()?;
            let name = format!("{op:?}:{}:{}", e.ty, e.args[0].ty);
            let name = name.replace('"', "'");
            Some(match args.len() {
                1 => format!("(N1 \"{name}\" {})", args[0]),
                2 => format!("(N2 \"{name}\" {} {})", args[0], args[1]),
                3 => format!("(N3 \"{name}\" {} {} {})", args[0], args[1], args[2]),
                _ => return None,
            })
        }
    }
}

/// One kept equality, both sides elaborated.
#[derive(Clone)]
pub struct Equation {
    pub lhs: Rc<Expr>,
    pub rhs: Rc<Expr>,
}

/// The egglog commands of an equality used in both directions where both sides are patterns.
fn rewrite_text(eq: &Equation) -> Option<String> {
    let l = encode(&eq.lhs, true)?;
    let r = encode(&eq.rhs, true)?;
    let is_var = |e: &Expr| matches!(e.op, Op::Var(_));
    let vars_of = |e: &Expr| {
        let mut v: Vec<String> = e.vars().into_iter().map(|(n, _)| n).collect();
        v.sort();
        v
    };
    let (lv, rv) = (vars_of(&eq.lhs), vars_of(&eq.rhs));
    let covers = |a: &[String], b: &[String]| b.iter().all(|x| a.contains(x));
    let mut out = String::new();
    if !is_var(&eq.lhs) && covers(&lv, &rv) {
        writeln!(out, "(rewrite {l} {r})").ok()?;
    }
    if !is_var(&eq.rhs) && covers(&rv, &lv) {
        writeln!(out, "(rewrite {r} {l})").ok()?;
    }
    Some(out)
}

/// An e-graph of terms after running a rule set.
pub struct Deriver {
    egraph: egglog::EGraph,
    names: HashMap<String, String>,
}

impl Deriver {
    /// An e-graph holding `terms` after a few iterations of `rules`.
    pub fn new(terms: &[Rc<Expr>], rules: &[Equation]) -> Result<Deriver> {
        let mut d = Deriver {
            egraph: egglog::EGraph::default(),
            names: HashMap::new(),
        };
        let mut text = DECLARATIONS.to_string();
        let mut seen = HashSet::new();
        for line in rules
            .iter()
            .filter_map(rewrite_text)
            .flat_map(|t| t.lines().map(String::from).collect::<Vec<_>>())
        {
            if seen.insert(line.clone()) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        for t in terms {
            let Some(enc) = encode(t, false) else {
                continue;
            };
            if d.names.contains_key(&enc) {
                continue;
            }
            let name = format!("t{}", d.names.len());
            writeln!(text, "(let {name} {enc})").expect("string write");
            d.names.insert(enc, name);
        }
        writeln!(text, "(run {ITERATIONS})").expect("string write");
        d.run(&text)?;
        Ok(d)
    }

    fn run(&mut self, text: &str) -> Result<()> {
        self.egraph
            .parse_and_run_program(None, text)
            .map(|_| ())
            .map_err(|e| Error::data("egglog", e.to_string().replace('\n', " ")))
    }

    /// Whether the two terms (both added at construction) are in one e-class.
    pub fn equal(&mut self, a: &Expr, b: &Expr) -> bool {
        let (Some(ea), Some(eb)) = (encode(a, false), encode(b, false)) else {
            return false;
        };
        if ea == eb {
            return true;
        }
        let (Some(na), Some(nb)) = (self.names.get(&ea), self.names.get(&eb)) else {
            return false;
        };
        let check = format!("(check (= {na} {nb}))");
        self.egraph.parse_and_run_program(None, &check).is_ok()
    }
}
