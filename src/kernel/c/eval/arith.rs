//! Arithmetic: float operations build terms simplified as Rosette does (literals folded, `x + 0`,
//! `x * 1`, `x * 0`, sums and products flattened and rebuilt right-nested, `a - b` as
//! `a + (neg b)`); integer operations are exact and checked.

use super::{err, Eval, SPINE_LIMIT};
use crate::error::{Location, Result};
use crate::kernel::term::{Id, Op};

impl Eval<'_> {
    pub(super) fn neg(&mut self, x: Id) -> Id {
        match self.dag.op(x) {
            Op::Num(n) => self.dag.num(-n),
            Op::Neg => self.dag.args(x)[0],
            _ => self.dag.add(Op::Neg, &[x]),
        }
    }

    /// The operands of a flattened sum or product, left to right; at most [`SPINE_LIMIT`].
    fn spine(&self, op: Op, x: Id, out: &mut Vec<Id>, loc: &Location) -> Result<()> {
        let mut pending = vec![x];
        while let Some(x) = pending.pop() {
            if self.dag.op(x) == op {
                let args = self.dag.args(x);
                pending.extend([args[1], args[0]]);
            } else if out.len() == SPINE_LIMIT {
                return Err(err(
                    loc,
                    format!(
                        "a {} of more than {SPINE_LIMIT} operands (isadb's limit)",
                        if op == Op::Add { "sum" } else { "product" }
                    ),
                ));
            } else {
                out.push(x);
            }
        }
        Ok(())
    }

    pub(super) fn float_op(&mut self, op: &str, a: Id, b: Id, loc: &Location) -> Result<Id> {
        let (na, nb) = (self.dag.op(a), self.dag.op(b));
        Ok(match op {
            "+" | "-" => {
                let b = if op == "-" { self.neg(b) } else { b };
                match (na, self.dag.op(b)) {
                    (Op::Num(x), Op::Num(y)) => self.dag.num(x + y),
                    (Op::Num(0), _) => b,
                    (_, Op::Num(0)) => a,
                    _ => {
                        let mut terms = Vec::new();
                        self.spine(Op::Add, a, &mut terms, loc)?;
                        self.spine(Op::Add, b, &mut terms, loc)?;
                        self.nest(Op::Add, &terms)
                    }
                }
            }
            "*" => match (na, nb) {
                (Op::Num(x), Op::Num(y)) => self.dag.num(x * y),
                (Op::Num(0), _) | (_, Op::Num(0)) => self.dag.num(0),
                (Op::Num(1), _) => b,
                (_, Op::Num(1)) => a,
                _ => {
                    let mut factors = Vec::new();
                    self.spine(Op::Mul, a, &mut factors, loc)?;
                    self.spine(Op::Mul, b, &mut factors, loc)?;
                    self.nest(Op::Mul, &factors)
                }
            },
            "/" => match (na, nb) {
                (_, Op::Num(0)) => return Err(err(loc, "division by the literal zero")),
                (Op::Num(x), Op::Num(y)) if x % y == 0 => self.dag.num(x / y),
                (_, Op::Num(1)) => a,
                _ => self.dag.add(Op::Div, &[a, b]),
            },
            other => {
                return Err(err(
                    loc,
                    format!("'{other}' on floats is outside the kernel subset"),
                ))
            }
        })
    }

    /// Operands joined right-nested: `(op a (op b c))`.
    fn nest(&mut self, op: Op, items: &[Id]) -> Id {
        let (last, init) = items.split_last().expect("at least one operand");
        init.iter()
            .rev()
            .fold(*last, |acc, &x| self.dag.add(op, &[x, acc]))
    }
}

pub(super) fn int_op(op: &str, a: i64, b: i64, loc: &Location) -> Result<i64> {
    let overflow = || err(loc, "integer overflow");
    Ok(match op {
        "+" => a.checked_add(b).ok_or_else(overflow)?,
        "-" => a.checked_sub(b).ok_or_else(overflow)?,
        "*" => a.checked_mul(b).ok_or_else(overflow)?,
        "/" | "%" if b == 0 => return Err(err(loc, "integer division by zero")),
        "/" => a / b,
        "%" => a % b,
        "<" => (a < b) as i64,
        "<=" => (a <= b) as i64,
        ">" => (a > b) as i64,
        ">=" => (a >= b) as i64,
        "==" => (a == b) as i64,
        "!=" => (a != b) as i64,
        _ => {
            return Err(err(
                loc,
                format!("'{op}' on integers is outside the kernel subset"),
            ))
        }
    })
}
