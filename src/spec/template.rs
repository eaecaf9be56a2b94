//! Name templates such as `_mm{pfx}_add_epi{(bits T)}`: `{name}` or `{(meta expr)}`.

use crate::error::Result;
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::Scope;

/// Fills a template string at `at` from the scope's meta values.
pub fn fill(template: &str, scope: &mut Scope, at: &SExpr) -> Result<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .map(|c| c + open)
            .ok_or_else(|| at.err(format!("unclosed '{{' in template {template:?}")))?;
        let inner = &rest[open + 1..close];
        let expr = if inner.starts_with('(') {
            let mut e = read_one(inner, &at.loc.file)?;
            relocate(&mut e, at);
            e
        } else {
            SExpr {
                kind: SKind::Sym(inner.to_string()),
                loc: at.loc.clone(),
            }
        };
        if let SKind::Sym(name) = &expr.kind {
            if !scope.meta.contains_key(name) {
                return Err(at.err(format!(
                    "template {template:?} names {name:?}, which is not a param or let"
                )));
            }
        }
        out.push_str(&scope.meta(&expr)?.to_string());
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Points every node of a template's inner expression at the template itself.
fn relocate(e: &mut SExpr, at: &SExpr) {
    e.loc = at.loc.clone();
    if let SKind::List(items) = &mut e.kind {
        items.iter_mut().for_each(|i| relocate(i, at));
    }
}
