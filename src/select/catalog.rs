//! What the database holds for one target: its instructions (semantics, cost, intrinsic), the
//! proven idiom facts that turn into lowering rules, and the proven rewrite rules by phase.

use super::permute::permutation_lowerings;
use super::program::Rewrite;
use super::simplify::simplify;
use crate::database::{Database, Filter};
use crate::error::Result;
use crate::idioms::{instantiate_idiom, proven_facts, Constant, Fact, OperandBinding};
use crate::ir::{Expr, Macros, Op, VecType};
use crate::project::Project;
use crate::rules::load::rule_macros;
use crate::rules::{stored_rules, Rule, RuleKind, RuleStatus};
use crate::spec::Target;
use crate::spec::{load_macros, Instruction, SpecSet};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What an instruction operand receives in a lowering.
#[derive(Debug, Clone)]
pub enum Arg {
    /// The value bound to this wildcard.
    Wildcard(String),
    /// A scalar operand (immediate or register): the constant wildcard it stands for, which
    /// selection instantiates with the constants of the input.
    Splat(String),
    /// A fixed constant.
    Fixed(i64),
    /// A register pair given as its two registers (low, high), each a wildcard.
    Pair(String, String),
    /// A few lanes packed into one scalar register (HVX `Rt.b`): the wildcard selection
    /// instantiates with constants of the input, alternating two values.
    Packed(String),
}

/// "This instruction computes this pattern": from an idiom fact or the instruction's own
/// semantics.
#[derive(Debug, Clone)]
pub struct Lowering {
    pub instruction: usize,
    pub pattern: Rc<Expr>,
    pub args: Vec<Arg>,
    /// Where it came from, for `--emit egglog`.
    pub source: String,
}

pub struct Catalog {
    pub target: Target,
    pub specs: SpecSet,
    pub rule_macros: Macros,
    pub instructions: Vec<Instruction>,
    pub lowerings: Vec<Lowering>,
    /// Proven rules of kind lift (the lift phase), simplify (both phases) and lower (this
    /// target's, the lower phase).
    pub lift_rules: Vec<Rule>,
    pub simplify_rules: Vec<Rule>,
    pub lower_rules: Vec<Rule>,
    /// Rules already turned into rewrites, by ruleset, name, type and lane count.
    pub rewrite_cache: RefCell<HashMap<String, std::result::Result<Option<Rewrite>, String>>>,
    /// Lowerings without scalar operands already turned into rewrites, by index.
    pub lowering_cache: RefCell<HashMap<usize, std::result::Result<Vec<Rewrite>, String>>>,
    /// Hash of everything selection reads from this catalog, the key of the selection cache.
    pub fingerprint: String,
}

impl Catalog {
    pub fn load(project: &Project, target: Target) -> Result<Catalog> {
        let db = project.open()?;
        let specs = load_macros(&project.specs)?;
        let rule_macros = rule_macros(&specs.macros)?;
        let mut instructions = db.instructions(&Filter {
            isa: Some(target.isa),
            features: Some(target.features),
        })?;
        instructions.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name: HashMap<&str, usize> = instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (ins.name.as_str(), i))
            .collect();
        let mut lowerings = Vec::new();
        for fact in proven_facts(&db)? {
            let Some(&i) = by_name.get(fact.instruction.as_str()) else {
                continue;
            };
            if let Some(l) = fact_lowering(&specs, &instructions[i], i, &fact) {
                lowerings.push(l);
            }
        }
        for (i, ins) in instructions.iter().enumerate() {
            if let Some(l) = semantics_lowering(ins, i, target.register_bits) {
                lowerings.extend(bitwise_variants(&l));
                lowerings.push(l);
            }
            lowerings.extend(permutation_lowerings(ins, i));
        }
        let [lift_rules, simplify_rules, lower_rules] = proven_rules(&db, target)?;
        let fingerprint = super::cache::fingerprint(
            target,
            &instructions,
            &lowerings,
            &[&lift_rules, &simplify_rules, &lower_rules],
            &rule_macros,
        );
        Ok(Catalog {
            target,
            specs,
            rule_macros,
            instructions,
            lowerings,
            lift_rules,
            simplify_rules,
            lower_rules,
            rewrite_cache: RefCell::new(HashMap::new()),
            lowering_cache: RefCell::new(HashMap::new()),
            fingerprint,
        })
    }
}

