//! CSV export/import of whole tables, for the expensive results committed in `rules.db/`.
//!
//! Format: `<dir>/<table>.csv`, a header row of column names, then one row per record in
//! primary-key order. An unquoted empty field is NULL and `""` is the empty string; integers
//! are written in decimal, reals in Rust's shortest round-trip form (`1.0`, `0.1`, `1e-7`),
//! and each field is typed by its (STRICT) column, so export → import → export is byte-exact.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::types::{Value, ValueRef};
use rusqlite::{OptionalExtension, Transaction};

use super::csv_text::{self, Field};
use super::tables::{self, quote, ColType, Table};
use super::Database;
use crate::error::{Error, Result};

fn csv_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.csv"))
}

impl Database {
    /// Writes each table to `dir/<table>.csv` (creating `dir`), all from one snapshot; each
    /// file is replaced atomically.
    pub fn export_tables(&self, dir: impl AsRef<Path>, tables: &[&str]) -> Result<()> {
        let dir = dir.as_ref();
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let snapshot = self.conn().unchecked_transaction()?;
        for &name in tables {
            let path = csv_path(dir, name);
            let source = path.display().to_string();
            let table = Table::load(&snapshot, name, &source)?;
            let mut out = String::new();
            csv_text::write_record(
                &mut out,
                &table
                    .columns
                    .iter()
                    .map(|c| Some(c.name.clone()))
                    .collect::<Vec<_>>(),
            );
            let cols: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
            let key: Vec<String> = table.key.iter().map(|k| quote(k)).collect();
            let order = if key.is_empty() {
                "rowid".to_string()
            } else {
                key.join(", ")
            };
            let sql = format!(
                "SELECT {} FROM {} ORDER BY {order}",
                cols.join(", "),
                quote(name)
            );
            let mut stmt = snapshot.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let mut fields = Vec::with_capacity(cols.len());
                for (i, col) in table.columns.iter().enumerate() {
                    let field = render(row.get_ref(i)?).map_err(|why| {
                        Error::data(&source, format!("column '{}': {why}", col.name))
                    })?;
                    fields.push(field);
                }
                csv_text::write_record(&mut out, &fields);
            }
            let tmp = dir.join(format!(".{name}.csv.tmp"));
            fs::write(&tmp, out).map_err(|e| Error::io(&tmp, e))?;
            fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    }

    /// Replaces the contents of each table with `dir/<table>.csv`, parents first, in one
    /// transaction: on any error (bad CSV, type, constraint, dangling foreign key) nothing
    /// changes. Columns missing from a header take their defaults.
    pub fn import_tables(&mut self, dir: impl AsRef<Path>, tables: &[&str]) -> Result<()> {
        let dir = dir.as_ref();
        self.transaction(|tx| {
            // Checked once at the end, so table order and existing children don't matter.
            tx.pragma_update(None, "defer_foreign_keys", true)?;
            let mut loaded: Vec<Table> = Vec::new();
            for &name in tables {
                if !loaded.iter().any(|t| t.name == name) {
                    loaded.push(Table::load(
                        tx,
                        name,
                        &csv_path(dir, name).display().to_string(),
                    )?);
                }
            }
            let order = tables::dependency_order(loaded);
            for t in order.iter().rev() {
                tx.execute(&format!("DELETE FROM {}", quote(&t.name)), [])?;
            }
            let mut lines = HashMap::new();
            for t in &order {
                lines.insert(
                    t.name.clone(),
                    import_table(tx, t, &csv_path(dir, &t.name))?,
                );
            }
            check_foreign_keys(tx, dir, &lines)
        })
    }
}

/// One stored value as a CSV field.
fn render(v: ValueRef) -> std::result::Result<Field, String> {
    Ok(match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(r) => Some(format!("{r:?}")),
        ValueRef::Text(t) => Some(String::from_utf8(t.to_vec()).map_err(|_| "text is not UTF-8")?),
        ValueRef::Blob(_) => return Err("blobs cannot be written as CSV".into()),
    })
}

