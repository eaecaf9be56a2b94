//! The concrete interpreter: exact wrap-around integer arithmetic, Halide's cast and saturating
//! cast, IEEE f32. Shared subtrees (from `let` and macros) are evaluated once.

use super::value::Value;
use crate::error::{Error, Result};
use crate::ir::print::sign_extend;
use crate::ir::{Elem, Expr, Op, VecType};
use std::collections::HashMap;
use std::rc::Rc;

/// Variable bindings for one evaluation.
pub type Env = HashMap<String, Value>;

/// Evaluates `e` with its variables bound in `env`.
pub fn eval(e: &Expr, env: &Env) -> Result<Value> {
    Interp {
        env,
        memo: HashMap::new(),
        every_node: false,
    }
    .eval(e)
}

/// Evaluates `e` with its variables bound in `env`: the value of each of its nodes, by address.
pub fn eval_every_node(e: &Rc<Expr>, env: &Env) -> Result<HashMap<*const Expr, Value>> {
    let mut interp = Interp {
        env,
        memo: HashMap::new(),
        every_node: true,
    };
    interp.eval_shared(e)?;
    Ok(interp.memo)
}

struct Interp<'a> {
    env: &'a Env,
    /// The values of shared nodes (of every node with `every_node`).
    memo: HashMap<*const Expr, Value>,
    every_node: bool,
}

impl Interp<'_> {
    fn eval_shared(&mut self, e: &Rc<Expr>) -> Result<Value> {
        let key = Rc::as_ptr(e);
        if let Some(v) = self.memo.get(&key) {
            return Ok(v.clone());
        }
        let v = self.eval(e)?;
        if self.every_node || Rc::strong_count(e) > 1 {
            self.memo.insert(key, v.clone());
        }
        Ok(v)
    }

    fn eval(&mut self, e: &Expr) -> Result<Value> {
        let args = e
            .args
            .iter()
            .map(|a| self.eval_shared(a))
            .collect::<Result<Vec<_>>>()?;
        let ty = e.ty;
        let lanes = match &e.op {
            Op::Var(name) => {
                let v = self
                    .env
                    .get(name)
                    .ok_or_else(|| Error::Usage(format!("no value for variable '{name}'")))?;
                if v.ty != ty {
                    return Err(Error::Usage(format!(
                        "variable '{name}' is {ty}, but its value is {}",
                        v.ty
                    )));
                }
                return Ok(v.clone());
            }
            Op::Const(vals) if vals.len() == 1 => vec![vals[0]; ty.lanes as usize],
            Op::Const(vals) => vals.clone(),
            Op::Broadcast(n) => (0..*n)
                .flat_map(|_| args[0].lanes.iter().copied())
                .collect(),
            Op::Concat => args.iter().flat_map(|a| a.lanes.iter().copied()).collect(),
            Op::Slice {
                start,
                stride,
                lanes,
            } => (0..*lanes)
                .map(|i| args[0].lanes[(start + i * stride) as usize])
                .collect(),
            Op::Interleave => {
                let n = args[0].lanes.len();
                (0..n * args.len())
                    .map(|i| args[i % args.len()].lanes[i / args.len()])
                    .collect()
            }
            Op::Shuffle(idx) => {
                let all: Vec<u128> = args.iter().flat_map(|a| a.lanes.iter().copied()).collect();
                idx.iter().map(|&i| all[i as usize]).collect()
            }
            Op::Lookup => {
                let table = &args[0].lanes;
                args[1]
                    .lanes
                    .iter()
                    .map(|&i| table.get(i as usize).copied().unwrap_or(0))
                    .collect()
            }
            Op::ReduceAdd(k) => {
                let elem = args[0].ty.elem;
                args[0]
                    .lanes
                    .chunks(*k as usize)
                    // From the first lane, not from 0: -0 + -0 is -0 in f32.
                    .map(|c| {
                        c[1..]
                            .iter()
                            .fold(c[0], |acc, &x| binary(&Op::Add, elem, acc, x))
                    })
                    .collect()
            }
            Op::Bitcast(_) => return Ok(bitcast(&args[0], ty)),
            Op::Select => (0..ty.lanes as usize)
                .map(|i| {
                    if args[0].lanes[i] != 0 {
                        args[1].lanes[i]
                    } else {
                        args[2].lanes[i]
                    }
                })
                .collect(),
            Op::Compress => {
                let mut packed: Vec<u128> = args[0]
                    .lanes
                    .iter()
                    .zip(&args[1].lanes)
                    .filter(|(m, _)| **m != 0)
                    .map(|(_, x)| *x)
                    .collect();
                packed.resize(ty.lanes as usize, zero(ty.elem));
                packed
            }
            Op::Expand => {
                let mut next = args[1].lanes.iter();
                args[0]
                    .lanes
                    .iter()
                    .map(|&m| match m {
                        0 => zero(ty.elem),
                        _ => *next.next().expect("no more set mask lanes than lanes"),
                    })
                    .collect()
            }
            Op::Cast(to) => args[0]
                .lanes
                .iter()
                .map(|&x| cast(args[0].ty.elem, *to, x))
                .collect(),
            Op::SatCast(to) => args[0]
                .lanes
                .iter()
                .map(|&x| sat_cast(args[0].ty.elem, *to, x))
                .collect(),
            op if op.arity() == Some(1) => {
                let elem = args[0].ty.elem;
                args[0].lanes.iter().map(|&x| unary(op, elem, x)).collect()
            }
            op => {
                let elem = args[0].ty.elem;
                (0..ty.lanes as usize)
                    .map(|i| binary(op, elem, args[0].lanes[i], args[1].lanes[i]))
                    .collect()
            }
        };
        Ok(Value::new(ty, lanes))
    }
}

