//! Finding the project home the way git finds a repository: `--home`, else `ISADB_HOME`, else
//! the nearest directory upwards from the working directory that holds `specs/` and `rules.db/`,
//! else the shipped default: the specs, schemas, queries and committed CSV tables embedded in the
//! binary at build time (`build.rs`), unpacked on first use into the user's cache directory
//! (`$XDG_CACHE_HOME/isadb`, else `~/.cache/isadb`), where its SQLite file is then built.
//!
//! The unpacked copy is a complete home: commands that write into the project (`db export`,
//! `verify-rules`, `validate`) write into it, and say so, since it is replaced when the
//! shipped data changes.

use super::Project;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// How the home was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// `--home DIR`.
    Flag,
    /// `ISADB_HOME`.
    Environment,
    /// The nearest directory upwards from the working directory holding `specs/` and `rules.db/`.
    Checkout,
    /// The default shipped in the binary, unpacked into the cache directory.
    Embedded,
}

/// The project directory in use and how it was found.
#[derive(Debug, Clone, Serialize)]
pub struct Home {
    /// The project directory.
    pub dir: PathBuf,
    /// How it was found.
    pub source: Source,
}

impl Home {
    /// Finds the home: `flag`, else `ISADB_HOME`, else upwards from the working directory, else
    /// the embedded default.
    pub fn find(flag: Option<PathBuf>) -> Result<Home> {
        if let Some(dir) = flag {
            return Home::named(dir, Source::Flag, "--home");
        }
        if let Some(dir) = std::env::var_os("ISADB_HOME").filter(|v| !v.is_empty()) {
            return Home::named(PathBuf::from(dir), Source::Environment, "ISADB_HOME");
        }
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        if let Some(dir) = cwd.ancestors().find(|d| is_project(d)) {
            return Ok(Home {
                dir: dir.to_path_buf(),
                source: Source::Checkout,
            });
        }
        Ok(Home {
            dir: unpack_default(&cache_dir()?)?,
            source: Source::Embedded,
        })
    }

    /// A home named explicitly must be a project directory.
    fn named(dir: PathBuf, source: Source, how: &str) -> Result<Home> {
        if !dir.join("specs").is_dir() {
            return Err(Error::Usage(format!(
                "{how} {}: not an isadb project (no specs/ directory there)",
                dir.display()
            )));
        }
        Ok(Home { dir, source })
    }

    /// The project in this home.
    pub fn project(&self) -> Project {
        Project::at(&self.dir)
    }

    /// One line saying which home is in use and why.
    pub fn describe(&self) -> String {
        let why = match self.source {
            Source::Flag => "from --home",
            Source::Environment => "from ISADB_HOME",
            Source::Checkout => "the checkout holding the working directory",
            Source::Embedded => "the default shipped in this binary, unpacked into the cache",
        };
        format!("{} ({why})", self.dir.display())
    }

    /// For commands that write into the project: a note when the writes land in the unpacked
    /// copy of the shipped default rather than in a project of the user's.
    pub fn write_note(&self) -> Option<String> {
        (self.source == Source::Embedded).then(|| {
            format!(
                "wrote into the cache copy of the shipped default, {}; it is replaced when isadb's shipped data changes (run inside a checkout or pass --home DIR to keep results in a project)",
                self.dir.display()
            )
        })
    }
}

/// Whether `dir` holds a project: `specs/` and `rules.db/`.
pub fn is_project(dir: &Path) -> bool {
    dir.join("specs").is_dir() && dir.join("rules.db").is_dir()
}

/// `$XDG_CACHE_HOME/isadb`, else `~/.cache/isadb` (relative XDG paths are ignored, as the
/// XDG base directory specification says).
pub fn cache_dir() -> Result<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(xdg) = absolute("XDG_CACHE_HOME") {
        return Ok(xdg.join("isadb"));
    }
    match absolute("HOME") {
        Some(home) => Ok(home.join(".cache").join("isadb")),
        None => Err(Error::Usage(
            "no project found upwards from the working directory, and neither XDG_CACHE_HOME nor HOME is set to unpack the shipped default into; pass --home DIR".into(),
        )),
    }
}

/// Unpacks the embedded default into `cache/default-DIGEST` unless it is there already, and
/// returns that directory. Files are written into a private directory renamed into place, so
/// concurrent first runs never see half a copy.
pub fn unpack_default(cache: &Path) -> Result<PathBuf> {
    let dir = cache.join(format!("default-{}", embedded::DIGEST));
    let marker = dir.join(".unpacked");
    if marker.exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(cache).map_err(|e| Error::io(cache, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(cache)
        .map_err(|e| Error::io(cache, e))?;
    for (rel, body) in embedded::FILES {
        let path = staging.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, body).map_err(|e| Error::io(&path, e))?;
    }
    std::fs::create_dir_all(staging.path().join("rules.db"))
        .map_err(|e| Error::io(staging.path(), e))?;
    std::fs::write(staging.path().join(".unpacked"), embedded::DIGEST)
        .map_err(|e| Error::io(staging.path(), e))?;
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, &dir) {
        let _ = std::fs::remove_dir_all(&staged);
        // Another process unpacked the same default first.
        if !marker.exists() {
            return Err(Error::io(&dir, e));
        }
    } else {
        crate::error::note(&format!(
            "isadb: unpacked the shipped default project into {}",
            dir.display()
        ));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_default_is_a_project_with_every_committed_table() {
        let cache = tempfile::tempdir().unwrap();
        let dir = unpack_default(cache.path()).unwrap();
        assert!(is_project(&dir));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut compared = 0;
        for entry in std::fs::read_dir(root.join("rules.db")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "csv") {
                let rel = path.strip_prefix(root).unwrap();
                assert_eq!(
                    std::fs::read(dir.join(rel)).unwrap(),
                    std::fs::read(&path).unwrap(),
                    "{}",
                    rel.display()
                );
                compared += 1;
            }
        }
        assert!(compared >= 5, "{compared} committed tables");
        for rel in [
            "specs/prelude.spec",
            "queries/relations.dl",
            "schemas/0001_core.sql",
        ] {
            assert_eq!(
                std::fs::read(dir.join(rel)).unwrap(),
                std::fs::read(root.join(rel)).unwrap(),
                "{rel}"
            );
        }
        assert!(!dir.join("rules.db/isadb.sqlite").exists());
        // A second call reuses the copy.
        assert_eq!(unpack_default(cache.path()).unwrap(), dir);
        let entries = std::fs::read_dir(cache.path()).unwrap().count();
        assert_eq!(entries, 1, "no staging directory is left behind");
    }
}
