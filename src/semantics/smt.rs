//! The z3 encoding: one bitvector per integer lane, a Bool per mask lane, a Real per f32 lane
//! (sqrt is an uninterpreted function), following the interpreter's definitions exactly. The
//! bits of an f32 lane (a bitcast to or from f32) are [`FloatBits`].

use super::bitvec::{
    bv_const, carryless_mod, carryless_mul, euclidean, int_of_halfwords, resize, select_arms,
};
use super::float_bits::FloatBits;
use super::reals::{real_int, real_of_f32, rounded, toward_zero};
use crate::error::{Error, Result};
use crate::ir::{Elem, Expr, Op};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use z3::ast::{Ast, Bool, Dynamic, Real, BV};
use z3::{FuncDecl, Sort};

/// One lane of a symbolic vector.
#[derive(Clone, Debug)]
pub enum Lane {
    Bits(BV),
    Flag(Bool),
    Num(Real),
}

impl Lane {
    pub fn bits(&self) -> &BV {
        match self {
            Lane::Bits(b) => b,
            _ => unreachable!("typing guarantees an integer lane"),
        }
    }

    pub fn flag(&self) -> &Bool {
        match self {
            Lane::Flag(b) => b,
            _ => unreachable!("typing guarantees a mask lane"),
        }
    }

    /// Lane equality as a z3 formula.
    pub fn equals(&self, other: &Lane) -> Bool {
        match (self, other) {
            (Lane::Bits(a), Lane::Bits(b)) => a.eq(b),
            (Lane::Flag(a), Lane::Flag(b)) => a.eq(b),
            (Lane::Num(a), Lane::Num(b)) => a.eq(b),
            _ => unreachable!("lanes of one type"),
        }
    }

    /// `c ? a : b` as a term, `c` taken as it is (a table lookup's tests of a computed index).
    fn choice(c: &Bool, a: &Lane, b: &Lane) -> Lane {
        match (a, b) {
            (Lane::Bits(x), Lane::Bits(y)) => Lane::Bits(c.ite(x, y)),
            (Lane::Flag(x), Lane::Flag(y)) => Lane::Flag(c.ite(x, y)),
            (Lane::Num(x), Lane::Num(y)) => Lane::Num(c.ite(x, y)),
            _ => unreachable!("lanes of one type"),
        }
    }
}

/// Terms of at most this many distinct nodes count as small ([`is_small`]).
const SMALL_TERM: usize = 64;

/// Whether `term` has at most [`SMALL_TERM`] distinct nodes.
fn is_small(term: &Bool) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![Dynamic::from_ast(term)];
    while let Some(node) = stack.pop() {
        if seen.insert(node.clone()) {
            if seen.len() > SMALL_TERM {
                return false;
            }
            stack.extend(node.children());
        }
    }
    true
}

/// Encodes expressions over a shared set of named variables.
pub struct Encoder {
    /// The lanes of every variable encoded so far.
    pub vars: HashMap<String, Vec<Lane>>,
    memo: HashMap<*const Expr, Vec<Lane>>,
    sqrt: FuncDecl,
    /// Integer lanes converted from a real (an f32 lane): the real and the bounds it was
    /// clamped to. A conversion of such a lane that keeps its value, or saturates it further, is
    /// the real converted with those bounds: the same term, so z3 need not relate integers to
    /// bit-vectors (`u8(x_f32)` is `u8_sat(i32(x_f32))` by construction).
    converted: RefCell<HashMap<BV, (Real, i128, i128)>>,
    /// The bits of f32 lanes.
    float_bits: FloatBits,
    /// Small conditions met so far, and their value where they are constant ([`Encoder::ite`]).
    known: RefCell<HashMap<Bool, Option<bool>>>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    pub fn new() -> Encoder {
        let sqrt = FuncDecl::new("sqrt", &[&Sort::real()], &Sort::real());
        Encoder {
            vars: HashMap::new(),
            memo: HashMap::new(),
            sqrt,
            converted: RefCell::new(HashMap::new()),
            float_bits: FloatBits::new(),
            known: RefCell::default(),
        }
    }

