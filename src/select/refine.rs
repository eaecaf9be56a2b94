//! What the rules leave scalarized, replaced by sequences of the target's own instructions:
//! every scalarized operator of a selection is searched for, among sequences of the target's
//! data-movement instructions ([`super::movement`]) where it only moves bytes, else among
//! synthesized sequences of any of its instructions ([`super::sequences`]), and replaced by the
//! cheapest one found that costs less than its scalar lanes. The selection is proven afterwards
//! like any other.

use super::catalog::Catalog;
use super::movement::{only_moves_bytes, search, Moves};
use super::node::Node;
use super::prove::prove_selection;
use super::sequences::{self, Components};
use crate::ir::{Expr, Op};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// The target's moves and components, computed when first needed, and the sequences found (or
/// not) for each operator searched so far: a batch meets the same ones again.
pub struct MoveSearch {
    moves: OnceCell<Moves>,
    components: OnceCell<Components>,
    found: RefCell<HashMap<String, Option<Rc<Node>>>>,
    /// Whether operators that do not only move bytes are searched for as well.
    pub synthesize: bool,
}

impl Default for MoveSearch {
    fn default() -> MoveSearch {
        MoveSearch {
            moves: OnceCell::new(),
            components: OnceCell::new(),
            found: RefCell::default(),
            synthesize: true,
        }
    }
}

impl MoveSearch {
    /// The target's data-movement instructions.
    pub fn moves(&self, catalog: &Catalog) -> &Moves {
        self.moves.get_or_init(|| Moves::of(catalog))
    }

    /// The target's instructions as components of synthesized sequences.
    pub fn components(&self, catalog: &Catalog) -> &Components {
        self.components.get_or_init(|| Components::of(catalog))
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
    if args.iter().any(|a| !a.ty(catalog).elem.is_int()) {
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
    // Constants stay constants: the search may use them as they are.
    let operands = args
        .iter()
        .zip(&names)
        .map(|(a, name)| match **a {
            Node::Const { .. } => a.to_expr(catalog, &HashMap::new()).ok(),
            _ => Some(Rc::new(Expr::var(name, a.ty(catalog)))),
        })
        .collect::<Option<Vec<_>>>()?;
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
    let mut found: Vec<Rc<Node>> = found
        .iter()
        .map(|f| substitute(f, &by_name, catalog))
        .collect::<Option<_>>()?;
    Some(match found.len() {
        1 => found.remove(0),
        _ => Rc::new(Node::Parts(found)),
    })
}

/// The target's moves or a synthesized sequence computing `goal` (over operand variables) for
/// less than `below`, proven; searched once per selector.
fn searched(
    goal: &Rc<Expr>,
    below: f64,
    catalog: &Catalog,
    moves: &MoveSearch,
) -> Option<Rc<Node>> {
    let key = format!("{goal} {below}");
    let known = moves.found.borrow().get(&key).cloned();
    match known {
        Some(found) => found,
        None => {
            let found = match only_moves_bytes(goal) {
                true => search(catalog, moves.moves(catalog), goal, below)
                    // Proven on its own, so that a wrong sequence is dropped here, not the
                    // whole selection.
                    .filter(|f| prove_selection(catalog, goal, f).is_ok()),
                // Proven by the search.
                false if moves.synthesize => {
                    sequences::search(catalog, moves.components(catalog), goal, below)
                        .map(|(found, _)| found)
                }
                false => None,
            };
            moves.found.borrow_mut().insert(key, found.clone());
            found
        }
    }
}

/// `n` with each operand variable replaced by the node it stands for; None where the search
/// read an operand padded to a register, which a computed operand is not.
fn substitute(
    n: &Rc<Node>,
    by_name: &HashMap<&str, &Rc<Node>>,
    catalog: &Catalog,
) -> Option<Rc<Node>> {
    if let Node::Input { name, ty, .. } = &**n {
        if let Some(arg) = by_name.get(name.as_str()) {
            return (arg.ty(catalog) == *ty).then(|| (*arg).clone());
        }
    }
    if n.children().is_empty() {
        return Some(n.clone());
    }
    let children = n
        .children()
        .iter()
        .map(|c| substitute(c, by_name, catalog))
        .collect::<Option<_>>()?;
    Some(Rc::new(n.with_children(children)))
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
