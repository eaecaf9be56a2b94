//! The terms Isaria's rule search enumerates over the dialect, at one lane (its lane
//! reduction): scalar terms over wildcards and the literals 0 and 1; vector terms over opaque
//! vector wildcards; and each vector term's lane-generalized packing, `(Vec L ...)` against the
//! term with every wildcard a `(Vec x ...)`, where `L` is what the term computes in one lane.
//! Terms are told apart by [`fingerprint`]: their values at sample points over a prime field,
//! `sqrt` and `sgn` (and division by zero) read as fixed random functions, so two terms agree
//! exactly when they are the same rational function of the uninterpreted parts, as z3 proves
//! them over the reals.

use crate::kernel::rule::Pat;
use crate::kernel::term::Op;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// The wildcards terms range over.
pub const WILDCARDS: [&str; 3] = ["a", "b", "c"];
/// The literals of scalar terms.
pub const LITERALS: [i64; 2] = [0, 1];
const SCALAR_BINARY: [Op; 4] = [Op::Add, Op::Sub, Op::Mul, Op::Div];
const SCALAR_UNARY: [Op; 3] = [Op::Neg, Op::Sqrt, Op::Sgn];
const VECTOR_BINARY: [Op; 4] = [Op::VecAdd, Op::VecMinus, Op::VecMul, Op::VecDiv];
const VECTOR_UNARY: [Op; 3] = [Op::VecNeg, Op::VecSqrt, Op::VecSgn];

/// The nodes of a term; a `(Vec P ...)` counts one node besides `P`.
pub fn size(p: &Pat) -> usize {
    match p {
        Pat::Wild(_) | Pat::Num(_) => 1,
        Pat::App(_, args) => 1 + args.iter().map(size).sum::<usize>(),
        Pat::Lanes(p) => 1 + size(p),
    }
}

/// The rule-file text of a term.
pub fn text(p: &Pat) -> String {
    match p {
        Pat::Wild(w) => w.clone(),
        Pat::Num(n) => n.to_string(),
        Pat::App(op, args) => {
            let args: Vec<String> = args.iter().map(text).collect();
            format!("({} {})", op.name(), args.join(" "))
        }
        Pat::Lanes(p) => format!("(Vec {} ...)", text(p)),
    }
}

/// Every term of at most `max_size` nodes whose leaves are `leaves`, built with the unary,
/// binary and (for vectors) ternary operators given; smallest first.
fn terms(
    leaves: Vec<Pat>,
    unary: &[Op],
    binary: &[Op],
    ternary: &[Op],
    max_size: usize,
) -> Vec<Pat> {
    let mut by_size: Vec<Vec<Pat>> = vec![Vec::new(), leaves];
    for n in 2..=max_size {
        let mut here = Vec::new();
        for &op in unary {
            here.extend(by_size[n - 1].iter().map(|a| Pat::App(op, vec![a.clone()])));
        }
        for i in 1..n - 1 {
            for &op in binary {
                for a in &by_size[i] {
                    for b in &by_size[n - 1 - i] {
                        here.push(Pat::App(op, vec![a.clone(), b.clone()]));
                    }
                }
            }
        }
        for i in 1..n.saturating_sub(2) {
            for j in 1..n - 1 - i {
                let k = n - 1 - i - j;
                for &op in ternary {
                    for a in &by_size[i] {
                        for b in &by_size[j] {
                            for c in &by_size[k] {
                                here.push(Pat::App(op, vec![a.clone(), b.clone(), c.clone()]));
                            }
                        }
                    }
                }
            }
        }
        by_size.push(here);
    }
    by_size.into_iter().flatten().collect()
}

fn wildcards() -> impl Iterator<Item = Pat> {
    WILDCARDS.iter().map(|w| Pat::Wild(w.to_string()))
}

/// Scalar terms over the wildcards and literals.
pub fn scalar_terms(max_size: usize) -> Vec<Pat> {
    let leaves = wildcards()
        .chain(LITERALS.iter().map(|&n| Pat::Num(n)))
        .collect();
    terms(leaves, &SCALAR_UNARY, &SCALAR_BINARY, &[], max_size)
}

/// Vector terms over opaque vector wildcards.
pub fn vector_terms(max_size: usize) -> Vec<Pat> {
    terms(
        wildcards().collect(),
        &VECTOR_UNARY,
        &VECTOR_BINARY,
        &[Op::VecMAC],
        max_size,
    )
}

/// What a vector term computes in one lane, as a scalar term (`VecMAC acc a b` is
/// `(+ acc (* a b))`).
pub fn lane_meaning(v: &Pat) -> Pat {
    match v {
        Pat::App(Op::VecMAC, args) => {
            let m: Vec<Pat> = args.iter().map(lane_meaning).collect();
            Pat::App(
                Op::Add,
                vec![
                    m[0].clone(),
                    Pat::App(Op::Mul, vec![m[1].clone(), m[2].clone()]),
                ],
            )
        }
        Pat::App(op, args) => Pat::App(
            op.scalar_of().unwrap_or(*op),
            args.iter().map(lane_meaning).collect(),
        ),
        other => other.clone(),
    }
}

/// The vector term with every wildcard a `(Vec x ...)` of lane-wise wildcards.
pub fn packed(v: &Pat) -> Pat {
    match v {
        Pat::Wild(_) => Pat::Lanes(Box::new(v.clone())),
        Pat::App(op, args) => Pat::App(*op, args.iter().map(packed).collect()),
        other => other.clone(),
    }
}

