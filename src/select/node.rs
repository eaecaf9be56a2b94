//! The selected program as a tree of instructions ([`Node`]), read back from the extracted
//! term: its type, its cost (a shared subterm computed once) and the IR it computes, for
//! translation validation.

use super::catalog::Catalog;
use super::scalarize::{ir_op, scalar_cost};
use super::term::{lane_bits, Int, Term};
use crate::error::{Error, Result};
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::HashMap;
use std::rc::Rc;

/// A node of the selected program.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Lanes `[offset, offset + ty.lanes)` of an input variable.
    Input {
        name: String,
        ty: VecType,
        offset: u32,
    },
    /// A constant broadcast to every lane (one lane value).
    Const { ty: VecType, value: i64 },
    /// A constant whose lanes differ, one value per lane: a load from a literal pool (the index
    /// vector of a table lookup such as `pshufb` or `tbl`).
    Literal { ty: VecType, values: Vec<i64> },
    /// An instruction applied to its operands, in operand order.
    Instr { index: usize, args: Vec<Rc<Node>> },
    /// The same bits read as another type of the same width.
    Reinterpret { ty: VecType, arg: Rc<Node> },
    /// Bool lanes: where the lanes of a mask (whole-lane ones or zeros) are not zero.
    Nonzero { ty: VecType, arg: Rc<Node> },
    /// Bool lanes each repeated over the bytes of its lane: the same predicate register read
    /// at bytes (HVX's Q).
    Spread { ty: VecType, arg: Rc<Node> },
    /// The result computed in consecutive parts (or a register pair assembled from two).
    Parts(Vec<Rc<Node>>),
    /// Lanes `[offset, offset + ty.lanes)` of a computed value: one register of a pair, or
    /// the low part of a register.
    Lanes {
        ty: VecType,
        offset: u32,
        arg: Rc<Node>,
    },
    /// The last resort: an IR operator no instruction sequence covers, computed lane by lane in
    /// scalar code (costed by `scalarize.rs`).
    Scalar {
        op: Op,
        ty: VecType,
        args: Vec<Rc<Node>>,
    },
}

/// What loading a [`Node::Literal`] costs: one load.
pub const LITERAL_LOAD_COST: f64 = 1.0;

/// The parts of a result computed in parts, in lane order.
pub fn flatten_parts<'a>(n: &'a Rc<Node>, out: &mut Vec<&'a Rc<Node>>) {
    match &**n {
        Node::Parts(ps) => ps.iter().for_each(|p| flatten_parts(p, out)),
        _ => out.push(n),
    }
}

/// What assembling `parts` (in lane order) costs, as `OutJoin` in `prelude.egg` does: one lane
/// insert (or store) after each part smaller than the target's smallest register; nothing
/// after whole registers.
fn joins(parts: &[Rc<Node>], catalog: &Catalog) -> f64 {
    // An input beside zeros is the input read into a register, as a read past its lanes is.
    let zeros = |p: &Rc<Node>| matches!(**p, Node::Const { value: 0, .. });
    if let [first, rest @ ..] = parts {
        if matches!(**first, Node::Input { .. }) && rest.iter().all(zeros) {
            return 0.0;
        }
    }
    let small = |p: &&Rc<Node>| p.ty(catalog).bits() < catalog.target.min_split_bits;
    parts[..parts.len().saturating_sub(1)]
        .iter()
        .filter(small)
        .count() as f64
}

/// Instruction `index` of the catalog at the immediates `imms` over the vector operands
/// `vectors` (each of the operand's type), in operand order.
pub fn instruction(
    catalog: &Catalog,
    index: usize,
    imms: &[i64],
    vectors: Vec<Rc<Node>>,
) -> Rc<Node> {
    let mut imms = imms.iter();
    let mut vectors = vectors.into_iter();
    let args = catalog.instructions[index]
        .operands
        .iter()
        .filter_map(|o| match o.imm {
            Some(_) => Some(Rc::new(Node::Const {
                ty: o.ty,
                value: *imms.next().unwrap_or(&0),
            })),
            None => vectors.next(),
        })
        .collect();
    Rc::new(Node::Instr { index, args })
}

/// Reads a selected term back as a tree of instructions; an IR operator left in it (no
/// instruction sequence covers it) becomes a [`Node::Scalar`].
pub fn read(term: &Term, catalog: &Catalog) -> Result<Rc<Node>> {
    node(term, &catalog.instruction_index(), catalog)
}

