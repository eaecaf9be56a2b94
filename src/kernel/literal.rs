//! Decimal literals (`2.5`, `1e-5`, C's `0.00001f` without its suffix) as exact fractions in
//! lowest terms, which the kernel's terms hold as a literal or a division of two: the reals the
//! kernels are proven over have them exactly.

use super::term::{Dag, Id, Op};

/// `text` as `numerator / denominator` in lowest terms; None when it is not a decimal literal
/// or does not fit 64-bit integers.
pub fn decimal(text: &str) -> Option<(i64, i64)> {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let body = digits.strip_prefix(['-', '+']).unwrap_or(&digits);
    let digits_only = |t: &str| t.chars().all(|c| c.is_ascii_digit());
    if body.is_empty() || !digits_only(body) || !digits_only(frac) {
        return None;
    }
    let mut num: i128 = digits.parse().ok()?;
    let mut den: i128 = 1;
    let scale = exp.checked_sub(frac.len() as i32)?;
    if scale.unsigned_abs() > 40 {
        return None;
    }
    for _ in 0..scale.max(0) {
        num = num.checked_mul(10)?;
    }
    for _ in 0..(-scale).max(0) {
        den = den.checked_mul(10)?;
    }
    let g = gcd(num, den).max(1);
    Some((i64::try_from(num / g).ok()?, i64::try_from(den / g).ok()?))
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// The term of the fraction `n / d`: the literal where `d` is 1.
pub fn fraction(dag: &mut Dag, (n, d): (i64, i64)) -> Id {
    let num = dag.num(n);
    if d == 1 {
        return num;
    }
    let den = dag.num(d);
    dag.add(Op::Div, &[num, den])
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn decimals_are_exact_fractions_in_lowest_terms() {
        assert_eq!(decimal("2.5"), Some((5, 2)));
        assert_eq!(decimal("-0.25"), Some((-1, 4)));
        assert_eq!(decimal("1e-5"), Some((1, 100_000)));
        assert_eq!(decimal("0.00001"), Some((1, 100_000)));
        assert_eq!(decimal("3"), Some((3, 1)));
        assert_eq!(decimal("1.5e2"), Some((150, 1)));
        assert_eq!(decimal("x1"), None);
        // A sign, a point or an exponent alone is no number.
        for no_digits in ["-", ".", "e5", "-.e1", "+"] {
            assert_eq!(decimal(no_digits), None, "{no_digits}");
        }
        assert_eq!(decimal("1.2.3"), None);
        assert_eq!(decimal("1e999"), None);
        assert_eq!(decimal("1e-30"), None);
    }
}
