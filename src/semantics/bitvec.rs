//! z3 bit-vector helpers of the encoding: constants of any width, carry-less (GF(2)
//! polynomial) arithmetic for `clmul` and `clmod`, Halide's Euclidean division, the arms of a
//! select, and a word's value by its 16-bit pieces.

use z3::ast::{Ast, Bool, Int, BV};
use z3::DeclKind;

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

/// The condition and arms of a select of bit-vectors (an `ite`).
pub fn select_arms(b: &BV) -> Option<(Bool, BV, BV)> {
    if !b.is_app() || b.decl().kind() != DeclKind::Ite {
        return None;
    }
    let c = b.children();
    Some((c[0].as_bool()?, c[1].as_bv()?, c[2].as_bv()?))
}

/// The integer value of `b` as the sum of its 16-bit pieces, each scaled (the top one signed
/// where `signed`), each piece simplified: the value of `x_u32 >> 16` or `x_u32 & 65535` is then
/// a sum over the same pieces as `x_u32`'s, a linear fact (u32 to f32 by halves, against the
/// whole's conversion: 20 s with z3's `bv2int` of the whole, milliseconds so).
pub fn int_of_halfwords(b: &BV, signed: bool) -> Int {
    let bits = b.get_size();
    if bits <= 16 || !bits.is_multiple_of(16) {
        return Int::from_bv(b, signed);
    }
    let top = bits / 16 - 1;
    (0..=top).rev().fold(Int::from_u64(0), |high, k| {
        let piece = b.extract(16 * k + 15, 16 * k).simplify();
        high * Int::from_u64(1 << 16) + Int::from_bv(&piece, signed && k == top)
    })
}

/// Halide's integer `x / y` (`quotient`) or `x % y`: Euclidean, from the truncating bit-vector
/// division (whose remainder takes the dividend's sign), zero where `y` is.
pub fn euclidean(quotient: bool, signed: bool, x: &BV, y: &BV) -> BV {
    let w = x.get_size();
    let zero = BV::from_u64(0, w);
    let result = if !signed {
        if quotient {
            x.bvudiv(y)
        } else {
            x.bvurem(y)
        }
    } else {
        let (q, r) = (x.bvsdiv(y), x.bvsrem(y));
        let one = BV::from_u64(1, w);
        let negative = r.bvslt(&zero);
        let up = y.bvsgt(&zero);
        if quotient {
            negative.ite(&up.ite(&q.bvsub(&one), &q.bvadd(&one)), &q)
        } else {
            negative.ite(&up.ite(&r.bvadd(y), &r.bvsub(y)), &r)
        }
    };
    y.eq(&zero).ite(&zero, &result)
}
