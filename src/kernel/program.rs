//! The egglog program of one compilation, generated from the database: the dialect's datatypes
//! at the target's vector width, one ruleset per phase holding that phase's proven rules
//! instantiated at the width, and the program being compiled as `let` bindings (shared
//! sub-terms bound once). The kernel's outputs enter as Diospyros's partition of its `List`: a
//! chain of `Concat`s of `Vec`s of `width` outputs, the last padded with zeros.

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
         (datatype L (LNil) (Concat V L))\n"
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

/// `let` bindings for the terms rooted at `roots` (each distinct node once); returns the text
/// and the binding name of each root. A `List` of scalar outputs becomes its partition into
/// `Vec`s (zero-padded); a `Concat` of vectors a chunk list.
pub fn bindings(dag: &Dag, roots: &[Id], width: usize, prefix: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut names: HashMap<Id, String> = HashMap::new();
    let name = |id: Id| format!("{prefix}{id}");
    for id in dag.reachable(roots) {
        let args: Vec<String> = dag.args(id).iter().map(|a| names[a].clone()).collect();
        let text = match dag.op(id) {
            Op::Num(n) => format!("(Num {n})"),
            Op::Get(a, i) => format!("(Get {a} {i})"),
            Op::List => {
                let mut list = "(LNil)".to_string();
                for chunk in (0..args.len().div_ceil(width)).rev() {
                    let lanes: Vec<String> = (chunk * width..(chunk + 1) * width)
                        .map(|k| args.get(k).cloned().unwrap_or_else(|| "(Num 0)".into()))
                        .collect();
                    list = format!("(Concat (Vec {}) {list})", lanes.join(" "));
                }
                list
            }
            Op::Concat => {
                let tail = if dag.op(dag.args(id)[1]) == Op::Concat {
                    args[1].clone()
                } else {
                    format!("(Concat {} (LNil))", args[1])
                };
                format!("(Concat {} {tail})", args[0])
            }
            op => format!("({} {})", constructor(op), args.join(" ")),
        };
        writeln!(out, "(let {} {text})", name(id)).expect("string write");
        names.insert(id, name(id));
    }
    let roots = roots.iter().map(|r| names[r].clone()).collect();
    (out, roots)
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
