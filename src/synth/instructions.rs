//! The instruction rows synthesis reads: a target's instructions with their semantics and
//! cost. The one place that queries them, so it can move to `Database::instructions(&Filter)`.

use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::ir::{Expr, Macros, Scope};
use crate::select::Target;
use std::rc::Rc;

/// One instruction of a target, as the cost model and the lowering search see it.
pub struct TargetInstruction {
    pub name: String,
    pub semantics: Rc<Expr>,
    pub cost: f64,
}

/// The instructions of `target` (its ISA, restricted to the target's features), by name.
pub fn target_instructions(
    db: &Database,
    target: &Target,
    macros: &Macros,
) -> Result<Vec<TargetInstruction>> {
    let features: Vec<String> = target.features.iter().map(|f| format!("'{f}'")).collect();
    let sql = format!(
        "SELECT i.name, i.semantics, CAST(i.cost AS TEXT)
         FROM instructions i JOIN isas s ON s.id = i.isa_id JOIN features f ON f.id = i.feature_id
         WHERE s.name = '{}' AND f.name IN ({}) ORDER BY i.name",
        target.isa,
        features.join(", ")
    );
    let mut out = Vec::new();
    for row in db.text_rows(&sql)? {
        let semantics = Scope::new(macros).expr(&read_one(&row[1], &row[0])?)?;
        let cost = row[2]
            .parse()
            .map_err(|_| Error::data("instructions", format!("{}: bad cost", row[0])))?;
        out.push(TargetInstruction {
            name: row[0].clone(),
            semantics,
            cost,
        });
    }
    Ok(out)
}
