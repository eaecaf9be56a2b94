//! `isadb query "TEXT"`: the answer of a named query (or of the idiom matcher, for `what
//! implements`), as a table, JSON or CSV; exit 1 on an empty answer.

use super::{print_out, render_table, Context, Outcome};
use crate::error::{Error, Result};

/// `query TEXT [--csv]`.
pub fn query(ctx: &Context, text: &str, csv_out: bool) -> Result<Outcome> {
    let db = ctx.project.open()?;
    let rows = crate::query::ask(&db, &ctx.project, text)?;
    if csv_out {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in &rows {
            w.serialize(r)
                .map_err(|e| Error::Tool(format!("writing CSV: {e}")))?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| Error::Tool(format!("writing CSV: {e}")))?;
        print_out(&String::from_utf8_lossy(&bytes))?;
        return Ok(Outcome::negative_if(rows.is_empty()));
    }
    ctx.print(&rows, || {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let what = if r.idiom.is_empty() {
                    r.binding.clone()
                } else {
                    format!("{}: {}", r.idiom, r.binding)
                };
                vec![
                    r.instruction.clone(),
                    r.asm.clone(),
                    r.isa.clone(),
                    r.feature.clone(),
                    what,
                    format!("{}", r.cost),
                ]
            })
            .collect();
        render_table(
            &["instruction", "asm", "isa", "feature", "binding", "cost"],
            &table,
        ) + &format!("{} rows\n", rows.len())
    })?;
    if rows.is_empty() && text.contains(" on ") {
        crate::error::note(
            "isadb: no single instruction there is proven to implement it; `isadb compile \
             --target T 'EXPRESSION'` selects a proven sequence of several",
        );
    }
    Ok(Outcome::negative_if(rows.is_empty()))
}
