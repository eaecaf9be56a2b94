//! The rewrites of a program: a proven rule at one element type and lane count, a lowering
//! with its scalar operands instantiated by the input's constants, and the rewrites sound by
//! construction for the types in play.

use super::catalog::{instruction_constructor, Catalog};
use super::encode::Pattern;
use super::lowering::{Arg, Lowering};
use super::simplify::simplify;
use super::term::{lane_bits, lane_value, Cmp, Condition, Int, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, VecType};
use crate::rules::load::elaborate;
use crate::rules::Rule;
use crate::spec::{Instruction, Operand};
use std::collections::{BTreeSet, HashMap};
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

/// Whether some node of `e` has lanes wider than 64 bits.
fn wider_than_64(e: &Expr) -> bool {
    let mut wide = false;
    e.walk(&mut |n| wide |= n.ty.elem.bits() > 64);
    wide
}

/// Whether a lowering's rewrites depend on the input's constants (it has scalar operands).
pub fn takes_constants(l: &Lowering) -> bool {
    l.args.iter().any(|a| matches!(a, Arg::Splat | Arg::Packed))
}

/// The most combinations of values a lowering's scalar operands are tried in.
const MAX_SCALAR_CHOICES: usize = 256;

/// The rewrites of one lowering: scalar operands take each value among `constants` (within
/// an immediate's range), so shift amounts and multipliers fold into the pattern; a packed
/// scalar register takes two such values alternating over its lanes (one is also tried).
/// Past [`MAX_SCALAR_CHOICES`] combinations, every scalar operand takes the same value.
pub fn lowering_rewrites(
    l: &Lowering,
    catalog: &Catalog,
    constants: &BTreeSet<i64>,
) -> Result<Vec<Rewrite>, String> {
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
    let choices: Vec<Vec<(&Operand, Vec<i64>)>> = if combinations <= MAX_SCALAR_CHOICES {
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
    choices
        .iter()
        .map(|values| lowering_rewrite(l, ins, values))
        .collect()
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

/// The rewrite of a lowering with its scalar operands fixed to `values`.
fn lowering_rewrite(
    l: &Lowering,
    ins: &Instruction,
    values: &[(&Operand, Vec<i64>)],
) -> Result<Rewrite, String> {
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
    let mut p = Pattern::default();
    let lhs = p.lhs(&pattern)?;
    p.finish_lhs()?;
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
    let shown: Vec<String> = values
        .iter()
        .map(|(_, v)| {
            let lanes: Vec<String> = v.iter().map(i64::to_string).collect();
            lanes.join(" ")
        })
        .collect();
    Ok(Rewrite {
        ruleset: Ruleset::Lower,
        source: if shown.is_empty() {
            l.source.clone()
        } else {
            format!("{} with scalar operands {}", l.source, shown.join(", "))
        },
        lhs,
        rhs: if pattern.ty == ins.result {
            call
        } else {
            Term::Reinterpret {
                ty: pattern.ty,
                arg: Box::new(call),
            }
        },
        conditions: p.conditions,
    })
}

/// The type a widening cast from `s` to `t` can go through when their signedness differs: an
/// extension's bits depend on the source's signedness only, so `i16(x_u8)` is the bits of
/// `u16(x_u8)`. None when the signedness agrees or `t` is not wider.
pub fn extension_twin(s: VecType, t: VecType) -> Option<VecType> {
    (s.elem.is_int()
        && t.elem.is_int()
        && s.lanes == t.lanes
        && s.elem.bits() < t.elem.bits()
        && s.elem.is_signed() != t.elem.is_signed())
    .then(|| Elem::int(t.elem.bits(), s.elem.is_signed()))
    .flatten()
    .map(|e| t.with_elem(e))
}

/// The type halfway along a cast from `s` to `t` that more than doubles or halves the lane
/// width: an extension goes through the source's signedness at twice its width (`i32(x_u8)`
/// is `i32(u16(x_u8))`), a truncation through the target's at half the source's width, a
/// saturating narrowing through the source's (whose range holds the target's where the source
/// can reach it: `i8_sat(x_i32)` is `i8_sat(i16_sat(x_i32))`, `u8_sat(x_u32)` `u8_sat(u16_sat(x_u32))`).
pub fn cast_midpoint(s: VecType, t: VecType, saturating: bool) -> Option<VecType> {
    if !s.elem.is_int() || !t.elem.is_int() || s.lanes != t.lanes {
        return None;
    }
    let (sb, tb) = (s.elem.bits(), t.elem.bits());
    let mid = if tb > 2 * sb {
        Elem::int(2 * sb, s.elem.is_signed())
    } else if sb > 2 * tb {
        Elem::int(
            sb / 2,
            if saturating {
                s.elem.is_signed()
            } else {
                t.elem.is_signed()
            },
        )
    } else {
        None
    };
    mid.map(|e| t.with_elem(e))
}

/// A widening cast of a part of an input narrower than a register is half of the same cast of
/// the part twice as long (the half at its offset), so the instructions that widen a whole
/// register apply: on NEON `u16(x_u8[4..8])` is the high half of `uxtl` of `x_u8[0..8]`.
/// `parts` are the input's parts with the lane count of their variable.
pub fn part_widenings(
    parts: &BTreeSet<(VecType, String, i64, u32)>,
    register_bits: u32,
) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for (s, name, offset, var_lanes) in parts {
        let n = s.lanes as i64;
        if !s.elem.is_int() || s.bits() >= register_bits || 2 * s.lanes > *var_lanes {
            continue;
        }
        let (whole_at, half) = if offset + 2 * n <= *var_lanes as i64 {
            (*offset, 0)
        } else {
            (offset - n, n)
        };
        let part = |ty: VecType, offset| Term::Part {
            ty,
            name: name.clone(),
            offset,
        };
        for bits in [16, 32, 64] {
            for signed in [false, true] {
                let Some(elem) = Elem::int(bits, signed).filter(|_| bits > s.elem.bits()) else {
                    continue;
                };
                let (t, t2) = (s.with_elem(elem), s.with_elem(elem).with_lanes(2 * s.lanes));
                if t2.bits() > register_bits {
                    continue;
                }
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{name}[{offset}..] to {} is half of a whole register's",
                        super::term::type_name(t)
                    ),
                    lhs: Term::Op {
                        name: "Cast",
                        ty: t,
                        params: vec![],
                        args: vec![part(*s, *offset)],
                    },
                    rhs: Term::Lanes {
                        ty: t,
                        offset: half,
                        arg: Box::new(Term::Op {
                            name: "Cast",
                            ty: t2,
                            params: vec![],
                            args: vec![part(s.with_lanes(2 * s.lanes), whole_at)],
                        }),
                    },
                    conditions: vec![],
                });
            }
        }
    }
    out
}

