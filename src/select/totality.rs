//! The totality table: every IR operator, at every element type it is defined on, at lane
//! counts from one lane to four registers, on each target, selected and proven as `isadb
//! compile` does it (no selection cache), and classified by how it was covered: directly (the
//! instruction lowerings alone, without any stored rule), through the stored rules, or by
//! scalarizing lanes. Anything else (an error) is a failing cell, a bug.

use super::compile::Selector;
use super::node::Node;
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
    /// With operators computed lane by lane (`add at u8x16`).
    Scalarized(Vec<String>),
    /// No proven selection: the error.
    Failed(String),
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
    /// Cells lowered directly, by rules, by scalarizing, failing.
    pub fn counts(&self) -> [usize; 4] {
        let mut c = [0; 4];
        for (_, coverage) in &self.cells {
            c[match coverage {
                Coverage::Direct => 0,
                Coverage::Rules => 1,
                Coverage::Scalarized(_) => 2,
                Coverage::Failed(_) => 3,
            }] += 1;
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

/// How `root` covers its cell, given whether the rule-less selection scalarized.
fn coverage(root: &Rc<Node>, direct: bool) -> Coverage {
    let scalarized = root.scalarized();
    if !scalarized.is_empty() {
        Coverage::Scalarized(scalarized)
    } else if direct {
        Coverage::Direct
    } else {
        Coverage::Rules
    }
}

/// Walks `cells` on `target`: each selected and proven with the stored rules, and selected
/// again without them to tell direct lowerings from rules. `progress` hears of every cell.
/// The table asks whether selection is total, not how far synthesis takes a scalarized
/// operator (seconds per operator, over thousands of cells), so the walk does without it.
pub fn walk(
    project: &Project,
    target: Target,
    cells: Vec<Cell>,
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
    let mut out = Vec::new();
    for cell in cells {
        let result = full
            .compile(&cell.expression, Some(cell.lanes), &declared, None)
            .map(|compiled| {
                // Direct: the lowerings alone find a selection as cheap, scalarizing nothing.
                let direct = compiled.root.scalarized().is_empty()
                    && bare.select(&compiled.input).is_ok_and(|(_, _, root)| {
                        root.scalarized().is_empty() && root.cost(&bare.catalog) <= compiled.cost
                    });
                coverage(&compiled.root, direct)
            });
        let covered = result.unwrap_or_else(|e| Coverage::Failed(e.to_string()));
        progress(&cell, &covered);
        out.push((cell, covered));
    }
    Ok(TargetTable {
        target: target.name,
        cells: out,
    })
}