fn node(t: &Term, index: &HashMap<String, usize>, catalog: &Catalog) -> Result<Rc<Node>> {
    let bad = || Error::data("extracted term", format!("unexpected {t}"));
    let all = |args: &[Term]| -> Result<Vec<Rc<Node>>> {
        args.iter().map(|a| node(a, index, catalog)).collect()
    };
    let offset = |o: i64| u32::try_from(o).map_err(|_| bad());
    Ok(Rc::new(match t {
        Term::Out(x) => return node(x, index, catalog),
        Term::OutPair(a, b) => {
            Node::Parts(vec![node(a, index, catalog)?, node(b, index, catalog)?])
        }
        Term::Pair { lo, hi, .. } => {
            Node::Parts(vec![node(lo, index, catalog)?, node(hi, index, catalog)?])
        }
        Term::Lanes { ty, offset: o, arg } => {
            let offset = offset(*o)?;
            let arg = node(arg, index, catalog)?;
            match &*arg {
                Node::Input {
                    name, offset: at, ..
                } => Node::Input {
                    name: name.clone(),
                    ty: *ty,
                    offset: at + offset,
                },
                _ => Node::Lanes {
                    ty: *ty,
                    offset,
                    arg,
                },
            }
        }
        Term::Var { ty, name } => Node::Input {
            name: name.clone(),
            ty: *ty,
            offset: 0,
        },
        Term::Part {
            ty,
            name,
            offset: o,
        } => Node::Input {
            name: name.clone(),
            ty: *ty,
            offset: offset(*o)?,
        },
        Term::Reinterpret { ty, arg } => Node::Reinterpret {
            ty: *ty,
            arg: node(arg, index, catalog)?,
        },
        Term::Nonzero { ty, arg } => Node::Nonzero {
            ty: *ty,
            arg: node(arg, index, catalog)?,
        },
        Term::Spread { ty, arg } => Node::Spread {
            ty: *ty,
            arg: node(arg, index, catalog)?,
        },
        Term::Const {
            ty,
            value: Int::Lit(v),
        } => Node::Const {
            ty: *ty,
            value: i64::try_from(*v).map_err(|_| bad())?,
        },
        Term::Instr { name, args } => match index.get(name) {
            Some(&i) => Node::Instr {
                index: i,
                args: all(args)?,
            },
            None => return Err(bad()),
        },
        Term::Op {
            name,
            ty,
            params,
            args,
        } => {
            let args = all(args)?;
            let types: Vec<VecType> = args.iter().map(|a| a.ty(catalog)).collect();
            let op = ir_op(name, *ty, params, &types)
                .map_err(|m| Error::data("extracted term", format!("{m} (in {t})")))?;
            Node::Scalar { op, ty: *ty, args }
        }
        _ => return Err(bad()),
    }))
}

/// The input variables of an expression with their full types.
pub fn input_types(input: &Expr) -> HashMap<String, VecType> {
    input.vars().into_iter().collect()
}

impl Node {
    /// The value of a one-lane constant, also when reinterpreted as packed lanes (an HVX
    /// `Rt.b` operand).
    pub fn scalar(&self) -> Option<i64> {
        match self {
            Node::Const { ty, value } if ty.lanes == 1 => Some(*value),
            Node::Reinterpret { arg, .. } => arg.scalar(),
            _ => None,
        }
    }

    /// The node's type.
    pub fn ty(&self, catalog: &Catalog) -> VecType {
        match self {
            Node::Input { ty, .. }
            | Node::Const { ty, .. }
            | Node::Literal { ty, .. }
            | Node::Reinterpret { ty, .. }
            | Node::Nonzero { ty, .. }
            | Node::Spread { ty, .. }
            | Node::Lanes { ty, .. }
            | Node::Scalar { ty, .. } => *ty,
            Node::Instr { index, .. } => catalog.instructions[*index].result,
            Node::Parts(parts) => {
                let first = parts[0].ty(catalog);
                let lanes = parts.iter().map(|p| p.ty(catalog).lanes).sum();
                first.with_lanes(lanes)
            }
        }
    }

    /// The nodes this one reads.
    pub fn children(&self) -> &[Rc<Node>] {
        match self {
            Node::Input { .. } | Node::Const { .. } | Node::Literal { .. } => &[],
            Node::Instr { args, .. } | Node::Scalar { args, .. } => args,
            Node::Parts(parts) => parts,
            Node::Reinterpret { arg, .. }
            | Node::Nonzero { arg, .. }
            | Node::Spread { arg, .. }
            | Node::Lanes { arg, .. } => std::slice::from_ref(arg),
        }
    }

