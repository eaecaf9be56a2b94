//! The IR as egglog terms. Every node carries its type as a string (`"u16x8"`), so rules
//! instantiated at one type and lane count match only nodes of that type; constants are one i64
//! lane value broadcast to every lane.
//!
//! Patterns come from rule sides and instruction semantics: variables are wildcards (`w_x`, with
//! a `type-of` check), constant wildcards (`c0`) bind the lane value of a `Const` node, and
//! constant arithmetic over them becomes i64 arithmetic in the rule's conditions and actions.

use crate::ir::print::sign_extend;
use crate::ir::{Elem, Expr, Op, VecType};
use crate::rules::syntax::is_constant_wildcard;
use crate::semantics::{eval, Env};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// An e-graph constructor for an IR operator: name, i64 parameters, expression arguments.
pub struct Constructor {
    pub name: &'static str,
    pub params: usize,
    pub args: usize,
}

const fn c(name: &'static str, params: usize, args: usize) -> Constructor {
    Constructor { name, params, args }
}

/// Every operator constructor (besides `Var` and `Const`).
pub const CONSTRUCTORS: [Constructor; 34] = [
    c("Add", 0, 2),
    c("Sub", 0, 2),
    c("Mul", 0, 2),
    c("Div", 0, 2),
    c("Neg", 0, 1),
    c("And", 0, 2),
    c("Or", 0, 2),
    c("Xor", 0, 2),
    c("Not", 0, 1),
    c("Shl", 0, 2),
    c("Shr", 0, 2),
    c("Min", 0, 2),
    c("Max", 0, 2),
    c("Abs", 0, 1),
    c("Popcount", 0, 1),
    c("Clz", 0, 1),
    c("Sqrt", 0, 1),
    c("Sgn", 0, 1),
    c("Eq", 0, 2),
    c("Ne", 0, 2),
    c("Lt", 0, 2),
    c("Le", 0, 2),
    c("Gt", 0, 2),
    c("Ge", 0, 2),
    c("Select", 0, 3),
    c("Cast", 0, 1),
    c("SatCast", 0, 1),
    c("Bitcast", 0, 1),
    c("Broadcast", 0, 1),
    c("Concat", 0, 2),
    c("Interleave", 0, 2),
    c("Slice", 2, 1),
    c("ReduceAdd", 0, 1),
    c("Lookup", 0, 2),
];

/// The constructor and i64 parameters of an operator; None for what the e-graph does not hold.
pub fn constructor(op: &Op, args: usize) -> Option<(&'static str, Vec<i64>)> {
    let name = match op {
        Op::Slice { start, stride, .. } => {
            return Some(("Slice", vec![*start as i64, *stride as i64]))
        }
        Op::Concat | Op::Interleave if args != 2 => return None,
        Op::Var(_) | Op::Const(_) | Op::Shuffle(_) => return None,
        Op::Cast(_) => "Cast",
        Op::SatCast(_) => "SatCast",
        Op::Bitcast(_) => "Bitcast",
        Op::Broadcast(_) => "Broadcast",
        Op::ReduceAdd(_) => "ReduceAdd",
        Op::Concat => "Concat",
        Op::Interleave => "Interleave",
        Op::Lookup => "Lookup",
        Op::Select => "Select",
        other => {
            let n = other.name();
            CONSTRUCTORS
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(n))?
                .name
        }
    };
    Some((name, vec![]))
}

/// `<16 x u8>` as `u8x16`.
pub fn type_name(t: VecType) -> String {
    format!("{}x{}", t.elem, t.lanes)
}

/// Parses `u8x16`.
pub fn parse_type_name(s: &str) -> Option<VecType> {
    let (e, n) = s.rsplit_once('x')?;
    Some(VecType::new(n.parse().ok()?, Elem::parse(e)?))
}

/// A lane's bits as the i64 the e-graph stores (sign-extended for signed types).
pub fn lane_value(elem: Elem, bits: u128) -> i64 {
    if elem.is_signed() {
        sign_extend(bits, elem.bits()) as i64
    } else {
        bits as i64
    }
}

/// The lane bits of an e-graph constant.
pub fn lane_bits(elem: Elem, v: i64) -> u128 {
    (v as i128 as u128) & elem.mask()
}

fn has_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |n| found |= matches!(n.op, Op::Var(_)));
    found
}

/// The splat value of a variable-free expression.
fn fold(e: &Expr) -> Result<i64, String> {
    let v = eval(e, &Env::new()).map_err(|err| err.to_string())?;
    let first = v.lanes[0];
    if v.lanes.iter().any(|l| *l != first) {
        return Err(format!("the constant {e} differs between lanes"));
    }
    Ok(lane_value(e.ty.elem, first))
}

fn node(e: &Expr, args: Vec<String>) -> Result<String, String> {
    if e.op == Op::Concat && args.len() != 2 {
        return concat(e, args);
    }
    let (name, params) = constructor(&e.op, e.args.len())
        .ok_or_else(|| format!("'{}' has no instruction-selection form", e.op.name()))?;
    let mut s = format!("({name} \"{}\"", type_name(e.ty));
    for p in params {
        write!(s, " {p}").expect("string write");
    }
    for a in args {
        write!(s, " {a}").expect("string write");
    }
    s.push(')');
    Ok(s)
}

