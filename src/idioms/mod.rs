//! Idioms as instructions implement them: the matcher that proves, at build time, which
//! instructions implement which idiom of `specs/idioms/` ([`matcher`]), keeping the facts
//! current when specs change ([`refresh`]) and storing them ([`store`]). Queries ask about
//! the facts; instruction selection lowers by them.

mod candidate;
pub mod fact;
pub mod matcher;
pub mod refresh;
pub mod store;

pub use fact::{Constant, Fact, OperandBinding};
pub use matcher::{instantiate_idiom, read_as, Matcher};
pub use refresh::refresh;
pub use store::proven_facts;
