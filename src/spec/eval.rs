//! Running an instruction on lane values given as text (`isadb eval`): one argument per
//! operand, a single value (a splat) or one per lane.

use super::{Instruction, Operand};
use crate::error::{Error, Result};
use crate::ir::forms::parse_expression;
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::{Expr, Macros, Op, Scope};
use crate::semantics::{eval, Env, Value};
use std::collections::HashMap;
use std::rc::Rc;

impl Instruction {
    /// The instruction's result on the operand values in `values` (one text per operand).
    pub fn eval_text(&self, values: &[String]) -> Result<Value> {
        if values.len() != self.operands.len() {
            let names: Vec<String> = self
                .operands
                .iter()
                .map(|o| format!("{}: {}", o.name, o.ty))
                .collect();
            return Err(Error::Usage(format!(
                "{} takes {} operands ({}), got {}",
                self.name,
                self.operands.len(),
                names.join(", "),
                values.len()
            )));
        }
        let mut env = Env::new();
        for (op, text) in self.operands.iter().zip(values) {
            env.insert(op.name.clone(), operand_value(op, text)?);
        }
        eval(&self.semantics, &env)
    }

    /// The values of the immediate operands given as text (one per immediate, in operand
    /// order), as the C call passes them.
    pub fn immediate_values(&self, values: &[String]) -> Result<Vec<i128>> {
        let imms = self.operands.iter().filter(|o| o.imm.is_some());
        imms.zip(values)
            .map(|(op, text)| {
                let v = operand_value(op, text)?;
                Ok(crate::semantics::value::as_int(op.ty.elem, v.lanes[0]))
            })
            .collect()
    }

    /// The semantics with each immediate operand replaced by its value in `values` (one text
    /// per immediate, in operand order): what the instruction computes at those immediates,
    /// over its other operands.
    pub fn at_immediates(&self, values: &[String]) -> Result<Rc<Expr>> {
        let imms: Vec<&Operand> = self.operands.iter().filter(|o| o.imm.is_some()).collect();
        if values.len() != imms.len() {
            let names: Vec<String> = imms
                .iter()
                .map(|o| {
                    let (lo, hi) = o.imm.unwrap_or_default();
                    format!("{} in {lo}..={hi}", o.name)
                })
                .collect();
            return Err(Error::Usage(format!(
                "{} takes {} immediate{} ({}), got {} --imm",
                self.name,
                imms.len(),
                if imms.len() == 1 { "" } else { "s" },
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                },
                values.len()
            )));
        }
        let mut map = HashMap::new();
        for (op, text) in imms.into_iter().zip(values) {
            let value = operand_value(op, text)?;
            map.insert(op.name.clone(), Rc::new(Expr::constant(op.ty, value.lanes)));
        }
        fold_constants(&self.semantics.substitute(&map))
    }
}

/// `e` with every subtree over constants alone (immediates substituted, lane indices computed
/// from them) replaced by its value, as selection needs shuffle controls and shift amounts.
fn fold_constants(e: &Rc<Expr>) -> Result<Rc<Expr>> {
    if matches!(e.op, Op::Var(_) | Op::Const(_)) {
        return Ok(e.clone());
    }
    let args = e
        .args
        .iter()
        .map(fold_constants)
        .collect::<Result<Vec<_>>>()?;
    let folded = Rc::new(Expr {
        op: e.op.clone(),
        ty: e.ty,
        args,
    });
    if folded.args.iter().all(|a| matches!(a.op, Op::Const(_))) {
        let value = eval(&folded, &Env::new())?;
        return Ok(Rc::new(Expr::constant(value.ty, value.lanes)));
    }
    Ok(folded)
}

/// Parses one operand's lanes: a single value (splat) or one per lane, separated by commas (or
/// by spaces, when every word is a number). A value is an integer constant in either expression
/// form: `-1`, `0x7f`, `(1 << 7) - 1`.
fn operand_value(op: &Operand, text: &str) -> Result<Value> {
    let mut parts: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if let [one] = parts[..] {
        let words: Vec<&str> = one.split_whitespace().collect();
        let number = |w: &&str| read_one(w, "").is_ok_and(|s| matches!(s.kind, SKind::Int(_)));
        if words.len() > 1 && words.iter().all(number) {
            parts = words;
        }
    }
    let n = op.ty.lanes as usize;
    if parts.len() != 1 && parts.len() != n {
        return Err(Error::Usage(format!(
            "operand {} ({}) needs 1 or {n} values, got {}",
            op.name,
            op.ty,
            parts.len()
        )));
    }
    let source = format!("operand {}", op.name);
    let lane = |p: &str| -> Result<u128> {
        let (value, _) = parse_expression(p, &source)?;
        if let (Some((lo, hi)), SKind::Int(v)) = (op.imm, &value.kind) {
            if !(lo..=hi).contains(v) {
                return Err(Error::Usage(format!(
                    "operand {} is an immediate in {lo}..={hi}, got {v}",
                    op.name
                )));
            }
        }
        let loc = value.loc.clone();
        let sym = |name: &str| SExpr {
            kind: SKind::Sym(name.into()),
            loc: loc.clone(),
        };
        let constant = SExpr {
            kind: SKind::List(vec![sym("const"), sym(op.ty.elem.name()), value]),
            loc: loc.clone(),
        };
        let macros = Macros::default();
        match &Scope::new(&macros).expr(&constant)?.op {
            Op::Const(v) => Ok(v[0]),
            _ => unreachable!("const elaborates to a constant"),
        }
    };
    let lanes = parts.iter().map(|p| lane(p)).collect::<Result<Vec<_>>>()?;
    let lanes = if lanes.len() == 1 {
        vec![lanes[0]; n]
    } else {
        lanes
    };
    Ok(Value::new(op.ty, lanes))
}
