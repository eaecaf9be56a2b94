//! S-expression reader shared by the IR text form, the spec language and rule files; every node
//! keeps its line:column so later stages can point at the exact place of an error.

use crate::error::{Error, Location, Result};
use crate::ir::limits::TreeBudget;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum SKind {
    Int(i128),
    Float(f64),
    Str(String),
    /// A symbol, including type atoms such as `<16 x u8>`.
    Sym(String),
    List(Vec<SExpr>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SExpr {
    pub kind: SKind,
    pub loc: Location,
}

impl SExpr {
    pub fn sym(&self) -> Option<&str> {
        match &self.kind {
            SKind::Sym(s) => Some(s),
            _ => None,
        }
    }

    pub fn list(&self) -> Option<&[SExpr]> {
        match &self.kind {
            SKind::List(items) => Some(items),
            _ => None,
        }
    }

    /// The head symbol of a non-empty list.
    pub fn head(&self) -> Option<&str> {
        self.list().and_then(|l| l.first()).and_then(SExpr::sym)
    }

    pub fn err(&self, msg: impl Into<String>) -> Error {
        Error::parse(&self.loc, msg)
    }
}

impl fmt::Display for SExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            SKind::Int(i) => write!(f, "{i}"),
            SKind::Float(x) => write!(f, "{x:?}"),
            SKind::Str(s) => write!(f, "{s:?}"),
            SKind::Sym(s) => f.write_str(s),
            SKind::List(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

struct Reader<'a> {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    col: usize,
    file: &'a str,
    /// The depth and terms of the top-level form being read.
    budget: TreeBudget,
}

impl Reader<'_> {
    fn loc(&self) -> Location {
        Location {
            file: self.file.to_string(),
            line: self.line,
            col: self.col,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// The head symbol of the list starting here, if one does.
    fn list_head_ahead(&self) -> Option<String> {
        if self.peek() != Some('(') {
            return None;
        }
        let rest = self.chars[self.pos + 1..]
            .iter()
            .skip_while(|c| c.is_whitespace());
        let head: String = rest
            .take_while(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | ';' | '"'))
            .collect();
        Some(head)
    }

    /// Moves past the list starting here (strings and comments inside it included).
    fn skip_list(&mut self) -> Result<()> {
        let loc = self.loc();
        let mut depth = 0usize;
        while let Some(c) = self.bump() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                ';' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                '"' => loop {
                    match self.bump() {
                        None => return Err(Error::parse(&loc, "unterminated string")),
                        Some('"') => break,
                        Some('\\') => _ = self.bump(),
                        Some(_) => {}
                    }
                },
                _ => {}
            }
        }
        Err(Error::parse(
            &self.loc(),
            format!("expected ')' to close the '(' at {}:{}", loc.line, loc.col),
        ))
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c == ';' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn read(&mut self) -> Result<SExpr> {
        self.skip_space();
        let loc = self.loc();
        self.budget.term(&loc)?;
        match self.peek() {
            None => Err(Error::parse(
                &loc,
                "expected an expression, found end of input",
            )),
            Some(')') => Err(Error::parse(&loc, "unexpected ')'")),
            Some('(') => {
                self.budget.enter(&loc)?;
                self.bump();
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    match self.peek() {
                        None => {
                            return Err(Error::parse(
                                &self.loc(),
                                format!(
                                    "expected ')' to close the '(' at {}:{}",
                                    loc.line, loc.col
                                ),
                            ))
                        }
                        Some(')') => {
                            self.bump();
                            self.budget.leave();
                            return Ok(SExpr {
                                kind: SKind::List(items),
                                loc,
                            });
                        }
                        _ => items.push(self.read()?),
                    }
                }
            }
            Some('"') => {
                self.bump();
                let mut s = String::new();
                loop {
                    match self.bump() {
                        None => return Err(Error::parse(&loc, "unterminated string")),
                        Some('"') => {
                            return Ok(SExpr {
                                kind: SKind::Str(s),
                                loc,
                            })
                        }
                        Some('\\') => s.push(self.bump().unwrap_or('\\')),
                        Some(c) => s.push(c),
                    }
                }
            }
            Some('<') if self.type_atom_ahead() => {
                let mut s = String::new();
                while let Some(c) = self.bump() {
                    s.push(if c.is_whitespace() { ' ' } else { c });
                    if c == '>' {
                        break;
                    }
                }
                let norm = s.split_whitespace().collect::<Vec<_>>().join(" ");
                let norm = norm.replace("< ", "<").replace(" >", ">");
                Ok(SExpr {
                    kind: SKind::Sym(norm),
                    loc,
                })
            }
            Some(_) => {
                let mut s = String::new();
                while let Some(c) = self.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' || c == ';' || c == '"' {
                        break;
                    }
                    s.push(c);
                    self.bump();
                }
                Ok(SExpr {
                    kind: atom(&s).map_err(|msg| Error::parse(&loc, msg))?,
                    loc,
                })
            }
        }
    }

    /// `<` starts a type atom when a digit follows (`<16 x u8>`); otherwise it is the symbol `<`.
    fn type_atom_ahead(&self) -> bool {
        self.chars[self.pos + 1..]
            .iter()
            .find(|c| !c.is_whitespace())
            .is_some_and(|c| c.is_ascii_digit())
    }
}

