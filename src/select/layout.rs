//! Lane layout, for targets whose widening instructions leave a register pair dealt (even lanes
//! in the low register, odd lanes in the high one: HVX vzxt, vmpa, vmpy) and whose narrowing
//! instructions interleave (vasr, vshuffe). The even and odd lanes of every lane-wise value
//! become e-graph nodes, so instructions that make or take dealt values can be selected, with
//! one shuffle where the natural order comes back.

use super::term::{ground, type_name};
use crate::ir::{Expr, Op, VecType};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::rc::Rc;

/// Lane-wise constructors whose operands have the result's type.
const LANEWISE: [(&str, usize); 14] = [
    ("Add", 2),
    ("Sub", 2),
    ("Mul", 2),
    ("Div", 2),
    ("Min", 2),
    ("Max", 2),
    ("And", 2),
    ("Or", 2),
    ("Xor", 2),
    ("Shl", 2),
    ("Shr", 2),
    ("Neg", 1),
    ("Not", 1),
    ("Abs", 1),
];

/// The types whose even and odd lanes selection may need: every type in play, halved.
pub fn halves(types: &BTreeSet<VecType>) -> BTreeSet<VecType> {
    types
        .iter()
        .filter(|t| t.lanes.is_multiple_of(2))
        .map(|t| t.with_lanes(t.lanes / 2))
        .collect()
}

