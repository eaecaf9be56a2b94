//! The target's data-movement instructions, each at every choice of its immediates and scalar
//! controls whose byte map exists: the steps [`super::movement`] searches over.

use super::byte_map::{byte_map_with, ByteMap};
use super::catalog::Catalog;
use super::table::{tables, Table};
use crate::ir::VecType;
use crate::semantics::{Env, Value};
use crate::spec::Instruction;
use std::collections::HashMap;

/// Immediate combinations tried per instruction, at most.
const MAX_IMMEDIATES: usize = 256;

/// A data-movement instruction of the target at one choice of its immediates.
pub(super) struct Move {
    pub(super) index: usize,
    pub(super) imms: Vec<i64>,
    /// Its scalar controls: (place among its operands other than immediates, value).
    pub(super) scalars: Vec<(usize, i64)>,
    /// Byte sizes of its vector operands, in order.
    pub(super) sizes: Vec<usize>,
    pub(super) map: ByteMap,
    pub(super) result: VecType,
    pub(super) cost: f64,
}

/// The target's instructions that only move bytes, each at every immediate (up to a bound),
/// the cheapest of each byte map kept, and its table lookups: what [`super::movement::search`] combines,
/// computed once per catalog.
pub struct Moves(pub(super) Vec<Move>, pub(super) Vec<Table>);

impl Moves {
    /// The moves of `catalog`'s target.
    pub fn of(catalog: &Catalog) -> Moves {
        Moves(moves(catalog, true), tables(catalog))
    }

    /// The moves of `catalog`'s target without scalar controls (quick to find: HVX's take
    /// seconds at every value of a register's bytes) nor table lookups.
    pub fn uncontrolled(catalog: &Catalog) -> Moves {
        Moves(moves(catalog, false), Vec::new())
    }
}

fn moves(catalog: &Catalog, controls: bool) -> Vec<Move> {
    let register_bytes = i128::from(catalog.target.register_bits / 8);
    let mut best: HashMap<(Vec<usize>, ByteMap), Move> = HashMap::new();
    for (index, ins) in catalog.instructions.iter().enumerate() {
        // A scalar operand (HVX's vror and valign by Rt, vshuff's Rt) may be a control, set
        // like an immediate to each value within a register's bytes either way: it is one
        // where a value other than zero moves bytes. A scalar of data (`vdup_n_s32`'s) does
        // only at zero, and is moved as any operand is.
        let scalar = |t: &VecType| t.lanes == 1 && t.elem.is_int() && t.bits() <= 32;
        let controlled = match controls {
            true => moves_of(ins, index, &scalar, register_bytes),
            false => Vec::new(),
        };
        let found = match controlled
            .iter()
            .any(|m| m.scalars.iter().any(|&(_, v)| v != 0))
        {
            true => controlled,
            false => moves_of(ins, index, &|_| false, register_bytes),
        };
        // A move that gives back one operand's bytes in place (`_mm_alignr_epi8(v, v, 0)`)
        // computes nothing: the operand itself is the value, at no cost.
        for m in found.into_iter().filter(|m| !is_identity(m)) {
            // Of two moves alike, the cheaper; at equal costs an integer one (the domain of
            // most data moved; a float move in integer code can cost a bypass delay), then one
            // without scalar controls (each takes a scalar register).
            let rank = |m: &Move| (m.cost, !m.result.elem.is_int(), m.scalars.len());
            let key = (m.sizes.clone(), m.map.clone());
            match best.get(&key) {
                Some(b) if rank(b) <= rank(&m) => {}
                _ => _ = best.insert(key, m),
            }
        }
    }
    let mut out: Vec<Move> = best.into_values().collect();
    out.sort_by(|a, b| (a.index, &a.imms, &a.scalars).cmp(&(b.index, &b.imms, &b.scalars)));
    out
}

/// Whether `m` gives back one of its operands whole: every byte of its result the same byte
/// of that operand, as many as the operand has.
fn is_identity(m: &Move) -> bool {
    let Some(Some((k, _))) = m.map.first() else {
        return false;
    };
    m.sizes.get(*k as usize) == Some(&m.map.len())
        && (m.map.iter().enumerate()).all(|(i, b)| *b == Some((*k, i as u16)))
}

/// The moves instruction `ins` (the catalog's `index`) makes at each choice of its immediates
/// and of its scalar operands that `control` picks, from zero outwards within
/// `register_bytes` either way; none past [`MAX_IMMEDIATES`] choices or with no vector
/// operand or more than two.
fn moves_of(
    ins: &Instruction,
    index: usize,
    control: &dyn Fn(&VecType) -> bool,
    register_bytes: i128,
) -> Vec<Move> {
    let (scalars, vectors): (Vec<_>, Vec<_>) = ins
        .vector_operands()
        .into_iter()
        .enumerate()
        .partition(|(_, (_, t))| control(t));
    if vectors.is_empty() || vectors.len() > 2 {
        return Vec::new();
    }
    let vectors: Vec<(String, VecType)> = vectors.into_iter().map(|(_, v)| v).collect();
    let imm_ranges = ins.operands.iter().filter_map(|o| o.imm);
    let Some(scalar_values) = (2 * register_bytes).checked_pow(scalars.len() as u32) else {
        return Vec::new();
    };
    let count = imm_ranges.clone().try_fold(scalar_values, |n, (lo, hi)| {
        n.checked_mul((hi - lo + 1).max(1))
    });
    if count.is_none_or(|n| n > MAX_IMMEDIATES as i128) {
        return Vec::new();
    }
    // Scalar controls from zero outwards, so that of values alike the plainest is kept.
    let outwards = (0..register_bytes).flat_map(|v| [v, -v - 1]);
    let ranges: Vec<Vec<i128>> = imm_ranges
        .map(|(lo, hi)| (lo..=hi).collect())
        .chain(scalars.iter().map(|_| outwards.clone().collect()))
        .collect();
    let mut found = Vec::new();
    for choice in every_choice(&ranges) {
        let (imms, values) = choice.split_at(ranges.len() - scalars.len());
        let texts: Vec<String> = imms.iter().map(|v| v.to_string()).collect();
        let Ok(at) = ins.at_immediates(&texts) else {
            continue;
        };
        let mut fixed = Env::new();
        for ((_, (name, ty)), &v) in scalars.iter().zip(values) {
            let bytes = (v as i64).to_le_bytes();
            let value = Value::from_bytes(*ty, &bytes[..(ty.bits() / 8) as usize]);
            fixed.insert(name.clone(), value);
        }
        let Some(map) = byte_map_with(&at, &vectors, &fixed) else {
            continue;
        };
        found.push(Move {
            index,
            imms: imms.iter().map(|&v| v as i64).collect(),
            scalars: (scalars.iter().zip(values))
                .map(|((k, _), &v)| (*k, v as i64))
                .collect(),
            sizes: vectors
                .iter()
                .map(|(_, t)| (t.bits() / 8) as usize)
                .collect(),
            map,
            result: ins.result,
            cost: ins.cost,
        });
    }
    found
}

/// Every choice of one value of each of `ranges`, in order (the first range's values slowest).
pub(super) fn every_choice<T: Copy>(ranges: &[Vec<T>]) -> Vec<Vec<T>> {
    let mut choices: Vec<Vec<T>> = vec![vec![]];
    for values in ranges {
        choices = choices
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |&v| {
                    let mut c = c.clone();
                    c.push(v);
                    c
                })
            })
            .collect();
    }
    choices
}
