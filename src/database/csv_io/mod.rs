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
                    import_table(tx, t, &csv_path(dir, &t.name), false)?,
                );
            }
            check_foreign_keys(tx, dir, &lines)
        })
    }

    /// Adds the rows of each `dir/<table>.csv` to the table, in one transaction: a row whose
    /// unique key (a rule's name, a search piece) is already there replaces it, and a row id
    /// column is left for SQLite to assign. Merges the CSV of independent runs (`synth --shard`).
    pub fn merge_tables(&mut self, dir: impl AsRef<Path>, tables: &[&str]) -> Result<()> {
        let dir = dir.as_ref();
        self.transaction(|tx| {
            tx.pragma_update(None, "defer_foreign_keys", true)?;
            let mut lines = HashMap::new();
            for &name in tables {
                let path = csv_path(dir, name);
                let table = Table::load(tx, name, &path.display().to_string())?;
                lines.insert(name.to_string(), import_table(tx, &table, &path, true)?);
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

/// Inserts the rows of one CSV file; returns the CSV line of each inserted rowid. With `merge`,
/// an `id` row key is not read and a row replaces the one it conflicts with.
fn import_table(
    tx: &Transaction,
    table: &Table,
    path: &Path,
    merge: bool,
) -> Result<HashMap<i64, usize>> {
    let source = path.display().to_string();
    let text = crate::error::read_text(path)?;
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
    let generated_id = merge && table.key == ["id"];
    let keep: Vec<bool> = columns
        .iter()
        .map(|c| !(generated_id && c.name == "id"))
        .collect();
    let names: Vec<String> = columns
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| quote(&c.name))
        .collect();
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT {}INTO {} ({}) VALUES ({})",
        if merge { "OR REPLACE " } else { "" },
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
        for ((field, col), _) in rec
            .fields
            .into_iter()
            .zip(&columns)
            .zip(&keep)
            .filter(|(_, k)| **k)
        {
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
mod tests;
