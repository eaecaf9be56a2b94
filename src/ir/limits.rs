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
