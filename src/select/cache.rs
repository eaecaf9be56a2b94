//! The selection cache (table `selection_cache`): the validated term selected for an expression
//! on a catalog, so compiling it again skips egglog and z3, as Minotaur caches its synthesized
//! SIMD sequences. Rows are keyed by the catalog fingerprint, so any change to what selection
//! reads makes old rows unreachable instead of wrong.

use super::catalog::Catalog;
use super::node::{input_types, Node};
use crate::database::Database;
use crate::error::Result;
use crate::ir::{Elem, Expr};
use crate::semantics::sample::agree_on_random_inputs;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;
use std::rc::Rc;

/// The key of one selection: the elaborated input printed with its types (so spacing and
/// spelling of the source do not matter), its result lanes and the `--var` declarations.
struct Key {
    lanes: u32,
    expression: String,
    declared: String,
}

impl Key {
    fn new(input: &Expr, declared: &HashMap<String, Elem>) -> Key {
        let mut vars: Vec<String> = declared.iter().map(|(n, e)| format!("{n}:{e}")).collect();
        vars.sort();
        Key {
            lanes: input.ty.lanes,
            expression: input.to_string(),
            declared: vars.join(" "),
        }
    }
}

/// The cached term of `input` on this catalog, if it was selected and validated before.
pub fn lookup(
    db: &Database,
    catalog: &Catalog,
    input: &Expr,
    declared: &HashMap<String, Elem>,
) -> Result<Option<String>> {
    let key = Key::new(input, declared);
    let row = db
        .conn()
        .query_row(
            "SELECT term FROM selection_cache
             WHERE target = ?1 AND lanes = ?2 AND expression = ?3 AND declared = ?4 AND catalog = ?5",
            params![
                catalog.target.name,
                key.lanes,
                key.expression,
                key.declared,
                catalog.fingerprint
            ],
            |r| r.get(0),
        )
        .optional()?;
    Ok(row)
}

/// Inputs a cache hit is run on before it is used.
const SPOT_CHECKS: usize = 4;
const SPOT_CHECK_SEED: u64 = 5;

/// Whether a stored selection computes `input` on random inputs, by the interpreter. A hit is
/// not proven again (that would cost what the cache saves), but a row edited into another
/// term that still reads back is caught here.
pub fn agrees_on_random_inputs(catalog: &Catalog, input: &Rc<Expr>, root: &Node) -> bool {
    let Ok(selected) = root.to_expr(catalog, &input_types(input)) else {
        return false;
    };
    agree_on_random_inputs(input, &selected, SPOT_CHECKS, SPOT_CHECK_SEED)
}

/// Records a selection that passed translation validation, replacing any row with its key.
pub fn store(
    db: &mut Database,
    catalog: &Catalog,
    input: &Expr,
    declared: &HashMap<String, Elem>,
    term: &str,
    cost: f64,
) -> Result<()> {
    let key = Key::new(input, declared);
    db.transaction(|tx| {
        tx.execute(
            "INSERT OR REPLACE INTO selection_cache
             (target, lanes, expression, declared, catalog, term, cost)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                catalog.target.name,
                key.lanes,
                key.expression,
                key.declared,
                catalog.fingerprint,
                term,
                cost
            ],
        )?;
        Ok(())
    })
}
