//! Building `rules.db/isadb.sqlite` from `specs/` and the committed CSV tables, and deciding when
//! an existing file is stale (the hash of every input is kept in `meta`).

use super::{Database, COMMITTED_TABLES, SCHEMA_VERSION};
use crate::error::{Error, Result};
use crate::spec::load::spec_files;
use crate::spec::{hash_text, load_dir, SpecSet};
use rusqlite::{params, Transaction};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where a project keeps its inputs and its database.
#[derive(Debug, Clone)]
pub struct Layout {
    pub specs: PathBuf,
    pub tables: PathBuf,
    pub db: PathBuf,
    pub queries: PathBuf,
    /// Whether a build re-matches idioms for changed instructions (slow: z3 proofs). Automatic
    /// rebuilds before ordinary commands only reuse the committed cache.
    pub match_idioms: bool,
}

impl Layout {
    pub fn at(home: &Path) -> Layout {
        Layout {
            specs: home.join("specs"),
            tables: home.join("rules.db"),
            db: home.join("rules.db").join("isadb.sqlite"),
            queries: home.join("queries"),
            match_idioms: false,
        }
    }

    /// Every input file: the spec files and the committed CSV tables present.
    fn input_files(&self) -> Result<Vec<PathBuf>> {
        let mut files = spec_files(&self.specs)?;
        files.extend(crate::rules::load::rule_files(&self.specs)?);
        files.extend(
            COMMITTED_TABLES
                .iter()
                .map(|t| self.tables.join(format!("{t}.csv")))
                .filter(|p| p.exists()),
        );
        Ok(files)
    }

    /// Hash of everything the database is built from: schema version, spec files, CSV tables.
    pub fn input_hash(&self) -> Result<String> {
        let mut text = format!("schema {SCHEMA_VERSION}\n");
        for f in self.input_files()? {
            let body = std::fs::read(&f).map_err(|e| Error::io(&f, e))?;
            text.push_str(&format!(
                "{} {}\n",
                f.display(),
                hash_text(&String::from_utf8_lossy(&body))
            ));
        }
        Ok(hash_text(&text))
    }

    /// A cheap stand-in for the input hash: every input's path, size and modification time.
    fn input_stamp(&self) -> Result<String> {
        let mut text = format!("schema {SCHEMA_VERSION}\n");
        for f in self.input_files()? {
            let m = std::fs::metadata(&f).map_err(|e| Error::io(&f, e))?;
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            text.push_str(&format!(
                "{} {} {}\n",
                f.display(),
                m.len(),
                mtime.as_nanos()
            ));
        }
        Ok(hash_text(&text))
    }

    /// Opens the database, rebuilding it first when it is missing or stale. Unchanged file
    /// stamps skip hashing the inputs' contents; changed stamps with unchanged contents (a
    /// fresh checkout) only refresh the stamp.
    pub fn open(&self) -> Result<Database> {
        let stamp = self.input_stamp()?;
        if let Some(Ok(db)) = self.db.exists().then(|| Database::open(&self.db)) {
            if db.meta("input_stamp").ok().flatten().as_deref() == Some(stamp.as_str()) {
                return Ok(db);
            }
            let hash = self.input_hash()?;
            if db.meta("input_hash").ok().flatten().as_deref() == Some(hash.as_str()) {
                db.set_meta("input_stamp", &stamp)?;
                return Ok(db);
            }
        }
        self.build(&load_dir(&self.specs)?)
    }

