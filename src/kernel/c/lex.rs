//! Tokens of the C subset, with `#include` lines skipped and `#define NAME INTEGER` substituted.

use crate::error::{Error, Location, Result};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    /// A floating literal as written (digits, point, exponent; the `f` suffix dropped).
    Float(String),
    Punct(&'static str),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub loc: Location,
}

const PUNCT: [&str; 35] = [
    "<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "++", "--", "&&", "||", "==", "!=", "<=", ">=",
    "->", "+", "-", "*", "/", "%", "<", ">", "=", "!", "?", ":", ";", ",", "(", ")", "[", "]", "{",
    "}",
];

/// The tokens of `text`.
pub fn lex(text: &str, file: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut defines: HashMap<String, i64> = HashMap::new();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let loc = |line, col| Location {
        file: file.to_string(),
        line,
        col,
    };
    let mut at_line_start = true;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            at_line_start = true;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        let here = loc(line, col);
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            col += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                if chars[i] == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                i += 1;
            }
            if i >= chars.len() {
                return Err(Error::parse(&here, "unterminated comment"));
            }
            i += 2;
            col += 2;
            continue;
        }
        if c == '#' && at_line_start {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            let directive: String = chars[i..end].iter().collect();
            let words: Vec<&str> = directive.split_whitespace().collect();
            match words.as_slice() {
                ["#include", ..] | ["#pragma", ..] => {}
                ["#define", name, value] if value.parse::<i64>().is_ok() => {
                    defines.insert(name.to_string(), value.parse().expect("checked"));
                }
                _ => {
                    return Err(Error::parse(
                        &here,
                        "only #include and #define NAME INTEGER are in the kernel subset",
                    ))
                }
            }
            col += end - i;
            i = end;
            continue;
        }
        at_line_start = false;
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            col += i - start;
            let tok = match defines.get(&word) {
                Some(&v) => Tok::Int(v),
                None => Tok::Ident(word),
            };
            out.push(Token { tok, loc: here });
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            let mut float = false;
            while i < chars.len() {
                let d = chars[i];
                if d.is_ascii_digit() {
                    i += 1;
                } else if d == '.' {
                    float = true;
                    i += 1;
                } else if (d == 'e' || d == 'E') && i > start {
                    float = true;
                    i += 1;
                    if matches!(chars.get(i), Some('+') | Some('-')) {
                        i += 1;
                    }
                } else {
                    break;
                }
            }
            let digits: String = chars[start..i].iter().collect();
            if matches!(chars.get(i), Some('f') | Some('F')) {
                float = true;
                i += 1;
            }
            col += i - start;
            let tok = if float {
                Tok::Float(digits)
            } else {
                Tok::Int(digits.parse().map_err(|_| {
                    Error::parse(&here, format!("integer {digits} is out of range"))
                })?)
            };
            out.push(Token { tok, loc: here });
            continue;
        }
        match PUNCT
            .iter()
            .find(|p| chars[i..].starts_with(&p.chars().collect::<Vec<_>>()))
        {
            Some(p) => {
                out.push(Token {
                    tok: Tok::Punct(p),
                    loc: here,
                });
                i += p.len();
                col += p.len();
            }
            None => return Err(Error::parse(&here, format!("unexpected character '{c}'"))),
        }
    }
    Ok(out)
}
