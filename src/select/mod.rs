//! Instruction selection (`isadb compile`): a Halide-style expression goes into an egglog
//! e-graph, the lift ruleset rewrites integer arithmetic into fixed-point idioms, the target's
//! lower ruleset rewrites idioms into instructions, extraction picks the cheapest instruction
//! tree, and z3 proves it equivalent to the input before it is used.
//!
//! - [`compile`]: the pipeline, stage by stage ([`Selector::compile`]).
//! - [`catalog`]: what the database holds for a target; [`lowering`]: "this instruction
//!   computes this pattern", from idiom facts and semantics; [`permute`]: interleaves and deals
//!   by a scalar control; [`simplify`]: identities folded out of instruction patterns.
//! - [`term`]: the e-graph's typed terms and rewrites, and their egglog text; [`encode`]: IR
//!   as terms and patterns; [`rewrites`], [`split`], [`layout`], [`sound`], [`signedness`],
//!   [`truncation`], [`popcount`] and [`pair_products`] (rewrites sound by construction):
//!   what goes into a
//!   program; [`constants`]: the constants scalar operands are instantiated at; [`program`]:
//!   the program; [`run`]: running it in egglog ([`pending`]: its
//!   rewrites declared on demand).
//! - [`halves`]: an expression past the budget selected as two halves of its lanes; [`pieces`]:
//!   one that cannot be halved, selected operator by operator down from its root.
//! - [`node`]: the selection read back; [`scalarize`]: the last resort for an operator no
//!   instruction sequence covers, lane by lane; [`prove`]: translation validation; [`cache`]:
//!   the selection cache.
//! - [`batch`]: many expressions per egglog program, chunks on worker threads (`compile --batch`);
//!   [`corpus`]: the corpus `bench batch` compiles that way.
//! - [`totality`]: the operator x type x lanes x target table, walked.
//! - [`steps`], [`emit_c`] (with [`scalar_c`] for scalarized lanes), [`check`]: the printed
//!   sequence, the C function, and running it.
//!
//! The fixed parts of every program are the `.egg` files next to these: `prelude.egg`,
//! `analysis.egg`, `bounds.egg`, `layout.egg`, `schedule.egg`.

pub mod batch;
pub mod bit_permutation;
mod bitwise;
pub mod bool_logic;
pub mod byte_map;
pub mod byte_predicates;
pub mod cache;
pub mod catalog;
mod chains;
pub mod check;
pub mod compile;
pub mod constants;
pub mod corpus;
pub mod emit_c;
pub mod encode;
pub mod extract;
pub mod fallback;
pub mod fixed_operand;
pub mod float_conversions;
mod fold;
pub mod halves;
pub mod layout;
pub mod lookups;
pub mod lowering;
pub mod mask_bits;
pub mod movement;
pub mod moves;
pub mod node;
pub mod padding;
pub mod pair_products;
mod past_budget;
pub mod pattern;
pub mod pending;
pub mod per_lane_shifts;
pub mod pieces;
pub mod prematch;

pub mod permute;
pub mod popcount;
pub mod products;
pub mod program;
pub mod prove;
pub mod ranged;
pub mod reach;
pub mod reciprocal;
pub mod refine;
pub mod report;
pub mod reshape;
pub mod rewrites;
pub mod run;
pub mod saturating;
pub mod scalar_c;
pub mod scalarize;
pub mod sequences;
pub mod shifts;
pub mod signedness;
pub mod simplify;
pub mod sound;
pub mod split;
pub mod steps;
pub mod sums;
pub mod table;
pub mod term;
pub mod throttle;
pub mod totality;
pub mod truncation;
pub mod unsigned_high;
pub mod word_pairs;

pub use compile::{Compiled, Selector};
pub use node::Node;
pub use prove::{prove_selection, Proof};
pub use report::{Report, Request};
pub use steps::Step;
