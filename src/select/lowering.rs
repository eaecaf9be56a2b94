//! Lowerings: "this instruction computes this pattern", each from a proven idiom fact or from the
//! instruction's own semantics, with what every operand of the instruction receives ([`Arg`]).
//! Program generation turns them into rewrites of the lower ruleset.

use super::simplify::simplify;
use crate::idioms::{instantiate_idiom, read_as, Constant, Fact, OperandBinding};
use crate::ir::{Expr, Op, VecType};
use crate::spec::{Instruction, SpecSet};
use std::collections::HashMap;
use std::rc::Rc;

/// What an instruction operand receives in a lowering.
#[derive(Debug, Clone)]
pub enum Arg {
    /// The value bound to this wildcard.
    Wildcard(String),
    /// A scalar operand (immediate or register), the pattern variable of its own name: program
    /// generation instantiates it with each constant of the input.
    Splat,
    /// A fixed constant.
    Fixed(i64),
    /// A register pair given as its two registers (low, high), each a wildcard.
    Pair(String, String),
    /// A few lanes packed into one scalar register (HVX `Rt.b`), the pattern variable of its own
    /// name: program generation instantiates it with constants of the input, alternating two
    /// values.
    Packed,
    /// The value bound to this wildcard, its lanes widened to fill the operand (an instruction
    /// that reads only their low bits: a halfword in a scalar register, the even halfwords of a
    /// vector of words), read as the operand's type.
    Widened(String),
    /// The value bound to this wildcard clamped to `lo..=hi` (a fact whose instruction reads
    /// only that range of the operand, `OperandBinding::Clamped`).
    Clamped(String, i64, i64),
}

/// "This instruction computes this pattern": from an idiom fact or the instruction's own
/// semantics.
#[derive(Debug, Clone)]
pub struct Lowering {
    /// The instruction's index in the catalog.
    pub instruction: usize,
    /// What it computes, over the wildcards of its arguments.
    pub pattern: Rc<Expr>,
    /// What each operand receives, in operand order.
    pub args: Vec<Arg>,
    /// Where it came from, for `--emit egglog`.
    pub source: String,
    /// Ranges its wildcards must lie in (see `ranged.rs`); none for most.
    pub bounds: Vec<Bound>,
    /// An instruction of one lane by its own semantics (NEON's `sshr Dd`, `sqxtn Bd`): used
    /// only for inputs of one lane, where the one-lane pieces of split 64-bit lanes elsewhere
    /// would take them all (the NEON selections of `tests/` took 2.8 times as long).
    pub one_lane: bool,
    /// Where the pattern computes lanes of the instruction's result, one register of a pair
    /// ([`result_register_variants`]) or the low lanes ([`low_lanes_variant`]): the first
    /// lane; None for the whole result.
    pub result_from: Option<u32>,
}

/// A wildcard's lanes lie in `lo..=hi`, by the e-graph's bounds analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub wildcard: String,
    pub lo: i128,
    pub hi: i128,
}

