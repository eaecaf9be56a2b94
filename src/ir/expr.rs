//! The typed vector IR: a small set of lane-wise and cross-lane primitives. Fixed-point idioms
//! are not primitives; they are macros (specs/idioms) that expand into these.

use super::types::{Elem, VecType};
use std::collections::HashSet;
use std::rc::Rc;

/// An IR operator, named in the text form as [`Op::name`] says (`add`, `sat-cast`,
/// `reduce-add`, ...; README.md's IR section lists them with their meaning). Lane-wise
/// operators compute every lane from the same lane of each operand; the others move lanes.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    Var(String),
    /// Raw lane bits (f32 as its bit pattern); one value is a splat.
    Const(Vec<u128>),
    Add,
    Sub,
    Mul,
    /// f32 division; on integers Halide's: Euclidean (rounded down for a positive divisor, up
    /// for a negative one, so the remainder is never negative), and zero where the divisor is.
    Div,
    /// Halide's integer remainder: Euclidean (in `0..|divisor|`), zero where the divisor is.
    Mod,
    Neg,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Min,
    Max,
    Abs,
    Popcount,
    Clz,
    /// Carry-less (GF(2) polynomial) product, truncated to the lane width like `mul`.
    Clmul,
    /// Remainder of the first operand divided by the second as GF(2) polynomials (the first
    /// operand itself when the divisor is zero).
    Clmod,
    Sqrt,
    Sgn,
    /// f32 rounding to an integral value (IEEE-754 roundToIntegral, the sign kept): toward
    /// minus infinity, plus infinity, zero, to the nearest with ties to even (Halide's
    /// `round`) and with ties away from zero.
    Floor,
    Ceil,
    Trunc,
    Round,
    RoundAway,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Select,
    Cast(Elem),
    SatCast(Elem),
    Bitcast(Elem),
    Broadcast(u32),
    Concat,
    Slice {
        start: u32,
        stride: u32,
        lanes: u32,
    },
    Interleave,
    Shuffle(Vec<u32>),
    Lookup,
    ReduceAdd(u32),
    /// `(compress MASK X)`: the lanes of X whose mask lane is set, in order, in the low lanes;
    /// zero in the lanes above (AVX-512 vpcompress).
    Compress,
    /// `(expand MASK X)`: the low lanes of X, in order, at the lanes whose mask lane is set;
    /// zero elsewhere (AVX-512 vpexpand).
    Expand,
}

/// Operators whose only parameters are their operands, by their text names.
pub const SIMPLE_OPS: [(&str, Op); 32] = [
    ("add", Op::Add),
    ("sub", Op::Sub),
    ("mul", Op::Mul),
    ("div", Op::Div),
    ("mod", Op::Mod),
    ("neg", Op::Neg),
    ("and", Op::And),
    ("or", Op::Or),
    ("xor", Op::Xor),
    ("not", Op::Not),
    ("shl", Op::Shl),
    ("shr", Op::Shr),
    ("min", Op::Min),
    ("max", Op::Max),
    ("abs", Op::Abs),
    ("popcount", Op::Popcount),
    ("clz", Op::Clz),
    ("clmul", Op::Clmul),
    ("clmod", Op::Clmod),
    ("sqrt", Op::Sqrt),
    ("sgn", Op::Sgn),
    ("floor", Op::Floor),
    ("ceil", Op::Ceil),
    ("trunc", Op::Trunc),
    ("round", Op::Round),
    ("round-away", Op::RoundAway),
    ("eq", Op::Eq),
    ("ne", Op::Ne),
    ("lt", Op::Lt),
    ("le", Op::Le),
    ("gt", Op::Gt),
    ("ge", Op::Ge),
];

