//! The C subset's syntax tree (parsed by `parse/`): global `const` scalars and
//! functions over `float` and `int` scalars, fixed-size `float` arrays (sized by integer
//! constant expressions) and `float` pointers; declarations (arrays with brace initializers),
//! assignments (`=`, `+=`, ..., `++`), `for` loops, `if`/`else`, blocks, `return`; expressions
//! with `?:`, `|| &&`, comparisons, `+ - * / %`, unary `- !`, `&` of an element, calls,
//! indexing and `(float)`/`(int)` casts (a `(float *)` cast is its operand).

use crate::error::Location;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Void,
    Int,
    Float,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub ty: Ty,
    pub name: String,
    /// Array dimensions (`None` for `[]` or a pointer); empty for a scalar.
    pub dims: Vec<Option<usize>>,
    /// Declared `const` (the elements, for an array or pointer).
    pub constant: bool,
    pub loc: Location,
}

#[derive(Clone, Debug)]
pub struct Func {
    pub ret: Ty,
    pub name: String,
    pub params: Vec<Param>,
    pub body: Option<Vec<Stmt>>,
    /// A body outside the subset, skipped: where and why, the error if the kernel runs it.
    pub unparsed: Option<(Location, String)>,
    pub loc: Location,
}

impl Func {
    /// Whether the function has a body (parsed or not), not only a prototype.
    pub fn defined(&self) -> bool {
        self.body.is_some() || self.unparsed.is_some()
    }
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Decl {
        ty: Ty,
        name: String,
        /// A `float *` variable (its value is an array: an allocation, an element's address).
        pointer: bool,
        /// Array dimensions; `None` for `[]`, sized by the initializer.
        dims: Vec<Option<Expr>>,
        init: Option<Expr>,
        loc: Location,
    },
    /// `target op= value` (`op` is "=", "+=", ...); `x++` is `x += 1`.
    Assign {
        target: Expr,
        op: &'static str,
        value: Expr,
        loc: Location,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Box<Stmt>,
        loc: Location,
    },
    If {
        cond: Expr,
        then: Box<Stmt>,
        otherwise: Option<Box<Stmt>>,
    },
    Block(Vec<Stmt>),
    Return(Option<Expr>),
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    Float(String),
    Var(String),
    Index(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(Ty, Box<Expr>),
    /// `&x[i]`: the array from that element on.
    AddressOf(Box<Expr>),
    /// A brace initializer `{a, b, {c, d}}` (of an array declaration only).
    List(Vec<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: Location,
}

/// A file-scope `const int N = 4;` or `const float ALPHA = 0.5f;`.
#[derive(Clone, Debug)]
pub struct Global {
    pub ty: Ty,
    pub name: String,
    pub init: Expr,
    pub loc: Location,
}

/// A translation unit: its global constants and its functions, each in file order.
#[derive(Clone, Debug, Default)]
pub struct Unit {
    pub globals: Vec<Global>,
    pub funcs: Vec<Func>,
}