/// The layout rules (ruleset `lower`) over `types`: a `half-of` table, the even and odd lanes
/// of lane-wise operations and constants, dealing as a lane-wise map, and the registers of a
/// dealt pair.
pub fn rules(types: &BTreeSet<VecType>) -> String {
    let mut out = String::from(
        "(function half-of (String) String :merge old)\n(function lanes-of (String) i64 :merge old)\n",
    );
    for t in types.iter().filter(|t| t.lanes.is_multiple_of(2)) {
        let h = t.with_lanes(t.lanes / 2);
        writeln!(
            out,
            "(set (half-of \"{}\") \"{}\")\n(set (lanes-of \"{}\") {})",
            type_name(*t),
            type_name(h),
            type_name(h),
            h.lanes
        )
        .expect("string write");
    }
    let dealt =
        |x: &str, t: &str, h: &str| format!("(Concat {t} (Slice {h} 0 2 {x}) (Slice {h} 1 2 {x}))");
    for (op, arity) in LANEWISE {
        let vars: Vec<&str> = ["x", "y"][..arity].to_vec();
        let lanes_of = |s: &str| -> String {
            vars.iter()
                .map(|v| format!("(Slice h {s} 2 {v})"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let node = format!("({op} t {})", vars.join(" "));
        writeln!(
            out,
            "(rewrite (Slice h s 2 {node}) ({op} h {}) :ruleset lower)",
            lanes_of("s")
        )
        .expect("string write");
        let dealt_args: Vec<String> = vars.iter().map(|v| dealt(v, "t", "h")).collect();
        writeln!(
            out,
            "(rewrite {} ({op} t {}) :ruleset lower)",
            dealt(&node, "t", "h"),
            dealt_args.join(" ")
        )
        .expect("string write");
    }
    for op in ["Cast", "SatCast"] {
        let node = format!("({op} t x)");
        writeln!(
            out,
            "(rule ((= e (Slice h s 2 {node})) (= hx (half-of (type-of x))))\n      ((union e ({op} h (Slice hx s 2 x)))) :ruleset lower)",
        )
        .expect("string write");
        writeln!(
            out,
            "(rule ((= e {}) (= tx (type-of x)) (= hx (half-of tx)))\n      ((union e ({op} t {}))) :ruleset lower)",
            dealt(&node, "t", "h"),
            dealt("x", "tx", "hx")
        )
        .expect("string write");
    }
    out.push_str(LAYOUT_RULES);
    out
}

const LAYOUT_RULES: &str = r#"(rewrite (Slice h s 2 (Const t c)) (Const h c) :ruleset lower)
(rewrite (Concat t (Const h c) (Const h c)) (Const t c) :ruleset lower)
(rule ((= e (Slice h 0 2 x)) (= t (type-of x)))
      ((union e (Lanes h 0 (Concat t (Slice h 0 2 x) (Slice h 1 2 x))))) :ruleset lower)
(rule ((= e (Slice h 1 2 x)) (= t (type-of x)) (= n (lanes-of h)))
      ((union e (Lanes h n (Concat t (Slice h 0 2 x) (Slice h 1 2 x))))) :ruleset lower)
(rule ((= e (Lanes h 0 (Concat t a b))) (= h (type-of a))) ((union e a)) :ruleset lower)
(rule ((= e (Lanes h n (Concat t a b))) (= n (lanes-of h)) (= h (type-of b))) ((union e b)) :ruleset lower)
"#;

/// The input at twice its lanes with every variable read twice (`concat(v, v)`), when the
/// result is half a register: the whole register an instruction can write, whose low half is
/// the result.
pub fn doubled(input: &Rc<Expr>, register_bits: u32) -> Option<Rc<Expr>> {
    (2 * input.ty.bits() == register_bits)
        .then(|| double(input))
        .flatten()
}

fn double(e: &Rc<Expr>) -> Option<Rc<Expr>> {
    let built = match &e.op {
        Op::Var(_) => Expr::build(Op::Concat, vec![e.clone(), e.clone()]),
        Op::Const(v) if v.len() == 1 => {
            Ok(Expr::constant(e.ty.with_lanes(2 * e.ty.lanes), v.clone()))
        }
        op if op.is_lanewise() || matches!(op, Op::ReduceAdd(_)) => {
            let args = e.args.iter().map(double).collect::<Option<Vec<_>>>()?;
            Expr::build(e.op.clone(), args)
        }
        _ => return None,
    };
    built.ok().map(Rc::new)
}

/// `term` (of type `ty`) is the interleave of its even and odd lanes.
fn interleave_of_halves(term: &str, ty: VecType) -> String {
    let (t, h) = (type_name(ty), type_name(ty.with_lanes(ty.lanes / 2)));
    format!("(union {term} (Interleave \"{t}\" (Slice \"{h}\" 0 2 {term}) (Slice \"{h}\" 1 2 {term})))\n")
}

/// Facts about the input: a pair-sized variable is its two registers, the result is the
/// interleave of its even and odd lanes, and a result of half a register is the low half of
/// a register holding it twice (the input computed on its variables read twice).
pub fn facts(input: &Rc<Expr>, register_bits: u32) -> Result<String, String> {
    let mut out = String::new();
    let ty = input.ty;
    let root = ground(input)?;
    for (name, t) in input
        .vars()
        .iter()
        .filter(|(_, t)| t.bits() == 2 * register_bits)
    {
        let h = t.with_lanes(t.lanes / 2);
        writeln!(
            out,
            "(union (Var \"{}\" \"{name}\") (Concat \"{}\" (Part \"{}\" \"{name}\" 0) (Part \"{}\" \"{name}\" {})))",
            type_name(*t),
            type_name(*t),
            type_name(h),
            type_name(h),
            h.lanes
        )
        .expect("string write");
    }
    if ty.lanes.is_multiple_of(2) && ty.bits() >= register_bits {
        out.push_str(&interleave_of_halves(&root, ty));
    }
    if 2 * ty.bits() == register_bits {
        let twice = format!(
            "(Concat \"{}\" {root} {root})",
            type_name(ty.with_lanes(2 * ty.lanes))
        );
        writeln!(
            out,
            "(union {root} (Lanes \"{}\" 0 {twice}))",
            type_name(ty)
        )
        .expect("string write");
        if let Some(d) = doubled(input, register_bits) {
            let whole = ground(&d)?;
            writeln!(out, "(union {twice} {whole})").expect("string write");
            out.push_str(&interleave_of_halves(&whole, d.ty));
        }
    }
    Ok(out)
}
