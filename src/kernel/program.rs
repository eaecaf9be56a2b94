//! The egglog program of one compilation, generated from the database: the dialect's datatypes
//! at the target's vector width, one ruleset per phase holding that phase's proven rules
//! instantiated at the width, and the program being compiled as e-nodes (each distinct node
//! once), added through egglog's API and recorded as `let` bindings. The kernel's outputs enter
//! as Diospyros's partition of its `List`: a chain of `Concat`s of `Vec`s of `width` outputs,
//! the last padded with zeros.

use super::phase::Phase;
use super::rule::{instantiate, KernelRule, Term};
use super::term::{Dag, Id, Op};
use std::collections::HashMap;
use std::fmt::Write;

/// The egglog constructor of a dialect operator.
pub fn constructor(op: Op) -> &'static str {
    match op {
        Op::Num(_) => "Num",
        Op::Get(..) => "Get",
        Op::Add => "Add",
        Op::Sub => "Sub",
        Op::Mul => "Mul",
        Op::Div => "Div",
        Op::Neg => "Neg",
        Op::Sqrt => "Sqrt",
        Op::Sgn => "Sgn",
        Op::Concat => "Concat",
        other => other.name(),
    }
}

/// Datatypes: scalars `S`, vectors `V` of `width` lanes, output lists `L`. `VecVar` is an opaque
/// vector: a rule's vector wildcard when rule synthesis asks what the rules derive.
pub fn declarations(width: usize) -> String {
    let lanes = vec!["S"; width].join(" ");
    format!(
        "(datatype S (Num i64) (Get i64 i64) (Add S S) (Sub S S) (Mul S S) (Div S S) (Neg S) (Sqrt S) (Sgn S))\n\
         (datatype V (Vec {lanes}) (VecVar i64) (VecAdd V V) (VecMinus V V) (VecMul V V) (VecDiv V V) (VecMAC V V V) (VecNeg V) (VecSqrt V) (VecSgn V))\n\
         (datatype L (LNil) (Concat V L))\n\
         (function Root (i64) L :no-merge)\n"
    )
}

/// A rule instantiated at the width, as egglog text.
fn term_text(t: &Term, out: &mut String) {
    match t {
        Term::Wild(w) => out.push_str(w),
        Term::Num(n) => write!(out, "(Num {n})").expect("string write"),
        Term::App(op, args) => {
            write!(out, "({}", constructor(*op)).expect("string write");
            for a in args {
                out.push(' ');
                term_text(a, out);
            }
            out.push(')');
        }
    }
}

/// The rulesets and rewrites of the phased rules at `width`.
pub fn rules(rules: &[(KernelRule, Phase)], width: usize) -> String {
    let mut out = String::new();
    for p in Phase::ALL {
        writeln!(out, "(ruleset {})", p.name()).expect("string write");
    }
    for (r, phase) in rules {
        out.push_str(&rewrite(r, *phase, width));
    }
    out
}

/// One rule's rewrite into its phase's ruleset at `width`, after a comment naming it.
pub fn rewrite(r: &KernelRule, phase: Phase, width: usize) -> String {
    let (mut l, mut rr) = (String::new(), String::new());
    term_text(&instantiate(&r.lhs, width), &mut l);
    term_text(&instantiate(&r.rhs, width), &mut rr);
    format!(
        "; {} ({})\n(rewrite {l} {rr} :ruleset {})\n",
        r.name,
        r.provenance,
        phase.name()
    )
}

/// An argument of an e-node to add: an earlier node of the same [`Terms`] or an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    Node(usize),
    Int(i64),
}

/// An e-node to add: its egglog constructor and arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TermNode {
    pub constructor: &'static str,
    pub args: Vec<Arg>,
}

/// The program being compiled as distinct e-nodes, operands before their users. The `roots`
/// are to be unioned; `lists[k]` is root k as an output list (a lone vector `v` as `(Concat v
/// (LNil))`, which extraction reads back as `v`), the node bound to `(Root k)`.
#[derive(Debug, Default)]
pub struct Terms {
    pub nodes: Vec<TermNode>,
    pub roots: Vec<usize>,
    pub lists: Vec<usize>,
}

impl Terms {
    /// The node `constructor(args)`, added once.
    fn node(&mut self, seen: &mut HashMap<TermNode, usize>, n: TermNode) -> usize {
        *seen.entry(n.clone()).or_insert_with(|| {
            self.nodes.push(n);
            self.nodes.len() - 1
        })
    }

