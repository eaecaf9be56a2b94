//! Which instructions implement which idioms: for every instantiation of an idiom's parameters
//! (operands bound to instruction operands, meta parameters to their listed values, the
//! instruction's other operands fixed to constants), a fingerprint on concrete inputs first,
//! then a z3 proof at the instruction's scaled width.

use super::candidate::{
    assignments, fixed_operands, meta_combinations, operand_bindings, source_index, source_type,
    source_width, sources, Source,
};
use super::fact::{binding_text, Clamp, Fact, FactStatus, MetaValues};
use crate::error::Result;
use crate::ir::meta::Meta;
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::{Elem, Expr, Macros, Op, Scope, VecType};
use crate::semantics::read_ranges::candidate_ranges;
use crate::semantics::value::as_int;
use crate::semantics::{eval, prove_equivalent_by_parts, Env, Value, Verdict};
use crate::spec::load::Idiom;
use crate::spec::{Instruction, Operand, SpecSet};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::rc::Rc;

const FINGERPRINT_INPUTS: usize = 6;
/// Matching at fewer lanes makes unrelated idioms coincide (a 1-lane unzip is the identity).
const MIN_MATCH_LANES: u32 = 4;
/// Generous enough that the slowest facts (dot products and sums of absolute differences take
/// z3 4.8.12 up to about 5 s of CPU) still succeed on a loaded machine: facts must not depend on
/// what else the machine is doing.
const PROOF_TIMEOUT_MS: u32 = 30_000;
/// Most combinations of immediate values proven one by one.
const MAX_IMMEDIATE_CASES: i128 = 16;
/// Seed of the random inputs that confirm a match at the instruction's own width.
const FULL_WIDTH_SEED: u64 = 11;

type TemplateKey = (String, Vec<String>, Vec<VecType>);

pub struct Matcher<'a> {
    specs: &'a SpecSet,
    templates: HashMap<TemplateKey, Option<Rc<Expr>>>,
}

