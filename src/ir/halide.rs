//! Halide-style infix expressions (the syntax of Halide's `simd_op_check` tests) read into the
//! IR's s-expression tree, so the ordinary elaborator types them.
//!
//! * Variables carry their element type as a suffix (`a_u8`, `acc_i32`); the name is kept whole
//!   and typed by the elaborator's implicit lanes.
//! * `u8(e)` is `(cast u8 e)`, `u8_sat(e)` is `(sat-cast u8 e)`.
//! * C operators and precedence; `/` and `%` round as Halide does (toward negative infinity,
//!   non-negative remainder) and, as the IR has no integer division, only divide by a constant
//!   power of two: `e / 2^k` is `(shr e k)`, `e % 2^k` is `(and e 2^k-1)`. Literal subexpressions
//!   are folded first, so `e / (1 << 15)` works.
//! * `min max abs select absd reduce_add clamp`, the casts, and any other call `f(x, ...)`, which
//!   becomes `(f x ...)` so idioms (`widening_add`, `rounding_mul_shr`, ...) are callable by name.

use super::elaborate::{Macros, Scope};
use super::expr::Expr;
use super::sexpr::{SExpr, SKind};
use super::types::{Elem, VecType};
use crate::error::{Error, Location, Result};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// Reads one Halide-style expression; `source` names the text in error locations.
pub fn parse_halide(text: &str, source: &str) -> Result<SExpr> {
    let toks = lex(text, source)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        return Err(Error::parse(
            &t.loc,
            format!("unexpected token {} after the end of the expression", t.tok),
        ));
    }
    Ok(e)
}

/// Parses and elaborates a Halide-style expression whose variables have `lanes` lanes. Operands
/// of `reduce_add(k, e)` have `k` times the lanes of its result, so in
/// `acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))` `acc_u32` has `lanes` lanes and `a_u8`,
/// `b_u8` have `4 * lanes`.
pub fn elaborate_halide(text: &str, source: &str, macros: &Macros, lanes: u32) -> Result<Rc<Expr>> {
    elaborate_parsed(&parse_halide(text, source)?, macros, lanes, &HashMap::new())
}

/// Elaborates a parsed Halide-style expression as [`elaborate_halide`] does, with variables
/// whose element type is `declared` (`--var z:u16`) rather than carried as a suffix.
pub fn elaborate_parsed(
    s: &SExpr,
    macros: &Macros,
    lanes: u32,
    declared: &HashMap<String, Elem>,
) -> Result<Rc<Expr>> {
    let mut uses = HashMap::new();
    var_lanes(s, lanes as u64, declared, &mut uses)?;
    let mut scope = Scope::new(macros);
    scope.implicit_lanes = Some(lanes);
    for (name, (n, _)) in uses {
        let elem = declared
            .get(&name)
            .copied()
            .or_else(|| type_suffix(&name))
            .expect("only typed names are collected");
        scope.bind_var(&name, VecType::new(n as u32, elem));
    }
    scope.expr(s)
}

/// The element type a variable name carries as its suffix (`acc_u32` -> u32).
fn type_suffix(name: &str) -> Option<Elem> {
    name.rsplit_once('_').and_then(|(_, t)| Elem::parse(t))
}

