//! The SQLite rule database `rules.db/isadb.sqlite`: opening and migrating it, all-or-nothing
//! transactions, CSV export/import of the expensive tables, and summary statistics.

mod csv_io;
mod csv_text;
mod instructions;
mod migrate;
mod specs;
mod stats;
mod tables;

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::error::{Error, Result};

pub use instructions::{several_spelled, Filter};
pub use migrate::{NEWER_SCHEMA, SCHEMA_VERSION};
pub use stats::Stats;
pub use tables::COMMITTED_TABLES;

/// The most of the database file SQLite maps into memory instead of copying it page by page
/// into its cache: a `compile` process reads a few megabytes of instructions and rules, and
/// copying them took about a tenth of its catalog's loading.
const MMAP_BYTES: i64 = 1 << 30;

/// An open, migrated isadb database.
pub struct Database {
    conn: Connection,
    /// Opened read-only (the file or its directory cannot be written): reads work, writes fail.
    read_only: bool,
}

impl Database {
    /// Opens (creating if missing) the database file and brings its schema up to date.
    /// Any failure, including a file that is not an SQLite database, is one `Error::Data`
    /// naming the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Database> {
        let path = path.as_ref();
        let opened = Connection::open(path)
            .map_err(Error::from)
            .and_then(Database::setup);
        let cannot_write = |e: &Error| {
            matches!(e, Error::Sql(rusqlite::Error::SqliteFailure(f, _))
                if matches!(f.code, rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen))
        };
        match opened {
            Err(e) if cannot_write(&e) && path.is_file() => Database::open_read_only(path),
            opened => opened,
        }
        .map_err(|e| {
            let why = match e {
                Error::Sql(e) => e.to_string(),
                Error::Data { msg, .. } => msg,
                e => e.to_string(),
            };
            Error::data(
                path.display().to_string(),
                format!("cannot open database: {why}"),
            )
        })
    }

    /// Opens a database isadb may not write (a read-only file or directory) for reading: as
    /// SQLite's `immutable` file, since its WAL and shared-memory files cannot be created. Its
    /// schema must be this isadb's, as it cannot be migrated.
    fn open_read_only(path: &Path) -> Result<Database> {
        let encoded: String = path
            .to_string_lossy()
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'.' | b'_' | b'-' => {
                    (b as char).to_string()
                }
                b => format!("%{b:02X}"),
            })
            .collect();
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(format!("file:{encoded}?immutable=1"), flags)?;
        let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            return Err(Error::data(
                "schema",
                format!(
                    "version {version}, not this isadb's {SCHEMA_VERSION}, and the database is read-only"
                ),
            ));
        }
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
        Ok(Database {
            conn,
            read_only: true,
        })
    }

    /// Whether the database was opened read-only (optional writes, such as the selection
    /// cache, are skipped).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A fresh private in-memory database with the current schema (tests, dry runs).
    pub fn open_in_memory() -> Result<Database> {
        Database::setup(Connection::open_in_memory()?)
    }

    /// WAL lets readers run beside one writer; the busy timeout makes a second writer wait
    /// instead of failing at once; foreign keys are off by default in SQLite. The file is read
    /// through a memory map ([`MMAP_BYTES`]).
    fn setup(mut conn: Connection) -> Result<Database> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.pragma_update(None, "foreign_keys", true)?;
        migrate::migrate(&mut conn)?;
        Ok(Database {
            conn,
            read_only: false,
        })
    }

    /// The SQLite connection.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The SQLite connection, for transactions.
    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Runs `f` in one transaction: committed if it returns Ok, rolled back on Err (or panic),
    /// so the database is never left half-written.
    pub fn transaction<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction) -> Result<T>,
    ) -> Result<T> {
        let tx = self.conn.transaction()?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// The `meta` value for `key` (e.g. the spec input hash used to decide staleness).
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        let q = "SELECT value FROM meta WHERE key = ?1";
        Ok(self.conn.query_row(q, [key], |r| r.get(0)).optional()?)
    }

    /// Every row of a query whose columns are all text, as strings.
    pub fn text_rows(&self, sql: &str) -> Result<Vec<Vec<String>>> {
        let mut stmt = self.conn.prepare(sql)?;
        let n = stmt.column_count();
        let rows = stmt.query_map([], |r| {
            (0..n)
                .map(|i| r.get::<_, String>(i))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Damage check at open: SQLite's `PRAGMA quick_check` (every page and index entry is
    /// well formed; about 20 ms on the shipped 8 MB database). A damaged file is an error
    /// naming it and what the check found.
    pub fn check_intact(&self) -> Result<()> {
        let found: rusqlite::Result<Vec<String>> = self
            .conn
            .prepare("PRAGMA quick_check(3)")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect());
        let name = self.conn.path().unwrap_or("database").to_string();
        match found {
            Ok(lines) if lines.iter().all(|l| l == "ok") => Ok(()),
            Ok(lines) => Err(Error::data(
                name,
                format!("damaged ({})", crate::error::one_line(&lines.join("; "))),
            )),
            Err(e) => Err(Error::data(name, format!("damaged ({e})"))),
        }
    }

    /// Sets (inserts or replaces) the `meta` value for `key`.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            [key, value],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory, removed when the guard drops (pass or fail).
    fn scratch_dir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("isadb-db-test-")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn fresh_database_has_every_table_and_version() {
        let db = Database::open_in_memory().unwrap();
        let version: u32 = db
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        for t in [
            "isas",
            "features",
            "families",
            "instructions",
            "idioms",
            "classes",
            "class_members",
            "rules",
            "verification_runs",
            "synthesis_runs",
            "validation_results",
            "implements",
            "meta",
            "selection_cache",
        ] {
            let n: i64 = db
                .conn()
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 0, "{t}");
        }
        let fk: bool = db
            .conn()
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert!(fk);
    }

    #[test]
    fn reopening_a_file_keeps_data_and_uses_wal() {
        let dir = scratch_dir();
        let path = dir.path().join("isadb.sqlite");
        Database::open(&path)
            .unwrap()
            .set_meta("input_hash", "abc")
            .unwrap();
        let db = Database::open(&path).unwrap();
        assert_eq!(db.meta("input_hash").unwrap().as_deref(), Some("abc"));
        assert_eq!(db.meta("missing").unwrap(), None);
        let mode: String = db
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn transaction_rolls_back_on_error() {
        let mut db = Database::open_in_memory().unwrap();
        let r: Result<()> = db.transaction(|tx| {
            tx.execute("INSERT INTO meta VALUES ('k', 'v')", [])?;
            Err(Error::data("test", "boom"))
        });
        assert!(r.is_err());
        assert_eq!(db.meta("k").unwrap(), None);
        db.transaction(|tx| Ok(tx.execute("INSERT INTO meta VALUES ('k', 'v')", [])?))
            .unwrap();
        assert_eq!(db.meta("k").unwrap().as_deref(), Some("v"));
    }

    #[test]
    fn corrupted_file_is_one_line_error() {
        let dir = scratch_dir();
        let path = dir.path().join("isadb.sqlite");
        let bytes: Vec<u8> = (0..8192u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        std::fs::write(&path, bytes).unwrap();
        let msg = Database::open(&path)
            .err()
            .expect("random bytes must not open")
            .to_string();
        assert!(
            msg.contains("isadb.sqlite") && msg.contains("not a database"),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "{msg}");
    }

    #[test]
    fn newer_schema_is_refused() {
        let dir = scratch_dir();
        let path = dir.path().join("isadb.sqlite");
        Database::open(&path)
            .unwrap()
            .conn()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let msg = Database::open(&path).err().unwrap().to_string();
        assert!(msg.contains("newer"), "{msg}");
    }
}
