//! Cross-ISA equivalence classes (Hydride, paper 000, §3.3): instructions of every ISA whose
//! semantics are one computation up to parameters (lane count, element width, literals,
//! operand order), each class a parameterized operation with every member's binding. Built at
//! every database build from the instructions ([`refresh`]): shapes by constant extraction
//! ([`shape`]), membership by the similarity check ([`similar`]), rows in [`store`].

pub mod shape;
pub mod similar;
pub mod store;

use crate::database::Database;
use crate::error::Result;
use crate::spec::{Instruction, SpecSet};
use serde::{Deserialize, Serialize};
use similar::{Check, Classification};
use std::collections::HashMap;
use std::time::Instant;

pub use store::{all_classes, class_of, ClassRow};

/// What a build's classification found, kept in `meta` for `isadb classes`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Instructions classified.
    pub instructions: usize,
    /// Distinct shapes after constant extraction.
    pub shapes: usize,
    #[allow(missing_docs)]
    pub classes: usize,
    /// Classes with members on at least two, and on at least three, ISAs.
    pub spanning_2: usize,
    #[allow(missing_docs)]
    pub spanning_3: usize,
    /// Members admitted by syntactic equality of the instantiated representative.
    pub syntactic: usize,
    /// Similarity checks z3 answered in this build, and those answered from the cache.
    pub solved: usize,
    #[allow(missing_docs)]
    pub cached: usize,
    /// Checks refuted by the interpreter on random inputs before z3.
    pub refuted_by_samples: usize,
    /// Wall time of the classification.
    pub ms: f64,
}

/// The `meta` key of the last build's [`Summary`].
const SUMMARY_KEY: &str = "classes_summary";

/// Classifies every instruction of `specs` and replaces the stored classes; new z3 verdicts
/// are added to `similarity_checks`.
pub fn refresh(db: &mut Database, specs: &SpecSet) -> Result<Summary> {
    let start = Instant::now();
    let cache = store::cached_checks(db)?;
    let instructions = in_order(specs);
    let found = classify_parallel(specs, &cache)?;
    store::write(db, &instructions, &found)?;
    let spanning = |n: usize| {
        found
            .classes
            .iter()
            .filter(|c| {
                let mut isas: Vec<_> = c
                    .members
                    .iter()
                    .map(|(m, _)| instructions[*m].isa)
                    .collect();
                isas.sort();
                isas.dedup();
                isas.len() >= n
            })
            .count()
    };
    let summary = Summary {
        instructions: instructions.len(),
        shapes: found.shapes,
        classes: found.classes.len(),
        spanning_2: spanning(2),
        spanning_3: spanning(3),
        syntactic: found.syntactic,
        solved: found.new_checks.len(),
        cached: found.cached,
        refuted_by_samples: found.refuted_by_samples,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    };
    db.set_meta(
        SUMMARY_KEY,
        &serde_json::to_string(&summary).expect("plain data"),
    )?;
    Ok(summary)
}

/// The instructions in the order classes are formed: by ISA, then name.
fn in_order(specs: &SpecSet) -> Vec<&Instruction> {
    let mut instructions: Vec<&Instruction> = specs.instructions.iter().collect();
    instructions.sort_by(|a, b| (a.isa, &a.name).cmp(&(b.isa, &b.name)));
    instructions
}

/// Classifies on every core, the shapes shared out. Specs hold shared (non-Send) trees, so each
/// worker thread reloads them from their directory.
fn classify_parallel(specs: &SpecSet, cache: &HashMap<String, Check>) -> Result<Classification> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let Some(dir) = specs.dir.clone().filter(|_| workers > 1) else {
        return similar::classify(&in_order(specs), cache, (0, 1));
    };
    let parts: Vec<Result<Classification>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let dir = dir.clone();
                scope.spawn(move || {
                    let local = crate::spec::load_dir(&dir)?;
                    similar::classify(&in_order(&local), cache, (w, workers))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("classifier thread"))
            .collect()
    });
    let mut all = Classification::default();
    for part in parts {
        let part = part?;
        all.classes.extend(part.classes);
        all.new_checks.extend(part.new_checks);
        all.shapes += part.shapes;
        all.syntactic += part.syntactic;
        all.cached += part.cached;
        all.refuted_by_samples += part.refuted_by_samples;
    }
    all.classes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(all)
}

/// The last build's summary, if the database has one.
pub fn last_summary(db: &Database) -> Result<Option<Summary>> {
    Ok(db
        .meta(SUMMARY_KEY)?
        .and_then(|text| serde_json::from_str(&text).ok()))
}
