//! Halide's operators and functions as IR s-expressions: literal folding, division and
//! remainder as `divide-by` and `remainder-by` (lowered once the dividend's type is known),
//! shifts by a value (Halide's signed amounts), casts, `clamp`, Halide's
//! unsigned `abs`, its bit counts (`count_leading_zeros`, `count_trailing_zeros`), Halide's
//! names of its fixed-point intrinsics (`rounding_shift_right`, `mul_shift_right`,
//! `widen_right_add`, ...), `reinterpret`, and
//! any other call passed through by name (idioms).

use super::Shifts;
use crate::error::{Error, Location, Result};
use crate::ir::limits::MAX_DEPTH;
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::types::Elem;

/// A symbol at `loc`.
pub(super) fn sym(name: &str, loc: &Location) -> SExpr {
    SExpr {
        kind: SKind::Sym(name.to_string()),
        loc: loc.clone(),
    }
}

/// An integer literal at `loc`.
pub(super) fn int(v: i128, loc: &Location) -> SExpr {
    SExpr {
        kind: SKind::Int(v),
        loc: loc.clone(),
    }
}

/// The form `(head args...)` at `loc`.
pub(super) fn list(head: &str, args: Vec<SExpr>, loc: &Location) -> SExpr {
    let mut items = vec![sym(head, loc)];
    items.extend(args);
    SExpr {
        kind: SKind::List(items),
        loc: loc.clone(),
    }
}

/// The value of an integer literal.
pub(super) fn as_int(s: &SExpr) -> Option<i128> {
    match s.kind {
        SKind::Int(v) => Some(v),
        _ => None,
    }
}

/// A binary node, with literal operands folded; division and remainder wait for the dividend's
/// type (`divide-by`, `remainder-by`).
pub(super) fn combine(
    op: &str,
    name: &str,
    lhs: SExpr,
    rhs: SExpr,
    shifts: Shifts,
    loc: &Location,
) -> Result<SExpr> {
    if let (Some(a), Some(b)) = (as_int(&lhs), as_int(&rhs)) {
        if let Some(v) = fold(op, a, b, loc)? {
            return Ok(int(v, loc));
        }
    }
    if op == "/" || op == "%" {
        // Once the dividend's type is known (elaborate/divide.rs; an f32 dividend is `div`).
        let head = if op == "/" {
            "divide-by"
        } else {
            "remainder-by"
        };
        return Ok(list(head, vec![lhs, rhs], loc));
    }
    if shifts == Shifts::Halide && matches!(op, "<<" | ">>") {
        match as_int(&rhs) {
            // A shift by a value: Halide's meaning (prelude's `halide-shl`, `halide-shr`).
            None => {
                let head = if op == "<<" {
                    "halide-shl"
                } else {
                    "halide-shr"
                };
                return Ok(list(head, vec![lhs, rhs], loc));
            }
            // By a negative constant: the other way.
            Some(k) if k < 0 => {
                let other = if op == "<<" { "shr" } else { "shl" };
                return Ok(list(other, vec![lhs, int(-k, &rhs.loc)], loc));
            }
            Some(_) => {}
        }
    }
    Ok(list(name, vec![lhs, rhs], loc))
}

/// `a op b` for two literals, when the operator yields an integer.
fn fold(op: &str, a: i128, b: i128, loc: &Location) -> Result<Option<i128>> {
    let overflow = || Error::parse(loc, format!("constant {a} {op} {b} overflows"));
    let shift = |b: i128| {
        u32::try_from(b)
            .ok()
            .filter(|&k| k < 127)
            .ok_or_else(overflow)
    };
    let v = match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "<<" => {
            let k = shift(b)?;
            Some(a << k).filter(|v| v >> k == a)
        }
        ">>" => Some(a >> shift(b)?),
        // Halide's: zero by a zero divisor.
        "/" | "%" if b == 0 => Some(0),
        "/" => a.checked_div_euclid(b),
        "%" => a.checked_rem_euclid(b),
        "&" => Some(a & b),
        "|" => Some(a | b),
        "^" => Some(a ^ b),
        _ => return Ok(None),
    };
    v.map(Some).ok_or_else(overflow)
}

