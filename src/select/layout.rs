//! Lane layout, for targets whose widening instructions leave a register pair dealt (even lanes
//! in the low register, odd lanes in the high one: HVX vzxt, vmpa, vmpy) and whose narrowing
//! instructions interleave (vasr, vshuffe). The even and odd lanes of every lane-wise value
//! become e-graph nodes (the fixed rules of `layout.egg`), so instructions that make or take
//! dealt values can be selected, with one shuffle where the natural order comes back.

use super::encode::ground;
use super::term::{type_name, Command, Rewrite, Ruleset, Term};
use crate::ir::{Elem, Expr, Op, VecType};
use crate::spec::Target;
use std::collections::BTreeSet;
use std::rc::Rc;

/// The operators the layout rules make at every type in play.
pub const OPERATORS: [&str; 4] = ["Slice", "Concat", "Interleave", "Lanes"];

/// The types whose even and odd lanes selection may need: every type in play, halved.
pub fn halves(types: &BTreeSet<VecType>) -> BTreeSet<VecType> {
    types
        .iter()
        .filter(|t| t.lanes.is_multiple_of(2))
        .map(|t| t.with_lanes(t.lanes / 2))
        .collect()
}

/// The layout rules over `types`: the `half-of` table of every type with an even lane count,
/// then the rules of `layout.egg`.
pub fn rules(types: &BTreeSet<VecType>) -> Vec<Command> {
    types
        .iter()
        .filter(|t| t.lanes.is_multiple_of(2))
        .map(|t| Command::Half(*t))
        .chain([Command::Fixed(include_str!("layout.egg"))])
        .collect()
}

/// The input at twice, four times, ... its lanes with every variable read that many times
/// (`concat(v, v)`), while it is narrower than `min_bits`, the narrowest register worth
/// using: the whole register an instruction can write, whose low lanes are the result. Empty
/// when the input is that wide, or cannot be doubled.
fn doublings(input: &Rc<Expr>, min_bits: u32) -> Vec<Rc<Expr>> {
    let mut out: Vec<Rc<Expr>> = Vec::new();
    let mut e = input.clone();
    while e.ty.bits() < min_bits && min_bits.is_multiple_of(e.ty.bits()) {
        match double(&e) {
            Some(d) => {
                out.push(d.clone());
                e = d;
            }
            None => return Vec::new(),
        }
    }
    out
}

/// The input when it is narrower than `min_bits`, with its `doublings`; and with `inner`, each
/// node of it at least `min_bits` wide with an operand narrower, or widening a value narrower
/// (a widening of a variable of half a register, a product of two), with the node at twice,
/// four times, ... its lanes until its operands are that wide: its lanes are the low lanes of
/// each. `inner` is for targets whose widenings write register pairs (HVX's `vunpack`: the low
/// register of the pair widens the low half of the operand's register); elsewhere a widening
/// reads the low half of a register itself (`pmovzxbw`, `uxtl`). Nodes that cannot be doubled are left out.
pub fn narrow_nodes(
    input: &Rc<Expr>,
    min_bits: u32,
    inner: bool,
) -> Vec<(Rc<Expr>, Vec<Rc<Expr>>)> {
    fn visit(
        e: &Rc<Expr>,
        min_bits: u32,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<(Rc<Expr>, Vec<Rc<Expr>>)>,
    ) {
        for a in &e.args {
            visit(a, min_bits, seen, out);
        }
        // A concatenation of narrow operands is what makes them wide, not a computation on
        // them: doubling it only repeats it.
        if matches!(e.op, Op::Concat) {
            return;
        }
        // An operand's width, or that of the value it widens: a product of two widenings of
        // half a register is `vmpy` of the padded registers, not a product of two registers.
        let source_bits = |a: &Expr| match (&a.op, a.args.first()) {
            (Op::Cast(_) | Op::SatCast(_), Some(x)) => x.ty.bits().min(a.ty.bits()),
            _ => a.ty.bits(),
        };
        let narrowest = |e: &Expr| e.args.iter().map(|a| source_bits(a)).min();
        let has_narrow_operand =
            narrowest(e).is_some_and(|b| b < min_bits && b > 0 && min_bits.is_multiple_of(b));
        if e.ty.bits() < min_bits || !has_narrow_operand || !seen.insert(e.to_string()) {
            return;
        }
        let mut chain: Vec<Rc<Expr>> = Vec::new();
        let mut d = e.clone();
        while let Some(bits) = narrowest(&d).filter(|&b| b < min_bits) {
            let Some(next) = double(&d) else {
                return;
            };
            // Operands that do not widen (a lookup's table) end the chain.
            if narrowest(&next).is_none_or(|b| b <= bits) {
                break;
            }
            chain.push(next.clone());
            d = next;
        }
        if !chain.is_empty() {
            out.push((e.clone(), chain));
        }
    }
    let mut out = Vec::new();
    let root = doublings(input, min_bits);
    let padded_root = root.last().cloned();
    if !root.is_empty() {
        out.push((input.clone(), root));
    }
    if inner {
        let mut seen = BTreeSet::new();
        visit(input, min_bits, &mut seen, &mut out);
        // The input padded to a register has nodes of its own with narrow operands (a
        // widening of a quarter register, padded to half of one).
        if let Some(padded) = padded_root {
            visit(&padded, min_bits, &mut seen, &mut out);
        }
    }
    out
}

