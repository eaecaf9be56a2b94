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
        crate::error::note(&empty_answer_note(text));
    }
    Ok(Outcome::negative_if(rows.is_empty()))
}

/// What to try when a query `... on T` has no answer: a single instruction is not there, but a
/// sequence may be (`port` for an instruction's equivalents, `compile` for an idiom).
fn empty_answer_note(text: &str) -> String {
    let plain = crate::query::plain(text);
    let equivalents = plain
        .strip_prefix("equivalents of ")
        .and_then(|rest| rest.rsplit_once(" on "));
    match equivalents {
        Some((instruction, target)) => format!(
            "isadb: no single instruction there is proven equivalent; `isadb port {} --target {}` \
             finds the cheapest proven sequence",
            instruction.trim(),
            target.trim()
        ),
        None => "isadb: no single instruction there is proven to implement it; `isadb compile \
                 --target T 'EXPRESSION'` selects a proven sequence of several"
            .to_string(),
    }
}
