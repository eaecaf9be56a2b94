//! Translation validation over the reals: every output lane of a vector program is read back as a
//! scalar term (lane `i` of `VecMAC a b c` is `a_i + b_i * c_i`, ...) and proven equal to its spec.
//! First by a normal form that is exact over the reals (sums and products flattened and sorted,
//! like terms and rational constants combined; `sqrt`, `sgn` and division by a non-constant are
//! atoms over the normal form of their operands), then, where the two normal forms differ, by z3
//! on the two terms (reals, `sqrt` and `sgn` uninterpreted functions).

use super::term::{Dag, Id, Op};
use crate::error::{Error, Result};
use crate::semantics::budget::{check, Theory};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// The lanes of a vector term (or the one lane of a scalar term) as scalar terms of `dag`.
pub fn lanes(dag: &mut Dag, id: Id) -> Vec<Id> {
    let mut memo: HashMap<Id, Vec<Id>> = HashMap::new();
    for n in dag.reachable(&[id]) {
        let op = dag.op(n);
        let args: Vec<Id> = dag.args(n).to_vec();
        let value = if !op.is_vector() {
            vec![n]
        } else {
            match op {
                Op::Vec | Op::List | Op::Concat => {
                    args.iter().flat_map(|a| memo[a].clone()).collect()
                }
                Op::VecMAC => {
                    let (a, b, c) = (&memo[&args[0]], &memo[&args[1]], &memo[&args[2]]);
                    (0..a.len())
                        .map(|k| {
                            let m = dag.add(Op::Mul, &[b[k], c[k]]);
                            dag.add(Op::Add, &[a[k], m])
                        })
                        .collect()
                }
                vop => {
                    let s = vop.scalar_of().expect("a lane-wise vector operator");
                    let width = memo[&args[0]].len();
                    (0..width)
                        .map(|k| {
                            let operands: Vec<Id> = args.iter().map(|a| memo[a][k]).collect();
                            dag.add(s, &operands)
                        })
                        .collect()
                }
            }
        };
        memo.insert(n, value);
    }
    memo.remove(&id).unwrap_or_default()
}

/// An exact rational.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Rat(i128, i128);

