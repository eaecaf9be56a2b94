//! Instructions with a vector operand fixed to zeros or ones: x86's `pmaddwd` of a vector of
//! ones sums pairs of widened lanes (Halide's widening pairwise sums), `psadbw` against zeros
//! sums bytes, `pmaddubsw` of ones sums pairs of bytes. The instruction's pattern with the
//! operand replaced by the constant is simplified ([`simplify`]); where that folds a multiply,
//! a minimum or a maximum away, the instruction with that operand fixed is another lowering (a
//! copy of an operand is none). And an accumulating instruction whose product no instruction
//! computes alone takes a zero accumulator ([`zero_accumulator_variants`]).

use super::lowering::{Arg, Lowering};
use super::simplify::simplify;
use crate::ir::{Expr, Op};
use crate::spec::Instruction;
use std::collections::HashMap;
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
    if wildcards.len() < 2 {
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

/// Whether `fixed` computes fewer multiplies, minimums or maximums than `pattern`.
fn drops_a_product_or_clamp(pattern: &Expr, fixed: &Expr) -> bool {
    let count = |e: &Expr| {
        let mut n = 0;
        e.walk(&mut |x| n += usize::from(matches!(x.op, Op::Mul | Op::Min | Op::Max)));
        n
    };
    count(fixed) < count(pattern)
}

/// An accumulating instruction with no instruction computing its product alone (HVX's signed
/// `vmpyie` exists only as `Vx.w += vmpyie(Vu.w, Vv.h)`) computes it with the accumulator all
/// zero: for each lowering `acc + p` (a wildcard `acc` of integer lanes that `p` does not read)
/// where no lowering of `lowerings` computes `p` (up to its wildcards' names), the lowering of
/// `p` with `acc` fixed to 0.
pub fn zero_accumulator_variants(lowerings: &[Lowering]) -> Vec<Lowering> {
    // What some lowering computes, and what a variant made here computes.
    let mut computed: std::collections::HashSet<String> =
        lowerings.iter().map(|l| canonical(&l.pattern)).collect();
    let mut out: Vec<Lowering> = Vec::new();
    // Instructions as they are, not variants with an operand fixed already.
    let unfixed = lowerings
        .iter()
        .filter(|l| !l.args.iter().any(|a| matches!(a, Arg::Fixed(_))));
    for l in unfixed {
        let Some((acc, product)) = accumulated(l) else {
            continue;
        };
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
