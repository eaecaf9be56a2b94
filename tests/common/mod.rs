//! Helpers shared by the integration tests: private copies of the project's inputs, so tests
//! never touch the checkout's database, and running the real binary. Scratch directories are
//! `tempfile` guards: removed when the test ends, pass or fail.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let p = entry.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// An empty scratch directory (with `rules.db/`), removed when the guard drops.
pub fn scratch(name: &str) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("isadb-test-{name}-"))
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("rules.db")).unwrap();
    dir
}

/// A scratch copy of `specs/`, `queries/` and the committed CSV tables.
pub fn project_copy(name: &str) -> TempDir {
    let guard = scratch(name);
    let dir = guard.path();
    copy_dir(&root().join("specs"), &dir.join("specs"));
    copy_dir(&root().join("queries"), &dir.join("queries"));
    for entry in std::fs::read_dir(root().join("rules.db")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|x| x == "csv") {
            std::fs::copy(&p, dir.join("rules.db").join(p.file_name().unwrap())).unwrap();
        }
    }
    guard
}

/// Runs the isadb binary on a project directory.
pub fn isadb(home: impl AsRef<Path>, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isadb"))
        .arg("--home")
        .arg(home.as_ref())
        .args(args)
        .output()
        .unwrap()
}

/// Whether the C toolchain of `target` is here; a missing one is a skip, or with
/// ISADB_REQUIRE_TOOLS=1 (the tools were just installed) a failure.
pub fn tools(target: isadb::Toolchain) -> bool {
    match isadb::testing::check_tools(target) {
        Ok(()) => true,
        Err(e) if std::env::var("ISADB_REQUIRE_TOOLS").as_deref() != Ok("1") => {
            eprintln!("skipping: {e}");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

/// The JSON a command printed (panics with its output if it is not JSON).
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The intrinsics of a `compile` or `port` report's steps, in order.
pub fn selected(report: &serde_json::Value) -> Vec<String> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["call"]
                .as_str()
                .unwrap()
                .split('(')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}
