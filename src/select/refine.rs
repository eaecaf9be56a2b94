//! What the rules leave scalarized, replaced by sequences of the target's own instructions:
//! every scalarized operator of a selection is searched for, among sequences of the target's
//! data-movement instructions ([`super::movement`]) where it only moves bytes, and, where that
//! finds nothing, among synthesized sequences of any of its instructions ([`super::sequences`]),
//! and replaced by the cheapest one found that costs less than its scalar lanes; where nothing
//! is found for it alone, it is searched for together with the chains of moves that make its
//! operands ([`moved_with_chains`]), and a narrowing by more than one step as narrowings by
//! steps ([`narrowed_in_steps`]). Two searches also improve on what the rules did select: a
//! chain of the target's moves ([`super::chains`]) is searched for as a whole among its moves
//! without scalar controls, and a tree of bitwise instructions as the cheapest network of them
//! ([`super::bitwise`]); and instructions over constants alone are one literal load
//! ([`folded`]). Each replacement is proven on its own, and the selection afterwards like any
//! other.

use super::bitwise::Bitwise;
use super::byte_map::only_moves_bytes;
use super::catalog::Catalog;
use super::chains::{operand_name, Chain, Movers};
use super::fold::{folded, Folds};
use super::movement::{search, MAX_STEPS};
use super::moves::Moves;
use super::node::Node;
use super::prove::prove_selection;
use super::sequences::{self, Components};
use crate::ir::{Elem, Expr, Op};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// The target's moves and components, computed when first needed, and the sequences found (or
/// not) for each operator searched so far: a batch meets the same ones again.
pub struct MoveSearch {
    moves: OnceCell<Moves>,
    /// The same without scalar controls, for chains of moves ([`rechained`]).
    uncontrolled: OnceCell<Moves>,
    /// Which instructions at which immediates only move bytes.
    movers: Movers,
    components: OnceCell<Components>,
    found: RefCell<HashMap<String, Option<Rc<Node>>>>,
    /// The target's bitwise instructions and the networks of them found.
    bitwise: Bitwise,
    /// Whether operators that do not only move bytes are searched for as well.
    pub synthesize: bool,
    /// The constants folded from instructions that a selection's proof needs as those.
    pub folds: Folds,
}

impl Default for MoveSearch {
    fn default() -> MoveSearch {
        MoveSearch {
            moves: OnceCell::new(),
            uncontrolled: OnceCell::new(),
            movers: Movers::default(),
            components: OnceCell::new(),
            found: RefCell::default(),
            bitwise: Bitwise::default(),
            synthesize: true,
            folds: Folds::default(),
        }
    }
}

impl MoveSearch {
    /// The target's data-movement instructions.
    pub fn moves(&self, catalog: &Catalog) -> &Moves {
        self.moves.get_or_init(|| Moves::of(catalog))
    }

