//! A project: where its inputs and its database live ([`Project`], found like git finds a
//! repository by [`home`]), and its database, opened after a rebuild when it is missing or
//! stale. A build calls the steps in order, each in the module that owns its table: the spec
//! rows ([`Database::insert_specs`]), the committed CSV tables, the hand-written rules
//! ([`crate::rules::sync_rules`]), the idiom facts ([`crate::idioms::refresh`]) and the
//! cross-ISA classes ([`crate::classes::refresh`]).

pub mod home;

use crate::database::{Database, COMMITTED_TABLES, NEWER_SCHEMA, SCHEMA_VERSION};
use crate::error::{Error, Result};
use crate::rules::verify;
use crate::spec::load::spec_files;
use crate::spec::{hash_text, load_dir, SpecSet};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use home::Home;

/// Committed tables that every build computes again from the others (the classes, from the
/// instructions and the cached similarity verdicts): written to `rules.db/` for review, never
/// read back, so their instruction ids cannot go stale.
const REBUILT_TABLES: &[&str] = &["classes", "class_members"];

/// Where a project keeps its inputs and its database.
#[derive(Debug, Clone)]
pub struct Project {
    /// The home directory holding everything below.
    pub home: PathBuf,
    /// `specs/`: the ISA specs, idioms and hand-written rules.
    pub specs: PathBuf,
    /// `rules.db/`: the committed CSV tables.
    pub tables: PathBuf,
    /// `rules.db/isadb.sqlite`: the database built from them.
    pub db: PathBuf,
    /// `queries/`: the named queries.
    pub queries: PathBuf,
}

/// Whether a build matches idioms again for instructions or idioms that changed (z3 proofs,
/// slow: `db build`), or only reuses the committed matches (automatic rebuilds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// Match what changed and write the matches back to the committed tables.
    Rematch,
    /// Use the committed matches as they are.
    Reuse,
    /// Match what changed, and the pairs z3 left unknown, again (`db build --retry-unknown`).
    RetryUnknown,
}

/// What `db build` built.
#[derive(Debug, Clone, Serialize)]
pub struct Built {
    /// Instructions, families and idioms in the specs.
    pub instructions: usize,
    pub families: usize,
    pub idioms: usize,
    /// Wall time of the build.
    pub ms: f64,
    /// The database file.
    pub path: String,
}