impl Op {
    /// The operator's name in the text form.
    pub fn name(&self) -> &'static str {
        if let Some((n, _)) = SIMPLE_OPS.iter().find(|(_, o)| o == self) {
            return n;
        }
        match self {
            Op::Var(_) => "var",
            Op::Const(_) => "const",
            Op::Select => "select",
            Op::Cast(_) => "cast",
            Op::SatCast(_) => "sat-cast",
            Op::Bitcast(_) => "bitcast",
            Op::Broadcast(_) => "broadcast",
            Op::Concat => "concat",
            Op::Slice { .. } => "slice",
            Op::Interleave => "interleave",
            Op::Shuffle(_) => "shuffle",
            Op::Lookup => "lookup",
            Op::ReduceAdd(_) => "reduce-add",
            Op::Compress => "compress",
            Op::Expand => "expand",
            _ => unreachable!("simple ops are named in SIMPLE_OPS"),
        }
    }

    /// Comparisons, whose lanes are bool.
    pub fn is_comparison(&self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// Operators whose first operand is a mask choosing among the lanes of the others.
    pub fn is_masked(&self) -> bool {
        matches!(self, Op::Select | Op::Compress | Op::Expand)
    }

    /// Operators that compute every lane from the same lane of each operand.
    pub fn is_lanewise(&self) -> bool {
        self.is_lanewise_uniform()
            || self.is_comparison()
            || matches!(self, Op::Select | Op::Cast(_) | Op::SatCast(_))
    }

    /// Binary operators whose operands can be swapped.
    pub fn is_commutative(&self) -> bool {
        matches!(
            self,
            Op::Add
                | Op::Mul
                | Op::And
                | Op::Or
                | Op::Xor
                | Op::Min
                | Op::Max
                | Op::Eq
                | Op::Ne
                | Op::Clmul
        )
    }

    /// The f32 roundings to an integral value (`floor`, `ceil`, `trunc`, `round`, `round-away`).
    pub fn is_rounding(&self) -> bool {
        matches!(
            self,
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round | Op::RoundAway
        )
    }

    /// Lane-wise operators whose operands all share the result's type.
    pub fn is_lanewise_uniform(&self) -> bool {
        matches!(
            self,
            Op::Add
                | Op::Sub
                | Op::Mul
                | Op::Div
                | Op::Mod
                | Op::Neg
                | Op::And
                | Op::Or
                | Op::Xor
                | Op::Not
                | Op::Shl
                | Op::Shr
                | Op::Min
                | Op::Max
                | Op::Abs
                | Op::Popcount
                | Op::Clz
                | Op::Clmul
                | Op::Clmod
                | Op::Sqrt
                | Op::Sgn
        ) || self.is_rounding()
    }

    /// The number of operands; None for the variadic `concat`, `interleave` and `shuffle`.
    pub fn arity(&self) -> Option<usize> {
        match self {
            Op::Var(_) | Op::Const(_) => Some(0),
            Op::Neg | Op::Not | Op::Abs | Op::Popcount | Op::Clz | Op::Sqrt | Op::Sgn => Some(1),
            op if op.is_rounding() => Some(1),
            Op::Cast(_) | Op::SatCast(_) | Op::Bitcast(_) | Op::Broadcast(_) => Some(1),
            Op::Slice { .. } | Op::ReduceAdd(_) => Some(1),
            Op::Select => Some(3),
            Op::Concat | Op::Interleave | Op::Shuffle(_) => None,
            _ => Some(2),
        }
    }
}

/// A typed IR node. Children are shared so macro expansion and `let` cost no copies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Expr {
    /// The operator.
    pub op: Op,
    /// The result type.
    pub ty: VecType,
    /// The operands.
    pub args: Vec<Rc<Expr>>,
}

impl Expr {
    /// The variable `name` of type `ty`.
    pub fn var(name: &str, ty: VecType) -> Expr {
        Expr {
            op: Op::Var(name.to_string()),
            ty,
            args: vec![],
        }
    }

    /// A constant of type `ty`: one value (a splat) or one per lane, as raw lane bits.
    pub fn constant(ty: VecType, lanes: Vec<u128>) -> Expr {
        Expr {
            op: Op::Const(lanes),
            ty,
            args: vec![],
        }
    }

    /// Builds a node, checking operand types; the error text names the mismatching types.
    pub fn build(op: Op, args: Vec<Rc<Expr>>) -> Result<Expr, String> {
        let ty = infer(&op, &args.iter().map(|a| a.ty).collect::<Vec<_>>())?;
        Ok(Expr { op, ty, args })
    }