/// A concatenation of any number of parts as nested pairs, `(Concat t a (Concat t' b c))`.
fn concat(e: &Expr, mut args: Vec<String>) -> Result<String, String> {
    let lanes: Vec<u32> = e.args.iter().map(|a| a.ty.lanes).collect();
    match args.len() {
        0 => Err("an empty concatenation".into()),
        1 => Ok(args.remove(0)),
        _ => {
            let first = args.remove(0);
            let rest_ty = e.ty.with_lanes(lanes[1..].iter().sum());
            let rest = Expr {
                op: Op::Concat,
                ty: rest_ty,
                args: e.args[1..].to_vec(),
            };
            let rest = concat(&rest, args)?;
            Ok(format!("(Concat \"{}\" {first} {rest})", type_name(e.ty)))
        }
    }
}

pub fn const_term(ty: VecType, value: &str) -> String {
    format!("(Const \"{}\" {value})", type_name(ty))
}

/// The ground term of an input expression; constant subexpressions are folded.
pub fn ground(e: &Expr) -> Result<String, String> {
    match &e.op {
        Op::Var(name) => Ok(format!("(Var \"{}\" \"{name}\")", type_name(e.ty))),
        Op::Slice {
            start, stride: 1, ..
        } => match &e.args[0].op {
            Op::Var(name) => Ok(format!("(Part \"{}\" \"{name}\" {start})", type_name(e.ty))),
            _ => node(e, vec![ground(&e.args[0])?]),
        },
        _ if !has_vars(e) => Ok(const_term(e.ty, &fold(e)?.to_string())),
        _ => {
            let args = e.args.iter().map(|a| ground(a)).collect::<Result<_, _>>()?;
            node(e, args)
        }
    }
}

/// The egglog name of a wildcard.
pub fn wildcard(name: &str) -> String {
    format!("w_{name}")
}

/// Whether operand `i` of an `op` node has the node's own type.
fn operand_typed_by_node(op: &Op, i: usize) -> bool {
    op.is_lanewise_uniform() || (matches!(op, Op::Select) && i > 0)
}

/// Builds the query and actions of one rewrite: wildcards seen on the left, the conditions
/// they need, and fresh variables for computed constants.
#[derive(Default)]
pub struct Pattern {
    /// Non-constant wildcards with their types.
    pub wildcards: BTreeMap<String, VecType>,
    bound_constants: BTreeSet<String>,
    /// For each wildcard, whether each of its uses is typed by its parent.
    typed: BTreeMap<String, Vec<bool>>,
    pending: Vec<(String, String)>,
    pub conditions: Vec<String>,
    fresh: usize,
}

impl Pattern {
    /// The left-hand side pattern of `e`.
    pub fn lhs(&mut self, e: &Expr) -> Result<String, String> {
        self.lhs_node(e, false)
    }