/// The element type a cast names: isadb's (`u8`), C's (`uint8_t`, `float`) or Halide's
/// (`uint8`, `float32`).
pub(super) fn elem_named(name: &str) -> Option<Elem> {
    let base = name.strip_suffix("_t").unwrap_or(name);
    let short = match (base, base.strip_prefix("uint"), base.strip_prefix("int")) {
        ("float" | "float32", ..) => "f32".to_string(),
        (_, Some(bits), _) => format!("u{bits}"),
        (_, None, Some(bits)) => format!("i{bits}"),
        _ => name.to_string(),
    };
    Elem::parse(&short)
}

/// The cast `name(x)` or `name<T>(x)` to `elem` (`head` the IR's `cast`, `sat-cast` or
/// `bitcast`).
pub(super) fn template_cast(
    head: &str,
    elem: Elem,
    name: &str,
    args: Vec<SExpr>,
    loc: &Location,
) -> Result<SExpr> {
    let [x] = <[SExpr; 1]>::try_from(args).map_err(|args| {
        Error::parse(
            loc,
            format!("{name} takes 1 argument(s), got {}", args.len()),
        )
    })?;
    Ok(list(head, vec![sym(elem.name(), loc), x], loc))
}

/// The head of a brace list `{a, b}` as the parser reads it: only `mux` takes one.
pub(super) const BRACE_LIST: &str = "{}";

/// The items of a brace list.
fn brace_items(e: &SExpr) -> Option<&[SExpr]> {
    match e.list()? {
        [head, items @ ..] if head.sym() == Some(BRACE_LIST) => Some(items),
        _ => None,
    }
}

/// An error unless a chain of `alternatives` nested selects (of `what`) nests within
/// [`MAX_DEPTH`], as every expression must.
fn check_chain(alternatives: usize, what: &str, loc: &Location) -> Result<()> {
    if alternatives > MAX_DEPTH {
        return Err(Error::parse(
            loc,
            format!(
                "{what} of {alternatives} alternatives nests more than {MAX_DEPTH} deep (isadb's limit)"
            ),
        ));
    }
    Ok(())
}

/// Halide's `mux(id, {v0, v1, ...})`: the value `vi` where `id == i`, the last value where `id`
/// is out of range (as Halide's select chain has it). `id` is bound once.
fn mux(args: Vec<SExpr>, loc: &Location) -> Result<SExpr> {
    let usage = || {
        Error::parse(
            loc,
            "mux takes an index and a brace list of values: mux(id, {a, b, c})",
        )
    };
    let [id, values] = <[SExpr; 2]>::try_from(args).map_err(|_| usage())?;
    let mut values = brace_items(&values).ok_or_else(usage)?.to_vec();
    check_chain(values.len(), "mux", loc)?;
    let mut chosen = values.pop().ok_or_else(usage)?;
    let id_name = "mux_id";
    for (i, value) in values.into_iter().enumerate().rev() {
        let is_i = list("eq", vec![sym(id_name, loc), int(i as i128, loc)], loc);
        chosen = list("select", vec![is_i, value, chosen], loc);
    }
    Ok(list("let", vec![sym(id_name, loc), id, chosen], loc))
}

/// Halide's `extract_bits(T, e, lsb)`: the bits of `e` from bit `lsb` up, as many as `T` has
/// (zeros past `e`'s top bit), read as `T`; float lanes are read as their bits. `e` is bound
/// once.
fn extract_bits(args: Vec<SExpr>, loc: &Location) -> Result<SExpr> {
    let [t, e, lsb] = <[SExpr; 3]>::try_from(args).map_err(|args| {
        Error::parse(
            loc,
            format!(
                "extract_bits takes a type, a value and a bit position, got {} argument(s)",
                args.len()
            ),
        )
    })?;
    if t.sym() == Some("bool") {
        return Err(Error::parse(
            &t.loc,
            "extract_bits reads bits as an integer or f32 type, not bool",
        ));
    }
    let x = || sym("extract_bits_x", loc);
    let bits_type = |t: SExpr| list("bits-type", vec![t], loc);
    let bits = list(
        "bitcast",
        vec![bits_type(list("elem", vec![x()], loc)), x()],
        loc,
    );
    let shifted = list("shr", vec![bits, lsb], loc);
    let kept = list("cast", vec![bits_type(t.clone()), shifted], loc);
    let read = list("bitcast", vec![t, kept], loc);
    Ok(list("let", vec![x(), e, read], loc))
}