/// One CSV field as a value of column type `ty`.
fn parse_value(field: Field, ty: ColType) -> std::result::Result<Value, String> {
    let Some(s) = field else {
        return Ok(Value::Null);
    };
    match ty {
        ColType::Text => Ok(Value::Text(s)),
        ColType::Integer => s
            .parse()
            .map(Value::Integer)
            .map_err(|_| format!("expected an integer, found {s:?}")),
        ColType::Real => match s.parse::<f64>() {
            Ok(r) if !r.is_nan() => Ok(Value::Real(r)),
            _ => Err(format!("expected a number, found {s:?}")),
        },
    }
}

/// Inserts the rows of one CSV file; returns the CSV line of each inserted rowid.
fn import_table(tx: &Transaction, table: &Table, path: &Path) -> Result<HashMap<i64, usize>> {
    let source = path.display().to_string();
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut records = csv_text::parse(&text, &source)?.into_iter();
    let header = records
        .next()
        .ok_or_else(|| Error::data(&source, "line 1: empty file, expected a header row"))?;
    let mut columns = Vec::with_capacity(header.fields.len());
    for name in header.fields.iter().map(|f| f.as_deref().unwrap_or("")) {
        let Some(col) = table.columns.iter().find(|c| c.name == name) else {
            let known: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
            let msg = format!(
                "line 1: unknown column '{name}' (table '{}' has {})",
                table.name,
                known.join(", ")
            );
            return Err(Error::data(&source, msg));
        };
        if columns.iter().any(|c: &&tables::Column| c.name == name) {
            return Err(Error::data(
                &source,
                format!("line 1: column '{name}' appears twice"),
            ));
        }
        columns.push(col);
    }
    let names: Vec<String> = columns.iter().map(|c| quote(&c.name)).collect();
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        quote(&table.name),
        names.join(", "),
        marks.join(", ")
    );
    let mut stmt = tx.prepare(&sql)?;
    let mut lines = HashMap::new();
    for rec in records {
        let at = |msg: String| Error::data(&source, format!("line {}: {msg}", rec.line));
        if rec.fields.len() != columns.len() {
            return Err(at(format!(
                "expected {} fields, found {}",
                columns.len(),
                rec.fields.len()
            )));
        }
        let mut values = Vec::with_capacity(columns.len());
        for (field, col) in rec.fields.into_iter().zip(&columns) {
            values.push(
                parse_value(field, col.ty)
                    .map_err(|why| at(format!("column '{}': {why}", col.name)))?,
            );
        }
        stmt.execute(rusqlite::params_from_iter(values))
            .map_err(|e| at(e.to_string()))?;
        lines.insert(tx.last_insert_rowid(), rec.line);
    }
    Ok(lines)
}

