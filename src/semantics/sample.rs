//! Lane values worth trying: the edge values of an element type (zero, one, the extremes,
//! powers of two and their neighbours, alternating bit patterns, for f32 signed zeros,
//! denormals, infinities and NaNs), and random lanes with a share of them. Validation draws
//! its inputs from them; spot checks of selections run on them.

use super::interp::{eval, Env};
use super::value::Value;
use crate::ir::{Elem, Expr, VecType};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Edge values of an element type as raw lane bits (deduplicated, in a fixed order).
pub fn edge_values(elem: Elem) -> Vec<u128> {
    let mut out: Vec<u128> = Vec::new();
    let mut push = |v: u128| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    match elem {
        Elem::Bool => {
            push(0);
            push(1);
        }
        Elem::F32 => {
            let specials = [
                0.0f32,
                -0.0,
                1.0,
                -1.0,
                0.5,
                -0.5,
                2.0,
                1.5,
                -2.5,
                3.0,
                127.0,
                255.0,
                256.0,
                32767.0,
                65535.0,
                16777216.0,
                16777217.0,
                2147483648.0,
                -2147483648.0,
                0.1,
                -1e-10,
                1e10,
                f32::MAX,
                f32::MIN,
                f32::MIN_POSITIVE,
                f32::EPSILON,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ];
            for x in specials {
                push(x.to_bits() as u128);
            }
            push(1); // smallest denormal
            push(0x8000_0001); // negative denormal
            push(0x007f_ffff); // largest denormal
            push(0x7fc0_0000); // quiet NaN
            push(0xffc0_0001); // negative NaN with payload
        }
        _ => {
            let bits = elem.bits();
            let mask = elem.mask();
            let min = (elem.min_value() as u128) & mask;
            let max = (elem.max_value() as u128) & mask;
            for v in [
                0,
                1,
                mask,
                min,
                max,
                min.wrapping_add(1) & mask,
                max.wrapping_sub(1) & mask,
                2,
                mask - 1,
            ] {
                push(v & mask);
            }
            for k in 1..bits {
                let p = 1u128 << k;
                for v in [
                    p,
                    p - 1,
                    p + 1,
                    p.wrapping_neg(),
                    p.wrapping_neg().wrapping_sub(1),
                ] {
                    push(v & mask);
                }
            }
            for byte in [0x55u8, 0xaa, 0x0f, 0xf0, 0x33, 0xcc, 0x7f, 0x80, 0x01, 0xfe] {
                push(u128::from_le_bytes([byte; 16]) & mask);
            }
        }
    }
    out
}

/// Random lane values of `ty`, a third of them edge values (0, max, min, ...).
pub fn random_lanes(ty: VecType, count: usize, rng: &mut SmallRng) -> Vec<u128> {
    let edges = edge_values(ty.elem);
    (0..count)
        .map(|_| {
            if rng.gen_range(0..3) == 0 {
                edges[rng.gen_range(0..edges.len())]
            } else {
                rng.gen::<u128>() & ty.elem.mask()
            }
        })
        .collect()
}

/// Whether `a` and `b` (over the same variables) evaluate equal on `tries` random inputs drawn
/// from `seed`; an input either cannot evaluate counts as a disagreement.
pub fn agree_on_random_inputs(a: &Expr, b: &Expr, tries: usize, seed: u64) -> bool {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..tries).all(|_| {
        let env: Env = a
            .vars()
            .into_iter()
            .map(|(name, ty)| {
                let lanes = random_lanes(ty, ty.lanes as usize, &mut rng);
                (name, Value::new(ty, lanes))
            })
            .collect();
        matches!((eval(a, &env), eval(b, &env)), (Ok(x), Ok(y)) if x == y)
    })
}
