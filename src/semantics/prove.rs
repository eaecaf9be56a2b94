//! Equivalence proofs: z3 answers proven, a counterexample with concrete lane values, or unknown
//! (timeout) with the time spent. Counterexamples are replayed on the interpreter.

use super::attempt::{
    attempts, bit_blasted, products_abstracted, products_split, shared_abstracted, Attempt,
};
use super::budget::{budget, check, within_deadline, Theory};
use super::context::in_a_fresh_context;
use super::cut_points;
use super::float_bits::{float_round_trips_folded, over_bit_vectors_alone};
use super::generalize::generalized;
use super::interp::{self, Env};
use super::lane_queries::{lane_keys, simplified_together};
use super::smt::{lane_bits_of, Encoder, Lane};
use super::value::Value;
use crate::error::{Error, Result};
use crate::ir::forms::elaborate_expression;
use crate::ir::limits::check_lanes;
use crate::ir::{Elem, Expr, Macros, Op, VecType};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Instant;
use z3::ast::Bool;
use z3::{SatResult, Solver};

/// What z3 says about `lhs == rhs`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    /// Equal on every input, at the recorded type.
    Proven { ty: String, lanes: u32, ms: f64 },
    /// Inputs on which the two sides differ, with both sides' values.
    Counterexample {
        inputs: Vec<(String, String)>,
        lhs: String,
        rhs: String,
        ms: f64,
        /// The inputs as values, to run again (a CEGIS loop adds them to its tests).
        #[serde(skip)]
        model: Env,
    },
    /// The solver gave up.
    Unknown { reason: String, ms: f64 },
}

impl Verdict {
    /// Whether the two sides were proven equal.
    pub fn is_proven(&self) -> bool {
        matches!(self, Verdict::Proven { .. })
    }

    /// Proven at `ty`, in the time since `start`.
    fn proven_since(ty: VecType, start: Instant) -> Verdict {
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let (ty, lanes) = (ty.to_string(), ty.lanes);
        Verdict::Proven { ty, lanes, ms }
    }
}

/// Default solver budget per proof.
pub const DEFAULT_TIMEOUT_MS: u32 = 20_000;

/// `isadb prove`: the two expression texts (either form, `lhs` and `rhs` in error locations)
/// elaborated with their variables at `lanes` lanes, and proven equal.
pub fn prove_texts(
    lhs: &str,
    rhs: &str,
    macros: &Macros,
    lanes: u32,
    timeout_ms: u32,
) -> Result<Verdict> {
    check_lanes(lanes, "--lanes")?;
    let none = HashMap::new();
    let l = elaborate_expression(lhs, "lhs", macros, lanes, &none)?;
    let r = elaborate_expression(rhs, "rhs", macros, lanes, &none)?;
    prove_equivalent(&l, &r, None, timeout_ms)
}

/// [`prove_equivalent`], first by congruence: the same operator over operands each equal
/// (the same tree, or proven so, recursively) is equal. Only when that does not settle it is
/// the whole pair given to z3: a wide reduction of lane-wise differences that z3 cannot decide
/// whole is proven by its operands at once.
pub fn prove_equivalent_by_parts(
    lhs: &Expr,
    rhs: &Expr,
    assume: Option<&Expr>,
    timeout_ms: u32,
) -> Result<Verdict> {
    within_deadline(timeout_ms, || {
        let start = Instant::now();
        let proven = || Verdict::proven_since(lhs.ty, start);
        if congruent(lhs, rhs, assume, timeout_ms)? {
            return Ok(proven());
        }
        match decided(lhs, rhs, assume, timeout_ms)? {
            Verdict::Proven { .. } => Ok(proven()),
            verdict => Ok(verdict),
        }
    })
}

/// The least time for a query that tries [`cut_points`] (the pairs get an 8th of it, and their
/// own pairs an 8th of that, until it runs out). A 16th was too little on a loaded machine:
/// the two pairs that prove HVX's `x_i32 % 7` take 0.8-0.9 s of z3 alone, and beside the
/// CI's other tests they ran out of 3.75 s, the whole query z3 cannot decide then took the
/// proof's four minutes and the selection was scalarized.
const CUT_POINTS_FROM_MS: u32 = 1_000;

