//! Halide's shifts by a value, elaborated with their operands bound once.

use super::{Elab, Scope};
use crate::error::Result;
use crate::ir::sexpr::{SExpr, SKind};

impl Scope<'_> {
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
        let names: Vec<String> = (0..values.len())
            .map(|i| format!("shifted%{}%{i}", self.depth))
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
