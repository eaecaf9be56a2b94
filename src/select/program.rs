//! The egglog program that selects instructions for one expression, generated from the
//! database: declarations, a type and bounds analysis, the lift ruleset (lift and simplify rules),
//! the target's lower ruleset (lower rules and one rule per instruction lowering), the input with
//! its splits into halves, and the schedule.

use super::catalog::{Arg, Catalog, Lowering};
use super::layout;
use super::simplify::simplify;
use super::term::{
    const_term, ground, lane_bits, lane_value, parse_type_name, type_name, wildcard, Pattern,
    CONSTRUCTORS,
};
use crate::ir::{Expr, Op, VecType};
use crate::rules::load::{elaborate, rule_types};
use crate::rules::Rule;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::rc::Rc;

/// Cost of an IR operator left in the extracted term: far above any instruction sequence.
pub const PRIMITIVE_COST: u64 = 1_000_000;
/// Extraction costs are instruction costs times this (egglog costs are integers).
pub const COST_SCALE: f64 = 10.0;
const ITERATIONS: usize = 8;

/// One rewrite in a ruleset.
#[derive(Clone)]
pub struct Rewrite {
    pub ruleset: &'static str,
    pub source: String,
    pub lhs: String,
    pub rhs: String,
    pub conditions: Vec<String>,
}

impl Rewrite {
    fn render(&self, out: &mut String) {
        let when = if self.conditions.is_empty() {
            String::new()
        } else {
            format!(" :when ({})", self.conditions.join(" "))
        };
        writeln!(out, "; {}", self.source).expect("string write");
        writeln!(
            out,
            "(rewrite {} {}{when} :ruleset {})",
            self.lhs, self.rhs, self.ruleset
        )
        .expect("string write");
    }
}

/// The operator-at-type keys (`Add "u16x8`) of the IR nodes in a term or pattern.
fn node_keys(term: &str) -> impl Iterator<Item = String> + '_ {
    term.split('(').skip(1).filter_map(|piece| {
        let (name, rest) = piece.split_once(' ')?;
        let ty = rest.strip_prefix('"')?.split('"').next()?;
        (!name.starts_with("I_")).then(|| format!("{name} {ty}"))
    })
}

/// The egglog constructor of an instruction.
pub fn instruction_constructor(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("I_{clean}")
}

fn rule_rewrites(
    rule: &Rule,
    lanes: &BTreeSet<u32>,
    catalog: &Catalog,
    ruleset: &'static str,
    out: &mut Vec<Rewrite>,
    skipped: &mut Vec<String>,
) {
    for t in rule_types(rule) {
        for &l in lanes {
            let key = format!("{ruleset} {} {t:?} {l}", rule.name);
            let built = catalog
                .rewrite_cache
                .borrow_mut()
                .entry(key)
                .or_insert_with(|| rule_rewrite(rule, t, l, catalog, ruleset))
                .clone();
            match built {
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(why) => skipped.push(format!("rule {}: {why}", rule.name)),
            }
        }
    }
}

/// One rule at `T = t` and `lanes`; None when it does not elaborate there.
fn rule_rewrite(
    rule: &Rule,
    t: Option<crate::ir::Elem>,
    lanes: u32,
    catalog: &Catalog,
    ruleset: &'static str,
) -> Result<Option<Rewrite>, String> {
    let Ok(inst) = elaborate(rule, t, lanes, &catalog.rule_macros) else {
        return Ok(None);
    };
    let mut p = Pattern::default();
    let lhs = p.lhs(&inst.lhs)?;
    p.finish_lhs()?;
    if let Some(pred) = &inst.predicate {
        p.predicate(pred)?;
    }
    let rhs = p.rhs(&inst.rhs)?;
    Ok(Some(Rewrite {
        ruleset,
        source: format!(
            "rule {}{} at {lanes} lanes",
            rule.name,
            t.map_or(String::new(), |t| format!(" T={t}"))
        ),
        lhs,
        rhs,
        conditions: p.conditions,
    }))
}