/// [`prove_equivalent`]; without a precondition and with time enough, a pair z3 does not decide
/// in a 64th of the time is proven with its numerals [`generalized`] or by [`cut_points`]
/// before z3 gets the whole time.
fn decided(lhs: &Expr, rhs: &Expr, assume: Option<&Expr>, timeout_ms: u32) -> Result<Verdict> {
    let start = Instant::now();
    if assume.is_none() && timeout_ms >= CUT_POINTS_FROM_MS {
        let quick = prove_equivalent(lhs, rhs, None, timeout_ms / 64)?;
        if !matches!(quick, Verdict::Unknown { .. }) {
            return Ok(quick);
        }
        // A numeral both sides multiply by, generalized: proven for every value, the claim
        // holds for the numeral. In a context of its own (after the quick attempt, z3 took
        // minutes over a lemma it proves alone in seconds).
        let mut generalized_proven = false;
        for (l, r) in generalized(lhs, rhs) {
            let by_parts = || prove_equivalent_by_parts(&l, &r, None, timeout_ms);
            generalized_proven = in_a_fresh_context(by_parts)?.is_proven();
            if generalized_proven {
                break;
            }
        }
        let equal = |l: &Expr, r: &Expr, ms| operands_equal(l, r, None, ms);
        if generalized_proven || cut_points::proven(lhs, rhs, timeout_ms / 8, equal)? {
            return Ok(Verdict::proven_since(lhs.ty, start));
        }
    }
    prove_equivalent(lhs, rhs, assume, timeout_ms)
}

