//! Symbolic evaluation of the C subset. Integers are concrete (loop indices, sizes); floats are
//! terms of the dialect, simplified as Rosette does (literals folded, `x + 0`, `x * 1`, `x * 0`,
//! sums and products flattened and rebuilt right-nested, `a - b` as `a + (neg b)`).

use super::ast::{Expr, ExprKind, Func, Param, Stmt, Ty};
use crate::error::{Error, Location, Result};
use crate::kernel::read::Lifted;
use crate::kernel::term::{Dag, Id, Op};
use std::collections::HashMap;

/// Evaluation steps at most (an unrolled kernel larger than this is refused).
const STEP_LIMIT: usize = 20_000_000;
const CALL_DEPTH: usize = 64;

#[derive(Clone, Debug)]
struct ArrRef {
    store: usize,
    offset: usize,
    dims: Vec<usize>,
}

#[derive(Clone, Debug)]
enum Val {
    Int(i64),
    Float(Id),
    Arr(ArrRef),
}

struct Store {
    elems: Vec<Option<Id>>,
    /// The input array this storage starts as (reads of unwritten elements are `Get`s).
    input: Option<String>,
    written: bool,
}

enum Flow {
    Normal,
    Return(Option<Val>),
}

struct Eval<'a> {
    dag: Dag,
    funcs: &'a [Func],
    stores: Vec<Store>,
    scopes: Vec<HashMap<String, Val>>,
    steps: usize,
    depth: usize,
}

fn err(loc: &Location, msg: impl Into<String>) -> Error {
    Error::parse(loc, msg)
}

/// The exact value of a decimal literal as numerator and denominator.
fn decimal(text: &str, loc: &Location) -> Result<(i64, i64)> {
    let bad = || {
        err(
            loc,
            format!("float literal {text} is not exact enough for the kernel subset"),
        )
    };
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().map_err(|_| bad())?),
        None => (text, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let mut num: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| bad())?
    };
    let mut den: i128 = 1;
    let scale = exp - frac.len() as i32;
    for _ in 0..scale.max(0) {
        num = num.checked_mul(10).ok_or_else(bad)?;
    }
    for _ in 0..(-scale).max(0) {
        den = den.checked_mul(10).ok_or_else(bad)?;
    }
    let g = gcd(num, den).max(1);
    let (n, d) = (num / g, den / g);
    Ok((
        i64::try_from(n).map_err(|_| bad())?,
        i64::try_from(d).map_err(|_| bad())?,
    ))
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// Lifts the kernel (the last `void` function with a body).
pub fn lift(funcs: &[Func], file: &str) -> Result<Lifted> {
    let kernel = funcs
        .iter()
        .rev()
        .find(|f| f.ret == Ty::Void && f.body.is_some())
        .ok_or_else(|| {
            err(
                &Location {
                    file: file.into(),
                    line: 1,
                    col: 1,
                },
                "no kernel: the last void function with a body is the kernel",
            )
        })?;
    let mut ev = Eval {
        dag: Dag::new(),
        funcs,
        stores: Vec::new(),
        scopes: vec![HashMap::new()],
        steps: 0,
        depth: 0,
    };
    let mut arrays = Vec::new();
    for p in &kernel.params {
        let v = ev.kernel_param(p)?;
        if let Val::Arr(a) = &v {
            arrays.push((p.name.clone(), a.store));
        }
        ev.scopes[0].insert(p.name.clone(), v);
    }
    let body = kernel.body.as_ref().expect("the kernel has a body");
    ev.block(body)?;
    let mut outputs = Vec::new();
    for (name, s) in &arrays {
        if !ev.stores[*s].written {
            continue;
        }
        for k in 0..ev.stores[*s].elems.len() {
            let v = match ev.stores[*s].elems[k] {
                Some(v) => v,
                None => ev.dag.get(name, k as u32),
            };
            outputs.push(v);
        }
    }
    if outputs.is_empty() {
        return Err(err(
            &kernel.loc,
            format!(
                "kernel '{}' writes no array parameter: it has no outputs",
                kernel.name
            ),
        ));
    }
    let root = ev.dag.add(Op::List, &outputs);
    Ok(Lifted { dag: ev.dag, root })
}

