//! Table metadata read from the live schema (columns, types, key order, parent tables), so CSV
//! export/import follows the migrations without a hand-kept column list.

use rusqlite::Connection;

use crate::error::{Error, Result};

/// The tables whose contents are expensive to recompute and so are committed as
/// `rules.db/<table>.csv`; everything else is rebuilt from the spec files.
pub const COMMITTED_TABLES: &[&str] = &[
    "rules",
    "classes",
    "class_members",
    "validation_results",
    "verification_runs",
    "synthesis_runs",
    "synthesis_pieces",
    "idiom_matches",
    "idiom_catalogue",
    "kernel_tuning",
    "similarity_checks",
    "port_results",
];

/// The storage class of a column; STRICT tables guarantee every non-NULL value has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ColType {
    Integer,
    Real,
    Text,
}

pub(super) struct Column {
    pub name: String,
    pub ty: ColType,
}

pub(super) struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// Primary-key columns in key order (empty: order by rowid), for stable, diffable output.
    pub key: Vec<String>,
    /// Tables this one references through foreign keys.
    pub parents: Vec<String>,
}

/// `name` as an SQL identifier.
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Table {
    /// Reads the metadata of table `name`; `source` names the file the caller is working on,
    /// for errors.
    pub fn load(conn: &Connection, name: &str, source: &str) -> Result<Table> {
        let exists =
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1 AND name NOT LIKE 'sqlite_%'";
        if conn.query_row(exists, [name], |r| r.get::<_, i64>(0))? == 0 {
            return Err(Error::data(
                source,
                format!("no table '{name}' in the database"),
            ));
        }
        let mut columns = Vec::new();
        let mut key = Vec::new();
        let mut stmt =
            conn.prepare("SELECT name, upper(type), pk FROM pragma_table_info(?1) ORDER BY cid")?;
        let mut rows = stmt.query([name])?;
        while let Some(row) = rows.next()? {
            let (col, ty, pk): (String, String, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
            let ty = match ty.as_str() {
                "INTEGER" | "INT" => ColType::Integer,
                "REAL" => ColType::Real,
                "TEXT" => ColType::Text,
                _ => {
                    return Err(Error::data(
                        source,
                        format!("column '{col}' has type {ty}, which CSV cannot carry"),
                    ))
                }
            };
            if pk > 0 {
                key.push((pk, col.clone()));
            }
            columns.push(Column { name: col, ty });
        }
        key.sort();
        let mut stmt =
            conn.prepare("SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)")?;
        let parents = stmt
            .query_map([name], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Table {
            name: name.to_string(),
            columns,
            key: key.into_iter().map(|k| k.1).collect(),
            parents,
        })
    }
}

/// Orders tables parents first (among the given ones); with a cycle it falls back to the
/// given order, which is harmless because imports defer foreign-key checks to the end.
pub(super) fn dependency_order(mut pending: Vec<Table>) -> Vec<Table> {
    let mut done = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let waits = |t: &Table| {
            t.parents
                .iter()
                .any(|p| *p != t.name && pending.iter().any(|q| q.name == *p))
        };
        let next = pending.iter().position(|t| !waits(t)).unwrap_or(0);
        done.push(pending.remove(next));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::Database;

    #[test]
    fn metadata_and_order() {
        let db = Database::open_in_memory().unwrap();
        let load = |n: &str| Table::load(db.conn(), n, "t.csv").unwrap();
        let members = load("class_members");
        assert_eq!(members.key, ["class_id", "instruction_id"]);
        assert_eq!(
            members.columns.iter().map(|c| c.ty).collect::<Vec<_>>(),
            [ColType::Integer, ColType::Integer, ColType::Text]
        );
        let order = dependency_order(COMMITTED_TABLES.iter().rev().map(|n| load(n)).collect());
        let pos = |n: &str| order.iter().position(|t| t.name == n).unwrap();
        assert!(pos("classes") < pos("class_members"));
        assert_eq!(order.len(), COMMITTED_TABLES.len());
        let err = Table::load(db.conn(), "nope", "dir/nope.csv")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(err, "dir/nope.csv: no table 'nope' in the database");
    }
}
