//! A cap on how much one iteration of a ruleset may do, for e-graphs near the size budget.
//! egglog applies every match of every rule in an iteration, and one iteration can multiply
//! the e-graph hundreds of times over before any budget is checked: a rule joining two
//! operands that each stand for many values makes a node per pair (one NEON lowering iteration
//! grew 212,000 tuples to 113 million in 70 s and 13 GB, a lane-wise operator on the low lanes
//! of values whose low lanes many values share). Under [`MatchLimit`] an iteration applies at
//! most [`MatchLimit::per_rule`] matches of each rule; egglog keeps the others for the next
//! iterations, so saturation still reaches them, in bounded steps.

use egglog::scheduler::{Matches, Scheduler};

/// At most `per_rule` matches of each rule per iteration, in the order egglog found them.
#[derive(Clone)]
pub struct MatchLimit {
    pub per_rule: usize,
}

impl Scheduler for MatchLimit {
    fn filter_matches(&mut self, _rule: &str, _ruleset: &str, matches: &mut Matches) -> bool {
        if matches.match_size() <= self.per_rule {
            matches.choose_all();
        } else {
            for i in 0..self.per_rule {
                matches.choose(i);
            }
        }
        true
    }
}