    /// Every variable with its type, in first-use order.
    pub fn vars(&self) -> Vec<(String, VecType)> {
        let mut out: Vec<(String, VecType)> = Vec::new();
        self.walk_distinct(&mut |e| {
            if let Op::Var(n) = &e.op {
                if !out.iter().any(|(m, _)| m == n) {
                    out.push((n.clone(), e.ty));
                }
            }
        });
        out
    }

    /// Whether this is an operand, as it is or its bits read as another type: what a register
    /// copy or a reinterpretation (NEON's `vreinterpret`, x86's `_mm_castps_si128`) computes.
    pub fn copies_an_operand(&self) -> bool {
        match (&self.op, self.args.as_slice()) {
            (Op::Var(_), _) => true,
            (Op::Bitcast(_), [x]) => x.copies_an_operand(),
            _ => false,
        }
    }

    /// Visits every node, children first.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        for a in &self.args {
            a.walk(f);
        }
        f(self);
    }

    /// Visits every distinct node once, children first: a node shared by several parents (the
    /// same `Rc`) is visited at its first use only, so a selection's DAG is walked in linear
    /// time where [`Expr::walk`] takes every path.
    pub fn walk_distinct(&self, f: &mut impl FnMut(&Expr)) {
        fn visit(e: &Expr, seen: &mut HashSet<*const Expr>, f: &mut impl FnMut(&Expr)) {
            for a in &e.args {
                if seen.insert(Rc::as_ptr(a)) {
                    visit(a, seen, f);
                }
            }
            f(e);
        }
        visit(self, &mut HashSet::new(), f);
    }

    /// The number of nodes (shared ones counted at every use).
    pub fn size(&self) -> usize {
        let mut n = 0;
        self.walk(&mut |_| n += 1);
        n
    }
}

fn same(op: &Op, tys: &[VecType]) -> Result<VecType, String> {
    let first = tys[0];
    if let Some(bad) = tys.iter().find(|t| **t != first) {
        return Err(format!(
            "{} needs operands of one type, got {first} and {bad}",
            op.name()
        ));
    }
    Ok(first)
}

