//! The totality table: every IR operator, at every element type it is defined on, at lane
//! counts from one lane to four registers, on each target, selected and proven as `isadb
//! compile` does it (no selection cache), and classified by how it was covered: directly (the
//! instruction lowerings alone, without any stored rule), through the stored rules, or by
//! scalarizing lanes. Anything else (an error) is a failing cell, a bug.

use super::batch::{next_chunk, select_chunk, CHUNK};
use super::compile::Selector;
use super::node::Node;
use super::prove::VALIDATION_TIMEOUT_MS;
use crate::error::Result;
use crate::ir::Elem;
use crate::project::Project;
use crate::spec::Target;
use serde::Serialize;
use std::collections::HashMap;
use std::rc::Rc;

/// The integer element types and f32.
const INTS: [Elem; 8] = [
    Elem::U8,
    Elem::I8,
    Elem::U16,
    Elem::I16,
    Elem::U32,
    Elem::I32,
    Elem::U64,
    Elem::I64,
];

/// One cell: an operator at an element type and lane count, as an expression.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// The operator (`add`, `cast u16`, `reduce-add 2`).
    pub op: String,
    /// The element type of its operands.
    pub elem: String,
    /// Lanes of its operands.
    pub lanes: u32,
    /// The expression compiled (s-expression form, operands at `lanes` lanes).
    pub expression: String,
}

/// How a cell was covered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// By instruction lowerings alone (no stored rule needed).
    Direct,
    /// Only with the stored rules.
    Rules,
    /// By vector instructions, with the stored rules (whether they were needed not asked).
    Vector,
    /// With operators computed lane by lane (`add at u8x16`).
    Scalarized(Vec<String>),
    /// No proven selection: the error.
    Failed(String),
}

/// How finely a walk tells covered cells apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Detail {
    /// Whether each cell is covered by vector instructions, by scalarizing, or fails.
    Covered,
    /// Besides, whether vector instructions need the stored rules (each cell selected again
    /// without them).
    DirectOrRules,
}

/// Cells of a walk by how they were covered.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// By instruction lowerings alone.
    pub direct: usize,
    /// Only with the stored rules.
    pub rules: usize,
    /// By vector instructions, not told apart.
    pub vector: usize,
    /// By scalarizing lanes.
    pub scalarized: usize,
    /// Failing.
    pub failed: usize,
}

/// The walk over one target.
#[derive(Debug, Serialize)]
pub struct TargetTable {
    /// The target's name.
    pub target: &'static str,
    /// Every cell with its coverage.
    pub cells: Vec<(Cell, Coverage)>,
}

impl TargetTable {
    /// Cells by how they were covered.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for (_, coverage) in &self.cells {
            *match coverage {
                Coverage::Direct => &mut c.direct,
                Coverage::Rules => &mut c.rules,
                Coverage::Vector => &mut c.vector,
                Coverage::Scalarized(_) => &mut c.scalarized,
                Coverage::Failed(_) => &mut c.failed,
            } += 1;
        }
        c
    }
}

/// The lane counts of the walk for operands of `elem`: one lane, one, two and four registers.
pub fn lane_counts(target: Target, elem: Elem) -> Vec<u32> {
    let register = (target.register_bits / elem.bits()).max(1);
    vec![1, register, 2 * register, 4 * register]
}

/// Every cell of the table on `target` (operators, their element types and lane counts).
pub fn cells(target: Target) -> Vec<Cell> {
    let mut out = Vec::new();
    let types: Vec<Elem> = INTS.iter().copied().chain([Elem::F32]).collect();
    for &t in &types {
        let float = t == Elem::F32;
        for lanes in lane_counts(target, t) {
            let mut add = |op: &str, expression: String| {
                out.push(Cell {
                    op: op.to_string(),
                    elem: t.name().to_string(),
                    lanes,
                    expression,
                })
            };
            let (a, b, c, d) = (
                format!("a_{t}"),
                format!("b_{t}"),
                format!("c_{t}"),
                format!("d_{t}"),
            );
            let binary: &[&str] = if float {
                &["add", "sub", "mul", "div", "min", "max"]
            } else {
                &[
                    "add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr", "min",
                    "max",
                ]
            };
            let unary: &[&str] = if float {
                &[
                    "neg",
                    "abs",
                    "sqrt",
                    "sgn",
                    "floor",
                    "ceil",
                    "trunc",
                    "round",
                    "round-away",
                ]
            } else {
                &["neg", "not", "abs", "popcount", "clz"]
            };
            for op in binary
                .iter()
                .chain(["eq", "ne", "lt", "le", "gt", "ge"].iter())
            {
                add(op, format!("({op} {a} {b})"));
            }
            for op in unary {
                add(op, format!("({op} {a})"));
            }
            for op in ["select", "compress", "expand"] {
                let rest = if op == "select" {
                    format!(" {b}")
                } else {
                    String::new()
                };
                add(op, format!("({op} (lt {c} {d}) {a}{rest})"));
            }
            if !float {
                for &to in INTS.iter().filter(|&&to| to != t) {
                    add(&format!("cast {to}"), format!("(cast {to} {a})"));
                    add(&format!("sat-cast {to}"), format!("(sat-cast {to} {a})"));
                }
            }
            for &to in types.iter().filter(|&&to| to != t) {
                if (lanes * t.bits()).is_multiple_of(to.bits()) {
                    add(&format!("bitcast {to}"), format!("(bitcast {to} {a})"));
                }
            }
            add("broadcast 2", format!("(broadcast 2 {a})"));
            add("concat", format!("(concat {a} {b})"));
            add("interleave", format!("(interleave {a} {b})"));
            let half = (lanes / 2).max(1);
            let stride = if lanes >= 2 { 2 } else { 1 };
            add(
                &format!("slice 0 {stride} {half}"),
                format!("(slice 0 {stride} {half} {a})"),
            );
            let reversed: Vec<String> = (0..lanes).rev().map(|i| i.to_string()).collect();
            add(
                "shuffle (reverse)",
                format!("(shuffle ({}) {a})", reversed.join(" ")),
            );
            let index = if float { Elem::U32 } else { t };
            add("lookup", format!("(lookup {a} i_{index})"));
            let k = if lanes >= 2 { 2 } else { 1 };
            add(&format!("reduce-add {k}"), format!("(reduce-add {k} {a})"));
        }
    }
    out
}

