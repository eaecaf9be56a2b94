//! z3 bit-vector helpers of the encoding: constants of any width, and carry-less (GF(2)
//! polynomial) arithmetic for `clmul` and `clmod`.

use z3::ast::{Ast, Bool, BV};

/// The carry-less product of a and b, truncated to their width: a << i for every set bit i of b.
pub fn carryless_mul(a: &BV, b: &BV) -> BV {
    let w = a.get_size();
    let zero = BV::from_u64(0, w);
    (0..w).fold(zero.clone(), |acc, i| {
        let bit = b.extract(i, i).eq(BV::from_u64(1, 1));
        acc.bvxor(bit.ite(&a.bvshl(BV::from_u64(i as u64, w)), &zero))
    })
}

/// The remainder of a divided by m as GF(2) polynomials (a when m is zero): long division from
/// the top bit down, xoring m shifted under every set bit at or above m's degree. A constant m
/// (the usual case: a fixed polynomial) unrolls into fixed shifts.
pub fn carryless_mod(a: &BV, m: &BV) -> BV {
    let w = a.get_size();
    if let Some(mc) = constant_bits(m) {
        if mc == 0 {
            return a.clone();
        }
        let degree = 127 - mc.leading_zeros();
        return (degree..w).rev().fold(a.clone(), |r, i| {
            let set = r.extract(i, i).eq(BV::from_u64(1, 1));
            set.ite(&r.bvxor(bv_const(mc << (i - degree), w)), &r)
        });
    }
    let zero = BV::from_u64(0, w);
    // degree = w - 1 - clz(m), as a w-bit number (only used when m is not zero).
    let degree = (0..w).fold(BV::from_u64(0, w), |acc, i| {
        m.extract(i, i)
            .eq(BV::from_u64(1, 1))
            .ite(&BV::from_u64(i as u64, w), &acc)
    });
    (0..w).rev().fold(a.clone(), |r, i| {
        let at = BV::from_u64(i as u64, w);
        let set = Bool::and(&[
            &r.extract(i, i).eq(BV::from_u64(1, 1)),
            &m.eq(&zero).not(),
            &degree.bvule(&at),
        ]);
        set.ite(&r.bvxor(m.bvshl(at.bvsub(&degree))), &r)
    })
}

/// The value of a bitvector that simplifies to a numeral.
pub fn constant_bits(b: &BV) -> Option<u128> {
    let s = b.simplify();
    let w = s.get_size();
    if w <= 64 {
        return s.as_u64().map(u128::from);
    }
    let hi = s.extract(w - 1, 64).simplify().as_u64()? as u128;
    let lo = s.extract(63, 0).simplify().as_u64()? as u128;
    Some(hi << 64 | lo)
}

/// A bitvector constant of any width up to 128 (wider widths are zero-extended).
pub fn bv_const(bits: u128, width: u32) -> BV {
    if width <= 64 {
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let bits = bits & mask as u128;
        return BV::from_u64(bits as u64, width);
    }
    let hi = BV::from_u64((bits >> 64) as u64, 64);
    let lo = BV::from_u64(bits as u64, 64);
    resize(&hi.concat(&lo), false, width)
}

/// Sign- or zero-extends, or truncates, to `to` bits.
pub fn resize(b: &BV, signed: bool, to: u32) -> BV {
    let w = b.get_size();
    match to.cmp(&w) {
        std::cmp::Ordering::Equal => b.clone(),
        std::cmp::Ordering::Less => b.extract(to - 1, 0),
        std::cmp::Ordering::Greater if signed => b.sign_ext(to - w),
        std::cmp::Ordering::Greater => b.zero_ext(to - w),
    }
}
