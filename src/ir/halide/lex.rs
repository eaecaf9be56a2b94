//! The tokens of a Halide-style expression: integer literals (decimal or hex), floating-point
//! literals (`2.5`, `2.5f`), identifiers and C punctuation, each with its line and column.

use crate::error::{Error, Location, Result};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Int(i128),
    /// A floating-point literal (`2.5`, `2.5f`, `1.f`), an f32 where it is used.
    Float(f64),
    Ident(String),
    Punct(&'static str),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(i) => write!(f, "'{i}'"),
            Tok::Float(x) => write!(f, "'{x}'"),
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) loc: Location,
}

/// Longest first, so `<<` is not read as two `<`.
const PUNCT: [&str; 25] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^",
    "|", "~", "!", "(", ")", ",", "{", "}",
];

/// Namespaces a name may be qualified by: Halide's own.
const NAMESPACES: [&str; 2] = ["Halide", "Internal"];

/// The tokens of `text`, ending in [`Tok::Eof`]; `file` names the text in locations.
pub(super) fn lex(text: &str, file: &str) -> Result<Vec<Token>> {
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
            // C's integer suffixes (`3u`, `255UL`) change nothing here: literals take their
            // type from their siblings.
            let integer = word.trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match integer
                .strip_prefix("0x")
                .or_else(|| integer.strip_prefix("0X"))
            {
                Some(hex) if !hex.is_empty() => u128::from_str_radix(hex, 16)
                    .ok()
                    .and_then(|v| i128::try_from(v).ok()),
                _ => integer.parse::<i128>().ok(),
            };
            match value {
                Some(v) => Tok::Int(v),
                None if word.contains('.') => {
                    let digits = word.strip_suffix(['f', 'F']).unwrap_or(&word);
                    match digits.parse::<f64>() {
                        Ok(x) if digits.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                            Tok::Float(x)
                        }
                        _ => return Err(Error::parse(&at, format!("malformed number '{word}'"))),
                    }
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
            let mut name_start = start;
            loop {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                // Halide's namespaces, as C++ tests write them (`Halide::cast<int16_t>(x)`,
                // `Halide::Internal::widening_add(a, b)`), name the same functions.
                let word: String = chars[name_start..i].iter().collect();
                let qualified = chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':');
                let next_is_name = chars
                    .get(i + 2)
                    .is_some_and(|&n| n.is_alphabetic() || n == '_');
                if !(NAMESPACES.contains(&word.as_str()) && qualified && next_is_name) {
                    break;
                }
                i += 2;
                name_start = i;
            }
            Tok::Ident(chars[name_start..i].iter().collect())
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