/// How `root` covers its cell, given whether the lowerings alone select as cheaply (if asked).
fn coverage(root: &Rc<Node>, direct: Option<bool>) -> Coverage {
    let scalarized = root.scalarized();
    if !scalarized.is_empty() {
        return Coverage::Scalarized(scalarized);
    }
    match direct {
        None => Coverage::Vector,
        Some(true) => Coverage::Direct,
        Some(false) => Coverage::Rules,
    }
}

/// Walks `cells` on `target`: each selected and proven with the stored rules and, at `detail`
/// [`Detail::DirectOrRules`], selected again without them to tell direct lowerings from rules
/// (twice the time). The cells are selected as `compile --batch` selects, many to one egglog
/// program. `progress` hears of every cell. The table asks whether selection is total, not how
/// far synthesis takes a scalarized operator (seconds per operator, over thousands of cells),
/// so the walk does without it.
pub fn walk(
    project: &Project,
    target: Target,
    cells: Vec<Cell>,
    detail: Detail,
    progress: &mut dyn FnMut(&Cell, &Coverage),
) -> Result<TargetTable> {
    let mut full = Selector::load(project, target)?;
    let mut bare = Selector::load(project, target)?;
    full.set_synthesis(false);
    bare.set_synthesis(false);
    bare.catalog.lift_rules.clear();
    bare.catalog.simplify_rules.clear();
    bare.catalog.lower_rules.clear();
    let declared = HashMap::new();
    let mut covered: Vec<Option<Coverage>> = cells.iter().map(|_| None).collect();
    let mut inputs = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        match full.elaborate(&cell.expression, Some(cell.lanes), &declared) {
            Ok(input) => inputs.push((index, input)),
            Err(e) => {
                let failed = Coverage::Failed(e.to_string());
                progress(cell, &failed);
                covered[index] = Some(failed);
            }
        }
    }
    let mut rest = inputs.as_slice();
    while !rest.is_empty() {
        let chunk = next_chunk(rest, CHUNK);
        rest = &rest[chunk.len()..];
        let (mut selections, mut rule_less) = (Vec::new(), Vec::new());
        select_chunk(&mut full, chunk, &mut selections);
        if detail == Detail::DirectOrRules {
            select_chunk(&mut bare, chunk, &mut rule_less);
        }
        // The cost of each input's rule-less selection, where it scalarized nothing.
        let direct_cost: HashMap<usize, f64> = rule_less
            .into_iter()
            .filter_map(|(index, _, selection)| {
                let (_, root) = selection.ok()?;
                root.scalarized()
                    .is_empty()
                    .then(|| (index, root.cost(&bare.catalog)))
            })
            .collect();
        for (index, input, selection) in selections {
            let catalog = &full.catalog;
            let proven = selection.and_then(|(_, root)| {
                full.proven_or_scalarized(&input, root, VALIDATION_TIMEOUT_MS)
                    .map_err(|e| e.to_string())
            });
            let coverage = match proven {
                Ok((root, _)) => {
                    // Direct: the lowerings alone find a selection as cheap, scalarizing nothing.
                    let direct = match detail {
                        Detail::Covered => None,
                        Detail::DirectOrRules => Some(
                            direct_cost
                                .get(&index)
                                .is_some_and(|&cost| cost <= root.cost(catalog)),
                        ),
                    };
                    coverage(&root, direct)
                }
                Err(e) => Coverage::Failed(e),
            };
            progress(&cells[index], &coverage);
            covered[index] = Some(coverage);
        }
    }
    let cells = cells
        .into_iter()
        .zip(covered)
        .map(|(cell, coverage)| {
            let coverage = coverage.unwrap_or_else(|| Coverage::Failed("not selected".to_string()));
            (cell, coverage)
        })
        .collect();
    Ok(TargetTable {
        target: target.name,
        cells,
    })
}