pub fn fact_lowering(
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
            OperandBinding::Param(q) | OperandBinding::Clamped { param: q, .. } if q == p => {
                Some((i, false))
            }
            OperandBinding::Splat(q) if q == p => Some((i, true)),
            _ => None,
        })?;
        let op = &ins.operands[i];
        if splat {
            let scalar = Rc::new(Expr::var(&op.name, VecType::new(1, op.ty.elem)));
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
    // A result of the other signedness is reinterpreted by the rewrite.
    read_as(&template, ins.result)?;
    let args = entries
        .iter()
        .zip(&ins.operands)
        .map(|(e, op)| match e {
            OperandBinding::Fixed(Constant::Int(v)) => i64::try_from(*v).ok().map(Arg::Fixed),
            OperandBinding::Fixed(Constant::Float(_)) => None,
            OperandBinding::Splat(_) => Some(Arg::Splat),
            OperandBinding::Param(_) => Some(Arg::Wildcard(op.name.clone())),
            OperandBinding::Clamped { lo, hi, .. } => Some(Arg::Clamped(
                op.name.clone(),
                i64::try_from(*lo).ok()?,
                i64::try_from(*hi).ok()?,
            )),
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Lowering {
        instruction: index,
        pattern: template.substitute(&renames),
        args,
        source: format!("fact: {} implements {}", ins.name, idiom.name),
        bounds: Vec::new(),
        one_lane: false,
        result_from: None,
    })
}

/// The instruction's own semantics as a pattern, when every operand is a vector (immediates
/// become constant wildcards; a bool vector, an HVX predicate or AVX-512 mask, is a wildcard
/// like any other, so `vmux` and mask blends take comparisons). A register pair the semantics
/// reads only by halves becomes two wildcards, so the pattern matches two separately computed
/// registers.
pub fn semantics_lowering(ins: &Instruction, index: usize, register_bits: u32) -> Option<Lowering> {
    let mut renames: HashMap<String, Rc<Expr>> = HashMap::new();
    let mut args = Vec::new();
    for op in &ins.operands {
        if op.ty.lanes == 1 {
            args.push(Arg::Splat);
        } else if op.c_type.is_some() && op.ty.bits() <= 64 {
            args.push(Arg::Packed);
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
    // A copy (HVX's `vassign`) computes nothing extraction could want: rewriting every value
    // of its type into a copy of itself only grows the e-graph.
    if pattern.copies_an_operand() {
        return None;
    }
    Some(Lowering {
        instruction: index,
        pattern,
        args,
        source: format!("semantics of {}", ins.name),
        bounds: Vec::new(),
        one_lane: ins.result.lanes == 1,
        result_from: None,
    })
}

/// An instruction whose result is a register pair computes each register by its own part of
/// its semantics: a lowering of each register alone, the instruction's result read at that
/// register's lanes (HVX's `Vxx+=vmpyo(Vu.w,Vv.h)`, whose high register is
/// `(Vu * odd(Vv) + Vxx.hi) >> 16`, for the high word of a product of words). An operand the
/// register does not read takes any value: a register pair read only by its other register gets
/// that register twice, any other operand zero.
pub fn result_register_variants(l: &Lowering, register_bits: u32) -> Vec<Lowering> {
    let p = &l.pattern;
    let register = |e: &Rc<Expr>| e.ty.bits() == register_bits;
    if p.op != Op::Concat || p.args.len() != 2 || !p.args.iter().all(register) {
        return vec![];
    }
    let half_lanes = p.args[0].ty.lanes;
    p.args
        .iter()
        .zip([0, half_lanes])
        .filter(|(half, _)| !half.copies_an_operand())
        .map(|(half, from)| {
            let reads = |name: &String| half.vars().iter().any(|(n, _)| n == name);
            let args = l
                .args
                .iter()
                .map(|a| match a {
                    Arg::Pair(lo, hi) => match (reads(lo), reads(hi)) {
                        (true, true) => a.clone(),
                        (true, false) => Arg::Pair(lo.clone(), lo.clone()),
                        (false, true) => Arg::Pair(hi.clone(), hi.clone()),
                        (false, false) => Arg::Fixed(0),
                    },
                    Arg::Wildcard(name) | Arg::Widened(name) | Arg::Clamped(name, ..)
                        if !reads(name) =>
                    {
                        Arg::Fixed(0)
                    }
                    other => other.clone(),
                })
                .collect();
            Lowering {
                pattern: half.clone(),
                args,
                source: format!("{}, its result's lanes from {from}", l.source),
                result_from: Some(from),
                ..l.clone()
            }
        })
        .collect()
}

/// An instruction whose result is a value with zeros past it (AVX-512's `vpmovqb`: eight bytes
/// in a 128-bit register) computes that value: the lowering of the value alone, the
/// instruction's result read at its low lanes.
pub fn low_lanes_variant(l: &Lowering) -> Option<Lowering> {
    let p = &l.pattern;
    let [value, rest] = p.args.as_slice() else {
        return None;
    };
    let zeros = matches!(&rest.op, Op::Const(lanes) if lanes.iter().all(|&v| v == 0));
    // Not an operand moved into a register beside zeros (`_mm_cvtsi32_si128`): every value
    // of its type would match.
    let computed = !value.vars().is_empty() && !value.copies_an_operand();
    if p.op != Op::Concat || !zeros || !computed || l.result_from.is_some() {
        return None;
    }
    Some(Lowering {
        pattern: value.clone(),
        source: format!("{}, its result's low lanes", l.source),
        result_from: Some(0),
        ..l.clone()
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

/// A bitwise instruction, or one that concatenates its operands (x86's `_mm256_set_m128i`),
/// works on lanes of any integer type that divides its operands: the pattern at each such type
/// (operands and result reinterpreted).
pub fn lane_type_variants(l: &Lowering) -> Vec<Lowering> {
    // Bool lanes (HVX predicates, AVX-512 masks) are not the bits of a vector register.
    let mut any_lanes = l.pattern.ty.elem != crate::ir::Elem::Bool;
    l.pattern.walk(&mut |n| {
        any_lanes &= matches!(
            n.op,
            Op::Var(_) | Op::And | Op::Or | Op::Xor | Op::Not | Op::Concat
        )
    });
    if !any_lanes || l.args.iter().any(|a| !matches!(a, Arg::Wildcard(_))) {
        return vec![];
    }
    let mut widths = vec![l.pattern.ty.bits()];
    l.pattern.walk(&mut |n| widths.push(n.ty.bits()));
    crate::ir::Elem::ALL
        .iter()
        .filter(|e| {
            e.is_int()
                && e.bits() <= 64
                && widths.iter().all(|w| w.is_multiple_of(e.bits()))
                && **e != l.pattern.ty.elem
        })
        .filter_map(|&e| {
            let at_e = |t: VecType| Some(VecType::new(t.bits() / e.bits(), e));
            let retyped = with_var_types(&l.pattern, &|_, t| at_e(t))?;
            Some(Lowering {
                pattern: retyped,
                source: format!("{} at {e} lanes", l.source),
                ..l.clone()
            })
        })
        .collect()
}

/// An instruction whose result is the bits of a value of another type of the same width (x86's
/// `cmpps`: all-ones lanes made as u32, read as f32) computes that value too, its result read
/// at the value's type: the lowering of the value itself (NEON's `vcltq_f32` on x86).
pub fn bits_of_result_variant(l: &Lowering) -> Option<Lowering> {
    let (Op::Bitcast(_), [value]) = (&l.pattern.op, l.pattern.args.as_slice()) else {
        return None;
    };
    let same_lanes = value.ty.lanes == l.pattern.ty.lanes && value.ty.bits() == l.pattern.ty.bits();
    (same_lanes && value.ty.elem != crate::ir::Elem::Bool).then(|| Lowering {
        pattern: value.clone(),
        source: format!("{} read as {}", l.source, value.ty),
        ..l.clone()
    })
}

/// A pattern with a commutative operator whose operands are of different kinds (`(and (not a)
/// b)`, `(min (max a lo) hi)`, HVX's `(cast (shr (add (mul a b) (cast x)) 16))`) matches the other
/// operand order too: the pattern with the operands of the outermost such operator swapped.
/// Not for sums and products of lanes up to 32 bits, which the simplification rules commute in
/// the e-graph.
pub fn commuted_variant(l: &Lowering) -> Option<Lowering> {
    fn swapped(e: &Rc<Expr>) -> Option<Rc<Expr>> {
        let kinds_differ = e.args.len() == 2
            && std::mem::discriminant(&e.args[0].op) != std::mem::discriminant(&e.args[1].op);
        let commuted_by_rules = matches!(e.op, Op::Add | Op::Mul) && e.ty.elem.bits() <= 32;
        if e.op.is_commutative() && kinds_differ && !commuted_by_rules {
            let args = vec![e.args[1].clone(), e.args[0].clone()];
            return Some(Rc::new(Expr::build(e.op.clone(), args).ok()?));
        }
        let (i, arg) = e
            .args
            .iter()
            .enumerate()
            .find_map(|(i, a)| Some((i, swapped(a)?)))?;
        let mut args = e.args.clone();
        args[i] = arg;
        Some(Rc::new(Expr::build(e.op.clone(), args).ok()?))
    }
    Some(Lowering {
        pattern: swapped(&l.pattern)?,
        source: format!("{} with operands swapped", l.source),
        ..l.clone()
    })
}

/// An instruction that only moves lanes works on lanes of either signedness: the pattern with
/// every operand and the result at the other signedness. A lookup moves lanes too where its
/// index is read alike at either signedness ([`read_alike`], `pshufb` on indices 0 to 15), and
/// its table and index may differ in signedness: the pattern with each of them flipped alone
/// as well.
pub fn signedness_variants(l: &Lowering) -> Vec<Lowering> {
    let mut moves = true;
    l.pattern.walk(&mut |n| {
        moves &= n.ty.elem.is_int()
            && match (&n.op, n.args.as_slice()) {
                (Op::Lookup, [_, index]) => read_alike(index, &l.bounds),
                (op, _) => matches!(
                    op,
                    Op::Var(_) | Op::Slice { .. } | Op::Broadcast(_) | Op::Concat | Op::Interleave
                ),
            }
    });
    let root = matches!(
        l.pattern.op,
        Op::Broadcast(_) | Op::Interleave | Op::Concat | Op::Lookup
    );
    if !moves || !root {
        return vec![];
    }
    let other = |t: VecType| t.with_elem(t.elem.other_signedness()?).into();
    let mut flipped: Vec<Option<&str>> = vec![None];
    if let (Op::Lookup, [table, index]) = (&l.pattern.op, l.pattern.args.as_slice()) {
        if let (Op::Var(t), Op::Var(i)) = (&table.op, &index.op) {
            flipped.extend([Some(t.as_str()), Some(i.as_str())]);
        }
    }
    flipped
        .into_iter()
        .filter_map(|alone| {
            let retype = |name: &str, t: VecType| match alone {
                Some(a) if a != name => Some(t),
                _ => other(t),
            };
            Some(Lowering {
                pattern: with_var_types(&l.pattern, &retype)?,
                source: match alone {
                    None => format!("{} at the other signedness", l.source),
                    Some(a) => format!("{} with {a} at the other signedness", l.source),
                },
                ..l.clone()
            })
        })
        .collect()
}

/// Whether a lookup reads the same lanes at `index` read at either signedness: where the index
/// is a wildcard bounded to values of both (a lookup in a table of the lowering's own operands
/// without bounds keeps its signedness: its variants would change every target's catalog for
/// lookups the e-graph already reaches by reinterpreting).
fn read_alike(index: &Expr, bounds: &[Bound]) -> bool {
    let Op::Var(name) = &index.op else {
        return false;
    };
    let half = 1i128 << (index.ty.elem.bits() - 1);
    bounds
        .iter()
        .any(|b| &b.wildcard == name && b.lo >= 0 && b.hi < half)
}

/// An instruction with one scalar register operand (not an immediate: HVX's `vsplat(Rt)`,
/// `vmpy(Vu.h, Rt.h)`), or of one lane with several, takes any value in them, not only the
/// input's constants: the lowering with those operands as one-lane wildcards, matching a
/// broadcast of a computed value. Where the instruction reads only the low bits of one
/// (`vsplat(Rt)` of halfwords truncates it), also the lowering taking a value of that width
/// (widened into the register), at either signedness when the instruction only moves it.
pub fn scalar_register_variants(l: &Lowering, ins: &Instruction) -> Vec<Lowering> {
    let registers: Vec<&str> = l
        .args
        .iter()
        .zip(&ins.operands)
        .filter(|(a, op)| matches!(a, Arg::Splat) && op.imm.is_none() && op.ty.elem.is_int())
        .map(|(_, op)| op.name.as_str())
        .collect();
    // Several registers only for an instruction of one lane (NEON's `cmhi Dd, Dn, Dm`, x86's
    // `andn`): one assembling several into a vector (x86's `set_epi32`) would be a term without
    // operators for lanes computed apart, which extraction takes over the shuffle the
    // refinement finds (AVX2's `vdotq_s32` port went 24 -> 44).
    let register = match registers[..] {
        [register] => Some(register),
        [] => return vec![],
        _ if ins.result.lanes == 1 => None,
        _ => return vec![],
    };
    let args: Vec<Arg> = l
        .args
        .iter()
        .zip(&ins.operands)
        .map(|(a, op)| match registers.contains(&op.name.as_str()) {
            true => Arg::Wildcard(op.name.clone()),
            false => a.clone(),
        })
        .collect();
    let computed = Lowering {
        args,
        source: format!("{} with its scalar registers computed", l.source),
        ..l.clone()
    };
    let Some(register) = register else {
        return vec![computed];
    };
    let mut out = vec![];
    if let Some(pattern) = read_narrower(&computed.pattern, register) {
        let narrow = Lowering {
            pattern,
            args: widened(&computed.args, register),
            source: format!("{} at the width it reads", computed.source),
            ..computed.clone()
        };
        out.extend(signedness_variants(&narrow));
        out.push(narrow);
    }
    out.push(computed);
    out
}

/// `args` with the wildcard `name` passed widened.
fn widened(args: &[Arg], name: &str) -> Vec<Arg> {
    args.iter()
        .map(|a| match a {
            Arg::Wildcard(n) if n == name => Arg::Widened(n.clone()),
            a => a.clone(),
        })
        .collect()
}

/// An instruction that reads only the even lanes of a vector operand (HVX's `vmpyie` multiplies
/// words by the even, low, halfwords of its other operand) takes any vector of half as many
/// lanes there, widened: the lowering reading that operand as a vector of those lanes.
pub fn even_lanes_variants(l: &Lowering) -> Vec<Lowering> {
    l.args
        .iter()
        .filter_map(|a| match a {
            Arg::Wildcard(name) => {
                let pattern = read_even_lanes(&l.pattern, name)?;
                Some(Lowering {
                    pattern,
                    args: widened(&l.args, name),
                    source: format!("{} reading {name} widened", l.source),
                    ..l.clone()
                })
            }
            _ => None,
        })
        .collect()
}

/// `pattern` with every read of `name` (only ever read by `slice 0 2`) a read of a variable of
/// the kept lanes; None where it reads the variable otherwise.
fn read_even_lanes(pattern: &Rc<Expr>, name: &str) -> Option<Rc<Expr>> {
    let is_var = |e: &Expr| matches!(&e.op, Op::Var(n) if n == name);
    let even = |e: &Expr| {
        matches!(e.op, Op::Slice { start: 0, stride: 2, lanes } if 2 * lanes == e.args[0].ty.lanes)
            && is_var(&e.args[0])
    };
    let mut kept = None;
    let mut other = false;
    pattern.walk(&mut |e| {
        if even(e) {
            kept.get_or_insert(e.ty);
        } else {
            other |= e.args.iter().any(|a| is_var(a));
        }
    });
    let kept = kept.filter(|_| !other)?;
    fn replace(e: &Rc<Expr>, even: &dyn Fn(&Expr) -> bool, by: &Rc<Expr>) -> Rc<Expr> {
        if even(e) {
            return by.clone();
        }
        let args: Vec<Rc<Expr>> = e.args.iter().map(|a| replace(a, even, by)).collect();
        Rc::new(Expr {
            op: e.op.clone(),
            ty: e.ty,
            args,
        })
    }
    Some(replace(pattern, &even, &Rc::new(Expr::var(name, kept))))
}

/// `pattern` reading its variable `name` at the one narrower width it truncates it to, where
/// it reads no more of it.
fn read_narrower(pattern: &Rc<Expr>, name: &str) -> Option<Rc<Expr>> {
    let mut narrow = None;
    let mut whole = false;
    let is_var = |e: &Expr| matches!(&e.op, Op::Var(n) if n == name);
    pattern.walk(&mut |e| match &e.op {
        Op::Cast(to) if is_var(&e.args[0]) && to.bits() < e.args[0].ty.elem.bits() => {
            narrow.get_or_insert(e.ty);
            whole |= narrow != Some(e.ty);
        }
        _ => {
            whole |= e
                .args
                .iter()
                .any(|a| is_var(a) && !matches!(e.op, Op::Cast(_)))
        }
    });
    let narrow = narrow.filter(|_| !whole && !is_var(pattern))?;
    let wide = pattern.vars().into_iter().find(|(n, _)| n == name)?.1;
    let widened = Expr::build(Op::Cast(wide.elem), vec![Rc::new(Expr::var(name, narrow))]).ok()?;
    let renames = HashMap::from([(name.to_string(), Rc::new(widened))]);
    let read = simplify(&pattern.substitute(&renames));
    let mut widens = false;
    read.walk(&mut |e| widens |= matches!(e.op, Op::Cast(_)) && is_var(&e.args[0]));
    (!widens).then_some(read)
}

/// `e` with every variable's type mapped by `ty` and the nodes above rebuilt (None where one
/// no longer type-checks).
fn with_var_types(e: &Rc<Expr>, ty: &dyn Fn(&str, VecType) -> Option<VecType>) -> Option<Rc<Expr>> {
    if let Op::Var(n) = &e.op {
        return Some(Rc::new(Expr::var(n, ty(n, e.ty)?)));
    }
    let args = e
        .args
        .iter()
        .map(|a| with_var_types(a, ty))
        .collect::<Option<Vec<_>>>()?;
    Some(Rc::new(Expr::build(e.op.clone(), args).ok()?))
}
