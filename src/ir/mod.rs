//! The typed vector IR: types, expressions, the s-expression text form and its elaboration.

pub mod expr;
pub mod forms;
pub mod halide;
pub mod meta;
pub mod parse;
pub mod print;
pub mod sexpr;
pub mod types;

pub use expr::{Expr, Op};
pub use parse::{Macro, Macros, Scope};
pub use types::{Elem, VecType};
