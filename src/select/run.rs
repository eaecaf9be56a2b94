//! Running a generated program in egglog: equality saturation in phases, then extraction of the
//! cheapest term, returned as the egglog text it prints (what the selection cache stores).

use super::program::Program;
use crate::error::{Error, Result};

/// Runs the program; the extracted term as text.
pub fn run(program: &Program) -> Result<String> {
    let mut egraph = egglog::EGraph::default();
    let outputs = egraph
        .parse_and_run_program(None, &program.to_string())
        .map_err(|e| Error::data("egglog", one_line(&e.to_string())))?;
    outputs
        .iter()
        .rev()
        .find_map(|o| match o {
            egglog::CommandOutput::ExtractBest(dag, _, term) => Some(dag.to_string(*term)),
            _ => None,
        })
        .ok_or_else(|| Error::data("egglog", "the program extracted nothing"))
}

/// egglog's multi-line message on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