/// The wildcards of a term.
pub fn wildcards_of(p: &Pat, out: &mut BTreeSet<String>) {
    match p {
        Pat::Wild(w) => {
            out.insert(w.clone());
        }
        Pat::Num(_) => {}
        Pat::App(_, args) => args.iter().for_each(|a| wildcards_of(a, out)),
        Pat::Lanes(p) => wildcards_of(p, out),
    }
}

/// Arithmetic modulo the Mersenne prime 2^61 - 1.
const P: u64 = (1 << 61) - 1;

fn mul(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

fn inverse(a: u64) -> u64 {
    let (mut base, mut e, mut r) = (a, P - 2, 1u64);
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    r
}

/// A fixed random function of one field element per uninterpreted operation.
fn uninterpreted(salt: u64, x: u64) -> u64 {
    let mut z = x ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % P
}

/// A sample point: the wildcards' values, and whether `sqrt` and `sgn` are the zero function
/// there (otherwise fixed random functions).
struct Point {
    values: [u64; 3],
    zero_functions: bool,
}

/// The sample points: every combination of 0, 1 and -1 for the wildcards (where division by
/// zero makes real identities fail), then random points, each with random and with zero
/// uninterpreted functions.
pub struct Samples {
    points: Vec<Point>,
}

impl Samples {
    pub fn new(random: usize) -> Samples {
        let mut rng = SmallRng::seed_from_u64(0x0001_5adb);
        let small = [0, 1, P - 1];
        let mut assignments: Vec<[u64; 3]> = Vec::new();
        for a in small {
            for b in small {
                for c in small {
                    assignments.push([a, b, c]);
                }
            }
        }
        assignments.extend((0..random).map(|_| {
            let mut draw = || rng.gen_range(2..P - 1);
            [draw(), draw(), draw()]
        }));
        let points = assignments
            .into_iter()
            .flat_map(|values| {
                [false, true].map(|zero_functions| Point {
                    values,
                    zero_functions,
                })
            })
            .collect();
        Samples { points }
    }
}

fn eval(p: &Pat, point: &Point) -> u64 {
    match p {
        Pat::Wild(w) => point.values[WILDCARDS.iter().position(|x| x == w).unwrap_or(0)],
        Pat::Num(n) => n.rem_euclid(P as i64) as u64,
        Pat::Lanes(p) => eval(p, point),
        Pat::App(op, args) => {
            let v: Vec<u64> = args.iter().map(|a| eval(a, point)).collect();
            match op {
                Op::Add | Op::VecAdd => (v[0] + v[1]) % P,
                Op::Sub | Op::VecMinus => (v[0] + P - v[1]) % P,
                Op::Mul | Op::VecMul => mul(v[0], v[1]),
                Op::Div | Op::VecDiv if v[1] == 0 => uninterpreted(1, v[0]),
                Op::Div | Op::VecDiv => mul(v[0], inverse(v[1])),
                Op::Neg | Op::VecNeg => (P - v[0]) % P,
                Op::Sqrt | Op::VecSqrt | Op::Sgn | Op::VecSgn if point.zero_functions => 0,
                Op::Sqrt | Op::VecSqrt => uninterpreted(2, v[0]),
                Op::Sgn | Op::VecSgn => uninterpreted(3, v[0]),
                Op::VecMAC => (v[0] + mul(v[1], v[2])) % P,
                _ => unreachable!("enumerated terms use arithmetic only"),
            }
        }
    }
}

/// The term's values at every sample point.
pub fn fingerprint(p: &Pat, samples: &Samples) -> Vec<u64> {
    samples.points.iter().map(|pt| eval(p, pt)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::sexpr::read_one;
    use crate::kernel::rule::pattern;

    fn pat(s: &str) -> Pat {
        pattern(&read_one(s, "t").unwrap()).unwrap()
    }

    #[test]
    fn fingerprints_agree_on_identities_and_not_on_division_by_zero() {
        let s = Samples::new(4);
        let f = |t: &str| fingerprint(&pat(t), &s);
        assert_eq!(f("(+ a (* b c))"), f("(+ (* c b) a)"));
        assert_eq!(f("(VecMAC a b c)"), f("(+ a (* b c))"));
        assert_eq!(f("(- a b)"), f("(+ a (neg b))"));
        assert_ne!(f("(/ a a)"), f("1"));
        assert_ne!(f("(sqrt (* a a))"), f("a"));
        assert_ne!(f("(/ 0 (+ a 1))"), f("0"));
        assert_ne!(f("(/ 0 (sgn 1))"), f("0"));
        assert_ne!(f("(/ (* a b) b)"), f("a"));
    }

    #[test]
    fn terms_are_counted_by_size_and_vector_terms_pack_lane_wise() {
        assert_eq!(scalar_terms(1).len(), 5);
        assert_eq!(scalar_terms(2).len(), 5 + 15);
        assert_eq!(
            vector_terms(4).iter().filter(|t| size(t) == 4).count(),
            216 + 189 + 27
        );
        let v = pat("(VecMAC a b c)");
        assert_eq!(text(&lane_meaning(&v)), "(+ a (* b c))");
        assert_eq!(
            text(&packed(&v)),
            "(VecMAC (Vec a ...) (Vec b ...) (Vec c ...))"
        );
    }
}
