//! A kernel file compiled in a project: read (C through the front end, else the lifted List
//! form), the database's proven rules in their tuned phases (tuned first when the database has
//! no tuning yet), then [`compile`].

use super::c::{self, Outputs};
use super::compile::{compile, Options};
use super::phase::Phase;
use super::read::{read_list, Lifted};
use super::report::Report;
use super::rule::KernelRule;
use super::store::{self, RuleSet};
use super::target::{KernelTarget, Target};
use crate::error::{Error, Result};
use crate::project::Project;
use std::path::Path;

/// Reads a kernel: C (`.c`) through the front end (its output arrays starting as `outputs`
/// says), anything else as the lifted List form.
pub fn lift(path: &Path, outputs: Outputs) -> Result<Lifted> {
    let text = crate::error::read_text(path)?;
    let shown = path.display().to_string();
    let lifted = if path.extension().is_some_and(|x| x == "c") {
        c::lift(&text, &shown, outputs)?
    } else {
        read_list(&text, &shown)?
    };
    lifted.within_limits(&shown)
}

/// `isadb kernel FILE`: the proven rules of a set in their tuned phases (the set tuned first if
/// it has no tuning yet), the kernel lifted and compiled for the named target.
pub fn compile_file(
    project: &Project,
    path: &Path,
    target: KernelTarget,
    set: RuleSet,
    outputs: Outputs,
    opts: &Options,
) -> Result<Report> {
    let lifted = lift(path, outputs)?;
    let rules = phased_rules(project, set)?;
    let db = project.open()?;
    compile(lifted, &Target::load(&db, target)?, &rules, opts)
}

/// The proven rules of a set in their phases, the set tuned first if it has no tuning yet.
pub fn phased_rules(project: &Project, set: RuleSet) -> Result<Vec<(KernelRule, Phase)>> {
    let mut db = project.open()?;
    if store::tuning(&db, set)?.is_none() {
        drop(db);
        eprintln!(
            "isadb: no alpha/beta recorded yet for the {} rules: tuning them on the small kernels first",
            set.as_str()
        );
        super::tune::tune(project, set)?;
        db = project.open()?;
    }
    let tuning = store::tuning(&db, RuleSet::Given)?;
    store::sync(&mut db, &project.specs, tuning)?;
    let rules = store::phased_rules(&db, set)?;
    if rules.is_empty() {
        return Err(Error::Usage(format!(
            "no proven {} kernel rules: run `isadb verify-rules` first",
            set.as_str()
        )));
    }
    Ok(rules)
}
