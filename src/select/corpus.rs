//! The selection corpus of `isadb bench batch`: every operation of Pitchfork's fixed-point IR
//! (Table 1, `specs/idioms/fpir.spec`) at every integer type up to 32 bits, and the arithmetic a
//! Halide user writes (lane-wise operators, strength-reducible multiplies and divisions,
//! accumulations, selects, and every cast and saturating cast between those types), each
//! compiled for every target. An FPIR operation over plain variables also knows its idiom,
//! so that its selection can be compared with the cheapest instruction proven to implement
//! that idiom (the idiomatic instruction).

use super::batch::{self, Item};
use super::catalog::Catalog;
use crate::error::Result;
use crate::idioms::{proven_facts, Fact};
use crate::ir::{Elem, VecType};
use crate::project::Project;
use crate::spec::Target;
use serde::Serialize;
use std::collections::HashMap;

/// One expression of the corpus.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The expression, Halide-style.
    pub text: String,
    /// The idiom it applies to variables of this element type, if it is one FPIR operation.
    pub idiom: Option<(&'static str, Elem)>,
}

/// FPIR operations of two variables of one type, named as their idioms.
const FPIR_BINARY: [&str; 9] = [
    "widening_add",
    "widening_sub",
    "widening_mul",
    "halving_add",
    "halving_sub",
    "rounding_halving_add",
    "saturating_add",
    "saturating_sub",
    "absd",
];

/// The element types of the corpus.
fn types() -> Vec<Elem> {
    [8, 16, 32]
        .into_iter()
        .flat_map(|bits| [false, true].map(|signed| Elem::int(bits, signed)))
        .flatten()
        .collect()
}

/// The whole corpus, the same for every target.
pub fn corpus() -> Vec<Entry> {
    let mut out = Vec::new();
    let mut add = |text: String, idiom| out.push(Entry { text, idiom });
    let all = types();
    for &t in &all {
        let (x, y, z) = (format!("x_{t}"), format!("y_{t}"), format!("z_{t}"));
        let bits = t.bits();
        for f in FPIR_BINARY {
            add(format!("{f}({x}, {y})"), Some((f, t)));
        }
        if bits > 8 {
            add(
                format!("saturating_narrow({x})"),
                Some(("saturating_narrow", t)),
            );
        }
        for text in [
            format!("widening_shl({x}, 2)"),
            format!("widening_shr({x}, 2)"),
            format!("rounding_shr({x}, 3)"),
            format!("saturating_shl({x}, 2)"),
            format!("mul_shr({x}, {y}, {})", bits - 1),
            format!("rounding_mul_shr({x}, {y}, {})", bits - 1),
            format!("{x} + {y}"),
            format!("{x} - {y}"),
            format!("{x} * {y}"),
            format!("min({x}, {y})"),
            format!("max({x}, {y})"),
            format!("{x} << 2"),
            format!("{x} >> 3"),
            format!("{x} * 2"),
            format!("{x} * 16"),
            format!("{x} / 4"),
            format!("{x} / 3"),
            format!("{x} % 7"),
            format!("select({x} < {y}, {x}, {z})"),
            format!("select({x} == {y}, {z}, {x})"),
            format!("select({x} > {y} && {x} < {z}, {x}, {y})"),
            format!("select(!({x} == {y}) || {z} > {x}, {z}, {x})"),
            format!("{z} + {x} * {y}"),
            format!("{z} - {x} * {y}"),
            format!("{z} + ({x} >> 2)"),
            format!("({x} + {y} + 1) / 2"),
            format!("{x} & {y}"),
            format!("{x} | {y}"),
            format!("{x} ^ {y}"),
        ] {
            add(text, None);
        }
        if !t.is_signed() {
            add(format!("{z} + absd({x}, {y})"), None);
        } else {
            add(format!("-{x}"), None);
        }
        for &to in all.iter().filter(|&&to| to != t) {
            add(format!("{to}({x})"), None);
            if to.bits() <= bits {
                add(format!("{to}_sat({x})"), None);
            }
        }
    }
    out
}

