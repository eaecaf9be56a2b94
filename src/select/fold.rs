//! Instructions over constants alone folded into the constant they compute ([`folded`]), and
//! the folds a selection's proof needs undone ([`Folds::unfolded`]).

use super::catalog::Catalog;
use super::node::Node;
use super::prove::prove_selection;
use crate::ir::Elem;
use crate::semantics::{eval, reads_a_generalizable_numeral, Env};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Constants by address, each with the instructions it was folded from.
type ByAddress = HashMap<*const Node, (Rc<Node>, Rc<Node>)>;

/// Each constant [`folded`] from instructions over a numeral a proof may generalize, by its
/// address (kept alive, so the address is its own), with the instructions.
#[derive(Default)]
pub struct Folds(RefCell<ByAddress>);

impl Folds {
    /// `root` with each constant folded from instructions over a numeral a proof may
    /// generalize (each proven equal to them on its own) as those instructions again: the tree
    /// a selection is proven by. Folding loses where a constant came from, which such a proof
    /// needs: the sign mask of a division's magic number folded to zero no longer holds once
    /// the number is a variable, and z3 alone takes minutes over the 64-bit product. Other
    /// folds stay (z3 proves HVX's products faster with their constants folded).
    pub fn unfolded(&self, root: &Rc<Node>) -> Rc<Node> {
        let folds = self.0.borrow();
        if folds.is_empty() {
            return root.clone();
        }
        fn walk(
            n: &Rc<Node>,
            folds: &ByAddress,
            done: &mut HashMap<*const Node, Rc<Node>>,
        ) -> Rc<Node> {
            if let Some(r) = done.get(&Rc::as_ptr(n)) {
                return r.clone();
            }
            let out = match folds.get(&Rc::as_ptr(n)) {
                Some((_, origin)) => walk(origin, folds, done),
                None => {
                    let children: Vec<Rc<Node>> =
                        n.children().iter().map(|c| walk(c, folds, done)).collect();
                    match children
                        .iter()
                        .zip(n.children())
                        .all(|(a, b)| Rc::ptr_eq(a, b))
                    {
                        true => n.clone(),
                        false => Rc::new(n.with_children(children)),
                    }
                }
            };
            done.insert(Rc::as_ptr(n), out.clone());
            out
        }
        walk(root, &folds, &mut HashMap::new())
    }
}

/// An instruction or a scalarized operator whose operands are all constants, or computed
/// from constants alone (x86's interleave of two splats as the factors of `pmaddwd`, a table
/// of lanes that differ concatenated from its runs), as the literal it computes (one load) or
/// the constant (lanes all alike), where the instructions cost more.
pub fn folded(n: &Rc<Node>, catalog: &Catalog, folds: &Folds) -> Option<Rc<Node>> {
    fn constant(n: &Node) -> bool {
        match n {
            Node::Const { .. } | Node::Literal { .. } => true,
            Node::Input { .. } => false,
            _ => n.children().iter().all(|c| constant(c)),
        }
    }
    if !matches!(**n, Node::Instr { .. } | Node::Scalar { .. }) || !constant(n) {
        return None;
    }
    let goal = n.to_expr(catalog, &HashMap::new()).ok()?;
    let value = eval(&goal, &Env::new()).ok()?;
    // Bool lanes (AVX-512 masks, HVX predicates) are not loaded from memory.
    if value.ty.elem == Elem::Bool {
        return None;
    }
    let values: Vec<i64> = value.lanes.iter().map(|&bits| bits as i64).collect();
    let (ty, value) = (value.ty, values[0]);
    let literal = Rc::new(match values.iter().all(|&v| v == value) {
        true => Node::Const { ty, value },
        false => Node::Literal { ty, values },
    });
    prove_selection(catalog, &goal, &literal).ok()?;
    if reads_a_generalizable_numeral(&goal) {
        let fold = (literal.clone(), n.clone());
        folds.0.borrow_mut().insert(Rc::as_ptr(&literal), fold);
    }
    Some(literal)
}
