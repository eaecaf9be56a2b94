//! Integer division and remainder by a constant, with Halide's meaning (Euclidean: the remainder
//! is never negative), as multiplications by a magic number (Halide's and Granlund–Montgomery's
//! method), once the dividend's type is known.
//!
//! Unsigned `x / c` on `w` bits is `(x * m) >> (w + s)` for the smallest shift `s` whose
//! multiplier `m = ceil(2^(w+s) / c)` errs by `e = m*c - 2^(w+s) <= 2^s`: then for every
//! `x < 2^w`, `x*m / 2^(w+s) = x/c + x*e / (c * 2^(w+s))`, and the second term is below `1/c`,
//! too little to reach the next multiple of `c`. The product is taken in twice the width and
//! its high half shifted by `s` at `w` bits (the form of a multiply-high instruction); a
//! multiplier of `w + 1` bits is split as `2^w + m'` and added back with a halving add so nothing
//! overflows. Signed `x / c` divides `x ^ (x >> (w-1))` (`x`, or `-x - 1` when negative) as
//! unsigned and flips the quotient back; a negative divisor negates the quotient;
//! `x % c = x - (x / c) * c`. `semantics/division_tests.rs` runs the expansions on every
//! 8-bit dividend and divisor and on sampled 16- and 32-bit dividends, and proves them with z3
//! at 8 and 16 bits. A 64-bit dividend needs a 128-bit product, which selection's 64-bit lanes
//! cannot hold: only powers of two divide it so; other divisors (and zero, and variables) are
//! the IR's `div` and `mod`, Halide's division by any divisor.

use super::{Elab, Scope};
use crate::error::Result;
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::types::Elem;

/// Division or remainder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Divide {
    /// `x / c`, rounded down for a positive divisor (Euclidean).
    Quotient,
    /// `x % c`, in `0..|c|`.
    Remainder,
}

impl Divide {
    /// The IR operator computing it by any divisor.
    pub fn operator(self) -> &'static str {
        match self {
            Divide::Quotient => "div",
            Divide::Remainder => "mod",
        }
    }
}

impl Scope<'_> {
    /// `(divide-by x y)` and `(remainder-by x y)`, Halide's `/` and `%` once the dividend's type
    /// is known: f32 division, f32's remainder `x - y * floor(x / y)`, the expansion of an
    /// integer division by a constant ([`expansion`]), or the IR's `div` and `mod` by anything
    /// else.
    pub(super) fn divide_by(&mut self, head: &str, args: &[SExpr], s: &SExpr) -> Result<Elab> {
        if args.len() != 2 {
            return Err(s.err(format!("{head} takes 2 argument(s), got {}", args.len())));
        }
        let what = if head == "divide-by" {
            Divide::Quotient
        } else {
            Divide::Remainder
        };
        let dividend = self.elab(&args[0])?;
        let float = match &dividend {
            Elab::Typed(x) => x.ty.elem == Elem::F32,
            Elab::Lit(lit, elem) => matches!(lit.kind, SKind::Float(_)) || *elem == Some(Elem::F32),
        };
        let call = |head: &str, items: Vec<SExpr>| SExpr {
            kind: SKind::List(
                std::iter::once(SExpr {
                    kind: SKind::Sym(head.into()),
                    loc: s.loc.clone(),
                })
                .chain(items)
                .collect(),
            ),
            loc: s.loc.clone(),
        };
        let (x, y) = (&args[0], &args[1]);
        if float && what == Divide::Remainder {
            // Halide's f32 remainder: x - y * floor(x / y).
            let quotient = call("floor", vec![call("div", vec![x.clone(), y.clone()])]);
            let product = call("mul", vec![y.clone(), quotient]);
            return self.elab(&call("sub", vec![x.clone(), product]));
        }
        let SKind::Int(c) = y.kind else {
            // f32 division, or integer division by a variable: the IR's operator, its literals
            // typed by the other operand.
            return self.elab(&call(what.operator(), vec![x.clone(), y.clone()]));
        };
        if float {
            return self.elab(&call("div", vec![x.clone(), y.clone()]));
        }
        let x = self.typed(dividend, &args[0])?;
        let name = format!("dividend%{}", x.ty.elem.name());
        let text = expansion(what, x.ty.elem, c, &name).map_err(|m| s.err(m))?;
        let body = read(&text, &s.loc)?;
        let saved = self.vars.insert(name.clone(), x);
        let out = self.elab(&body);
        match saved {
            Some(v) => self.vars.insert(name, v),
            None => self.vars.remove(&name),
        };
        out
    }
}