    /// `c ? a : b`. A condition known now (a constant control such as an HVX shuffle's Rt)
    /// picks a branch instead of leaving z3 a term to simplify per query. Such a condition is
    /// a small term, met again at every lane: each is simplified once (a call to z3's
    /// simplifier costs a fixed overhead that thousands of lanes add up). A large one (a lane
    /// of a predicate computed from the inputs) is not simplified here.
    fn ite(&self, c: &Bool, a: &Lane, b: &Lane) -> Lane {
        let known = match c.as_bool() {
            Some(value) => Some(value),
            None if is_small(c) => *self
                .known
                .borrow_mut()
                .entry(c.clone())
                .or_insert_with(|| c.simplify().as_bool()),
            None => None,
        };
        match known {
            Some(true) => a.clone(),
            Some(false) => b.clone(),
            None => Lane::choice(c, a, b),
        }
    }

    /// What every query over the lanes encoded so far must assume (assert them in its solver):
    /// the bits of f32 lanes ([`FloatBits`]).
    pub fn axioms(&self) -> Vec<Bool> {
        self.float_bits.axioms()
    }

    /// A fresh lane constant for variable lanes.
    fn var_lane(&self, name: &str, i: u32, elem: Elem) -> Lane {
        let n = format!("{name}[{i}]");
        match elem {
            Elem::Bool => Lane::Flag(Bool::new_const(n)),
            Elem::F32 => Lane::Num(Real::new_const(n)),
            e => Lane::Bits(BV::new_const(n, e.bits())),
        }
    }

    /// A constant lane from raw bits.
    pub fn const_lane(&self, elem: Elem, bits: u128) -> Lane {
        match elem {
            Elem::Bool => Lane::Flag(Bool::from_bool(bits != 0)),
            Elem::F32 => Lane::Num(real_of_f32(f32::from_bits(bits as u32))),
            e => Lane::Bits(bv_const(bits, e.bits())),
        }
    }

    fn encode_shared(&mut self, e: &Rc<Expr>) -> Result<Vec<Lane>> {
        let key = Rc::as_ptr(e);
        if let Some(v) = self.memo.get(&key) {
            return Ok(v.clone());
        }
        let v = self.encode(e)?;
        if Rc::strong_count(e) > 1 {
            self.memo.insert(key, v.clone());
        }
        Ok(v)
    }