fn double(e: &Rc<Expr>) -> Option<Rc<Expr>> {
    let built = match &e.op {
        // A variable, or one already doubled: read twice.
        Op::Var(_) | Op::Concat => Expr::build(Op::Concat, vec![e.clone(), e.clone()]),
        // A constant: its lanes twice over (one value when they are all equal).
        Op::Const(v) => {
            let values = if v.iter().all(|x| *x == v[0]) {
                vec![v[0]]
            } else {
                v.iter().chain(v.iter()).copied().collect()
            };
            Ok(Expr::constant(e.ty.with_lanes(2 * e.ty.lanes), values))
        }
        // Lane-wise, a bitcast, an interleave, a slice (at the same start and stride): the
        // low lanes of the operation over doubled operands read only their operands' low
        // lanes.
        op if op.is_lanewise()
            || matches!(
                op,
                Op::ReduceAdd(_) | Op::Bitcast(_) | Op::Interleave | Op::Slice { .. }
            ) =>
        {
            let args = e.args.iter().map(double).collect::<Option<Vec<_>>>()?;
            let op = match e.op {
                Op::Slice {
                    start,
                    stride,
                    lanes,
                } => Op::Slice {
                    start,
                    stride,
                    lanes: 2 * lanes,
                },
                ref op => op.clone(),
            };
            Expr::build(op, args)
        }
        // A vector repeated n times, at twice that.
        Op::Broadcast(n) => Expr::build(Op::Broadcast(2 * n), e.args.clone()),
        // A lookup of consecutive lanes at literal indices (one lane: `v[k]`) is a slice of
        // the table: doubled, the slice of twice the lanes, whose low lanes are those lanes (a
        // register shifted by lanes, not a gather).
        Op::Lookup if consecutive_literal(&e.args[1], e.ty.lanes).is_some() => {
            let start = consecutive_literal(&e.args[1], e.ty.lanes)?;
            let op = Op::Slice {
                start,
                stride: 1,
                lanes: 2 * e.ty.lanes,
            };
            Expr::build(op, vec![double(&e.args[0])?])
        }
        // A table lookup, at indices doubled (the table as it is).
        Op::Lookup => Expr::build(Op::Lookup, vec![e.args[0].clone(), double(&e.args[1])?]),
        _ => return None,
    };
    built.ok().map(Rc::new)
}

/// The first of `lanes` consecutive lane indices a literal holds (`k, k+1, ...`; one lane: any
/// index); `None` for other indices.
fn consecutive_literal(indices: &Expr, lanes: u32) -> Option<u32> {
    let Op::Const(values) = &indices.op else {
        return None;
    };
    let first = u32::try_from(*values.first()?).ok()?;
    let consecutive = match values.len() {
        1 => lanes == 1,
        n => {
            n == lanes as usize
                && values
                    .iter()
                    .zip(0..)
                    .all(|(v, i)| *v == u128::from(first + i))
        }
    };
    consecutive.then_some(first)
}

/// An IR node of the e-graph.
fn op(name: &'static str, ty: VecType, params: Vec<i64>, args: Vec<Term>) -> Term {
    Term::Op {
        name,
        ty,
        params,
        args,
    }
}

