//! Tokens of the C subset, with `#include` and `#pragma` lines skipped and object-like macros
//! (`#define NAME TOKENS...`, `#undef NAME`) expanded where they are used, as the C preprocessor
//! does: a macro's body is expanded again at each use (so it may name macros defined after it),
//! never within its own expansion, and its tokens take the location of the use.

use crate::error::{Error, Location, Result};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    /// A floating literal as written (digits, point, exponent; the `f` suffix dropped).
    Float(String),
    /// A string literal (for functions the kernel does not call: a test's `printf`).
    Str(String),
    Punct(&'static str),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub loc: Location,
}

const PUNCT: [&str; 36] = [
    "<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "++", "--", "&&", "||", "==", "!=", "<=", ">=",
    "->", "+", "-", "*", "/", "%", "<", ">", "=", "!", "?", ":", ";", ",", "(", ")", "[", "]", "{",
    "}", "&",
];

/// The tokens of `text`.
pub fn lex(text: &str, file: &str) -> Result<Vec<Token>> {
    let start = Location {
        file: file.to_string(),
        line: 1,
        col: 1,
    };
    tokens(text, &start, &mut HashMap::new())
}

/// Tokens of a file, macros expanded, at most (macros that each use another twice grow
/// exponentially).
const TOKEN_LIMIT: usize = 1 << 18;

/// `token` with the macros in it expanded (none of those in `active`, being expanded already),
/// appended to `out`; an error past [`TOKEN_LIMIT`] tokens.
fn expand(
    token: Token,
    defines: &HashMap<String, Vec<Tok>>,
    active: &mut Vec<String>,
    out: &mut Vec<Token>,
) -> Result<()> {
    let body = match &token.tok {
        Tok::Ident(w) if !active.contains(w) => defines.get(w).map(|b| (w.clone(), b)),
        _ => None,
    };
    let Some((name, body)) = body else {
        if out.len() >= TOKEN_LIMIT {
            return Err(Error::parse(
                &token.loc,
                format!("the file expands to more than {TOKEN_LIMIT} tokens (isadb's limit)"),
            ));
        }
        out.push(token);
        return Ok(());
    };
    active.push(name);
    for tok in body {
        let t = Token {
            tok: tok.clone(),
            loc: token.loc.clone(),
        };
        expand(t, defines, active, out)?;
    }
    active.pop();
    Ok(())
}

/// The tokens of `text`, whose first character is at `start`, with the macros of `defines`
/// expanded; each `#define` changes `defines` from where it stands on.
fn tokens(
    text: &str,
    start: &Location,
    defines: &mut HashMap<String, Vec<Tok>>,
) -> Result<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, start.line, start.col);
    let loc = |line, col| Location {
        file: start.file.clone(),
        line,
        col,
    };
    // A directive starts a line of the file (a macro's body is read from inside one).
    let mut at_line_start = start.col == 1;
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
            directive_line(&directive, &here, defines)?;
            col += end - i;
            i = end;
            continue;
        }
        at_line_start = false;
        if c == '"' || c == '\'' {
            // A string or character literal, escapes kept as written; a character is its code.
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c && chars[j] != '\n' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            if chars.get(j) != Some(&c) {
                return Err(Error::parse(&here, "unterminated literal"));
            }
            let body: String = chars[i + 1..j].iter().collect();
            let tok = if c == '"' {
                Tok::Str(body)
            } else {
                Tok::Int(char_code(&body).ok_or_else(|| {
                    Error::parse(
                        &here,
                        format!("character literal '{body}' is outside the kernel subset"),
                    )
                })?)
            };
            out.push(Token { tok, loc: here });
            col += j + 1 - i;
            i = j + 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            col += i - start;
            // Defined from here on: the token is expanded with the macros of this point.
            let word = Token {
                tok: Tok::Ident(word),
                loc: here,
            };
            expand(word, defines, &mut Vec::new(), &mut out)?;
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

/// One preprocessor line (`here` is its `#`): `#include` and `#pragma` are skipped, `#define
/// NAME TOKENS...` and `#undef NAME` change `defines`; anything else is outside the subset.
fn directive_line(
    line: &str,
    here: &Location,
    defines: &mut HashMap<String, Vec<Tok>>,
) -> Result<()> {
    let rest = line[1..].trim_start();
    let word_end = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let (word, rest) = rest.split_at(word_end);
    match word {
        "include" | "pragma" => Ok(()),
        "define" | "undef" => {
            let rest = rest.trim_start();
            let name_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, body) = rest.split_at(name_end);
            let body_start = Location {
                col: here.col + line.chars().count() - body.chars().count(),
                ..here.clone()
            };
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(Error::parse(here, format!("#{word} needs a macro name")));
            }
            if word == "undef" {
                defines.remove(name);
                return Ok(());
            }
            if body.starts_with('(') {
                return Err(Error::parse(
                    here,
                    format!("function-like macro {name}(...) is outside the kernel subset (object-like #define NAME TOKENS only)"),
                ));
            }
            // The body's tokens as written: its macros are expanded where it is used.
            let body_tokens = tokens(body, &body_start, &mut HashMap::new())?;
            defines.insert(name.to_string(), body_tokens.into_iter().map(|t| t.tok).collect());
            Ok(())
        }
        _ => Err(Error::parse(
            here,
            format!("#{word} is outside the kernel subset (#include, #pragma, #define NAME TOKENS and #undef only)"),
        )),
    }
}

/// The code of a character literal's body: one ASCII character or a simple escape.
fn char_code(body: &str) -> Option<i64> {
    let code = match body.as_bytes() {
        [c] if c.is_ascii() => *c,
        [b'\\', e] => match e {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'0' => 0,
            b'\\' | b'\'' | b'"' => *e,
            _ => return None,
        },
        _ => return None,
    };
    Some(i64::from(code))
}
