//! `port X --target T --check SEQ`: a translation of X written by hand, as a sequence of T's
//! intrinsics over X's operands, proven equal to X's semantics by z3 or refuted with the
//! inputs on which the two differ. A proven one is reported like a selection (steps, cost, C,
//! `--run`).
//!
//! The sequence is an s-expression: an operand of X by its name; `(INTRINSIC arg ...)`, an
//! instruction of T by intrinsic or name with its operands in order (an integer is an
//! immediate, or a constant in every lane); `(lanes X FIRST COUNT)`, lanes of a value;
//! `(concat X Y ...)`. A value whose type differs from the operand it is given to but has as
//! many bits is read as that type, as C's casts between vector types do; a mask given where X
//! has bool lanes is read as the lanes where it is not zero.

use crate::error::Result;
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::select::catalog::Catalog;
use crate::select::node::input_types;
use crate::select::term::lane_bits;
use crate::select::{Compiled, Node, Proof};
use crate::semantics::{prove_equivalent, Verdict};
use crate::spec::Instruction;
use serde::Serialize;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

const CHECK_TIMEOUT_MS: u32 = 60_000;

/// z3's verdict on a candidate.
pub enum Checked {
    /// Equal to X on every input: the candidate as a selection.
    Proven(Box<Compiled>),
    /// Different on the inputs of the counterexample.
    Refuted(Refutation),
    /// z3 gave up.
    Unknown(String),
}

/// Inputs on which the candidate and X differ, with both results.
#[derive(Debug, Serialize)]
pub struct Refutation {
    /// Each operand's lanes.
    pub inputs: Vec<(String, String)>,
    /// X's result on them.
    pub expected: String,
    /// The candidate's.
    pub actual: String,
}

/// Reads `text`, a candidate translation of `name` (whose semantics at its immediates is
/// `input`) into the catalog's target, and proves it equal to `input` or refutes it.
pub fn check(name: &str, input: Rc<Expr>, text: &str, catalog: &Catalog) -> Result<Checked> {
    let started = Instant::now();
    let s = read_one(text, "--check")?;
    let reader = Reader {
        catalog,
        operands: input_types(&input),
    };
    let read = reader.node(&s)?;
    let root = reader.fit(read, input.ty, &s, "the result")?;
    let selected = root.to_expr(catalog, &reader.operands)?;
    let read_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    Ok(
        match prove_equivalent(&input, &selected, None, CHECK_TIMEOUT_MS)? {
            Verdict::Proven { .. } => Checked::Proven(Box::new(Compiled {
                source: name.to_string(),
                cost: root.cost(catalog),
                input,
                root,
                program: None,
                select_ms: read_ms,
                validate_ms: started.elapsed().as_secs_f64() * 1e3,
                cached: false,
                proof: Some(Proof::Z3),
            })),
            Verdict::Counterexample {
                inputs, lhs, rhs, ..
            } => Checked::Refuted(Refutation {
                inputs,
                expected: lhs,
                actual: rhs,
            }),
            Verdict::Unknown { reason, .. } => Checked::Unknown(reason),
        },
    )
}

struct Reader<'a> {
    catalog: &'a Catalog,
    /// X's operands the semantics reads, with their types.
    operands: HashMap<String, VecType>,
}