/// Whether `lhs` and `rhs` are the same operator over operands each the same tree or proven
/// equal (a reinterpretation of the operator at the other signedness counts as the same).
fn congruent(lhs: &Expr, rhs: &Expr, assume: Option<&Expr>, timeout_ms: u32) -> Result<bool> {
    if let Some(same) = other_signedness(lhs, rhs, assume, timeout_ms)? {
        return Ok(same);
    }
    if let Some(same) = other_signedness(rhs, lhs, assume, timeout_ms)? {
        return Ok(same);
    }
    if lhs.op != rhs.op
        || lhs.ty != rhs.ty
        || lhs.args.len() != rhs.args.len()
        || lhs.args.is_empty()
    {
        return Ok(false);
    }
    for (a, b) in lhs.args.iter().zip(&rhs.args) {
        if !operands_equal(a, b, assume, timeout_ms)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// When `rhs` reinterprets as `lhs`'s type the same operator at the other signedness, on the
/// same bits (wrapping arithmetic, bitwise operators, sums, and casts that zero-extend or
/// truncate): whether their operands, read at `lhs`'s types, are equal. None otherwise.
fn other_signedness(
    lhs: &Expr,
    rhs: &Expr,
    assume: Option<&Expr>,
    timeout_ms: u32,
) -> Result<Option<bool>> {
    let (Op::Bitcast(elem), [inner]) = (&rhs.op, &rhs.args[..]) else {
        return Ok(None);
    };
    let same_shape = *elem == lhs.ty.elem
        && inner.ty.lanes == lhs.ty.lanes
        && inner.ty.elem.is_int()
        && lhs.ty.elem.is_int()
        && inner.ty.elem.bits() == lhs.ty.elem.bits()
        && inner.args.len() == lhs.args.len();
    if !same_shape {
        return Ok(None);
    }
    let wrapping = matches!(
        (&lhs.op, &inner.op),
        (Op::Add, Op::Add)
            | (Op::Sub, Op::Sub)
            | (Op::Mul, Op::Mul)
            | (Op::And, Op::And)
            | (Op::Or, Op::Or)
            | (Op::Xor, Op::Xor)
            | (Op::Neg, Op::Neg)
            | (Op::Not, Op::Not)
    ) || matches!((&lhs.op, &inner.op), (Op::ReduceAdd(a), Op::ReduceAdd(b)) if a == b);
    let same_cast = |a: &Expr, b: &Expr| {
        let from = a.ty.elem;
        from == b.ty.elem
            && from.is_int()
            && (!from.is_signed() || from.bits() >= lhs.ty.elem.bits())
    };
    let cast = matches!((&lhs.op, &inner.op), (Op::Cast(_), Op::Cast(_)))
        && same_cast(&lhs.args[0], &inner.args[0]);
    if !wrapping && !cast {
        return Ok(None);
    }
    for (a, b) in lhs.args.iter().zip(&inner.args) {
        let b = if cast || a.ty == b.ty {
            b.clone()
        } else {
            match Expr::build(Op::Bitcast(a.ty.elem), vec![b.clone()]) {
                Ok(e) => Rc::new(e),
                Err(_) => return Ok(Some(false)),
            }
        };
        if !operands_equal(a, &b, assume, timeout_ms)? {
            return Ok(Some(false));
        }
    }
    Ok(Some(true))
}

/// Whether two operands are the same tree, congruent, or proven equal by z3.
fn operands_equal(a: &Expr, b: &Expr, assume: Option<&Expr>, timeout_ms: u32) -> Result<bool> {
    Ok(a == b
        || congruent(a, b, assume, timeout_ms)?
        || (a.ty == b.ty && decided(a, b, assume, timeout_ms)?.is_proven()))
}

/// Proves `lhs == rhs` on every lane for all values of their variables (and, optionally, under
/// the precondition `assume`, a mask expression required true on every lane).
pub fn prove_equivalent(
    lhs: &Expr,
    rhs: &Expr,
    assume: Option<&Expr>,
    timeout_ms: u32,
) -> Result<Verdict> {
    if lhs.ty != rhs.ty {
        return Err(Error::Usage(format!(
            "the two sides have different types: {} and {}",
            lhs.ty, rhs.ty
        )));
    }
    let mut types = lhs.vars();
    for (name, ty) in rhs
        .vars()
        .into_iter()
        .chain(assume.map(Expr::vars).unwrap_or_default())
    {
        match types.iter().find(|(n, _)| *n == name) {
            Some((_, t)) if *t != ty => {
                return Err(Error::Usage(format!(
                    "variable '{name}' is {t} on one side and {ty} on the other"
                )))
            }
            Some(_) => {}
            None => types.push((name, ty)),
        }
    }
    let start = Instant::now();
    let Some(timeout_ms) = budget(timeout_ms) else {
        let reason = "canceled: the whole proof's time is up".to_string();
        return Ok(Verdict::Unknown { reason, ms: 0.0 });
    };
    let mut enc = Encoder::new();
    let l = enc.encode(lhs)?;
    let r = enc.encode(rhs)?;
    let solver = Solver::new();
    let mut assume_lanes = Vec::new();
    if let Some(pre) = assume {
        for lane in enc.encode(pre)? {
            solver.assert(lane.flag());
            assume_lanes.push(lane.flag().clone());
        }
    }
    for axiom in enc.axioms() {
        solver.assert(&axiom);
    }
    // Bit-blasting is for queries over bit-vectors alone: no f32 anywhere (an integer converted
    // from f32 is a bit-vector over reals), or no real left in a lane's (f32 lanes only moved).
    let mut float = false;
    for e in [Some(lhs), Some(rhs), assume].into_iter().flatten() {
        e.walk_distinct(&mut |n| float |= n.ty.elem == Elem::F32);
    }
    let theory = match float {
        true => Theory::Reals,
        false => Theory::BitVectors,
    };
    let bit_vectors = |query: &Bool| !float || (assume.is_none() && over_bit_vectors_alone(query));
    let differ: Vec<Bool> = l.iter().zip(&r).map(|(a, b)| a.equals(b).not()).collect();
    // One query per lane: each involves only that lane's inputs, which z3 solves far faster
    // than one disjunction over every lane of a wide vector. A lane whose query is another's
    // with the input lanes renamed has the same answer ([`lane_keys`]). Lanes are
    // compared simplified: a lane's query then no longer shows where its bits sat in a wider
    // instruction lane (extracts of concatenations and of bitwise operations fold away).
    // z3 is asked the query as written, and the simplified one when that is unknown: each
    // form is the faster for some instructions. A query over bit-vectors alone is bit-blasted
    // as well ([`attempts`] gives the order).
    let mut result = SatResult::Unsat;
    let mut blasted_model = None;
    let mut answered = HashSet::new();
    let simplified_lanes: Vec<Bool> = (simplified_together(&differ).iter())
        .map(float_round_trips_folded)
        .collect();
    // Under a precondition and axioms (asserted for every lane), no lane is taken for another.
    let keys = match assume_lanes.is_empty() || enc.axioms().is_empty() {
        true => lane_keys(&simplified_lanes, &assume_lanes),
        false => vec![None; differ.len()],
    };
    for ((d, simplified), key) in differ.iter().zip(simplified_lanes).zip(keys) {
        if key.is_some_and(|key| !answered.insert(key)) {
            continue;
        }
        let core = |query: &Bool, ms: u32| {
            check(&solver, theory, ms, |s| {
                s.check_assumptions(std::slice::from_ref(query))
            })
        };
        let attempts = attempts(bit_vectors(&simplified), &simplified, timeout_ms);
        result = SatResult::Unknown;
        for (attempt, ms) in &attempts {
            result = match attempt {
                Attempt::Written => core(d, *ms),
                Attempt::Simplified => core(&simplified, *ms),
                Attempt::BitBlasted => {
                    let (result, model) = bit_blasted(&simplified, &assume_lanes, *ms);
                    blasted_model = model;
                    result
                }
                // Only a proof counts: a model of the abstraction need not be one of the query.
                Attempt::ProductsAbstracted | Attempt::SharedAbstracted => {
                    let abstraction = match attempt {
                        Attempt::ProductsAbstracted => products_abstracted(&simplified),
                        _ => shared_abstracted(d),
                    };
                    match abstraction.map(|q| bit_blasted(&q, &assume_lanes, *ms)) {
                        Some((SatResult::Unsat, _)) => SatResult::Unsat,
                        _ => SatResult::Unknown,
                    }
                }
                Attempt::ProductsSplit | Attempt::ExtensionsSplit => {
                    match products_split(&simplified, matches!(attempt, Attempt::ExtensionsSplit))
                        .map(|q| {
                            let abstracted = products_abstracted(&q).unwrap_or(q);

                            bit_blasted(&abstracted, &assume_lanes, *ms)
                        }) {
                        Some((SatResult::Unsat, _)) => SatResult::Unsat,
                        _ => SatResult::Unknown,
                    }
                }
            };
            if result != SatResult::Unknown {
                break;
            }
        }
        if result != SatResult::Unsat {
            if result == SatResult::Sat && blasted_model.is_none() {
                solver.assert(d);
                result = check(&solver, theory, timeout_ms, Solver::check);
            }
            break;
        }
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(match result {
        SatResult::Unsat => Verdict::proven_since(lhs.ty, start),
        SatResult::Unknown => Verdict::Unknown {
            reason: solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".into()),
            ms,
        },
        SatResult::Sat => {
            let model = blasted_model
                .or_else(|| solver.get_model())
                .ok_or_else(|| Error::Tool("z3 gave no model".into()))?;
            let mut env = Env::new();
            for (name, ty) in &types {
                let lanes = enc
                    .vars
                    .get(name)
                    .map(|ls| ls.iter().map(|l| model_bits(&model, l)).collect());
                env.insert(
                    name.clone(),
                    Value::new(*ty, lanes.unwrap_or_else(|| vec![0; ty.lanes as usize])),
                );
            }
            counterexample(lhs, rhs, &types, &env, ms)?
        }
    })
}

/// The model's value of one lane as raw bits (reals are rounded to the nearest f32).
fn model_bits(model: &z3::Model, lane: &Lane) -> u128 {
    match lane {
        Lane::Bits(b) => model.eval(b, true).map_or(0, |v| lane_bits_of(&v)),
        Lane::Flag(f) => model
            .eval(f, true)
            .and_then(|v| v.as_bool())
            .unwrap_or(false) as u128,
        Lane::Num(r) => {
            let (n, d) = model
                .eval(r, true)
                .and_then(|v| v.as_rational())
                .unwrap_or((0, 1));
            (n as f32 / d as f32).to_bits() as u128
        }
    }
}

fn counterexample(
    lhs: &Expr,
    rhs: &Expr,
    types: &[(String, VecType)],
    env: &Env,
    ms: f64,
) -> Result<Verdict> {
    let (lv, rv) = (interp::eval(lhs, env)?, interp::eval(rhs, env)?);
    // A model over uninterpreted functions (sqrt, the bits of f32 lanes) need not be one of
    // the interpreter's: where it computes the same lanes, z3 has not shown a difference.
    if lv == rv {
        return Ok(Verdict::Unknown {
            reason: "z3's model is no counterexample: the interpreter computes the same lanes \
                     (sqrt and the bits of f32 lanes are uninterpreted in z3)"
                .into(),
            ms,
        });
    }
    let inputs = types
        .iter()
        .map(|(n, _)| (n.clone(), env[n].to_string()))
        .collect();
    Ok(Verdict::Counterexample {
        inputs,
        lhs: lv.to_string(),
        rhs: rv.to_string(),
        ms,
        model: env.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Elem, Op};
    use std::rc::Rc;

    /// f32 lanes as bits: a bitwise select of their bits by a comparison's mask is the select
    /// (NEON's `vbsl` of an `fcmgt`), proven; with the arms swapped it is refuted by a real
    /// counterexample; the sign bit cleared is `abs`, proven; the lowest bit cleared is not
    /// (the other bits are uninterpreted: z3's model is replayed on the interpreter).
    #[test]
    fn the_bits_of_f32_lanes_prove_bitwise_selects_the_sign_bit_and_nothing_more() {
        let macros = crate::ir::Macros::default();
        let parse = |text: &str| {
            let mut scope = crate::ir::elaborate::Scope::new(&macros);
            scope.implicit_lanes = Some(4);
            Rc::new(
                scope
                    .expr(&crate::ir::sexpr::read_one(text, "test").unwrap())
                    .unwrap(),
            )
        };
        let select = parse("(select (lt x_f32 y_f32) x_f32 y_f32)");
        let mask = "(select (lt x_f32 y_f32) (as a_u32 -1) (as a_u32 0))";
        let bitwise = |a: &str, b: &str| {
            parse(&format!(
                "(bitcast f32 (or (and {mask} (bitcast u32 {a})) (and (not {mask}) (bitcast u32 {b}))))"
            ))
        };
        let proven = prove_equivalent(&select, &bitwise("x_f32", "y_f32"), None, 20_000).unwrap();
        assert!(proven.is_proven(), "{proven:?}");
        let swapped = prove_equivalent(&select, &bitwise("y_f32", "x_f32"), None, 20_000).unwrap();
        assert!(
            matches!(swapped, Verdict::Counterexample { .. }),
            "{swapped:?}"
        );
        let abs = parse("(abs x_f32)");
        let cleared = |mask: u32| {
            parse(&format!(
                "(bitcast f32 (and (bitcast u32 x_f32) (as a_u32 {mask})))"
            ))
        };
        let sign = prove_equivalent(&abs, &cleared(0x7fff_ffff), None, 5_000).unwrap();
        assert!(sign.is_proven(), "{sign:?}");
        let other = prove_equivalent(&abs, &cleared(0xffff_fffe), None, 5_000).unwrap();
        assert!(!other.is_proven(), "{other:?}");
    }

    /// Seven lanes ask the same question up to renaming and are answered once; the one lane
    /// that asks another question must still be asked and refute.
    #[test]
    fn a_lane_unlike_the_others_is_still_checked() {
        let ty = VecType::new(8, Elem::U8);
        let x = Rc::new(Expr::var("x", ty));
        let bump = Rc::new(Expr::constant(ty, vec![0, 0, 0, 0, 0, 0, 0, 1]));
        let bumped = Expr::build(Op::Add, vec![x.clone(), bump]).unwrap();
        let verdict = prove_equivalent(&x, &bumped, None, DEFAULT_TIMEOUT_MS).unwrap();
        let Verdict::Counterexample { lhs, rhs, .. } = verdict else {
            panic!("expected a counterexample, got {verdict:?}");
        };
        assert_ne!(lhs, rhs);
        let zero = Rc::new(Expr::constant(ty, vec![0]));
        let same = Expr::build(Op::Add, vec![x.clone(), zero]).unwrap();
        assert!(prove_equivalent(&x, &same, None, DEFAULT_TIMEOUT_MS)
            .unwrap()
            .is_proven());
    }

    /// Under a precondition, lanes are answered once where their queries and the set of
    /// preconditions are the same up to renaming: `min(x, 100)` is `x` where every lane of `x`
    /// is at most 100, and refuted where the last lane may be 255 (its query is the others' up
    /// to renaming; its precondition is not).
    #[test]
    fn a_lane_whose_precondition_is_unlike_the_others_is_still_checked() {
        let ty = VecType::new(8, Elem::U8);
        let x = Rc::new(Expr::var("x", ty));
        let hundred = Rc::new(Expr::constant(ty, vec![100]));
        let min = Expr::build(Op::Min, vec![x.clone(), hundred]).unwrap();
        let at_most = |bounds| {
            let bounds = Rc::new(Expr::constant(ty, bounds));
            Expr::build(Op::Le, vec![x.clone(), bounds]).unwrap()
        };
        let all_small = at_most(vec![100]);
        let proven = prove_equivalent(&x, &min, Some(&all_small), DEFAULT_TIMEOUT_MS).unwrap();
        assert!(proven.is_proven(), "{proven:?}");
        let last_large = at_most(vec![100, 100, 100, 100, 100, 100, 100, 255]);
        let verdict = prove_equivalent(&x, &min, Some(&last_large), DEFAULT_TIMEOUT_MS).unwrap();
        assert!(
            matches!(verdict, Verdict::Counterexample { .. }),
            "{verdict:?}"
        );
    }

    /// `select(x == y, x + y, y)` on u32 lanes as a select of their bytes by each lane's flag
    /// spread over its four bytes (HVX's vmux after vcmp.eq on words): proven (the incremental
    /// core gave up on one lane of it after 20 s; the bit-blasting solver proves it at once),
    /// and with one byte taking its neighbour lane's flag, refuted by a counterexample the
    /// interpreter confirms.
    #[test]
    fn a_select_of_bytes_is_proven_and_a_wrong_byte_flag_refuted() {
        let (ty, bytes) = (VecType::new(4, Elem::U32), VecType::new(16, Elem::U8));
        let build = |op, args| Rc::new(Expr::build(op, args).unwrap());
        let (x, y) = (Rc::new(Expr::var("x", ty)), Rc::new(Expr::var("y", ty)));
        let equal = build(Op::Eq, vec![x.clone(), y.clone()]);
        let sum = build(Op::Add, vec![x.clone(), y.clone()]);
        let lanes = build(Op::Select, vec![equal.clone(), sum.clone(), y.clone()]);
        let of_bytes = |flags: Vec<u32>| {
            let spread = build(Op::Shuffle(flags), vec![equal.clone()]);
            let as_bytes = |v: &Rc<Expr>| build(Op::Bitcast(bytes.elem), vec![v.clone()]);
            let select = build(Op::Select, vec![spread, as_bytes(&sum), as_bytes(&y)]);
            build(Op::Bitcast(ty.elem), vec![select])
        };
        let right: Vec<u32> = (0..16).map(|b| b / 4).collect();
        let verdict = prove_equivalent(&lanes, &of_bytes(right.clone()), None, DEFAULT_TIMEOUT_MS);
        assert!(verdict.unwrap().is_proven());
        let mut wrong = right;
        wrong[4] = 0;
        let verdict = prove_equivalent(&lanes, &of_bytes(wrong), None, DEFAULT_TIMEOUT_MS);
        let Verdict::Counterexample { lhs, rhs, .. } = verdict.unwrap() else {
            panic!("a wrong byte flag was not refuted");
        };
        assert_ne!(lhs, rhs);
    }

    /// A multiply of words is proven equal to Hexagon's products of halfwords (`vmpyieo`, then
    /// `vmpyie` accumulating) and one of 64-bit lanes to x86's three products of 32-bit halves
    /// (`pmuludq`) with the products split at half their width (bit-blasted as written: unknown
    /// after a minute); the halfword products shifted one bit short are refuted.
    #[test]
    fn products_split_at_half_width_prove_multiplies_by_halves_and_a_wrong_shift_is_refuted() {
        let macros = crate::ir::Macros::default();
        let halfwords = |shift: u32| {
            format!(
                "(add (shl (mul (cast i32 (slice 0 2 4 (bitcast i16 x_i32))) \
                 (cast i32 (slice 1 2 4 (bitcast i16 y_i32)))) {shift}) \
                 (mul x_i32 (cast i32 (slice 0 2 4 (bitcast u16 y_i32)))))"
            )
        };
        let verdict = prove_texts("(mul x_i32 y_i32)", &halfwords(16), &macros, 4, 20_000);
        assert!(verdict.unwrap().is_proven());
        let half = |v: &str| format!("(cast u64 (slice 0 2 2 (bitcast u32 {v})))");
        let (lo_x, lo_y) = (half("x_u64"), half("y_u64"));
        let (hi_x, hi_y) = (half("(shr x_u64 32)"), half("(shr y_u64 32)"));
        let by_halves = format!(
            "(add (mul {lo_x} {lo_y}) (shl (add (mul {lo_x} {hi_y}) (mul {hi_x} {lo_y})) 32))"
        );
        let verdict = prove_texts("(mul x_u64 y_u64)", &by_halves, &macros, 2, 20_000);
        assert!(verdict.unwrap().is_proven());
        let verdict = prove_texts("(mul x_i32 y_i32)", &halfwords(15), &macros, 4, 20_000);
        let Verdict::Counterexample { lhs, rhs, .. } = verdict.unwrap() else {
            panic!("halfword products shifted by 15 were not refuted");
        };
        assert_ne!(lhs, rhs);
    }
}