impl Project {
    /// The project whose home directory is `home`.
    pub fn at(home: &Path) -> Project {
        Project {
            home: home.to_path_buf(),
            specs: home.join("specs"),
            tables: home.join("rules.db"),
            db: home.join("rules.db").join("isadb.sqlite"),
            queries: home.join("queries"),
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

    /// Hash of everything the database is built from: schema version, spec files, CSV tables
    /// (named below the home, so a copied or moved project is not stale).
    pub fn input_hash(&self) -> Result<String> {
        let mut text = format!("schema {SCHEMA_VERSION}\n");
        for f in self.input_files()? {
            let body = std::fs::read(&f).map_err(|e| Error::io(&f, e))?;
            text.push_str(&format!(
                "{} {}\n",
                f.strip_prefix(&self.home).unwrap_or(&f).display(),
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

    /// Opens the database, rebuilding it first when it is missing or stale, and removes the
    /// files of builds killed before they finished. Unchanged file
    /// stamps skip hashing the inputs' contents; changed stamps with unchanged contents (a
    /// fresh checkout) only refresh the stamp.
    pub fn open(&self) -> Result<Database> {
        // Optional here (a read-only rules.db/ keeps them); every build removes them too.
        let _ = self.remove_dead_builds();
        let stamp = self.input_stamp()?;
        let opened = self
            .db
            .exists()
            .then(|| Database::open(&self.db).and_then(|db| self.check_intact(db)));
        // A database a newer isadb wrote is refused, not replaced by an older schema.
        if let Some(Err(e)) = opened {
            if e.to_string().contains(NEWER_SCHEMA) {
                return Err(e);
            }
            crate::error::note(&format!(
                "isadb: {e}; rebuilding it from specs/ and rules.db/*.csv"
            ));
            return self.build(&load_dir(&self.specs)?, Matching::Reuse);
        }
        if let Some(Ok(db)) = opened {
            if db.meta("input_stamp").ok().flatten().as_deref() == Some(stamp.as_str()) {
                return Ok(db);
            }
            let hash = self.input_hash()?;
            if db.meta("input_hash").ok().flatten().as_deref() == Some(hash.as_str()) {
                if !db.is_read_only() {
                    db.set_meta("input_stamp", &stamp)?;
                }
                return Ok(db);
            }
            if db.is_read_only() {
                crate::error::note(&format!(
                    "isadb: {} is read-only and older than specs/ and rules.db/*.csv: answering from it as it is",
                    self.db.display()
                ));
                return Ok(db);
            }
        }
        self.build(&load_dir(&self.specs)?, Matching::Reuse)
    }

    /// The database when `PRAGMA quick_check` finds it intact ([`Database::check_intact`]).
    /// The check (about 15 ms) runs once per change of the file: its size and modification
    /// time after a passed check are kept in `isadb.sqlite-checked`, and an unchanged file is
    /// not checked again (a read-only directory only means checking every time).
    fn check_intact(&self, db: Database) -> Result<Database> {
        let marker = PathBuf::from(format!("{}-checked", self.db.display()));
        let stamp = |path: &Path| -> Option<String> {
            let m = std::fs::metadata(path).ok()?;
            let mtime = m
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Some(format!("{} {}", m.len(), mtime.as_nanos()))
        };
        let now = stamp(&self.db);
        if now.is_some() && std::fs::read_to_string(&marker).ok() == now {
            return Ok(db);
        }
        db.check_intact()?;
        if let Some(now) = now {
            let _ = std::fs::write(&marker, now);
        }
        Ok(db)
    }

    /// `db build`: rebuilds the database from the specs and the committed tables, matching
    /// idioms again where they changed.
    pub fn rebuild(&self, retry_unknown: bool) -> Result<Built> {
        let start = Instant::now();
        let specs = load_dir(&self.specs)?;
        let matching = match retry_unknown {
            true => Matching::RetryUnknown,
            false => Matching::Rematch,
        };
        self.build(&specs, matching)?;
        Ok(Built {
            instructions: specs.instructions.len(),
            families: specs.families.len(),
            idioms: specs.idioms.len(),
            ms: start.elapsed().as_secs_f64() * 1000.0,
            path: self.db.display().to_string(),
        })
    }

    /// Builds a fresh database into a temporary file and renames it into place, so a failed
    /// build leaves the previous database untouched. Stale idiom matches are recomputed (with
    /// [`Matching::Rematch`]) and written back to the committed tables first, so the stored
    /// input hash covers them.
    pub fn build(&self, specs: &SpecSet, matching: Matching) -> Result<Database> {
        // A private name: concurrent builds (several commands at once) must not share it.
        let tmp = self
            .db
            .with_extension(format!("sqlite.building-{}", std::process::id()));
        self.remove_dead_builds()?;
        remove_db_files(&tmp)?;
        let mut db = Database::open(&tmp)?;
        let result = self.build_steps(&mut db, specs, matching);
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

    /// Removes the `isadb.sqlite.building-PID` files (and their WAL and shared memory) of
    /// builds whose process is gone (killed during a build); a running build's file is kept.
    /// Without `/proc` no process can be told dead, and nothing is removed.
    fn remove_dead_builds(&self) -> Result<()> {
        let Some(dir) = self.db.parent() else {
            return Ok(());
        };
        if !Path::new("/proc/self").exists() {
            return Ok(());
        }
        let prefix = format!(
            "{}.building-",
            self.db.file_name().unwrap_or_default().to_string_lossy()
        );
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let name = entry.map_err(|e| Error::io(dir, e))?.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
                continue;
            };
            if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                remove_db_files(&dir.join(name))?;
            }
        }
        Ok(())
    }

    /// The build steps, in order, on a fresh database.
    fn build_steps(&self, db: &mut Database, specs: &SpecSet, matching: Matching) -> Result<()> {
        db.insert_specs(specs)?;
        db.import_tables(&self.tables, &self.committed_tables_present())?;
        crate::rules::sync_rules(db, &self.specs, &specs.macros)?;
        let rematch = matching != Matching::Reuse;
        crate::idioms::refresh(db, specs, rematch, matching == Matching::RetryUnknown)?;
        crate::classes::refresh(db, specs)?;
        if rematch {
            db.export_tables(
                &self.tables,
                &["idiom_matches", "idiom_catalogue", "similarity_checks"],
            )?;
            db.export_tables(&self.tables, REBUILT_TABLES)?;
        }
        db.set_meta("input_hash", &self.input_hash()?)?;
        db.set_meta("input_stamp", &self.input_stamp()?)?;
        // Fold the WAL into the file so the renamed database is complete on its own.
        db.conn()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// The committed tables that have a CSV file in `rules.db/`.
    pub fn committed_tables_present(&self) -> Vec<&'static str> {
        self.tables_present(&self.tables)
    }

    /// The committed tables that have a CSV file in `dir`, except those every build rebuilds.
    pub fn tables_present(&self, dir: &Path) -> Vec<&'static str> {
        COMMITTED_TABLES
            .iter()
            .copied()
            .filter(|t| !REBUILT_TABLES.contains(t) && dir.join(format!("{t}.csv")).exists())
            .collect()
    }

    /// `db export`: writes every committed table as CSV into `dir`; returns how many.
    pub fn export(&self, dir: &Path) -> Result<usize> {
        self.open()?.export_tables(dir, COMMITTED_TABLES)?;
        Ok(COMMITTED_TABLES.len())
    }

    /// `verify-rules`: proves the hand-written and synthesized rules ([`crate::rules::verify`]), records the
    /// verdicts and writes the `rules` and `verification_runs` tables back to `rules.db/`.
    pub fn verify_rules(&self, options: &verify::Options) -> Result<verify::Report> {
        let mut db = self.open()?;
        let report = verify::verify(&mut db, &self.specs, options)?;
        db.export_tables(&self.tables, &["rules", "verification_runs"])?;
        Ok(report)
    }

    /// `db import`: loads the committed tables that have a CSV file in `dir`; returns how many.
    pub fn import(&self, dir: &Path) -> Result<usize> {
        let present = self.tables_to_import(dir)?;
        self.open()?.import_tables(dir, &present)?;
        Ok(present.len())
    }

    /// The committed tables that have a CSV file in `dir`: an error when `dir` is missing or
    /// holds none of them.
    pub fn tables_to_import(&self, dir: &Path) -> Result<Vec<&'static str>> {
        if !dir.is_dir() {
            return Err(Error::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
            ));
        }
        let present = self.tables_present(dir);
        if present.is_empty() {
            return Err(Error::data(
                dir.display().to_string(),
                format!(
                    "no table to import: none of {} is there",
                    COMMITTED_TABLES
                        .iter()
                        .map(|t| format!("{t}.csv"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(present)
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