/// A call: casts, the built-in Halide functions, or any other name passed through as `(name ...)`.
pub(super) fn call(name: &str, args: Vec<SExpr>, shifts: Shifts, loc: &Location) -> Result<SExpr> {
    match name {
        "mux" => return mux(args, loc),
        "extract_bits" => return extract_bits(args, loc),
        _ => {}
    }
    if let Some(braces) = args.iter().find(|a| brace_items(a).is_some()) {
        return Err(Error::parse(
            &braces.loc,
            format!("{name} takes no brace list (only mux does: mux(id, {{a, b}}))"),
        ));
    }
    let arity = |n: usize| -> Result<()> {
        if args.len() == n {
            Ok(())
        } else {
            Err(Error::parse(
                loc,
                format!("{name} takes {n} argument(s), got {}", args.len()),
            ))
        }
    };
    if let Some(elem) = elem_named(name) {
        return template_cast("cast", elem, name, args, loc);
    }
    if let Some(t) = name
        .strip_suffix("_sat")
        .filter(|t| Elem::parse(t).is_some())
    {
        arity(1)?;
        return Ok(list(
            "sat-cast",
            vec![sym(t, loc), args.into_iter().next().unwrap()],
            loc,
        ));
    }
    match name {
        "min" | "max" | "absd" => arity(2)?,
        // Halide's `select(c0, v0, c1, v1, ..., default)`: the first value whose condition
        // holds, nested selects.
        "select" => {
            if args.len() < 3 || args.len().is_multiple_of(2) {
                return Err(Error::parse(
                    loc,
                    format!(
                        "select takes a condition and a value, repeated, and a default (an odd count of 3 or more arguments), got {}",
                        args.len()
                    ),
                ));
            }
            check_chain(args.len() / 2, "select", loc)?;
            let mut args = args;
            let mut chosen = args.pop().expect("a default");
            while let (Some(value), Some(condition)) = (args.pop(), args.pop()) {
                chosen = list("select", vec![condition, value, chosen], loc);
            }
            return Ok(chosen);
        }
        "reduce_add" | "reduce_max" | "reduce_min" => {
            arity(2)?;
            if let SKind::Int(k) = args[0].kind {
                if k < 1 {
                    let msg =
                        format!("{name} reduces groups of k >= 1 adjacent lanes, got k = {k}");
                    return Err(Error::parse(&args[0].loc, msg));
                }
            }
            return Ok(list(&name.replace('_', "-"), args, loc));
        }
        "clamp" => {
            arity(3)?;
            let mut it = args.into_iter();
            let (x, lo, hi) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            return Ok(list("min", vec![list("max", vec![x, lo], loc), hi], loc));
        }
        "abs" => {
            arity(1)?;
            return Ok(halide_abs(args.into_iter().next().unwrap(), loc));
        }
        // Halide's division through a table of multipliers for a u8 divisor: the division's
        // result (by zero, Halide's zero), the divisor converted to the dividend's type.
        "fast_integer_divide" | "fast_integer_modulo" => {
            arity(2)?;
            let head = match name {
                "fast_integer_divide" => "divide-by",
                _ => "remainder-by",
            };
            let mut it = args.into_iter();
            let (x, y) = (it.next().unwrap(), it.next().unwrap());
            let y = match as_int(&y) {
                Some(_) => y,
                None => list("as", vec![x.clone(), y], loc),
            };
            return Ok(list(head, vec![x, y], loc));
        }
        // Halide's approximate reciprocals (rcpps, frecpe): computed exactly, as Halide does
        // on a target without them (z3 proves a selection against the exact value, which the
        // estimates only approach).
        "fast_inverse" | "fast_inverse_sqrt" => {
            arity(1)?;
            let x = args.into_iter().next().unwrap();
            let x = match name {
                "fast_inverse" => x,
                _ => list("sqrt", vec![x], loc),
            };
            let one = SExpr {
                kind: SKind::Float(1.0),
                loc: loc.clone(),
            };
            return Ok(list("div", vec![one, x], loc));
        }
        // Halide's linear interpolation, with its rounding (prelude's `halide-lerp`).
        "lerp" => {
            arity(3)?;
            return Ok(list("halide-lerp", args, loc));
        }
        // Halide's type constructors, as the element type's name (`cast(UInt(8), x)`).
        "UInt" | "Int" | "Float" => {
            arity(1)?;
            let bits = as_int(&args[0]);
            let short = match name {
                "UInt" => "u",
                "Int" => "i",
                _ => "f",
            };
            let elem = bits.and_then(|b| Elem::parse(&format!("{short}{b}")));
            return match elem {
                Some(e) => Ok(sym(e.name(), loc)),
                None => Err(Error::parse(
                    loc,
                    format!("{name}({}) is not an element type isadb has", args[0]),
                )),
            };
        }
        // Hints to Halide's scheduler and simplifier: the value itself.
        "likely" | "likely_if_innermost" | "strict_float" => {
            arity(1)?;
            return Ok(args.into_iter().next().unwrap());
        }
        // A NaN is the one value not equal to itself.
        "is_nan" => {
            arity(1)?;
            let x = args.into_iter().next().unwrap();
            return Ok(list("ne", vec![x.clone(), x], loc));
        }
        // Halide's names of the bit counts (of the operand's type, as Halide's are).
        "count_leading_zeros" => {
            arity(1)?;
            return Ok(list("clz", args, loc));
        }
        "count_trailing_zeros" => {
            // The ones below the lowest set bit (all of them for zero): popcount(~x & (x - 1)).
            arity(1)?;
            let x = args.into_iter().next().unwrap();
            let below = list("sub", vec![x.clone(), int(1, loc)], loc);
            let mask = list("and", vec![list("not", vec![x], loc), below], loc);
            return Ok(list("popcount", vec![mask], loc));
        }
        // Halide's shifts by name: `shift_left(x, y)` is `x << y`, and the widening ones shift
        // `x` widened; by a value, Halide's signed amounts as the operators'.
        "shift_left" | "shift_right" | "widening_shift_left" | "widening_shift_right" => {
            arity(2)?;
            let [x, y] = <[SExpr; 2]>::try_from(args).expect("two arguments");
            let x = match name.starts_with("widening") {
                true => list("widen", vec![x], loc),
                false => x,
            };
            let (op, ir) = match name.ends_with("left") {
                true => ("<<", "shl"),
                false => (">>", "shr"),
            };
            return combine(op, ir, x, y, shifts, loc);
        }
        // Halide's rounding shifts: by a constant, the FPIR idioms (a negative amount shifts
        // the other way); by a value, see `rounding_shift_by_value`.
        "rounding_shift_left" | "rounding_shift_right" => {
            arity(2)?;
            let left = name == "rounding_shift_left";
            let [x, y] = <[SExpr; 2]>::try_from(args).expect("two arguments");
            return Ok(match (as_int(&y), shifts) {
                (Some(k), _) => {
                    let op = match left == (k < 0) {
                        true => "rounding_shr",
                        false => "shl",
                    };
                    let k = k.checked_abs().ok_or_else(|| {
                        Error::parse(&y.loc, format!("{name} by {k}: the amount is out of range"))
                    })?;
                    list(op, vec![x, int(k, &y.loc)], loc)
                }
                (None, Shifts::Halide) => rounding_shift_by_value(left, x, y, loc),
                (None, Shifts::Ir) => {
                    let idiom = match left {
                        true => "rounding_shl",
                        false => "rounding_shr",
                    };
                    list(idiom, vec![x, y], loc)
                }
            });
        }
        // Halide's names of the FPIR idioms that Pitchfork names otherwise (the arity checked
        // here, so that an error names what the user wrote).
        "mul_shift_right"
        | "rounding_mul_shift_right"
        | "widen_right_add"
        | "widen_right_sub"
        | "widen_right_mul" => {
            let (idiom, n) = match name {
                "mul_shift_right" => ("mul_shr", 3),
                "rounding_mul_shift_right" => ("rounding_mul_shr", 3),
                "widen_right_add" => ("extending_add", 2),
                "widen_right_sub" => ("extending_sub", 2),
                _ => ("extending_mul", 2),
            };
            arity(n)?;
            return Ok(list(idiom, args, loc));
        }
        // Halide's `reinterpret(T, x)`: x's bits as lanes of T (of the same width).
        "reinterpret" => {
            arity(2)?;
            return Ok(list("bitcast", args, loc));
        }
        _ => {}
    }
    Ok(list(name, args, loc))
}

