//! f32 lanes as z3 reals: exact values of f32 constants and conversions of reals to integers.
//! The encoding is over the reals: rounding, infinities, NaN and the sign of zero are not
//! modelled, so an f32 proof holds for real-number arithmetic.

use crate::ir::Op;
use z3::ast::{Bool, Int, Real, BV};

/// The real number `n`. Built from a numeral string: `Real::from_rational` calls
/// `Z3_mk_real_int64`, which Debian's z3 4.8.12 does not have.
pub fn real_int(n: i64) -> Real {
    Real::from_rational_str(&n.to_string(), "1").expect("an integer numeral parses")
}

/// The exact rational value of a finite f32.
pub fn real_of_f32(x: f32) -> Real {
    let (num, den) = exact_fraction(x);
    Real::from_rational_str(&num, &den).unwrap_or_else(|| real_int(0))
}

fn exact_fraction(x: f32) -> (String, String) {
    let bits = x.to_bits();
    let sign = if bits >> 31 == 1 { "-" } else { "" };
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = (bits & 0x7f_ffff) as u128;
    let (mant, e) = if exp == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, exp - 150)
    };
    if e >= 0 {
        (format!("{sign}{}", mant << e.min(100)), "1".into())
    } else {
        let den = 1u128
            .checked_shl((-e) as u32)
            .map_or_else(|| format!("{}", 2f64.powi(-e)), |d| d.to_string());
        (format!("{sign}{mant}"), den)
    }
}

/// `r` clamped to `lo..=hi` and rounded toward zero, as a bit-vector of `bits` bits. The bounds
/// are bit-vector constants chosen outside the conversion: z3 (4.8) decides little about
/// `int2bv` of a term, so a lane out of range must not need it (`select(x >= 2^31, 2^31 - 1,
/// ...)` against `i32(x)` was unknown after a minute with the clamp inside), and the truncation
/// is over `floor` alone (see [`rounded`]): a negative value with a fraction is one above it.
pub fn toward_zero(r: &Real, lo: i128, hi: i128, bits: u32) -> BV {
    let real =
        |v: i128| Real::from_rational_str(&v.to_string(), "1").expect("an integer numeral parses");
    let bound = |v: i128| BV::from_u64((v as u128 & (u128::MAX >> (128 - bits))) as u64, bits);
    let below = r.to_int();
    let exact = Real::from_int(&below).eq(r);
    let truncated = Bool::or(&[&r.ge(real_int(0)), &exact])
        .ite(&below, &Int::add(&[&below, &Int::from_i64(1)]));
    r.lt(real(lo)).ite(
        &bound(lo),
        &r.gt(real(hi))
            .ite(&bound(hi), &BV::from_int(&truncated, bits)),
    )
}

/// `r` rounded to an integer by the rounding operator `op` (`Op::is_rounding`): toward minus
/// infinity, plus infinity or zero, or to the nearest with ties to even or away from zero.
/// Every form is written over `floor(r)` (z3's `to_int`) alone and its fraction: z3 answers
/// queries over one `to_int` per lane at once, and not in minutes with `to_int(-r)` beside it.
pub fn rounded(op: &Op, r: &Real) -> Real {
    let one = real_int(1);
    let half = Real::from_rational_str("1", "2").expect("a numeral parses");
    let below = Real::from_int(&r.to_int());
    let above = Real::add(&[&below, &one]);
    let fraction = Real::sub(&[r, &below]);
    let ceil = fraction.gt(real_int(0)).ite(&above, &below);
    let nonnegative = r.ge(real_int(0));
    // The nearer of below and above, a tie going to `tie`.
    let nearest = |tie: &Real| {
        fraction
            .lt(&half)
            .ite(&below, &fraction.gt(&half).ite(&above, tie))
    };
    match op {
        Op::Floor => below,
        Op::Ceil => ceil,
        Op::Trunc => nonnegative.ite(&below, &ceil),
        Op::Round => {
            // floor(r) is even when it is twice floor(r / 2) (linear: no `mod` for z3).
            let halved = Real::mul(&[r, &half]).to_int();
            let even = Int::add(&[&halved, &halved]).eq(r.to_int());
            nearest(&even.ite(&below, &above))
        }
        Op::RoundAway => nearest(&nonnegative.ite(&above, &below)),
        _ => unreachable!("only roundings are rounded"),
    }
}