    /// Builds a fresh database into a temporary file and renames it into place, so a failed
    /// build leaves the previous database untouched. Stale idiom matches are recomputed and
    /// written back to the committed cache first, so the stored input hash covers them.
    pub fn build(&self, specs: &SpecSet) -> Result<Database> {
        // A private name: concurrent builds (several commands at once) must not share it.
        let tmp = self
            .db
            .with_extension(format!("sqlite.building-{}", std::process::id()));
        remove_db_files(&tmp)?;
        let mut db = Database::open(&tmp)?;
        let result = db.transaction(|tx| insert_specs(tx, specs)).and_then(|_| {
            let present: Vec<&str> = COMMITTED_TABLES
                .iter()
                .copied()
                .filter(|t| self.tables.join(format!("{t}.csv")).exists())
                .collect();
            db.import_tables(&self.tables, &present)?;
            crate::rules::load::sync_rules(&mut db, &self.specs, &specs.macros)?;
            crate::query::implements::refresh(&mut db, specs, self.match_idioms)?;
            if self.match_idioms {
                db.export_tables(&self.tables, &["idiom_matches", "idiom_catalogue"])?;
            }
            db.set_meta("input_hash", &self.input_hash()?)?;
            db.set_meta("input_stamp", &self.input_stamp()?)?;
            // Fold the WAL into the file so the renamed database is complete on its own.
            db.conn()
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        });
        drop(db);
        if let Err(e) = result {
            remove_db_files(&tmp)?;
            return Err(e);
        }
        // The old file is replaced atomically (readers never see it missing); its WAL and
        // shared-memory files belong to it and must not be replayed onto the new one.
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.db.display()));
        }
        std::fs::rename(&tmp, &self.db).map_err(|e| Error::io(&self.db, e))?;
        Database::open(&self.db)
    }
}

fn remove_db_files(db: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if p.exists() {
            std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
        }
    }
    Ok(())
}

/// Inserts ISAs, features, families, instructions and idioms.
fn insert_specs(tx: &Transaction, specs: &SpecSet) -> Result<()> {
    let mut isa_ids: HashMap<&str, i64> = HashMap::new();
    let mut feature_ids: HashMap<&str, i64> = HashMap::new();
    let mut family_ids: HashMap<(&str, &str), i64> = HashMap::new();
    for fam in &specs.families {
        let isa = *isa_ids.entry(&fam.isa).or_insert_with(|| {
            tx.execute("INSERT INTO isas(name) VALUES (?1)", [&fam.isa])
                .map(|_| tx.last_insert_rowid())
                .unwrap_or(-1)
        });
        tx.execute(
            "INSERT INTO families(isa_id, name, spec_file, spec_line) VALUES (?1, ?2, ?3, ?4)",
            params![isa, fam.name, fam.form.loc.file, fam.form.loc.line as i64],
        )?;
        family_ids.insert((&fam.isa, &fam.name), tx.last_insert_rowid());
    }
    if isa_ids.values().any(|&id| id < 0) {
        return Err(Error::data("isas", "could not insert an ISA"));
    }
    let mut insert = tx.prepare(
        "INSERT INTO instructions(name, intrinsic, asm, isa_id, feature_id, family_id, params, operands,
         result_type, semantics, sem_hash, latency, throughput, cost)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    for ins in &specs.instructions {
        let isa = isa_ids[ins.isa.as_str()];
        let feature = match feature_ids.get(ins.feature.as_str()) {
            Some(&id) => id,
            None => {
                tx.execute(
                    "INSERT INTO features(name, isa_id) VALUES (?1, ?2)",
                    params![ins.feature, isa],
                )
                .map_err(|e| {
                    Error::data(ins.loc.to_string(), format!("feature {}: {e}", ins.feature))
                })?;
                let id = tx.last_insert_rowid();
                feature_ids.insert(&ins.feature, id);
                id
            }
        };
        let operands = serde_json::to_string(&ins.operands)
            .map_err(|e| Error::data("instructions", e.to_string()))?;
        insert
            .execute(params![
                ins.name,
                ins.intrinsic,
                ins.asm,
                isa,
                feature,
                family_ids[&(ins.isa.as_str(), ins.family.as_str())],
                ins.binding_text(),
                operands,
                ins.result.to_string(),
                ins.sem_text,
                ins.sem_hash,
                ins.latency,
                ins.throughput,
                ins.cost
            ])
            .map_err(|e| {
                Error::data(
                    ins.loc.to_string(),
                    format!("instruction {}: {e}", ins.name),
                )
            })?;
    }
    let mut idiom = tx.prepare(
        "INSERT INTO idioms(name, params, template, aliases, spec_file, spec_line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for i in &specs.idioms {
        idiom.execute(params![
            i.name,
            i.params.join(" "),
            i.body.to_string(),
            i.aliases.join("|"),
            i.loc.file,
            i.loc.line as i64
        ])?;
    }
    Ok(())
}