/// Halide's `rounding_shift_left(x, y)` (`left`) or `rounding_shift_right(x, y)` for a `y` that
/// is not a constant: `y` read as `halide-shl` reads it (prelude), every right shift rounding
/// (the FPIR idiom `rounding_shr`); a shift by signed lanes is the FPIR idiom `rounding_shl`
/// (NEON's `urshl` and `srshl`, their counts clamped to the byte they read at lanes wider than
/// a byte), by the negated amount for a right shift (-128 negated is -128, which shifts either
/// way out of a byte: z3 proves both readings equal). The select of a left and a rounding right
/// shift in `x`'s own type reads amounts of twice the width or more otherwise, which Halide
/// leaves undefined; it took 35 at i16 on NEON against the idiom's 4 (the idiom is dearer on
/// AVX2 at i32, 68 against 58, and on HVX at i16, 48 against 39). `x` and `y` are bound once.
fn rounding_shift_by_value(left: bool, x: SExpr, y: SExpr, loc: &Location) -> SExpr {
    let (x_name, y_name) = ("rounding_shift_x", "rounding_shift_y");
    let (xs, ys) = (|| sym(x_name, loc), || sym(y_name, loc));
    let amount = || list("halide-amount", vec![xs(), ys()], loc);
    let otherwise = match left {
        true => {
            let bits = list(
                "bitcast",
                vec![list("elem", vec![xs()], loc), amount()],
                loc,
            );
            list("shl", vec![xs(), bits], loc)
        }
        false => list("rounding_shr", vec![xs(), amount()], loc),
    };
    let amount_left = match left {
        true => amount(),
        false => list("neg", vec![amount()], loc),
    };
    let idiom = list("rounding_shl", vec![xs(), amount_left], loc);
    let is_signed = list("is-signed", vec![list("elem", vec![ys()], loc)], loc);
    let body = list("if", vec![is_signed, idiom, otherwise], loc);
    list(
        "let",
        vec![
            sym(x_name, loc),
            x,
            list("let", vec![sym(y_name, loc), y, body], loc),
        ],
        loc,
    )
}

/// Halide's `abs`: of a signed integer it is unsigned (`abs(i8(-128))` is `u8(128)`), so the IR's
/// same-typed `abs` is followed by a cast to the unsigned type there.
fn halide_abs(x: SExpr, loc: &Location) -> SExpr {
    if let Some(v) = as_int(&x) {
        return int(v.abs(), loc);
    }
    let elem = || list("elem", vec![x.clone()], loc);
    let signed_int = list(
        "&&",
        vec![
            list("is-signed", vec![elem()], loc),
            list("!=", vec![elem(), sym("f32", loc)], loc),
        ],
        loc,
    );
    let abs = list("abs", vec![x.clone()], loc);
    let unsigned = list(
        "cast",
        vec![list("unsigned", vec![elem()], loc), abs.clone()],
        loc,
    );
    list("if", vec![signed_int, unsigned, abs], loc)
}
