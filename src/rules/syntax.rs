//! The text form of hand-written rewrite rules (`specs/rules/*.rules`), one rule per line:
//!
//! ```text
//! # comment
//! rule NAME [for T in u8 u16 i8 i16]: LHS => RHS [if PREDICATE] [kind KIND[, target TARGET]]
//! ```
//!
//! LHS, RHS and PREDICATE are Halide-style infix expressions (src/ir/halide.rs); idioms are
//! callable by name. Wildcards are variables: `x_u8` has a fixed type; in a rule with a
//! `for T in ...` clause a bare `x` is `x_T`, and the type aliases `T WT NT ST UT SWT SNT UNT`
//! (the element type, its wide / narrow / signed / unsigned forms) may be used as casts
//! (`WT(x)`, `T_sat(e)`) and as suffixes (`c0_WT`). Names `c0`, `c1`, ... (with any type suffix)
//! are constant wildcards: one scalar broadcast to every lane. Predicates may use
//! `is_pow2(c)`, `upper_bounded(x, k)`, `lower_bounded(x, k)` besides the comparisons.

use crate::error::{Error, Location, Result};
use crate::ir::types::Elem;
use crate::spec::Isa;
use crate::words::text_enum;

text_enum! {
    /// How a rule is used: the phase of instruction selection it runs in.
    pub enum RuleKind("rule kind") {
        /// Integer arithmetic into fixed-point idioms (Pitchfork's lifting rules).
        Lift = "lift",
        /// Idioms into instructions of a target.
        Lower = "lower",
        /// Identities that run in both phases.
        Simplify = "simplify",
        /// Idioms into simpler arithmetic.
        Expand = "expand",
        /// Rules of a compiler pass.
        Compile = "compile",
        /// Optimizations.
        Optimize = "optimize",
    }
}

/// One parsed rule (types not yet instantiated).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Unique name.
    pub name: String,
    /// The element types `T` ranges over; empty for a monomorphic rule.
    pub types: Vec<Elem>,
    /// The left-hand side, in the Halide-style form with type templates.
    pub lhs: String,
    /// The right-hand side.
    pub rhs: String,
    /// The condition under which the rule holds, when it does not always.
    pub predicate: Option<String>,
    /// How the rule is used.
    pub kind: RuleKind,
    /// The ISA a lowering rule is for; None for every target.
    pub target: Option<Isa>,
    /// The rule line as written (trimmed), part of the rule hash.
    pub text: String,
    /// Where the rule is written.
    pub file: String,
    /// Its line there.
    pub line: usize,
    /// 1-based columns where lhs, rhs and predicate start, for error locations.
    pub lhs_col: usize,
    #[allow(missing_docs)]
    pub rhs_col: usize,
    #[allow(missing_docs)]
    pub pred_col: usize,
}

/// Type aliases usable in polymorphic rules, longest first so `SWT` is not read as `S` + `WT`.
const ALIASES: [&str; 8] = ["SWT", "SNT", "UNT", "WT", "NT", "ST", "UT", "T"];

fn alias_type(alias: &str, t: Elem) -> Option<Elem> {
    match alias {
        "T" => Some(t),
        "WT" => t.wide(),
        "NT" => t.narrow(),
        "ST" => t.signed(),
        "UT" => t.unsigned(),
        "SWT" => t.wide().and_then(Elem::signed),
        "SNT" => t.narrow().and_then(Elem::signed),
        "UNT" => t.narrow().and_then(Elem::unsigned),
        _ => None,
    }
}

/// Parses a whole `.rules` file.
pub fn parse_rules(text: &str, file: &str) -> Result<Vec<Rule>> {
    let mut out: Vec<Rule> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("");
        if body.trim().is_empty() {
            continue;
        }
        let rule = parse_line(body, file, line)?;
        if out.iter().any(|r| r.name == rule.name) {
            return Err(err(
                file,
                line,
                col_of(body, &rule.name),
                format!("rule '{}' is defined twice", rule.name),
            ));
        }
        out.push(rule);
    }
    Ok(out)
}

fn err(file: &str, line: usize, col: usize, msg: impl Into<String>) -> Error {
    Error::parse(
        &Location {
            file: file.to_string(),
            line,
            col,
        },
        msg,
    )
}

