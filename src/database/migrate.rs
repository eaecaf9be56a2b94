//! Schema migrations: the numbered `schemas/*.sql` files, embedded in the binary and applied in
//! order, each in its own transaction; `PRAGMA user_version` records how many are applied.

use rusqlite::Connection;

use crate::error::{Error, Result};

/// The migrations in order; migration `i` (0-based) brings the schema to version `i + 1`.
const MIGRATIONS: [(&str, &str); 13] = [
    ("0001_core", include_str!("../../schemas/0001_core.sql")),
    ("0002_rules", include_str!("../../schemas/0002_rules.sql")),
    (
        "0003_implements",
        include_str!("../../schemas/0003_implements.sql"),
    ),
    (
        "0004_idiom_matches",
        include_str!("../../schemas/0004_idiom_matches.sql"),
    ),
    ("0005_views", include_str!("../../schemas/0005_views.sql")),
    (
        "0006_match_operands",
        include_str!("../../schemas/0006_match_operands.sql"),
    ),
    (
        "0007_selection_cache",
        include_str!("../../schemas/0007_selection_cache.sql"),
    ),
    (
        "0009_kernel_tuning",
        include_str!("../../schemas/0009_kernel_tuning.sql"),
    ),
    (
        "0010_synthesis",
        include_str!("../../schemas/0010_synthesis.sql"),
    ),
    (
        "0011_similarity_checks",
        include_str!("../../schemas/0011_similarity_checks.sql"),
    ),
    (
        "0012_port_results",
        include_str!("../../schemas/0012_port_results.sql"),
    ),
    (
        "0013_kernel_rule_sets",
        include_str!("../../schemas/0013_kernel_rule_sets.sql"),
    ),
    (
        "0014_catalog_fingerprints",
        include_str!("../../schemas/0014_catalog_fingerprints.sql"),
    ),
];

/// The schema version of a fully migrated database.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The words of the error on a database whose schema a newer isadb wrote, which
/// opening a project refuses rather than rebuilds.
pub const NEWER_SCHEMA: &str = "is newer than this isadb's";

/// Applies the migrations the database has not seen yet; refuses a database from a newer isadb.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(Error::data(
            "schema",
            format!("version {version} {NEWER_SCHEMA} {SCHEMA_VERSION}; upgrade isadb"),
        ));
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)
            .map_err(|e| Error::data(format!("schemas/{name}.sql"), e.to_string()))?;
        tx.pragma_update(None, "user_version", i as u32 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_incremental_and_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(MIGRATIONS[0].1).unwrap();
        tx.pragma_update(None, "user_version", 1).unwrap();
        tx.commit().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let v: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let q = "SELECT count(*) FROM sqlite_schema WHERE name = 'implements'";
        assert_eq!(conn.query_row(q, [], |r| r.get::<_, i64>(0)).unwrap(), 1);
    }
}
