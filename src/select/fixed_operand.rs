//! Instructions with a vector operand fixed to zeros or ones: x86's `pmaddwd` of a vector of
//! ones sums pairs of widened lanes (Halide's widening pairwise sums), `psadbw` against zeros
//! sums bytes, `pmaddubsw` of ones sums pairs of bytes. The instruction's pattern with the
//! operand replaced by the constant is simplified ([`simplify`]); where that folds a multiply,
//! a minimum or a maximum away, the instruction with that operand fixed is another lowering (a
//! copy of an operand is none). And an accumulating instruction whose product no instruction
//! computes alone takes a zero accumulator ([`zero_accumulator_variants`]). An immediate that
//! only chooses among computations (a rounding mode) is fixed to each of its values
//! ([`immediate_mode_variants`]).

use super::lowering::{Arg, Lowering};
use super::simplify::simplify;
use crate::ir::{Expr, Op};
use crate::semantics::{eval, Env};
use crate::spec::Instruction;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The constants an operand is fixed to: the identities of addition and multiplication.
const VALUES: [i64; 2] = [0, 1];

/// The lowering with each of its vector operands (but one) fixed to each of [`VALUES`] in
/// turn, where that simplifies its pattern.
pub fn fixed_operand_variants(l: &Lowering, ins: &Instruction) -> Vec<Lowering> {
    let wildcards: Vec<(usize, &str)> = l
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            Arg::Wildcard(name) => Some((i, name.as_str())),
            _ => None,
        })
        .collect();
    // Fixing an operand is kept only where it drops a product or a clamp.
    if wildcards.len() < 2 || products_and_clamps(&l.pattern) == 0 {
        return vec![];
    }
    let mut out = Vec::new();
    for &(i, name) in &wildcards {
        let ty = ins.operands[i].ty;
        if !ty.elem.is_int() {
            continue;
        }
        for value in VALUES {
            let constant = Rc::new(Expr::constant(ty, vec![value as u128]));
            let renames = HashMap::from([(name.to_string(), constant)]);
            let fixed = simplify(&l.pattern.substitute(&renames));
            let vars = fixed.vars();
            let reads_operand = vars.iter().any(|(v, _)| v == name);
            // A constant (`min(a, 0)` of unsigned lanes) or a copy is no lowering, nor an
            // accumulation of zero (the instruction without the accumulator is one).
            if reads_operand
                || vars.is_empty()
                || fixed.copies_an_operand()
                || !drops_a_product_or_clamp(&l.pattern, &fixed)
            {
                continue;
            }
            let mut args = l.args.clone();
            args[i] = Arg::Fixed(value);
            out.push(Lowering {
                pattern: fixed,
                args,
                source: format!("{} with {name} all {value}", l.source),
                ..l.clone()
            });
        }
    }
    out
}

/// Immediates of at most this many values are tried one by one as modes.
const MODE_VALUES: i128 = 32;

/// An immediate that only chooses among computations (`roundps`'s rounding mode): read by the
/// pattern only inside conditions of selects, with few values. The instruction at each value
/// whose pattern, the immediate fixed, selects by no constant condition any more (each choice
/// folded away; a blend's constant lane mask stays, and is no mode) is another lowering; values
/// giving the same pattern give it once, at the lowest. Patterns of one lane have none.
pub fn immediate_mode_variants(l: &Lowering, ins: &Instruction) -> Vec<Lowering> {
    let mut out = Vec::new();
    // At one lane every choice looks like a mode: a lane insert at lane 0 would be a copy.
    if l.pattern.ty.lanes == 1 {
        return out;
    }
    for (i, (arg, op)) in l.args.iter().zip(&ins.operands).enumerate() {
        let Some((lo, hi)) = op.imm else {
            continue;
        };
        let reads = l.pattern.vars().iter().any(|(v, _)| *v == op.name);
        if !matches!(arg, Arg::Splat)
            || hi - lo >= MODE_VALUES
            || !reads
            || read_outside_conditions(&l.pattern, &op.name)
        {
            continue;
        }
        let mut patterns = HashSet::new();
        for value in lo..=hi {
            let constant = Rc::new(Expr::constant(op.ty, vec![value as u128]));
            let renames = HashMap::from([(op.name.clone(), constant)]);
            let fixed = simplify(&chosen(&l.pattern.substitute(&renames)));
            if selects_by_a_constant(&fixed)
                || fixed.vars().is_empty()
                || fixed.copies_an_operand()
                || !patterns.insert(fixed.to_string())
            {
                continue;
            }
            let mut args = l.args.clone();
            args[i] = Arg::Fixed(value as i64);
            out.push(Lowering {
                pattern: fixed,
                args,
                source: format!("{} with {} = {value}", l.source, op.name),
                ..l.clone()
            });
        }
    }
    out
}

