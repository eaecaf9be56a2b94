//! Hydride's constant extraction (paper 000, §3.3): an instruction's semantics with every
//! numeric parameter taken out, so instructions of any ISA that compute the same thing at other
//! sizes share one shape; and the way back, a representative instantiated at another
//! instruction's parameters for the similarity check.
//!
//! Every lane count, element width and literal (slice offset, reduction group, broadcast
//! factor, constant lanes, shuffle indices) is a slot of its own, in tree order; operands are
//! numbered by first appearance (operand order is a parameter too). Signedness stays out of the
//! shape: whether `add` on `u16` is `add` on `i16` is for the similarity check. Slots that hold
//! equal values in every member of a class become one symbol of the class, and slots that hold
//! one value throughout are fixed (Hydride's bitwidth analysis and elimination of unnecessary
//! arguments, done over the members). Commutative operands are put in one order first, so
//! `c + a * b` and `a * b + c` share a shape.

use crate::ir::{Elem, Expr, Op, VecType};
use std::rc::Rc;

/// What a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    /// A lane count (symbols `N0`, `N1`, ...).
    Lanes,
    /// An element width (`W0`, ...).
    Width,
    /// A literal (`C0`, ...).
    Literal,
}

impl Slot {
    /// The symbol letter.
    pub fn letter(self) -> char {
        match self {
            Slot::Lanes => 'N',
            Slot::Width => 'W',
            Slot::Literal => 'C',
        }
    }
}

/// An instruction's semantics with its parameters extracted.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The structure without sizes, literals or signedness: instructions can be similar only
    /// when their keys are equal.
    pub key: String,
    /// The values of the slots, in tree order.
    pub slots: Vec<(Slot, String)>,
    /// The operands by number (`v0`, `v1`, ...).
    pub vars: Vec<String>,
    /// The semantics with commutative operands in canonical order.
    pub canonical: Rc<Expr>,
}

/// Extracts the parameters of `semantics`.
pub fn shape(semantics: &Expr) -> Shape {
    let canonical = canonical_order(semantics);
    let mut shape = Shape {
        key: String::new(),
        slots: Vec::new(),
        vars: Vec::new(),
        canonical: canonical.clone(),
    };
    shape.visit(&canonical);
    shape
}

/// `e` with the operands of commutative operators sorted by their structure (operand names,
/// sizes and literals left out, so the order does not depend on them).
fn canonical_order(e: &Expr) -> Rc<Expr> {
    let mut args: Vec<Rc<Expr>> = e.args.iter().map(|a| canonical_order(a)).collect();
    if e.op.is_commutative() {
        args.sort_by_cached_key(|a| anonymous(a));
    }
    Rc::new(Expr {
        op: e.op.clone(),
        ty: e.ty,
        args,
    })
}

fn anonymous(e: &Expr) -> String {
    match &e.op {
        Op::Var(_) => "v".into(),
        Op::Const(_) => "c".into(),
        op => {
            let args: Vec<String> = e.args.iter().map(|a| anonymous(a)).collect();
            format!("({} {})", op.name(), args.join(" "))
        }
    }
}

/// The element kind written in keys: integer widths are slots.
fn kind(e: Elem) -> &'static str {
    match e {
        Elem::Bool | Elem::F32 => e.name(),
        _ => "int",
    }
}

/// The literal slots of an operator, in order: (value text) for each.
fn literals(op: &Op) -> Vec<String> {
    let list = |v: &[u32]| {
        let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        format!("[{}]", items.join(" "))
    };
    match op {
        Op::Const(v) if v.len() == 1 => vec![v[0].to_string()],
        Op::Const(v) => {
            let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            vec![format!("[{}]", items.join(" "))]
        }
        Op::Broadcast(n) | Op::ReduceAdd(n) => vec![n.to_string()],
        Op::Slice { start, stride, .. } => vec![start.to_string(), stride.to_string()],
        Op::Shuffle(idx) => vec![list(idx)],
        _ => vec![],
    }
}

impl Shape {
    fn visit(&mut self, e: &Expr) {
        // The slots of a node: its lanes, its width when integer, its operator's literals.
        self.slots.push((Slot::Lanes, e.ty.lanes.to_string()));
        if e.ty.elem.is_int() {
            self.slots.push((Slot::Width, e.ty.elem.bits().to_string()));
        }
        for l in literals(&e.op) {
            self.slots.push((Slot::Literal, l));
        }
        let head = match &e.op {
            Op::Var(name) => {
                let i = match self.vars.iter().position(|n| n == name) {
                    Some(i) => i,
                    None => {
                        self.vars.push(name.clone());
                        self.vars.len() - 1
                    }
                };
                format!("v{i}")
            }
            op => op.name().to_string(),
        };
        self.key += &format!("({head}:{}", kind(e.ty.elem));
        for a in &e.args {
            self.key.push(' ');
            self.visit(a);
        }
        self.key.push(')');
    }
}

/// An element with `width`'s bits and `sign`'s signedness (both integers), else `width`.
fn resign(width: Elem, sign: Elem) -> Result<Elem, String> {
    if !(width.is_int() && sign.is_int()) {
        return Ok(width);
    }
    Elem::int(width.bits(), sign.is_signed())
        .ok_or_else(|| format!("no {}-bit integer type", width.bits()))
}

/// `e` as a value of type `ty`, which has its lanes and width but maybe another signedness.
fn reinterpret(e: Expr, ty: VecType) -> Result<Expr, String> {
    if e.ty == ty {
        Ok(e)
    } else if matches!(e.op, Op::Bitcast(_)) && e.args[0].ty == ty {
        Ok(Rc::unwrap_or_clone(e.args[0].clone()))
    } else {
        Expr::build(Op::Bitcast(ty.elem), vec![Rc::new(e)])
    }
}

