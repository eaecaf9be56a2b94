//! The rewrites of a program: a proven rule at one element type and lane count, and a lowering
//! with its scalar operands instantiated by the input's constants (the rewrites sound by
//! construction are in `sound.rs`).

use super::catalog::{instruction_constructor, Catalog};
use super::lowering::{Arg, Bound, Lowering};
use super::pattern::Pattern;
use super::simplify::simplify;
use super::term::{
    lane_bits, lane_value, op, reinterpret, type_name, Cmp, Condition, Int, Rewrite, Ruleset, Term,
};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::rules::load::elaborate;
use crate::rules::Rule;
use crate::spec::{Instruction, Operand};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// One rule at `T = t` and `lanes`; None when it does not elaborate there.
pub fn rule_rewrite(
    rule: &Rule,
    t: Option<Elem>,
    lanes: u32,
    catalog: &Catalog,
    ruleset: Ruleset,
) -> Result<Option<Rewrite>, String> {
    let Ok(inst) = elaborate(rule, t, lanes, &catalog.rule_macros) else {
        return Ok(None);
    };
    let sides = [&inst.lhs, &inst.rhs];
    if sides
        .into_iter()
        .chain(&inst.predicate)
        .any(|e| wider_than_64(e))
    {
        return Err(format!(
            "{}has lanes wider than 64 bits (the e-graph holds a lane as an i64)",
            t.map_or(String::new(), |t| format!("at T={t} it "))
        ));
    }
    // A left side that converts to its operand's own type (`UT(max(x, y) - min(x, y))` at an
    // unsigned T) matches without the conversion, which is not a node of the e-graph; one that
    // is then a bare variable would match everything, and the rule says nothing at that type.
    let written = match (&inst.lhs.op, inst.lhs.args.first()) {
        (Op::Cast(_) | Op::SatCast(_), Some(x)) if x.ty == inst.lhs.ty => x.clone(),
        _ => inst.lhs.clone(),
    };
    if matches!(written.op, Op::Var(_)) {
        return Ok(None);
    }
    let mut p = Pattern::default();
    let lhs = p.lhs(&written)?;
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

/// Whether some node of `e` has lanes wider than 64 bits.
fn wider_than_64(e: &Expr) -> bool {
    let mut wide = false;
    e.walk(&mut |n| wide |= n.ty.elem.bits() > 64);
    wide
}

/// The most combinations of values a lowering's scalar operands are tried in.
const MAX_SCALAR_CHOICES: usize = 256;

/// A lowering's scalar operands, each with the lane values it takes.
pub type ScalarChoice<'c> = Vec<(&'c Operand, Vec<i64>)>;

