//! Synthesis of data movement beyond the stored rules. When a ported semantics only moves
//! bytes (every output byte is a byte of an operand, or zero), an enumerative search over the
//! target's data-movement instructions, each at every value of its immediates, looks for the
//! cheapest sequence whose byte map is the same. Each step applies one instruction to earlier
//! results and the operands, up to [`MAX_STEPS`] steps; the last step is found backwards from
//! the goal. A result wider than the goal holds it in its low lanes. The winner becomes a
//! selection and is proven by z3 like every other (`Selector::search_moves`); selection also
//! searches for every scalarized operator that only moves bytes (`refine.rs`).
//!
//! Byte maps come from the interpreter (`byte_map.rs`). A table lookup at a literal index
//! vector (`table.rs`) is one more kind of step: tried first on the operands, its cost bounds
//! the search, and on any value found when nothing else is.

use super::byte_map::{byte_map, ByteMap};
use super::catalog::Catalog;
use super::moves::{Move, Moves};
use super::node::{instruction, Node};
use super::table::Table;
use crate::ir::{Expr, VecType};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// Instructions in a sequence, at most.
pub const MAX_STEPS: usize = 3;
/// What a sequence as dear as a table lookup may cost more than it, to be preferred.
const EQUAL_COSTS: f64 = 1e-9;
/// Values kept in the search, at most.
const MAX_VALUES: usize = 30_000;
/// Values scanned for one whose bytes fit where a step leaves some free, at most.
const MAX_SCANNED: usize = 5_000;

/// What a value must hold: each byte's source, or None where any byte will do.
type Required = Vec<Option<Option<(u8, u16)>>>;

/// How a value of the search is made.
enum From {
    /// Lanes `offset..` of operand `k` (all of them, or one register of a wider operand).
    Operand {
        k: usize,
        offset: u32,
    },
    Zero,
    Step(usize, Vec<usize>),
    /// Table lookup `t` in value `table` at the literal index vector `index`.
    Table {
        t: usize,
        table: usize,
        index: Vec<i64>,
    },
}

struct Found {
    map: ByteMap,
    ty: VecType,
    cost: f64,
    from: From,
}

