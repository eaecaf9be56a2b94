//! `isadb compile` as one call: the selection (through the selection cache when one is given),
//! the printed sequence, and what was asked besides: the egglog program that ran, the C
//! function, and the C run on random inputs.

use super::check::{features, run_c, RunCheck};
use super::compile::{Compiled, Selector};
use super::steps::{steps, Step};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::{Elem, VecType};
use crate::toolchain::features::Host;
use std::collections::HashMap;

/// What to compile and what to produce besides the sequence.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Lanes of the result (default: the widest variable fills one register).
    pub lanes: Option<u32>,
    /// Variables without a type suffix, with their element types.
    pub declared: HashMap<String, Elem>,
    /// The egglog program that ran (selection then bypasses the cache).
    pub program: bool,
    /// The C function.
    pub c: bool,
    /// Run the C on this many iterations of random inputs.
    pub run: Option<usize>,
}

/// What `compile` found.
pub struct Report {
    /// The expression as given.
    pub expression: String,
    /// The type of its result.
    pub result: VecType,
    /// The sequence, one step per distinct instruction.
    pub steps: Vec<Step>,
    /// Where each part of the result is: its step and lane range.
    pub outputs: Vec<(String, u32, u32)>,
    /// The sequence's cost.
    pub cost: f64,
    /// Selection and translation-validation times.
    pub select_ms: f64,
    #[allow(missing_docs)]
    pub validate_ms: f64,
    /// Whether the selection came from the selection cache.
    pub cached: bool,
    /// The selection is the input's own tree, scalarized: proven without z3.
    pub same_tree: bool,
    /// Rewrites in the egglog program; `None` for a cached selection.
    pub rewrites: Option<usize>,
    /// What running the C found.
    pub run: Option<RunCheck>,
    /// The CPU features of the selected instructions.
    pub features: Vec<String>,
    /// The operators computed lane by lane because no instruction sequence covers them
    /// (`add at u8x16`), each once.
    pub scalarized: Vec<String>,
    /// The egglog program, after a comment per rule it could not hold.
    pub program: Option<String>,
    /// The C function.
    pub c: Option<String>,
}

impl Selector {
    /// Compiles `text` as `request` asks; `cache` is the database holding the selection cache.
    pub fn report(
        &mut self,
        text: &str,
        request: &Request,
        cache: Option<&mut Database>,
    ) -> Result<Report> {
        let cache = cache.filter(|_| !request.program);
        let compiled = self.compile(text, request.lanes, &request.declared, cache)?;
        self.describe(compiled, request)
    }

    /// The report of a selection, with what `request` asks besides the sequence.
    pub fn describe(&self, compiled: Compiled, request: &Request) -> Result<Report> {
        let catalog = &self.catalog;
        let (steps, outputs) = steps(&compiled, catalog);
        let run = match request.run {
            Some(iterations) => {
                let dir = tempfile::Builder::new()
                    .prefix("isadb-compile-")
                    .tempdir()
                    .map_err(|e| Error::io(std::env::temp_dir(), e))?;
                let host = Host::detect();
                Some(run_c(&compiled, catalog, iterations, 1, dir.path(), &host)?)
            }
            None => None,
        };
        let program = compiled
            .program
            .as_ref()
            .filter(|_| request.program)
            .map(|program| {
                let skipped: String = program
                    .skipped
                    .iter()
                    .map(|s| format!("; not in the e-graph: {s}\n"))
                    .collect();
                format!("{skipped}{program}")
            });
        let c = if request.c {
            Some(super::emit_c::function(&compiled, catalog, "kernel")?)
        } else {
            None
        };
        Ok(Report {
            expression: compiled.source.clone(),
            result: compiled.input.ty,
            steps,
            outputs,
            cost: compiled.cost,
            select_ms: compiled.select_ms,
            validate_ms: compiled.validate_ms,
            cached: compiled.cached,
            same_tree: compiled.proof == Some(super::prove::Proof::SameTree),
            rewrites: compiled.program.as_ref().map(|p| p.rewrites),
            run,
            features: features(&compiled, catalog),
            scalarized: compiled.root.scalarized(),
            program,
            c,
        })
    }

    /// The egglog program for `text` as `request` would generate it (to show when selection
    /// fails), if it elaborates.
    pub fn program_text(&mut self, text: &str, request: &Request) -> Option<String> {
        let input = self
            .elaborate(text, request.lanes, &request.declared)
            .ok()?;
        self.program(&input).ok().map(|p| p.to_string())
    }
}