    /// The node with its children replaced, in [`Node::children`]'s order.
    pub fn with_children(&self, mut children: Vec<Rc<Node>>) -> Node {
        let mut one = || children.remove(0);
        match self {
            Node::Input { .. } | Node::Const { .. } | Node::Literal { .. } => self.clone(),
            Node::Instr { index, .. } => Node::Instr {
                index: *index,
                args: children,
            },
            Node::Scalar { op, ty, .. } => Node::Scalar {
                op: op.clone(),
                ty: *ty,
                args: children,
            },
            Node::Parts(_) => Node::Parts(children),
            Node::Reinterpret { ty, .. } => Node::Reinterpret {
                ty: *ty,
                arg: one(),
            },
            Node::Nonzero { ty, .. } => Node::Nonzero {
                ty: *ty,
                arg: one(),
            },
            Node::Spread { ty, .. } => Node::Spread {
                ty: *ty,
                arg: one(),
            },
            Node::Lanes { ty, offset, .. } => Node::Lanes {
                ty: *ty,
                offset: *offset,
                arg: one(),
            },
        }
    }

    /// How many instructions (and scalarized operators) the selection computes, each shared
    /// node once.
    pub fn operations(&self) -> usize {
        fn walk<'a>(n: &'a Node, seen: &mut Vec<&'a Node>) {
            if seen.iter().any(|s| std::ptr::eq(*s, n)) {
                return;
            }
            seen.push(n);
            for c in n.children() {
                walk(c, seen);
            }
        }
        let mut seen = Vec::new();
        walk(self, &mut seen);
        seen.iter()
            .filter(|n| matches!(n, Node::Instr { .. } | Node::Scalar { .. }))
            .count()
    }

    /// The scalarized operators in the tree, each once: `add at u8x16`.
    pub fn scalarized(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk_scalarized(&mut out);
        out
    }

    fn walk_scalarized(&self, out: &mut Vec<String>) {
        if let Node::Scalar { op, ty, .. } = self {
            let text = format!("{} at {}", op.name(), super::term::type_name(*ty));
            if !out.contains(&text) {
                out.push(text);
            }
        }
        self.children().iter().for_each(|c| c.walk_scalarized(out));
    }

    /// The cost of this node alone: an instruction's, or the lane-by-lane cost of a
    /// scalarized operator; nothing for what moves no data.
    pub fn own_cost(&self, catalog: &Catalog) -> f64 {
        match self {
            Node::Instr { index, .. } => catalog.instructions[*index].cost,
            Node::Literal { .. } => LITERAL_LOAD_COST,
            Node::Scalar { op, ty, args } => {
                let operands: Vec<(VecType, bool)> = args
                    .iter()
                    .map(|a| {
                        let constant = matches!(**a, Node::Const { .. } | Node::Literal { .. });
                        (a.ty(catalog), constant)
                    })
                    .collect();
                scalar_cost(op, *ty, &operands)
            }
            _ => 0.0,
        }
    }

    /// Sum of the costs of the distinct instructions and scalarized operators (a shared
    /// subterm is computed once).
    pub fn cost(&self, catalog: &Catalog) -> f64 {
        let mut computed = Vec::new();
        self.add_cost(catalog, &mut computed)
    }

    fn add_cost<'a>(&'a self, catalog: &Catalog, computed: &mut Vec<&'a Node>) -> f64 {
        match self {
            Node::Input { .. } | Node::Const { .. } => 0.0,
            Node::Instr { .. } | Node::Scalar { .. } | Node::Literal { .. }
                if computed.contains(&self) =>
            {
                0.0
            }
            Node::Literal { .. } => {
                computed.push(self);
                self.own_cost(catalog)
            }
            Node::Instr { args, .. } | Node::Scalar { args, .. } => {
                computed.push(self);
                self.own_cost(catalog)
                    + args
                        .iter()
                        .map(|a| a.add_cost(catalog, computed))
                        .sum::<f64>()
            }
            Node::Reinterpret { arg, .. }
            | Node::Nonzero { arg, .. }
            | Node::Spread { arg, .. }
            | Node::Lanes { arg, .. } => arg.add_cost(catalog, computed),
            Node::Parts(parts) => {
                let own = joins(parts, catalog);
                parts
                    .iter()
                    .map(|p| p.add_cost(catalog, computed))
                    .sum::<f64>()
                    + own
            }
        }
    }

    /// The IR this node computes: instruction semantics with their operands substituted, and
    /// a scalarized operator over its operands'.
    pub fn to_expr(
        &self,
        catalog: &Catalog,
        inputs: &HashMap<String, VecType>,
    ) -> Result<Rc<Expr>> {
        let wrong = |what: String| Error::data("selection", what);
        Ok(match self {
            Node::Input { name, ty, offset } => {
                let full = *inputs
                    .get(name)
                    .ok_or_else(|| wrong(format!("unknown input {name}")))?;
                let var = Rc::new(Expr::var(name, full));
                // Lanes past the input's own (a narrow input padded to a register) are zero.
                let available = full.lanes.saturating_sub(*offset).min(ty.lanes);
                let own = if *offset == 0 && available == full.lanes {
                    var
                } else if available == 0 {
                    // Wholly past them (the high register of a padded pair): zeros.
                    return Ok(Rc::new(Expr::constant(*ty, vec![0])));
                } else {
                    Rc::new(Expr {
                        op: Op::Slice {
                            start: *offset,
                            stride: 1,
                            lanes: available,
                        },
                        ty: ty.with_lanes(available),
                        args: vec![var],
                    })
                };
                if available == ty.lanes {
                    own
                } else {
                    let zeros = Expr::constant(ty.with_lanes(ty.lanes - available), vec![0]);
                    Rc::new(Expr::build(Op::Concat, vec![own, Rc::new(zeros)]).map_err(wrong)?)
                }
            }
            Node::Const { ty, value } => {
                Rc::new(Expr::constant(*ty, vec![lane_bits(ty.elem, *value)]))
            }
            Node::Literal { ty, values } => Rc::new(Expr::constant(
                *ty,
                values.iter().map(|v| lane_bits(ty.elem, *v)).collect(),
            )),
            Node::Instr { index, args } => {
                let ins = &catalog.instructions[*index];
                let mut map = HashMap::new();
                for (op, a) in ins.operands.iter().zip(args) {
                    let e = a.to_expr(catalog, inputs)?;
                    if e.ty != op.ty {
                        return Err(wrong(format!(
                            "{} operand {} is {}, given {}",
                            ins.name, op.name, op.ty, e.ty
                        )));
                    }
                    map.insert(op.name.clone(), e);
                }
                ins.semantics.substitute(&map)
            }
            Node::Reinterpret { ty, arg } => Rc::new(
                Expr::build(Op::Bitcast(ty.elem), vec![arg.to_expr(catalog, inputs)?])
                    .map_err(wrong)?,
            ),
            Node::Nonzero { arg, .. } => Rc::new(
                Expr::build(Op::Cast(Elem::Bool), vec![arg.to_expr(catalog, inputs)?])
                    .map_err(wrong)?,
            ),
            Node::Spread { ty, arg } => {
                let arg = arg.to_expr(catalog, inputs)?;
                let from = arg.ty.lanes;
                if from == 0 || !ty.lanes.is_multiple_of(from) {
                    return Err(wrong(format!("{} cannot spread over {ty}", arg.ty)));
                }
                let repeat = ty.lanes / from;
                let lanes = (0..ty.lanes).map(|l| l / repeat).collect();
                Rc::new(Expr::build(Op::Shuffle(lanes), vec![arg]).map_err(wrong)?)
            }
            Node::Parts(parts) => {
                let args = parts
                    .iter()
                    .map(|p| p.to_expr(catalog, inputs))
                    .collect::<Result<Vec<_>>>()?;
                Rc::new(Expr::build(Op::Concat, args).map_err(wrong)?)
            }
            Node::Scalar { op, args, .. } => {
                let args = args
                    .iter()
                    .map(|a| a.to_expr(catalog, inputs))
                    .collect::<Result<Vec<_>>>()?;
                Rc::new(Expr::build(op.clone(), args).map_err(wrong)?)
            }
            Node::Lanes { ty, offset, arg } => Rc::new(
                Expr::build(
                    Op::Slice {
                        start: *offset,
                        stride: 1,
                        lanes: ty.lanes,
                    },
                    vec![arg.to_expr(catalog, inputs)?],
                )
                .map_err(wrong)?,
            ),
        })
    }
}