/// The lane count of every typed variable: `lanes` outside `reduce-add`, times k inside one.
fn var_lanes(
    s: &SExpr,
    lanes: u64,
    declared: &HashMap<String, Elem>,
    out: &mut HashMap<String, (u64, Location)>,
) -> Result<()> {
    match &s.kind {
        SKind::Sym(name) if type_suffix(name).is_some() || declared.contains_key(name) => {
            if lanes > u32::MAX as u64 {
                return Err(s.err(format!("'{name}' would have {lanes} lanes, too many")));
            }
            match out.get(name) {
                Some((n, at)) if *n != lanes => Err(Error::ty(
                    &s.loc,
                    format!(
                        "'{name}' has {lanes} lanes here but {n} at {}:{} (operands of reduce_add(k, e) have k times the lanes of its result)",
                        at.line, at.col
                    ),
                )),
                Some(_) => Ok(()),
                None => {
                    out.insert(name.clone(), (lanes, s.loc.clone()));
                    Ok(())
                }
            }
        }
        SKind::List(items) => {
            if let (Some("reduce-add"), [_, k, x]) = (s.head(), items.as_slice()) {
                if let SKind::Int(k) = k.kind {
                    if k > 0 && k <= u32::MAX as i128 {
                        return var_lanes(x, lanes.saturating_mul(k as u64), declared, out);
                    }
                }
            }
            items
                .iter()
                .skip(1)
                .try_for_each(|i| var_lanes(i, lanes, declared, out))
        }
        _ => Ok(()),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Ident(String),
    Punct(&'static str),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(i) => write!(f, "'{i}'"),
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

struct Token {
    tok: Tok,
    loc: Location,
}

/// Longest first, so `<<` is not read as two `<`.
const PUNCT: [&str; 23] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^",
    "|", "~", "!", "(", ")", ",",
];

fn lex(text: &str, file: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let mut out = Vec::new();
    let loc = |line, col| Location {
        file: file.to_string(),
        line,
        col,
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            if c == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
            i += 1;
            continue;
        }
        let at = loc(line, col);
        let start = i;
        let tok = if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let value = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                Some(hex) if !hex.is_empty() => u128::from_str_radix(hex, 16)
                    .ok()
                    .and_then(|v| i128::try_from(v).ok()),
                _ => word.parse::<i128>().ok(),
            };
            match value {
                Some(v) => Tok::Int(v),
                None if word.contains('.') => {
                    return Err(Error::parse(
                        &at,
                        format!("floating-point literal '{word}' is not supported"),
                    ))
                }
                None if word.chars().all(|c| c.is_ascii_digit()) => {
                    return Err(Error::parse(
                        &at,
                        format!("integer literal '{word}' is too large"),
                    ))
                }
                None => return Err(Error::parse(&at, format!("malformed number '{word}'"))),
            }
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else {
            let rest = &chars[i..];
            let Some(p) = PUNCT
                .iter()
                .find(|p| p.chars().zip(rest).filter(|(a, b)| a == *b).count() == p.len())
            else {
                return Err(Error::parse(&at, format!("unexpected character '{c}'")));
            };
            i += p.len();
            Tok::Punct(p)
        };
        col += i - start;
        out.push(Token { tok, loc: at });
    }
    out.push(Token {
        tok: Tok::Eof,
        loc: loc(line, col),
    });
    Ok(out)
}

/// Binary operators from the loosest to the tightest binding level, with their IR names.
const LEVELS: [&[(&str, &str)]; 10] = [
    &[("||", "or")],
    &[("&&", "and")],
    &[("|", "or")],
    &[("^", "xor")],
    &[("&", "and")],
    &[("==", "eq"), ("!=", "ne")],
    &[("<", "lt"), ("<=", "le"), (">", "gt"), (">=", "ge")],
    &[("<<", "shl"), (">>", "shr")],
    &[("+", "add"), ("-", "sub")],
    &[("*", "mul"), ("/", "div"), ("%", "mod")],
];

/// Parentheses, calls and unary operators nested deeper than this are refused (stack safety).
const MAX_DEPTH: usize = 256;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

fn sym(name: &str, loc: &Location) -> SExpr {
    SExpr {
        kind: SKind::Sym(name.to_string()),
        loc: loc.clone(),
    }
}

fn int(v: i128, loc: &Location) -> SExpr {
    SExpr {
        kind: SKind::Int(v),
        loc: loc.clone(),
    }
}

fn list(head: &str, args: Vec<SExpr>, loc: &Location) -> SExpr {
    let mut items = vec![sym(head, loc)];
    items.extend(args);
    SExpr {
        kind: SKind::List(items),
        loc: loc.clone(),
    }
}

