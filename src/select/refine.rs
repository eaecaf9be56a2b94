//! Data movement the rules leave scalarized, replaced by the target's own moves: every
//! scalarized operator of a selection that only moves bytes (a truncation, a slice of every
//! other lane, a concatenation) is searched for among sequences of the target's
//! data-movement instructions ([`super::movement`]) and replaced by the cheapest one found
//! that costs less than its scalar lanes. The selection is proven afterwards like any other.

use super::catalog::Catalog;
use super::movement::{only_moves_bytes, search, Moves};
use super::node::Node;
use super::prove::prove_selection;
use crate::ir::{Expr, Op};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// The target's moves, computed when first needed, and the sequences found (or not) for each
/// operator searched so far: a batch meets the same ones again.
#[derive(Default)]
pub struct MoveSearch {
    moves: OnceCell<Moves>,
    found: RefCell<HashMap<String, Option<Rc<Node>>>>,
}

impl MoveSearch {
    /// The target's data-movement instructions.
    pub fn moves(&self, catalog: &Catalog) -> &Moves {
        self.moves.get_or_init(|| Moves::of(catalog))
    }
}

/// `root` with its scalarized byte moves replaced where the search finds cheaper ones.
pub fn refine(root: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Rc<Node> {
    let mut done = HashMap::new();
    walk(root, catalog, moves, &mut done)
}

fn walk(
    n: &Rc<Node>,
    catalog: &Catalog,
    moves: &MoveSearch,
    done: &mut HashMap<*const Node, Rc<Node>>,
) -> Rc<Node> {
    if let Some(r) = done.get(&Rc::as_ptr(n)) {
        return r.clone();
    }
    let children: Vec<Rc<Node>> = n
        .children()
        .iter()
        .map(|c| walk(c, catalog, moves, done))
        .collect();
    let same = children
        .iter()
        .zip(n.children())
        .all(|(a, b)| Rc::ptr_eq(a, b));
    let mut out = if same {
        n.clone()
    } else {
        Rc::new(n.with_children(children))
    };
    if let Some(moved) = moved(&out, catalog, moves) {
        out = moved;
    }
    done.insert(Rc::as_ptr(n), out.clone());
    out
}

/// The target's moves computing a scalarized operator over its operands, if cheaper; a
/// lane-wise one on operands wider than a register in register-sized parts, another with a
/// result wider than a register one register of the result at a time.
fn moved(n: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Option<Rc<Node>> {
    let Node::Scalar { op, ty, args } = &**n else {
        return None;
    };
    // Operators that move bytes whatever the lanes hold (a shift or a select also may, for
    // some operands, which byte maps on sampled inputs cannot tell apart).
    let moves_bytes = matches!(
        op,
        Op::Cast(_)
            | Op::Bitcast(_)
            | Op::Broadcast(_)
            | Op::Concat
            | Op::Slice { .. }
            | Op::Interleave
            | Op::Shuffle(_)
    );
    if !moves_bytes || !ty.elem.is_int() || args.iter().any(|a| !a.ty(catalog).elem.is_int()) {
        return None;
    }
    let register = catalog.target.register_bits;
    let widest = args.iter().map(|a| a.ty(catalog).bits()).max().unwrap_or(0);
    let parts = widest.div_ceil(register);
    if parts > 1 && op.is_lanewise() {
        if !ty.lanes.is_multiple_of(parts) {
            return None;
        }
        let lanes = ty.lanes / parts;
        let found = (0..parts)
            .map(|p| {
                let part = Rc::new(Node::Scalar {
                    op: op.clone(),
                    ty: ty.with_lanes(lanes),
                    args: args
                        .iter()
                        .map(|a| lanes_of(a, catalog, p * lanes, lanes))
                        .collect(),
                });
                moved(&part, catalog, moves)
            })
            .collect::<Option<Vec<_>>>()?;
        return Some(Rc::new(Node::Parts(found)));
    }
    let names: Vec<String> = (0..args.len())
        .map(|i| format!("isadb_operand_{i}"))
        .collect();
    let operands = args
        .iter()
        .zip(&names)
        .map(|(a, name)| Rc::new(Expr::var(name, a.ty(catalog))))
        .collect();
    let e = Rc::new(Expr::build(op.clone(), operands).ok()?);
    // A result wider than a register: each register of it on its own.
    let chunk = register / ty.elem.bits();
    let chunks = if ty.bits() > register && chunk > 0 && ty.lanes.is_multiple_of(chunk) {
        ty.lanes / chunk
    } else {
        1
    };
    let below = n.own_cost(catalog) / chunks as f64;
    let found = (0..chunks)
        .map(|c| {
            let goal = match chunks {
                1 => e.clone(),
                _ => Rc::new(
                    Expr::build(
                        Op::Slice {
                            start: c * chunk,
                            stride: 1,
                            lanes: chunk,
                        },
                        vec![e.clone()],
                    )
                    .ok()?,
                ),
            };
            searched(&goal, below, catalog, moves)
        })
        .collect::<Option<Vec<_>>>()?;
    let by_name: HashMap<&str, &Rc<Node>> =
        names.iter().map(String::as_str).zip(args.iter()).collect();
    let mut found: Vec<Rc<Node>> = found.iter().map(|f| substitute(f, &by_name)).collect();
    Some(match found.len() {
        1 => found.remove(0),
        _ => Rc::new(Node::Parts(found)),
    })
}

/// The target's moves computing `goal` (over operand variables) for less than `below`, proven;
/// searched once per selector.
fn searched(
    goal: &Rc<Expr>,
    below: f64,
    catalog: &Catalog,
    moves: &MoveSearch,
) -> Option<Rc<Node>> {
    if !only_moves_bytes(goal) {
        return None;
    }
    let key = format!("{goal} {below}");
    let known = moves.found.borrow().get(&key).cloned();
    match known {
        Some(found) => found,
        None => {
            let found = search(catalog, moves.moves(catalog), goal, below)
                // Proven on its own, so that a wrong sequence is dropped here, not the whole
                // selection.
                .filter(|f| prove_selection(catalog, goal, f).is_ok());
            moves.found.borrow_mut().insert(key, found.clone());
            found
        }
    }
}

/// `n` with each operand variable replaced by the node it stands for.
fn substitute(n: &Rc<Node>, by_name: &HashMap<&str, &Rc<Node>>) -> Rc<Node> {
    if let Node::Input { name, .. } = &**n {
        if let Some(arg) = by_name.get(name.as_str()) {
            return (*arg).clone();
        }
    }
    if n.children().is_empty() {
        return n.clone();
    }
    let children = n
        .children()
        .iter()
        .map(|c| substitute(c, by_name))
        .collect();
    Rc::new(n.with_children(children))
}

/// Lanes `[first, first + count)` of `n`.
fn lanes_of(n: &Rc<Node>, catalog: &Catalog, first: u32, count: u32) -> Rc<Node> {
    let ty = n.ty(catalog).with_lanes(count);
    Rc::new(match &**n {
        Node::Input { name, offset, .. } => Node::Input {
            name: name.clone(),
            ty,
            offset: offset + first,
        },
        _ => Node::Lanes {
            ty,
            offset: first,
            arg: n.clone(),
        },
    })
}
