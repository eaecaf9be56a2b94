//! `isadb synth`: rule synthesis into the database.
//!
//! The search is split into independent pieces (a workload at one element type, a lowering
//! goal on one target). Each piece runs Ruler's loop (`search`) or the lowering search
//! (`lower`) over the typed terms of `term`, enumerated by `workload`, told apart by
//! `fingerprint`, paired by `candidate`, proven by `proof`, minimised by `derive`, generalised
//! by `generalise` and `predicate`, directed and given a kind by `phase` from `cost`; `store`
//! writes the rules with their provenance and verification record, `rederive` tells which
//! hand-written rules the synthesized ones derive, and `run` runs the command and returns its
//! report (`cli::synth` renders it). The rule-instance and storage rows come from `rules`,
//! instructions from `database`, the project from `project`; nothing below imports this.

pub mod candidate;
pub mod cost;
pub mod derive;
pub mod fingerprint;
pub mod generalise;
pub mod lower;
pub mod phase;
pub mod predicate;
pub mod proof;
pub mod rederive;
pub mod run;
pub mod search;
pub mod store;
pub mod term;
pub mod workload;

use crate::ir::Elem;
use crate::rules::RuleKind;
use crate::spec::Isa;
use serde::Serialize;

/// A rule found by the search, before it is named and stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The element types `T` ranges over (empty: the rule is written at concrete types).
    pub types: Vec<Elem>,
    pub lhs: String,
    pub rhs: String,
    pub predicate: Option<String>,
    /// How selection uses it (lift, simplify or lower), from the costs.
    pub kind: RuleKind,
    /// The ISAs the rule is for (empty: every target).
    pub isas: Vec<Isa>,
    /// Why it has its kind: the costs on every target.
    pub reason: String,
    /// The search piece that found it.
    pub piece: String,
}

/// What one piece's search did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    /// Terms enumerated.
    pub terms: usize,
    /// Candidate equalities considered.
    pub candidates: usize,
    /// Both sides expand to the same IR (an idiom's own definition).
    pub definitional: usize,
    /// Derivable from the rules kept so far.
    pub derived: usize,
    /// Proven, refuted, undecided by z3.
    pub proven: usize,
    #[allow(missing_docs)]
    pub refuted: usize,
    #[allow(missing_docs)]
    pub unknown: usize,
    /// Kept as predicated rules.
    pub predicated: usize,
}

pub use run::{merge_shards, rederive_hand_rules, synth, Options, Report, Shard};
pub use workload::SEARCH_TYPES;
