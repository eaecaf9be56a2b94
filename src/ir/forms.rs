//! The two text forms of an expression a user types (`prove`, `eval`, `compile`, `query`): the
//! Halide-style infix form (`x_i8 * 2`, src/ir/halide.rs) and the fully typed s-expression
//! form (`(mul x_i8 2)`, src/ir/sexpr.rs). Infix is tried first: an s-expression with an
//! operator at its head is never valid infix, and a parenthesized infix expression would read
//! as a (meaningless) s-expression. A text that is neither is one error naming both forms and
//! where each reading failed.

use super::elaborate::{Macros, Scope};
use super::expr::Expr;
use super::halide::{elaborate_parsed, parse_halide};
use super::sexpr::{read_one, SExpr, SKind};
use super::types::{Elem, VecType};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::rc::Rc;

/// Which form a text was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Halide,
    SExpr,
}

/// Reads `text` as a Halide-style expression, else as an s-expression; `source` names the text
/// in error locations.
pub fn parse_expression(text: &str, source: &str) -> Result<(SExpr, Form)> {
    let infix = match parse_halide(text, source) {
        Ok(s) => return Ok((s, Form::Halide)),
        Err(e) => e,
    };
    match read_one(text, source) {
        // A lone symbol that is no valid infix (`x_u8>>`) is an infix mistake: its error says
        // where, where the symbol's would only call it an unknown name.
        Ok(SExpr {
            kind: SKind::Sym(_),
            ..
        }) => Err(infix),
        Ok(s) => Ok((s, Form::SExpr)),
        Err(sexpr) => Err(Error::Usage(format!(
            "{source}: neither a Halide-style expression ({}) nor an s-expression ({})",
            without_source(&infix, source),
            without_source(&sexpr, source)
        ))),
    }
}

/// A parse error's text without the leading `source:` (the combined message names it once).
fn without_source(e: &Error, source: &str) -> String {
    let text = e.to_string();
    text.strip_prefix(source)
        .and_then(|t| t.strip_prefix(':'))
        .map_or(text.clone(), str::to_string)
}

/// Parses and elaborates an expression in either form. Its variables (`a_u8`, or a name
/// declared in `declared`) have `lanes` lanes; in the Halide-style form, as `compile` reads it,
/// `lanes` are the result's and operands of `reduce_add(k, e)` have k times as many.
pub fn elaborate_expression(
    text: &str,
    source: &str,
    macros: &Macros,
    lanes: u32,
    declared: &HashMap<String, Elem>,
) -> Result<Rc<Expr>> {
    let (s, form) = parse_expression(text, source)?;
    match form {
        Form::Halide => elaborate_parsed(&s, macros, lanes, declared),
        Form::SExpr => {
            let mut scope = Scope::new(macros);
            scope.implicit_lanes = Some(lanes);
            for (name, elem) in declared {
                scope.bind_var(name, VecType::new(lanes, *elem));
            }
            scope.expr(&s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_form_reads_to_the_same_expression() {
        let macros = Macros::default();
        let none = HashMap::new();
        let read = |t: &str| elaborate_expression(t, "e", &macros, 4, &none).unwrap();
        assert_eq!(read("x_i8 * 2"), read("(mul x_i8 2)"));
        assert_eq!(read("(a_u8 + b_u8) >> 1"), read("(shr (add a_u8 b_u8) 1)"));
        assert_eq!(read("x_u8").ty.to_string(), "<4 x u8>");
        assert_eq!(parse_expression("(x_i8)", "e").unwrap().1, Form::Halide);
        assert_eq!(parse_expression("(neg x_i8)", "e").unwrap().1, Form::SExpr);
        let declared = HashMap::from([("z".to_string(), Elem::U16)]);
        let z = elaborate_expression("(add z 1)", "e", &macros, 8, &declared).unwrap();
        assert_eq!(z.ty.to_string(), "<8 x u16>");
    }

    #[test]
    fn the_s_expression_form_keeps_operands_of_one_type() {
        let e = elaborate_expression(
            "(add x_i16 y_i8)",
            "e",
            &Macros::default(),
            4,
            &HashMap::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("add needs operands of one type, got <4 x i16> and <4 x i8>"),
            "{e}"
        );
    }

    #[test]
    fn a_text_in_neither_form_names_both() {
        let e = parse_expression("x_i8 * * 2", "lhs")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("lhs: neither a Halide-style expression (1:")
                && e.contains("nor an s-expression (1:"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}