/// The lowering an idiom fact stands for: the idiom instantiated at the instruction's full
/// width, its parameters as wildcards (constant wildcards for splatted scalar operands).
fn fact_lowering(
    specs: &SpecSet,
    ins: &Instruction,
    index: usize,
    fact: &Fact,
) -> Option<Lowering> {
    let idiom = specs.idioms.iter().find(|d| d.name == fact.idiom)?;
    let entries = &fact.operands.0;
    if entries.len() != ins.operands.len() {
        return None;
    }
    let width = ins
        .operands
        .iter()
        .map(|o| o.ty.lanes)
        .chain([ins.result.lanes])
        .max()
        .unwrap_or(1);
    let mut types = Vec::new();
    let mut renames: HashMap<String, Rc<Expr>> = HashMap::new();
    for p in idiom.operand_params() {
        let (i, splat) = entries.iter().enumerate().find_map(|(i, e)| match e {
            OperandBinding::Param(q) if q == p => Some((i, false)),
            OperandBinding::Splat(q) if q == p => Some((i, true)),
            _ => None,
        })?;
        let op = &ins.operands[i];
        if splat {
            let c = format!("c{}", 90 + i);
            let scalar = Rc::new(Expr::var(&c, VecType::new(1, op.ty.elem)));
            renames.insert(
                p.to_string(),
                Rc::new(Expr::build(Op::Broadcast(width), vec![scalar]).ok()?),
            );
            types.push(op.ty.with_lanes(width));
        } else {
            renames.insert(p.to_string(), Rc::new(Expr::var(&op.name, op.ty)));
            types.push(op.ty);
        }
    }
    let template = instantiate_idiom(&specs.macros, idiom, &fact.meta.values(), &types)?;
    if template.ty != ins.result {
        return None;
    }
    let args = entries
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            OperandBinding::Fixed(Constant::Int(v)) => i64::try_from(*v).ok().map(Arg::Fixed),
            OperandBinding::Fixed(Constant::Float(_)) => None,
            OperandBinding::Splat(_) => Some(Arg::Splat(format!("c{}", 90 + i))),
            OperandBinding::Param(_) => Some(Arg::Wildcard(ins.operands[i].name.clone())),
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Lowering {
        instruction: index,
        pattern: template.substitute(&renames),
        args,
        source: format!("fact: {} implements {}", ins.name, idiom.name),
    })
}

