//! Characteristic vectors: every variable gets one value per lane (edge values of its type in
//! all pairings first, then random values), so one run of the interpreter over a term at that
//! many lanes is its fingerprint. Terms with equal fingerprints are candidate equalities.

use super::term::{typed_name, Term};
use crate::ir::{Elem, Macros, VecType};
use crate::semantics::{eval, Env, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Lanes of a characteristic vector.
pub const SAMPLES: u32 = 96;
const SEED: u64 = 0x15ad_b5e7;

/// The inclusive range the variables are drawn from (a predicate's bounds), as lane values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Range {
    pub lo: i128,
    pub hi: i128,
}

impl Range {
    pub fn of(e: Elem) -> Range {
        Range {
            lo: e.min_value(),
            hi: e.max_value(),
        }
    }
}

/// Edge values of a range: its ends, zero and one, powers of two around the middle.
fn edges(r: Range) -> Vec<i128> {
    let mut out = vec![
        r.lo,
        r.hi,
        r.lo + 1,
        r.hi - 1,
        0,
        1,
        2,
        -1,
        (r.lo + r.hi) / 2,
        r.hi / 2 + 1,
    ];
    out.retain(|v| *v >= r.lo && *v <= r.hi);
    out.dedup();
    let mut seen = Vec::new();
    out.retain(|v| {
        let new = !seen.contains(v);
        seen.push(*v);
        new
    });
    out
}

/// The input environment: each variable of `vars` (names with their types) at [`SAMPLES`]
/// lanes, drawn from `range` (or its type's full range).
pub struct Inputs {
    pub env: Env,
}

impl Inputs {
    pub fn new(vars: &[(String, Elem)], range: Option<Range>) -> Inputs {
        let mut rng = SmallRng::seed_from_u64(SEED);
        let mut env = Env::new();
        for (k, (name, elem)) in vars.iter().enumerate() {
            let r = range.unwrap_or(Range::of(*elem));
            let e = edges(r);
            // Variable k cycles through the edge values with period len^k, so the first
            // len^2 lanes pair every edge value of two variables.
            let period = e.len().pow(k.min(2) as u32);
            let lanes: Vec<u128> = (0..SAMPLES as usize)
                .map(|i| {
                    let v = if i < e.len() * e.len() {
                        e[(i / period) % e.len()]
                    } else {
                        rng.gen_range(r.lo..=r.hi)
                    };
                    v as u128
                })
                .collect();
            env.insert(
                typed_name(name, *elem),
                Value::new(VecType::new(SAMPLES, *elem), lanes),
            );
        }
        Inputs { env }
    }
}

/// The term's lanes on the inputs, or None when it does not elaborate or evaluate.
pub fn fingerprint(t: &Term, macros: &Macros, inputs: &Inputs) -> Option<Vec<u128>> {
    let e = t.elaborate(macros, SAMPLES).ok()?;
    eval(&e, &inputs.env).ok().map(|v| v.lanes)
}