    /// The lanes of `e`; variables are created on first use and shared by name.
    pub fn encode(&mut self, e: &Expr) -> Result<Vec<Lane>> {
        let args = e
            .args
            .iter()
            .map(|a| self.encode_shared(a))
            .collect::<Result<Vec<_>>>()?;
        let ty = e.ty;
        let arg_elem = e.args.first().map(|a| a.ty.elem);
        Ok(match &e.op {
            Op::Var(name) => {
                if let Some(v) = self.vars.get(name) {
                    return Ok(v.clone());
                }
                let lanes: Vec<_> = (0..ty.lanes)
                    .map(|i| self.var_lane(name, i, ty.elem))
                    .collect();
                self.vars.insert(name.clone(), lanes.clone());
                lanes
            }
            Op::Const(vals) => (0..ty.lanes as usize)
                .map(|i| self.const_lane(ty.elem, vals[if vals.len() == 1 { 0 } else { i }]))
                .collect(),
            Op::Broadcast(n) => (0..*n).flat_map(|_| args[0].iter().cloned()).collect(),
            Op::Concat => args.concat(),
            Op::Slice {
                start,
                stride,
                lanes,
            } => (0..*lanes)
                .map(|i| args[0][(start + i * stride) as usize].clone())
                .collect(),
            Op::Interleave => {
                let n = args[0].len();
                (0..n * args.len())
                    .map(|i| args[i % args.len()][i / args.len()].clone())
                    .collect()
            }
            Op::Shuffle(idx) => {
                let all = args.concat();
                idx.iter().map(|&i| all[i as usize].clone()).collect()
            }
            Op::Lookup => {
                let table = &args[0];
                let zero = self.const_lane(ty.elem, 0);
                args[1]
                    .iter()
                    .map(|i| {
                        let i = i.bits();
                        if let Some(k) = i.simplify().as_u64() {
                            return table.get(k as usize).cloned().unwrap_or(zero.clone());
                        }
                        let reach = if i.get_size() >= 32 {
                            table.len()
                        } else {
                            table.len().min(1 << i.get_size())
                        };
                        (0..reach).rev().fold(zero.clone(), |acc, j| {
                            let hit = i.eq(bv_const(j as u128, i.get_size()));
                            Lane::choice(&hit, &table[j], &acc)
                        })
                    })
                    .collect()
            }
            Op::ReduceAdd(k) => args[0]
                .chunks(*k as usize)
                .map(|c| {
                    c[1..].iter().fold(c[0].clone(), |acc, x| {
                        self.binary(&Op::Add, ty.elem, &acc, x)
                    })
                })
                .collect(),
            Op::Bitcast(to) => self.bitcast(&args[0], *to),
            Op::Select => (0..ty.lanes as usize)
                .map(|i| self.ite(args[0][i].flag(), &args[1][i], &args[2][i]))
                .collect(),
            Op::Compress => {
                let before = set_lanes_before(&args[0]);
                let zero = self.const_lane(ty.elem, 0);
                // Lane j is the lane i >= j that is set and has j set lanes before it.
                (0..args[1].len())
                    .map(|j| {
                        (j..args[1].len()).rev().fold(zero.clone(), |acc, i| {
                            let lands = Bool::and(&[
                                args[0][i].flag(),
                                &before[i].eq(bv_const(j as u128, COUNT_BITS)),
                            ]);
                            self.ite(&lands, &args[1][i], &acc)
                        })
                    })
                    .collect()
            }
            Op::Expand => {
                let before = set_lanes_before(&args[0]);
                let zero = self.const_lane(ty.elem, 0);
                // A set lane i takes lane j of x, j being the number of set lanes before i.
                (0..args[1].len())
                    .map(|i| {
                        let taken = (0..=i).rev().fold(zero.clone(), |acc, j| {
                            let hit = before[i].eq(bv_const(j as u128, COUNT_BITS));
                            self.ite(&hit, &args[1][j], &acc)
                        });
                        self.ite(args[0][i].flag(), &taken, &zero)
                    })
                    .collect()
            }
            Op::Cast(to) => args[0]
                .iter()
                .map(|x| self.cast(arg_elem.unwrap(), *to, x))
                .collect(),
            Op::SatCast(to) => args[0]
                .iter()
                .map(|x| self.sat_cast(arg_elem.unwrap(), *to, x))
                .collect(),
            op if op.arity() == Some(1) => args[0]
                .iter()
                .map(|x| self.unary(op, arg_elem.unwrap(), x))
                .collect(),
            op => (0..args[0].len())
                .map(|i| self.binary(op, arg_elem.unwrap(), &args[0][i], &args[1][i]))
                .collect(),
        })
    }

    fn unary(&self, op: &Op, elem: Elem, x: &Lane) -> Lane {
        match x {
            Lane::Flag(b) => Lane::Flag(b.not()),
            Lane::Num(r) => {
                let zero = real_int(0);
                Lane::Num(match op {
                    Op::Neg => r.unary_minus(),
                    Op::Abs => r.lt(&zero).ite(&r.unary_minus(), r),
                    Op::Sqrt => self.sqrt.apply(&[r]).as_real().unwrap(),
                    Op::Sgn => r
                        .gt(&zero)
                        .ite(&real_int(1), &r.lt(&zero).ite(&real_int(-1), &zero)),
                    op if op.is_rounding() => rounded(op, r),
                    _ => unreachable!("typing admits no other f32 unary op"),
                })
            }
            Lane::Bits(b) => {
                let w = b.get_size();
                Lane::Bits(match op {
                    Op::Neg => b.bvneg(),
                    Op::Not => b.bvnot(),
                    Op::Abs if elem.is_signed() => b.bvslt(BV::from_u64(0, w)).ite(&b.bvneg(), b),
                    Op::Abs => b.clone(),
                    Op::Popcount => (0..w).fold(BV::from_u64(0, w), |acc, i| {
                        acc.bvadd(b.extract(i, i).zero_ext(w - 1))
                    }),
                    Op::Clz => (0..w).fold(BV::from_u64(w as u64, w), |acc, i| {
                        b.extract(i, i)
                            .eq(BV::from_u64(1, 1))
                            .ite(&BV::from_u64((w - 1 - i) as u64, w), &acc)
                    }),
                    _ => unreachable!("typing admits no other unary op"),
                })
            }
        }
    }