impl Eval<'_> {
    fn kernel_param(&mut self, p: &Param) -> Result<Val> {
        match p.ty {
            Ty::Float if p.dims.is_empty() => Ok(Val::Float(self.dag.get(&p.name, 0))),
            Ty::Float => {
                let dims: Vec<usize> = p
                    .dims
                    .iter()
                    .map(|d| {
                        d.ok_or_else(|| {
                            err(
                                &p.loc,
                                format!(
                                    "kernel parameter '{}' needs a fixed size, as in float {}[N]",
                                    p.name, p.name
                                ),
                            )
                        })
                    })
                    .collect::<Result<_>>()?;
                let len = dims.iter().product();
                self.stores.push(Store {
                    elems: vec![None; len],
                    input: Some(p.name.clone()),
                    written: false,
                });
                Ok(Val::Arr(ArrRef {
                    store: self.stores.len() - 1,
                    offset: 0,
                    dims,
                }))
            }
            _ => Err(err(
                &p.loc,
                format!(
                    "kernel parameter '{}' must be a float array or a float",
                    p.name
                ),
            )),
        }
    }

    fn step(&mut self, loc: &Location) -> Result<()> {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return Err(err(
                loc,
                format!("the kernel unrolls to more than {STEP_LIMIT} steps"),
            ));
        }
        Ok(())
    }

    fn lookup(&self, name: &str, loc: &Location) -> Result<Val> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .ok_or_else(|| err(loc, format!("'{name}' is not declared")))
    }

    fn set(&mut self, name: &str, v: Val) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(slot) = s.get_mut(name) {
                *slot = v;
                return;
            }
        }
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<Flow> {
        self.scopes.push(HashMap::new());
        let mut flow = Flow::Normal;
        for s in stmts {
            flow = self.stmt(s)?;
            if matches!(flow, Flow::Return(_)) {
                break;
            }
        }
        self.scopes.pop();
        Ok(flow)
    }

    fn int(&mut self, e: &Expr, what: &str) -> Result<i64> {
        match self.value(e)? {
            Val::Int(v) => Ok(v),
            Val::Float(id) => match self.dag.op(id) {
                Op::Num(n) => Ok(n),
                _ => Err(err(
                    &e.loc,
                    format!("{what} depends on the input data (outside the kernel subset)"),
                )),
            },
            Val::Arr(_) => Err(err(&e.loc, format!("{what} is an array"))),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow> {
        match s {
            Stmt::Decl {
                ty,
                name,
                dims,
                init,
                loc,
            } => {
                self.step(loc)?;
                let v = if dims.is_empty() {
                    match (ty, init) {
                        (Ty::Int, Some(e)) => Val::Int(self.int(e, "an int")?),
                        (Ty::Int, None) => Val::Int(0),
                        (Ty::Float, Some(e)) => Val::Float(self.float(e)?),
                        (Ty::Float, None) => Val::Float(self.dag.num(0)),
                        (Ty::Void, _) => return Err(err(loc, "a void variable")),
                    }
                } else {
                    if *ty != Ty::Float {
                        return Err(err(loc, "only float arrays are in the kernel subset"));
                    }
                    let mut d = Vec::new();
                    for e in dims {
                        let n = self.int(e, "an array size")?;
                        if !(1..=1 << 20).contains(&n) {
                            return Err(err(&e.loc, format!("array size {n} is out of range")));
                        }
                        d.push(n as usize);
                    }
                    let len: usize = d.iter().product();
                    if len > 1 << 22 {
                        return Err(err(
                            loc,
                            format!("array '{name}' has {len} elements: too large"),
                        ));
                    }
                    self.stores.push(Store {
                        elems: vec![None; len],
                        input: None,
                        written: false,
                    });
                    Val::Arr(ArrRef {
                        store: self.stores.len() - 1,
                        offset: 0,
                        dims: d,
                    })
                };
                self.scopes
                    .last_mut()
                    .expect("a scope")
                    .insert(name.clone(), v);
                Ok(Flow::Normal)
            }
            Stmt::Assign {
                target,
                op,
                value,
                loc,
            } => {
                self.step(loc)?;
                self.assign(target, op, value, loc)?;
                Ok(Flow::Normal)
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                loc,
            } => {
                self.scopes.push(HashMap::new());
                if let Some(i) = init {
                    self.stmt(i)?;
                }
                loop {
                    self.step(loc)?;
                    if let Some(c) = cond {
                        if self.int(c, "a loop condition")? == 0 {
                            break;
                        }
                    }
                    if let Flow::Return(v) = self.stmt(body)? {
                        self.scopes.pop();
                        return Ok(Flow::Return(v));
                    }
                    match step {
                        Some(s) => {
                            self.stmt(s)?;
                        }
                        None => return Err(err(loc, "a for loop needs a step")),
                    }
                }
                self.scopes.pop();
                Ok(Flow::Normal)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.int(cond, "an if condition")? != 0 {
                    self.stmt(then)
                } else if let Some(o) = otherwise {
                    self.stmt(o)
                } else {
                    Ok(Flow::Normal)
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Return(e) => Ok(Flow::Return(match e {
                Some(e) => Some(self.expr(e)?),
                None => None,
            })),
            Stmt::Expr(e) => {
                self.expr(e)?;
                Ok(Flow::Normal)
            }
        }
    }

    /// The storage slot an indexed expression names.
    fn element(&mut self, e: &Expr) -> Result<(usize, usize)> {
        match self.expr(e)? {
            Val::Arr(a) if a.dims.is_empty() => Ok((a.store, a.offset)),
            Val::Arr(_) => Err(err(&e.loc, "an array, not an element: index it fully")),
            _ => Err(err(&e.loc, "not an array element")),
        }
    }

    fn assign(&mut self, target: &Expr, op: &str, value: &Expr, loc: &Location) -> Result<()> {
        let bin = op.strip_suffix('=').filter(|b| !b.is_empty());
        match &target.kind {
            ExprKind::Var(name) => {
                let old = self.lookup(name, &target.loc)?;
                let new = match (old, bin) {
                    (Val::Int(_), None) => Val::Int(self.int(value, "an int")?),
                    (Val::Int(a), Some(b)) => {
                        let v = self.int(value, "an int")?;
                        Val::Int(int_op(b, a, v, loc)?)
                    }
                    (Val::Float(_), None) => Val::Float(self.float(value)?),
                    (Val::Float(a), Some(b)) => {
                        let v = self.float(value)?;
                        Val::Float(self.float_op(b, a, v, loc)?)
                    }
                    (Val::Arr(_), _) => return Err(err(loc, "arrays cannot be assigned")),
                };
                self.set(name, new);
            }
            ExprKind::Index(..) => {
                let (s, k) = self.element(target)?;
                let v = self.float(value)?;
                let new = match bin {
                    None => v,
                    Some(b) => {
                        let old = self.read(s, k);
                        self.float_op(b, old, v, loc)?
                    }
                };
                self.stores[s].elems[k] = Some(new);
                self.stores[s].written = true;
            }
            _ => return Err(err(&target.loc, "cannot assign to this expression")),
        }
        Ok(())
    }

    fn read(&mut self, s: usize, k: usize) -> Id {
        match self.stores[s].elems[k] {
            Some(v) => v,
            None => match self.stores[s].input.clone() {
                Some(name) => self.dag.get(&name, k as u32),
                None => self.dag.num(0),
            },
        }
    }

    fn float(&mut self, e: &Expr) -> Result<Id> {
        match self.value(e)? {
            Val::Float(id) => Ok(id),
            Val::Int(v) => Ok(self.dag.num(v)),
            Val::Arr(_) => Err(err(&e.loc, "an array where a value is expected")),
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<Val> {
        Ok(match &e.kind {
            ExprKind::Int(v) => Val::Int(*v),
            ExprKind::Float(text) => {
                let (n, d) = decimal(text, &e.loc)?;
                let num = self.dag.num(n);
                if d == 1 {
                    Val::Float(num)
                } else {
                    let den = self.dag.num(d);
                    Val::Float(self.dag.add(Op::Div, &[num, den]))
                }
            }
            ExprKind::Var(name) => self.lookup(name, &e.loc)?,
            ExprKind::Index(a, i) => {
                let arr = match self.expr(a)? {
                    Val::Arr(r) => r,
                    _ => return Err(err(&a.loc, "indexing something that is not an array")),
                };
                let idx = self.int(i, "an index")?;
                let Some((&n, rest)) = arr.dims.split_first() else {
                    return Err(err(&e.loc, "too many indices"));
                };
                if idx < 0 || idx as usize >= n {
                    return Err(err(&i.loc, format!("index {idx} is out of bounds 0..{n}")));
                }
                let stride: usize = rest.iter().product();
                let r = ArrRef {
                    store: arr.store,
                    offset: arr.offset + idx as usize * stride,
                    dims: rest.to_vec(),
                };
                Val::Arr(r)
            }
            ExprKind::Call(name, args) => self.call(name, args, &e.loc)?,
            ExprKind::Unary(op, x) => match (*op, self.value(x)?) {
                ("-", Val::Int(v)) => Val::Int(-v),
                ("-", Val::Float(id)) => Val::Float(self.neg(id)),
                ("+", v) => v,
                ("!", Val::Int(v)) => Val::Int((v == 0) as i64),
                _ => {
                    return Err(err(
                        &e.loc,
                        format!("'{op}' of this operand is outside the kernel subset"),
                    ))
                }
            },
            ExprKind::Binary(op, a, b) => {
                if *op == "&&" || *op == "||" {
                    let l = self.int(a, "a condition")?;
                    let short = if *op == "&&" { l == 0 } else { l != 0 };
                    return Ok(Val::Int(if short {
                        (*op == "||") as i64
                    } else {
                        (self.int(b, "a condition")? != 0) as i64
                    }));
                }
                match (self.value(a)?, self.value(b)?) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(int_op(op, x, y, &e.loc)?),
                    (x, y) => {
                        if ["<", "<=", ">", ">=", "==", "!="].contains(op) {
                            return Err(err(&e.loc, format!("comparison '{op}' of input data is outside the kernel subset (if only on loop indices)")));
                        }
                        let x = self.float_of(x, &a.loc)?;
                        let y = self.float_of(y, &b.loc)?;
                        Val::Float(self.float_op(op, x, y, &e.loc)?)
                    }
                }
            }
            ExprKind::Ternary(c, a, b) => {
                if self.int(c, "a condition")? != 0 {
                    self.value(a)?
                } else {
                    self.value(b)?
                }
            }
            ExprKind::Cast(ty, x) => match (ty, self.value(x)?) {
                (Ty::Float, Val::Int(v)) => Val::Float(self.dag.num(v)),
                (Ty::Float, v @ Val::Float(_)) => v,
                (Ty::Int, Val::Int(v)) => Val::Int(v),
                _ => return Err(err(&e.loc, "this cast is outside the kernel subset")),
            },
        })
    }

    /// An expression's value with array elements read.
    fn value(&mut self, e: &Expr) -> Result<Val> {
        match self.expr(e)? {
            Val::Arr(a) if a.dims.is_empty() => Ok(Val::Float(self.read(a.store, a.offset))),
            v => Ok(v),
        }
    }

    fn float_of(&mut self, v: Val, loc: &Location) -> Result<Id> {
        match v {
            Val::Float(id) => Ok(id),
            Val::Int(n) => Ok(self.dag.num(n)),
            Val::Arr(_) => Err(err(loc, "an array where a value is expected")),
        }
    }

    fn call(&mut self, name: &str, args: &[Expr], loc: &Location) -> Result<Val> {
        match name {
            "sqrtf" | "sqrt" | "sgn" | "sgnf" => {
                if args.len() != 1 {
                    return Err(err(loc, format!("{name} takes one argument")));
                }
                let x = self.value(&args[0])?;
                let x = self.float_of(x, &args[0].loc)?;
                let op = if name.starts_with("sqrt") {
                    Op::Sqrt
                } else {
                    Op::Sgn
                };
                return Ok(Val::Float(self.dag.add(op, &[x])));
            }
            _ => {}
        }
        let f = self
            .funcs
            .iter()
            .find(|f| f.name == name && f.body.is_some())
            .ok_or_else(|| {
                err(
                    loc,
                    format!("call of '{name}', which is neither defined here nor sqrtf/sgn"),
                )
            })?;
        if f.params.len() != args.len() {
            return Err(err(
                loc,
                format!(
                    "'{name}' takes {} arguments, given {}",
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        self.depth += 1;
        if self.depth > CALL_DEPTH {
            return Err(err(
                loc,
                "calls nest too deeply (recursion is outside the kernel subset)",
            ));
        }
        let mut frame = HashMap::new();
        for (p, a) in f.params.iter().zip(args) {
            let v = if p.dims.is_empty() {
                match p.ty {
                    Ty::Int => Val::Int(self.int(a, "an int argument")?),
                    _ => {
                        let v = self.value(a)?;
                        Val::Float(self.float_of(v, &a.loc)?)
                    }
                }
            } else {
                match self.expr(a)? {
                    Val::Arr(r) => {
                        let mut r = r;
                        if p.dims.len() > 1 {
                            let want: Vec<usize> =
                                p.dims[1..].iter().map(|d| d.unwrap_or(0)).collect();
                            if want.iter().all(|&d| d > 0) {
                                let total: usize = r.dims.iter().product();
                                let inner: usize = want.iter().product();
                                r.dims =
                                    std::iter::once(total / inner.max(1)).chain(want).collect();
                            }
                        } else {
                            r.dims = vec![r.dims.iter().product()];
                        }
                        Val::Arr(r)
                    }
                    _ => {
                        return Err(err(
                            &a.loc,
                            format!("argument '{}' of '{name}' must be an array", p.name),
                        ))
                    }
                }
            };
            frame.insert(p.name.clone(), v);
        }
        let saved = std::mem::replace(&mut self.scopes, vec![frame]);
        let flow = self.block(f.body.as_ref().expect("has a body"));
        self.scopes = saved;
        self.depth -= 1;
        match flow? {
            Flow::Return(Some(v)) => Ok(v),
            _ if f.ret == Ty::Void => Ok(Val::Int(0)),
            _ => Err(err(
                &f.loc,
                format!("'{name}' ends without returning a value"),
            )),
        }
    }

    fn neg(&mut self, x: Id) -> Id {
        match self.dag.op(x) {
            Op::Num(n) => self.dag.num(-n),
            Op::Neg => self.dag.args(x)[0],
            _ => self.dag.add(Op::Neg, &[x]),
        }
    }

    /// The operands of a flattened sum or product.
    fn spine(&self, op: Op, x: Id, out: &mut Vec<Id>) {
        if self.dag.op(x) == op {
            let a = self.dag.args(x).to_vec();
            self.spine(op, a[0], out);
            self.spine(op, a[1], out);
        } else {
            out.push(x);
        }
    }

    fn float_op(&mut self, op: &str, a: Id, b: Id, loc: &Location) -> Result<Id> {
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
                        self.spine(Op::Add, a, &mut terms);
                        self.spine(Op::Add, b, &mut terms);
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
                    self.spine(Op::Mul, a, &mut factors);
                    self.spine(Op::Mul, b, &mut factors);
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

fn int_op(op: &str, a: i64, b: i64, loc: &Location) -> Result<i64> {
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
