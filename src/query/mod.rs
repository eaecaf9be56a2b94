//! Questions about the database, in the words people use: the named queries of `queries/`
//! (SQL, or Datalog evaluated on datafrog over the stored facts), and `what implements
//! EXPRESSION on TARGET`, answered by the idiom matcher.

pub mod ask;
pub mod datalog;
mod vocabulary;

pub use ask::ask;
pub use vocabulary::plain;
