//! Halide-style infix expressions (the syntax of Halide's `simd_op_check` tests) read into the
//! IR's s-expression tree, so the ordinary elaborator types them.
//!
//! * Variables carry their element type as a suffix (`a_u8`, `acc_i32`); the name is kept whole
//!   and typed by the elaborator's implicit lanes.
//! * `u8(e)` is `(cast u8 e)`, `u8_sat(e)` is `(sat-cast u8 e)`.
//! * C operators and precedence; `/` and `%` round as Halide does (toward negative infinity,
//!   non-negative remainder); the IR has no integer division, so the divisor must be a constant:
//!   `e / 2^k` is `(shr e k)`, `e % 2^k` is `(and e 2^k-1)`, and other constants become
//!   `(divide-by e c)` / `(remainder-by e c)`, multiplications by a magic number once `e`'s type
//!   is known (`elaborate/divide.rs`). Literal subexpressions are folded first, so
//!   `e / (1 << 15)` works.
//! * `min max abs select absd reduce_add reduce_max reduce_min clamp`, the casts, and any other call `f(x, ...)`, which
//!   becomes `(f x ...)` so idioms (`widening_add`, `rounding_mul_shr`, ...) are callable by name.

mod lex;
mod lower;
mod parse;
#[cfg(test)]
mod tests;

use super::elaborate::{Macros, Scope};
use super::expr::Expr;
use super::limits::{lanes_message, MAX_LANES};
use super::sexpr::{SExpr, SKind};
use super::types::{Elem, VecType};
use crate::error::{Error, Location, Result};
use lex::{lex, Tok};
use parse::Parser;
use std::collections::HashMap;
use std::rc::Rc;

/// What `x << y` and `x >> y` mean when `y` is not a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shifts {
    /// Halide's: `y` takes `x`'s lane width keeping its signedness, and a negative `y` shifts
    /// the other way (prelude's `halide-shl`, `halide-shr`). Expressions users type.
    Halide,
    /// The IR's `shl` and `shr` (the amount read as unsigned): rule files and synthesized
    /// rules, which are written over the IR.
    Ir,
}

/// Reads one Halide-style expression as a user types it (Halide's shifts); `source` names the
/// text in error locations.
pub fn parse_halide(text: &str, source: &str) -> Result<SExpr> {
    parse_halide_with(text, source, Shifts::Halide)
}

/// Reads one Halide-style expression with the given meaning of shifts by a value.
pub fn parse_halide_with(text: &str, source: &str, shifts: Shifts) -> Result<SExpr> {
    let toks = lex(text, source)?;
    let mut p = Parser::new(toks, shifts);
    let e = p.expr()?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        return Err(Error::parse(
            &t.loc,
            format!("unexpected token {} after the end of the expression", t.tok),
        ));
    }
    Ok(e)
}

/// Parses and elaborates a Halide-style expression whose variables have `lanes` lanes. Operands
/// of `reduce_add(k, e)` have `k` times the lanes of its result, so in
/// `acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))` `acc_u32` has `lanes` lanes and `a_u8`,
/// `b_u8` have `4 * lanes`.
/// Shifts by a value are the IR's (`Shifts::Ir`), and operands of an operator must have one
/// type (no Halide conversions): this reads rule sides, typed templates.
pub fn elaborate_halide(text: &str, source: &str, macros: &Macros, lanes: u32) -> Result<Rc<Expr>> {
    let parsed = parse_halide_with(text, source, Shifts::Ir)?;
    elaborate_typed(&parsed, macros, lanes, &HashMap::new(), false)
}

/// Elaborates a parsed Halide-style expression a user wrote as [`elaborate_halide`] does, but
/// with Halide's conversions between operand types and its types of lone literals, and with
/// variables whose element type is `declared` (`--var z:u16`) rather than carried as a suffix.
pub fn elaborate_parsed(
    s: &SExpr,
    macros: &Macros,
    lanes: u32,
    declared: &HashMap<String, Elem>,
) -> Result<Rc<Expr>> {
    elaborate_typed(s, macros, lanes, declared, true)
}

/// Elaborates a parsed Halide-style expression, with Halide's `conversions` or without.
fn elaborate_typed(
    s: &SExpr,
    macros: &Macros,
    lanes: u32,
    declared: &HashMap<String, Elem>,
    conversions: bool,
) -> Result<Rc<Expr>> {
    let mut uses = HashMap::new();
    var_lanes(s, lanes as u64, declared, &mut uses)?;
    let mut scope = Scope::new(macros);
    scope.implicit_lanes = Some(lanes);
    scope.halide_source = conversions.then(|| s.loc.file.clone());
    for (name, (n, _)) in uses {
        let elem = declared
            .get(&name)
            .copied()
            .or_else(|| Elem::of_variable(&name))
            .expect("only typed names are collected");
        scope.bind_var(&name, VecType::new(n as u32, elem));
    }
    scope.expr(s)
}

/// The lane count of every typed variable: `lanes` outside a reduction (`reduce-add`,
/// `reduce-max`, `reduce-min`), times k inside one.
fn var_lanes(
    s: &SExpr,
    lanes: u64,
    declared: &HashMap<String, Elem>,
    out: &mut HashMap<String, (u64, Location)>,
) -> Result<()> {
    match &s.kind {
        SKind::Sym(name) if Elem::of_variable(name).is_some() || declared.contains_key(name) => {
            if lanes > MAX_LANES as u64 {
                return Err(s.err(lanes_message(lanes, &format!("'{name}'"))));
            }
            match out.get(name) {
                Some((n, at)) if *n != lanes => Err(Error::ty(
                    &s.loc,
                    format!(
                        "'{name}' has {lanes} lanes here but {n} at {}:{} (operands of reduce_add(k, e), reduce_max and reduce_min have k times the lanes of its result)",
                        at.line, at.col
                    ),
                )),
                Some(_) => Ok(()),
                None => {
                    out.insert(name.clone(), (lanes, s.loc.clone()));
                    Ok(())
                }
            }
        }
        SKind::List(items) => {
            if let (Some("reduce-add" | "reduce-max" | "reduce-min"), [_, k, x]) =
                (s.head(), items.as_slice())
            {
                if let SKind::Int(k) = k.kind {
                    if k > 0 && k <= u32::MAX as i128 {
                        return var_lanes(x, lanes.saturating_mul(k as u64), declared, out);
                    }
                }
            }
            items
                .iter()
                .skip(1)
                .try_for_each(|i| var_lanes(i, lanes, declared, out))
        }
        _ => Ok(()),
    }
}
