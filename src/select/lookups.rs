//! Lookups at any index by an instruction that masks its index. x86's `pshufb` is, by its
//! semantics, `(lookup a (and b 0x8f))`: it reads an index's low four bits, and zeroes a lane
//! whose bit 7 is set. A lookup in a table of its lanes at an index of any value is that
//! instruction at the index plus a constant, saturating, that carries every index past the
//! table into the zeroing bit and leaves the table's own indices' low bits as they are (`+ 0x70`
//! for `pshufb`). The constants follow from each instruction's mask, found among the target's
//! lowerings; the rewrite is sound by construction and every selection is proven. A table of
//! several registers is the or of lookups in each (each at the index less the register's
//! offset, which wraps an index before it past it); a wide index is looked up by halves.

use super::catalog::Catalog;
use super::fallback::constant;
use super::reach::Heads;
use super::term::{op, reinterpret, type_name, Condition, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::semantics::read_ranges::{constant_value, low_ones};
use std::collections::BTreeSet;

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

/// The rewrites of the lookups among `nodes` (whose heads they add to it), and of those the
/// rewrites make in turn, by the target's masking lookups: see [`rewrites_at`].
pub fn lookup_rewrites(
    nodes: &mut Heads,
    masked: &[MaskedLookup],
    vars: &[(String, VecType)],
) -> Vec<Rewrite> {
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    while let Some(ty) = nodes
        .iter()
        .find(|(name, ty)| *name == "Lookup" && !done.contains(ty))
        .map(|n| n.1)
    {
        done.insert(ty);
        let made = rewrites_at(ty, masked, vars);
        for r in &made {
            r.rhs.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
        }
        out.extend(made);
    }
    out
}

/// The rewrites of a lookup whose result has type `ty` by each masking instruction with a
/// table of as many lanes and lanes as wide: the index, read unsigned, plus the carry with
/// saturation, masked as the instruction masks it, at the instruction's own types. An index
/// past a table of at most half its type's values reads a zero lane at either signedness. With
/// them, lookups in tables of several such parts ([`table_splits`]) or of half of one
/// ([`padded_tables`]), at indices of more lanes than the instruction's ([`index_halves`]), and
/// by instructions without a zeroing bit ([`bounded_lookups`]).
fn rewrites_at(ty: VecType, masked: &[MaskedLookup], vars: &[(String, VecType)]) -> Vec<Rewrite> {
    let mut out = table_splits(ty, masked, vars);
    out.extend(padded_tables(ty, masked));
    out.extend(index_halves(ty, masked, vars));
    out.extend(bounded_lookups(ty, masked));
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
        for elem in both_signedness(unsigned) {
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
            let source = format!(
                "lookup at {} in {} by the index plus {carry}, saturating, masked by {}",
                type_name(index),
                type_name(table),
                m.mask
            );
            out.push(lookup_rewrite(
                ty,
                table,
                index,
                source,
                read(lookup, looked_up, ty),
            ));
        }
    }
    out
}

/// The rewrites of a lookup whose result has type `ty` in a table of two to four times as many
/// lanes as a masking instruction's table: the or of lookups in parts of the table, each at the
/// index minus the part's offset. An index before a part wraps past it, one after it is past it
/// already, so only the part holding the index reads a lane (sound while the table has no more
/// lanes than the index's type has values). The parts are the table's slices of the
/// instruction's lanes (of an input variable among `vars`: loads), or the two operands of a
/// table that is a concatenation (registers).
fn table_splits(ty: VecType, masked: &[MaskedLookup], vars: &[(String, VecType)]) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for m in masked {
        let part = m.table.with_elem(ty.elem);
        let (bits, half) = (m.index.elem.bits(), part.lanes / 2);
        let same_width = ty.elem.bits() == m.table.elem.bits() && ty.elem.is_int();
        if carry(m).is_none() || !same_width || half == 0 {
            continue;
        }
        // From one table and a half to four, by halves.
        for table in (3..=8).map(|h| part.with_lanes(h * half)) {
            if u64::from(table.lanes) > 1 << bits {
                continue;
            }
            // Whole parts, the last one perhaps a half.
            let parts: Vec<(i64, VecType)> = (0..table.lanes)
                .step_by(part.lanes as usize)
                .map(|at| {
                    (
                        i64::from(at),
                        part.with_lanes(part.lanes.min(table.lanes - at)),
                    )
                })
                .collect();
            for (name, _) in vars.iter().filter(|(_, t)| *t == table) {
                out.extend(parts.iter().map(|&(at, p)| slice_load(name, table, at, p)));
            }
            let slices: Vec<(Term, VecType)> = parts
                .iter()
                .map(|&(at, p)| (slice(Term::Slot("t"), at, p), p))
                .collect();
            for elem in both_signedness(m.index.elem) {
                let index = ty.with_elem(elem);
                out.push(split(ty, index, Term::Slot("t"), table, &slices));
                for &(at, _) in &parts[1..] {
                    let a = part.with_lanes(at as u32);
                    let b = part.with_lanes(table.lanes - a.lanes);
                    let (sa, sb) = (Term::Slot("a"), Term::Slot("b"));
                    let concat = op("Concat", table, vec![sa.clone(), sb.clone()]);
                    out.push(split(ty, index, concat, table, &[(sa, a), (sb, b)]));
                }
            }
        }
    }
    out
}