    /// The target's data-movement instructions without scalar controls.
    fn uncontrolled(&self, catalog: &Catalog) -> &Moves {
        self.uncontrolled
            .get_or_init(|| Moves::uncontrolled(catalog))
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
    // Scalarized slices of a register read as lanes of it (so that the search sees the lanes
    // of one register together: a minimum of its two halves is a pairwise minimum), and as
    // refined: the cheaper of what the two find, if it costs less than the node as it is
    // (operands read beside zeros included).
    let viewed = viewed_slices(n, catalog, moves, done).and_then(|v| moved(&v, catalog, moves));
    let now = out.cost(catalog);
    // With the chains that make its operands only where it is not found alone: the chains
    // may have other users, so that their replacement, cheaper here, is dearer in the whole.
    let moved = moved(&out, catalog, moves).or_else(|| moved_with_chains(&out, catalog, moves));
    let found = [
        viewed,
        moved,
        narrowed_in_steps(&out, catalog, moves),
        rechained(&out, catalog, moves),
        rewired(&out, catalog, moves),
        folded(&out, catalog, &moves.folds),
    ]
    .into_iter()
    .flatten()
    .filter(|f| f.cost(catalog) < now)
    .min_by(|a, b| a.cost(catalog).total_cmp(&b.cost(catalog)));
    if let Some(found) = found {
        out = found;
    }
    done.insert(Rc::as_ptr(n), out.clone());
    out
}

/// The chain of data-movement instructions `n` ends (two or more, through lanes and
/// reinterpretations of their results) as the target's cheapest moves computing the same bytes
/// from the chain's other operands, if cheaper.
fn rechained(n: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Option<Rc<Node>> {
    // A value assembled from parts is a move too (free: one of its parts may be as well).
    let least = match **n {
        Node::Parts(_) => 1,
        _ if moves.movers.is_move(n, catalog) => 2,
        _ => return None,
    };
    let mut chain = Chain::default();
    let over_operands = chain.read(n, catalog, &moves.movers);
    if chain.instructions.len() < least {
        return None;
    }
    let goal = chain.goal(&over_operands, catalog)?;
    let below: f64 = chain.instructions.iter().map(|i| i.own_cost(catalog)).sum();
    let key = format!("chain {goal} {below}");
    let known = moves.found.borrow().get(&key).cloned();
    let found = known.unwrap_or_else(|| {
        // As many steps as could cost less than the chain.
        let uncontrolled = moves.uncontrolled(catalog);
        let cheapest = uncontrolled
            .0
            .iter()
            .map(|m| m.cost)
            .fold(f64::INFINITY, f64::min);
        let steps = match cheapest > 0.0 {
            true => ((below - 1e-9) / cheapest).floor() as usize,
            false => MAX_STEPS,
        };
        let found = search(catalog, uncontrolled, &goal, below, steps)
            .filter(|f| prove_selection(catalog, &goal, f).is_ok());
        moves.found.borrow_mut().insert(key, found.clone());
        found
    })?;
    over_operands_named(&found, &chain.operands, catalog)
}

/// A scalarized operator over chains of the target's moves (a slice of a concatenation
/// instruction), searched for together with them, as [`moved`] searches for the operator alone:
/// the search then reads the lanes where the chains took them from (the odd lanes of two
/// registers joined into a wider one, from the two registers).
fn moved_with_chains(n: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Option<Rc<Node>> {
    if !matches!(**n, Node::Scalar { .. }) {
        return None;
    }
    let mut chain = Chain::default();
    let children = n
        .children()
        .iter()
        .map(|c| chain.read(c, catalog, &moves.movers))
        .collect();
    if chain.instructions.is_empty() {
        return None;
    }
    let goal = chain.goal(&Rc::new(n.with_children(children)), catalog)?;
    // Cheaper than the operator alone: the chains may stay for their other users.
    let found = searched(&goal, n.own_cost(catalog), catalog, moves)?;
    over_operands_named(&found, &chain.operands, catalog)
}

/// A scalarized narrowing to a quarter of the bits or less as the narrowing to a type between
/// narrowed again, each step searched for ([`moved`]): truncations compose, and the steps may
/// be moves where the whole is not (AVX2's `u8(x_u64)`: `vpshufd` and `vpermq` to 32 bits, a
/// byte lookup to 8).
fn narrowed_in_steps(n: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Option<Rc<Node>> {
    let Node::Scalar {
        op: Op::Cast(elem),
        ty,
        args,
    } = &**n
    else {
        return None;
    };
    let [arg] = args.as_slice() else {
        return None;
    };
    let from = arg.ty(catalog).elem;
    if !from.is_int() || !elem.is_int() || from.bits() < 4 * elem.bits() {
        return None;
    }
    let step = |to: Elem, arg: Rc<Node>| {
        let cast = Rc::new(Node::Scalar {
            op: Op::Cast(to),
            ty: ty.with_elem(to),
            args: vec![arg],
        });
        moved(&cast, catalog, moves)
            .or_else(|| narrowed_in_steps(&cast, catalog, moves))
            .unwrap_or(cast)
    };
    std::iter::successors(Some(2 * elem.bits()), |b| Some(2 * b))
        .take_while(|&b| b < from.bits())
        .filter_map(|b| Elem::int(b, elem.is_signed()))
        .map(|between| step(*elem, step(between, arg.clone())))
        .min_by(|a, b| a.cost(catalog).total_cmp(&b.cost(catalog)))
}

/// `n`'s tree of bitwise instructions as the target's cheapest network of them, if cheaper
/// ([`Bitwise::rewired`]).
fn rewired(n: &Rc<Node>, catalog: &Catalog, moves: &MoveSearch) -> Option<Rc<Node>> {
    let (found, leaves) = moves.bitwise.rewired(n, catalog, &operand_name)?;
    over_operands_named(&found, &leaves, catalog)
}

/// `found`, written over operands named by [`operand_name`] in order, with each replaced by
/// the node of `operands` at its position.
fn over_operands_named(
    found: &Rc<Node>,
    operands: &[Rc<Node>],
    catalog: &Catalog,
) -> Option<Rc<Node>> {
    let names: Vec<String> = (0..operands.len()).map(operand_name).collect();
    let by_name = names.iter().map(String::as_str).zip(operands).collect();
    substitute(found, &by_name, catalog)
}

/// `n` with each operand that is a scalarized slice of consecutive lanes of a register
/// replaced by those lanes of the register (refined); None if it has no such operand.
fn viewed_slices(
    n: &Rc<Node>,
    catalog: &Catalog,
    moves: &MoveSearch,
    done: &mut HashMap<*const Node, Rc<Node>>,
) -> Option<Rc<Node>> {
    if !matches!(**n, Node::Scalar { .. }) {
        return None;
    }
    let register = catalog.target.register_bits;
    let mut any = false;
    let children = n
        .children()
        .iter()
        .map(|c| match &**c {
            Node::Scalar {
                op:
                    Op::Slice {
                        start,
                        stride: 1,
                        lanes,
                    },
                ty,
                args,
            } if args[0].ty(catalog).bits() <= register => {
                any = true;
                Rc::new(Node::Lanes {
                    ty: ty.with_lanes(*lanes),
                    offset: *start,
                    arg: walk(&args[0], catalog, moves, done),
                })
            }
            _ => walk(c, catalog, moves, done),
        })
        .collect();
    any.then(|| Rc::new(n.with_children(children)))
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
    // Where the lanes read as part of their register find nothing, the lanes as a value of
    // their own: HVX's `vsplat` broadcasts a scalar `Rt`, not a lane of a register pair.
    let viewed = |a: &Rc<Node>| matches!(**a, Node::Lanes { .. } | Node::Reinterpret { .. });
    over_operands(n, true, catalog, moves).or_else(|| match args.iter().any(viewed) {
        true => over_operands(n, false, catalog, moves),
        false => None,
    })
}

/// [`moved`] for an operator within a register's width, over its operands as variables
/// (constants aside); with `through_views`, lanes of a register as lanes of one variable for
/// the register, so that the search sees them together (the two halves of a pairwise minimum).
fn over_operands(
    n: &Rc<Node>,
    through_views: bool,
    catalog: &Catalog,
    moves: &MoveSearch,
) -> Option<Rc<Node>> {
    let Node::Scalar { op, ty, args } = &**n else {
        return None;
    };
    let register = catalog.target.register_bits;
    let mut bases: Vec<Rc<Node>> = Vec::new();
    let mut operands = Vec::new();
    for a in args {
        let (base, first) = match &**a {
            Node::Const { .. } | Node::Literal { .. } => {
                operands.push(a.to_expr(catalog, &HashMap::new()).ok()?);
                continue;
            }
            Node::Lanes { .. } | Node::Reinterpret { .. } if through_views => {
                match register_lanes(a, catalog) {
                    (base, first) if base.ty(catalog).bits() <= register => (base, Some(first)),
                    _ => (a.clone(), None),
                }
            }
            _ => (a.clone(), None),
        };
        let k = match bases
            .iter()
            .position(|b| Rc::ptr_eq(b, &base) || **b == *base)
        {
            Some(k) => k,
            None => {
                bases.push(base.clone());
                bases.len() - 1
            }
        };
        let var = Rc::new(Expr::var(&operand_name(k), base.ty(catalog)));
        operands.push(match first {
            None => var,
            Some(start) => Rc::new(
                Expr::build(
                    Op::Slice {
                        start,
                        stride: 1,
                        lanes: a.ty(catalog).lanes,
                    },
                    vec![var],
                )
                .ok()?,
            ),
        });
    }
    let names: Vec<String> = (0..bases.len()).map(operand_name).collect();
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
        names.iter().map(String::as_str).zip(bases.iter()).collect();
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
            let moved = match only_moves_bytes(goal) {
                true => search(catalog, moves.moves(catalog), goal, below, MAX_STEPS)
                    // Proven on its own, so that a wrong sequence is dropped here, not the
                    // whole selection.
                    .filter(|f| prove_selection(catalog, goal, f).is_ok()),
                false => None,
            };
            // Where the moves find nothing (or nothing right), any instructions: proven by the
            // search; and where they load a lookup's literal index (which their search does
            // not count), any instructions cheaper than that.
            let found = match moved {
                Some(found) if !moves.synthesize || !loads_literal(&found) => Some(found),
                moved if moves.synthesize => {
                    let below = moved.as_ref().map_or(below, |m| m.cost(catalog));
                    sequences::search(catalog, moves.components(catalog), goal, below)
                        .map(|(found, _)| found)
                        .or(moved)
                }
                moved => moved,
            };
            moves.found.borrow_mut().insert(key, found.clone());
            found
        }
    }
}

/// Whether `n` loads a literal vector.
fn loads_literal(n: &Node) -> bool {
    matches!(n, Node::Literal { .. }) || n.children().iter().any(|c| loads_literal(c))
}

/// `n` with each operand variable (or lanes of one, or one padded to a register) replaced by
/// the node it stands for (its lanes, or it beside zeros).
fn substitute(
    n: &Rc<Node>,
    by_name: &HashMap<&str, &Rc<Node>>,
    catalog: &Catalog,
) -> Option<Rc<Node>> {
    if let Node::Input { name, ty, offset } = &**n {
        if let Some(arg) = by_name.get(name.as_str()) {
            let full = arg.ty(catalog);
            // Read padded to a register: an instruction's result of a whole xmm (or wider)
            // register beside zeros, as a 128-bit instruction leaves the rest of a ymm or zmm
            // register on x86 (not an MMX result), or an input (or a part of one) beside zeros,
            // as it is read into a register; the proof of the whole selection checks it.
            let padded = *offset == 0 && ty.lanes > full.lanes && full.bits() >= 128;
            let instruction = match &***arg {
                Node::Reinterpret { arg, .. } => matches!(**arg, Node::Instr { .. }),
                n => matches!(n, Node::Instr { .. } | Node::Input { .. }),
            };
            if full.elem == ty.elem && padded && instruction && ty.lanes.is_multiple_of(full.lanes)
            {
                let zeros = Rc::new(Node::Const {
                    ty: full.with_lanes(ty.lanes - full.lanes),
                    value: 0,
                });
                return Some(Rc::new(Node::Parts(vec![(*arg).clone(), zeros])));
            }
            if full.elem != ty.elem || offset + ty.lanes > full.lanes {
                return None;
            }
            return Some(match full == *ty {
                true => (*arg).clone(),
                false => lanes_of(arg, catalog, *offset, ty.lanes),
            });
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

/// The node whose lanes `n` reads (through lanes of lanes, and lanes read as another element
/// type: the node read so too), and the first of them.
fn register_lanes(n: &Rc<Node>, catalog: &Catalog) -> (Rc<Node>, u32) {
    match &**n {
        Node::Lanes { offset, arg, .. } => {
            let (base, first) = register_lanes(arg, catalog);
            (base, first + offset)
        }
        Node::Reinterpret { ty, arg } if matches!(**arg, Node::Lanes { .. }) => {
            let (base, first) = register_lanes(arg, catalog);
            let (from, bits) = (base.ty(catalog), ty.elem.bits());
            let first_bits = first * arg.ty(catalog).elem.bits();
            if !from.bits().is_multiple_of(bits) || !first_bits.is_multiple_of(bits) {
                return (n.clone(), 0);
            }
            let whole = ty.with_lanes(from.bits() / bits);
            let base = match from == whole {
                true => base,
                false => Rc::new(Node::Reinterpret {
                    ty: whole,
                    arg: base,
                }),
            };
            (base, first_bits / bits)
        }
        _ => (n.clone(), 0),
    }
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
