//! A kernel file compiled in a project: read (C through the front end, else the lifted List
//! form), the database's proven rules in their tuned phases (tuned first when the database has
//! no tuning yet), then [`compile`].

use super::compile::{compile, Options};
use super::read::{read_list, Lifted};
use super::report::Report;
use super::target::{KernelTarget, Target};
use super::{c, store};
use crate::error::{Error, Result};
use crate::project::Project;
use std::path::Path;

/// Reads a kernel: C (`.c`) through the front end, anything else as the lifted List form.
pub fn lift(path: &Path) -> Result<Lifted> {
    let text = crate::error::read_text(path)?;
    let shown = path.display().to_string();
    let lifted = if path.extension().is_some_and(|x| x == "c") {
        c::lift(&text, &shown)?
    } else {
        read_list(&text, &shown)?
    };
    lifted.within_limits(&shown)
}

/// `isadb kernel FILE`: the database's proven rules in their tuned phases (tuning first if
/// there is no tuning yet), the kernel lifted and compiled for the named target.
pub fn compile_file(
    project: &Project,
    path: &Path,
    target: KernelTarget,
    opts: &Options,
) -> Result<Report> {
    let mut db = project.open()?;
    let target = Target::load(&db, target)?;
    let lifted = lift(path)?;
    if store::tuning(&db)?.is_none() {
        drop(db);
        eprintln!("isadb: no alpha/beta recorded yet: tuning them on the small kernels first");
        super::tune::tune(project)?;
        db = project.open()?;
    }
    let tuning = store::tuning(&db)?;
    store::sync(&mut db, &project.specs, tuning)?;
    let rules = store::phased_rules(&db)?;
    if rules.is_empty() {
        return Err(Error::Usage(
            "no proven kernel rules: run `isadb verify-rules` first".into(),
        ));
    }
    compile(lifted, &target, &rules, opts)
}