/// Lanes `at` on of `v` as `part`.
fn slice(v: Term, at: i64, part: VecType) -> Term {
    Term::Op {
        name: "Slice",
        ty: part,
        params: vec![at, 1],
        args: vec![v],
    }
}

/// The rewrite of a lookup at type `ty` in `table` (of type `table_ty`) at an index of type
/// `index` as the or of lookups in `parts` (terms with their types, in order): slices of a slot
/// table, or the slot operands of a concatenation.
fn split(
    ty: VecType,
    index: VecType,
    table: Term,
    table_ty: VecType,
    parts: &[(Term, VecType)],
) -> Rewrite {
    let i = Term::Slot("i");
    let mut conditions = vec![Condition::TypeOf(i.clone(), index)];
    let slots = std::iter::once((&table, table_ty)).chain(parts.iter().map(|(p, t)| (p, *t)));
    conditions.extend(
        slots
            .filter(|(term, _)| matches!(term, Term::Slot(_)))
            .map(|(term, t)| Condition::TypeOf(term.clone(), t)),
    );
    let mut offset = 0;
    let mut rhs = None;
    for (part, part_ty) in parts {
        let at = match offset {
            0 => i.clone(),
            _ => op(
                "Sub",
                index,
                vec![i.clone(), constant(index, offset.into())],
            ),
        };
        let looked_up = op("Lookup", ty, vec![part.clone(), at]);
        rhs = Some(match rhs {
            None => looked_up,
            Some(before) => op("Or", ty, vec![before, looked_up]),
        });
        offset += part_ty.lanes;
    }
    let part_types: Vec<String> = parts.iter().map(|(_, t)| type_name(*t)).collect();
    Rewrite {
        ruleset: Ruleset::Lower,
        source: format!(
            "lookup at {} in {} as the or of lookups in its parts {}",
            type_name(index),
            type_name(table_ty),
            part_types.join(", ")
        ),
        lhs: op("Lookup", ty, vec![table, i]),
        rhs: rhs.expect("two parts or more"),
        conditions,
    }
}

/// The rewrites of a lookup whose result has type `ty` in a table of half a masking
/// instruction's table: the lookup in the table followed by zeros (indices into the zeros read
/// zeros, as indices past the table do).
fn padded_tables(ty: VecType, masked: &[MaskedLookup]) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for m in masked {
        let half = m.table.lanes / 2;
        let same_width = ty.elem.bits() == m.table.elem.bits() && ty.elem.is_int();
        if carry(m).is_none() || !same_width || half == 0 {
            continue;
        }
        let table = ty.with_lanes(half);
        let zeros = constant(table, 0);
        let (t, i) = (Term::Slot("t"), Term::Slot("i"));
        let whole = op("Concat", m.table.with_elem(ty.elem), vec![t.clone(), zeros]);
        for elem in both_signedness(m.index.elem) {
            let index = ty.with_elem(elem);
            let source = format!(
                "lookup at {} in {} as the lookup in it followed by zeros",
                type_name(index),
                type_name(table)
            );
            let rhs = op("Lookup", ty, vec![whole.clone(), i.clone()]);
            out.push(lookup_rewrite(ty, table, index, source, rhs));
        }
    }
    out
}

/// The rewrites of a lookup whose result has type `ty`, more lanes than a masking
/// instruction's index, in any table: the concatenation of the lookups at each half of the
/// index (of an input variable among `vars`: loads).
fn index_halves(ty: VecType, masked: &[MaskedLookup], vars: &[(String, VecType)]) -> Vec<Rewrite> {
    let mut out = Vec::new();
    let half = ty.with_lanes(ty.lanes / 2);
    let elems: BTreeSet<Elem> = masked
        .iter()
        .filter(|m| ty.lanes > m.index.lanes && ty.lanes.is_multiple_of(2))
        .flat_map(|m| both_signedness(m.index.elem))
        .collect();
    for elem in elems {
        let index = ty.with_elem(elem);
        let index_half = half.with_elem(elem);
        let halves = [0, i64::from(half.lanes)];
        for (name, _) in vars.iter().filter(|(_, t)| *t == index) {
            out.extend(halves.map(|at| slice_load(name, index, at, index_half)));
        }
        let (t, i) = (Term::Slot("t"), Term::Slot("i"));
        let looked_up = halves.map(|at| {
            op(
                "Lookup",
                half,
                vec![t.clone(), slice(i.clone(), at, index_half)],
            )
        });
        out.push(Rewrite {
            ruleset: Ruleset::Lower,
            source: format!(
                "lookup at {} as the lookups at its halves",
                type_name(index)
            ),
            lhs: op("Lookup", ty, vec![t, i.clone()]),
            rhs: op("Concat", ty, looked_up.into()),
            conditions: vec![Condition::TypeOf(i, index)],
        });
    }
    out
}

