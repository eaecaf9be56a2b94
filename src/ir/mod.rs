//! The typed vector IR: types, expressions, the s-expression text form, the Halide-style infix
//! form and their elaboration into typed trees.

pub mod elaborate;
pub mod expr;
pub mod forms;
pub mod halide;
pub mod limits;
pub mod meta;
pub mod print;
pub mod range;
pub mod sexpr;
pub mod types;

pub use elaborate::{Macro, Macros, Scope};
pub use expr::{Expr, Op};
pub use types::{Elem, VecType};
