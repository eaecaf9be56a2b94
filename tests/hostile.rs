//! Hostile input (issue 16): a table of command-line probes run on the real binary, each with
//! the exit code README promises and a fragment of its one-line message. No probe may panic
//! (exit 101), abort or hang; the deep and long inputs would overflow the stack without the
//! parsers' limits.

use std::process::{Command, Stdio};

mod common;

/// One probe: arguments, the expected exit code, a fragment of stderr (or of stdout when the
/// code is 0 or 1 and `on_stdout`).
struct Probe {
    args: Vec<String>,
    code: i32,
    fragment: &'static str,
}

fn probe(args: &[&str], code: i32, fragment: &'static str) -> Probe {
    Probe {
        args: args.iter().map(|a| a.to_string()).collect(),
        code,
        fragment,
    }
}

fn nested(open: &str, inner: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), ")".repeat(n))
}

#[test]
fn probes_exit_with_the_documented_code_and_one_line() {
    let home = common::project_copy("hostile");
    let sum = vec!["a_u8"; 6000].join(" + ");
    let not7000 = nested("(not ", "a_u8", 7000);
    let paren20000 = nested("(", "a_u8", 20000);
    let long_name = "x".repeat(120_000);
    let probes = vec![
        // 1. No vacuous check, lanes and vector sizes bounded before any allocation.
        probe(
            &[
                "prove",
                "(add a_u8 b_u8)",
                "(sub a_u8 b_u8)",
                "--lanes",
                "0",
            ],
            2,
            "--lanes: 0 lanes, outside isadb's limit of 1..=4096 lanes",
        ),
        probe(
            &[
                "prove",
                "(add a_u8 b_u8)",
                "(add b_u8 a_u8)",
                "--lanes",
                "4294967295",
            ],
            2,
            "outside isadb's limit of 1..=4096 lanes",
        ),
        probe(
            &["compile", "a_u8 + b_u8", "--target", "neon", "--lanes", "0"],
            2,
            "--lanes: 0 lanes",
        ),
        probe(
            &[
                "compile",
                "a_u8 + b_u8",
                "--target",
                "neon",
                "--lanes",
                "1000000000",
            ],
            2,
            "--lanes: 1000000000 lanes",
        ),
        probe(
            &["compile", "a_u8 + b_u8", "--target", "neon", "--run", "0"],
            2,
            "--run 0: a check on no inputs checks nothing",
        ),
        probe(
            &["prove", "(const <1000000000 x i8> 1)", "a_u8"],
            2,
            "lhs:1:8: vector type: 1000000000 lanes, outside isadb's limit",
        ),
        probe(
            &["prove", "(bitcast <1000000000 x i8> a_u8)", "a_u8"],
            2,
            "lhs:1:10: vector type: 1000000000 lanes, outside isadb's limit",
        ),
        probe(
            &["eval", "_mm_add_epi8", "", "1"],
            2,
            "needs 1 or 16 values, got 0",
        ),
        // 2. Depth and size: a one-line error naming the limit, not a stack overflow.
        probe(
            &["compile", &sum, "--target", "neon"],
            2,
            "expression nested more than 256 deep (isadb's limit)",
        ),
        probe(
            &["prove", &not7000, "a_u8"],
            2,
            "1:1281: expression nested more than 256 deep",
        ),
        probe(
            &["prove", &paren20000, "a_u8"],
            2,
            "1:257: expression nested more than 256 deep",
        ),
        // 4. Exit codes: empty answers 1, input errors 2.
        probe(
            &["list", "--grep", "no-such-instruction-zq"],
            1,
            "0 instructions",
        ),
        probe(
            &[
                "query",
                "--csv",
                "what implements (xor (mul a_u8 b_u8) (shl c_u8 1)) on neon",
            ],
            1,
            "",
        ),
        probe(
            &["query", "what implements (frobnicate a_u8 b_u8) on neon"],
            2,
            "expression:1:1: unknown operator 'frobnicate'",
        ),
        probe(
            &["query", "what implements (add a_u8 b_u16) on neon"],
            2,
            "type error: add needs operands of one type",
        ),
        probe(
            &["db", "import", "/nonexistent-isadb-dir"],
            2,
            "no such directory",
        ),
        probe(
            &["eval", "_mm_slli_epi16", "1", "999"],
            2,
            "immediate in 0..=255, got 999",
        ),
        probe(
            &["eval", "_mm_slli_epi16", "1", "-1"],
            2,
            "immediate in 0..=255, got -1",
        ),
        probe(
            &["eval", "_mm_slli_epi16", "1", "3"],
            0,
            "[8 8 8 8 8 8 8 8]",
        ),
        // 6. The suggestion search is bounded.
        probe(&["show", &long_name], 2, "unknown instruction 'xxxx"),
    ];
    let empty = tempfile::tempdir().unwrap();
    let mut probes = probes;
    probes.push(Probe {
        args: vec![
            "db".into(),
            "import".into(),
            empty.path().display().to_string(),
        ],
        code: 2,
        fragment: "no table to import",
    });
    let mut failures = Vec::new();
    for p in &probes {
        let args: Vec<&str> = p.args.iter().map(String::as_str).collect();
        let o = common::isadb(home.path(), &args);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
        let text = if p.code == 2 { &err } else { &out };
        if o.status.code() != Some(p.code) || !text.contains(p.fragment) {
            failures.push(format!(
                "{shown:?}: exit {:?}, wanted {} with {:?}; stderr {:?}",
                o.status.code(),
                p.code,
                p.fragment,
                err.chars().take(300).collect::<String>()
            ));
        }
        if p.code == 2 {
            assert_eq!(err.trim_end().lines().count(), 1, "{shown:?}: {err}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Stdout (item 3): a reader that goes away ends the process quietly with SIGPIPE's status;
/// a full disk is an error message.
#[test]
fn closed_pipe_and_full_disk_on_stdout() {
    let home = common::project_copy("hostile-stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .arg("--home")
        .arg(home.path())
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let o = Command::new(env!("CARGO_BIN_EXE_isadb"))
            .arg("--home")
            .arg(home.path())
            .arg("list")
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("standard output: No space left on device"),
            "{err}"
        );
    }
}

/// The database defends itself (item 5): a query file that writes is refused before it runs,
/// and the table it aimed at is intact.
#[test]
fn a_query_file_cannot_write_the_database() {
    let home = common::project_copy("hostile-query");
    std::fs::write(
        home.path().join("queries/wipe.sql"),
        "-- query: wipe {target}\nDELETE FROM validation_results WHERE :target = :target\n",
    )
    .unwrap();
    let before = common::isadb(home.path(), &["db", "stats", "--json"]);
    assert_eq!(before.status.code(), Some(0));
    let o = common::isadb(home.path(), &["query", "wipe neon"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("queries/wipe.sql: writes to the database; a query may only read it"),
        "{err}"
    );
    let after = common::isadb(home.path(), &["db", "stats", "--json"]);
    assert_eq!(before.stdout, after.stdout);
    let o = common::isadb(home.path(), &["query", "instructions in neon"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A database a newer isadb wrote is refused, naming both schema versions, and left as it is.
#[test]
fn a_newer_database_is_refused_not_replaced() {
    let home = common::project_copy("hostile-newer");
    let o = common::isadb(home.path(), &["list", "--grep", "vaddq_u8"]);
    assert_eq!(o.status.code(), Some(0));
    let db = home.path().join("rules.db/isadb.sqlite");
    let version = |v: Option<u32>| {
        let conn = rusqlite::Connection::open(&db).unwrap();
        if let Some(v) = v {
            conn.pragma_update(None, "user_version", v).unwrap();
        }
        conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))
            .unwrap()
    };
    version(Some(999));
    let o = common::isadb(home.path(), &["list", "--grep", "vaddq_u8"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("version 999 is newer than this isadb's"),
        "{err}"
    );
    assert_eq!(version(None), 999);
}