/// The cheapest sequence of the target's data-movement instructions computing `input`, if it
/// only moves bytes and one of at most `steps` (at most [`MAX_STEPS`]) steps costing less than
/// `below` exists; not yet proven.
pub fn search(
    catalog: &Catalog,
    all_moves: &Moves,
    input: &Expr,
    below: f64,
    steps: usize,
) -> Option<Rc<Node>> {
    let steps = steps.min(MAX_STEPS);
    let operands = input.vars();
    let goal = byte_map(input, &operands)?;
    // Wider registers than the goal and its operands only widen the search; where the target
    // moves nothing that narrow (HVX's registers are 128 bytes), its operands are read into
    // registers (the bytes past theirs zero) and moved as registers and register pairs.
    let register = catalog.target.register_bits / 8;
    let fits =
        |m: &Move, widest: usize| m.map.len() <= widest && m.sizes.iter().all(|&n| n <= widest);
    let widest = operands
        .iter()
        .map(|(_, t)| (t.bits() / 8) as usize)
        .fold(goal.len(), usize::max);
    let padded = widest < register as usize && !all_moves.0.iter().any(|m| fits(m, widest));
    let widest = if padded {
        2 * register as usize
    } else {
        widest
    };
    let moves: Vec<&Move> = all_moves.0.iter().filter(|m| fits(m, widest)).collect();
    // Each operand, and where it is wider than a register, its registers (free to read; a part
    // of a register is not: it takes a move), or where it is read into one, that register.
    let mut values: Vec<Found> = Vec::new();
    for (k, (_, ty)) in operands.iter().enumerate() {
        let bytes = ty.bits() / 8;
        let lane_bytes = (ty.elem.bits() / 8).max(1);
        let mut widths = vec![bytes];
        if register < bytes && bytes.is_multiple_of(register) && register.is_multiple_of(lane_bytes)
        {
            widths.push(register);
        }
        // Read into a register, or as a narrower operand of a move (a scalar one: its low
        // lanes, or its lanes beside zeros).
        let reads = moves.iter().flat_map(|m| m.sizes.iter().map(|&n| n as u32));
        let mut padded_widths: Vec<u32> = match padded {
            true => reads
                .chain([register])
                .filter(|&n| n != bytes && n <= register)
                .collect(),
            false => Vec::new(),
        };
        padded_widths.sort();
        padded_widths.dedup();
        for width in padded_widths
            .into_iter()
            .filter(|n| n.is_multiple_of(lane_bytes))
        {
            values.push(Found {
                map: (0..width)
                    .map(|j| (j < bytes).then_some((k as u8, j as u16)))
                    .collect(),
                ty: ty.with_lanes(width / lane_bytes),
                cost: 0.0,
                from: From::Operand { k, offset: 0 },
            });
        }
        for width in widths {
            for first in (0..bytes).step_by(width as usize) {
                values.push(Found {
                    map: (first..first + width)
                        .map(|j| Some((k as u8, j as u16)))
                        .collect(),
                    ty: ty.with_lanes(width / lane_bytes),
                    cost: 0.0,
                    from: From::Operand {
                        k,
                        offset: first / lane_bytes,
                    },
                });
            }
        }
    }
    // Zeros of every width a move reads, to shift in.
    let mut widths: Vec<usize> = moves.iter().flat_map(|m| m.sizes.clone()).collect();
    widths.sort();
    widths.dedup();
    for n in widths {
        values.push(Found {
            map: vec![None; n],
            ty: VecType::new(n as u32, crate::ir::Elem::U8),
            cost: 0.0,
            from: From::Zero,
        });
    }
    let mut seen: HashMap<ByteMap, usize> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (v.map.clone(), i))
        .collect();
    let inputs: Vec<usize> = (0..values.len()).collect();
    let mut frontier = inputs.clone();
    // An operand may hold the goal already, whole or in its low lanes (a register's low half).
    let mut best: Option<usize> = seen
        .get(&goal)
        .copied()
        .or_else(|| low_bytes(&values, &inputs, &goal));
    // A table lookup in an operand at a literal index vector; other sequences must cost no
    // more (no load).
    let operand_values: Vec<usize> = (0..values.len()).collect();
    let looked_up = match best {
        None => table_step(&all_moves.1, &values, &operand_values, &goal, below),
        Some(_) => None,
    };
    let below = looked_up.as_ref().map_or(below, |f| f.cost + EQUAL_COSTS);
    for round in 1..=steps {
        if best.is_some() {
            break;
        }
        // One step onto the values so far, backwards from the goal: for each move and each
        // choice of its other operands among the inputs, the goal fixes what its remaining
        // operand must be; look that up among every value found so far.
        // Its other operand: an input, or once there are few values, any of them.
        let partners: Vec<usize> = if values.len() <= MAX_SCANNED {
            (0..values.len()).collect()
        } else {
            inputs.clone()
        };
        if let Some(found) = last_step(&moves, &values, &seen, &partners, &goal, below) {
            values.push(found);
            best = Some(values.len() - 1);
            break;
        }
        if round == steps {
            break;
        }
        let mut added = Vec::new();
        // The map of each candidate is built in one buffer, copied only when it is new; a
        // move is tried only on values of the sizes it reads (the frontier's positions by
        // size, in order).
        let mut map: ByteMap = Vec::new();
        let sizes: Vec<usize> = values.iter().map(|v| v.map.len()).collect();
        let len = |i: usize| sizes[i];
        let mut by_size: HashMap<usize, Vec<usize>> = HashMap::default();
        for (position, &f) in frontier.iter().enumerate() {
            by_size.entry(len(f)).or_default().push(position);
        }
        let sized = |n: usize| by_size.get(&n).map_or(&[][..], Vec::as_slice);
        'moves: for (m, mv) in moves.iter().enumerate() {
            let mut positions: Vec<usize> =
                mv.sizes.iter().flat_map(|&n| sized(n)).copied().collect();
            positions.sort_unstable();
            positions.dedup();
            let reads = |k: usize, i: usize| mv.sizes[k] == len(i);
            let arg_lists = positions.into_iter().map(|p| frontier[p]).flat_map(|f| {
                let alone = (mv.sizes.len() == 1).then_some([f, f]);
                let pairs = inputs.iter().filter(|_| mv.sizes.len() == 2);
                let pairs = pairs.flat_map(move |&i| {
                    let first = (reads(0, f) && reads(1, i)).then_some([f, i]);
                    first
                        .into_iter()
                        .chain((reads(0, i) && reads(1, f)).then_some([i, f]))
                });
                alone.into_iter().chain(pairs)
            });
            for pair in arg_lists {
                let args = &pair[..mv.sizes.len()];
                let cost = mv.cost + args.iter().map(|&a| values[a].cost).sum::<f64>();
                if cost >= below {
                    continue;
                }
                map.clear();
                map.extend(
                    mv.map
                        .iter()
                        .map(|b| b.and_then(|(k, j)| values[args[k as usize]].map[j as usize])),
                );
                if seen.get(&map).is_some_and(|&i| values[i].cost <= cost) {
                    continue;
                }
                let i = values.len();
                seen.insert(map.clone(), i);
                values.push(Found {
                    map: map.clone(),
                    ty: mv.result,
                    cost,
                    from: From::Step(m, args.to_vec()),
                });
                added.push(i);
                if values.len() >= MAX_VALUES {
                    break 'moves;
                }
            }
        }
        best = seen
            .get(&goal)
            .copied()
            .or_else(|| low_bytes(&values, &added, &goal));
        frontier = added;
    }
    // Or a table lookup in a value found (a step, then the lookup).
    let looked_up = match (best, looked_up) {
        (None, None) => {
            let all: Vec<usize> = (0..values.len()).collect();
            table_step(&all_moves.1, &values, &all, &goal, below)
        }
        (_, looked_up) => looked_up,
    };
    let best = match (best.filter(|&b| values[b].cost < below), looked_up) {
        (Some(b), _) => b,
        (None, Some(found)) => {
            values.push(found);
            values.len() - 1
        }
        (None, None) => return None,
    };
    let mut root = node(&values, best, (&moves, &all_moves.1), catalog, &operands);
    let made = values[best].ty;
    if made.bits() > input.ty.bits() {
        // The goal is the low lanes of the value (a register's low half is free).
        root = Rc::new(Node::Lanes {
            ty: made.with_lanes(input.ty.bits() / made.elem.bits()),
            offset: 0,
            arg: root,
        });
    }
    Some(match input.ty == root.ty(catalog) {
        true => root,
        false => Rc::new(Node::Reinterpret {
            ty: input.ty,
            arg: root,
        }),
    })
}

