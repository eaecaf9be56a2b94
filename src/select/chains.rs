//! Chains of the target's data-movement instructions in a selection: which instructions at
//! which immediates only move bytes, and a chain of them read over its other operands, for the
//! search over the target's moves to find as a whole (`refine.rs`).

use super::byte_map::only_moves_bytes;
use super::catalog::Catalog;
use super::node::Node;
use crate::ir::{Expr, VecType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Whether an instruction at given immediates only moves bytes, by instruction and immediates.
#[derive(Default)]
pub struct Movers(RefCell<HashMap<(usize, Vec<i64>), bool>>);

impl Movers {
    /// Whether `n` applies an instruction that only moves bytes (at its immediates).
    pub fn is_move(&self, n: &Node, catalog: &Catalog) -> bool {
        let Node::Instr { index, args } = n else {
            return false;
        };
        let immediates = args
            .iter()
            .map(|a| match **a {
                Node::Const { value, .. } => value,
                _ => i64::MIN,
            })
            .collect::<Vec<i64>>();
        let key = (*index, immediates);
        if let Some(&known) = self.0.borrow().get(&key) {
            return known;
        }
        let mut inputs = HashMap::new();
        let over_variables = args
            .iter()
            .enumerate()
            .map(|(k, a)| match **a {
                Node::Const { .. } => a.clone(),
                _ => {
                    let ty = a.ty(catalog);
                    inputs.insert(operand_name(k), ty);
                    Rc::new(Node::Input {
                        name: operand_name(k),
                        ty,
                        offset: 0,
                    })
                }
            })
            .collect();
        let moves = Node::Instr {
            index: *index,
            args: over_variables,
        }
        .to_expr(catalog, &inputs)
        .is_ok_and(|e| only_moves_bytes(&e));
        self.0.borrow_mut().insert(key, moves);
        moves
    }
}

/// A chain of data-movement instructions: the instructions, and the operands they move.
#[derive(Default)]
pub struct Chain {
    pub instructions: Vec<Rc<Node>>,
    pub operands: Vec<Rc<Node>>,
}

impl Chain {
    /// `n` over the chain's operands as inputs, recording its instructions and operands.
    pub fn read(&mut self, n: &Rc<Node>, catalog: &Catalog, movers: &Movers) -> Rc<Node> {
        match &**n {
            Node::Const { .. } | Node::Literal { .. } => n.clone(),
            // Lanes of an operand are an operand (one register of a pair: the search moves
            // registers, not pairs).
            Node::Lanes { arg, .. } if self.moved(arg, catalog, movers) => {
                self.inner(n, catalog, movers)
            }
            Node::Reinterpret { .. } | Node::Parts(_) => self.inner(n, catalog, movers),
            // Lanes of an input are lanes of one operand for the input, from its first lane to
            // the last the chain reads (so that the search sees them together).
            Node::Input { name, ty, offset } => {
                let k = self.operand(n, |o| matches!(o, Node::Input { name: m, .. } if m == name));
                let Node::Input { ty: read, .. } = &*self.operands[k] else {
                    unreachable!("an input's operand is an input")
                };
                let lanes = read.lanes.max(offset + ty.lanes);
                self.operands[k] = Rc::new(Node::Input {
                    name: name.clone(),
                    ty: ty.with_lanes(lanes),
                    offset: 0,
                });
                Rc::new(Node::Input {
                    name: operand_name(k),
                    ty: *ty,
                    offset: *offset,
                })
            }
            Node::Instr { .. } if movers.is_move(n, catalog) => {
                if !self.instructions.iter().any(|i| Rc::ptr_eq(i, n)) {
                    self.instructions.push(n.clone());
                }
                self.inner(n, catalog, movers)
            }
            _ => {
                let k = self.operand(n, |o| std::ptr::eq(o, &**n) || *o == **n);
                Rc::new(Node::Input {
                    name: operand_name(k),
                    ty: n.ty(catalog),
                    offset: 0,
                })
            }
        }
    }

    /// `over_operands` (read by [`Chain::read`]) as an expression over the operand variables.
    pub fn goal(&self, over_operands: &Rc<Node>, catalog: &Catalog) -> Option<Rc<Expr>> {
        let inputs: HashMap<String, VecType> = self
            .operands
            .iter()
            .enumerate()
            .map(|(k, o)| (operand_name(k), o.ty(catalog)))
            .collect();
        over_operands.to_expr(catalog, &inputs).ok()
    }

    /// The index of the operand `same` finds, or of `n` as a new one.
    fn operand(&mut self, n: &Rc<Node>, same: impl Fn(&Node) -> bool) -> usize {
        match self.operands.iter().position(|o| same(o)) {
            Some(k) => k,
            None => {
                self.operands.push(n.clone());
                self.operands.len() - 1
            }
        }
    }

    /// Whether the chain moves `n`'s bytes further (rather than taking `n` as an operand).
    fn moved(&self, n: &Node, catalog: &Catalog, movers: &Movers) -> bool {
        match n {
            Node::Lanes { arg, .. } | Node::Reinterpret { arg, .. } => {
                self.moved(arg, catalog, movers)
            }
            _ => movers.is_move(n, catalog),
        }
    }

    fn inner(&mut self, n: &Rc<Node>, catalog: &Catalog, movers: &Movers) -> Rc<Node> {
        let children = n
            .children()
            .iter()
            .map(|c| self.read(c, catalog, movers))
            .collect();
        Rc::new(n.with_children(children))
    }
}

/// The name of the `k`th operand variable of a search.
pub fn operand_name(k: usize) -> String {
    format!("isadb_operand_{k}")
}