fn col_of(body: &str, needle: &str) -> usize {
    body.find(needle).map_or(1, |i| i + 1)
}

fn parse_line(body: &str, file: &str, line: usize) -> Result<Rule> {
    let lead = body.len() - body.trim_start().len();
    if !body.trim_start().starts_with("rule ") {
        return Err(err(
            file,
            line,
            lead + 1,
            "expected 'rule NAME: LHS => RHS [kind K]'",
        ));
    }
    let Some(colon) = body.find(':') else {
        return Err(err(
            file,
            line,
            body.trim_end().len() + 1,
            "expected ':' after the rule name",
        ));
    };
    let header = body.get(lead + 5..colon).unwrap_or("");
    let mut words = header.split_whitespace();
    let name = words
        .next()
        .ok_or_else(|| err(file, line, lead + 6, "expected a rule name"))?
        .to_string();
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(err(
            file,
            line,
            col_of(body, &name),
            format!("bad rule name '{name}'"),
        ));
    }
    let mut types = Vec::new();
    if let Some(w) = words.next() {
        if w != "for" || words.next() != Some("T") || words.next() != Some("in") {
            return Err(err(
                file,
                line,
                col_of(body, w),
                "expected 'for T in TYPE ...' after the rule name",
            ));
        }
        for t in words {
            let e = Elem::parse(t).filter(|e| e.is_int()).ok_or_else(|| {
                err(
                    file,
                    line,
                    col_of(&body[..colon], t),
                    format!("'{t}' is not an integer element type"),
                )
            })?;
            types.push(e);
        }
        if types.is_empty() {
            return Err(err(
                file,
                line,
                colon + 1,
                "expected element types after 'for T in'",
            ));
        }
    }
    let after = &body[colon + 1..];
    // Attributes: a trailing [kind K, target X].
    let (main, attrs, attr_col) = match after.rfind('[') {
        Some(b) => {
            let close = after[b..]
                .find(']')
                .ok_or_else(|| err(file, line, colon + 2 + b, "unclosed '['"))?;
            if !after[b + close + 1..].trim().is_empty() {
                return Err(err(
                    file,
                    line,
                    colon + 2 + b + close + 1,
                    "unexpected text after ']'",
                ));
            }
            (&after[..b], &after[b + 1..b + close], colon + 2 + b)
        }
        None => {
            return Err(err(
                file,
                line,
                body.trim_end().len() + 1,
                "expected '[kind KIND]' at the end of the rule",
            ))
        }
    };
    let mut kind = None;
    let mut target = None;
    for a in attrs.split(',') {
        let mut kv = a.split_whitespace();
        match (kv.next(), kv.next(), kv.next()) {
            (Some("kind"), Some(k), None) => {
                kind =
                    Some(k.parse().map_err(|e: String| {
                        err(file, line, attr_col + 1 + col_of(attrs, k) - 1, e)
                    })?)
            }
            (Some("target"), Some(t), None) => {
                target =
                    Some(t.parse().map_err(|e: String| {
                        err(file, line, attr_col + 1 + col_of(attrs, t) - 1, e)
                    })?)
            }
            _ => {
                return Err(err(
                    file,
                    line,
                    attr_col + 1,
                    format!("bad attribute '{}' (kind K or target T)", a.trim()),
                ))
            }
        }
    }
    let kind = kind.ok_or_else(|| err(file, line, attr_col, "the attributes need 'kind KIND'"))?;
    let Some(arrow) = main.find("=>") else {
        return Err(err(file, line, colon + 2, "expected 'LHS => RHS'"));
    };
    let lhs_raw = &main[..arrow];
    let (rhs_raw, pred_raw) = match main[arrow + 2..].find(" if ") {
        Some(p) => (
            &main[arrow + 2..arrow + 2 + p],
            Some(&main[arrow + 2 + p + 4..]),
        ),
        None => (&main[arrow + 2..], None),
    };
    let start = |s: &str| {
        s.as_ptr() as usize - body.as_ptr() as usize + (s.len() - s.trim_start().len()) + 1
    };
    let (lhs_col, rhs_col) = (start(lhs_raw), start(rhs_raw));
    let pred_col = pred_raw.map_or(0, start);
    for (part, what, col) in [
        (lhs_raw, "left-hand side", lhs_col),
        (rhs_raw, "right-hand side", rhs_col),
        (pred_raw.unwrap_or("true"), "predicate after 'if'", pred_col),
    ] {
        if part.trim().is_empty() {
            return Err(err(file, line, col, format!("empty {what}")));
        }
    }
    Ok(Rule {
        name,
        types,
        lhs: lhs_raw.trim().to_string(),
        rhs: rhs_raw.trim().to_string(),
        predicate: pred_raw
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty()),
        kind,
        target,
        text: body.trim().to_string(),
        file: file.to_string(),
        line,
        lhs_col,
        rhs_col,
        pred_col,
    })
}

