//! Constants generalized to a variable: an equality proven for every value of a variable holds
//! for the constant it stands for, substituted back on both sides. z3 bit-blasts a product by a
//! numeral into a chain of additions, which a product computed by halves (HVX's 64-bit product
//! of a division's magic number, by `vmpye` and `vmpyo`) never meets, and the equivalence of
//! two such multipliers takes it minutes or more; with the numeral a variable, both sides are
//! products again and the attempts that split products at their halves decide it in seconds.

use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// The least value (at its width, read unsigned and signed) of a numeral worth generalizing:
/// shift amounts, small factors and masks of a few bits are not multipliers z3 struggles with.
const LEAST_MAGNITUDE: i128 = 256;

/// A numeral: its lanes' width and its bits at that width.
type Numeral = (u32, u128);

/// For each numeral of `rhs` that `lhs` multiplies by (as it is or extended to wider lanes),
/// the two sides with it replaced by one variable (read signed or extended where the numeral
/// was), in order of the numerals' widths and values. Empty when there is none.
pub fn generalized(lhs: &Expr, rhs: &Expr) -> Vec<(Expr, Expr)> {
    let taken: BTreeSet<String> = lhs
        .vars()
        .into_iter()
        .chain(rhs.vars())
        .map(|v| v.0)
        .collect();
    let mut factors = BTreeSet::new();
    lhs.walk_distinct(&mut |e| {
        if e.op == Op::Mul {
            factors.extend(e.args.iter().filter_map(|a| splat_of(a)));
        }
    });
    let mut in_rhs = BTreeSet::new();
    rhs.walk_distinct(&mut |e| in_rhs.extend(splat_of(e)));
    let mut out = Vec::new();
    for (width, bits) in in_rhs {
        if !large((width, bits)) || !factors.iter().any(|f| extends((width, bits), *f)) {
            continue;
        }
        let name = (0..)
            .map(|k| format!("generalized{k}"))
            .find(|n| !taken.contains(n))
            .expect("a free name");
        let numeral = (width, bits);
        // A lane of its own for each lane where every place the numeral stands has the same
        // lanes (each lane's query is then the others' up to renaming, answered once), else one
        // lane broadcast.
        let mut lanes = BTreeSet::new();
        for side in [lhs, rhs] {
            side.walk_distinct(&mut |e| {
                if stands_at(numeral, e).is_some() {
                    lanes.insert(e.ty.lanes);
                }
            });
        }
        let own_lanes = match lanes.len() {
            1 => lanes.first().copied(),
            _ => None,
        };
        let unsigned = Elem::int(width, false).expect("an integer width");
        let ty = VecType::new(own_lanes.unwrap_or(1), unsigned);
        let mut replace = Replace {
            numeral,
            variable: Rc::new(Expr::var(&name, ty)),
            own_lanes: own_lanes.is_some(),
            done: HashMap::new(),
        };
        let (l, r) = (
            replace.tree(&Rc::new(lhs.clone())),
            replace.tree(&Rc::new(rhs.clone())),
        );
        out.push((l.as_ref().clone(), r.as_ref().clone()));
    }
    out
}

/// Whether `e` reads a numeral a proof may generalize to a variable ([`generalized`]).
pub fn reads_a_generalizable_numeral(e: &Expr) -> bool {
    let mut reads = false;
    e.walk_distinct(&mut |n| reads |= splat_of(n).is_some_and(large));
    reads
}

/// An integer splat of lanes of at least 16 bits: its width and bits.
fn splat_of(e: &Expr) -> Option<Numeral> {
    match &e.op {
        Op::Const(lanes) if e.ty.elem.is_int() && e.ty.elem.bits() >= 16 => {
            let first = *lanes.first()?;
            lanes
                .iter()
                .all(|&b| b == first)
                .then_some((e.ty.elem.bits(), first))
        }
        Op::Cast(to) if to.is_int() => {
            let (width, bits) = splat_of(&e.args[0])?;
            let from = e.args[0].ty.elem;
            (e.ty.elem.bits() >= width).then(|| (e.ty.elem.bits(), extended(from, bits, e.ty.elem)))
        }
        _ => None,
    }
}