    fn binary(&self, op: &Op, elem: Elem, a: &Lane, b: &Lane) -> Lane {
        match (a, b) {
            (Lane::Flag(x), Lane::Flag(y)) => Lane::Flag(match op {
                Op::And => Bool::and(&[x, y]),
                Op::Or => Bool::or(&[x, y]),
                Op::Xor => x.xor(y),
                Op::Eq => x.eq(y),
                Op::Ne => x.eq(y).not(),
                _ => unreachable!("typing admits no other mask op"),
            }),
            (Lane::Num(x), Lane::Num(y)) => match op {
                Op::Add => Lane::Num(Real::add(&[x, y])),
                Op::Sub => Lane::Num(Real::sub(&[x, y])),
                Op::Mul => Lane::Num(Real::mul(&[x, y])),
                Op::Div => Lane::Num(x.div(y)),
                Op::Min => Lane::Num(x.le(y).ite(x, y)),
                Op::Max => Lane::Num(x.ge(y).ite(x, y)),
                Op::Eq => Lane::Flag(x.eq(y)),
                Op::Ne => Lane::Flag(x.eq(y).not()),
                Op::Lt => Lane::Flag(x.lt(y)),
                Op::Le => Lane::Flag(x.le(y)),
                Op::Gt => Lane::Flag(x.gt(y)),
                Op::Ge => Lane::Flag(x.ge(y)),
                _ => unreachable!("typing admits no other f32 op"),
            },
            (Lane::Bits(x), Lane::Bits(y)) => {
                let s = elem.is_signed();
                let lt = if s { x.bvslt(y) } else { x.bvult(y) };
                let le = if s { x.bvsle(y) } else { x.bvule(y) };
                match op {
                    Op::Add => Lane::Bits(x.bvadd(y)),
                    Op::Sub => Lane::Bits(x.bvsub(y)),
                    Op::Mul => Lane::Bits(x.bvmul(y)),
                    Op::And => Lane::Bits(x.bvand(y)),
                    Op::Or => Lane::Bits(x.bvor(y)),
                    Op::Xor => Lane::Bits(x.bvxor(y)),
                    Op::Clmul => Lane::Bits(carryless_mul(x, y)),
                    Op::Clmod => Lane::Bits(carryless_mod(x, y)),
                    Op::Div | Op::Mod => Lane::Bits(euclidean(*op == Op::Div, s, x, y)),
                    Op::Shl => Lane::Bits(x.bvshl(y)),
                    Op::Shr if s => Lane::Bits(x.bvashr(y)),
                    Op::Shr => Lane::Bits(x.bvlshr(y)),
                    Op::Min => Lane::Bits(le.ite(x, y)),
                    Op::Max => Lane::Bits(le.ite(y, x)),
                    Op::Eq => Lane::Flag(x.eq(y)),
                    Op::Ne => Lane::Flag(x.eq(y).not()),
                    Op::Lt => Lane::Flag(lt),
                    Op::Le => Lane::Flag(le),
                    Op::Gt => Lane::Flag(le.not()),
                    Op::Ge => Lane::Flag(lt.not()),
                    _ => unreachable!("typing admits no other integer op"),
                }
            }
            _ => unreachable!("operands of one type"),
        }
    }

    /// `r` clamped to `lo..=hi` (within `to`'s range) and rounded toward zero, as a `to` lane.
    fn converted_real(&self, r: &Real, lo: i128, hi: i128, to: Elem) -> Lane {
        let bits = toward_zero(r, lo, hi, to.bits());
        self.converted
            .borrow_mut()
            .insert(bits.clone(), (r.clone(), lo, hi));
        Lane::Bits(bits)
    }