/// The result type of `op` applied to operands of types `tys`.
pub fn infer(op: &Op, tys: &[VecType]) -> Result<VecType, String> {
    let name = op.name();
    if let Some(n) = op.arity() {
        if tys.len() != n {
            return Err(format!("{name} takes {n} operand(s), got {}", tys.len()));
        }
    } else if tys.is_empty() {
        return Err(format!("{name} needs at least one operand"));
    }
    let int_only = |t: VecType| {
        if t.elem.is_int() {
            Ok(t)
        } else {
            Err(format!("{name} needs integer lanes, got {t}"))
        }
    };
    match op {
        Op::Var(_) | Op::Const(_) => unreachable!("leaves are built directly"),
        Op::Div | Op::Mod if tys[0].elem.is_int() => {
            let t = same(op, tys)?;
            if t.elem.bits() <= 64 {
                Ok(t)
            } else {
                Err(format!("{name} needs lanes of at most 64 bits, got {t}"))
            }
        }
        Op::Mod => Err(format!("{name} needs integer lanes, got {}", tys[0])),
        Op::Div if tys[0].elem == Elem::Bool => {
            Err(format!("{name} needs f32 or integer lanes, got {}", tys[0]))
        }
        Op::Div
        | Op::Sqrt
        | Op::Sgn
        | Op::Floor
        | Op::Ceil
        | Op::Trunc
        | Op::Round
        | Op::RoundAway => {
            let t = same(op, tys)?;
            if t.elem == Elem::F32 {
                Ok(t)
            } else {
                Err(format!("{name} needs f32 lanes, got {t}"))
            }
        }
        Op::And | Op::Or | Op::Xor | Op::Not => {
            let t = same(op, tys)?;
            if t.elem == Elem::F32 {
                Err(format!("{name} needs integer or bool lanes, got {t}"))
            } else {
                Ok(t)
            }
        }
        Op::Shl | Op::Shr | Op::Popcount | Op::Clz | Op::Clmul | Op::Clmod => {
            int_only(same(op, tys)?)
        }
        _ if op.is_lanewise_uniform() => {
            let t = same(op, tys)?;
            if t.elem == Elem::Bool {
                Err(format!("{name} needs numeric lanes, got {t}"))
            } else {
                Ok(t)
            }
        }
        _ if op.is_comparison() => Ok(same(op, tys)?.with_elem(Elem::Bool)),
        Op::Select | Op::Compress | Op::Expand => {
            let (m, a) = (tys[0], same(op, &tys[1..])?);
            if m.elem != Elem::Bool || m.lanes != a.lanes {
                return Err(format!("{name} needs a <{} x bool> mask, got {m}", a.lanes));
            }
            Ok(a)
        }
        Op::Cast(e) | Op::SatCast(e) => {
            let t = tys[0];
            if matches!(op, Op::SatCast(_)) && !(t.elem.is_int() && e.is_int()) {
                return Err(format!("sat-cast needs integer types, got {t} to {e}"));
            }
            let other = if *e == Elem::F32 { t.elem } else { *e };
            if (t.elem == Elem::F32) != (*e == Elem::F32) && !(other.is_int() && other.bits() <= 64)
            {
                return Err(format!("cast between f32 and {other} is not supported"));
            }
            Ok(t.with_elem(*e))
        }
        Op::Bitcast(e) => {
            let t = tys[0];
            if !t.bits().is_multiple_of(e.bits()) {
                return Err(format!(
                    "bitcast of {t} ({} bits) into {e} lanes does not divide",
                    t.bits()
                ));
            }
            Ok(VecType::new(t.bits() / e.bits(), *e))
        }
        Op::Broadcast(n) => Ok(tys[0].with_lanes(tys[0].lanes * n)),
        Op::Concat => {
            let e = tys[0].elem;
            if let Some(bad) = tys.iter().find(|t| t.elem != e) {
                return Err(format!(
                    "concat needs one element type, got {} and {}",
                    tys[0], bad
                ));
            }
            Ok(VecType::new(tys.iter().map(|t| t.lanes).sum(), e))
        }
        Op::Interleave => Ok(same(op, tys)?.with_lanes(tys[0].lanes * tys.len() as u32)),
        Op::Slice {
            start,
            stride,
            lanes,
        } => {
            let t = tys[0];
            let last = *start as u64 + (*stride as u64) * (*lanes as u64 - 1);
            if *lanes == 0 || last >= t.lanes as u64 {
                return Err(format!(
                    "slice {start} {stride} {lanes} reads lane {last} of {t}"
                ));
            }
            Ok(t.with_lanes(*lanes))
        }
        Op::Shuffle(idx) => {
            let e = tys[0].elem;
            if let Some(bad) = tys.iter().find(|t| t.elem != e) {
                return Err(format!(
                    "shuffle needs one element type, got {} and {}",
                    tys[0], bad
                ));
            }
            let total: u32 = tys.iter().map(|t| t.lanes).sum();
            if let Some(i) = idx.iter().find(|&&i| i >= total) {
                return Err(format!(
                    "shuffle index {i} is out of range for {total} lanes"
                ));
            }
            Ok(VecType::new(idx.len() as u32, e))
        }
        Op::Lookup => {
            let idx = int_only(tys[1])?;
            Ok(idx.with_elem(tys[0].elem))
        }
        Op::ReduceAdd(k) => {
            let t = tys[0];
            if *k == 0 || !t.lanes.is_multiple_of(*k) || t.elem == Elem::Bool {
                return Err(format!(
                    "reduce-add {k} needs numeric lanes divisible by {k}, got {t}"
                ));
            }
            Ok(t.with_lanes(t.lanes / k))
        }
        _ => unreachable!("every op is covered above"),
    }
}

impl Expr {
    /// The tree with variables replaced by the given expressions (of the same type).
    pub fn substitute(
        self: &Rc<Expr>,
        map: &std::collections::HashMap<String, Rc<Expr>>,
    ) -> Rc<Expr> {
        if let Op::Var(name) = &self.op {
            return map.get(name).cloned().unwrap_or_else(|| self.clone());
        }
        if self.args.is_empty() {
            return self.clone();
        }
        let args: Vec<Rc<Expr>> = self.args.iter().map(|a| a.substitute(map)).collect();
        if args.iter().zip(&self.args).all(|(a, b)| Rc::ptr_eq(a, b)) {
            return self.clone();
        }
        Rc::new(Expr {
            op: self.op.clone(),
            ty: self.ty,
            args,
        })
    }
}