fn zero(elem: Elem) -> u128 {
    if elem == Elem::F32 {
        0f32.to_bits() as u128
    } else {
        0
    }
}

fn f(x: u128) -> f32 {
    f32::from_bits(x as u32)
}

fn fb(x: f32) -> u128 {
    x.to_bits() as u128
}

fn unary(op: &Op, elem: Elem, x: u128) -> u128 {
    let m = elem.mask();
    if elem == Elem::F32 {
        let v = f(x);
        return fb(match op {
            Op::Neg => -v,
            Op::Abs => v.abs(),
            Op::Sqrt => v.sqrt(),
            Op::Floor => v.floor(),
            Op::Ceil => v.ceil(),
            Op::Trunc => v.trunc(),
            Op::Round => v.round_ties_even(),
            Op::RoundAway => v.round(),
            Op::Sgn => {
                if v > 0.0 {
                    1.0
                } else if v < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            _ => unreachable!("typing admits no other f32 unary op"),
        });
    }
    let bits = elem.bits();
    match op {
        Op::Neg => x.wrapping_neg() & m,
        Op::Not if elem == Elem::Bool => x ^ 1,
        Op::Not => !x & m,
        Op::Abs if elem.is_signed() => sign_extend(x, bits).wrapping_abs() as u128 & m,
        Op::Abs => x,
        Op::Popcount => x.count_ones() as u128,
        Op::Clz => (x.leading_zeros() - (128 - bits)) as u128,
        _ => unreachable!("typing admits no other unary op"),
    }
}

/// IEEE-754 minNum (`smaller`) or maxNum: a quiet NaN gives the other operand, a signalling
/// NaN gives NaN, and -0 is below +0 (AArch64's fminnm/fmaxnm).
fn min_num(x: f32, y: f32, smaller: bool) -> f32 {
    let signalling = |v: f32| v.is_nan() && v.to_bits() & 0x0040_0000 == 0;
    if signalling(x) || signalling(y) {
        return f32::NAN;
    }
    if x.is_nan() {
        return y;
    }
    if y.is_nan() {
        return x;
    }
    let x_first = if x == y {
        // Equal values differ only in the sign of zero: -0 is the smaller.
        x.is_sign_negative() == smaller
    } else {
        (x < y) == smaller
    };
    if x_first {
        x
    } else {
        y
    }
}

fn binary(op: &Op, elem: Elem, a: u128, b: u128) -> u128 {
    if elem == Elem::F32 {
        let (x, y) = (f(a), f(b));
        return match op {
            Op::Add => fb(x + y),
            Op::Sub => fb(x - y),
            Op::Mul => fb(x * y),
            Op::Div => fb(x / y),
            Op::Min => fb(min_num(x, y, true)),
            Op::Max => fb(min_num(x, y, false)),
            _ => compare(op, x.partial_cmp(&y)) as u128,
        };
    }
    let m = elem.mask();
    let bits = elem.bits();
    let ordering = || {
        if elem.is_signed() {
            sign_extend(a, bits).cmp(&sign_extend(b, bits))
        } else {
            a.cmp(&b)
        }
    };
    match op {
        Op::Add => a.wrapping_add(b) & m,
        Op::Sub => a.wrapping_sub(b) & m,
        Op::Mul => a.wrapping_mul(b) & m,
        Op::And => a & b,
        Op::Or => a | b,
        Op::Xor => a ^ b,
        Op::Clmul => carryless_mul(a, b) & m,
        Op::Clmod => carryless_mod(a, b),
        // Halide's: Euclidean, zero by a zero divisor, the quotient wrapped (MIN / -1 = MIN).
        Op::Div | Op::Mod if b == 0 => 0,
        Op::Div if elem.is_signed() => {
            sign_extend(a, bits).div_euclid(sign_extend(b, bits)) as u128 & m
        }
        Op::Div => a / b,
        Op::Mod if elem.is_signed() => {
            sign_extend(a, bits).rem_euclid(sign_extend(b, bits)) as u128 & m
        }
        Op::Mod => a % b,
        Op::Shl if b >= bits as u128 => 0,
        Op::Shl => (a << b) & m,
        Op::Shr if elem.is_signed() => {
            (sign_extend(a, bits) >> b.min(bits as u128 - 1)) as u128 & m
        }
        Op::Shr if b >= bits as u128 => 0,
        Op::Shr => a >> b,
        Op::Min => {
            if ordering().is_le() {
                a
            } else {
                b
            }
        }
        Op::Max => {
            if ordering().is_ge() {
                a
            } else {
                b
            }
        }
        _ => compare(op, Some(ordering())) as u128,
    }
}

/// The carry-less product of a and b (its bits above 128 dropped).
fn carryless_mul(a: u128, b: u128) -> u128 {
    (0..128)
        .filter(|i| b >> i & 1 == 1)
        .fold(0, |acc, i| acc ^ (a << i))
}

/// The remainder of a divided by m as GF(2) polynomials; a when m is zero.
fn carryless_mod(a: u128, m: u128) -> u128 {
    if m == 0 {
        return a;
    }
    let degree = 127 - m.leading_zeros();
    (degree..128).rev().fold(a, |r, i| {
        if r >> i & 1 == 1 {
            r ^ (m << (i - degree))
        } else {
            r
        }
    })
}

fn compare(op: &Op, ord: Option<std::cmp::Ordering>) -> bool {
    let Some(o) = ord else {
        return matches!(op, Op::Ne);
    };
    match op {
        Op::Eq => o.is_eq(),
        Op::Ne => o.is_ne(),
        Op::Lt => o.is_lt(),
        Op::Le => o.is_le(),
        Op::Gt => o.is_gt(),
        Op::Ge => o.is_ge(),
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

/// Halide's cast: extend by the source's signedness, or truncate; to bool is `!= 0`.
pub fn cast(from: Elem, to: Elem, x: u128) -> u128 {
    if to == Elem::Bool {
        return (x != 0) as u128;
    }
    if from == to {
        return x;
    }
    if to == Elem::F32 {
        // The nearest f32 (ties to even).
        let v = if from.is_signed() {
            sign_extend(x, from.bits()) as f32
        } else {
            x as f32
        };
        return fb(v);
    }
    if from == Elem::F32 {
        // Toward zero, saturating at the type's bounds; NaN is 0 (AArch64's fcvtzs/fcvtzu).
        let v = f(x) as f64;
        let (lo, hi) = (to.min_value() as f64, to.max_value() as f64);
        let t = if v.is_nan() {
            0
        } else if v <= lo {
            to.min_value()
        } else if v >= hi {
            to.max_value()
        } else {
            v.trunc() as i128
        };
        return t as u128 & to.mask();
    }
    let wide = if from.is_signed() {
        sign_extend(x, from.bits()) as u128
    } else {
        x
    };
    wide & to.mask()
}

/// Clamps to the destination's range, then casts.
pub fn sat_cast(from: Elem, to: Elem, x: u128) -> u128 {
    let (lo, hi) = (to.min_value(), to.max_value());
    let clamped = if from.is_signed() {
        sign_extend(x, from.bits()).clamp(lo, hi) as u128
    } else {
        x.min(hi as u128)
    };
    clamped & to.mask()
}

/// The lanes' bits read as lanes of `ty`. Every lane width is a power of two: a lane splits into
/// whole narrower lanes, or whole lanes join into a wider one.
fn bitcast(v: &Value, ty: VecType) -> Value {
    let (from, to) = (v.ty.elem.bits(), ty.elem.bits());
    let low = |bits: u32| u128::MAX >> (128 - bits);
    let out = if from >= to {
        v.lanes
            .iter()
            .flat_map(|&lane| (0..from / to).map(move |k| lane >> (k * to) & low(to)))
            .collect()
    } else {
        v.lanes
            .chunks((to / from) as usize)
            .map(|c| {
                c.iter().enumerate().fold(0, |acc, (k, &lane)| {
                    acc | (lane & low(from)) << (k as u32 * from)
                })
            })
            .collect()
    };
    Value::new(ty, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every pair of lane widths, on random bits: each bit lands where the bit-by-bit reading
    /// puts it (bit `i` of lane `l` is bit `l * from + i` of the register).
    #[test]
    fn bitcast_moves_every_bit_to_its_place_in_the_register() {
        let elems = [
            Elem::Bool,
            Elem::U8,
            Elem::I16,
            Elem::U32,
            Elem::I64,
            Elem::U128,
        ];
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for from in elems {
            for to in elems {
                let register = 256;
                let source = VecType::new(register / from.bits(), from);
                let target = VecType::new(register / to.bits(), to);
                let lanes: Vec<u128> = (0..source.lanes)
                    .map(|_| rng.gen::<u128>() & from.mask())
                    .collect();
                let mut expected = vec![0u128; target.lanes as usize];
                for (l, lane) in lanes.iter().enumerate() {
                    for i in 0..from.bits() {
                        let at = l as u32 * from.bits() + i;
                        expected[(at / to.bits()) as usize] |= (lane >> i & 1) << (at % to.bits());
                    }
                }
                let got = bitcast(&Value::new(source, lanes), target);
                assert_eq!(got.lanes, expected, "{from} to {to}");
            }
        }
    }

    /// f32 min/max are IEEE minNum/maxNum (-0 below +0, a quiet NaN ignored, a signalling one
    /// NaN); conversions to integers round toward zero and saturate, NaN giving 0.
    #[test]
    fn f32_min_max_and_conversions_have_one_meaning() {
        let bits = |x: f32| x.to_bits() as u128;
        let min =
            |x: f32, y: f32| f32::from_bits(binary(&Op::Min, Elem::F32, bits(x), bits(y)) as u32);
        let max =
            |x: f32, y: f32| f32::from_bits(binary(&Op::Max, Elem::F32, bits(x), bits(y)) as u32);
        assert!(min(0.0, -0.0).is_sign_negative() && min(-0.0, 0.0).is_sign_negative());
        assert!(max(0.0, -0.0).is_sign_positive() && max(-0.0, 0.0).is_sign_positive());
        assert_eq!(min(f32::NAN, 2.0), 2.0);
        assert_eq!(max(3.0, f32::NAN), 3.0);
        let signalling = f32::from_bits(0x7f80_0001);
        assert!(min(signalling, 2.0).is_nan() && max(1.0, signalling).is_nan());
        let to_i8 = |x: f32| cast(Elem::F32, Elem::I8, bits(x)) as u8 as i8;
        assert_eq!(
            [to_i8(-1.9), to_i8(1.9), to_i8(300.0), to_i8(-1e30)],
            [-1, 1, 127, -128]
        );
        assert_eq!(to_i8(f32::NAN), 0);
        assert_eq!(cast(Elem::F32, Elem::U32, bits(-5.0)), 0);
        assert_eq!(cast(Elem::I32, Elem::F32, 16_777_217), bits(16_777_216.0));
    }
}
