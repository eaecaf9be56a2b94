//! `isadb classes [--isa I] [--spanning N]`: the cross-ISA classes of the database, each a
//! parameterized operation with its members, and the last build's classification figures.

use super::{render_table, Context, Outcome};
use crate::classes::{all_classes, last_summary, ClassRow, Summary};
use crate::error::Result;
use crate::spec::Isa;
use serde::Serialize;

#[derive(Serialize)]
struct Listing {
    summary: Option<Summary>,
    classes: Vec<ClassRow>,
}

/// The classes with a member on `isa` (all when None) whose members span at least `spanning`
/// ISAs.
pub fn classes(ctx: &Context, isa: Option<Isa>, spanning: usize) -> Result<Outcome> {
    let db = ctx.project.open()?;
    let summary = last_summary(&db)?;
    let classes: Vec<ClassRow> = all_classes(&db)?
        .into_iter()
        .filter(|c| isa.is_none_or(|i| c.isas.contains(&i.to_string())))
        .filter(|c| c.isas.len() >= spanning)
        .collect();
    let listing = Listing { summary, classes };
    ctx.print(&listing, || {
        let rows: Vec<Vec<String>> = listing
            .classes
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    c.isas.join(","),
                    c.members.len().to_string(),
                    c.template.clone(),
                ]
            })
            .collect();
        let mut text = render_table(&["class", "isas", "members", "operation"], &rows);
        text += &format!("{} classes shown\n", listing.classes.len());
        if let Some(s) = &listing.summary {
            text += &summary_line(s);
        }
        text
    })?;
    Ok(Outcome::negative_if(listing.classes.is_empty()))
}

fn summary_line(s: &Summary) -> String {
    format!(
        "{} classes over {} instructions ({} shapes); {} span 2 or more ISAs, {} span 3; \
         classified in {:.1} s ({} members equal by instantiation, {} refuted on random inputs, \
         {} checks by z3, {} cached)\n",
        s.classes,
        s.instructions,
        s.shapes,
        s.spanning_2,
        s.spanning_3,
        s.ms / 1000.0,
        s.syntactic,
        s.refuted_by_samples,
        s.solved,
        s.cached
    )
}

/// The lines `show` adds for an instruction's class: the operation, then the members on each
/// ISA with their parameters.
pub fn class_lines(class: &ClassRow) -> String {
    let mut text = format!("{:<10} {} = {}\n", "class", class.name, class.template);
    for isa in &class.isas {
        let members: Vec<String> = class
            .members
            .iter()
            .filter(|m| &m.isa == isa)
            .map(|m| format!("{} [{}]", m.instruction, m.binding))
            .collect();
        text += &format!("{:<10} {isa}: {}\n", "", members.join(", "));
    }
    text
}