/// The rewrites of a lookup whose result has type `ty` by each masking instruction whose mask
/// keeps exactly its table's index bits (no zeroing bit, AVX-512's `vpermb`): the instruction
/// where the index, read unsigned, is within the table, zero elsewhere.
fn bounded_lookups(ty: VecType, masked: &[MaskedLookup]) -> Vec<Rewrite> {
    let mut out = Vec::new();
    for m in masked {
        let lanes = i128::from(m.table.lanes);
        let kept = m.mask as u128 & m.index.elem.mask();
        let same_width = ty.elem.bits() == m.table.elem.bits() && ty.elem.is_int();
        if !same_width || !m.table.lanes.is_power_of_two() || kept != (lanes - 1) as u128 {
            continue;
        }
        let Some(unsigned) = m.index.elem.unsigned() else {
            continue;
        };
        let (t, i) = (Term::Slot("t"), Term::Slot("i"));
        let table = m.table.with_elem(ty.elem);
        for elem in both_signedness(unsigned) {
            let (index, u) = (ty.with_elem(elem), ty.with_elem(unsigned));
            let within = op(
                "Lt",
                ty.with_elem(Elem::Bool),
                vec![read(i.clone(), index, u), constant(u, lanes)],
            );
            let masked_index = op("And", index, vec![i.clone(), constant(index, lanes - 1)]);
            let looked_up = op("Lookup", ty, vec![t.clone(), masked_index]);
            let source = format!(
                "lookup at {} in {} where the index is within it, masked by {}",
                type_name(index),
                type_name(table),
                lanes - 1
            );
            let rhs = op("Select", ty, vec![within, looked_up, constant(ty, 0)]);
            out.push(lookup_rewrite(ty, table, index, source, rhs));
        }
    }
    out
}

/// The rewrite of a lookup at type `ty` in slot `t` of type `table` at slot `i` of type
/// `index` as `rhs`.
fn lookup_rewrite(
    ty: VecType,
    table: VecType,
    index: VecType,
    source: String,
    rhs: Term,
) -> Rewrite {
    let (t, i) = (Term::Slot("t"), Term::Slot("i"));
    Rewrite {
        ruleset: Ruleset::Lower,
        source,
        lhs: op("Lookup", ty, vec![t.clone(), i.clone()]),
        rhs,
        conditions: vec![Condition::TypeOf(t, table), Condition::TypeOf(i, index)],
    }
}

/// An element type and its other signedness (itself when it has none).
fn both_signedness(e: Elem) -> [Elem; 2] {
    [e, e.other_signedness().unwrap_or(e)]
}

/// Lanes `at` on of input variable `name` of type `table`, as `part`, a load.
fn slice_load(name: &str, table: VecType, at: i64, part: VecType) -> Rewrite {
    let var = Term::Var {
        ty: table,
        name: name.to_string(),
    };
    Rewrite {
        ruleset: Ruleset::Lower,
        source: format!("lanes {at} on of {name} as a load"),
        lhs: slice(var, at, part),
        rhs: Term::Part {
            ty: part,
            name: name.to_string(),
            offset: at,
        },
        conditions: vec![],
    }
}

/// `v` of type `from` read as `to`.
fn read(v: Term, from: VecType, to: VecType) -> Term {
    if from == to {
        v
    } else {
        reinterpret(to, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(lanes: u32, mask: i128) -> MaskedLookup {
        let bytes = VecType::new(lanes, Elem::int(8, true).expect("i8"));
        MaskedLookup {
            table: bytes,
            index: bytes,
            mask,
        }
    }

    #[test]
    fn the_carry_takes_every_index_past_the_table_to_the_zeroing_bit() {
        // pshufb (0x8f, 16 lanes), MMX's pshufb (0x87, 8 lanes).
        assert_eq!(carry(&masked(16, -113)), Some(112));
        assert_eq!(carry(&masked(8, -121)), Some(120));
        // No zeroing bit (vpermb's 0x3f), or bits kept between the index's and it.
        assert_eq!(carry(&masked(64, 63)), None);
        assert_eq!(carry(&masked(16, -97)), None);
        // A mask dropping the table's own index bits.
        assert_eq!(carry(&masked(16, -121)), None);
    }
}