/// The rewrites of one lowering: scalar operands take each value among `constants` (within
/// an immediate's range), so shift amounts and multipliers fold into the pattern; a packed
/// scalar register takes two such values alternating over its lanes (one is also tried).
fn lowering_rewrites(
    l: &Lowering,
    catalog: &Catalog,
    constants: &BTreeSet<i64>,
) -> Result<Vec<Rewrite>, String> {
    let ins = &catalog.instructions[l.instruction];
    let mut choices: Vec<Vec<(String, Vec<i64>)>> = vec![vec![]];
    for (arg, op) in l.args.iter().zip(&ins.operands) {
        let (name, with_one) = match arg {
            Arg::Splat(c) => (c, false),
            Arg::Packed(c) => (c, true),
            _ => continue,
        };
        let (lo, hi) = op.imm.unwrap_or((i128::MIN, i128::MAX));
        let values: Vec<i64> = constants
            .iter()
            .copied()
            .chain(with_one.then_some(1))
            .filter(|v| (lo..=hi).contains(&(*v as i128)))
            .filter(|v| lane_value(op.ty.elem, lane_bits(op.ty.elem, *v)) == *v)
            .collect::<BTreeSet<i64>>()
            .into_iter()
            .collect();
        let lanes: Vec<Vec<i64>> = if with_one {
            let period = |p: i64, q: i64| -> Vec<i64> {
                (0..op.ty.lanes)
                    .map(|k| if k % 2 == 0 { p } else { q })
                    .collect()
            };
            values
                .iter()
                .flat_map(|p| values.iter().map(move |q| period(*p, *q)))
                .collect()
        } else {
            values.iter().map(|v| vec![*v]).collect()
        };
        choices = choices
            .into_iter()
            .flat_map(|partial| {
                lanes.iter().map(move |v| {
                    let mut next = partial.clone();
                    next.push((name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    choices
        .iter()
        .map(|values| lowering_rewrite(l, ins, values))
        .collect()
}

/// The operand an argument wildcard or constant stands for.
fn operand_of<'a>(
    l: &Lowering,
    ins: &'a crate::spec::Instruction,
    name: &str,
) -> &'a crate::spec::Operand {
    l.args
        .iter()
        .zip(&ins.operands)
        .find(|(a, _)| matches!(a, Arg::Splat(n) | Arg::Packed(n) if n == name))
        .map(|(_, op)| op)
        .expect("every value is for a scalar operand")
}

/// Lanes packed into one scalar, lane 0 in the low bits, as the i64 of a signed scalar.
fn packed_scalar(elem: crate::ir::Elem, lanes: &[i64]) -> (VecType, i64) {
    let bits = elem.bits() * lanes.len() as u32;
    let scalar = if bits > 32 {
        crate::ir::Elem::I64
    } else {
        crate::ir::Elem::I32
    };
    let packed = lanes.iter().enumerate().fold(0u128, |acc, (k, v)| {
        acc | (lane_bits(elem, *v) << (k as u32 * elem.bits()))
    });
    (VecType::new(1, scalar), lane_value(scalar, packed))
}

fn lowering_rewrite(
    l: &Lowering,
    ins: &crate::spec::Instruction,
    values: &[(String, Vec<i64>)],
) -> Result<Rewrite, String> {
    let mut map = HashMap::new();
    for (c, v) in values {
        let ty = operand_of(l, ins, c).ty;
        let elem = ty.elem;
        map.insert(
            c.clone(),
            Rc::new(Expr::constant(
                ty.with_lanes(v.len() as u32),
                v.iter().map(|x| lane_bits(elem, *x)).collect(),
            )),
        );
    }
    let pattern = simplify(&l.pattern.substitute(&map));
    let mut p = Pattern::default();
    let lhs = p.lhs(&pattern)?;
    p.finish_lhs()?;
    let bound = |name: &str, ty: VecType| -> Result<String, String> {
        match p.wildcards.get(name) {
            None => Err(format!("operand {name} is not in the pattern")),
            Some(t) if *t != ty => Ok(format!(
                "(Reinterpret \"{}\" {})",
                type_name(ty),
                wildcard(name)
            )),
            Some(_) => Ok(wildcard(name)),
        }
    };
    let value = |c: &str| {
        values
            .iter()
            .find(|(n, _)| n == c)
            .map(|(_, v)| v.clone())
            .expect("a value per scalar operand")
    };
    let mut args = Vec::new();
    for (arg, op) in l.args.iter().zip(&ins.operands) {
        args.push(match arg {
            Arg::Wildcard(name) => bound(name, op.ty)?,
            Arg::Pair(lo, hi) => {
                let half = op.ty.with_lanes(op.ty.lanes / 2);
                format!(
                    "(Pair \"{}\" {} {})",
                    type_name(op.ty),
                    bound(lo, half)?,
                    bound(hi, half)?
                )
            }
            Arg::Splat(c) => const_term(op.ty, &value(c)[0].to_string()),
            Arg::Packed(c) => {
                let (scalar, packed) = packed_scalar(op.ty.elem, &value(c));
                format!(
                    "(Reinterpret \"{}\" {})",
                    type_name(op.ty),
                    const_term(scalar, &packed.to_string())
                )
            }
            Arg::Fixed(v) => const_term(op.ty, &v.to_string()),
        });
    }
    let call = format!(
        "({} {})",
        instruction_constructor(&ins.name),
        args.join(" ")
    );
    let shown: Vec<String> = values
        .iter()
        .map(|(_, v)| {
            let lanes: Vec<String> = v.iter().map(i64::to_string).collect();
            lanes.join(" ")
        })
        .collect();
    Ok(Rewrite {
        ruleset: "lower",
        source: if shown.is_empty() {
            l.source.clone()
        } else {
            format!("{} with scalar operands {}", l.source, shown.join(", "))
        },
        lhs,
        rhs: if pattern.ty == ins.result {
            call
        } else {
            format!("(Reinterpret \"{}\" {call})", type_name(pattern.ty))
        },
        conditions: p.conditions,
    })
}

/// The two halves of `e` (lanes `[0, n/2)` and `[n/2, n)`), down to the variables, when every
/// node is lane-wise and each half keeps at least `min_bits`.
pub fn halves(e: &Rc<Expr>, min_bits: u32) -> Option<(Rc<Expr>, Rc<Expr>)> {
    let widest = e
        .args
        .iter()
        .map(|a| a.ty.bits())
        .fold(e.ty.bits(), u32::max);
    if !e.ty.lanes.is_multiple_of(2) || widest / 2 < min_bits {
        return None;
    }
    let half = |start: u32| -> Option<Rc<Expr>> { half_of(e, start) };
    Some((half(0)?, half(e.ty.lanes / 2)?))
}

fn half_of(e: &Rc<Expr>, start_lane: u32) -> Option<Rc<Expr>> {
    let lanes = e.ty.lanes / 2;
    let ty = e.ty.with_lanes(lanes);
    if !e.ty.lanes.is_multiple_of(2) {
        return None;
    }
    match &e.op {
        Op::Var(_) => Some(Rc::new(Expr {
            op: Op::Slice {
                start: start_lane,
                stride: 1,
                lanes,
            },
            ty,
            args: vec![e.clone()],
        })),
        Op::Const(v) if v.len() == 1 => Some(Rc::new(Expr::constant(ty, v.clone()))),
        Op::Slice {
            start, stride: 1, ..
        } if matches!(e.args[0].op, Op::Var(_)) => Some(Rc::new(Expr {
            op: Op::Slice {
                start: start + start_lane,
                stride: 1,
                lanes,
            },
            ty,
            args: e.args.clone(),
        })),
        Op::ReduceAdd(k) => {
            let arg = half_of(&e.args[0], start_lane * k)?;
            Some(Rc::new(Expr::build(Op::ReduceAdd(*k), vec![arg]).ok()?))
        }
        op if op.is_lanewise() => {
            let args = e
                .args
                .iter()
                .map(|a| half_of(a, start_lane))
                .collect::<Option<Vec<_>>>()?;
            Some(Rc::new(Expr::build(op.clone(), args).ok()?))
        }
        _ => None,
    }
}

/// Every node of `e` and of its halves (recursively), each with its split.
fn splits(e: &Rc<Expr>, min_bits: u32, out: &mut Vec<(Rc<Expr>, Rc<Expr>, Rc<Expr>)>) {
    let mut nodes: Vec<Rc<Expr>> = Vec::new();
    collect(e, &mut nodes);
    for n in nodes {
        if matches!(n.op, Op::Var(_) | Op::Const(_) | Op::Slice { .. }) {
            continue;
        }
        if let Some((lo, hi)) = halves(&n, min_bits) {
            if out.iter().any(|(m, _, _)| *m == n) {
                continue;
            }
            out.push((n.clone(), lo.clone(), hi.clone()));
            splits(&lo, min_bits, out);
            splits(&hi, min_bits, out);
        }
    }
}

fn collect(e: &Rc<Expr>, out: &mut Vec<Rc<Expr>>) {
    for a in &e.args {
        collect(a, out);
    }
    if !out.contains(e) {
        out.push(e.clone());
    }
}

/// A generated program and what went into it.
pub struct Program {
    pub text: String,
    pub rewrites: usize,
    /// Rules that have no e-graph form, with the reason.
    pub skipped: Vec<String>,
}

/// The whole program for `input` on the catalog's target.
pub fn program(catalog: &Catalog, input: &Rc<Expr>) -> Result<Program, String> {
    let mut split_list = Vec::new();
    splits(input, catalog.target.min_split_bits, &mut split_list);
    let mut lanes: BTreeSet<u32> = BTreeSet::new();
    let mut types: BTreeSet<String> = BTreeSet::new();
    let mut add_types = |e: &Expr| {
        e.walk(&mut |n| {
            lanes.insert(n.ty.lanes);
            types.insert(type_name(n.ty));
        })
    };
    add_types(input);
    for (_, lo, hi) in &split_list {
        add_types(lo);
        add_types(hi);
    }
    let layout = catalog.target.lane_layout;
    let doubled = layout
        .then(|| layout::doubled(input, catalog.target.register_bits))
        .flatten();
    if let Some(d) = &doubled {
        add_types(d);
    }
    if layout {
        let parsed: BTreeSet<VecType> = types.iter().filter_map(|t| parse_type_name(t)).collect();
        for h in layout::halves(&parsed) {
            lanes.insert(h.lanes);
            types.insert(type_name(h));
        }
    }
    let mut rewrites = Vec::new();
    let mut skipped = Vec::new();
    for r in &catalog.lift_rules {
        rule_rewrites(r, &lanes, catalog, "lift", &mut rewrites, &mut skipped);
    }
    for r in &catalog.simplify_rules {
        rule_rewrites(r, &lanes, catalog, "simplify", &mut rewrites, &mut skipped);
    }
    for r in &catalog.lower_rules {
        rule_rewrites(r, &lanes, catalog, "lower", &mut rewrites, &mut skipped);
    }
    let mut constants = BTreeSet::new();
    input.walk(&mut |n| {
        if let Op::Const(v) = &n.op {
            constants.extend(v.iter().map(|b| lane_value(n.ty.elem, *b)));
        }
    });
    for (i, l) in catalog.lowerings.iter().enumerate() {
        // Without scalar operands a lowering's rewrite does not depend on the input.
        let fixed = l
            .args
            .iter()
            .all(|a| !matches!(a, Arg::Splat(_) | Arg::Packed(_)));
        let built = if fixed {
            catalog
                .lowering_cache
                .borrow_mut()
                .entry(i)
                .or_insert_with(|| lowering_rewrites(l, catalog, &constants))
                .clone()
        } else {
            lowering_rewrites(l, catalog, &constants)
        };
        match built {
            Ok(rs) => rewrites.extend(rs),
            Err(why) => skipped.push(format!("{}: {why}", l.source)),
        }
    }
    // Keep the rewrites that can apply: every node their left side needs (an operator at a
    // type) is in the input or made by a rewrite that can apply.
    let mut nodes: BTreeSet<String> = BTreeSet::new();
    let ground_text = ground(input)?;
    nodes.extend(node_keys(&ground_text));
    if let Some(d) = &doubled {
        nodes.extend(node_keys(&ground(d)?));
    }
    for (n, lo, hi) in &split_list {
        nodes.insert(format!("Concat {}", type_name(n.ty)));
        nodes.extend(node_keys(&ground(lo)?));
        nodes.extend(node_keys(&ground(hi)?));
    }
    // Every type a rewrite can make, for the generated rewrites and the type ranges.
    loop {
        let before = types.len();
        for r in &rewrites {
            let made: Vec<String> = r
                .rhs
                .split('"')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect();
            types.extend(made);
        }
        types.retain(|t| parse_type_name(t).is_some());
        if types.len() == before {
            break;
        }
    }
    rewrites.extend(generated(&types));
    let parsed_types: BTreeSet<VecType> = types.iter().filter_map(|t| parse_type_name(t)).collect();
    if layout {
        // Layout rules make these at every type in play.
        for t in &parsed_types {
            for op in ["Slice", "Concat", "Interleave", "Lanes"] {
                nodes.insert(format!("{op} {}", type_name(*t)));
            }
        }
    }
    let mut live = vec![false; rewrites.len()];
    loop {
        let before = nodes.len();
        for (r, l) in rewrites.iter().zip(live.iter_mut()) {
            if !*l && node_keys(&r.lhs).all(|k| nodes.contains(&k)) {
                *l = true;
                nodes.extend(node_keys(&r.rhs));
            }
        }
        // A cast of a constant folds to a constant of the cast's type.
        let folded: Vec<String> = nodes
            .iter()
            .filter_map(|k| k.strip_prefix("Cast ").map(|t| format!("Const {t}")))
            .collect();
        nodes.extend(folded);
        if layout {
            // The even and odd lanes of a node are the same operator at half the lanes.
            let halved: Vec<String> = nodes
                .iter()
                .filter_map(|k| {
                    let (op, t) = k.split_once(' ')?;
                    let t = parse_type_name(t)?;
                    t.lanes
                        .is_multiple_of(2)
                        .then(|| format!("{op} {}", type_name(t.with_lanes(t.lanes / 2))))
                })
                .collect();
            nodes.extend(halved);
        }
        if nodes.len() == before {
            break;
        }
    }
    let mut keep = live.into_iter();
    rewrites.retain(|r| keep.next().unwrap_or(false) && r.lhs != r.rhs);
    let mut seen = BTreeSet::new();
    rewrites.retain(|r| seen.insert((r.lhs.clone(), r.rhs.clone(), r.conditions.clone())));

    let mut text = String::new();
    declarations(catalog, &rewrites, &mut text);
    analysis(&types, &mut text);
    if layout {
        text.push_str(&layout::rules(&parsed_types));
    }
    for r in &rewrites {
        r.render(&mut text);
    }
    let root = ground(input)?;
    writeln!(text, "(let $root (Out {root}))").expect("string write");
    if layout {
        text.push_str(&layout::facts(input, catalog.target.register_bits)?);
    }
    for (n, lo, hi) in &split_list {
        writeln!(
            text,
            "(union {} (Concat \"{}\" {} {}))",
            ground(n)?,
            type_name(n.ty),
            ground(lo)?,
            ground(hi)?
        )
        .expect("string write");
    }
    writeln!(
        text,
        "(run-schedule\n  (repeat {ITERATIONS} (seq (saturate analysis) (run lift) (run simplify)))\n  (repeat {ITERATIONS} (seq (saturate analysis) (run lower) (run simplify) (run outputs))))\n(extract $root)"
    )
    .expect("string write");
    Ok(Program {
        text,
        rewrites: rewrites.len(),
        skipped,
    })
}

/// Rewrites sound by construction, for the types in play: a constant is the widening cast of
/// the same value at a narrower type (so `u16(b_u8) * 2` is a widening multiply), and a cast
/// between types of one width is a free reinterpretation of the bits.
fn generated(types: &BTreeSet<String>) -> Vec<Rewrite> {
    let parsed: Vec<VecType> = types.iter().filter_map(|t| parse_type_name(t)).collect();
    let mut out = Vec::new();
    // A conversion of a concatenation is the concatenation of the converted halves.
    for &t in &parsed {
        for &s in &parsed {
            if s.lanes != t.lanes || t.lanes % 2 != 0 || s == t {
                continue;
            }
            let (th, sh) = (t.with_lanes(t.lanes / 2), s.with_lanes(s.lanes / 2));
            for op in ["Cast", "SatCast"] {
                out.push(Rewrite {
                    ruleset: "lower",
                    source: format!(
                        "{op} to {} of a {} concatenation, by halves",
                        type_name(t),
                        type_name(s)
                    ),
                    lhs: format!(
                        "({op} \"{}\" (Concat \"{}\" a b))",
                        type_name(t),
                        type_name(s)
                    ),
                    rhs: format!(
                        "(Concat \"{}\" ({op} \"{}\" a) ({op} \"{}\" b))",
                        type_name(t),
                        type_name(th),
                        type_name(th)
                    ),
                    conditions: vec![format!("(= (type-of a) \"{}\")", type_name(sh))],
                });
            }
        }
    }
    for &t in &parsed {
        for &s in &parsed {
            if !t.elem.is_int() || !s.elem.is_int() || s.lanes != t.lanes {
                continue;
            }
            let (tn, sn) = (type_name(t), type_name(s));
            if s.elem.bits() < t.elem.bits() {
                out.push(Rewrite {
                    ruleset: "lift",
                    source: format!("a {tn} constant that fits in {sn}"),
                    lhs: format!("(Const \"{tn}\" c)"),
                    rhs: format!("(Cast \"{tn}\" (Const \"{sn}\" c))"),
                    conditions: vec![
                        format!("(>= c {})", s.elem.min_value()),
                        format!("(<= c {})", s.elem.max_value()),
                    ],
                });
            } else if s.elem.bits() == t.elem.bits() && s != t {
                out.push(Rewrite {
                    ruleset: "lower",
                    source: format!("{sn} as {tn} is the same bits"),
                    lhs: format!("(Cast \"{tn}\" x)"),
                    rhs: format!("(Reinterpret \"{tn}\" x)"),
                    conditions: vec![format!("(= (type-of x) \"{sn}\")")],
                });
            }
        }
    }
    out
}

fn declarations(catalog: &Catalog, rewrites: &[Rewrite], out: &mut String) {
    out.push_str("(datatype Expr)\n");
    out.push_str("(constructor Var (String String) Expr :cost 0)\n");
    out.push_str("(constructor Const (String i64) Expr :cost 1)\n");
    for c in &CONSTRUCTORS {
        let sig = std::iter::once("String")
            .chain(std::iter::repeat_n("i64", c.params))
            .chain(std::iter::repeat_n("Expr", c.args))
            .collect::<Vec<_>>()
            .join(" ");
        writeln!(
            out,
            "(constructor {} ({sig}) Expr :cost {PRIMITIVE_COST})",
            c.name
        )
        .expect("string write");
    }
    // A contiguous part of an input array is a load, as cheap as the whole.
    out.push_str("(constructor Part (String String i64) Expr :cost 0)\n");
    out.push_str("(constructor Reinterpret (String Expr) Expr :cost 0)\n");
    // A register pair assembled from two registers, and lanes of a value from a lane offset
    // (one register of a pair, or the low part of a register): register naming, not work.
    out.push_str("(constructor Pair (String Expr Expr) Expr :cost 0)\n");
    out.push_str("(constructor Lanes (String i64 Expr) Expr :cost 0)\n");
    out.push_str("(constructor Out (Expr) Expr :cost 0)\n");
    out.push_str("(constructor OutPair (Expr Expr) Expr :cost 0)\n");
    let used: BTreeSet<&str> = rewrites
        .iter()
        .flat_map(|r| r.rhs.split('(').filter_map(|p| p.split_whitespace().next()))
        .filter(|h| h.starts_with("I_"))
        .collect();
    for ins in &catalog.instructions {
        let name = instruction_constructor(&ins.name);
        if !used.contains(name.as_str()) {
            continue;
        }
        let sig = vec!["Expr"; ins.operands.len()].join(" ");
        let cost = ((ins.cost * COST_SCALE).round() as u64).max(1);
        writeln!(out, "(constructor {name} ({sig}) Expr :cost {cost})").expect("string write");
    }
    out.push_str("(function type-of (Expr) String :merge old)\n");
    out.push_str("(function lo (Expr) i64 :merge (max old new))\n");
    out.push_str("(function hi (Expr) i64 :merge (min old new))\n");
    out.push_str("(function tlo (String) i64 :merge old)\n");
    out.push_str("(function thi (String) i64 :merge old)\n");
    out.push_str("(ruleset analysis)\n(ruleset lift)\n(ruleset simplify)\n(ruleset lower)\n(ruleset outputs)\n");
    out.push_str("(rewrite (Out (Concat t a b)) (OutPair (Out a) (Out b)) :ruleset outputs)\n");
    // A cast of a constant that fits is the constant at the new type.
    out.push_str(
        "(rule ((= e (Cast t (Const s c))) (= l (tlo t)) (= h (thi t)) (>= c l) (<= c h))\n      ((union e (Const t c))) :ruleset lower)\n",
    );
}

/// Types of every node and interval bounds of integer nodes, as egglog rules.
fn analysis(types: &BTreeSet<String>, out: &mut String) {
    for c in &CONSTRUCTORS {
        let vars: Vec<String> = (0..c.params + c.args).map(|i| format!("x{i}")).collect();
        writeln!(
            out,
            "(rule ((= e ({} t {}))) ((set (type-of e) t)) :ruleset analysis)",
            c.name,
            vars.join(" ")
        )
        .expect("string write");
    }
    out.push_str(
        "(rule ((= e (Var t n))) ((set (type-of e) t)) :ruleset analysis)\n\
         (rule ((= e (Const t v))) ((set (type-of e) t)) :ruleset analysis)\n\
         (rule ((= e (Part t n s))) ((set (type-of e) t)) :ruleset analysis)\n\
         (rule ((= e (Reinterpret t x))) ((set (type-of e) t)) :ruleset analysis)\n\
         (rule ((= e (Pair t x y))) ((set (type-of e) t)) :ruleset analysis)\n\
         (rule ((= e (Lanes t s x))) ((set (type-of e) t)) :ruleset analysis)\n",
    );
    for t in types {
        let Some(ty) = parse_type_name(t) else {
            continue;
        };
        if !ty.elem.is_int() || ty.elem.bits() > 32 {
            continue;
        }
        writeln!(
            out,
            "(set (tlo \"{t}\") {})\n(set (thi \"{t}\") {})",
            ty.elem.min_value(),
            ty.elem.max_value()
        )
        .expect("string write");
    }
    out.push_str(BOUNDS_RULES);
}

/// Interval arithmetic; a rule sets bounds only when the result cannot wrap.
const BOUNDS_RULES: &str = r#"
(rule ((= e (Var t n)) (= l (tlo t)) (= h (thi t))) ((set (lo e) l) (set (hi e) h)) :ruleset analysis)
(rule ((= e (Part t n s)) (= l (tlo t)) (= h (thi t))) ((set (lo e) l) (set (hi e) h)) :ruleset analysis)
(rule ((= e (Const t v)) (= l (tlo t))) ((set (lo e) v) (set (hi e) v)) :ruleset analysis)
(rule ((= e (Add t a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b))
       (>= (+ la lb) (tlo t)) (<= (+ ha hb) (thi t)))
      ((set (lo e) (+ la lb)) (set (hi e) (+ ha hb))) :ruleset analysis)
(rule ((= e (Sub t a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b))
       (>= (- la hb) (tlo t)) (<= (- ha lb) (thi t)))
      ((set (lo e) (- la hb)) (set (hi e) (- ha lb))) :ruleset analysis)
(rule ((= e (Mul t a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b))
       (>= la -2147483648) (<= ha 2147483647) (>= lb -2147483648) (<= hb 2147483647)
       (>= (min (min (* la lb) (* la hb)) (min (* ha lb) (* ha hb))) (tlo t))
       (<= (max (max (* la lb) (* la hb)) (max (* ha lb) (* ha hb))) (thi t)))
      ((set (lo e) (min (min (* la lb) (* la hb)) (min (* ha lb) (* ha hb))))
       (set (hi e) (max (max (* la lb) (* la hb)) (max (* ha lb) (* ha hb))))) :ruleset analysis)
(rule ((= e (Shr t a (Const t2 c))) (= la (lo a)) (= ha (hi a)) (>= c 0) (< c 63))
      ((set (lo e) (>> la c)) (set (hi e) (>> ha c))) :ruleset analysis)
(rule ((= e (Shl t a (Const t2 c))) (= la (lo a)) (= ha (hi a)) (>= c 0) (< c 32) (>= la 0)
       (<= ha (>> (thi t) c)))
      ((set (lo e) (<< la c)) (set (hi e) (<< ha c))) :ruleset analysis)
(rule ((= e (Min t a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b)))
      ((set (lo e) (min la lb)) (set (hi e) (min ha hb))) :ruleset analysis)
(rule ((= e (Max t a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b)))
      ((set (lo e) (max la lb)) (set (hi e) (max ha hb))) :ruleset analysis)
(rule ((= e (Cast t a)) (= la (lo a)) (= ha (hi a)) (>= la (tlo t)) (<= ha (thi t)))
      ((set (lo e) la) (set (hi e) ha)) :ruleset analysis)
(rule ((= e (SatCast t a)) (= la (lo a)) (= ha (hi a)) (= l (tlo t)) (= h (thi t)))
      ((set (lo e) (min (max la l) h)) (set (hi e) (min (max ha l) h))) :ruleset analysis)
(rule ((= e (And t a (Const t2 c))) (>= c 0)) ((set (lo e) 0) (set (hi e) c)) :ruleset analysis)
(rule ((= e (Select t c a b)) (= la (lo a)) (= ha (hi a)) (= lb (lo b)) (= hb (hi b)))
      ((set (lo e) (min la lb)) (set (hi e) (max ha hb))) :ruleset analysis)
"#;

/// The instruction index of each egglog instruction constructor.
pub fn instruction_index(catalog: &Catalog) -> HashMap<String, usize> {
    catalog
        .instructions
        .iter()
        .enumerate()
        .map(|(i, ins)| (instruction_constructor(&ins.name), i))
        .collect()
}