/// `e` with each select whose condition is constant and the same in every lane replaced by
/// the operand it chooses.
fn chosen(e: &Rc<Expr>) -> Rc<Expr> {
    let args: Vec<Rc<Expr>> = e.args.iter().map(chosen).collect();
    if e.op == Op::Select && args[0].vars().is_empty() {
        if let Ok(condition) = eval(&args[0], &Env::new()) {
            if let Some(&first) = condition.lanes.first() {
                if condition.lanes.iter().all(|&lane| lane == first) {
                    return args[if first != 0 { 1 } else { 2 }].clone();
                }
            }
        }
    }
    if args.iter().zip(&e.args).all(|(a, b)| Rc::ptr_eq(a, b)) {
        return e.clone();
    }
    Rc::new(Expr {
        op: e.op.clone(),
        ty: e.ty,
        args,
    })
}

/// Whether `e` reads the variable `name` other than in the condition of a select.
fn read_outside_conditions(e: &Expr, name: &str) -> bool {
    match &e.op {
        Op::Var(v) => v == name,
        Op::Select => e.args[1..].iter().any(|a| read_outside_conditions(a, name)),
        _ => e.args.iter().any(|a| read_outside_conditions(a, name)),
    }
}

/// Whether `e` holds a select whose condition reads no variable.
fn selects_by_a_constant(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= x.op == Op::Select && x.args[0].vars().is_empty());
    found
}

/// Whether `fixed` computes fewer multiplies, minimums or maximums than `pattern`.
fn drops_a_product_or_clamp(pattern: &Expr, fixed: &Expr) -> bool {
    products_and_clamps(fixed) < products_and_clamps(pattern)
}

/// The multiplies, minimums and maximums `e` computes.
fn products_and_clamps(e: &Expr) -> usize {
    let mut n = 0;
    e.walk(&mut |x| n += usize::from(matches!(x.op, Op::Mul | Op::Min | Op::Max)));
    n
}

/// An accumulating instruction with no instruction computing its product alone (HVX's signed
/// `vmpyie` exists only as `Vx.w += vmpyie(Vu.w, Vv.h)`) computes it with the accumulator all
/// zero: for each lowering `acc + p` (a wildcard `acc` of integer lanes that `p` does not read)
/// where no lowering of `lowerings` computes `p` (up to its wildcards' names), the lowering of
/// `p` with `acc` fixed to 0.
pub fn zero_accumulator_variants(lowerings: &[Lowering]) -> Vec<Lowering> {
    // Instructions as they are, not variants with an operand fixed already.
    let accumulating: Vec<(&Lowering, String, Rc<Expr>)> = lowerings
        .iter()
        .filter(|l| !l.args.iter().any(|a| matches!(a, Arg::Fixed(_))))
        .filter_map(|l| accumulated(l).map(|(acc, product)| (l, acc, product)))
        .collect();
    // What some lowering computes, and what a variant made here computes: only patterns whose
    // operator some product has can be one of them (the text names the operator).
    let operators: HashSet<&Op> = accumulating.iter().map(|(_, _, p)| &p.op).collect();
    let mut computed: HashSet<String> = lowerings
        .iter()
        .filter(|l| operators.contains(&l.pattern.op))
        .map(|l| canonical(&l.pattern))
        .collect();
    let mut out: Vec<Lowering> = Vec::new();
    for (l, acc, product) in accumulating {
        if !computed.insert(canonical(&product)) {
            continue;
        }
        let args = l
            .args
            .iter()
            .map(|a| match a {
                Arg::Wildcard(name) if *name == acc => Arg::Fixed(0),
                a => a.clone(),
            })
            .collect();
        out.push(Lowering {
            pattern: product,
            args,
            source: format!(
                "{} with {acc} all 0 (no instruction computes it alone)",
                l.source
            ),
            ..l.clone()
        });
    }
    out
}

/// The accumulator wildcard and the rest of a pattern `acc + p` (either way round).
fn accumulated(l: &Lowering) -> Option<(String, Rc<Expr>)> {
    if l.pattern.op != Op::Add || !l.pattern.ty.elem.is_int() {
        return None;
    }
    let [x, y] = &l.pattern.args[..] else {
        return None;
    };
    [(x, y), (y, x)].into_iter().find_map(|(acc, p)| {
        let Op::Var(name) = &acc.op else {
            return None;
        };
        let wildcard = l
            .args
            .iter()
            .any(|a| matches!(a, Arg::Wildcard(n) if n == name));
        let reads = p.vars().iter().any(|(v, _)| v == name);
        (wildcard && !reads && !p.copies_an_operand()).then(|| (name.clone(), p.clone()))
    })
}

/// A pattern's text with its variables named by their order of first use.
fn canonical(p: &Rc<Expr>) -> String {
    let renames: HashMap<String, Rc<Expr>> = p
        .vars()
        .into_iter()
        .enumerate()
        .map(|(k, (name, ty))| (name, Rc::new(Expr::var(&format!("w{k}"), ty))))
        .collect();
    p.substitute(&renames).to_string()
}