/// The cheapest lookup computing `goal` in one of the `tables`, at a literal index vector, in
/// one of the values `among`.
fn table_step(
    tables: &[Table],
    values: &[Found],
    among: &[usize],
    goal: &ByteMap,
    below: f64,
) -> Option<Found> {
    let mut best: Option<Found> = None;
    for (t, table) in tables.iter().enumerate() {
        for &v in among {
            let cost = table.cost + values[v].cost;
            if cost >= below || best.as_ref().is_some_and(|b| b.cost <= cost) {
                continue;
            }
            if let Some(index) = table.index_for(&values[v].map, goal) {
                best = Some(Found {
                    map: goal.clone(),
                    ty: table.result,
                    cost,
                    from: From::Table { t, table: v, index },
                });
            }
        }
    }
    best
}

/// The cheapest of the values `added` whose low bytes are `goal`, in whole lanes.
fn low_bytes(values: &[Found], added: &[usize], goal: &ByteMap) -> Option<usize> {
    added
        .iter()
        .copied()
        .filter(|&i| {
            let v = &values[i];
            let lane = (v.ty.elem.bits() / 8) as usize;
            v.map.len() > goal.len()
                && goal.len().is_multiple_of(lane)
                && v.map[..goal.len()] == goal[..]
        })
        .min_by(|&a, &b| values[a].cost.total_cmp(&values[b].cost))
}