fn as_int(s: &SExpr) -> Option<i128> {
    match s.kind {
        SKind::Int(v) => Some(v),
        _ => None,
    }
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn next(&mut self) -> &Token {
        let t = &self.toks[self.pos];
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn at_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::parse(&self.peek().loc, "expression nests too deep"));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<SExpr> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<SExpr> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let t = self.peek();
            let Some((op, name)) = LEVELS[level].iter().find(|(op, _)| t.tok == Tok::Punct(op))
            else {
                return Ok(lhs);
            };
            let loc = t.loc.clone();
            self.next();
            let rhs = self.binary(level + 1)?;
            lhs = combine(op, name, lhs, rhs, &loc)?;
        }
    }

    fn unary(&mut self) -> Result<SExpr> {
        let t = self.peek();
        let loc = t.loc.clone();
        let op = match t.tok {
            Tok::Punct(p @ ("-" | "~" | "!")) => p,
            _ => return self.primary(),
        };
        self.next();
        self.enter()?;
        let x = self.unary()?;
        self.depth -= 1;
        Ok(match (op, as_int(&x)) {
            ("-", Some(v)) => int(
                v.checked_neg()
                    .ok_or_else(|| Error::parse(&loc, "constant overflows"))?,
                &loc,
            ),
            ("~", Some(v)) => int(!v, &loc),
            ("-", None) => list("neg", vec![x], &loc),
            _ => list("not", vec![x], &loc),
        })
    }

    fn primary(&mut self) -> Result<SExpr> {
        let t = self.next();
        let loc = t.loc.clone();
        match t.tok.clone() {
            Tok::Int(v) => Ok(int(v, &loc)),
            Tok::Ident(name) if self.at_punct("(") => {
                self.next();
                self.enter()?;
                let args = self.call_args(&name, &loc)?;
                self.depth -= 1;
                call(&name, args, &loc)
            }
            Tok::Ident(name) => Ok(sym(&name, &loc)),
            Tok::Punct("(") => {
                self.enter()?;
                let e = self.expr()?;
                self.depth -= 1;
                let t = self.peek();
                if t.tok != Tok::Punct(")") {
                    return Err(Error::parse(
                        &t.loc,
                        format!(
                            "expected ')' to close '(' at {}:{}, found {}",
                            loc.line, loc.col, t.tok
                        ),
                    ));
                }
                self.next();
                Ok(e)
            }
            Tok::Eof => Err(Error::parse(
                &loc,
                "expected an expression, found end of input",
            )),
            other => Err(Error::parse(
                &loc,
                format!("unexpected token {other}, expected an expression"),
            )),
        }
    }

    /// The arguments of a call whose '(' has just been read.
    fn call_args(&mut self, name: &str, loc: &Location) -> Result<Vec<SExpr>> {
        let mut args = Vec::new();
        if self.at_punct(")") {
            self.next();
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            let t = self.peek();
            match t.tok {
                Tok::Punct(",") => {}
                Tok::Punct(")") => {
                    self.next();
                    return Ok(args);
                }
                _ => {
                    return Err(Error::parse(
                        &t.loc,
                        format!(
                            "expected ',' or ')' in the call to {name} at {}:{}, found {}",
                            loc.line, loc.col, t.tok
                        ),
                    ))
                }
            }
            self.next();
        }
    }
}

/// A binary node, with literal operands folded and division by powers of two lowered to shifts.
fn combine(op: &str, name: &str, lhs: SExpr, rhs: SExpr, loc: &Location) -> Result<SExpr> {
    if let (Some(a), Some(b)) = (as_int(&lhs), as_int(&rhs)) {
        if let Some(v) = fold(op, a, b, loc)? {
            return Ok(int(v, loc));
        }
    }
    if op == "/" || op == "%" {
        let what = if op == "/" {
            "division"
        } else {
            "remainder (%)"
        };
        let k = match as_int(&rhs) {
            Some(c) if c > 0 && c & (c - 1) == 0 => c.trailing_zeros() as i128,
            Some(c) => {
                return Err(Error::parse(
                    loc,
                    format!("integer {what} is only supported by powers of two, not by {c}"),
                ))
            }
            None => {
                return Err(Error::parse(
                    loc,
                    format!("integer {what} is only supported by powers of two, and this divisor is not a constant"),
                ))
            }
        };
        return Ok(match (op, k) {
            ("/", 0) => lhs,
            ("/", _) => list("shr", vec![lhs, int(k, &rhs.loc)], loc),
            _ => list("and", vec![lhs, int((1i128 << k) - 1, &rhs.loc)], loc),
        });
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
        "/" | "%" if b == 0 => return Err(Error::parse(loc, "division by zero")),
        "/" => a.checked_div_euclid(b),
        "%" => a.checked_rem_euclid(b),
        "&" => Some(a & b),
        "|" => Some(a | b),
        "^" => Some(a ^ b),
        _ => return Ok(None),
    };
    v.map(Some).ok_or_else(overflow)
}

