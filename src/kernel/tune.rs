//! `isadb kernel --tune`: Isaria's alpha and beta chosen automatically. Every (alpha, beta) pair
//! that assigns the proven rules to phases differently is tried on the small kernels (mat-mul
//! 2x2, 2d-conv 3x3 by 2x2, q-prod) for the DSP, searching from the spec alone (no seed); the pair
//! with the lowest total cost in the `diospyros` model (then the fastest) is recorded in the
//! database's `kernel_tuning` table. Each rule set is tuned on its own; a set with more
//! distinct assignments than [`MAX_PAIRS`] (a synthesized one) tries that many, evenly spaced.

use super::compile::{compile, Options};
use super::cost::Model;
use super::family;
use super::phase::{assign, candidates, cost_point};
use super::store::{self, RuleSet, Tuning};
use super::target::{KernelTarget, Target};
use crate::error::{Error, Result};
use crate::project::Project;
use serde::Serialize;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Serialize)]
pub struct TuneReport {
    pub alpha: f64,
    pub beta: f64,
    pub score: f64,
    pub candidates: usize,
    pub kernels: Vec<String>,
    pub ms: f64,
}

/// The most (alpha, beta) pairs a sweep tries.
pub const MAX_PAIRS: usize = 80;

pub fn tune(project: &Project, set: RuleSet) -> Result<TuneReport> {
    let start = Instant::now();
    let mut db = project.open()?;
    let current = store::tuning(&db, RuleSet::Given)?;
    store::sync(&mut db, &project.specs, current)?;
    // Every proven rule, whatever phase it has now: the sweep reassigns them.
    let rules = store::set_rules(&db, set, true)?;
    if rules.is_empty() {
        return Err(Error::Usage(format!(
            "no proven {} kernel rules: run `isadb {}` first",
            set.as_str(),
            match set {
                RuleSet::Given => "verify-rules",
                RuleSet::Synthesized => "synth --dialect dsp",
            }
        )));
    }
    let target = Target::load(&db, KernelTarget::Dsp)?;
    let kernels = [
        family::mat_mul(2, 2, 2),
        family::conv(3, 3, 2, 2),
        family::q_prod(),
    ];
    let lifted: Vec<_> = kernels
        .iter()
        .map(|k| super::c::lift(&k.c, &k.name, super::c::Outputs::Caller))
        .collect::<Result<_>>()?;
    let opts = Options {
        model: Model::Diospyros,
        timeout: Duration::from_secs(10),
        seed: false,
        run: None,
        keep_egglog: false,
    };
    let all = candidates(&rules);
    let step = all.len().div_ceil(MAX_PAIRS).max(1);
    let pairs: Vec<(f64, f64)> = all.into_iter().step_by(step).collect();
    let mut best: Option<(f64, f64, Tuning)> = None;
    for &(alpha, beta) in &pairs {
        let phased: Vec<_> = rules
            .iter()
            .map(|r| (r.clone(), assign(cost_point(r), alpha, beta)))
            .collect();
        let t0 = Instant::now();
        let mut score = 0.0;
        for l in &lifted {
            score += compile(l.clone(), &target, &phased, &opts)?.costs.diospyros;
        }
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        let better = match &best {
            None => true,
            Some((s, m, _)) => score < s - 1e-9 || ((score - s).abs() <= 1e-9 && ms < m * 0.8),
        };
        if better {
            best = Some((score, ms, Tuning { alpha, beta }));
        }
    }
    let (score, _, chosen) = best.expect("at least one candidate");
    let names: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
    store::record_tuning(
        &mut db,
        set,
        chosen,
        score,
        pairs.len(),
        &names.join(" "),
        &store::rules_hash(&rules),
    )?;
    match set {
        RuleSet::Given => drop(store::sync(&mut db, &project.specs, Some(chosen))?),
        RuleSet::Synthesized => store::apply_tuning(&mut db, set, chosen)?,
    }
    db.export_tables(&project.tables, &["kernel_tuning", "rules"])?;
    Ok(TuneReport {
        alpha: chosen.alpha,
        beta: chosen.beta,
        score,
        candidates: pairs.len(),
        kernels: names,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}