impl<'a> Matcher<'a> {
    pub fn new(specs: &'a SpecSet) -> Matcher<'a> {
        Matcher {
            specs,
            templates: HashMap::new(),
        }
    }

    /// The idiom instantiated over variables named by its parameters; None when it does not
    /// type-check or its condition rejects the instantiation.
    fn template(&mut self, idiom: &Idiom, meta: &[SExpr], types: &[VecType]) -> Option<Rc<Expr>> {
        let key = (
            idiom.name.clone(),
            meta.iter().map(SExpr::to_string).collect(),
            types.to_vec(),
        );
        if let Some(t) = self.templates.get(&key) {
            return t.clone();
        }
        let t = instantiate_idiom(&self.specs.macros, idiom, meta, types);
        self.templates.insert(key, t.clone());
        t
    }

    /// Which of the given idioms the instruction implements.
    pub fn facts_for(&mut self, ins: &Instruction, idioms: &[&Idiom]) -> Result<Vec<Fact>> {
        // A copy or reinterpretation computes nothing an idiom names (a 2-lane deinterleave
        // or the like would match it trivially).
        if ins.semantics.copies_an_operand() {
            return Ok(Vec::new());
        }
        let scaled = self.specs.scaled_to(ins, MIN_MATCH_LANES)?;
        let mut rng = SmallRng::seed_from_u64(
            crate::spec::hash_text(&ins.name).len() as u64
                ^ ins
                    .sem_hash
                    .bytes()
                    .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)),
        );
        let envs = fingerprint_envs(&scaled, &mut rng);
        let sources = sources(&scaled);
        let mut out = Vec::new();
        for idiom in idioms {
            if let Some(f) = self.match_idiom(idiom, ins, &scaled, &sources, &envs)? {
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Whether `ins` implements this one idiom (used for ad-hoc expressions).
    pub fn fact(&mut self, idiom: &Idiom, ins: &Instruction) -> Result<Option<Fact>> {
        let scaled = self.specs.scaled_to(ins, MIN_MATCH_LANES)?;
        let mut rng = SmallRng::seed_from_u64(7);
        let envs = fingerprint_envs(&scaled, &mut rng);
        self.match_idiom(idiom, ins, &scaled, &sources(&scaled), &envs)
    }

    fn match_idiom(
        &mut self,
        idiom: &Idiom,
        ins: &Instruction,
        scaled: &Instruction,
        sources: &[Source],
        envs: &[Env],
    ) -> Result<Option<Fact>> {
        let params = idiom.operand_params();
        if params.len() > scaled.operands.len() {
            return Ok(None);
        }
        // At most one value operand is left out of an instantiation (fixed to zero, see below):
        // with more value operands than parameters plus one, no assignment can match.
        let values = scaled
            .operands
            .iter()
            .filter(|o| o.imm.is_none() && o.ty.elem != Elem::Bool)
            .count();
        if values > params.len() + 1 {
            return Ok(None);
        }
        for assignment in assignments(sources, params.len()) {
            let types: Vec<VecType> = assignment.iter().map(|s| source_type(scaled, *s)).collect();
            for meta in meta_combinations(idiom) {
                let Some(template) = self
                    .template(idiom, &meta, &types)
                    .and_then(|t| read_as(&t, scaled.result))
                else {
                    continue;
                };
                let fixed = fixed_operands(scaled, &assignment);
                let zeroed = fixed.iter().filter(|(i, _)| {
                    let op = &scaled.operands[*i];
                    op.imm.is_none() && op.ty.elem != Elem::Bool
                });
                if zeroed.count() > 1 {
                    continue;
                }
                // The operands as given, then each operand the instruction reads only in part
                // clamped to the range it reads.
                let clamps = clamps(scaled, &assignment, &fixed);
                for clamp in std::iter::once(None).chain(clamps.into_iter().map(Some)) {
                    let candidate = Candidate {
                        params: &params,
                        assignment: &assignment,
                        fixed: &fixed,
                        clamp,
                    };
                    if !fingerprint_matches(scaled, &template, &candidate, envs)?
                        || !self.matches_at_full_width(idiom, &meta, ins, scaled, &candidate)?
                    {
                        continue;
                    }
                    let (lhs, rhs, assume) = proof_sides(scaled, &template, &candidate);
                    let verdict =
                        prove_over_immediates(scaled, &assignment, &lhs, &rhs, assume.as_deref())?;
                    let (status, ms) = match verdict {
                        Verdict::Proven { ms, .. } => (FactStatus::Proven, ms),
                        Verdict::Unknown { ms, .. } => (FactStatus::Unknown, ms),
                        Verdict::Counterexample { .. } => continue,
                    };
                    return Ok(Some(Fact {
                        idiom: idiom.name.clone(),
                        instruction: ins.name.clone(),
                        binding: binding_text(idiom, &meta, &types, scaled, &fixed, clamp),
                        operands: operand_bindings(scaled, &params, &assignment, &fixed, clamp),
                        meta: MetaValues(
                            idiom
                                .meta
                                .iter()
                                .zip(&meta)
                                .map(|((name, _), v)| (name.clone(), v.clone()))
                                .collect(),
                        ),
                        status,
                        lanes: scaled.result.lanes,
                        ms,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// Whether a match found at the scaled lane count also holds, on random inputs, for the
    /// instruction at its own width, for the same meta values or others (a splat's count
    /// grows with the width): at few lanes distinct operations coincide (a 4-lane deal is a
    /// 4-lane shuffle, a reduction of two lanes is a pairwise add). True when the idiom does
    /// not instantiate at full width at all.
    fn matches_at_full_width(
        &mut self,
        idiom: &Idiom,
        meta: &[SExpr],
        ins: &Instruction,
        scaled: &Instruction,
        candidate: &Candidate,
    ) -> Result<bool> {
        let assignment = candidate.assignment;
        let same_shape = scaled.result == ins.result
            && scaled
                .operands
                .iter()
                .zip(&ins.operands)
                .all(|(a, b)| a.ty == b.ty);
        if same_shape {
            return Ok(true);
        }
        let width = source_width(ins);
        let full: Vec<Source> = assignment
            .iter()
            .map(|s| match *s {
                Source::Operand(i) => Source::Operand(i),
                Source::Splat(i, _) => Source::Splat(i, width),
            })
            .collect();
        let types: Vec<VecType> = full.iter().map(|s| source_type(ins, *s)).collect();
        let mut candidates = vec![meta.to_vec()];
        candidates.extend(
            meta_combinations(idiom)
                .into_iter()
                .filter(|m| m.as_slice() != meta),
        );
        let templates: Vec<Rc<Expr>> = candidates
            .iter()
            .filter_map(|m| self.template(idiom, m, &types))
            .collect();
        let readable: Vec<Rc<Expr>> = templates
            .iter()
            .filter_map(|t| read_as(t, ins.result))
            .collect();
        if templates.is_empty() {
            return Ok(true);
        }
        let envs = fingerprint_envs(ins, &mut SmallRng::seed_from_u64(FULL_WIDTH_SEED));
        let fixed = fixed_operands(ins, &full);
        let full = Candidate {
            assignment: &full,
            fixed: &fixed,
            ..*candidate
        };
        for template in &readable {
            if fingerprint_matches(ins, template, &full, &envs)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The idiom's value as an instruction's result of type `result`: itself, or its bits when the
/// two differ only in signedness (`sabd`'s i8 lanes hold `absd`'s u8 difference), for the
/// lowering reinterprets the result for free.
pub fn read_as(template: &Rc<Expr>, result: VecType) -> Option<Rc<Expr>> {
    if template.ty == result {
        return Some(template.clone());
    }
    let (t, r) = (template.ty.elem, result.elem);
    let other_signedness = t.is_int() && r.is_int() && t.bits() == r.bits();
    (template.ty.lanes == result.lanes && other_signedness)
        .then(|| Expr::build(Op::Bitcast(r), vec![template.clone()]).ok())
        .flatten()
        .map(Rc::new)
}

/// The idiom instantiated over variables named by its parameters (operands of `types`, meta
/// parameters `meta`); None when it does not type-check or its condition rejects it.
pub fn instantiate_idiom(
    macros: &Macros,
    idiom: &Idiom,
    meta: &[SExpr],
    types: &[VecType],
) -> Option<Rc<Expr>> {
    let mut scope = Scope::new(macros);
    let operands = idiom.operand_params();
    for (p, ty) in operands.iter().zip(types) {
        scope.bind_var(p, *ty);
    }
    let at = &idiom.body;
    let sym = |s: &str| SExpr {
        kind: SKind::Sym(s.to_string()),
        loc: at.loc.clone(),
    };
    let args: Vec<SExpr> = idiom
        .params
        .iter()
        .map(|p| match idiom.meta.iter().position(|(m, _)| m == p) {
            Some(i) => meta[i].clone(),
            None => sym(p),
        })
        .collect();
    if let Some(cond) = &idiom.condition {
        let map: HashMap<&str, &SExpr> = idiom
            .params
            .iter()
            .map(String::as_str)
            .zip(args.iter())
            .collect();
        let cond = crate::ir::elaborate::substitute(cond, &map);
        if !matches!(scope.meta(&cond), Ok(Meta::Bool(true))) {
            return None;
        }
    }
    let mut call = vec![sym(&idiom.name)];
    call.extend(args);
    scope
        .expr(&SExpr {
            kind: SKind::List(call),
            loc: at.loc.clone(),
        })
        .ok()
}

/// The inputs a candidate match is fingerprinted on: random lanes, then every integer lane at
/// the signed minimum (where products and sums overflow) and every lane all ones.
fn fingerprint_envs(ins: &Instruction, rng: &mut SmallRng) -> Vec<Env> {
    let edges: [fn(u128) -> u128; 2] = [|m| (m >> 1) + 1, |m| m];
    let mut envs: Vec<Env> = (0..FINGERPRINT_INPUTS)
        .map(|_| env(ins, rng, None))
        .collect();
    envs.extend(edges.iter().map(|&e| env(ins, rng, Some(e))));
    envs
}

/// Values for every operand: integer lanes at `edge(mask)` when given, else drawn from edge
/// values and random bits; immediates and f32 lanes at random.
fn env(ins: &Instruction, rng: &mut SmallRng, edge: Option<fn(u128) -> u128>) -> Env {
    ins.operands
        .iter()
        .map(|op| {
            let m = op.ty.elem.mask();
            let lanes = (0..op.ty.lanes)
                .map(|_| match (op.imm, edge) {
                    (Some((lo, hi)), _) => rng.gen_range(lo..=hi) as u128 & m,
                    _ if op.ty.elem == Elem::F32 => {
                        (rng.gen_range(-50.0f32..50.0)).to_bits() as u128
                    }
                    (None, Some(edge)) => edge(m),
                    (None, None) => [
                        0,
                        1,
                        m,
                        m >> 1,
                        rng.gen::<u128>() & m,
                        rng.gen::<u128>() & m,
                    ][rng.gen_range(0..6)],
                })
                .collect();
            (op.name.clone(), Value::new(op.ty, lanes))
        })
        .collect()
}

/// One instantiation of an idiom over an instruction: the operand each parameter takes
/// (`params[k]` from `assignment[k]`), the operands fixed to constants, and the operand clamped
/// to the range the instruction reads, if any.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    params: &'a [&'a str],
    assignment: &'a [Source],
    fixed: &'a [(usize, u128)],
    clamp: Option<Clamp>,
}

/// The ranges the instruction reads its value operands in (that a parameter takes, not fixed)
/// as clamps to try.
fn clamps(ins: &Instruction, assignment: &[Source], fixed: &[(usize, u128)]) -> Vec<Clamp> {
    let mut out = Vec::new();
    for (name, elem, (lo, hi)) in candidate_ranges(&ins.semantics) {
        let Some(operand) = ins.operands.iter().position(|o| o.name == name) else {
            continue;
        };
        let op = &ins.operands[operand];
        let taken = assignment.contains(&Source::Operand(operand));
        if !taken
            || op.imm.is_some()
            || op.ty.elem != elem
            || fixed.iter().any(|(i, _)| *i == operand)
        {
            continue;
        }
        let clamp = Clamp {
            operand,
            lo: lo.max(elem.min_value()),
            hi: hi.min(elem.max_value()),
        };
        if clamp.lo <= clamp.hi && !out.contains(&clamp) {
            out.push(clamp);
        }
    }
    out
}

/// `lanes` of `elem` each clamped to `lo..=hi`.
fn clamped(elem: Elem, lanes: &[u128], lo: i128, hi: i128) -> Vec<u128> {
    lanes
        .iter()
        .map(|&l| (as_int(elem, l).clamp(lo, hi) as u128) & elem.mask())
        .collect()
}

fn fingerprint_matches(
    ins: &Instruction,
    template: &Expr,
    candidate: &Candidate,
    envs: &[Env],
) -> Result<bool> {
    let Candidate {
        params,
        assignment,
        fixed,
        clamp,
    } = *candidate;
    let mut outputs: Vec<Value> = Vec::new();
    let mut inputs: Vec<Env> = Vec::new();
    for env in envs {
        let mut env = env.clone();
        for (i, v) in fixed {
            let op = &ins.operands[*i];
            env.insert(
                op.name.clone(),
                Value::new(op.ty, vec![*v; op.ty.lanes as usize]),
            );
        }
        let mut idiom_env = Env::new();
        for (p, s) in params.iter().zip(assignment) {
            let op = &ins.operands[source_index(*s)];
            let v = &env[&op.name];
            let v = match s {
                Source::Operand(_) => v.clone(),
                Source::Splat(_, lanes) => {
                    Value::new(op.ty.with_lanes(*lanes), vec![v.lanes[0]; *lanes as usize])
                }
            };
            idiom_env.insert(p.to_string(), v);
        }
        if let Some(Clamp { operand, lo, hi }) = clamp {
            let op = &ins.operands[operand];
            let v = env[&op.name].clone();
            env.insert(
                op.name.clone(),
                Value::new(v.ty, clamped(v.ty.elem, &v.lanes, lo, hi)),
            );
        }
        let out = eval(template, &idiom_env)?;
        if eval(&ins.semantics, &env)? != out {
            return Ok(false);
        }
        outputs.push(out);
        inputs.push(idiom_env);
    }
    // A constant result, or one operand passed through, is a degenerate instantiation.
    let constant = outputs.windows(2).all(|w| w[0] == w[1]);
    let passthrough = params.iter().any(|p| {
        inputs
            .iter()
            .zip(&outputs)
            .all(|(env, out)| env[*p] == *out)
    });
    Ok(!constant && !passthrough)
}

/// Instruction side (fixed operands substituted, the clamped one clamped), idiom side
/// (parameters renamed to the operands), and the range of every immediate operand still free.
fn proof_sides(
    ins: &Instruction,
    template: &Rc<Expr>,
    candidate: &Candidate,
) -> (Rc<Expr>, Rc<Expr>, Option<Rc<Expr>>) {
    let mut consts: HashMap<String, Rc<Expr>> = candidate
        .fixed
        .iter()
        .map(|(i, v)| {
            let op = &ins.operands[*i];
            (op.name.clone(), Rc::new(Expr::constant(op.ty, vec![*v])))
        })
        .collect();
    if let Some(Clamp { operand, lo, hi }) = candidate.clamp {
        let op = &ins.operands[operand];
        let bound = |v: i128| Rc::new(Expr::constant(op.ty, vec![v as u128 & op.ty.elem.mask()]));
        let var = Rc::new(Expr::var(&op.name, op.ty));
        let below = Expr::build(Op::Min, vec![var, bound(hi)]).expect("min");
        let within = Expr::build(Op::Max, vec![Rc::new(below), bound(lo)]).expect("max");
        consts.insert(op.name.clone(), Rc::new(within));
    }
    let lhs = ins.semantics.substitute(&consts);
    let renames: HashMap<String, Rc<Expr>> = candidate
        .params
        .iter()
        .zip(candidate.assignment)
        .map(|(p, s)| {
            let op = &ins.operands[source_index(*s)];
            let var = Rc::new(Expr::var(&op.name, op.ty));
            let e = match s {
                Source::Operand(_) => var,
                Source::Splat(_, lanes) => Rc::new(
                    Expr::build(Op::Broadcast(*lanes), vec![var]).expect("scalar broadcast"),
                ),
            };
            (p.to_string(), e)
        })
        .collect();
    let rhs = template.substitute(&renames);
    let ranges: Vec<Rc<Expr>> = candidate
        .assignment
        .iter()
        .filter_map(|s| {
            let op = &ins.operands[source_index(*s)];
            let (lo, hi) = op.imm?;
            let var = Rc::new(Expr::var(&op.name, op.ty));
            let bound = |op_: Op, v: i128| {
                let c = Rc::new(Expr::constant(op.ty, vec![v as u128 & op.ty.elem.mask()]));
                Rc::new(Expr::build(op_, vec![var.clone(), c]).expect("comparison"))
            };
            Some(Rc::new(
                Expr::build(Op::And, vec![bound(Op::Ge, lo), bound(Op::Le, hi)]).expect("and"),
            ))
        })
        .collect();
    let assume = ranges
        .into_iter()
        .reduce(|a, b| Rc::new(Expr::build(Op::And, vec![a, b]).expect("and")));
    (lhs, rhs, assume)
}

/// Proves `lhs == rhs` for every value of the immediates the idiom binds: value by value when
/// there are at most [`MAX_IMMEDIATE_CASES`] (a lookup by a constant lane index folds, which z3
/// finds far easier than a selection among every lane), otherwise once under `assume`.
fn prove_over_immediates(
    ins: &Instruction,
    assignment: &[Source],
    lhs: &Rc<Expr>,
    rhs: &Rc<Expr>,
    assume: Option<&Expr>,
) -> Result<Verdict> {
    let immediates: Vec<(&Operand, i128, i128)> = assignment
        .iter()
        .filter_map(|s| {
            let op = &ins.operands[source_index(*s)];
            op.imm.map(|(lo, hi)| (op, lo, hi))
        })
        .collect();
    let cases = immediates
        .iter()
        .try_fold(1i128, |n, (_, lo, hi)| n.checked_mul(hi - lo + 1));
    if immediates.is_empty() || cases.is_none_or(|n| n > MAX_IMMEDIATE_CASES) {
        return prove_equivalent_by_parts(lhs, rhs, assume, PROOF_TIMEOUT_MS);
    }
    let mut combinations: Vec<HashMap<String, Rc<Expr>>> = vec![HashMap::new()];
    for (op, lo, hi) in immediates {
        combinations = combinations
            .into_iter()
            .flat_map(|partial| {
                (lo..=hi).map(move |v| {
                    let mut next = partial.clone();
                    let value = Expr::constant(op.ty, vec![v as u128 & op.ty.elem.mask()]);
                    next.insert(op.name.clone(), Rc::new(value));
                    next
                })
            })
            .collect();
    }
    let mut ms = 0.0;
    for values in &combinations {
        let (l, r) = (lhs.substitute(values), rhs.substitute(values));
        match prove_equivalent_by_parts(&l, &r, None, PROOF_TIMEOUT_MS)? {
            Verdict::Proven { ms: t, .. } => ms += t,
            Verdict::Unknown { reason, ms: t } => {
                return Ok(Verdict::Unknown { reason, ms: ms + t })
            }
            refuted => return Ok(refuted),
        }
    }
    Ok(Verdict::Proven {
        ty: lhs.ty.to_string(),
        lanes: lhs.ty.lanes,
        ms,
    })
}