/// `term` (of type `ty`) is the interleave of its even and odd lanes.
fn interleave_of_halves(term: &Term, ty: VecType) -> Command {
    let h = ty.with_lanes(ty.lanes / 2);
    let lanes = |start| op("Slice", h, vec![start, 2], vec![term.clone()]);
    Command::Union(
        term.clone(),
        op("Interleave", ty, vec![], vec![lanes(0), lanes(1)]),
    )
}

/// Facts about the input on a target whose widening instructions deal their pairs: a
/// pair-sized variable is its two registers, the result and every lane-wise operation inside it
/// of at least a register are the interleave of their even and odd lanes, and a result of half
/// a register is the low half of a register holding it twice (the input computed on its
/// variables read twice).
pub fn facts(input: &Rc<Expr>, register_bits: u32) -> Result<Vec<Command>, String> {
    let mut out = Vec::new();
    let ty = input.ty;
    let root = ground(input)?;
    for (name, t) in input
        .vars()
        .iter()
        .filter(|(_, t)| t.bits() == 2 * register_bits)
    {
        let h = t.with_lanes(t.lanes / 2);
        let part = |offset| Term::Part {
            ty: h,
            name: name.clone(),
            offset,
        };
        out.push(Command::Union(
            Term::Var {
                ty: *t,
                name: name.clone(),
            },
            op("Concat", *t, vec![], vec![part(0), part(h.lanes as i64)]),
        ));
    }
    // The result, and every lane-wise operation inside it of at least a register: one read in
    // order by an operation outside (`z_i8 + x_i8 * y_i8` adds the product's interleaved
    // halves to z) is the interleave of its halves as much as the result is.
    let mut nodes = Vec::new();
    input.walk_distinct(&mut |n| {
        let inside = n.op.is_lanewise() && !std::ptr::eq(n, input.as_ref());
        if inside && n.ty.lanes.is_multiple_of(2) && n.ty.bits() >= register_bits {
            nodes.push((ground(n), n.ty));
        }
    });
    if ty.lanes.is_multiple_of(2) && ty.bits() >= register_bits {
        out.push(interleave_of_halves(&root, ty));
    }
    for (node, ty) in nodes {
        out.push(interleave_of_halves(&node?, ty));
    }
    if 2 * ty.bits() == register_bits {
        // Half a register: the low half of a register holding it twice, the input computed
        // on its variables read twice.
        let twice = op(
            "Concat",
            ty.with_lanes(2 * ty.lanes),
            vec![],
            vec![root.clone(), root.clone()],
        );
        out.push(Command::Union(
            root.clone(),
            Term::Lanes {
                ty,
                offset: 0,
                arg: Box::new(twice.clone()),
            },
        ));
        if let Some(d) = doublings(input, register_bits).first() {
            let whole = ground(d)?;
            out.push(Command::Union(twice, whole.clone()));
            out.push(interleave_of_halves(&whole, d.ty));
        }
    }
    Ok(out)
}

/// Facts about an input narrower than a register, and about its nodes with operands narrower
/// than one (`narrow_nodes`): each is the low lanes of the same computation over its variables
/// padded to twice, four times, ... their lanes (the padding reads as zeros and no output lane
/// depends on it, as every node is lane-wise); and
/// each variable narrower than a register is the low lanes of the register it is read into.
pub fn doubling_facts(
    input: &Rc<Expr>,
    min_bits: u32,
    inner: bool,
) -> Result<Vec<Command>, String> {
    let low = |ty: VecType, whole: Term| Term::Lanes {
        ty,
        offset: 0,
        arg: Box::new(whole),
    };
    let mut out = Vec::new();
    for (node, chain) in narrow_nodes(input, min_bits, inner) {
        // As the padded root's union has it, when the node is of the padded root.
        let narrow = padded(ground(&node)?);
        for d in chain {
            let whole = padded(ground(&d)?);
            // On HVX a doubled node of a register pair is, like the input, the interleave of
            // its even and odd lanes (what widening instructions write, dealt).
            if inner && d.ty.bits() > min_bits && d.ty.lanes.is_multiple_of(2) {
                out.push(interleave_of_halves(&whole, d.ty));
            }
            out.push(Command::Union(narrow.clone(), low(node.ty, whole)));
        }
    }
    // On HVX the input padded to a register is, like an input of that width, made of lane-wise
    // operations each the interleave of its even and odd lanes.
    if let Some(whole) = doublings(input, min_bits).last().filter(|_| inner) {
        let mut nodes = Vec::new();
        whole.walk_distinct(&mut |n| {
            if n.op.is_lanewise() && n.ty.lanes.is_multiple_of(2) && n.ty.bits() >= min_bits {
                nodes.push((ground(n), n.ty));
            }
        });
        for (node, ty) in nodes {
            out.push(interleave_of_halves(&padded(node?), ty));
        }
    }
    // A narrow variable is the low lanes of the register it is read into.
    for (name, ty) in input.vars() {
        if let Some(slice) = low_lanes_of_register(ty, &name, 0, min_bits) {
            out.push(Command::Union(Term::Var { ty, name }, slice));
        }
    }
    Ok(out)
}

