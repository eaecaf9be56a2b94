//! f32 lanes as z3 reals: exact values of f32 constants and conversions of reals to integers.
//! The encoding is over the reals: rounding, infinities, NaN and the sign of zero are not
//! modelled, so an f32 proof holds for real-number arithmetic.

use z3::ast::{Real, BV};

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

/// `r` clamped to `lo..=hi` and rounded toward zero, as a bit-vector of `bits` bits.
pub fn toward_zero(r: &Real, lo: i128, hi: i128, bits: u32) -> BV {
    let real =
        |v: i128| Real::from_rational_str(&v.to_string(), "1").expect("an integer numeral parses");
    let (low, high) = (real(lo), real(hi));
    let clamped = r.lt(&low).ite(&low, &r.gt(&high).ite(&high, r));
    let truncated = clamped.ge(real_int(0)).ite(
        &clamped.to_int(),
        &Real::sub(&[&real_int(0), &clamped]).to_int().unary_minus(),
    );
    BV::from_int(&truncated, bits)
}