/// A select at an integer type `t`: the same select on the same bits at the type of the other
/// signedness (HVX's `vmux` is on u8 lanes, AVX-512's blends on signed ones), and the bitwise
/// select by a mask of all-ones lanes where the condition holds (NEON's `vbsl` of a `vceq`,
/// AVX2's and/andnot/or of a `cmpeq`), the mask at either signedness as comparisons make it.
fn select_rewrites(t: VecType) -> Vec<Rewrite> {
    let Some(twin) = (if t.elem.is_signed() {
        t.elem.unsigned()
    } else {
        t.elem.signed()
    })
    .filter(|_| t.elem.is_int())
    .map(|e| t.with_elem(e)) else {
        return vec![];
    };
    let op = |name: &'static str, ty: VecType, args: Vec<Term>| Term::Op {
        name,
        ty,
        params: vec![],
        args,
    };
    let (c, x, y) = (Term::Slot("c"), Term::Slot("x"), Term::Slot("y"));
    let lhs = op("Select", t, vec![c.clone(), x.clone(), y.clone()]);
    let name = super::term::type_name(t);
    let mut out = vec![Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "a {name} select is one on the same bits as {}",
            super::term::type_name(twin)
        ),
        lhs: lhs.clone(),
        rhs: Term::Reinterpret {
            ty: t,
            arg: Box::new(op(
                "Select",
                twin,
                vec![
                    c.clone(),
                    Term::Reinterpret {
                        ty: twin,
                        arg: Box::new(x.clone()),
                    },
                    Term::Reinterpret {
                        ty: twin,
                        arg: Box::new(y.clone()),
                    },
                ],
            )),
        },
        conditions: vec![],
    }];
    for m in [t, twin] {
        let ones = Term::constant(m, lane_value(m.elem, m.elem.mask()));
        let select = op("Select", m, vec![c.clone(), ones, Term::constant(m, 0)]);
        let mask = if m == t {
            select
        } else {
            Term::Reinterpret {
                ty: t,
                arg: Box::new(select),
            }
        };
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "a {name} select as bitwise by a {} mask",
                super::term::type_name(m)
            ),
            lhs: lhs.clone(),
            rhs: op(
                "Or",
                t,
                vec![
                    op("And", t, vec![mask.clone(), x.clone()]),
                    op("And", t, vec![op("Not", t, vec![mask]), y.clone()]),
                ],
            ),
            conditions: vec![],
        });
    }
    out
}