/// The lanes of input `name` from `offset`, of type `ty` narrower than `min_bits`, as the low
/// lanes of the register of `min_bits` read from there (lanes past the input's read as
/// zeros, and nothing depends on them).
fn low_lanes_of_register(ty: VecType, name: &str, offset: i64, min_bits: u32) -> Option<Term> {
    (ty.bits() < min_bits && min_bits.is_multiple_of(ty.bits())).then(|| {
        let whole = Term::Part {
            ty: ty.with_lanes(ty.lanes * (min_bits / ty.bits())),
            name: name.to_string(),
            offset,
        };
        op("Slice", ty, vec![0, 1], vec![whole])
    })
}

/// Each part of an input (type, name, offset, the input's lanes) narrower than `min_bits`,
/// as the low lanes of the register read from its offset (the halves of a split input are
/// such parts).
pub fn narrow_parts(parts: &BTreeSet<(VecType, String, i64, u32)>, min_bits: u32) -> Vec<Command> {
    parts
        .iter()
        .filter_map(|(ty, name, offset, _)| {
            let slice = low_lanes_of_register(*ty, name, *offset, min_bits)?;
            let part = Term::Part {
                ty: *ty,
                name: name.clone(),
                offset: *offset,
            };
            Some(Command::Union(part, slice))
        })
        .collect()
}

/// A widening of an input narrower than `min_bits`, at an element type no instruction widens
/// the low lanes of a register to (`low_lane_widenings`: x86's `pmovzxbw` reads an xmm's low
/// half, NEON's `sxtl` a whole D register): the low lanes of the same widening of the register
/// the input is read into, doubling the width at each step and keeping the low lanes that fit
/// a register. NEON's `i16(x_i8)` at four lanes is the low half of `sxtl` of x's D register,
/// `i64(x_i32)` at one lane the low lane of `sxtl` of its two, `i32(x_i8)` at two lanes the low
/// lanes of `sxtl` of the low half of `sxtl`.
pub fn narrow_input_widenings(
    inputs: &BTreeSet<(VecType, String)>,
    target: &Target,
    low_lane_widenings: &BTreeSet<(Elem, u32)>,
) -> Vec<Rewrite> {
    let (min_bits, register_bits) = (target.min_split_bits, target.register_bits);
    let mut out = Vec::new();
    for (s, name) in inputs {
        if !s.elem.is_int() || s.bits() >= min_bits || !min_bits.is_multiple_of(s.bits()) {
            continue;
        }
        let register = s.with_lanes(s.lanes * (min_bits / s.bits()));
        for bits in [16, 32, 64] {
            for signed in [false, true] {
                let Some(elem) = Elem::int(bits, signed).filter(|_| bits > s.elem.bits()) else {
                    continue;
                };
                if low_lane_widenings.contains(&(s.elem, bits)) {
                    continue;
                }
                let Some((ty, widened)) = widened_register(name, register, elem, register_bits)
                else {
                    continue;
                };
                let t = s.with_elem(elem);
                let input = Term::Var {
                    ty: *s,
                    name: name.clone(),
                };
                out.push(Rewrite {
                    ruleset: Ruleset::Lower,
                    source: format!(
                        "{name} to {} is the low lanes of its register's",
                        type_name(t)
                    ),
                    lhs: op("Cast", t, vec![], vec![input]),
                    rhs: if ty == t {
                        widened
                    } else {
                        Term::Lanes {
                            ty: t,
                            offset: 0,
                            arg: Box::new(widened),
                        }
                    },
                    conditions: vec![],
                });
            }
        }
    }
    out
}

