//! The `./dev` script behind README's two commands, run against stand-ins for dpkg-query,
//! apt-get, sudo and cargo placed first on PATH: it installs exactly the missing packages,
//! visibly, then runs cargo; with everything present it installs nothing and says so.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

const RUN: &[&str] = &["libz3-dev", "g++"];
const TEST: &[&str] = &[
    "qemu-user",
    "clang-14",
    "lld-14",
    "gcc-aarch64-linux-gnu",
    "libc6-dev-arm64-cross",
];

/// A directory of stand-in tools: dpkg-query answers from `installed`, apt-get "installs" into
/// it, and every call is appended to `log`.
fn stand_ins(installed: &[&str]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("installed"), installed.join("\n") + "\n").unwrap();
    let tools = [
        (
            "dpkg-query",
            format!(
                "for a; do p=$a; done\ngrep -qx -- \"$p\" {d}/installed && printf installed || exit 1\n"
            ),
        ),
        (
            "apt-get",
            format!(
                "echo \"apt-get $*\" >> {d}/log\nif [ \"$1\" = install ]; then for a; do case $a in -*|install) ;; *) echo \"$a\" >> {d}/installed;; esac; done; fi\n"
            ),
        ),
        ("sudo", "exec \"$@\"\n".to_string()),
        (
            "cargo",
            format!("echo \"cargo $* ISADB_REQUIRE_TOOLS=$ISADB_REQUIRE_TOOLS\" >> {d}/log\n"),
        ),
    ];
    for (name, body) in tools {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn dev(tools: &Path, args: &[&str]) -> Output {
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap());
    Command::new("bash")
        .arg(common::root().join("dev"))
        .args(args)
        .env("PATH", path)
        .env_remove("ISADB_REQUIRE_TOOLS")
        .output()
        .unwrap()
}

fn log(tools: &Path) -> Vec<String> {
    std::fs::read_to_string(tools.join("log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn missing_lists_what_each_command_would_install() {
    let tools = stand_ins(&["g++", "lld-14"]);
    let out = dev(tools.path(), &["missing", "test"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "libz3-dev\nqemu-user\nclang-14\ngcc-aarch64-linux-gnu\nlibc6-dev-arm64-cross\n"
    );
    assert_eq!(
        text(&dev(tools.path(), &["missing", "run"]).stdout),
        "libz3-dev\n"
    );
    let all: Vec<&str> = RUN.iter().chain(TEST).copied().collect();
    let tools = stand_ins(&all);
    assert_eq!(
        text(&dev(tools.path(), &["missing"]).stdout),
        "nothing missing\n"
    );
    assert!(log(tools.path()).is_empty(), "missing installs nothing");
}

#[test]
fn the_two_commands_install_only_what_is_missing_then_run_cargo() {
    let tools = stand_ins(&["g++", "qemu-user"]);
    let out = dev(tools.path(), &["test", "--test", "cli"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(
        "dev: installing libz3-dev clang-14 lld-14 gcc-aarch64-linux-gnu libc6-dev-arm64-cross (apt-get)"
    ));
    assert_eq!(
        log(tools.path()),
        [
            "apt-get update",
            "apt-get install -y --no-install-recommends libz3-dev clang-14 lld-14 gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
            "cargo test --release --test cli ISADB_REQUIRE_TOOLS=1",
        ]
    );
    // Now everything is there: nothing is installed, and the script says so.
    std::fs::remove_file(tools.path().join("log")).unwrap();
    let out = dev(tools.path(), &["run", "query", "dot-product on hvx"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).starts_with("dev: nothing to install; present: libz3-dev g++"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        log(tools.path()),
        ["cargo run --release -- query dot-product on hvx ISADB_REQUIRE_TOOLS="]
    );
}

#[test]
fn an_unknown_command_prints_the_usage() {
    let tools = stand_ins(&[]);
    let out = dev(tools.path(), &["bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("./dev missing [run|test]"));
    assert!(log(tools.path()).is_empty());
}