    /// `typed_by_parent`: the node's parent in the pattern has operands of its own type (an
    /// e-graph node `(Add "u16x8" a b)` has operands of type u16x8), so a wildcard here needs
    /// no `type-of` condition.
    fn lhs_node(&mut self, e: &Expr, typed_by_parent: bool) -> Result<String, String> {
        match &e.op {
            Op::Var(name) if !is_constant_wildcard(name) => {
                match self.wildcards.insert(name.clone(), e.ty) {
                    Some(t) if t != e.ty => {
                        return Err(format!("wildcard {name} is used at {t} and {}", e.ty));
                    }
                    _ => {}
                }
                self.typed
                    .entry(name.clone())
                    .or_default()
                    .push(typed_by_parent);
                Ok(wildcard(name))
            }
            _ if !has_vars(e) => Ok(const_term(e.ty, &fold(e)?.to_string())),
            _ if !has_non_constant_vars(e) => {
                if let Some(name) = value_preserving_wildcard(e) {
                    self.bound_constants.insert(name.to_string());
                    return Ok(const_term(e.ty, &wildcard(name)));
                }
                let k = format!("k{}", self.fresh);
                self.fresh += 1;
                self.pending.push((k.clone(), self.int(e)?));
                Ok(const_term(e.ty, &k))
            }
            _ => {
                let args = e
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| self.lhs_node(a, operand_typed_by_node(&e.op, i)))
                    .collect::<Result<_, _>>()?;
                node(e, args)
            }
        }
    }

    /// Checks every constant wildcard is bound, adds a `type-of` condition for each wildcard
    /// whose type no parent fixes, and turns computed constants into conditions.
    pub fn finish_lhs(&mut self) -> Result<(), String> {
        let untyped: Vec<String> = std::mem::take(&mut self.typed)
            .into_iter()
            .filter(|(_, uses)| !uses.contains(&true))
            .map(|(name, _)| {
                format!(
                    "(= (type-of {}) \"{}\")",
                    wildcard(&name),
                    type_name(self.wildcards[&name])
                )
            })
            .collect();
        self.conditions.splice(0..0, untyped);
        for (k, value) in std::mem::take(&mut self.pending) {
            self.check_bound(&value)?;
            self.conditions.push(format!("(= {k} {value})"));
        }
        Ok(())
    }

    fn check_bound(&self, int_expr: &str) -> Result<(), String> {
        for w in int_expr
            .split(|c: char| c == '(' || c == ')' || c.is_whitespace())
            .filter_map(|w| w.strip_prefix("w_"))
        {
            if is_constant_wildcard(w) && !self.bound_constants.contains(w) {
                return Err(format!(
                    "constant wildcard {w} is only used inside arithmetic on the left side"
                ));
            }
        }
        Ok(())
    }

    /// The right-hand side term of `e`, over the wildcards bound on the left.
    pub fn rhs(&self, e: &Expr) -> Result<String, String> {
        match &e.op {
            Op::Var(name) if !is_constant_wildcard(name) => {
                if !self.wildcards.contains_key(name) {
                    return Err(format!("{name} is not bound by the left side"));
                }
                Ok(wildcard(name))
            }
            _ if !has_vars(e) => Ok(const_term(e.ty, &fold(e)?.to_string())),
            _ if !has_non_constant_vars(e) => {
                let v = self.int(e)?;
                self.check_bound(&v)?;
                Ok(const_term(e.ty, &v))
            }
            _ => {
                let args = e
                    .args
                    .iter()
                    .map(|a| self.rhs(a))
                    .collect::<Result<_, _>>()?;
                node(e, args)
            }
        }
    }

    /// Conditions for a rule predicate: comparisons of constants, and bounds of wildcards.
    pub fn predicate(&mut self, e: &Expr) -> Result<(), String> {
        if e.op == Op::And && e.ty.elem == Elem::Bool {
            self.predicate(&e.args[0])?;
            return self.predicate(&e.args[1]);
        }
        let cmp = match e.op {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Eq => "=",
            Op::Ne => "!=",
            _ => return Err(format!("unsupported predicate {e}")),
        };
        let (a, b) = (&e.args[0], &e.args[1]);
        let side = |p: &Self, x: &Expr, upper: bool| -> Result<String, String> {
            match &x.op {
                Op::Var(n) if !is_constant_wildcard(n) => {
                    if !p.wildcards.contains_key(n) {
                        return Err(format!("{n} is not bound by the left side"));
                    }
                    Ok(format!(
                        "({} {})",
                        if upper { "hi" } else { "lo" },
                        wildcard(n)
                    ))
                }
                _ => p.int(x),
            }
        };
        // x <= k needs x's upper bound; k <= x its lower bound.
        let upper_left = matches!(e.op, Op::Le | Op::Lt);
        let l = side(self, a, upper_left)?;
        let r = side(self, b, !upper_left)?;
        if matches!(e.op, Op::Eq | Op::Ne) && (has_non_constant_vars(a) || has_non_constant_vars(b))
        {
            return Err(format!("unsupported predicate {e}"));
        }
        self.check_bound(&l)?;
        self.check_bound(&r)?;
        self.conditions.push(format!("({cmp} {l} {r})"));
        Ok(())
    }

    /// The i64 arithmetic of a constant subexpression.
    fn int(&self, e: &Expr) -> Result<String, String> {
        if !has_vars(e) {
            return Ok(fold(e)?.to_string());
        }
        let bin = |op: &str| -> Result<String, String> {
            Ok(format!(
                "({op} {} {})",
                self.int(&e.args[0])?,
                self.int(&e.args[1])?
            ))
        };
        match &e.op {
            Op::Var(name) => Ok(wildcard(name)),
            Op::Broadcast(_) | Op::Cast(_) => self.int(&e.args[0]),
            Op::Add => bin("+"),
            Op::Sub => bin("-"),
            Op::Mul => bin("*"),
            Op::Shl => bin("<<"),
            Op::Shr => bin(">>"),
            Op::And => bin("&"),
            Op::Or => bin("|"),
            Op::Xor => bin("^"),
            Op::Min => bin("min"),
            Op::Max => bin("max"),
            Op::Neg => Ok(format!("(- 0 {})", self.int(&e.args[0])?)),
            _ => Err(format!("cannot compute {e} on constants")),
        }
    }
}

fn has_non_constant_vars(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |n| {
        if let Op::Var(name) = &n.op {
            if !is_constant_wildcard(name) {
                found = true;
            }
        }
    });
    found
}

/// `c0`, or `c0` broadcast or cast to a type that holds every value of its own.
fn value_preserving_wildcard(e: &Expr) -> Option<&str> {
    match &e.op {
        Op::Var(name) => Some(name),
        Op::Broadcast(_) => value_preserving_wildcard(&e.args[0]),
        Op::Cast(to) => {
            let from = e.args[0].ty.elem;
            let widens = to.bits() > from.bits() && (!from.is_signed() || to.is_signed());
            let same = *to == from;
            (widens || same)
                .then(|| value_preserving_wildcard(&e.args[0]))
                .flatten()
        }
        _ => None,
    }
}
