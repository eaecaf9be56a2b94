//! Embeds the shipped default project in the binary: writes `$OUT_DIR/embedded.rs`, the list of
//! every file of `specs/`, `schemas/`, `queries/` and the committed CSV tables of `rules.db/`
//! as `include_bytes!`, and a digest of their paths and contents (the name of the copy that
//! `src/home.rs` unpacks into the user's cache). It installs nothing and runs no tool.

use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = Vec::new();
    for dir in ["specs", "schemas", "queries"] {
        // A directory is watched as a whole: any file added, removed or changed below it.
        println!("cargo:rerun-if-changed={dir}");
        walk(&root, &root.join(dir), &mut files);
    }
    // rules.db/ also holds the git-ignored SQLite file, rewritten by every database rebuild, so
    // only its CSV files are watched (a new committed table comes with a change to this list).
    let tables = root.join("rules.db");
    if let Ok(entries) = std::fs::read_dir(&tables) {
        for entry in entries {
            let path = entry.expect("readable rules.db/").path();
            if path.extension().is_some_and(|e| e == "csv") {
                println!("cargo:rerun-if-changed={}", path.display());
                files.push(relative(&root, &path));
            }
        }
    }
    files.sort();

    let mut digest = Sha256::new();
    let mut list = String::from(
        "/// Every file of the shipped default: (path relative to the home, contents).\n",
    );
    list.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for rel in &files {
        let abs = root.join(rel);
        let body = std::fs::read(&abs).unwrap_or_else(|e| panic!("{}: {e}", abs.display()));
        digest.update(rel.as_bytes());
        digest.update([0]);
        digest.update((body.len() as u64).to_le_bytes());
        digest.update(&body);
        writeln!(
            list,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        )
        .expect("string write");
    }
    list.push_str("];\n");
    let hex: String = digest.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    writeln!(
        list,
        "/// A digest of the paths and contents of [`FILES`].\npub const DIGEST: &str = \"{hex}\";"
    )
    .expect("string write");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("embedded.rs");
    std::fs::write(&out, list).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// Every file below `dir`, as paths relative to `root` with `/` separators.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("readable directory").path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            out.push(relative(root, &path));
        }
    }
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).expect("below the root");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
