//! A cap on how much one iteration of a ruleset may do, for e-graphs near the size budget.
//! egglog applies every match of every rule in an iteration, and one iteration can multiply
//! the e-graph hundreds of times over before any budget is checked: a rule joining two
//! operands that each stand for many values makes a node per pair (one NEON lowering iteration
//! grew 212,000 tuples to 113 million in 70 s and 13 GB, a lane-wise operator on the low lanes
//! of values whose low lanes many values share). Under [`MatchLimit`] an iteration applies at
//! most [`MatchLimit::per_rule`] matches of each rule and records the most a rule had; where
//! that is more, selection stops as it does at the budget, before the e-graph holds the rest
//! (a batch splits the chunk, a single expression is selected by halves).

use egglog::scheduler::{Matches, Scheduler};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// At most `per_rule` matches of each rule per iteration, in the order egglog found them; the
/// most matches one rule had, in `most`.
#[derive(Clone)]
pub struct MatchLimit {
    pub per_rule: usize,
    pub most: Arc<AtomicUsize>,
}

impl Scheduler for MatchLimit {
    fn filter_matches(&mut self, _rule: &str, _ruleset: &str, matches: &mut Matches) -> bool {
        let found = matches.match_size();
        self.most.fetch_max(found, Ordering::Relaxed);
        if found <= self.per_rule {
            matches.choose_all();
        } else {
            for i in 0..self.per_rule {
                matches.choose(i);
            }
        }
        true
    }
}