/// The instruction's own semantics as a pattern, when every operand is a vector (immediates
/// become constant wildcards). A register pair the semantics reads only by halves becomes
/// two wildcards, so the pattern matches two separately computed registers.
fn semantics_lowering(ins: &Instruction, index: usize, register_bits: u32) -> Option<Lowering> {
    if ins.result.lanes == 1 {
        return None;
    }
    let mut renames: HashMap<String, Rc<Expr>> = HashMap::new();
    let mut args = Vec::new();
    for (i, op) in ins.operands.iter().enumerate() {
        if op.ty.elem == crate::ir::Elem::Bool {
            return None;
        }
        if op.ty.lanes == 1 {
            let c = format!("c{}", 90 + i);
            renames.insert(op.name.clone(), Rc::new(Expr::var(&c, op.ty)));
            args.push(Arg::Splat(c));
        } else if op.c_type.is_some() && op.ty.bits() <= 64 {
            args.push(Arg::Packed(op.name.clone()));
        } else if op.ty.bits() == 2 * register_bits {
            let half = op.ty.with_lanes(op.ty.lanes / 2);
            let (lo, hi) = (format!("{}_lo", op.name), format!("{}_hi", op.name));
            let pair = Expr::build(
                Op::Concat,
                vec![Rc::new(Expr::var(&lo, half)), Rc::new(Expr::var(&hi, half))],
            )
            .ok()?;
            renames.insert(op.name.clone(), Rc::new(pair));
            args.push(Arg::Pair(lo, hi));
        } else {
            args.push(Arg::Wildcard(op.name.clone()));
        }
    }
    let instantiate =
        |renames: &HashMap<String, Rc<Expr>>| simplify(&ins.semantics.substitute(renames));
    let mut pattern = instantiate(&renames);
    // A pair still read as a whole stays one wildcard.
    let mut unsplit = false;
    for (arg, op) in args.iter_mut().zip(&ins.operands) {
        if let Arg::Pair(lo, hi) = arg {
            if concatenates(&pattern, lo, hi) {
                renames.remove(&op.name);
                *arg = Arg::Wildcard(op.name.clone());
                unsplit = true;
            }
        }
    }
    if unsplit {
        pattern = instantiate(&renames);
    }
    Some(Lowering {
        instruction: index,
        pattern,
        args,
        source: format!("semantics of {}", ins.name),
    })
}

/// Whether `pattern` concatenates the variables `lo` and `hi`.
fn concatenates(pattern: &Expr, lo: &str, hi: &str) -> bool {
    let mut found = false;
    pattern.walk(&mut |n| {
        found |= n.op == Op::Concat
            && n.args.len() == 2
            && matches!(&n.args[0].op, Op::Var(v) if v == lo)
            && matches!(&n.args[1].op, Op::Var(v) if v == hi)
    });
    found
}

/// A bitwise instruction works on lanes of any integer type of the same width: the pattern at
/// each such type (operands and result reinterpreted).
fn bitwise_variants(l: &Lowering) -> Vec<Lowering> {
    let mut bitwise = true;
    l.pattern.walk(&mut |n| {
        bitwise &= matches!(n.op, Op::Var(_) | Op::And | Op::Or | Op::Xor | Op::Not)
    });
    if !bitwise || l.args.iter().any(|a| !matches!(a, Arg::Wildcard(_))) {
        return vec![];
    }
    let bits = l.pattern.ty.bits();
    crate::ir::Elem::ALL
        .iter()
        .filter(|e| {
            e.is_int()
                && e.bits() <= 64
                && bits.is_multiple_of(e.bits())
                && **e != l.pattern.ty.elem
        })
        .filter_map(|&e| {
            let retyped = retype(&l.pattern, VecType::new(bits / e.bits(), e))?;
            Some(Lowering {
                pattern: retyped,
                source: format!("{} at {e} lanes", l.source),
                ..l.clone()
            })
        })
        .collect()
}

fn retype(e: &Rc<Expr>, ty: VecType) -> Option<Rc<Expr>> {
    if let Op::Var(n) = &e.op {
        return Some(Rc::new(Expr::var(n, ty)));
    }
    let args = e
        .args
        .iter()
        .map(|a| retype(a, ty))
        .collect::<Option<Vec<_>>>()?;
    Some(Rc::new(Expr::build(e.op.clone(), args).ok()?))
}

/// Proven rules by phase: lift, simplify, and lower (generic or for this ISA).
fn proven_rules(db: &Database, target: Target) -> Result<[Vec<Rule>; 3]> {
    let [mut lift, mut simplify, mut lower] = [Vec::new(), Vec::new(), Vec::new()];
    for rule in stored_rules(db, RuleStatus::Proven)? {
        match rule.kind {
            RuleKind::Lift => lift.push(rule),
            RuleKind::Simplify => simplify.push(rule),
            RuleKind::Lower if rule.target.is_none_or(|t| t == target.isa) => lower.push(rule),
            _ => {}
        }
    }
    Ok([lift, simplify, lower])
}
