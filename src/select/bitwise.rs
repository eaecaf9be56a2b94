//! Bitwise functions of up to three values as the cheapest network of the target's own bitwise
//! instructions. An instruction is bitwise where each bit of its result is one function of the
//! same bit of its operands: it is known by its truth table, its result on operands holding the
//! truth tables of three variables (`0xf0`, `0xcc`, `0xaa` in every byte), checked on random
//! operands. A tree of such instructions in a selection over at most three other values
//! (`(x & y) | (z & ~x)`, a bitwise select the rules build from `and`, `andn` and `or`) is a
//! truth table too; a search over the target's bitwise instructions finds the cheapest network
//! computing it (AVX-512's `vpternlogd` computes any in one, NEON's `bsl` a select), proven on
//! its own before it replaces the tree.

use super::catalog::Catalog;
use super::moves::every_choice;
use super::node::{instruction, Node};
use super::prove::prove_selection;
use crate::ir::VecType;
use crate::semantics::{eval, Env, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The truth tables of the three variables: bit `m` of a table is the function's value where
/// the variables hold bits 2, 1 and 0 of `m`.
const VARIABLES: [u8; 3] = [0xf0, 0xcc, 0xaa];
/// Steps of a network, at most.
const MAX_STEPS: usize = 3;
/// Operand choices tried over a search, at most (the search is exhaustive below it).
const MAX_TRIES: usize = 2_000_000;
/// Immediate combinations tried per instruction, at most.
const MAX_IMMEDIATES: i128 = 256;

/// A bitwise instruction of the target at one choice of its immediates.
struct Gate {
    index: usize,
    imms: Vec<i64>,
    arity: usize,
    table: u8,
    cost: f64,
}

/// An instruction (the catalog's index) at immediates.
type AtImmediates = (usize, Vec<i64>);

/// How each truth table is made most cheaply: its cost, and a gate (an index of the gates) over
/// other tables, or none for a leaf.
type Made = HashMap<u8, (f64, Option<(usize, Vec<u8>)>)>;

/// The target's bitwise instructions, the bitwise ones among a selection's, and the networks
/// found so far, per selector.
#[derive(Default)]
pub struct Bitwise {
    /// By width.
    gates: RefCell<HashMap<u32, Rc<Vec<Gate>>>>,
    tables: RefCell<HashMap<AtImmediates, Option<u8>>>,
    found: RefCell<HashMap<String, Option<Rc<Node>>>>,
}

/// The truth table of `table` applied to operands with the truth tables `args`.
fn apply(table: u8, args: &[u8]) -> u8 {
    (0..8).fold(0, |out, bit| {
        let m = args
            .iter()
            .enumerate()
            .fold(0, |m, (j, a)| m | (((a >> bit) & 1) << (2 - j)));
        out | (((table >> m) & 1) << bit)
    })
}

/// The truth table of instruction `index` at `imms`, if it is bitwise with one to three
/// operands as wide as its result.
fn truth_table(catalog: &Catalog, index: usize, imms: &[i64]) -> Option<u8> {
    let ins = &catalog.instructions[index];
    let operands = ins.vector_operands();
    let bits = ins.result.bits();
    let int = |t: &VecType| t.elem.is_int() && t.bits() == bits && bits.is_multiple_of(8);
    if operands.is_empty() || operands.len() > 3 || !int(&ins.result) {
        return None;
    }
    if !operands.iter().all(|(_, t)| int(t)) {
        return None;
    }
    let texts: Vec<String> = imms.iter().map(|v| v.to_string()).collect();
    let semantics = ins.at_immediates(&texts).ok()?;
    let bytes = (bits / 8) as usize;
    let run = |fill: &dyn Fn(usize, usize) -> u8| -> Option<Vec<u8>> {
        let mut env = Env::new();
        for (j, (name, ty)) in operands.iter().enumerate() {
            let b: Vec<u8> = (0..bytes).map(|i| fill(j, i)).collect();
            env.insert(name.clone(), Value::from_bytes(*ty, &b));
        }
        Some(eval(&semantics, &env).ok()?.to_bytes())
    };
    let out = run(&|j, _| VARIABLES[j])?;
    let table = *out.first()?;
    if out.iter().any(|&b| b != table) {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(0xb17);
    for _ in 0..4 {
        let random: Vec<Vec<u8>> = (0..operands.len())
            .map(|_| (0..bytes).map(|_| rng.gen()).collect())
            .collect();
        let out = run(&|j, i| random[j][i])?;
        let follows = (0..bytes).all(|i| {
            let args: Vec<u8> = random.iter().map(|r| r[i]).collect();
            out[i] == apply(table, &args)
        });
        if !follows {
            return None;
        }
    }
    Some(table)
}

/// The target's bitwise instructions of `bits` at every choice of their immediates, the
/// cheapest of each truth table and arity.
fn gates(catalog: &Catalog, bits: u32) -> Vec<Gate> {
    let mut best: HashMap<(u8, usize), Gate> = HashMap::new();
    for (index, ins) in catalog.instructions.iter().enumerate() {
        if ins.result.bits() != bits {
            continue;
        }
        let ranges: Vec<(i128, i128)> = ins.operands.iter().filter_map(|o| o.imm).collect();
        let count = ranges
            .iter()
            .try_fold(1i128, |n, (lo, hi)| n.checked_mul((hi - lo + 1).max(1)));
        if count.is_none_or(|n| n > MAX_IMMEDIATES) {
            continue;
        }
        let values: Vec<Vec<i64>> = ranges
            .iter()
            .map(|&(lo, hi)| (lo..=hi).map(|v| v as i64).collect())
            .collect();
        let choices = every_choice(&values);
        for (k, imms) in choices.iter().enumerate() {
            let Some(table) = truth_table(catalog, index, imms) else {
                // Bitwise at none of its first two immediates: at no other (a shift, a blend).
                if k == 1 && best.values().all(|g| g.index != index) {
                    break;
                }
                continue;
            };
            let imms = imms.clone();
            let gate = Gate {
                index,
                imms,
                arity: ins.vector_operands().len(),
                table,
                cost: ins.cost,
            };
            let key = (table, gate.arity);
            match best.get(&key) {
                Some(b) if b.cost <= gate.cost => {}
                _ => _ = best.insert(key, gate),
            }
        }
    }
    let mut out: Vec<Gate> = best.into_values().collect();
    out.sort_by(|a, b| (a.index, &a.imms).cmp(&(b.index, &b.imms)));
    out
}

impl Bitwise {
    /// The truth table of `n` if it applies a bitwise instruction.
    fn table(&self, n: &Node, catalog: &Catalog) -> Option<u8> {
        let Node::Instr { index, args } = n else {
            return None;
        };
        let ins = &catalog.instructions[*index];
        let imms: Vec<i64> = ins
            .operands
            .iter()
            .zip(args)
            .filter(|(o, _)| o.imm.is_some())
            .map(|(_, a)| match **a {
                Node::Const { value, .. } => Some(value),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let key = (*index, imms);
        if let Some(&known) = self.tables.borrow().get(&key) {
            return known;
        }
        let table = truth_table(catalog, key.0, &key.1);
        self.tables.borrow_mut().insert(key, table);
        table
    }

    /// The tree of bitwise instructions `n` (a bitwise instruction) ends, over at most three
    /// other values, as the cheapest network of the target's bitwise instructions, if cheaper:
    /// the network over operand variables named by `name`, and the values they stand for.
    pub fn rewired(
        &self,
        n: &Rc<Node>,
        catalog: &Catalog,
        name: &dyn Fn(usize) -> String,
    ) -> Option<(Rc<Node>, Vec<Rc<Node>>)> {
        self.table(n, catalog)?;
        let mut tree = Tree::default();
        let goal = tree.read(n, catalog, self)?;
        if tree.gates.len() < 2 {
            return None;
        }
        let below: f64 = tree.gates.iter().map(|g| g.own_cost(catalog)).sum();
        let ty = n.ty(catalog);
        let types: Vec<VecType> = tree.leaves.iter().map(|l| l.ty(catalog)).collect();
        let key = format!("{goal} {types:?} {} {below}", ty.bits());
        let known = self.found.borrow().get(&key).cloned();
        let found = match known {
            Some(found) => found,
            None => {
                let gates = self
                    .gates
                    .borrow_mut()
                    .entry(ty.bits())
                    .or_insert_with(|| Rc::new(gates(catalog, ty.bits())))
                    .clone();
                let leaves: Vec<Rc<Node>> = (types.iter().enumerate())
                    .map(|(k, &ty)| {
                        Rc::new(Node::Input {
                            name: name(k),
                            ty,
                            offset: 0,
                        })
                    })
                    .collect();
                let inputs = (types.iter().enumerate())
                    .map(|(k, &ty)| (name(k), ty))
                    .collect();
                let spec = tree
                    .over(n, &leaves, catalog, self)
                    .to_expr(catalog, &inputs);
                let found = network(&gates, goal, &leaves, ty, below, catalog)
                    .filter(|f| spec.is_ok_and(|s| prove_selection(catalog, &s, f).is_ok()));
                self.found.borrow_mut().insert(key, found.clone());
                found
            }
        };
        Some((found?, tree.leaves))
    }
}

/// A tree of bitwise instructions: its instructions, and the other values it reads.
#[derive(Default)]
struct Tree {
    gates: Vec<Rc<Node>>,
    leaves: Vec<Rc<Node>>,
}

impl Tree {
    /// The truth table of `n` over the tree's leaves (at most three, read through their
    /// reinterpretations), recording them.
    fn read(&mut self, n: &Rc<Node>, catalog: &Catalog, bitwise: &Bitwise) -> Option<u8> {
        let n = unwrapped(n);
        let Some(table) = bitwise.table(n, catalog) else {
            let k = match self.leaf(n) {
                Some(k) => k,
                None if self.leaves.len() < 3 => {
                    self.leaves.push(n.clone());
                    self.leaves.len() - 1
                }
                None => return None,
            };
            return Some(VARIABLES[k]);
        };
        if !self.gates.iter().any(|g| Rc::ptr_eq(g, n)) {
            self.gates.push(n.clone());
        }
        let args = vector_args(n, catalog)
            .iter()
            .map(|a| self.read(a, catalog, bitwise))
            .collect::<Option<Vec<u8>>>()?;
        Some(apply(table, &args))
    }

    /// Which leaf `n` is.
    fn leaf(&self, n: &Rc<Node>) -> Option<usize> {
        self.leaves
            .iter()
            .position(|l| Rc::ptr_eq(l, n) || **l == **n)
    }

    /// `n` with each leaf replaced by `leaves`' node for it.
    fn over(&self, n: &Rc<Node>, leaves: &[Rc<Node>], catalog: &Catalog, b: &Bitwise) -> Rc<Node> {
        let inner = unwrapped(n);
        let ty = n.ty(catalog);
        if let Some(k) = self.leaf(inner) {
            return retyped(leaves[k].clone(), ty, catalog);
        }
        if b.table(inner, catalog).is_none() {
            return n.clone();
        }
        let children = inner
            .children()
            .iter()
            .map(|c| match &**c {
                Node::Const { .. } => c.clone(),
                _ => self.over(c, leaves, catalog, b),
            })
            .collect();
        retyped(Rc::new(inner.with_children(children)), ty, catalog)
    }
}

/// `n` without the reinterpretations around it.
fn unwrapped(n: &Rc<Node>) -> &Rc<Node> {
    match &**n {
        Node::Reinterpret { arg, .. } => unwrapped(arg),
        _ => n,
    }
}

/// The operands of instruction node `n` other than its immediates.
fn vector_args(n: &Node, catalog: &Catalog) -> Vec<Rc<Node>> {
    let Node::Instr { index, args } = n else {
        return Vec::new();
    };
    catalog.instructions[*index]
        .operands
        .iter()
        .zip(args)
        .filter(|(o, _)| o.imm.is_none())
        .map(|(_, a)| a.clone())
        .collect()
}

/// The cheapest network of `gates` as wide as `ty` computing truth table `goal` from `leaves`
/// (the variables' tables in order) for less than `below`, as a node of type `ty`.
fn network(
    gates: &[Gate],
    goal: u8,
    leaves: &[Rc<Node>],
    ty: VecType,
    below: f64,
    catalog: &Catalog,
) -> Option<Rc<Node>> {
    let gates: Vec<&Gate> = gates.iter().collect();
    let cheapest = gates.iter().map(|g| g.cost).fold(f64::INFINITY, f64::min);
    let mut made: Made = HashMap::new();
    for t in &VARIABLES[..leaves.len()] {
        made.insert(*t, (0.0, None));
    }
    let mut frontier: Vec<u8> = VARIABLES[..leaves.len()].to_vec();
    let mut tries = 0;
    for step in 1..=MAX_STEPS {
        let done = made
            .get(&goal)
            .is_some_and(|(c, _)| *c <= cheapest * step as f64);
        if done || frontier.is_empty() || cheapest * step as f64 >= below {
            break;
        }
        let mut known: Vec<u8> = made.keys().copied().collect();
        known.sort();
        let mut added = Vec::new();
        for (g, gate) in gates.iter().enumerate() {
            for args in tuples(&known, &frontier, gate.arity) {
                tries += 1;
                if tries > MAX_TRIES {
                    break;
                }
                let cost = gate.cost + args.iter().map(|a| made[a].0).sum::<f64>();
                let table = apply(gate.table, &args);
                if cost >= below || made.get(&table).is_some_and(|(c, _)| *c <= cost) {
                    continue;
                }
                made.insert(table, (cost, Some((g, args))));
                added.push(table);
            }
        }
        frontier = added;
    }
    made.get(&goal)?;
    let mut built: HashMap<u8, Rc<Node>> = HashMap::new();
    let node = build(goal, &made, &gates, leaves, catalog, &mut built);
    Some(retyped(node, ty, catalog))
}

/// Every choice of `arity` tables of `known` with at least one of `frontier`.
fn tuples(known: &[u8], frontier: &[u8], arity: usize) -> Vec<Vec<u8>> {
    let mut all = every_choice(&vec![known.to_vec(); arity]);
    all.retain(|t| t.iter().any(|a| frontier.contains(a)));
    all
}

/// The node computing table `t` as `made` says.
fn build(
    t: u8,
    made: &Made,
    gates: &[&Gate],
    leaves: &[Rc<Node>],
    catalog: &Catalog,
    built: &mut HashMap<u8, Rc<Node>>,
) -> Rc<Node> {
    if let Some(n) = built.get(&t) {
        return n.clone();
    }
    let n = match &made[&t].1 {
        None => {
            let k = VARIABLES
                .iter()
                .position(|&v| v == t)
                .expect("a leaf's table");
            leaves[k].clone()
        }
        Some((g, args)) => {
            let gate = gates[*g];
            let operands = catalog.instructions[gate.index].vector_operands();
            let args = args
                .iter()
                .zip(&operands)
                .map(|(a, (_, ty))| {
                    retyped(build(*a, made, gates, leaves, catalog, built), *ty, catalog)
                })
                .collect();
            instruction(catalog, gate.index, &gate.imms, args)
        }
    };
    built.insert(t, n.clone());
    n
}

/// `n` read as `ty` (the same bits), through no other reinterpretation.
fn retyped(n: Rc<Node>, ty: VecType, catalog: &Catalog) -> Rc<Node> {
    let n = unwrapped(&n).clone();
    match n.ty(catalog) == ty {
        true => n,
        false => Rc::new(Node::Reinterpret { ty, arg: n }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_tables_compose_bit_by_bit() {
        // and, or, xor and a select (a ? b : c) of the three variables.
        assert_eq!(apply(0xc0, &[0xf0, 0xcc]), 0xc0);
        assert_eq!(apply(0xfc, &[0xf0, 0xcc]), 0xfc);
        assert_eq!(apply(0x3c, &[0xf0, 0xcc]), 0x3c);
        let select = (0xf0 & 0xcc) | (!0xf0u8 & 0xaa);
        assert_eq!(apply(select, &[0xf0, 0xcc, 0xaa]), select);
        // The select with its operands swapped: b ? a : c.
        assert_eq!(
            apply(select, &[0xcc, 0xf0, 0xaa]),
            (0xcc & 0xf0) | (!0xccu8 & 0xaa)
        );
        // An and of a and (b xor c).
        assert_eq!(apply(0xc0, &[0xf0, 0xcc ^ 0xaa]), 0xf0 & (0xcc ^ 0xaa));
    }
}