/// The values a lowering's scalar operands take, one choice per rewrite (one empty choice for
/// a lowering without them): each value among `constants` (within an immediate's range and
/// the lowering's bounds), so shift amounts and multipliers fold into the pattern; a packed
/// scalar register takes two such values alternating over its lanes (one is also tried).
/// Past [`MAX_SCALAR_CHOICES`] combinations, every scalar operand takes the same value.
pub fn scalar_choices<'c>(
    l: &Lowering,
    catalog: &'c Catalog,
    constants: &BTreeSet<i64>,
) -> Vec<ScalarChoice<'c>> {
    let ins = &catalog.instructions[l.instruction];
    let mut per_operand: Vec<(&Operand, Vec<Vec<i64>>)> = Vec::new();
    for (arg, op) in l.args.iter().zip(&ins.operands) {
        let with_one = match arg {
            Arg::Splat => false,
            Arg::Packed => true,
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
        per_operand.push((op, lanes));
    }
    let combinations = per_operand
        .iter()
        .try_fold(1usize, |n, (_, lanes)| n.checked_mul(lanes.len()))
        .unwrap_or(usize::MAX);
    let choices: Vec<ScalarChoice> = if combinations <= MAX_SCALAR_CHOICES {
        per_operand
            .iter()
            .fold(vec![vec![]], |choices, (op, lanes)| {
                choices
                    .into_iter()
                    .flat_map(|partial| {
                        lanes.iter().map(move |v| {
                            let mut next = partial.clone();
                            next.push((*op, v.clone()));
                            next
                        })
                    })
                    .collect()
            })
    } else {
        // Too many scalar operands (a `set` of 32 lanes) for every combination: each value
        // for all of them at once.
        let values: BTreeSet<i64> = per_operand
            .iter()
            .flat_map(|(_, lanes)| lanes.iter().flatten().copied())
            .collect();
        values
            .into_iter()
            .filter_map(|v| {
                per_operand
                    .iter()
                    .map(|(op, lanes)| {
                        lanes
                            .iter()
                            .find(|l| l.iter().all(|x| *x == v))
                            .map(|l| (*op, l.clone()))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .collect()
    };
    // A bound on a scalar operand is decided by the value it takes.
    let within_bounds = |values: &&Vec<(&Operand, Vec<i64>)>| {
        values.iter().all(|(op, lanes)| {
            l.bounds
                .iter()
                .filter(|b| b.wildcard == op.name)
                .all(|b| lanes.iter().all(|v| (b.lo..=b.hi).contains(&(*v as i128))))
        })
    };
    choices.into_iter().filter(|c| within_bounds(&c)).collect()
}

/// The rewrites of a lowering with its scalar operands at `values` (one of
/// [`scalar_choices`]): its own, and the same on masks.
pub fn choice_rewrites(
    l: &Lowering,
    ins: &Instruction,
    values: &[(&Operand, Vec<i64>)],
) -> Result<Vec<Rewrite>, String> {
    let mut out: Vec<Rewrite> = lowering_rewrite(l, ins, values)?.into_iter().collect();
    let on_masks: Vec<Rewrite> = out.iter().flat_map(|r| on_masks(r, ins)).collect();
    out.extend(on_masks);
    let offsets: Vec<Rewrite> = out.iter().filter_map(offset_back).collect();
    out.extend(offsets);
    Ok(out)
}

/// An instruction computing a value less a constant (NEON's `cls` is `clz(x ^ (x >> 1)) - 1`,
/// HVX's `vnormamt` `clz(select(x < 0, ~x, x)) - 1`) computes the value itself with the
/// constant added back: the value is rewritten as that sum (the same e-class, so the rewrite
/// saturates), which the instruction and an add select where nothing cheaper computes the
/// value. Only for a value that is no sum or difference itself, nor an operand.
fn offset_back(r: &Rewrite) -> Option<Rewrite> {
    let Term::Op { name, ty, args, .. } = &r.lhs else {
        return None;
    };
    // Integer lanes only: a float difference rounds, so adding the constant back need not
    // give the value.
    if !ty.elem.is_int() {
        return None;
    }
    let (value, back) = match (*name, args.as_slice()) {
        (
            "Sub",
            [v, c @ Term::Const {
                value: Int::Lit(_), ..
            }],
        ) => (v, c.clone()),
        (
            "Add",
            [v, Term::Const {
                value: Int::Lit(c), ..
            }],
        ) => {
            let negated = lane_value(ty.elem, lane_bits(ty.elem, (-*c) as i64));
            (v, Term::constant(*ty, negated))
        }
        _ => return None,
    };
    match value {
        Term::Op { name: head, .. } if !matches!(*head, "Add" | "Sub") => Some(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!("{}, its constant added back", r.source),
            lhs: value.clone(),
            rhs: op("Add", *ty, vec![r.lhs.clone(), back]),
            conditions: r.conditions.clone(),
        }),
        _ => None,
    }
}

/// A rewrite testing the sign of an operand (`pblendvb`'s `m < 0`, `pmovmskb`'s) rewrites the
/// same test of a mask of all-ones lanes (`Nonzero`, what comparisons make on AVX2), whose
/// sign is its truth. A select by the sign of its mask's lanes selects lanes twice, four
/// times, ... as wide by masks of them too (their every part is all ones or all zeros):
/// `pblendvb` after a `pcmpgtd`.
fn on_masks(r: &Rewrite, ins: &Instruction) -> Vec<Rewrite> {
    fn sign_test(t: &Term) -> bool {
        matches!(
            t,
            Term::Op { name: "Lt", args, .. } if matches!(
                &args[..],
                [
                    Term::Wildcard(_),
                    Term::Const {
                        value: Int::Lit(0),
                        ..
                    }
                ]
            )
        )
    }
    /// Whether `replaced` changes `t` (it looks through operators and reinterprets).
    fn tests_a_sign(t: &Term) -> bool {
        sign_test(t)
            || matches!(t, Term::Op { .. } | Term::Reinterpret { .. })
                && t.children().any(tests_a_sign)
    }
    fn replaced(t: &Term) -> Term {
        match t {
            Term::Op { ty, args, .. } if sign_test(t) => Term::Nonzero {
                ty: *ty,
                arg: Box::new(args[0].clone()),
            },
            other => other.clone().map_operands(|a| replaced(&a)),
        }
    }
    // Most rewrites test no sign: they are not copied to find that out.
    if !tests_a_sign(&r.lhs) {
        return vec![];
    }
    let lhs = replaced(&r.lhs);
    let source = format!("{} on a mask of all-ones lanes", r.source);
    let mut out = vec![Rewrite {
        source: source.clone(),
        lhs: lhs.clone(),
        ..r.clone()
    }];
    let Term::Op {
        name: "Select",
        ty,
        args,
        ..
    } = &lhs
    else {
        return out;
    };
    let is_wildcard = |t: &Term| matches!(t, Term::Wildcard(_));
    let mask_operand = match &args[0] {
        Term::Nonzero { arg, .. } if is_wildcard(arg) => Some((**arg).clone()),
        _ => None,
    };
    let call = match &r.rhs {
        Term::Reinterpret { arg, .. } => arg,
        call => call,
    };
    let Term::Instr {
        name,
        args: operands,
    } = call
    else {
        return out;
    };
    let Some(mask_operand) = mask_operand.filter(|_| args[1..].iter().all(is_wildcard)) else {
        return out;
    };
    // The instruction's operands read as its own types, whatever lanes the select has.
    let operands: Vec<Term> = operands
        .iter()
        .zip(&ins.operands)
        .map(|(a, op)| match a {
            Term::Reinterpret { arg, .. } => reinterpret(op.ty, (**arg).clone()),
            other => reinterpret(op.ty, other.clone()),
        })
        .collect();
    let mut bits = ty.elem.bits() * 2;
    while bits <= 64 && ty.bits().is_multiple_of(bits) {
        let Some(elem) = Elem::int(bits, ty.elem.is_signed()) else {
            break;
        };
        let wide = VecType::new(ty.bits() / bits, elem);
        let mask = Term::Nonzero {
            ty: wide.with_elem(Elem::Bool),
            arg: Box::new(mask_operand.clone()),
        };
        // The mask is of the select's type (its bits as the comparison made them).
        let conditions = r
            .conditions
            .iter()
            .map(|c| match c {
                Condition::TypeOf(w, _) if *w == mask_operand => Condition::TypeOf(w.clone(), wide),
                other => other.clone(),
            })
            .collect();
        out.push(Rewrite {
            source: format!("{source}, at {} lanes", type_name(wide)),
            conditions,
            lhs: op("Select", wide, vec![mask, args[1].clone(), args[2].clone()]),
            rhs: reinterpret(
                wide,
                Term::Instr {
                    name: name.clone(),
                    args: operands.clone(),
                },
            ),
            ..r.clone()
        });
        bits *= 2;
    }
    out
}

/// Lanes packed into one scalar, lane 0 in the low bits, as the i64 of a signed scalar.
fn packed_scalar(elem: Elem, lanes: &[i64]) -> (VecType, i64) {
    let bits = elem.bits() * lanes.len() as u32;
    let scalar = if bits > 32 { Elem::I64 } else { Elem::I32 };
    let packed = lanes.iter().enumerate().fold(0u128, |acc, (k, v)| {
        acc | (lane_bits(elem, *v) << (k as u32 * elem.bits()))
    });
    (VecType::new(1, scalar), lane_value(scalar, packed))
}

/// The rewrite of a lowering with its scalar operands fixed to `values`; none where those make
/// the instruction a copy of an operand (a multiplication by one).
fn lowering_rewrite(
    l: &Lowering,
    ins: &Instruction,
    values: &[(&Operand, Vec<i64>)],
) -> Result<Option<Rewrite>, String> {
    let mut map = HashMap::new();
    for (op, v) in values {
        map.insert(
            op.name.clone(),
            Rc::new(Expr::constant(
                op.ty.with_lanes(v.len() as u32),
                v.iter().map(|x| lane_bits(op.ty.elem, *x)).collect(),
            )),
        );
    }
    let pattern = simplify(&l.pattern.substitute(&map));
    if pattern.copies_an_operand() {
        return Ok(None);
    }
    let mut p = Pattern::default();
    let lhs = p.lhs(&pattern)?;
    p.finish_lhs()?;
    let substituted = |b: &&Bound| values.iter().any(|(op, _)| op.name == b.wildcard);
    for b in l.bounds.iter().filter(|b| !substituted(b)) {
        p.conditions.extend([
            Condition::Compare(Cmp::Ge, Int::Lo(b.wildcard.clone()), Int::Lit(b.lo)),
            Condition::Compare(Cmp::Le, Int::Hi(b.wildcard.clone()), Int::Lit(b.hi)),
        ]);
    }
    let bound = |name: &str, ty: VecType| -> Result<Term, String> {
        match p.wildcards.get(name) {
            None => Err(format!("operand {name} is not in the pattern")),
            Some(t) if *t != ty => Ok(Term::Reinterpret {
                ty,
                arg: Box::new(Term::Wildcard(name.to_string())),
            }),
            Some(_) => Ok(Term::Wildcard(name.to_string())),
        }
    };
    let value = |op: &Operand| {
        values
            .iter()
            .find(|(o, _)| o.name == op.name)
            .map(|(_, v)| v.clone())
            .expect("a value per scalar operand")
    };
    let mut args = Vec::new();
    for (arg, op) in l.args.iter().zip(&ins.operands) {
        args.push(match arg {
            Arg::Wildcard(name) => bound(name, op.ty)?,
            Arg::Widened(name) => widen(name, op.ty, &p.wildcards)?,
            Arg::Clamped(name, lo, hi) => {
                let value = bound(name, op.ty)?;
                let below = super::term::op("Min", op.ty, vec![value, Term::constant(op.ty, *hi)]);
                super::term::op("Max", op.ty, vec![below, Term::constant(op.ty, *lo)])
            }
            Arg::Pair(lo, hi) => {
                let half = op.ty.with_lanes(op.ty.lanes / 2);
                Term::Pair {
                    ty: op.ty,
                    lo: Box::new(bound(lo, half)?),
                    hi: Box::new(bound(hi, half)?),
                }
            }
            Arg::Splat => Term::constant(op.ty, value(op)[0]),
            Arg::Packed => {
                let (scalar, packed) = packed_scalar(op.ty.elem, &value(op));
                Term::Reinterpret {
                    ty: op.ty,
                    arg: Box::new(Term::constant(scalar, packed)),
                }
            }
            Arg::Fixed(v) => Term::constant(op.ty, *v),
        });
    }
    let call = Term::Instr {
        name: instruction_constructor(&ins.name),
        args,
    };
    // Lanes of the result: one register of a pair, or the low lanes.
    let (result, result_ty) = match l.result_from {
        Some(offset) => {
            let ty = ins.result.with_lanes(l.pattern.ty.lanes);
            let lanes = Term::Lanes {
                ty,
                offset: offset.into(),
                arg: Box::new(call),
            };
            (lanes, ty)
        }
        None => (call, ins.result),
    };
    let shown: Vec<String> = values
        .iter()
        .map(|(_, v)| {
            let lanes: Vec<String> = v.iter().map(i64::to_string).collect();
            lanes.join(" ")
        })
        .collect();
    Ok(Some(Rewrite {
        ruleset: Ruleset::Lower,
        source: if shown.is_empty() {
            l.source.clone()
        } else {
            format!("{} with scalar operands {}", l.source, shown.join(", "))
        },
        lhs,
        rhs: if pattern.ty == result_ty {
            result
        } else {
            reinterpret(pattern.ty, result)
        },
        conditions: p.conditions,
    }))
}

/// The wildcard `name`'s lanes widened to fill an operand of type `ty`, read as `ty`.
fn widen(name: &str, ty: VecType, wildcards: &BTreeMap<String, VecType>) -> Result<Term, String> {
    let t = *wildcards
        .get(name)
        .ok_or_else(|| format!("operand {name} is not in the pattern"))?;
    let wide = Elem::int(ty.bits() / t.lanes, ty.elem.is_signed())
        .filter(|w| ty.bits().is_multiple_of(t.lanes) && w.bits() > t.elem.bits())
        .ok_or_else(|| format!("operand {name} of {ty} cannot widen {t}"))?;
    let widened = t.with_elem(wide);
    let cast = op("Cast", widened, vec![Term::Wildcard(name.to_string())]);
    Ok(if widened == ty {
        cast
    } else {
        reinterpret(ty, cast)
    })
}