    /// The terms as egglog commands: a node used twice or more is bound once by `let`, the
    /// others written in place; then the roots set and unioned.
    pub fn text(&self, prefix: &str) -> String {
        let mut uses = vec![0usize; self.nodes.len()];
        for n in &self.nodes {
            for a in &n.args {
                if let Arg::Node(i) = a {
                    uses[*i] += 1;
                }
            }
        }
        let mut out = String::new();
        let mut texts: Vec<String> = Vec::with_capacity(self.nodes.len());
        for (k, n) in self.nodes.iter().enumerate() {
            let mut text = format!("({}", n.constructor);
            for a in &n.args {
                match a {
                    Arg::Node(i) => write!(text, " {}", texts[*i]),
                    Arg::Int(x) => write!(text, " {x}"),
                }
                .expect("string write");
            }
            text.push(')');
            let bound = uses[k] > 1 && !n.args.iter().all(|a| matches!(a, Arg::Int(_)));
            if bound || self.roots.contains(&k) {
                let name = format!("{prefix}{k}");
                writeln!(out, "(let {name} {text})").expect("string write");
                text = name;
            }
            texts.push(text);
        }
        for (k, l) in self.lists.iter().enumerate() {
            writeln!(out, "(set (Root {k}) {})", texts[*l]).expect("string write");
        }
        if let [a, b, ..] = self.roots[..] {
            writeln!(out, "(union {} {})", texts[a], texts[b]).expect("string write");
        }
        out
    }
}

/// The terms rooted at `roots`, each distinct node once. A `List` of scalar outputs becomes its
/// partition into `Vec`s (zero-padded); a `Concat` of vectors a chunk list.
pub fn terms(dag: &Dag, roots: &[Id], width: usize) -> Terms {
    let mut t = Terms::default();
    let mut seen: HashMap<TermNode, usize> = HashMap::new();
    let mut index: HashMap<Id, usize> = HashMap::new();
    let app = |constructor: &'static str, args: Vec<Arg>| TermNode { constructor, args };
    for id in dag.reachable(roots) {
        let args: Vec<Arg> = dag.args(id).iter().map(|a| Arg::Node(index[a])).collect();
        let node = match dag.op(id) {
            Op::Num(n) => t.node(&mut seen, app("Num", vec![Arg::Int(n)])),
            Op::Get(a, i) => t.node(
                &mut seen,
                app("Get", vec![Arg::Int(a as i64), Arg::Int(i as i64)]),
            ),
            Op::List => {
                let zero = t.node(&mut seen, app("Num", vec![Arg::Int(0)]));
                let mut list = t.node(&mut seen, app("LNil", vec![]));
                for chunk in (0..args.len().div_ceil(width)).rev() {
                    let lanes: Vec<Arg> = (chunk * width..(chunk + 1) * width)
                        .map(|k| args.get(k).copied().unwrap_or(Arg::Node(zero)))
                        .collect();
                    let v = t.node(&mut seen, app("Vec", lanes));
                    list = t.node(
                        &mut seen,
                        app("Concat", vec![Arg::Node(v), Arg::Node(list)]),
                    );
                }
                list
            }
            Op::Concat => {
                let tail = if dag.op(dag.args(id)[1]) == Op::Concat {
                    args[1]
                } else {
                    let nil = t.node(&mut seen, app("LNil", vec![]));
                    Arg::Node(t.node(&mut seen, app("Concat", vec![args[1], Arg::Node(nil)])))
                };
                t.node(&mut seen, app("Concat", vec![args[0], tail]))
            }
            op => t.node(&mut seen, app(constructor(op), args)),
        };
        index.insert(id, node);
    }
    t.roots = roots.iter().map(|r| index[r]).collect();
    for k in 0..t.roots.len() {
        let r = t.roots[k];
        let list = if matches!(t.nodes[r].constructor, "Concat" | "LNil") {
            r
        } else {
            let nil = t.node(&mut seen, app("LNil", vec![]));
            t.node(&mut seen, app("Concat", vec![Arg::Node(r), Arg::Node(nil)]))
        };
        t.lists.push(list);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rule::parse;

    #[test]
    fn rules_become_rewrites_at_the_width() {
        let r = parse(
            "(rule vec-mac (Vec (+ (* b c) a) ...) (VecMAC (Vec a ...) (Vec b ...) (Vec c ...)))\n\
             (rule mac-fuse (VecAdd a (VecMul b c)) (VecMAC a b c))",
            "t.rules",
        )
        .unwrap();
        let text = rules(
            &[
                (r[0].clone(), Phase::Compile),
                (r[1].clone(), Phase::Compile),
            ],
            2,
        );
        assert!(text.contains("(rewrite (Vec (Add (Mul b_0 c_0) a_0) (Add (Mul b_1 c_1) a_1)) (VecMAC (Vec a_0 a_1) (Vec b_0 b_1) (Vec c_0 c_1)) :ruleset compile)"), "{text}");
        assert!(
            text.contains("(rewrite (VecAdd a (VecMul b c)) (VecMAC a b c) :ruleset compile)"),
            "{text}"
        );
    }
}
