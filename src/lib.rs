//! isadb: vector ISA semantics, cross-ISA classes and verified rewrite rules in one SQLite rule
//! database, with an interpreter and a z3 encoding of every instruction.

pub mod bench;
pub mod cli;
pub mod database;
pub mod error;
pub mod ir;
pub mod kernel;
pub mod query;
pub mod rules;
pub mod select;
pub mod semantics;
pub mod spec;
pub mod validate;
