//! Runs the generated egglog program, reads the extracted term back as a tree of selected
//! instructions, and turns that tree into IR for translation validation.

use super::catalog::Catalog;
use super::program::{instruction_index, Program};
use super::term::{lane_bits, parse_type_name};
use crate::error::{Error, Result};
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::{Expr, Op, VecType};
use std::collections::HashMap;
use std::rc::Rc;

/// A node of the selected program.
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
    /// An instruction applied to its operands, in operand order.
    Instr { index: usize, args: Vec<Rc<Node>> },
    /// The same bits read as another type of the same width.
    Reinterpret { ty: VecType, arg: Rc<Node> },
    /// The result computed in consecutive parts (or a register pair assembled from two).
    Parts(Vec<Rc<Node>>),
    /// Lanes `[offset, offset + ty.lanes)` of a computed value: one register of a pair, or
    /// the low part of a register.
    Lanes {
        ty: VecType,
        offset: u32,
        arg: Rc<Node>,
    },
}

/// Runs the program; the extracted term as text.
pub fn run(program: &Program) -> Result<String> {
    let mut egraph = egglog::EGraph::default();
    let outputs = egraph
        .parse_and_run_program(None, &program.text)
        .map_err(|e| Error::data("egglog", one_line(&e.to_string())))?;
    outputs
        .iter()
        .rev()
        .find_map(|o| match o {
            egglog::CommandOutput::ExtractBest(dag, _, term) => Some(dag.to_string(*term)),
            _ => None,
        })
        .ok_or_else(|| Error::data("egglog", "the program extracted nothing"))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads an extracted term; an IR operator left in it means no instruction covers it.
pub fn read_term(text: &str, catalog: &Catalog) -> Result<Rc<Node>> {
    let s = read_one(text, "extracted term")?;
    let index = instruction_index(catalog);
    node(&s, &index, catalog)
}

fn node(s: &SExpr, index: &HashMap<String, usize>, catalog: &Catalog) -> Result<Rc<Node>> {
    let items = s.list().unwrap_or_default();
    let head = s.head().unwrap_or("");
    let str_at = |i: usize| match items.get(i).map(|x| &x.kind) {
        Some(SKind::Str(t)) => Some(t.clone()),
        _ => None,
    };
    let int_at = |i: usize| match items.get(i).map(|x| &x.kind) {
        Some(SKind::Int(v)) => Some(*v as i64),
        _ => None,
    };
    let ty_at = |i: usize| str_at(i).as_deref().and_then(parse_type_name);
    let bad = || Error::data("extracted term", format!("unexpected {s}"));
    let args = |from: usize| -> Result<Vec<Rc<Node>>> {
        items[from..]
            .iter()
            .map(|a| node(a, index, catalog))
            .collect()
    };
    Ok(Rc::new(match head {
        "Out" => return node(items.get(1).ok_or_else(bad)?, index, catalog),
        "OutPair" => Node::Parts(args(1)?),
        "Pair" => Node::Parts(args(2)?),
        "Lanes" => {
            let ty = ty_at(1).ok_or_else(bad)?;
            let offset = int_at(2).ok_or_else(bad)? as u32;
            let arg = node(items.get(3).ok_or_else(bad)?, index, catalog)?;
            match &*arg {
                Node::Input {
                    name, offset: at, ..
                } => Node::Input {
                    name: name.clone(),
                    ty,
                    offset: at + offset,
                },
                _ => Node::Lanes { ty, offset, arg },
            }
        }
        "Var" => Node::Input {
            name: str_at(2).ok_or_else(bad)?,
            ty: ty_at(1).ok_or_else(bad)?,
            offset: 0,
        },
        "Part" => Node::Input {
            name: str_at(2).ok_or_else(bad)?,
            ty: ty_at(1).ok_or_else(bad)?,
            offset: int_at(3).ok_or_else(bad)? as u32,
        },
        "Reinterpret" => Node::Reinterpret {
            ty: ty_at(1).ok_or_else(bad)?,
            arg: node(items.get(2).ok_or_else(bad)?, index, catalog)?,
        },
        "Const" => Node::Const {
            ty: ty_at(1).ok_or_else(bad)?,
            value: int_at(2).ok_or_else(bad)?,
        },
        h => match index.get(h) {
            Some(&i) => Node::Instr {
                index: i,
                args: args(1)?,
            },
            None => {
                let ty = str_at(1).unwrap_or_default();
                return Err(Error::Usage(format!(
                    "no instruction sequence on {} computes {} at {ty} (in {s})",
                    catalog.target.name,
                    h.to_lowercase()
                )));
            }
        },
    }))
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
            | Node::Reinterpret { ty, .. }
            | Node::Lanes { ty, .. } => *ty,
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
            Node::Input { .. } | Node::Const { .. } => &[],
            Node::Instr { args, .. } => args,
            Node::Parts(parts) => parts,
            Node::Reinterpret { arg, .. } | Node::Lanes { arg, .. } => std::slice::from_ref(arg),
        }
    }

    /// Sum of the costs of the distinct instructions (a shared subterm is computed once).
    pub fn cost(&self, catalog: &Catalog) -> f64 {
        let mut computed = Vec::new();
        self.add_cost(catalog, &mut computed)
    }

    fn add_cost<'a>(&'a self, catalog: &Catalog, computed: &mut Vec<&'a Node>) -> f64 {
        match self {
            Node::Input { .. } | Node::Const { .. } => 0.0,
            Node::Instr { .. } if computed.contains(&self) => 0.0,
            Node::Instr { index, args } => {
                computed.push(self);
                catalog.instructions[*index].cost
                    + args
                        .iter()
                        .map(|a| a.add_cost(catalog, computed))
                        .sum::<f64>()
            }
            Node::Reinterpret { arg, .. } | Node::Lanes { arg, .. } => {
                arg.add_cost(catalog, computed)
            }
            Node::Parts(parts) => parts.iter().map(|p| p.add_cost(catalog, computed)).sum(),
        }
    }

    /// The IR this node computes: instruction semantics with their operands substituted.
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
                if *offset == 0 && *ty == full {
                    var
                } else {
                    Rc::new(Expr {
                        op: Op::Slice {
                            start: *offset,
                            stride: 1,
                            lanes: ty.lanes,
                        },
                        ty: *ty,
                        args: vec![var],
                    })
                }
            }
            Node::Const { ty, value } => {
                Rc::new(Expr::constant(*ty, vec![lane_bits(ty.elem, *value)]))
            }
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
            Node::Parts(parts) => {
                let args = parts
                    .iter()
                    .map(|p| p.to_expr(catalog, inputs))
                    .collect::<Result<Vec<_>>>()?;
                Rc::new(Expr::build(Op::Concat, args).map_err(wrong)?)
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