    fn cast(&self, from: Elem, to: Elem, x: &Lane) -> Lane {
        match (x, to) {
            // Over the reals an integer converts exactly (f32 rounding is not modelled).
            (Lane::Bits(b), Elem::F32) => {
                Lane::Num(Real::from_int(&int_of_halfwords(b, from.is_signed())))
            }
            // Toward zero, saturating at the type's bounds.
            (Lane::Num(r), to) if to != Elem::F32 => {
                self.converted_real(r, to.min_value(), to.max_value(), to)
            }
            (Lane::Bits(b), to) if to != Elem::Bool => {
                if let Some(pushed) = self.through_selects(b, &|arm| self.cast(from, to, arm)) {
                    return pushed;
                }
                let origin = self.converted.borrow().get(b).cloned();
                match origin {
                    // A conversion keeping the value of a converted real.
                    Some((r, lo, hi)) if lo >= to.min_value() && hi <= to.max_value() => {
                        self.converted_real(&r, lo, hi, to)
                    }
                    _ => Lane::Bits(resize(b, from.is_signed(), to.bits())),
                }
            }
            (Lane::Num(_), _) => x.clone(),
            (Lane::Flag(f), to) => {
                Lane::Bits(f.ite(&BV::from_u64(1, to.bits()), &BV::from_u64(0, to.bits())))
            }
            (Lane::Bits(b), Elem::Bool) => Lane::Flag(b.eq(BV::from_u64(0, b.get_size())).not()),
            (Lane::Bits(b), to) => Lane::Bits(resize(b, from.is_signed(), to.bits())),
        }
    }

    /// A conversion of a select whose arms hold a converted real (an `ite` of bit-vectors, as a
    /// saturating narrowing of x86's fixed-up `cvttps2dq` has it) as the select of the arms'
    /// conversions, so each converted arm is the same term as the input's conversion of the
    /// real: z3 then need not relate the arm's `int2bv` to another width's, which took it
    /// minutes. None where no arm holds a converted real.
    fn through_selects(&self, b: &BV, convert: &dyn Fn(&Lane) -> Lane) -> Option<Lane> {
        let converted = |b: &BV| self.converted.borrow().contains_key(b);
        fn holds(b: &BV, converted: &dyn Fn(&BV) -> bool) -> bool {
            converted(b)
                || select_arms(b)
                    .is_some_and(|(_, t, e)| holds(&t, converted) || holds(&e, converted))
        }
        fn pushed(b: &BV, converted: &dyn Fn(&BV) -> bool, convert: &dyn Fn(&Lane) -> Lane) -> BV {
            match select_arms(b) {
                Some((c, t, e)) if !converted(b) => c.ite(
                    &pushed(&t, converted, convert),
                    &pushed(&e, converted, convert),
                ),
                _ => convert(&Lane::Bits(b.clone())).bits().clone(),
            }
        }
        (!converted(b) && holds(b, &converted)).then(|| Lane::Bits(pushed(b, &converted, convert)))
    }

    fn sat_cast(&self, from: Elem, to: Elem, x: &Lane) -> Lane {
        let origin = self.converted.borrow().get(x.bits()).cloned();
        if let Some((r, lo, hi)) = origin {
            let (lo, hi) = (lo.max(to.min_value()), hi.min(to.max_value()));
            if lo <= hi {
                return self.converted_real(&r, lo, hi, to);
            }
        }
        if let Some(pushed) = self.through_selects(x.bits(), &|arm| self.sat_cast(from, to, arm)) {
            return pushed;
        }
        // Compare in a width that holds both ranges exactly.
        let w = from.bits().max(to.bits()) + 2;
        let v = resize(x.bits(), from.is_signed(), w);
        let lo = int_const(to.min_value(), w);
        let hi = if to == Elem::U128 {
            bv_const(u128::MAX, 128).zero_ext(w - 128)
        } else {
            int_const(to.max_value(), w)
        };
        let clamped = v.bvslt(&lo).ite(&lo, &v.bvsgt(&hi).ite(&hi, &v));
        Lane::Bits(clamped.extract(to.bits() - 1, 0))
    }