/// `rep`'s operators and signedness with `other`'s sizes and literals (same key).
fn instantiate_node(rep: &Expr, other: &Expr) -> Result<Expr, String> {
    let ty = VecType::new(other.ty.lanes, resign(other.ty.elem, rep.ty.elem)?);
    let op = match (&rep.op, &other.op) {
        (Op::Var(_), Op::Var(_)) => return reinterpret(other.clone(), ty),
        (Op::Const(_), Op::Const(v)) => return Ok(Expr::constant(ty, v.clone())),
        (Op::Cast(r), Op::Cast(o)) => Op::Cast(resign(*o, *r)?),
        (Op::SatCast(r), Op::SatCast(o)) => Op::SatCast(resign(*o, *r)?),
        (Op::Bitcast(r), Op::Bitcast(o)) => Op::Bitcast(resign(*o, *r)?),
        (_, o) => o.clone(),
    };
    let args = rep
        .args
        .iter()
        .zip(&other.args)
        .map(|(r, o)| instantiate_node(r, o).map(Rc::new))
        .collect::<Result<_, _>>()?;
    Expr::build(op, args)
}

/// The representative's semantics at `other`'s parameters (same key), keeping the
/// representative's signedness; `other`'s operands are reinterpreted into it and the result
/// back into `other`'s type. Equal to `other`'s semantics exactly when the two are similar.
pub fn instantiate(representative: &Shape, other: &Shape) -> Result<Expr, String> {
    let e = instantiate_node(&representative.canonical, &other.canonical)?;
    reinterpret(e, other.canonical.ty)
}

/// The representative's semantics printed with `slots[i]` for its i-th slot (a symbol or a
/// value) and `v<k>` for its operands: the class's parameterized operation.
pub fn template(representative: &Shape, slots: &[String]) -> String {
    fn go(e: &Expr, vars: &[String], slots: &mut std::slice::Iter<String>, out: &mut String) {
        let mut next = || slots.next().map_or("?", |s| s.as_str()).to_string();
        let lanes = next();
        let elem = match e.ty.elem {
            Elem::Bool | Elem::F32 => e.ty.elem.name().to_string(),
            el => format!("{}{}", if el.is_signed() { 'i' } else { 'u' }, next()),
        };
        let lits: Vec<String> = literals(&e.op).iter().map(|_| next()).collect();
        let ty = format!("<{lanes} x {elem}>");
        match &e.op {
            Op::Var(name) => {
                let i = vars.iter().position(|n| n == name).unwrap_or(0);
                *out += &format!("(var v{i} {ty})");
                return;
            }
            Op::Const(_) => {
                *out += &format!("(const {ty} {})", lits[0]);
                return;
            }
            Op::Cast(_) | Op::SatCast(_) | Op::Bitcast(_) => {
                *out += &format!("({} {elem}", e.op.name())
            }
            Op::Slice { .. } => *out += &format!("(slice {} {} {lanes}", lits[0], lits[1]),
            op => {
                *out += &format!("({}", op.name());
                for l in &lits {
                    *out += &format!(" {l}");
                }
            }
        }
        for a in &e.args {
            out.push(' ');
            go(a, vars, slots, out);
        }
        out.push(')');
    }
    let mut out = String::new();
    go(
        &representative.canonical,
        &representative.vars,
        &mut slots.iter(),
        &mut out,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;
    use std::collections::HashMap;

    fn parse(text: &str) -> Shape {
        let e = elaborate_expression(text, "test", &Macros::default(), 8, &HashMap::new()).unwrap();
        shape(&e)
    }

    #[test]
    fn sizes_and_operand_names_are_parameters_and_signedness_is_not_in_the_key() {
        let a = parse("(add (var a <8 x i16>) (var b <8 x i16>))");
        let b = parse("(add (var x <32 x u8>) (var y <32 x u8>))");
        assert_eq!(a.key, b.key);
        assert_eq!(b.slots[0], (Slot::Lanes, "32".to_string()));
        assert_eq!(b.vars, ["x", "y"]);
        let c = parse("(add (mul (var a <4 x i32>) (var b <4 x i32>)) (var c <4 x i32>))");
        let d = parse("(add (var c <4 x i32>) (mul (var a <4 x i32>) (var b <4 x i32>)))");
        assert_eq!(c.key, d.key);
        let e = parse("(add (var a <8 x i16>) (var a <8 x i16>))");
        assert_ne!(a.key, e.key, "one operand twice is another shape");
    }

    #[test]
    fn an_instantiated_representative_is_the_other_member_up_to_signedness() {
        let rep = parse("(cast i64 (shr (var a <4 x i32>) (const <4 x i32> 31)))");
        let other = parse("(cast u32 (shr (var z <8 x u16>) (const <8 x u16> 15)))");
        assert_eq!(rep.key, other.key);
        let at = instantiate(&rep, &other).unwrap();
        assert_eq!(
            at.to_string(),
            "(bitcast u32 (cast i32 (shr (bitcast i16 (var z <8 x u16>)) (const <8 x i16> 15))))"
        );
        let slots: Vec<String> = ["N0", "W1", "N0", "W0", "N0", "W0", "N0", "W0", "C0"]
            .map(String::from)
            .to_vec();
        assert_eq!(rep.slots.len(), slots.len());
        assert_eq!(
            template(&rep, &slots),
            "(cast iW1 (shr (var v0 <N0 x iW0>) (const <N0 x iW0> C0)))"
        );
    }
}