/// A call: casts, the built-in Halide functions, or any other name passed through as `(name ...)`.
fn call(name: &str, args: Vec<SExpr>, loc: &Location) -> Result<SExpr> {
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
    if Elem::parse(name).is_some() {
        arity(1)?;
        return Ok(list(
            "cast",
            vec![sym(name, loc), args.into_iter().next().unwrap()],
            loc,
        ));
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
        "select" => arity(3)?,
        "reduce_add" => {
            arity(2)?;
            return Ok(list("reduce-add", args, loc));
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
        _ => {}
    }
    Ok(list(name, args, loc))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::sexpr::read_all;
    use crate::semantics::{eval, Env, Value};
    use crate::spec::load::load_forms;
    use crate::spec::SpecSet;

    /// The prelude and the FPIR idioms only, so specs being edited elsewhere do not matter.
    fn macros() -> Macros {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
        let mut set = SpecSet::default();
        for f in ["prelude.spec", "idioms/fpir.spec"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            load_forms(&mut set, &read_all(&text, f).unwrap()).unwrap();
        }
        set.macros
    }

    fn sx(text: &str) -> String {
        match parse_halide(text, "expression") {
            Ok(s) => s.to_string(),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn err(text: &str) -> String {
        match parse_halide(text, "expression") {
            Ok(s) => panic!("{text} parsed as {s}"),
            Err(e) => e.to_string(),
        }
    }

    fn elab(text: &str, lanes: u32) -> Rc<Expr> {
        elaborate_halide(text, "expression", &macros(), lanes)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn elab_err(text: &str) -> String {
        match elaborate_halide(text, "expression", &macros(), 8) {
            Ok(e) => panic!("{text} elaborated to {e}"),
            Err(e) => e.to_string(),
        }
    }

    /// Evaluates a one-lane expression with scalar inputs given as integers.
    fn run(e: &Expr, inputs: &[(&str, i128)]) -> i128 {
        let mut env = Env::new();
        for (name, ty) in e.vars() {
            let v = inputs
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .1;
            env.insert(name, Value::new(ty, vec![v as u128; ty.lanes as usize]));
        }
        eval(e, &env).unwrap().int(0)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(
            sx("a_u8 + b_u8 * 2 - c_u8"),
            "(sub (add a_u8 (mul b_u8 2)) c_u8)"
        );
        assert_eq!(sx("a_u8 - b_u8 - c_u8"), "(sub (sub a_u8 b_u8) c_u8)");
        assert_eq!(sx("a_u8 - (b_u8 - c_u8)"), "(sub a_u8 (sub b_u8 c_u8))");
        assert_eq!(sx("a_u8 << 1 + 2"), "(shl a_u8 3)");
        assert_eq!(
            sx("a_u8 | b_u8 ^ c_u8 & d_u8"),
            "(or a_u8 (xor b_u8 (and c_u8 d_u8)))"
        );
        assert_eq!(
            sx("a_u8 < b_u8 && c_u8 == d_u8 || e_u8 >= 3 != f_bool"),
            "(or (and (lt a_u8 b_u8) (eq c_u8 d_u8)) (ne (ge e_u8 3) f_bool))"
        );
        assert_eq!(
            sx("-a_i8 * ~b_i8 + !(c_i8 <= d_i8)"),
            "(add (mul (neg a_i8) (not b_i8)) (not (le c_i8 d_i8)))"
        );
        assert_eq!(sx("a_u16 >> 2 << 1"), "(shl (shr a_u16 2) 1)");
        assert_eq!(sx("a_u8 > b_u8"), "(gt a_u8 b_u8)");
        assert_eq!(sx("a_u8 != b_u8 == c_bool"), "(eq (ne a_u8 b_u8) c_bool)");
    }

    #[test]
    fn literals_and_folding() {
        assert_eq!(sx("a_u8 & 0xff"), "(and a_u8 255)");
        assert_eq!(sx("a_i32 + (1 << 14)"), "(add a_i32 16384)");
        assert_eq!(sx("a_i16 * -3"), "(mul a_i16 -3)");
        assert_eq!(
            sx("a_i16 + (2 * 3 - 11) / 4 + 7 % 4 + ~0"),
            "(add (add (add a_i16 -2) 3) -1)"
        );
        assert_eq!(sx("a_u8 * (0x10 >> 2 | 1)"), "(mul a_u8 5)");
    }

    #[test]
    fn casts_and_calls() {
        assert_eq!(sx("u8(x_u16)"), "(cast u8 x_u16)");
        assert_eq!(
            sx("i16_sat(x_i32) + u16(y_u8) * 3"),
            "(add (sat-cast i16 x_i32) (mul (cast u16 y_u8) 3))"
        );
        assert_eq!(sx("min(a_u8, max(b_u8, 3))"), "(min a_u8 (max b_u8 3))");
        assert_eq!(sx("clamp(x_i16, -5, 5)"), "(min (max x_i16 -5) 5)");
        assert_eq!(
            sx("select(a_u8 > b_u8, a_u8, b_u8)"),
            "(select (gt a_u8 b_u8) a_u8 b_u8)"
        );
        assert_eq!(sx("absd(a_u8, b_u8)"), "(absd a_u8 b_u8)");
        assert_eq!(sx("widening_add(a_u8, b_u8)"), "(widening_add a_u8 b_u8)");
        assert_eq!(
            sx("rounding_mul_shr(a_i16, b_i16, 15)"),
            "(rounding_mul_shr a_i16 b_i16 15)"
        );
        assert_eq!(sx("f()"), "(f)");
        assert_eq!(
            sx("u8((u16(a_u8) + u16(b_u8) + 1) >> 1)"),
            "(cast u8 (shr (add (add (cast u16 a_u8) (cast u16 b_u8)) 1) 1))"
        );
    }

    #[test]
    fn rounding_average_matches_the_idiom() {
        let e = elab("u8((u16(a_u8) + u16(b_u8) + 1) >> 1)", 1);
        let idiom = elab("rounding_halving_add(a_u8, b_u8)", 1);
        assert_eq!(e.ty.to_string(), idiom.ty.to_string());
        for a in 0..256 {
            for b in 0..256 {
                let inputs = [("a_u8", a), ("b_u8", b)];
                assert_eq!(run(&e, &inputs), (a + b + 1) >> 1);
                assert_eq!(run(&e, &inputs), run(&idiom, &inputs));
            }
        }
    }

    #[test]
    fn q15_multiply_is_a_shift_by_15() {
        let text = "i16_sat((i32(a_i16) * i32(b_i16) + (1 << 14)) / (1 << 15))";
        assert_eq!(
            sx(text),
            "(sat-cast i16 (shr (add (mul (cast i32 a_i16) (cast i32 b_i16)) 16384) 15))"
        );
        let e = elab(text, 8);
        assert_eq!(e.ty.to_string(), "<8 x i16>");
        let one = elab(text, 1);
        let idiom = elab("rounding_mul_shr(a_i16, b_i16, 15)", 1);
        let vals = [
            -32768, -32767, -16384, -12345, -1, 0, 1, 2, 777, 16384, 32767,
        ];
        for a in vals {
            for b in vals {
                let inputs = [("a_i16", a), ("b_i16", b)];
                let want = ((a * b + (1 << 14)) >> 15).clamp(-32768, 32767);
                assert_eq!(run(&one, &inputs), want, "{a} {b}");
                assert_eq!(run(&idiom, &inputs), want, "{a} {b}");
            }
        }
    }

    #[test]
    fn saturating_narrowing_division() {
        let text = "u8_sat((i32(a_i16) + 8) / 16)";
        assert_eq!(sx(text), "(sat-cast u8 (shr (add (cast i32 a_i16) 8) 4))");
        let e = elab(text, 1);
        assert_eq!(e.ty.to_string(), "u8");
        for a in [-32768, -100, -9, -8, 0, 7, 8, 100, 4087, 4088, 32767] {
            assert_eq!(
                run(&e, &[("a_i16", a)]),
                ((a + 8).div_euclid(16)).clamp(0, 255),
                "{a}"
            );
        }
    }

    #[test]
    fn reduce_add_operands_are_wider() {
        let text = "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))";
        assert_eq!(
            sx(text),
            "(add acc_u32 (reduce-add 4 (mul (cast u32 a_u8) (cast u32 b_u8))))"
        );
        let e = elab(text, 4);
        assert_eq!(e.ty.to_string(), "<4 x u32>");
        let vars: Vec<String> = e.vars().iter().map(|(n, t)| format!("{n}:{t}")).collect();
        assert_eq!(
            vars,
            ["acc_u32:<4 x u32>", "a_u8:<16 x u8>", "b_u8:<16 x u8>"]
        );
        let mut env = Env::new();
        env.insert(
            "acc_u32".into(),
            Value::new(VecType::parse("<4 x u32>").unwrap(), vec![1000, 0, 5, 7]),
        );
        env.insert(
            "a_u8".into(),
            Value::new(VecType::parse("<16 x u8>").unwrap(), (0..16).collect()),
        );
        env.insert(
            "b_u8".into(),
            Value::new(VecType::parse("<16 x u8>").unwrap(), vec![255; 16]),
        );
        let v = eval(&e, &env).unwrap();
        assert_eq!(
            v.lanes,
            vec![1000 + 6 * 255, 22 * 255, 5 + 38 * 255, 7 + 54 * 255]
        );
        let msg = elab_err("u16(a_u8) + reduce_add(2, u16(a_u8))");
        assert_eq!(
            msg,
            "expression:1:31: type error: 'a_u8' has 16 lanes here but 8 at 1:5 (operands of reduce_add(k, e) have k times the lanes of its result)"
        );
    }

    #[test]
    fn division_rounds_down_and_remainder_is_never_negative() {
        assert_eq!(sx("x_i8 / 4"), "(shr x_i8 2)");
        assert_eq!(sx("x_i8 % 4"), "(and x_i8 3)");
        assert_eq!(sx("x_i8 / 1"), "x_i8");
        let div = elab("(x_i8 / 4)", 1);
        let rem = elab("x_i8 % 4", 1);
        assert_eq!(run(&div, &[("x_i8", -7)]), -2);
        assert_eq!(run(&rem, &[("x_i8", -7)]), 1);
        for k in 0..8 {
            let c = 1i128 << k;
            for ty in ["i8", "u8"] {
                let d = elab(&format!("x_{ty} / {c}"), 1);
                let r = elab(&format!("x_{ty} % {c}"), 1);
                let range = if ty == "i8" { -128..128 } else { 0..256 };
                for x in range {
                    let name = format!("x_{ty}");
                    assert_eq!(run(&d, &[(name.as_str(), x)]), x.div_euclid(c), "{x} / {c}");
                    assert_eq!(run(&r, &[(name.as_str(), x)]), x.rem_euclid(c), "{x} % {c}");
                }
            }
        }
    }

    #[test]
    fn halide_abs_is_unsigned_for_signed_types() {
        let e = elab("abs(x_i8)", 1);
        assert_eq!(e.ty.to_string(), "u8");
        assert_eq!(run(&e, &[("x_i8", -128)]), 128);
        assert_eq!(run(&e, &[("x_i8", -5)]), 5);
        assert_eq!(elab("abs(x_u16)", 4).ty.to_string(), "<4 x u16>");
        assert_eq!(elab("u16(abs(x_i8))", 1).ty.to_string(), "u16");
        assert_eq!(sx("a_i8 + abs(-3)"), "(add a_i8 3)");
    }

    #[test]
    fn idioms_elaborate_by_name() {
        assert_eq!(
            elab("widening_add(a_u8, b_u8)", 16).ty.to_string(),
            "<16 x u16>"
        );
        assert_eq!(elab("absd(a_i8, b_i8)", 16).ty.to_string(), "<16 x u8>");
        assert_eq!(
            elab("saturating_add(a_u8, b_u8)", 16).ty.to_string(),
            "<16 x u8>"
        );
        assert_eq!(
            elab("halving_add(a_i16, b_i16) + 1", 8).ty.to_string(),
            "<8 x i16>"
        );
        let msg = elab_err("widenin_add(a_u8, b_u8)");
        assert!(
            msg.starts_with("expression:1:1: unknown operator 'widenin_add'"),
            "{msg}"
        );
        assert!(msg.contains("did you mean 'widening_add'"), "{msg}");
    }

    #[test]
    fn mixing_element_types_is_a_type_error() {
        let msg = elab_err("a_u8 + b_u16");
        assert!(msg.starts_with("expression:1:6: type error:"), "{msg}");
        assert!(
            msg.contains("<8 x u8>") && msg.contains("<8 x u16>"),
            "{msg}"
        );
        assert!(elab_err("a_u8 * 300").contains("literal 300 does not fit in u8"));
    }

    #[test]
    fn errors_point_at_the_problem() {
        assert_eq!(
            err("(a_u8 + b_u8"),
            "expression:1:13: expected ')' to close '(' at 1:1, found end of input"
        );
        assert_eq!(
            err("u8((a_u8 + 1) b_u8)"),
            "expression:1:15: expected ',' or ')' in the call to u8 at 1:1, found 'b_u8'"
        );
        assert_eq!(
            err("a_u8 * + b_u8"),
            "expression:1:8: unexpected token '+', expected an expression"
        );
        assert_eq!(
            err("a_u8 +\n  * b_u8"),
            "expression:2:3: unexpected token '*', expected an expression"
        );
        assert_eq!(
            err("a_u8 +"),
            "expression:1:7: expected an expression, found end of input"
        );
        assert_eq!(
            err(""),
            "expression:1:1: expected an expression, found end of input"
        );
        assert_eq!(
            err("a_u8 b_u8"),
            "expression:1:6: unexpected token 'b_u8' after the end of the expression"
        );
        assert_eq!(
            err("a_u8 )"),
            "expression:1:6: unexpected token ')' after the end of the expression"
        );
        assert_eq!(err("a_u8 @ 2"), "expression:1:6: unexpected character '@'");
        assert_eq!(
            err("a_f32 * 1.5"),
            "expression:1:9: floating-point literal '1.5' is not supported"
        );
        assert_eq!(
            err("a_u8 + 12ab"),
            "expression:1:8: malformed number '12ab'"
        );
        assert_eq!(
            err("a_u8 / 3"),
            "expression:1:6: integer division is only supported by powers of two, not by 3"
        );
        assert_eq!(
            err("a_u8 % 6"),
            "expression:1:6: integer remainder (%) is only supported by powers of two, not by 6"
        );
        assert_eq!(
            err("a_u8 / b_u8"),
            "expression:1:6: integer division is only supported by powers of two, and this divisor is not a constant"
        );
        assert_eq!(
            err("a_u8 / (2 - 2)"),
            "expression:1:6: integer division is only supported by powers of two, not by 0"
        );
        assert_eq!(err("a_u8 + 1 / 0"), "expression:1:10: division by zero");
        assert_eq!(
            err("a_u8 + (1 << 200)"),
            "expression:1:11: constant 1 << 200 overflows"
        );
        assert_eq!(
            err("min(a_u8)"),
            "expression:1:1: min takes 2 argument(s), got 1"
        );
        assert_eq!(
            err("x + u8(a_u8, b_u8)"),
            "expression:1:5: u8 takes 1 argument(s), got 2"
        );
        let deep = format!("{}a_u8{}", "(".repeat(1000), ")".repeat(1000));
        assert!(err(&deep).ends_with("expression nests too deep"));
    }
}