/// The register `register` of input `name` widened to `elem`, doubling the width at each step
/// (at the input's signedness, `elem`'s at the last) and keeping the low lanes that fit in
/// `register_bits`, with its type; none where a step has no lanes.
fn widened_register(
    name: &str,
    register: VecType,
    elem: Elem,
    register_bits: u32,
) -> Option<(VecType, Term)> {
    let mut ty = register;
    let mut term = Term::Part {
        ty,
        name: name.to_string(),
        offset: 0,
    };
    while ty.elem.bits() < elem.bits() {
        let bits = 2 * ty.elem.bits();
        let next = if bits == elem.bits() {
            elem
        } else {
            Elem::int(bits, register.elem.is_signed())?
        };
        let lanes = ty.lanes.min(register_bits / bits);
        if lanes == 0 {
            return None;
        }
        if lanes < ty.lanes {
            ty = ty.with_lanes(lanes);
            term = Term::Lanes {
                ty,
                offset: 0,
                arg: Box::new(term),
            };
        }
        ty = ty.with_elem(next);
        term = op("Cast", ty, vec![], vec![term]);
    }
    Some((ty, term))
}

/// `term` with every concatenation of one variable with itself (a doubled variable) read as
/// the variable padded to that many lanes.
pub fn padded(term: Term) -> Term {
    fn variable(t: &Term) -> Option<&str> {
        match t {
            Term::Var { name, .. } => Some(name),
            Term::Op {
                name: "Concat",
                args,
                ..
            } => {
                let (a, b) = (variable(&args[0])?, variable(&args[1])?);
                (a == b).then_some(a)
            }
            _ => None,
        }
    }
    match term {
        Term::Op {
            name: "Concat",
            ty,
            ref args,
            ..
        } if args.len() == 2 && variable(&term).is_some() => Term::Part {
            ty,
            name: variable(&term).unwrap_or_default().to_string(),
            offset: 0,
        },
        other => other.map_operands(padded),
    }
}

/// The inputs (`whole`: type and name) and parts of inputs (`parts`: type, name, offset, the
/// input's lanes) two or more registers wide, each with its two halves, and theirs down to
/// registers (a deal of four registers is two deals of two: HVX's `reduce_max(4, x_i16)`), and
/// the inputs one register wide whose halves a target splits into (NEON's `addp` of a
/// register's two halves): (type, the input or part, its halves).
pub fn register_halves(
    parts: &BTreeSet<(VecType, String, i64, u32)>,
    whole: &BTreeSet<(VecType, String)>,
    target: &Target,
) -> Vec<(VecType, Term, Vec<Term>)> {
    let (register_bits, min_split_bits) = (target.register_bits, target.min_split_bits);
    let splits = |ty: &VecType, whole: bool| {
        ty.bits() >= 2 * register_bits
            || (whole && ty.bits() == register_bits && register_bits / 2 >= min_split_bits)
    };
    let mut pending: Vec<(VecType, &String, Option<i64>)> = parts
        .iter()
        .map(|(ty, name, offset, _)| (*ty, name, Some(*offset)))
        .chain(whole.iter().map(|(ty, name)| (*ty, name, None)))
        .collect();
    let mut out = Vec::new();
    let mut next = 0;
    while let Some(&(ty, name, offset)) = pending.get(next) {
        next += 1;
        if !splits(&ty, offset.is_none()) || !ty.lanes.is_multiple_of(2) {
            continue;
        }
        let half = ty.with_lanes(ty.lanes / 2);
        let part = |ty, offset| Term::Part {
            ty,
            name: name.clone(),
            offset,
        };
        let at = offset.unwrap_or(0);
        let offsets = [at, at + half.lanes as i64];
        if half.bits() >= 2 * register_bits {
            pending.extend(offsets.map(|o| (half, name, Some(o))));
        }
        let halves = offsets.map(|o| part(half, o)).to_vec();
        let input = match offset {
            Some(offset) => part(ty, offset),
            None => Term::Var {
                ty,
                name: name.clone(),
            },
        };
        out.push((ty, input, halves));
    }
    out
}