/// Whether a numeral is far from zero both ways at its width.
fn large((width, bits): Numeral) -> bool {
    bits as i128 >= LEAST_MAGNITUDE && signed_value(width, bits).abs() >= LEAST_MAGNITUDE
}

fn signed_value(width: u32, bits: u128) -> i128 {
    let shift = 128 - width;
    ((bits << shift) as i128) >> shift
}

/// `bits` of lanes `from` converted to lanes `to` (at least as wide): zero- or sign-extended.
fn extended(from: Elem, bits: u128, to: Elem) -> u128 {
    match from.is_signed() {
        true => (signed_value(from.bits(), bits) as u128) & to.mask(),
        false => bits,
    }
}

/// Whether `wide` is `narrow` at its width or extended to wider lanes (zero- or sign-).
fn extends(narrow: Numeral, wide: Numeral) -> bool {
    let (width, bits) = narrow;
    let mask = |w: u32| {
        if w >= 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        }
    };
    wide.0 >= width
        && (wide.1 == bits || wide.1 == (signed_value(width, bits) as u128) & mask(wide.0))
}

/// The replacement of one numeral in trees that share subterms (each replaced once).
struct Replace {
    numeral: Numeral,
    /// Lanes of the numeral's width, unsigned: one, or as many as every place it stands has.
    variable: Rc<Expr>,
    /// Whether the variable has the lanes of every place (else it is broadcast).
    own_lanes: bool,
    done: HashMap<*const Expr, Rc<Expr>>,
}

impl Replace {
    fn tree(&mut self, e: &Rc<Expr>) -> Rc<Expr> {
        if let Some(r) = self.done.get(&Rc::as_ptr(e)) {
            return r.clone();
        }
        let r = match self.numeral_at(e) {
            Some(r) => r,
            None if e.args.is_empty() => e.clone(),
            None => {
                let args: Vec<Rc<Expr>> = e.args.iter().map(|a| self.tree(a)).collect();
                match args.iter().zip(&e.args).all(|(a, b)| Rc::ptr_eq(a, b)) {
                    true => e.clone(),
                    false => Rc::new(Expr {
                        op: e.op.clone(),
                        ty: e.ty,
                        args,
                    }),
                }
            }
        };
        self.done.insert(Rc::as_ptr(e), r.clone());
        r
    }

    /// The variable standing for `e` where `e` is the numeral, at its width or extended to
    /// wider lanes as its signedness extends.
    fn numeral_at(&self, e: &Expr) -> Option<Rc<Expr>> {
        let from = stands_at(self.numeral, e)?;
        let lanes = match self.own_lanes {
            true => self.variable.clone(),
            false => build(Op::Broadcast(e.ty.lanes), vec![self.variable.clone()]),
        };
        let read = match from.is_signed() {
            true => build(Op::Bitcast(from), vec![lanes]),
            false => lanes,
        };
        Some(match e.ty.elem == from {
            true => read,
            false => build(Op::Cast(e.ty.elem), vec![read]),
        })
    }
}

/// Where `e` is a splat of `numeral`, at its width or extended to wider lanes as `e`'s
/// signedness extends: the lanes it extends (at the numeral's width, `e`'s signedness).
fn stands_at((width, bits): Numeral, e: &Expr) -> Option<Elem> {
    let Op::Const(lanes) = &e.op else {
        return None;
    };
    let elem = e.ty.elem;
    if !elem.is_int() || elem.bits() < width || lanes.iter().any(|&b| b != lanes[0]) {
        return None;
    }
    let from = Elem::int(width, elem.is_signed())?;
    (lanes[0] == extended(from, bits, elem)).then_some(from)
}

fn build(op: Op, args: Vec<Rc<Expr>>) -> Rc<Expr> {
    Rc::new(Expr::build(op, args).expect("a broadcast, reinterpretation or extension of a lane"))
}
