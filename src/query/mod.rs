//! Questions about the database: which instructions implement an idiom, what an instruction's
//! equivalents are elsewhere; facts proven by the matcher, relations derived with datafrog.

pub mod matcher;

pub use matcher::{Fact, Matcher};
pub mod ask;
pub mod datalog;
pub mod implements;
