//! The classes in the database: `classes` and `class_members` (rebuilt by every build) and
//! `similarity_checks` (z3's verdicts, committed as CSV). The only place their rows are read
//! and written.

use super::similar::{Check, Classification, Similarity};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::spec::Instruction;
use rusqlite::params;
use serde::Serialize;
use std::collections::HashMap;

/// Every cached verdict, by pair hash.
pub(super) fn cached_checks(db: &Database) -> Result<HashMap<String, Check>> {
    let mut stmt = db
        .conn()
        .prepare("SELECT pair_hash, verdict, solver_ms FROM similarity_checks")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
        ))
    })?;
    let mut out = HashMap::new();
    for row in rows {
        let (key, verdict, ms) = row?;
        let verdict = Similarity::parse(&verdict).ok_or_else(|| {
            Error::data(
                "similarity_checks",
                format!("pair {key}: bad verdict {verdict:?} (similar, different or unknown)"),
            )
        })?;
        out.insert(key, Check { verdict, ms });
    }
    Ok(out)
}

/// Replaces the classes with `found` (over `instructions`) and caches its new verdicts, in
/// one transaction.
pub(super) fn write(
    db: &mut Database,
    instructions: &[&Instruction],
    found: &Classification,
) -> Result<()> {
    db.transaction(|tx| {
        tx.execute("DELETE FROM class_members", [])?;
        tx.execute("DELETE FROM classes", [])?;
        let ids: HashMap<String, i64> = {
            let mut stmt = tx.prepare("SELECT name, id FROM instructions")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut class = tx.prepare("INSERT INTO classes(name, description) VALUES (?1, ?2)")?;
        let mut member = tx.prepare(
            "INSERT INTO class_members(class_id, instruction_id, binding) VALUES (?1, ?2, ?3)",
        )?;
        for c in &found.classes {
            class.execute(params![c.name, c.template])?;
            let id = tx.last_insert_rowid();
            for (m, binding) in &c.members {
                let name = &instructions[*m].name;
                let instruction = ids.get(name).ok_or_else(|| {
                    Error::data("class_members", format!("{name} is not in the database"))
                })?;
                member.execute(params![id, instruction, binding])?;
            }
        }
        let mut check = tx.prepare(
            "INSERT OR REPLACE INTO similarity_checks(pair_hash, verdict, solver_ms) VALUES (?1, ?2, ?3)",
        )?;
        for (key, c) in &found.new_checks {
            check.execute(params![key, c.verdict.name(), c.ms])?;
        }
        Ok(())
    })
}

/// A member of a class as `classes` and `show` print it.
#[derive(Debug, Clone, Serialize)]
pub struct MemberRow {
    #[allow(missing_docs)]
    pub instruction: String,
    #[allow(missing_docs)]
    pub isa: String,
    /// The member's values of the class's open parameters and its operands.
    pub binding: String,
}

/// A class with its members.
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    #[allow(missing_docs)]
    pub name: String,
    /// The parameterized operation.
    pub template: String,
    /// The ISAs of its members, in order.
    pub isas: Vec<String>,
    #[allow(missing_docs)]
    pub members: Vec<MemberRow>,
}

/// Every class with its members, in name order.
pub fn all_classes(db: &Database) -> Result<Vec<ClassRow>> {
    classes_named(db, None)
}

/// The classes (only the one named `only`, when given) with their members, by name.
fn classes_named(db: &Database, only: Option<&str>) -> Result<Vec<ClassRow>> {
    let mut stmt = db.conn().prepare(
        "SELECT c.name, c.description, i.name, s.name, m.binding
         FROM classes c JOIN class_members m ON m.class_id = c.id
         JOIN instructions i ON i.id = m.instruction_id JOIN isas s ON s.id = i.isa_id
         WHERE ?1 IS NULL OR c.name = ?1
         ORDER BY c.name, s.name, i.name",
    )?;
    let rows = stmt.query_map([only], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            MemberRow {
                instruction: r.get(2)?,
                isa: r.get(3)?,
                binding: r.get(4)?,
            },
        ))
    })?;
    let mut out: Vec<ClassRow> = Vec::new();
    for row in rows {
        let (name, template, member) = row?;
        if out.last().is_none_or(|c| c.name != name) {
            out.push(ClassRow {
                name,
                template,
                isas: Vec::new(),
                members: Vec::new(),
            });
        }
        let class = out.last_mut().expect("pushed above");
        if !class.isas.contains(&member.isa) {
            class.isas.push(member.isa.clone());
        }
        class.members.push(member);
    }
    Ok(out)
}

/// The class of the instruction named `name` (by name or intrinsic), if it has one.
pub fn class_of(db: &Database, name: &str) -> Result<Option<ClassRow>> {
    let class: Option<String> = db
        .conn()
        .query_row(
            "SELECT c.name FROM classes c JOIN class_members m ON m.class_id = c.id
             JOIN instructions i ON i.id = m.instruction_id
             WHERE i.name = ?1 OR i.intrinsic = ?1 ORDER BY i.id LIMIT 1",
            [name],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    match class {
        None => Ok(None),
        Some(c) => Ok(classes_named(db, Some(&c))?.into_iter().next()),
    }
}