/// An expression of a rule instantiated at `T = t` (or as written when `t` is None): type
/// aliases replaced, bare wildcards given the suffix `_T`.
pub fn instantiate(text: &str, t: Option<Elem>) -> std::result::Result<String, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                out.push(chars[i]);
                i += 1;
            }
            continue;
        }
        if !(c.is_alphabetic() || c == '_') {
            out.push(c);
            i += 1;
            continue;
        }
        let s = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        let word: String = chars[s..i].iter().collect();
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let is_call = j < chars.len() && chars[j] == '(';
        out.push_str(&instantiate_word(&word, is_call, t)?);
    }
    Ok(out)
}

fn instantiate_word(
    word: &str,
    is_call: bool,
    t: Option<Elem>,
) -> std::result::Result<String, String> {
    let resolve = |alias: &str| -> std::result::Result<Option<String>, String> {
        if !ALIASES.contains(&alias) {
            return Ok(None);
        }
        let Some(t) = t else {
            return Err(format!("'{alias}' needs a 'for T in ...' clause"));
        };
        alias_type(alias, t)
            .map(|e| Some(e.name().to_string()))
            .ok_or_else(|| format!("{alias} of {t} does not exist"))
    };
    if let Some(r) = resolve(word)? {
        return Ok(r);
    }
    if let Some((stem, suffix)) = word.rsplit_once('_') {
        if suffix == "sat" {
            if let Some(r) = resolve(stem)? {
                return Ok(format!("{r}_sat"));
            }
            return Ok(word.to_string());
        }
        if let Some(r) = resolve(suffix)? {
            return Ok(format!("{stem}_{r}"));
        }
        if Elem::parse(suffix).is_some() {
            return Ok(word.to_string());
        }
    }
    if is_call || t.is_none() {
        return Ok(word.to_string());
    }
    Ok(format!("{word}_{}", t.unwrap().name()))
}

/// Whether a variable name is a constant wildcard (`c0`, `c1_u16`, ...).
pub fn is_constant_wildcard(name: &str) -> bool {
    let stem = name.split('_').next().unwrap_or("");
    stem.len() > 1 && stem.starts_with('c') && stem[1..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_rule() {
        let r = &parse_rules("rule a for T in u8 i16: T((WT(x) + WT(y)) >> 1) => halving_add(x, y) if x > 0 [kind lift, target x86] # c\n", "f")
            .unwrap()[0];
        assert_eq!(r.types, vec![Elem::U8, Elem::I16]);
        assert_eq!(r.lhs, "T((WT(x) + WT(y)) >> 1)");
        assert_eq!(r.rhs, "halving_add(x, y)");
        assert_eq!(r.predicate.as_deref(), Some("x > 0"));
        assert_eq!((r.kind, r.target), (RuleKind::Lift, Some(Isa::X86)));
        assert_eq!(
            instantiate(&r.lhs, Some(Elem::U8)).unwrap(),
            "u8((u16(x_u8) + u16(y_u8)) >> 1)"
        );
        assert_eq!(
            instantiate("T_sat(c0_WT + x_i8)", Some(Elem::I16)).unwrap(),
            "i16_sat(c0_i32 + x_i8)"
        );
    }

    #[test]
    fn errors_name_file_line_col() {
        let e = parse_rules("\nrule a: x_u8 => y_u8 [kind lifting]\n", "r.rules")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.rules:2:"), "{e}");
        let e = parse_rules("rule a: x_u8 y_u8 [kind lift]\n", "r.rules")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.rules:1:"), "{e}");
    }
}
