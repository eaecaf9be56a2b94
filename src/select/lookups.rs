//! Lookups at any index by an instruction that masks its index. x86's `pshufb` is, by its
//! semantics, `(lookup a (and b 0x8f))`: it reads an index's low four bits, and zeroes a lane
//! whose bit 7 is set. A lookup in a table of its lanes at an index of any value is that
//! instruction at the index plus a constant, saturating, that carries every index past the
//! table into the zeroing bit and leaves the table's own indices' low bits as they are (`+ 0x70`
//! for `pshufb`). The constants follow from each instruction's mask, found among the target's
//! lowerings; the rewrite is sound by construction and every selection is proven.

use super::catalog::Catalog;
use super::fallback::constant;
use super::term::{op, reinterpret, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::semantics::read_ranges::{constant_value, low_ones};

/// A lookup instruction's pattern `(lookup table (and index mask))`: the table's type and the
/// index's, and the mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MaskedLookup {
    pub table: VecType,
    pub index: VecType,
    pub mask: i128,
}

/// The target's lookup instructions that mask their index with a constant.
pub fn masked_lookups(catalog: &Catalog) -> Vec<MaskedLookup> {
    let mut out: Vec<MaskedLookup> = catalog
        .lowerings
        .iter()
        .filter_map(|l| masked_lookup(&l.pattern))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn masked_lookup(pattern: &Expr) -> Option<MaskedLookup> {
    let (Op::Lookup, [table, masked]) = (&pattern.op, pattern.args.as_slice()) else {
        return None;
    };
    let (Op::And, [x, m]) = (&masked.op, masked.args.as_slice()) else {
        return None;
    };
    let (index, mask) = match (&x.op, &m.op) {
        (Op::Var(_), _) => (x, constant_value(m)?),
        (_, Op::Var(_)) => (m, constant_value(x)?),
        _ => return None,
    };
    matches!(table.op, Op::Var(_)).then_some(MaskedLookup {
        table: table.ty,
        index: index.ty,
        mask,
    })
}

/// The constant that, added with saturation to an index, keeps the low bits of the table's
/// indices and sets the index's top bit for every other index: None unless the mask keeps the
/// table's index bits, none above them but the top one, and that one.
fn carry(m: &MaskedLookup) -> Option<i128> {
    let bits = m.index.elem.bits();
    let k = m.table.lanes.checked_ilog2()?;
    if m.table.lanes != 1 << k || low_ones(m.index.elem, m.mask) < k {
        return None;
    }
    let above = (m.mask as u128 & (u128::MAX >> (128 - bits))) >> k;
    (above.trailing_zeros() + k == bits - 1).then(|| (1i128 << (bits - 1)) - (1i128 << k))
}

/// The rewrites of a lookup whose result has type `ty` by each masking instruction with a
/// table of as many lanes and lanes as wide: the index, read unsigned, plus the carry with
/// saturation, masked as the instruction masks it, at the instruction's own types. An index
/// past a table of at most half its type's values reads a zero lane at either signedness.
pub fn lookup_rewrites(ty: VecType, masked: &[MaskedLookup]) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for m in masked {
        let (Some(carry), Some(unsigned)) = (carry(m), m.index.elem.unsigned()) else {
            continue;
        };
        let Some(wide) = Elem::int(2 * m.index.elem.bits(), false) else {
            continue;
        };
        let same_width = ty.elem.bits() == m.table.elem.bits() && ty.elem.is_int();
        if !same_width || m.index.lanes != m.table.lanes {
            continue;
        }
        let table = m.table.with_elem(ty.elem);
        let (t, i) = (Term::Slot("t"), Term::Slot("i"));
        let (u, w, own) = (
            ty.with_elem(unsigned),
            ty.with_elem(wide),
            ty.with_elem(m.index.elem),
        );
        for elem in [unsigned, unsigned.other_signedness().unwrap_or(unsigned)] {
            let index = ty.with_elem(elem);
            let widened = op("Cast", w, vec![read(i.clone(), index, u)]);
            // The carry as the widened constant, as a saturating add's pattern reads it.
            let carry_widened = op("Cast", w, vec![constant(u, carry)]);
            let sum = op("Add", w, vec![widened, carry_widened]);
            let carried = read(op("SatCast", u, vec![sum]), u, own);
            let masked_index = op("And", own, vec![carried, constant(own, m.mask)]);
            let looked_up = ty.with_elem(m.table.elem);
            let lookup = op(
                "Lookup",
                looked_up,
                vec![read(t.clone(), table, m.table), masked_index],
            );
            out.push(Rewrite {
                ruleset: Ruleset::Lower,
                source: format!(
                    "lookup at {} in {} by the index plus {carry}, saturating, masked by {}",
                    type_name(index),
                    type_name(table),
                    m.mask
                ),
                lhs: op("Lookup", ty, vec![t.clone(), i.clone()]),
                rhs: read(lookup, looked_up, ty),
                conditions: vec![
                    Condition::TypeOf(t.clone(), table),
                    Condition::TypeOf(i.clone(), index),
                ],
            });
        }
    }
    out
}

/// `v` of type `from` read as `to`.
fn read(v: Term, from: VecType, to: VecType) -> Term {
    if from == to {
        v
    } else {
        reinterpret(to, v)
    }
}
