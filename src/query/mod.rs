//! Questions about the database: which instructions implement an idiom, what an instruction's
//! equivalents are elsewhere; facts proven by the matcher, relations derived with datafrog.

pub mod ask;
pub mod datalog;
pub mod implements;
pub mod matcher;

pub use ask::{ask, Row};
pub use matcher::{Fact, Matcher};