/// The IR s-expression computing `x / c` or `x % c` for `x` of element type `elem`, with `x`
/// written as `name`; an error message when the division cannot be expressed.
pub fn expansion(
    what: Divide,
    elem: Elem,
    c: i128,
    name: &str,
) -> std::result::Result<String, String> {
    if elem.is_int() && c > 0 && c.unsigned_abs().is_power_of_two() {
        // At any integer width: a shift and a mask.
        let k = c.trailing_zeros();
        return Ok(match what {
            Divide::Quotient if k == 0 => name.to_string(),
            Divide::Quotient => format!("(shr {name} {k})"),
            Divide::Remainder => format!("(and {name} {})", c - 1),
        });
    }
    if !elem.is_int() || elem.bits() > 64 {
        return Err(format!(
            "integer division by a constant needs an integer dividend of at most 64 bits, not {}",
            elem.name()
        ));
    }
    let power_of_two = c.unsigned_abs().is_power_of_two();
    if c == 0 || (elem.bits() == 64 && !power_of_two) {
        // Zero (Halide's quotient and remainder are then zero), or a 64-bit dividend, whose
        // multiply-high needs a 128-bit product: the IR's own operator, by the constant.
        return Ok(format!("({} {name} {c})", what.operator()));
    }
    if c < 0 && !elem.is_signed() {
        return Err(format!(
            "division of an unsigned {} by the negative constant {c}",
            elem.name()
        ));
    }
    if c.unsigned_abs() > elem.max_value() as u128 {
        return Err(format!(
            "the divisor {c} does not fit in the dividend's type {}",
            elem.name()
        ));
    }
    let t = elem.name();
    let quotient = quotient(elem, c.unsigned_abs(), name)?;
    Ok(match what {
        Divide::Quotient if c < 0 => format!("(sub 0 {quotient})"),
        Divide::Quotient => quotient,
        Divide::Remainder => format!(
            "(let quotient%{t} {quotient} (sub {name} (mul quotient%{t} {})))",
            c.unsigned_abs()
        ),
    })
}

/// `x / c` rounded down, for `0 < c <= max(elem)`.
fn quotient(elem: Elem, c: u128, name: &str) -> std::result::Result<String, String> {
    let w = elem.bits();
    if c.is_power_of_two() {
        return Ok(format!("(shr {name} {})", c.trailing_zeros()));
    }
    if !elem.is_signed() {
        return unsigned_quotient(w, c, name);
    }
    let t = elem.name();
    let u = unsigned(w).name();
    let flipped = format!("(cast {u} (xor {name} sign%{t}))");
    let q = unsigned_quotient(w, c, &format!("x%{u}"))?;
    Ok(format!(
        "(let sign%{t} (shr {name} {}) (let x%{u} {flipped} (xor (cast {t} {q}) sign%{t})))",
        w - 1
    ))
}

/// Unsigned `x / c` on `w` bits for `c` not a power of two.
fn unsigned_quotient(w: u32, c: u128, name: &str) -> std::result::Result<String, String> {
    let (s, m) = magic(w, c)
        .ok_or_else(|| format!("no magic number divides {w}-bit values by {c} within 128 bits"))?;
    let t = unsigned(w).name();
    let wide = unsigned(2 * w).name();
    let high =
        |m: u128, shift: u32| format!("(cast {t} (shr (mul (cast {wide} {name}) {m}) {shift}))");
    Ok(if m < 1u128 << w {
        // The high half of the product (a multiply-high instruction, at 16 bits and wider),
        // shifted at `t`; bytes' products are taken in 16-bit lanes and shifted there at once.
        match s {
            0 => high(m, w),
            _ if w == 8 => high(m, w + s),
            _ => format!("(shr {} {s})", high(m, w)),
        }
    } else {
        // m = 2^w + m': x*m >> w = hi + x with hi = x*m' >> w; (hi + x) >> s without
        // overflow as (hi + ((x - hi) >> 1)) >> (s - 1) (s >= 1 here: c >= 3 needs it).
        let hi = high(m - (1u128 << w), w);
        format!(
            "(let hi%{t} {hi} (shr (add hi%{t} (shr (sub {name} hi%{t}) 1)) {}))",
            s - 1
        )
    })
}

/// The smallest shift `s` and its multiplier `m = ceil(2^(w+s) / c)` with
/// `m*c - 2^(w+s) <= 2^s` (always found by `s = ceil(log2 c)`, where `m < 2^(w+1)`).
fn magic(w: u32, c: u128) -> Option<(u32, u128)> {
    let log = 128 - (c - 1).leading_zeros();
    (0..=log).find_map(|s| {
        let p = 1u128.checked_shl(w + s).filter(|_| w + s < 128)?;
        let m = p.div_ceil(c);
        let e = m.checked_mul(c)? - p;
        (e <= 1u128 << s && m < 1u128 << (w + 1)).then_some((s, m))
    })
}

/// The unsigned element type of `bits` bits (up to 128).
fn unsigned(bits: u32) -> Elem {
    match bits {
        8 => Elem::U8,
        16 => Elem::U16,
        32 => Elem::U32,
        64 => Elem::U64,
        _ => Elem::U128,
    }
}

/// Reads an expansion back as an s-expression placed at `loc` (for its error messages).
pub fn read(text: &str, loc: &crate::error::Location) -> Result<crate::ir::sexpr::SExpr> {
    let mut s = crate::ir::sexpr::read_one(text, "division")?;
    relocate(&mut s, loc);
    Ok(s)
}

fn relocate(s: &mut crate::ir::sexpr::SExpr, loc: &crate::error::Location) {
    s.loc = loc.clone();
    if let crate::ir::sexpr::SKind::List(items) = &mut s.kind {
        for item in items {
            relocate(item, loc);
        }
    }
}