    fn bitcast(&self, lanes: &[Lane], to: Elem) -> Vec<Lane> {
        let as_bits: Vec<BV> = lanes
            .iter()
            .map(|l| match l {
                Lane::Flag(f) => f.ite(&BV::from_u64(1, 1), &BV::from_u64(0, 1)),
                Lane::Num(r) => self.float_bits.bits_of_real(r),
                Lane::Bits(b) => b.clone(),
            })
            .collect();
        // Lane 0 is the least significant: concatenate from the last lane down.
        let all = as_bits
            .iter()
            .rev()
            .skip(1)
            .fold(as_bits.last().unwrap().clone(), |acc, x| acc.concat(x));
        let w = to.bits();
        (0..all.get_size() / w)
            .map(|i| {
                let piece = all.extract((i + 1) * w - 1, i * w);
                match to {
                    Elem::Bool => Lane::Flag(piece.eq(BV::from_u64(1, 1))),
                    Elem::F32 => Lane::Num(self.float_bits.real_of_bits(&piece)),
                    _ => Lane::Bits(piece),
                }
            })
            .collect()
    }
}

/// Width of the lane counts of compress and expand: more than any vector's lane count.
const COUNT_BITS: u32 = 16;

/// For each lane i of a mask, the number of set lanes before it.
fn set_lanes_before(mask: &[Lane]) -> Vec<BV> {
    let (one, zero) = (bv_const(1, COUNT_BITS), bv_const(0, COUNT_BITS));
    let mut count = zero.clone();
    mask.iter()
        .map(|m| {
            let here = count.clone();
            count = count.bvadd(m.flag().ite(&one, &zero));
            here
        })
        .collect()
}

/// A two's-complement constant of `width` bits holding `value`.
fn int_const(value: i128, width: u32) -> BV {
    if width <= 128 {
        bv_const(value as u128, width)
    } else {
        bv_const(value as u128, 128).sign_ext(width - 128)
    }
}

/// A model's value of a bitvector lane, as raw bits.
pub fn lane_bits_of(b: &BV) -> u128 {
    if let Some(v) = b.as_u64() {
        return v as u128;
    }
    let w = b.get_size();
    let hi = b.extract(w - 1, 64).simplify().as_u64().unwrap_or(0) as u128;
    let lo = b.extract(63, 0).simplify().as_u64().unwrap_or(0) as u128;
    hi << 64 | lo
}

/// Evaluates `e` through the z3 encoding with every variable fixed to its value in `env`, so
/// z3's own simplifier computes each lane: the cross-check of the encoding against the
/// interpreter. f32 lanes come back as the nearest f32 to z3's exact rational.
pub fn eval_with_z3(e: &Expr, env: &crate::semantics::Env) -> Result<crate::semantics::Value> {
    let mut enc = Encoder::new();
    for (name, ty) in e.vars() {
        let v = env
            .get(&name)
            .ok_or_else(|| Error::Usage(format!("no value for variable '{name}'")))?;
        let lanes = v
            .lanes
            .iter()
            .map(|&bits| enc.const_lane(ty.elem, bits))
            .collect();
        enc.vars.insert(name, lanes);
    }
    let lanes = enc
        .encode(e)?
        .iter()
        .map(|lane| match lane {
            Lane::Bits(b) => Ok(lane_bits_of(&b.simplify())),
            Lane::Flag(f) => f
                .simplify()
                .as_bool()
                .map(u128::from)
                .ok_or_else(|| Error::Tool("z3 left a mask lane symbolic".into())),
            Lane::Num(r) => {
                let (n, d) = r
                    .simplify()
                    .as_rational()
                    .ok_or_else(|| Error::Tool("z3 left an f32 lane symbolic".into()))?;
                Ok((n as f64 / d as f64) as f32).map(|x| x.to_bits() as u128)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(crate::semantics::Value::new(e.ty, lanes))
}
