//! The C front end: a kernel written plainly in a C subset (fixed-size `float` arrays, `for`
//! loops with constant bounds, `if` on loop indices, `+ - * /`, `sqrtf`, the uninterpreted `sgn`,
//! small helper functions) lifted to the `(List ...)` form by symbolic evaluation, as Diospyros
//! does with Rosette: loops unrolled, indices computed, every float a term of the dialect. The
//! kernel is the last `void` function defined; its array parameters that it writes are its
//! outputs (in parameter order, row-major), the others its inputs. Anything outside the subset
//! is a one-line error with line and column.

mod ast;
mod eval;
mod lex;

use super::read::Lifted;
use crate::error::Result;

/// Lifts C source text to the List form.
pub fn lift(text: &str, file: &str) -> Result<Lifted> {
    let toks = lex::lex(text, file)?;
    let funcs = ast::parse(&toks, file)?;
    eval::lift(&funcs, file)
}