/// An integer, a float or a symbol; a number too large for isadb (past 128 bits, or a float
/// past f64) is an error, never a symbol or an infinity.
fn atom(s: &str) -> std::result::Result<SKind, String> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let too_large = |limit: &str| {
        let shown: String = s.chars().take(24).collect();
        let more = if s.len() > shown.len() { "..." } else { "" };
        format!(
            "literal {shown}{more} ({} characters) is too large for {limit}",
            s.len()
        )
    };
    let int = if let Some(hex) = digits.strip_prefix("0x") {
        let hex = hex.replace('_', "");
        if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            Some(u128::from_str_radix(&hex, 16).map_err(|_| too_large("128 bits"))? as i128)
        } else {
            None
        }
    } else if digits.starts_with(|c: char| c.is_ascii_digit()) {
        let plain = digits.replace('_', "");
        match plain.parse::<i128>() {
            Ok(v) => Some(v),
            Err(_) if plain.chars().all(|c| c.is_ascii_digit()) => {
                return Err(too_large("128 bits"))
            }
            Err(_) => None,
        }
    } else {
        None
    };
    Ok(match (int, s.parse::<f64>()) {
        (Some(v), _) => SKind::Int(if neg { v.wrapping_neg() } else { v }),
        (None, Ok(f)) if digits.starts_with(|c: char| c.is_ascii_digit()) => {
            if !f.is_finite() {
                return Err(too_large("a 64-bit float"));
            }
            SKind::Float(f)
        }
        (None, _) => SKind::Sym(s.to_string()),
    })
}

/// Reads every top-level expression of `text`; `file` names the source in error locations.
pub fn read_all(text: &str, file: &str) -> Result<Vec<SExpr>> {
    read_all_but(text, file, None)
}

/// Reads every top-level expression except the lists headed by `skipped`, which are only
/// scanned to their closing parenthesis (what the caller would drop costs no tree: the macros
/// of `specs/` are read without the instruction families around them).
pub fn read_all_but(text: &str, file: &str, skipped: Option<&str>) -> Result<Vec<SExpr>> {
    let mut r = Reader {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
        file,
        budget: TreeBudget::default(),
    };
    let mut out = Vec::new();
    loop {
        r.skip_space();
        if r.peek().is_none() {
            return Ok(out);
        }
        r.budget = TreeBudget::default();
        if skipped.is_some_and(|head| r.list_head_ahead().as_deref() == Some(head)) {
            r.skip_list()?;
        } else {
            out.push(r.read()?);
        }
    }
}

/// Reads exactly one expression.
pub fn read_one(text: &str, file: &str) -> Result<SExpr> {
    let mut all = read_all(text, file)?;
    match all.len() {
        1 => Ok(all.remove(0)),
        0 => Err(Error::parse(
            &Location {
                file: file.into(),
                line: 1,
                col: 1,
            },
            "expected an expression, found nothing",
        )),
        _ => Err(all[1].err("expected one expression, found more after it")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_atoms_lists_and_types() {
        let e = read_one("(add (var a <16 x u8>) -3 0xff \"s\" 1.5)", "t").unwrap();
        assert_eq!(e.to_string(), "(add (var a <16 x u8>) -3 255 \"s\" 1.5)");
        assert_eq!(read_one("(< a b)", "t").unwrap().to_string(), "(< a b)");
    }

    #[test]
    fn errors_carry_line_and_column() {
        let err = read_one("(add a\n  (b c)", "f.spec")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "f.spec:2:8: expected ')' to close the '(' at 1:1");
        let err = read_one("(a))", "q").unwrap_err().to_string();
        assert_eq!(err, "q:1:4: unexpected ')'");
        let err = read_one("(a) (b)", "q").unwrap_err().to_string();
        assert_eq!(err, "q:1:5: expected one expression, found more after it");
    }

    #[test]
    fn lists_of_a_skipped_head_are_scanned_past_and_not_read() {
        let text =
            "(macro m (x) x)\n(family f \"a ) b\" ; c ) d\n  (g (h)))\n( family  k)\n(idiom i)";
        let read = read_all_but(text, "t", Some("family")).unwrap();
        let heads: Vec<_> = read.iter().map(|f| f.head().unwrap()).collect();
        assert_eq!(heads, ["macro", "idiom"]);
        assert_eq!(
            read[1].loc.line, 5,
            "lines are counted through what was skipped"
        );
        assert_eq!(read_all(text, "t").unwrap().len(), 4);
        let err = read_all_but("(a)\n(family (b)", "f.spec", Some("family"))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "f.spec:2:12: expected ')' to close the '(' at 2:1");
    }
}