/// Rewrites sound by construction, for `types` (in the order of their names): a conversion of a
/// concatenation is the concatenation of the converted halves, a constant is the widening cast
/// of the same value at a narrower type (so `u16(b_u8) * 2` is a widening multiply), and a
/// cast between types of one width is a free reinterpretation of the bits, as is a widening
/// cast next to its [`extension_twin`], and a cast more than doubling or halving the width goes
/// through its [`cast_midpoint`]; a narrowing of less than a register is the low half of the
/// narrowing of the input concatenated with itself (NEON's `xtn` of a 64-bit result).
pub fn generated(types: &[VecType], register_bits: u32) -> Vec<Rewrite> {
    let op = |name: &'static str, ty: VecType, args: Vec<Term>| Term::Op {
        name,
        ty,
        params: vec![],
        args,
    };
    let mut out = Vec::new();
    for &t in types {
        for &s in types {
            if s.lanes != t.lanes || t.lanes % 2 != 0 || s == t {
                continue;
            }
            let (th, sh) = (t.with_lanes(t.lanes / 2), s.with_lanes(s.lanes / 2));
            for conversion in ["Cast", "SatCast"] {
                let halves = [Term::Slot("a"), Term::Slot("b")];
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{conversion} to {} of a {} concatenation, by halves",
                        super::term::type_name(t),
                        super::term::type_name(s)
                    ),
                    lhs: op(conversion, t, vec![op("Concat", s, halves.to_vec())]),
                    rhs: op(
                        "Concat",
                        t,
                        halves
                            .iter()
                            .map(|h| op(conversion, th, vec![h.clone()]))
                            .collect(),
                    ),
                    conditions: vec![Condition::TypeOf(Term::Slot("a"), sh)],
                });
            }
        }
    }
    for &t in types {
        out.extend(select_rewrites(t));
    }
    for &t in types {
        for &s in types {
            if !t.elem.is_int() || !s.elem.is_int() || s.lanes != t.lanes {
                continue;
            }
            let (tn, sn) = (super::term::type_name(t), super::term::type_name(s));
            let c = |ty| Term::Const {
                ty,
                value: Int::Slot("c"),
            };
            for conversion in ["Cast", "SatCast"] {
                let Some(mid) = cast_midpoint(s, t, conversion == "SatCast") else {
                    continue;
                };
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!("{sn} to {tn} through {}", super::term::type_name(mid)),
                    lhs: op(conversion, t, vec![Term::Slot("x")]),
                    rhs: op(
                        conversion,
                        t,
                        vec![op(conversion, mid, vec![Term::Slot("x")])],
                    ),
                    conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                });
            }
            // A narrowing of less than a register: the low half of narrowing it twice over.
            let (s2, t2) = (s.with_lanes(2 * s.lanes), t.with_lanes(2 * t.lanes));
            if s.elem.bits() > t.elem.bits() && s2.bits() <= register_bits {
                for conversion in ["Cast", "SatCast"] {
                    out.push(Rewrite {
                        ruleset: Ruleset::Lower,
                        source: format!(
                            "{sn} to {tn}, the low half of {} to {}",
                            super::term::type_name(s2),
                            super::term::type_name(t2)
                        ),
                        lhs: op(conversion, t, vec![Term::Slot("x")]),
                        rhs: Term::Lanes {
                            ty: t,
                            offset: 0,
                            arg: Box::new(op(
                                conversion,
                                t2,
                                vec![op("Concat", s2, vec![Term::Slot("x"), Term::Slot("x")])],
                            )),
                        },
                        conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                    });
                }
            }
            if let Some(twin) = extension_twin(s, t) {
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{sn} to {tn} is the same bits as {sn} to {}",
                        super::term::type_name(twin)
                    ),
                    lhs: op("Cast", t, vec![Term::Slot("x")]),
                    rhs: Term::Reinterpret {
                        ty: t,
                        arg: Box::new(op("Cast", twin, vec![Term::Slot("x")])),
                    },
                    conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                });
            }
            if s.elem.bits() < t.elem.bits() {
                out.push(Rewrite {
                    ruleset: Ruleset::Lift,
                    source: format!("a {tn} constant that fits in {sn}"),
                    lhs: c(t),
                    rhs: op("Cast", t, vec![c(s)]),
                    conditions: vec![
                        Condition::Compare(Cmp::Ge, Int::Slot("c"), Int::Lit(s.elem.min_value())),
                        Condition::Compare(Cmp::Le, Int::Slot("c"), Int::Lit(s.elem.max_value())),
                    ],
                });
            } else if s.elem.bits() == t.elem.bits() && s != t {
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!("{sn} as {tn} is the same bits"),
                    lhs: op("Cast", t, vec![Term::Slot("x")]),
                    rhs: Term::Reinterpret {
                        ty: t,
                        arg: Box::new(Term::Slot("x")),
                    },
                    conditions: vec![Condition::TypeOf(Term::Slot("x"), s)],
                });
            }
        }
    }
    out
}
