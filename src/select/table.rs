//! Table lookups at a literal index vector (x86's `pshufb` and `vpermd`, NEON's `tbl`,
//! AVX-512's `vpermb`): an instruction whose result lane i is a byte of its table operand, or
//! zero, chosen by lane i of its index operand alone computes any byte map of that shape in one
//! step, the index vector a load from a literal pool ([`Node::Literal`]). The movement search
//! (`movement.rs`) takes such a step where it is the cheapest.
//!
//! Found by probing the interpreter: the byte map of the instruction with every index lane
//! holding one value, for each value of a byte; then checked lane by lane on random index
//! vectors. The selection is proven by z3 like every other.

use super::byte_map::{byte_map_with, ByteMap};
use super::catalog::{Catalog, TABLE_LOOKUPS};
use super::node::LITERAL_LOAD_COST;
use super::term::lane_bits;
use crate::ir::VecType;
use crate::semantics::{Env, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Index values probed per lane: every byte.
const PROBED: i64 = 256;
/// Random index vectors a lookup must agree with, lane by lane.
const CHECKS: usize = 3;
/// The index value after which the values probed so far are checked lane by lane first.
const EARLY: i64 = 3;

/// One table-lookup instruction of the target.
pub struct Table {
    /// The instruction, in the catalog.
    pub index: usize,
    /// Which of its two vector operands is the table (the other is the index vector).
    pub table_operand: usize,
    /// The table's type and the index vector's.
    pub table_ty: VecType,
    pub index_ty: VecType,
    /// The result's type, and the instruction's cost plus the literal load's.
    pub result: VecType,
    pub cost: f64,
    /// For each probed index value, the byte map (over the table) of the result when every
    /// index lane holds it.
    picks: Vec<(i64, ByteMap)>,
}

impl Table {
    /// The index vector (one value per lane) for which the lookup in a table holding the
    /// bytes `table` (a byte map over the search's operands) computes `goal` in its low
    /// bytes, if there is one.
    pub fn index_for(&self, table: &ByteMap, goal: &ByteMap) -> Option<Vec<i64>> {
        let lane = (self.result.bits() / self.result.lanes / 8) as usize;
        if table.len() * 8 != self.table_ty.bits() as usize
            || goal.len() > self.result.bits() as usize / 8
            || !goal.len().is_multiple_of(lane)
        {
            return None;
        }
        (0..self.result.lanes as usize)
            .map(|l| {
                let bytes = l * lane..(l + 1) * lane;
                self.picks
                    .iter()
                    .find(|(_, map)| {
                        bytes.clone().all(|b| match goal.get(b) {
                            None => true,
                            Some(want) => match map[b] {
                                None => want.is_none(),
                                Some((_, p)) => table[p as usize] == *want,
                            },
                        })
                    })
                    .map(|(v, _)| *v)
            })
            .collect()
    }
}

/// The target's table lookups. Probing every two-operand instruction takes 0.4-2 s, so the
/// lookups found (instruction and table operand) are kept with the catalog
/// ([`super::catalog::Keeper`]) and a later process probes only those.
pub fn tables(catalog: &Catalog) -> Vec<Table> {
    let kept = catalog
        .keeper
        .as_ref()
        .and_then(|k| k.kept(TABLE_LOOKUPS))
        .and_then(|text| read_kept(catalog, text));
    let candidates = kept.clone().unwrap_or_else(|| {
        catalog
            .instructions
            .iter()
            .enumerate()
            .filter(|(_, ins)| {
                ins.operands.len() == 2 && ins.operands.iter().all(|o| o.imm.is_none())
            })
            .flat_map(|(i, _)| [(i, 0), (i, 1)])
            .collect()
    });
    let found: Vec<Table> = candidates
        .into_iter()
        .filter_map(|(i, t)| table(catalog, i, t))
        .collect();
    if let (None, Some(keeper)) = (kept, &catalog.keeper) {
        let text: Vec<String> = found
            .iter()
            .map(|f| format!("{} {}", catalog.instructions[f.index].name, f.table_operand))
            .collect();
        keeper.keep(TABLE_LOOKUPS, &text.join("\n"));
    }
    found
}

/// The lookups kept as `text` (a line `NAME OPERAND` each), as instruction indices and table
/// operands; None if one names no instruction of the catalog.
fn read_kept(catalog: &Catalog, text: &str) -> Option<Vec<(usize, usize)>> {
    text.lines()
        .map(|line| {
            let (name, operand) = line.rsplit_once(' ')?;
            let i = catalog
                .instructions
                .iter()
                .position(|ins| ins.name == name)?;
            Some((i, operand.parse().ok().filter(|&t: &usize| t < 2)?))
        })
        .collect()
}

/// Instruction `i` as a lookup in its vector operand `t` at the other, if it is one.
fn table(catalog: &Catalog, i: usize, t: usize) -> Option<Table> {
    let ins = &catalog.instructions[i];
    let operands = ins.vector_operands();
    let (table, index) = (&operands[t], &operands[1 - t]);
    let (index_name, index_ty) = index;
    if index_ty.lanes != ins.result.lanes || !index_ty.elem.is_int() {
        return None;
    }
    let tables = std::slice::from_ref(table);
    let at = |lanes: &[i64]| -> Option<ByteMap> {
        let values: Vec<u128> = match lanes {
            [v] => vec![lane_bits(index_ty.elem, *v); index_ty.lanes as usize],
            _ => lanes.iter().map(|v| lane_bits(index_ty.elem, *v)).collect(),
        };
        let fixed = Env::from([(index_name.clone(), Value::new(*index_ty, values))]);
        byte_map_with(&ins.semantics, tables, &fixed)
    };
    let lane = (ins.result.bits() / ins.result.lanes / 8) as usize;
    let mut picks = Vec::new();
    for v in 0..PROBED {
        match at(&[v]) {
            Some(map) => picks.push((v, map)),
            // Not a move of the table at all.
            None if v == 0 => return None,
            None => {}
        }
        // Not lane-local already at the first values (a permutation network whose every
        // uniform control moves bytes): no need to probe the others.
        if v == EARLY
            && picks.len() > 1
            && !lane_local(
                &picks,
                lane,
                index_ty.lanes,
                &at,
                &mut SmallRng::seed_from_u64(!(i as u64)),
            )
        {
            return None;
        }
    }
    // A lookup chooses among bytes of the table: some result byte takes two different ones
    // at two index values (a multiplication by 0 or 1 only keeps or clears a byte).
    let chooses = (0..picks[0].1.len()).any(|b| {
        let mut sources = picks.iter().filter_map(|(_, m)| m[b]);
        sources
            .next()
            .is_some_and(|first| sources.any(|s| s != first))
    });
    if !chooses {
        return None;
    }
    // Lane-local: at random index vectors, each result lane is what its index lane picks.
    let mut rng = SmallRng::seed_from_u64(i as u64);
    if !lane_local(&picks, lane, index_ty.lanes, &at, &mut rng) {
        return None;
    }
    Some(Table {
        index: i,
        table_operand: t,
        table_ty: table.1,
        index_ty: *index_ty,
        result: ins.result,
        cost: ins.cost + LITERAL_LOAD_COST,
        picks,
    })
}

/// Whether, at [`CHECKS`] random index vectors of `lanes` lanes each holding a probed value,
/// every result lane (`lane` bytes) is what its index lane's value picks alone.
fn lane_local(
    picks: &[(i64, ByteMap)],
    lane: usize,
    lanes: u32,
    at: &dyn Fn(&[i64]) -> Option<ByteMap>,
    rng: &mut SmallRng,
) -> bool {
    (0..CHECKS).all(|_| {
        let chosen: Vec<usize> = (0..lanes).map(|_| rng.gen_range(0..picks.len())).collect();
        let values: Vec<i64> = chosen.iter().map(|&c| picks[c].0).collect();
        at(&values).is_some_and(|map| {
            map.iter()
                .enumerate()
                .all(|(b, m)| *m == picks[chosen[b / lane]].1[b])
        })
    })
}