/// Fails on the first dangling foreign key, naming the CSV file, line and column(s) when the
/// offending row was imported, or the table and rowid when an import removed its parent.
fn check_foreign_keys(
    tx: &Transaction,
    dir: &Path,
    lines: &HashMap<String, HashMap<i64, usize>>,
) -> Result<()> {
    let violation = tx
        .query_row("PRAGMA foreign_key_check", [], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .optional()?;
    let Some((table, rowid, parent, fkid)) = violation else {
        return Ok(());
    };
    let mut stmt =
        tx.prepare("SELECT \"from\" FROM pragma_foreign_key_list(?1) WHERE id = ?2 ORDER BY seq")?;
    let cols: Vec<String> = stmt
        .query_map((&table, fkid), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let quoted: Vec<String> = cols.iter().map(|c| quote(c)).collect();
    let sql = format!(
        "SELECT {} FROM {} WHERE rowid = ?1",
        quoted.join(", "),
        quote(&table)
    );
    let key: Vec<String> = tx.query_row(&sql, [rowid], |r| {
        (0..cols.len())
            .map(|i| Ok(render(r.get_ref(i)?).ok().flatten().unwrap_or_default()))
            .collect()
    })?;
    let (cols, key) = (cols.join(", "), key.join(", "));
    let file = |t: &str| csv_path(dir, t).display().to_string();
    Err(match lines.get(&table).and_then(|l| l.get(&rowid)) {
        Some(line) => {
            Error::data(file(&table), format!("line {line}: column '{cols}': no '{parent}' row with key {key}"))
        }
        None => Error::data(
            if lines.contains_key(&parent) { file(&parent) } else { "database".to_string() },
            format!("'{table}' row {rowid} refers by '{cols}' to a '{parent}' row with key {key}, which is missing"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::COMMITTED_TABLES;
    use rusqlite::params;

    /// A `rules.db` path (not yet created) inside a temporary directory that is removed when
    /// the guard drops, pass or fail.
    fn scratch_dir() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::Builder::new()
            .prefix("isadb-csv-test-")
            .tempdir()
            .unwrap();
        let dir = tmp.path().join("rules.db");
        (tmp, dir)
    }

    /// The spec-built part that class_members refers to.
    fn catalogue() -> Database {
        let db = Database::open_in_memory().unwrap();
        db.conn()
            .execute_batch(
                "INSERT INTO isas VALUES (1, 'x86');
                 INSERT INTO features VALUES (1, 'avx2', 1);
                 INSERT INTO families VALUES (1, 1, 'add', 'specs/x86.isa', 3);
                 INSERT INTO instructions (id, name, intrinsic, asm, isa_id, feature_id, family_id, params, operands,
                     result_type, semantics, sem_hash, cost) VALUES
                   (1, 'vpaddw', '_mm256_add_epi16', 'vpaddw', 1, 1, 1, 'W=256 T=i16', '[]', 'i16x16', '(+ a b)', 'h1', 1.0),
                   (2, 'vpaddd', NULL, 'vpaddd', 1, 1, 1, 'W=256 T=i32', '[]', 'i32x8', '(+ a b)', 'h2', 0.5);",
            )
            .unwrap();
        db
    }

    /// The catalogue plus committed tables holding every awkward value the CSVs must carry.
    fn populated() -> Database {
        let db = catalogue();
        let c = db.conn();
        let rule =
            "INSERT INTO rules (id, name, lhs, rhs, predicate, kind, phase, target, provenance, rule_hash, status,
            lanes_proven, types_proven, counterexample, solver_ms, verified_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
        let none: Option<&str> = None;
        c.execute(
            rule,
            params![
                1,
                "add-comm",
                "(+ a b)",
                "(+ b a)",
                none,
                "simplify",
                none,
                none,
                "hand-written",
                "h1",
                "proven",
                "4,8,16",
                "i8 i16",
                none,
                12.5,
                "2024-05-01T10:00:00Z"
            ],
        )
        .unwrap();
        c.execute(
            rule,
            params![
                2,
                "lower, \"quoted\"",
                "line1\nline2",
                "",
                "",
                "lower",
                3,
                "x86",
                "synthesized",
                "h2",
                "refuted",
                none,
                none,
                "a=0x7f,\r\nb=\"1\"",
                0.1,
                none
            ],
        )
        .unwrap();
        c.execute(
            rule,
            params![
                7,
                "ünïcødé ✓",
                "x",
                "y",
                none,
                "lift",
                -1,
                "",
                "imported",
                "h3",
                "unknown",
                "",
                "",
                none,
                3.0,
                none
            ],
        )
        .unwrap();
        c.execute_batch(
            "INSERT INTO classes VALUES (1, 'add', 'lane-wise add'), (2, 'empty', '');
             INSERT INTO class_members VALUES (1, 2, 'T=i32'), (1, 1, 'T=i16');
             INSERT INTO validation_results VALUES ('h1', 'vpaddw', 'x86', 1000, 'validated', '', '2024-05-01'),
                 ('h2', 'vpaddd', 'x86', 0, 'skipped', 'no CPU, \"avx2\"', '2024-05-02');
             INSERT INTO verification_runs VALUES (1, 't0', 't1', 'isadb verify --all', 2, 1, 1, 1e-7);
             INSERT INTO synthesis_runs VALUES (1, 't0', 't1', 'x86', 'W=256', 4, 123456789.125);",
        )
        .unwrap();
        db
    }

    fn read_all(dir: &Path) -> Vec<(String, String)> {
        COMMITTED_TABLES
            .iter()
            .map(|t| (t.to_string(), fs::read_to_string(csv_path(dir, t)).unwrap()))
            .collect()
    }

    #[test]
    fn export_import_export_is_byte_identical() {
        let ((_a, a), (_b, b)) = (scratch_dir(), scratch_dir());
        populated().export_tables(&a, COMMITTED_TABLES).unwrap();
        let mut db = catalogue();
        db.import_tables(&a, COMMITTED_TABLES).unwrap();
        db.export_tables(&b, COMMITTED_TABLES).unwrap();
        assert_eq!(read_all(&a), read_all(&b));

        let rules = fs::read_to_string(csv_path(&a, "rules")).unwrap();
        assert_eq!(
            rules.lines().next().unwrap(),
            "id,name,lhs,rhs,predicate,kind,phase,target,provenance,rule_hash,\
            status,lanes_proven,types_proven,counterexample,solver_ms,verified_at"
        );
        assert!(
            rules.contains("\n1,add-comm,(+ a b),(+ b a),,simplify,,,hand-written,h1,proven,\"4,8,16\",i8 i16,,12.5,")
        );
        assert!(
            rules.contains("\n7,ünïcødé ✓,x,y,,lift,-1,\"\",imported,h3,unknown,\"\",\"\",,3.0,\n")
        );
        let members = fs::read_to_string(csv_path(&a, "class_members")).unwrap();
        assert_eq!(
            members,
            "class_id,instruction_id,binding\n1,1,T=i16\n1,2,T=i32\n"
        );

        let row = |sql: &str| {
            db.conn()
                .query_row(sql, [], |r| r.get::<_, String>(0))
                .unwrap()
        };
        assert_eq!(
            row("SELECT typeof(predicate) || typeof(phase) || typeof(solver_ms) FROM rules WHERE id = 1"),
            "nullnullreal"
        );
        assert_eq!(
            row("SELECT quote(predicate) || quote(rhs) || typeof(phase) FROM rules WHERE id = 2"),
            "''''integer"
        );
        assert_eq!(
            row("SELECT counterexample FROM rules WHERE id = 2"),
            "a=0x7f,\r\nb=\"1\""
        );
        assert_eq!(row("SELECT name FROM rules WHERE id = 7"), "ünïcødé ✓");
        assert!(fs::read_to_string(csv_path(&a, "verification_runs"))
            .unwrap()
            .ends_with(",2,1,1,1e-7\n"));
        assert!(fs::read_to_string(csv_path(&a, "synthesis_runs"))
            .unwrap()
            .ends_with(",4,123456789.125\n"));
    }

    #[test]
    fn malformed_csv_names_file_line_column_and_changes_nothing() {
        let (_tmp_good, good) = scratch_dir();
        populated().export_tables(&good, COMMITTED_TABLES).unwrap();
        let mut db = catalogue();
        db.import_tables(&good, COMMITTED_TABLES).unwrap();
        let file = |t: &str| csv_path(&good, t).display().to_string();
        let cases: Vec<(&str, &str, &str, String)> = vec![
            (
                "rules",
                ",simplify,,,",
                ",simplify,,",
                format!("{}: line 2: expected 16 fields, found 15", file("rules")),
            ),
            (
                "rules",
                "id,name",
                "id,nam",
                format!(
                    "{}: line 1: unknown column 'nam' (table 'rules' has id, name, lhs,",
                    file("rules")
                ),
            ),
            (
                "rules",
                ",lower,3,",
                ",lower,three,",
                format!(
                    "{}: line 3: column 'phase': expected an integer, found \"three\"",
                    file("rules")
                ),
            ),
            (
                "rules",
                ",12.5,",
                ",12.5.1,",
                format!(
                    "{}: line 2: column 'solver_ms': expected a number, found \"12.5.1\"",
                    file("rules")
                ),
            ),
            (
                "rules",
                ",proven,",
                ",maybe,",
                format!(
                    "{}: line 2: CHECK constraint failed: status IN",
                    file("rules")
                ),
            ),
            (
                "rules",
                "\n7,",
                "\n1,",
                format!(
                    "{}: line 6: UNIQUE constraint failed: rules.id",
                    file("rules")
                ),
            ),
            (
                "class_members",
                "\n1,2,",
                "\n9,2,",
                format!(
                    "{}: line 3: column 'class_id': no 'classes' row with key 9",
                    file("class_members")
                ),
            ),
            (
                "class_members",
                "\n1,2,",
                "\n1,5,",
                format!(
                    "{}: line 3: column 'instruction_id': no 'instructions' row with key 5",
                    file("class_members")
                ),
            ),
            (
                "validation_results",
                "1000",
                "\"1000\"x",
                format!(
                    "{}: line 2: field 4: unexpected 'x' after the field",
                    file("validation_results")
                ),
            ),
        ];
        for (table, from, to, want) in cases {
            let (_tmp_dir, dir) = scratch_dir();
            fs::create_dir_all(&dir).unwrap();
            for (t, text) in read_all(&good) {
                let text = if t == table {
                    text.replacen(from, to, 1)
                } else {
                    text
                };
                fs::write(csv_path(&dir, &t), text).unwrap();
            }
            let got = db
                .import_tables(&dir, COMMITTED_TABLES)
                .expect_err(&want)
                .to_string();
            let want = want.replace(&good.display().to_string(), &dir.display().to_string());
            assert!(
                got.starts_with(&want) && !got.contains('\n'),
                "got  {got}\nwant {want}"
            );
            let (_tmp_after, after) = scratch_dir();
            db.export_tables(&after, COMMITTED_TABLES).unwrap();
            assert_eq!(
                read_all(&after),
                read_all(&good),
                "database changed after: {want}"
            );
        }
    }

    /// Writes `classes.csv` and imports it; the import's error.
    fn import_classes(db: &mut Database, dir: &Path, text: &str) -> String {
        fs::write(csv_path(dir, "classes"), text).unwrap();
        db.import_tables(dir, &["classes"])
            .expect_err(text)
            .to_string()
    }

    #[test]
    fn removing_a_parent_of_unimported_rows_fails() {
        let (_tmp_dir, dir) = scratch_dir();
        let mut db = populated();
        db.export_tables(&dir, &["classes"]).unwrap();
        let err = import_classes(&mut db, &dir, "id,name,description\n2,empty,\"\"\n");
        let want = format!(
            "{}: 'class_members' row 1 refers by 'class_id' to a 'classes' row with key 1, which is missing",
            csv_path(&dir, "classes").display()
        );
        assert_eq!(err, want);
        assert_eq!(db.stats().unwrap().classes, 2);
        // Columns missing from the header take their defaults (none here, so NOT NULL fails).
        let err = import_classes(&mut db, &dir, "id,name\n1,add2\n2,empty\n");
        assert!(
            err.ends_with("line 2: NOT NULL constraint failed: classes.description"),
            "{err}"
        );
        let err = import_classes(
            &mut db,
            &dir,
            "name,id,description\nadd2,1,\"\"\nempty,2,\n",
        );
        assert!(
            err.ends_with("line 3: NOT NULL constraint failed: classes.description"),
            "{err}"
        );
        // Same keys again, in any column order: children keep their parents, so it goes through.
        fs::write(
            csv_path(&dir, "classes"),
            "name,id,description\nadd2,1,\"\"\nempty,2,x\n",
        )
        .unwrap();
        db.import_tables(&dir, &["classes"]).unwrap();
        assert_eq!(
            db.conn()
                .query_row("SELECT name FROM classes WHERE id = 1", [], |r| r
                    .get::<_, String>(0))
                .unwrap(),
            "add2"
        );
    }

    #[test]
    fn missing_file_and_unknown_table() {
        let (_tmp_dir, dir) = scratch_dir();
        fs::create_dir_all(&dir).unwrap();
        let mut db = catalogue();
        let err = db.import_tables(&dir, &["rules"]).err().unwrap();
        assert!(
            matches!(err, Error::Io { .. }) && err.to_string().contains("rules.csv"),
            "{err}"
        );
        let err = db.export_tables(&dir, &["nope"]).err().unwrap().to_string();
        assert!(
            err.ends_with("nope.csv: no table 'nope' in the database"),
            "{err}"
        );
        fs::write(csv_path(&dir, "rules"), "").unwrap();
        let err = db
            .import_tables(&dir, &["rules"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.ends_with("rules.csv: line 1: empty file, expected a header row"),
            "{err}"
        );
    }
}