/// The cheapest move computing `goal` from one value found so far (the goal fixes what the
/// move reads of it: looked up by that map, or where some of its bytes are free, the cheapest
/// value that fits) and, for a move of two operands, one of `partners`.
fn last_step(
    moves: &[&Move],
    values: &[Found],
    seen: &HashMap<ByteMap, usize>,
    partners: &[usize],
    goal: &ByteMap,
    below: f64,
) -> Option<Found> {
    let mut best: Option<Found> = None;
    for (m, mv) in moves.iter().enumerate() {
        // A wider result holds the goal in its low lanes; its other bytes are free.
        let lane = (mv.result.elem.bits() / 8).max(1) as usize;
        if mv.map.len() < goal.len() || !goal.len().is_multiple_of(lane) {
            continue;
        }
        for unknown in 0..mv.sizes.len() {
            let Some(required) = required_of(mv, unknown, goal) else {
                continue;
            };
            let found = match required.iter().copied().collect::<Option<ByteMap>>() {
                Some(want) => seen.get(&want).copied(),
                None if values.len() <= MAX_SCANNED => compatible(values, &required),
                None => None,
            };
            let Some(u) = found else {
                continue;
            };
            // The other operand must hold the goal's bytes where the move reads it.
            let fits = |o: usize| {
                mv.map.iter().zip(goal).all(|(b, want)| match b {
                    Some((k, j)) if *k as usize != unknown => {
                        let v = &values[o].map;
                        v.len() == mv.sizes[*k as usize] && v[*j as usize] == *want
                    }
                    _ => true,
                })
            };
            let others: Vec<Option<usize>> = match mv.sizes.len() {
                1 => vec![None],
                _ => partners
                    .iter()
                    .filter(|&&o| fits(o))
                    .map(|&o| Some(o))
                    .collect(),
            };
            for other in others {
                let args: Vec<usize> = match (other, unknown) {
                    (None, _) => vec![u],
                    (Some(o), 0) => vec![u, o],
                    (Some(o), _) => vec![o, u],
                };
                let cost = mv.cost + args.iter().map(|&a| values[a].cost).sum::<f64>();
                if cost < below && best.as_ref().is_none_or(|b| cost < b.cost) {
                    best = Some(Found {
                        map: goal.clone(),
                        ty: mv.result,
                        cost,
                        from: From::Step(m, args),
                    });
                }
            }
        }
    }
    best
}

/// What operand `unknown` of `mv` must hold for the move to compute `goal` (None where the
/// goal does not read a byte), or None when no operand can: the move puts a zero where the
/// goal has a byte, or needs one byte in two places.
fn required_of(mv: &Move, unknown: usize, goal: &ByteMap) -> Option<Required> {
    let mut required: Required = vec![None; mv.sizes[unknown]];
    for (b, want) in mv.map.iter().zip(goal) {
        match b {
            None if want.is_some() => return None,
            Some((k, j)) if *k as usize == unknown => {
                let slot = &mut required[*j as usize];
                if *slot.get_or_insert(*want) != *want {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(required)
}

/// The cheapest value whose bytes are those `required` (where it requires any).
fn compatible(values: &[Found], required: &Required) -> Option<usize> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| {
            v.map.len() == required.len()
                && v.map
                    .iter()
                    .zip(required)
                    .all(|(b, r)| r.is_none_or(|r| r == *b))
        })
        .min_by(|(_, a), (_, b)| a.cost.total_cmp(&b.cost))
        .map(|(i, _)| i)
}

/// The selection making value `i`.
fn node(
    values: &[Found],
    i: usize,
    (moves, tables): (&[&Move], &[Table]),
    catalog: &Catalog,
    operands: &[(String, VecType)],
) -> Rc<Node> {
    let as_type = |a: usize, ty: VecType| {
        let arg = node(values, a, (moves, tables), catalog, operands);
        match values[a].ty == ty {
            true => arg,
            false => Rc::new(Node::Reinterpret { ty, arg }),
        }
    };
    match &values[i].from {
        From::Operand { k, offset } => Rc::new(Node::Input {
            name: operands[*k].0.clone(),
            ty: values[i].ty,
            offset: *offset,
        }),
        From::Zero => Rc::new(Node::Const {
            ty: values[i].ty,
            value: 0,
        }),
        From::Step(m, args) => {
            let mv = &moves[*m];
            let ins = &catalog.instructions[mv.index];
            // The vector operands take the arguments in order; the scalar controls, their values.
            let mut args = args.iter();
            let vectors = ins.vector_operands();
            let operands = vectors.iter().enumerate().map(|(k, (_, ty))| {
                match mv.scalars.iter().find(|(at, _)| *at == k) {
                    Some(&(_, value)) => Some(Rc::new(Node::Const { ty: *ty, value })),
                    None => args.next().map(|&a| as_type(a, *ty)),
                }
            });
            let operands: Option<Vec<Rc<Node>>> = operands.collect();
            instruction(catalog, mv.index, &mv.imms, operands.unwrap_or_default())
        }
        From::Table { t, table, index } => {
            let lookup = &tables[*t];
            let literal = Rc::new(Node::Literal {
                ty: lookup.index_ty,
                values: index.clone(),
            });
            let mut vectors = vec![literal];
            vectors.insert(lookup.table_operand, as_type(*table, lookup.table_ty));
            instruction(catalog, lookup.index, &[], vectors)
        }
    }
}