impl Rat {
    fn new(n: i128, d: i128) -> Option<Rat> {
        if d == 0 {
            return None;
        }
        let g = gcd(n.abs(), d.abs()).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Some(Rat(s * n / g, s * d / g))
    }
    fn int(n: i128) -> Rat {
        Rat(n, 1)
    }
    fn add(self, o: Rat) -> Option<Rat> {
        Rat::new(
            self.0
                .checked_mul(o.1)?
                .checked_add(o.0.checked_mul(self.1)?)?,
            self.1.checked_mul(o.1)?,
        )
    }
    fn mul(self, o: Rat) -> Option<Rat> {
        Rat::new(self.0.checked_mul(o.0)?, self.1.checked_mul(o.1)?)
    }
    fn is_zero(self) -> bool {
        self.0 == 0
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A canonical term: constants, atoms, sums of scaled terms and products of factors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Canon {
    Const(Rat),
    Read(u32, u32),
    Sqrt(u32),
    Sgn(u32),
    Inv(u32),
    Sum(Rat, Vec<(u32, Rat)>),
    Prod(Vec<u32>),
}

/// A linear combination of canonical terms: the normal form of a sum.
#[derive(Clone, Debug, Default)]
struct Lin {
    constant: Option<Rat>,
    terms: BTreeMap<u32, Rat>,
}

/// Hash-consed canonical terms, with the normal form of each spec or program node.
#[derive(Default)]
pub struct Normalizer {
    canon: Vec<Canon>,
    index: HashMap<Canon, u32>,
    memo: HashMap<Id, Option<u32>>,
}

impl Normalizer {
    fn intern(&mut self, c: Canon) -> u32 {
        if let Some(&i) = self.index.get(&c) {
            return i;
        }
        self.canon.push(c.clone());
        self.index.insert(c, self.canon.len() as u32 - 1);
        self.canon.len() as u32 - 1
    }

    fn lin_of(&self, c: u32) -> Lin {
        match &self.canon[c as usize] {
            Canon::Const(r) => Lin {
                constant: Some(*r),
                terms: BTreeMap::new(),
            },
            Canon::Sum(k, terms) => Lin {
                constant: Some(*k),
                terms: terms.iter().copied().collect(),
            },
            _ => Lin {
                constant: None,
                terms: [(c, Rat::int(1))].into_iter().collect(),
            },
        }
    }

    fn of_lin(&mut self, l: Lin) -> u32 {
        let terms: Vec<(u32, Rat)> = l.terms.into_iter().filter(|(_, k)| !k.is_zero()).collect();
        let k = l.constant.unwrap_or(Rat::int(0));
        match terms.as_slice() {
            [] => self.intern(Canon::Const(k)),
            [(t, one)] if k.is_zero() && *one == Rat::int(1) => *t,
            _ => self.intern(Canon::Sum(k, terms)),
        }
    }

    fn scale(l: &Lin, by: Rat) -> Option<Lin> {
        Some(Lin {
            constant: match l.constant {
                Some(c) => Some(c.mul(by)?),
                None => None,
            },
            terms: l
                .terms
                .iter()
                .map(|(t, k)| Some((*t, k.mul(by)?)))
                .collect::<Option<_>>()?,
        })
    }

    fn sum(&mut self, a: u32, b: u32, sign: i128) -> Option<u32> {
        let la = self.lin_of(a);
        let lb = Normalizer::scale(&self.lin_of(b), Rat::int(sign))?;
        let mut out = la;
        out.constant = match (out.constant, lb.constant) {
            (Some(x), Some(y)) => Some(x.add(y)?),
            (x, y) => x.or(y),
        };
        for (t, k) in lb.terms {
            let e = out.terms.entry(t).or_insert(Rat::int(0));
            *e = e.add(k)?;
        }
        Some(self.of_lin(out))
    }

    /// A term as a coefficient times sorted factors.
    fn factors(&self, c: u32) -> (Rat, Vec<u32>) {
        match &self.canon[c as usize] {
            Canon::Const(r) => (*r, vec![]),
            Canon::Prod(f) => (Rat::int(1), f.clone()),
            Canon::Sum(k, terms) if k.is_zero() && terms.len() == 1 => {
                let (t, coef) = terms[0];
                let (inner, f) = self.factors(t);
                (coef.mul(inner).unwrap_or(coef), f)
            }
            _ => (Rat::int(1), vec![c]),
        }
    }

    fn product(&mut self, a: u32, b: u32) -> Option<u32> {
        let (ka, mut fa) = self.factors(a);
        let (kb, fb) = self.factors(b);
        let k = ka.mul(kb)?;
        fa.extend(fb);
        fa.sort_unstable();
        let body = match fa.len() {
            0 => return Some(self.intern(Canon::Const(k))),
            1 => fa[0],
            _ => self.intern(Canon::Prod(fa)),
        };
        let lin = Normalizer::scale(&self.lin_of(body), k)?;
        Some(self.of_lin(lin))
    }

    /// The normal form of `id`, or None where a constant overflows (z3 decides those).
    fn normal(&mut self, dag: &Dag, id: Id) -> Option<u32> {
        for n in dag.reachable(&[id]) {
            if self.memo.contains_key(&n) {
                continue;
            }
            let a: Vec<Option<u32>> = dag.args(n).iter().map(|x| self.memo[x]).collect();
            let value = (|| -> Option<u32> {
                Some(match dag.op(n) {
                    Op::Num(v) => self.intern(Canon::Const(Rat::int(v as i128))),
                    Op::Get(x, i) => self.intern(Canon::Read(x, i)),
                    Op::Add => self.sum(a[0]?, a[1]?, 1)?,
                    Op::Sub => self.sum(a[0]?, a[1]?, -1)?,
                    Op::Neg => {
                        let zero = self.intern(Canon::Const(Rat::int(0)));
                        self.sum(zero, a[0]?, -1)?
                    }
                    Op::Mul => self.product(a[0]?, a[1]?)?,
                    Op::Div => {
                        let d = a[1]?;
                        let inv = match self.canon[d as usize] {
                            Canon::Const(r) if !r.is_zero() => {
                                self.intern(Canon::Const(Rat::new(r.1, r.0)?))
                            }
                            _ => self.intern(Canon::Inv(d)),
                        };
                        self.product(a[0]?, inv)?
                    }
                    Op::Sqrt => self.intern(Canon::Sqrt(a[0]?)),
                    Op::Sgn => self.intern(Canon::Sgn(a[0]?)),
                    _ => return None,
                })
            })();
            self.memo.insert(n, value);
        }
        self.memo[&id]
    }
}

/// How the outputs were proven.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Proof {
    pub outputs: usize,
    pub by_normal_form: usize,
    pub by_z3: usize,
    pub ms: f64,
}

/// Proves lane `k` of `program` equal to `spec[k]` for every output; an error names the first
/// output that differs, with a counterexample when z3 finds one.
pub fn validate(dag: &mut Dag, spec: &[Id], program: Id) -> Result<Proof> {
    let start = Instant::now();
    let got = lanes(dag, program);
    if got.len() < spec.len() {
        return Err(Error::data(
            "translation validation",
            format!(
                "the program has {} lanes for {} outputs",
                got.len(),
                spec.len()
            ),
        ));
    }
    let pairs: Vec<(Id, Id)> = spec.iter().copied().zip(got).collect();
    let (by_normal_form, by_z3, failure) = prove_pairs(dag, &pairs)?;
    if let Some((k, why)) = failure {
        return Err(Error::data(
            "translation validation",
            format!("output {k} is not equal to its spec: {why}"),
        ));
    }
    Ok(Proof {
        outputs: spec.len(),
        by_normal_form,
        by_z3,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}

/// The first pair of terms that is not equal: its index and why.
pub type Failure = Option<(usize, String)>;

/// Proves each pair of scalar terms equal: by the normal form, else by z3. Returns how many
/// each proved, and the first pair that is not equal.
pub fn prove_pairs(dag: &Dag, pairs: &[(Id, Id)]) -> Result<(usize, usize, Failure)> {
    let mut norm = Normalizer::default();
    let mut hard = Vec::new();
    for (k, &(s, p)) in pairs.iter().enumerate() {
        let same = s == p
            || matches!((norm.normal(dag, s), norm.normal(dag, p)), (Some(a), Some(b)) if a == b);
        if !same {
            hard.push(k);
        }
    }
    let hard_pairs: Vec<(Id, Id)> = hard.iter().map(|&k| pairs[k]).collect();
    let failure = z3_equal(dag, &hard_pairs)?.map(|(i, why)| (hard[i], why));
    Ok((pairs.len() - hard.len(), hard.len(), failure))
}

/// Proves each pair of scalar terms equal over the reals with z3 (sqrt and sgn uninterpreted);
/// the index of the first pair that is not, with a counterexample or the solver's reason.
pub fn z3_equal(dag: &Dag, pairs: &[(Id, Id)]) -> Result<Failure> {
    use z3::ast::Real;
    if pairs.is_empty() {
        return Ok(None);
    }
    let real = z3::Sort::real();
    let sqrt = z3::FuncDecl::new("sqrt", &[&real], &real);
    let sgn = z3::FuncDecl::new("sgn", &[&real], &real);
    let mut enc: HashMap<Id, Real> = HashMap::new();
    let roots: Vec<Id> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    for n in dag.reachable(&roots) {
        let a: Vec<Real> = dag.args(n).iter().map(|x| enc[x].clone()).collect();
        let v = match dag.op(n) {
            Op::Num(v) => Real::from_rational_str(&v.to_string(), "1").expect("an integer numeral"),
            Op::Get(x, i) => Real::new_const(format!("{}[{i}]", dag.arrays()[x as usize])),
            Op::Add => Real::add(&[&a[0], &a[1]]),
            Op::Sub => Real::sub(&[&a[0], &a[1]]),
            Op::Mul => Real::mul(&[&a[0], &a[1]]),
            Op::Div => a[0].div(&a[1]),
            Op::Neg => a[0].unary_minus(),
            Op::Sqrt => sqrt.apply(&[&a[0]]).as_real().expect("sqrt is real-valued"),
            Op::Sgn => sgn.apply(&[&a[0]]).as_real().expect("sgn is real-valued"),
            op => {
                return Err(Error::data(
                    "translation validation",
                    format!("a vector operator {} in a lane", op.name()),
                ))
            }
        };
        enc.insert(n, v);
    }
    for (i, &(a, b)) in pairs.iter().enumerate() {
        let solver = z3::Solver::new();
        solver.assert(enc[&a].eq(&enc[&b]).not());
        match check(&solver, Theory::Reals, 20_000, z3::Solver::check) {
            z3::SatResult::Unsat => {}
            z3::SatResult::Sat => {
                let model = solver.get_model();
                let detail = model
                    .map(|m| {
                        let lhs = m
                            .eval(&enc[&a], true)
                            .map(|v| v.to_string())
                            .unwrap_or_default();
                        let rhs = m
                            .eval(&enc[&b], true)
                            .map(|v| v.to_string())
                            .unwrap_or_default();
                        format!("{lhs} vs {rhs}")
                    })
                    .unwrap_or_default();
                return Ok(Some((i, format!("counterexample: {detail}"))));
            }
            z3::SatResult::Unknown => {
                return Ok(Some((
                    i,
                    format!(
                        "z3 gave up ({})",
                        solver.get_reason_unknown().unwrap_or_default()
                    ),
                )))
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::read::read_list;

    fn check(spec: &str, program: &str) -> Result<Proof> {
        let mut s = read_list(spec, "spec").unwrap();
        let outputs = s.dag.args(s.root).to_vec();
        let p = read_list(program, "program").unwrap();
        let root = s.dag.import(&p.dag, p.root);
        validate(&mut s.dag, &outputs, root)
    }

    #[test]
    fn normal_form_proves_reordered_and_fused_lanes() {
        let spec =
            "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))) (- (Get A 1) (Get B 1)))";
        let prog = "(List (VecMAC (VecMul (Vec (Get A 1) (Get B 1)) (Vec (Get B 2) (neg 1))) (Vec (Get B 0) (Get A 1)) (Vec (Get A 0) 1)))";
        let p = check(spec, prog).unwrap();
        assert_eq!((p.outputs, p.by_normal_form, p.by_z3), (2, 2, 0));
    }

    #[test]
    fn a_wrong_lane_is_refuted() {
        let spec = "(List (+ (Get A 0) (Get B 0)) (* (Get A 1) (Get B 1)))";
        let prog = "(List (VecAdd (Vec (Get A 0) (Get A 1)) (Vec (Get B 0) (Get B 1))))";
        let e = check(spec, prog).err().unwrap().to_string();
        assert!(
            e.starts_with(
                "translation validation: output 1 is not equal to its spec: counterexample"
            ),
            "{e}"
        );
    }

    #[test]
    fn z3_proves_what_the_normal_form_does_not() {
        let spec = "(List (* (Get A 0) (+ (Get B 0) (Get B 1))))";
        let prog = "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 0) (Get B 1))))";
        let p = check(spec, prog).unwrap();
        assert_eq!(p.by_z3, 1);
    }
}
