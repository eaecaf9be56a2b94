//! The bounds isadb puts on user-sized input, in one place, checked before any work or
//! allocation that grows with them: lanes of a vector (`--lanes`, `<N x T>`, `(vec N T)`), and
//! the nesting depth and term count of one expression or top-level form of a spec, rule or
//! query file. Every recursive pass over a user's tree runs after a parser that enforced
//! [`MAX_DEPTH`] and [`MAX_TERMS`], so none of them can exhaust the stack.

use crate::error::{Error, Location, Result};

/// The most lanes of a vector: 4096 (so at most 4096 x 128 bits = 64 KiB per value; the
/// widest real register, an HVX pair, has 256 byte lanes).
pub const MAX_LANES: u32 = 4096;

/// The deepest nesting of one expression or top-level form (the shipped specs nest at most 16).
pub const MAX_DEPTH: usize = 256;

/// The most terms (atoms and lists) of one expression or top-level form: 2^18 (the largest
/// expanded semantics of a shipped instruction, `Q6_W_vshuff_VVR`, has about 38,000).
pub const MAX_TERMS: usize = 1 << 18;

/// The most iterations of a `--run` check, or inputs per instruction of `validate`: 100,000
/// (each is a compiled program's run on fresh random lanes; 100 is the default).
pub const MAX_RUNS: usize = 100_000;

/// The most lanes a `--run` check generates and reads back, over all its iterations, inputs
/// and output: 2^22 (64 MiB of lane values, 16 bytes each).
pub const MAX_RUN_LANES: usize = 1 << 22;

/// The most threads of `--jobs`: 256.
pub const MAX_JOBS: usize = 256;

/// The largest term, in nodes, of `synth --max-size` and `--lower-size`: 8 (the enumeration
/// grows exponentially with it; the defaults are 4 and 5).
pub const MAX_TERM_SIZE: usize = 8;

/// `lanes` when within 1..=[`MAX_LANES`]; else a usage error naming `what` and the limit.
pub fn check_lanes(lanes: u32, what: &str) -> Result<u32> {
    if (1..=MAX_LANES).contains(&lanes) {
        Ok(lanes)
    } else {
        Err(Error::Usage(lanes_message(lanes, what)))
    }
}

/// `what` has `lanes` lanes, outside 1..=[`MAX_LANES`].
pub fn lanes_message(lanes: impl std::fmt::Display, what: &str) -> String {
    format!("{what}: {lanes} lanes, outside isadb's limit of 1..={MAX_LANES} lanes")
}

/// Counts the nesting and terms of a tree as a parser builds it, failing at the first term past
/// [`MAX_DEPTH`] or [`MAX_TERMS`].
#[derive(Debug, Default)]
pub struct TreeBudget {
    depth: usize,
    terms: usize,
}

impl TreeBudget {
    /// One more term at `loc`.
    pub fn term(&mut self, loc: &Location) -> Result<()> {
        self.terms += 1;
        if self.terms > MAX_TERMS {
            return Err(Error::parse(
                loc,
                format!("more than {MAX_TERMS} terms in one expression (isadb's limit)"),
            ));
        }
        Ok(())
    }

    /// One level deeper at `loc`.
    pub fn enter(&mut self, loc: &Location) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::parse(
                loc,
                format!("expression nested more than {MAX_DEPTH} deep (isadb's limit)"),
            ));
        }
        Ok(())
    }

    /// One level back out.
    pub fn leave(&mut self) {
        self.depth -= 1;
    }
}