/// The cost of the idiomatic selection of `entry` with a result of type `result`: the
/// cheapest instruction of the catalog proven (by `facts`) to implement the entry's idiom
/// over operands of its element type, times the registers the result needs; `None` when the
/// entry is not one idiom or the target has no such instruction.
pub fn idiomatic_cost(
    entry: &Entry,
    result: VecType,
    catalog: &Catalog,
    facts: &[Fact],
) -> Option<f64> {
    let (idiom, elem) = entry.idiom?;
    facts
        .iter()
        .filter(|f| f.idiom == idiom)
        .filter_map(|f| {
            catalog
                .instructions
                .iter()
                .find(|i| i.name == f.instruction)
        })
        .filter(|i| i.operands.first().is_some_and(|o| o.ty.elem == elem))
        .filter(|i| i.result.elem.bits() == result.elem.bits())
        .map(|i| i.cost * result.bits().div_ceil(i.result.bits()) as f64)
        .min_by(f64::total_cmp)
}

/// What `bench batch` measured on one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetFigures {
    pub target: &'static str,
    pub expressions: usize,
    /// With a proven selection.
    pub selected: usize,
    /// Selected with an operator computed lane by lane.
    pub scalarized: usize,
    /// Without a selection: each expression with its error.
    pub failed: Vec<(String, String)>,
    /// Entries with an idiomatic instruction on the target.
    pub with_idiom: usize,
    /// Of those, selected at a cost no higher than the idiomatic instruction's.
    pub no_dearer: usize,
    /// The others: expression, selected cost, idiomatic cost.
    pub dearer: Vec<(String, f64, f64)>,
    /// egglog programs run.
    pub programs: usize,
    pub select_ms: f64,
    pub wall_ms: f64,
    /// Median z3 translation validation of one selection.
    pub prove_median_ms: f64,
}

/// Compiles the corpus in batch on each target, on `jobs` worker threads.
pub fn measure(project: &Project, targets: &[Target], jobs: usize) -> Result<Vec<TargetFigures>> {
    let entries = corpus();
    let facts = proven_facts(&project.open()?)?;
    let mut out = Vec::new();
    for &target in targets {
        let items = entries
            .iter()
            .enumerate()
            .map(|(i, e)| Item {
                line: i + 1,
                target,
                text: e.text.clone(),
                lanes: None,
            })
            .collect();
        let report = batch::run(project, items, &HashMap::new(), jobs)?;
        let catalog = Catalog::load(project, target)?;
        let mut figures = TargetFigures {
            target: target.name,
            expressions: entries.len(),
            selected: report.selected(),
            scalarized: 0,
            failed: Vec::new(),
            with_idiom: 0,
            no_dearer: 0,
            dearer: Vec::new(),
            programs: report.programs,
            select_ms: report.select_ms,
            wall_ms: report.wall_ms,
            prove_median_ms: 0.0,
        };
        let mut proofs = Vec::new();
        for (entry, done) in entries.iter().zip(&report.entries) {
            let selected = match &done.outcome {
                Ok(s) => s,
                Err(e) => {
                    figures.failed.push((entry.text.clone(), e.clone()));
                    continue;
                }
            };
            proofs.push(selected.prove_ms);
            figures.scalarized += usize::from(!selected.scalarized.is_empty());
            if let Some(idiomatic) = idiomatic_cost(entry, selected.result, &catalog, &facts) {
                figures.with_idiom += 1;
                if selected.cost <= idiomatic + 1e-9 {
                    figures.no_dearer += 1;
                } else {
                    figures
                        .dearer
                        .push((entry.text.clone(), selected.cost, idiomatic));
                }
            }
        }
        proofs.sort_by(f64::total_cmp);
        figures.prove_median_ms = proofs.get(proofs.len() / 2).copied().unwrap_or(0.0);
        out.push(figures);
    }
    Ok(out)
}