impl Reader<'_> {
    fn node(&self, s: &SExpr) -> Result<Rc<Node>> {
        if let Some(name) = s.sym() {
            let ty = self.operands.get(name).ok_or_else(|| {
                let mut known: Vec<&str> = self.operands.keys().map(String::as_str).collect();
                known.sort();
                s.err(format!(
                    "unknown operand '{name}' (the instruction reads {})",
                    known.join(", ")
                ))
            })?;
            return Ok(Rc::new(Node::Input {
                name: name.to_string(),
                ty: *ty,
                offset: 0,
            }));
        }
        let (Some(head), Some(items)) = (s.head(), s.list()) else {
            return Err(s.err(
                "expected an operand, (INTRINSIC arg ...), (lanes X FIRST COUNT) or (concat X ...)",
            ));
        };
        let args = &items[1..];
        match head {
            "lanes" => {
                let [x, first, count] = args else {
                    return Err(s.err("(lanes X FIRST COUNT) takes three arguments"));
                };
                let arg = self.node(x)?;
                let ty = arg.ty(self.catalog);
                let (first, count) = (int(first)?, int(count)?);
                let end = first.checked_add(count).unwrap_or(i128::MAX);
                if count < 1 || first < 0 || end > i128::from(ty.lanes) {
                    return Err(s.err(format!("lanes {first}..{end} of a {ty}")));
                }
                let (offset, lanes) = (first as u32, count as u32);
                Ok(Rc::new(match &*arg {
                    Node::Input {
                        name, offset: at, ..
                    } => Node::Input {
                        name: name.clone(),
                        ty: ty.with_lanes(lanes),
                        offset: at + offset,
                    },
                    _ => Node::Lanes {
                        ty: ty.with_lanes(lanes),
                        offset,
                        arg,
                    },
                }))
            }
            "concat" => {
                let parts = args
                    .iter()
                    .map(|a| self.node(a))
                    .collect::<Result<Vec<_>>>()?;
                let Some(first) = parts.first().map(|p| p.ty(self.catalog)) else {
                    return Err(s.err("(concat X Y ...) takes at least one value"));
                };
                if let Some(other) = parts
                    .iter()
                    .map(|p| p.ty(self.catalog))
                    .find(|t| t.elem != first.elem)
                {
                    return Err(s.err(format!("concat of {first} and {other}")));
                }
                Ok(Rc::new(Node::Parts(parts)))
            }
            _ => self.instruction(s, head, args),
        }
    }

    fn instruction(&self, s: &SExpr, head: &str, args: &[SExpr]) -> Result<Rc<Node>> {
        let named = |i: &Instruction| i.intrinsic.as_deref() == Some(head) || i.name == head;
        let instructions = &self.catalog.instructions;
        let Some(index) = instructions.iter().position(named) else {
            return match self.catalog.free.iter().find(|i| named(i)) {
                Some(free) => self.free(s, free, args),
                None => Err(s.err(format!(
                    "'{head}' is no instruction of {}",
                    self.catalog.target.name
                ))),
            };
        };
        let ins = &instructions[index];
        if args.len() != ins.operands.len() {
            return Err(s.err(format!(
                "{head} takes {} operands, given {}",
                ins.operands.len(),
                args.len()
            )));
        }
        let mut nodes = Vec::new();
        for (op, a) in ins.operands.iter().zip(args) {
            let what = format!("operand {} of {head}", op.name);
            let node = match (&a.kind, op.imm) {
                (SKind::Int(v), Some((lo, hi))) if !(lo..=hi).contains(v) => {
                    return Err(a.err(format!("{what} is an immediate in {lo}..={hi}, given {v}")))
                }
                (SKind::Int(v), _) if !fits(op.ty.elem, *v) => {
                    return Err(a.err(format!("{what} has {} lanes, given {v}", op.ty.elem)))
                }
                (SKind::Int(v), _) => {
                    let value = lane_bits(op.ty.elem, *v as i64);
                    Rc::new(Node::Const {
                        ty: op.ty,
                        value: crate::select::term::lane_value(op.ty.elem, value),
                    })
                }
                (_, Some(_)) => return Err(a.err(format!("{what} is an immediate: an integer"))),
                _ => {
                    let n = self.node(a)?;
                    self.fit(n, op.ty, a, &what)?
                }
            };
            nodes.push(node);
        }
        Ok(Rc::new(Node::Instr { index, args: nodes }))
    }

    /// An instruction that emits nothing, as what it is: its operand's bits read as its result
    /// (a reinterpretation) or its operand's low lanes (a cast to a narrower register).
    fn free(&self, s: &SExpr, ins: &Instruction, args: &[SExpr]) -> Result<Rc<Node>> {
        let ([op], [a]) = (ins.operands.as_slice(), args) else {
            return Err(s.err(format!("{} takes one operand", ins.name)));
        };
        let arg = self.node(a)?;
        let arg = self.fit(
            arg,
            op.ty,
            a,
            &format!("operand {} of {}", op.name, ins.name),
        )?;
        let low = matches!(
            ins.semantics.op,
            Op::Slice {
                start: 0,
                stride: 1,
                ..
            }
        );
        Ok(Rc::new(if ins.semantics.copies_an_operand() {
            Node::Reinterpret {
                ty: ins.result,
                arg,
            }
        } else if low {
            Node::Lanes {
                ty: ins.result,
                offset: 0,
                arg,
            }
        } else {
            return Err(s.err(format!("{} computes something", ins.name)));
        }))
    }

    /// `node` given where a `want` is read: itself, its bits read as `want`, or the lanes of
    /// a mask that are not zero.
    fn fit(&self, node: Rc<Node>, want: VecType, s: &SExpr, what: &str) -> Result<Rc<Node>> {
        let ty = node.ty(self.catalog);
        if ty == want {
            return Ok(node);
        }
        let bool_of_mask =
            want.elem == Elem::Bool && ty.elem != Elem::Bool && ty.lanes == want.lanes;
        if bool_of_mask {
            return Ok(Rc::new(Node::Nonzero {
                ty: want,
                arg: node,
            }));
        }
        if ty.bits() == want.bits() && ty.elem != Elem::Bool && want.elem != Elem::Bool {
            return Ok(Rc::new(Node::Reinterpret {
                ty: want,
                arg: node,
            }));
        }
        Err(s.err(format!("{what} is {want}, given {ty}")))
    }
}

/// Whether `v` is a value of integer lanes of `elem`, read as signed or unsigned.
fn fits(elem: Elem, v: i128) -> bool {
    let bits = elem.bits();
    let (Some(low), Some(high)) = (1i128.checked_shl(bits - 1), 1i128.checked_shl(bits)) else {
        return elem.is_int();
    };
    elem.is_int() && v >= -low && (high < 0 || v < high)
}

fn int(s: &SExpr) -> Result<i128> {
    match s.kind {
        SKind::Int(v) => Ok(v),
        _ => Err(s.err("expected an integer")),
    }
}
