//! Calls the Halide-style source treats specially: its shifts by a value, elaborated with their
//! operands bound once; `absd` of f32 lanes; Halide's functions whose two operands meet as its
//! operators' do; and type errors inside a called macro placed at the call.

use super::{coerce, Elab, Scope};
use crate::error::{Error, Location, Result};
use crate::ir::expr::{Expr, Op};
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::types::Elem;
use std::rc::Rc;

/// Halide's functions of two values that convert them as its arithmetic operators do
/// (IROperator.cpp calls `match_types` on their operands).
const MATCHING_FUNCTIONS: [&str; 9] = [
    "absd",
    "saturating_add",
    "saturating_sub",
    "halving_add",
    "halving_sub",
    "rounding_halving_add",
    "widening_add",
    "widening_sub",
    "widening_mul",
];

impl Scope<'_> {
    /// A call of a macro that Halide's source treats specially, elaborated: its shifts by a
    /// value, `absd` of f32 lanes (`|x - y|`: the FPIR idiom is of integers, its result
    /// unsigned), and its functions of two values whose operands need converting; None for
    /// the plain expansion.
    pub(super) fn halide_call(
        &mut self,
        head: &str,
        args: &[SExpr],
        s: &SExpr,
    ) -> Result<Option<Elab>> {
        if matches!(head, "halide-shl" | "halide-shr") {
            return self.halide_shift(head, args, s).map(Some);
        }
        if head == "absd" && args.len() == 2 {
            if let Elab::Typed(x) = self.elab(&args[0])? {
                if x.ty.elem == Elem::F32 {
                    let sym = |name: &str| SExpr {
                        kind: SKind::Sym(name.into()),
                        loc: s.loc.clone(),
                    };
                    let call = |items: Vec<SExpr>| SExpr {
                        kind: SKind::List(items),
                        loc: s.loc.clone(),
                    };
                    let difference = call(vec![sym("sub"), args[0].clone(), args[1].clone()]);
                    return self.elab(&call(vec![sym("abs"), difference])).map(Some);
                }
            }
        }
        if self.is_halide(s) && MATCHING_FUNCTIONS.contains(&head) {
            return self.halide_matching_call(head, args, s);
        }
        Ok(None)
    }

    /// A type error inside the macro `head` called at `s` in the Halide-style source, placed
    /// at the call (where the user can mend it), naming where in the macro it arose.
    pub(super) fn at_call(&self, e: Error, head: &str, s: &SExpr) -> Error {
        match e {
            Error::Type { loc, msg } | Error::Parse { loc, msg }
                if self.is_halide(s) && !self.is_halide_loc(&loc) =>
            {
                Error::ty(&s.loc, format!("in {head} ({loc}): {msg}"))
            }
            other => other,
        }
    }

    /// Whether `loc` lies in the Halide-style source.
    fn is_halide_loc(&self, loc: &Location) -> bool {
        self.halide_source.as_ref() == Some(&loc.file)
    }

    /// Whether `s` was written in the Halide-style source (not in a macro it calls).
    pub(super) fn is_halide(&self, s: &SExpr) -> bool {
        self.is_halide_loc(&s.loc)
    }

    /// Halide's shift by a value (prelude's `halide-shl`, `halide-shr`): the operands are
    /// elaborated once, checked to have integer lanes (an error where the shift is written),
    /// and bound to names the macro reads, so a chain of shifts stays a shared tree rather
    /// than one the macro's repeated `x` doubles at every level.
    pub(super) fn halide_shift(&mut self, head: &str, args: &[SExpr], s: &SExpr) -> Result<Elab> {
        let values = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>>>()?;
        if values.iter().any(|v| !v.ty.elem.is_int()) {
            let shown: Vec<String> = values.iter().map(|v| v.ty.to_string()).collect();
            return Err(s.err(format!(
                "shifts need integer lanes, got {}",
                shown.join(" and ")
            )));
        }
        self.expand_bound(head, values, s)
    }

    /// A call of one of Halide's [`MATCHING_FUNCTIONS`] written in the Halide source whose two
    /// operands are lanes of different types, or whose first is a literal: the macro over the
    /// operands converted as Halide converts them, the literal of its sibling's type (two
    /// literals: i32); None where they need no conversion (or the literal is second, which the
    /// macro types).
    pub(super) fn halide_matching_call(
        &mut self,
        head: &str,
        args: &[SExpr],
        s: &SExpr,
    ) -> Result<Option<Elab>> {
        let [x, y] = args else {
            return Ok(None);
        };
        let values = match (self.elab(x)?, self.elab(y)?) {
            (Elab::Typed(a), Elab::Typed(b)) if a.ty.elem != b.ty.elem => {
                coerce::match_types(&Op::Add, vec![a, b]).map_err(|m| Error::ty(&s.loc, m))?
            }
            // A literal first takes its sibling's type, as Halide gives it (the macros type a
            // literal only from their first operand: `absd(4, z_u32)` could not be read), and
            // two literals are Halide's i32 (`absd(16, 5)` is a u32 value).
            (literal @ Elab::Lit(..), other) => {
                self.type_literals(&Op::Add, vec![literal, other], args, s)?
            }
            _ => return Ok(None),
        };
        if head == "absd" && values[0].ty.elem == Elem::F32 {
            // An integer meeting f32 lanes: `|x - y|`, as `absd` of f32 lanes is.
            let difference = Expr::build(Op::Sub, values).map(Rc::new);
            let abs = difference.and_then(|d| Expr::build(Op::Abs, vec![d]));
            return abs
                .map(|e| Some(Elab::Typed(Rc::new(e))))
                .map_err(|m| Error::ty(&s.loc, m));
        }
        self.expand_bound(head, values, s).map(Some)
    }

    /// The macro `head` expanded over `values`, each bound to a name the expansion reads, so
    /// that a value used twice stays one shared tree.
    fn expand_bound(&mut self, head: &str, values: Vec<Rc<Expr>>, s: &SExpr) -> Result<Elab> {
        let names: Vec<String> = (0..values.len())
            .map(|i| format!("bound%{}%{i}", self.depth))
            .collect();
        let symbols: Vec<SExpr> = names
            .iter()
            .map(|n| SExpr {
                kind: SKind::Sym(n.clone()),
                loc: s.loc.clone(),
            })
            .collect();
        let expanded = self.macros.map[head].expand(&symbols, s)?;
        let saved: Vec<_> = names
            .iter()
            .zip(values)
            .map(|(n, v)| self.vars.insert(n.clone(), v))
            .collect();
        self.depth += 1;
        let out = self.elab(&expanded);
        self.depth -= 1;
        for (n, old) in names.iter().zip(saved) {
            match old {
                Some(v) => self.vars.insert(n.clone(), v),
                None => self.vars.remove(n),
            };
        }
        out
    }
}
