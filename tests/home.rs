//! Finding the project home: a copy of the binary run outside any checkout answers from the
//! default embedded in it (unpacked into a private XDG_CACHE_HOME), run inside a checkout uses
//! that checkout; ISADB_HOME and --home come first.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

/// A copy of the binary in a directory of its own, outside any checkout.
fn copied_binary() -> (TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("isadb-test-bin-")
        .tempdir()
        .unwrap();
    let exe = dir.path().join("isadb");
    std::fs::copy(env!("CARGO_BIN_EXE_isadb"), &exe).unwrap();
    (dir, exe)
}

/// Runs `exe` in `cwd` with only the home-related variables this test sets: the cache in
/// `cache` and HOME pointing there too, so nothing can reach the user's own cache.
fn run(exe: &Path, cwd: &Path, cache: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.current_dir(cwd)
        .env_remove("ISADB_HOME")
        .env("XDG_CACHE_HOME", cache)
        .env("HOME", cache)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A process another test thread forks while the copy's file was open for writing holds
    // that descriptor until it execs: running the fresh copy then fails with ETXTBSY for a
    // moment. Wait that moment out.
    for _ in 0..50 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
    cmd.output().unwrap()
}

fn json(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn names(rows: &Value) -> Vec<String> {
    let mut v: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["instruction"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_copied_binary_outside_a_checkout_answers_from_the_embedded_default() {
    let (bin, exe) = copied_binary();
    let cache = tempfile::tempdir().unwrap();
    let query = ["--json", "query", "dot-product on hvx"];
    let out = run(&exe, bin.path(), cache.path(), &[], &query);
    let embedded = json(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unpacked the shipped default"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same answer as the checkout the binary was built from.
    let checkout = run(&exe, common::root(), cache.path(), &[], &query);
    assert_eq!(names(&embedded), names(&json(&checkout)));
    assert!(names(&embedded).contains(&"Q6_Vw_vrmpy_VbVb".to_string()));

    let stats = json(&run(
        &exe,
        bin.path(),
        cache.path(),
        &[],
        &["--json", "db", "stats"],
    ));
    assert_eq!(stats["home"]["source"], "embedded");
    let dir = Path::new(stats["home"]["dir"].as_str().unwrap());
    assert!(dir.starts_with(cache.path().join("isadb")), "{dir:?}");
    assert!(dir.join("rules.db/isadb.sqlite").exists());
    assert!(dir.join("specs/prelude.spec").exists());
    let text = run(&exe, bin.path(), cache.path(), &[], &["db", "stats"]);
    assert!(String::from_utf8_lossy(&text.stdout).starts_with(&format!(
        "home: {} (the default shipped in this binary",
        dir.display()
    )));

    // Writing into the project writes into the cache copy, and says so.
    let out = run(&exe, bin.path(), cache.path(), &[], &["db", "export"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cache copy of the shipped default"));
    assert!(dir.join("rules.db/rules.csv").exists());
    // Without XDG_CACHE_HOME the cache is ~/.cache/isadb.
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(&exe)
        .current_dir(bin.path())
        .env_remove("ISADB_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env("HOME", home.path())
        .args(["--json", "db", "stats"])
        .output()
        .unwrap();
    let dir = json(&out)["home"]["dir"].as_str().unwrap().to_string();
    assert!(
        Path::new(&dir).starts_with(home.path().join(".cache/isadb")),
        "{dir}"
    );
    // Nothing but the copied binary was written beside it.
    assert_eq!(std::fs::read_dir(bin.path()).unwrap().count(), 1);
}

#[test]
fn inside_a_checkout_the_binary_uses_that_checkout() {
    let (_bin, exe) = copied_binary();
    let cache = tempfile::tempdir().unwrap();
    let project = common::project_copy("home-checkout");
    // A checkout found upwards from a subdirectory.
    let cwd = project.path().join("specs/x86");
    let stats = json(&run(
        &exe,
        &cwd,
        cache.path(),
        &[],
        &["--json", "db", "stats"],
    ));
    assert_eq!(stats["home"]["source"], "checkout");
    assert_eq!(
        Path::new(stats["home"]["dir"].as_str().unwrap()),
        project.path()
    );
    assert!(project.path().join("rules.db/isadb.sqlite").exists());
    assert_eq!(
        std::fs::read_dir(cache.path()).unwrap().count(),
        0,
        "the embedded default is not unpacked"
    );
    // The checkout's own specs are used: an instruction removed there is gone.
    let show = ["show", "_mm256_madd_epi16"];
    assert!(run(&exe, &cwd, cache.path(), &[], &show).status.success());
    std::fs::remove_file(project.path().join("specs/x86/mul.spec")).unwrap();
    let out = run(&exe, &cwd, cache.path(), &[], &show);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown instruction"));

    // ISADB_HOME comes before the working directory, --home before ISADB_HOME.
    let other = common::project_copy("home-env");
    let env = [("ISADB_HOME", other.path())];
    let stats = json(&run(
        &exe,
        &cwd,
        cache.path(),
        &env,
        &["--json", "db", "stats"],
    ));
    assert_eq!(stats["home"]["source"], "environment");
    assert_eq!(
        Path::new(stats["home"]["dir"].as_str().unwrap()),
        other.path()
    );
    let flag = project.path().to_str().unwrap();
    let stats = json(&run(
        &exe,
        &cwd,
        cache.path(),
        &env,
        &["--json", "--home", flag, "db", "stats"],
    ));
    assert_eq!(stats["home"]["source"], "flag");
    // A named home that is not a project is a usage error.
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        &exe,
        &cwd,
        cache.path(),
        &[("ISADB_HOME", empty.path())],
        &["db", "stats"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ISADB_HOME") && err.contains("not an isadb project"),
        "{err}"
    );
}
