//! Hostile input (issue 16): a table of command-line probes run on the real binary, each with
//! the exit code README promises and a fragment of its one-line message. No probe may panic
//! (exit 101), abort or hang; the deep and long inputs would overflow the stack without the
//! parsers' limits.

use std::path::Path;
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
    let select8000 = format!("select({}, b_u8)", vec!["a_u8 > 1, a_u8"; 8000].join(", "));
    let mux2000 = format!("mux(c_i32, {{{}}})", vec!["a_u8"; 2000].join(", "));
    let long_name = "x".repeat(120_000);
    let kernel_file = |name: &str, text: String| {
        let path = home.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let products = |n: usize| {
        let terms: Vec<String> = (0..n)
            .map(|i| format!("(* (Get A {i}) (Get B {i}))"))
            .collect();
        format!("(List {})", terms.join(" "))
    };
    let wide = kernel_file("wide.sexp", products(1025));
    let small = kernel_file("small.sexp", products(4));
    let long_sum = kernel_file(
        "long_sum.c",
        "void k(float a[4], float out[4]) {\n  for (int i = 0; i < 4; i++) {\n    float s = 0;\n    for (int j = 0; j < 100000000; j++) { s = s + a[i]; }\n    out[i] = s;\n  }\n}\n".into(),
    );
    let big_array = kernel_file(
        "big_array.c",
        "void k(float a[100000000], float out[4]) {\n  out[0] = a[0];\n}\n".into(),
    );
    let probes =
        vec![
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
            "--run 0: 0 iterations, outside isadb's limit of 1..=100000 iterations",
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
        // Halide's many-way select and mux nest one select per alternative.
        probe(
            &["compile", &select8000, "--target", "neon"],
            2,
            "1:1: select of 8000 alternatives nests more than 256 deep (isadb's limit)",
        ),
        probe(
            &["compile", &mux2000, "--target", "neon"],
            2,
            "1:1: mux of 2000 alternatives nests more than 256 deep (isadb's limit)",
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
            &["compile", "--target", "neon", "x_f32 << y_i32", "--no-cache"],
            2,
            "expression:1:7: shifts need integer lanes, got f32 and i32",
        ),
        probe(
            &["compile", "--target", "neon", "reduce_max(0, v1_i8)", "--no-cache"],
            2,
            "1:12: reduce_max reduces groups of k >= 1 adjacent lanes, got k = 0",
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
        // 6. The suggestion search is bounded, and a long name is cut in the message.
        probe(&["show", &long_name], 2, "unknown instruction 'xxxxxxxxxx"),
        probe(&["show", &long_name], 2, "...(120002 characters)"),
        // 7. Numbers too large for 128 bits are named as such, not read as infinity.
        probe(
            &["prove", &format!("(add a_u8 {})", "9".repeat(400)), "a_u8"],
            2,
            "1:11: literal 999999999999999999999999... (400 characters) is too large for 128 bits",
        ),
        probe(
            &["prove", "(add a_u8 1e999)", "a_u8"],
            2,
            "literal 1e999 (5 characters) is too large for a 64-bit float",
        ),
        // 8. Counts bounded before any work; kernels bounded in outputs, sums and arrays.
        probe(
            &["bench", "--rounds", "0"],
            2,
            "--rounds 0: 0 rounds, outside isadb's limit of 1..=1000 rounds",
        ),
        probe(
            &["verify-rules", "--jobs", "0"],
            2,
            "--jobs 0: 0 threads, outside isadb's limit of 1..=256 threads",
        ),
        probe(
            &["validate", "--inputs", "x"],
            2,
            "--inputs x: not a count of 1..=100000 inputs",
        ),
        probe(
            &["synth", "--max-size", "9"],
            2,
            "--max-size 9: 9 nodes, outside isadb's limit of 1..=8 nodes",
        ),
        probe(
            &["compile", "a_u8 + b_u8", "--target", "neon", "--lanes", "4096", "--run", "2000"],
            2,
            "--run 2000: 24576000 lanes of inputs and outputs, past isadb's budget of 4194304",
        ),
        probe(
            &["kernel", &small, "--run", "0"],
            2,
            "--run 0: 0 iterations",
        ),
        probe(
            &["kernel", &wide],
            2,
            "wide.sexp: the kernel has 1025 outputs, past isadb's limit of 1024",
        ),
        probe(
            &["kernel", &long_sum],
            2,
            "long_sum.c:4:49: a sum of more than 4096 operands (isadb's limit)",
        ),
        probe(
            &["kernel", &big_array],
            2,
            "big_array.c:1:8: array 'a' has more than 1048576 elements (isadb's limit)",
        ),
        // 9. Other libraries' multi-line messages on one line.
        probe(
            &["list", "--grep", "("],
            2,
            "--grep: regex parse error: ( ^ error: unclosed group",
        ),
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

/// A project whose files were changed by `edit`, and the command that must fail on it.
struct Damage {
    what: &'static str,
    edit: Box<dyn Fn(&Path)>,
    args: &'static [&'static str],
    fragment: String,
}

fn damage(
    what: &'static str,
    args: &'static [&'static str],
    fragment: impl Into<String>,
    edit: impl Fn(&Path) + 'static,
) -> Damage {
    Damage {
        what,
        edit: Box::new(edit),
        args,
        fragment: fragment.into(),
    }
}

fn append(path: &Path, text: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text).unwrap();
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// A NEON family in its own spec file, with `operands`, `feature` and an extra clause.
fn family(home: &Path, feature: &str, operands: &str, semantics: &str, extra: &str) {
    write(
        &home.join("specs/neon/zz.spec"),
        &format!(
            "(family zz-test\n  (isa neon)\n  (param W 128)\n  (let N 16)\n  (feature {feature})\n  \
             (intrinsic \"vzztest\")\n  (asm \"zz\")\n  (operands (a (vec N u8)) {operands})\n  \
             (semantics {semantics})\n  {extra}\n  (cost 1))\n"
        ),
    );
}

/// A damage that writes the NEON test family (see [`family`]) and lists it.
fn family_damage(
    what: &'static str,
    fragment: &'static str,
    [feature, operands, semantics, extra]: [&'static str; 4],
) -> Damage {
    damage(what, &["list", "--grep", "vzztest"], fragment, move |h| {
        family(h, feature, operands, semantics, extra)
    })
}

/// Every spec, rule, query and CSV file is checked against the vocabulary, and every error is
/// one line naming the file and line (items 4 and 5 of the issue): exit 2, never a panic,
/// never a silent acceptance.
#[test]
fn damaged_project_files_name_file_and_line() {
    let arith_lines = std::fs::read_to_string(common::root().join("specs/neon/arith.spec"))
        .unwrap()
        .lines()
        .count();
    let cases = vec![
        damage(
            "a query pattern hole that is not a name",
            &["query", "bad 3 thing"],
            "queries/bad.sql:1:1: query pattern 'bad {1x} thing': unknown hole {1x}",
            |h| write(&h.join("queries/bad.sql"), "-- query: bad {1x} thing\nSELECT 1\n"),
        ),
        damage(
            "a query pattern hole used twice",
            &["query", "instructions in neon"],
            "queries/bad.sql:1:1: query pattern 'bad {target} and {target}': hole {target} appears twice",
            |h| {
                write(
                    &h.join("queries/bad.sql"),
                    "-- query: bad {target} and {target}\nSELECT 1\n",
                )
            },
        ),
        damage(
            "a Datalog query naming an unknown relation",
            &["query", "zz vaddq_u8"],
            "queries/bad.dl:3:1: unknown relation 'nosuch'; relations: ",
            |h| {
                write(
                    &h.join("queries/bad.dl"),
                    "% query: zz {instruction}\n\nanswer(X) :- nosuch(X), isa(X, {instruction}).\n",
                )
            },
        ),
        damage(
            "a Datalog query with the wrong arity",
            &["query", "zz vaddq_u8"],
            "queries/bad.dl:3:1: relation 'member' has 2 terms, used here with 3",
            |h| {
                write(
                    &h.join("queries/bad.dl"),
                    "% query: zz {instruction}\n\nanswer(X) :- member(X, {instruction}, Z).\n",
                )
            },
        ),
        damage(
            "an error in the shared relations is blamed on relations.dl",
            &["query", "equivalents of vaddq_u8"],
            "queries/relations.dl:",
            |h| append(&h.join("queries/relations.dl"), b"bogus(X) :- nothing(X).\n"),
        ),
        damage(
            "a SQL query that does not parse",
            &["query", "zz neon"],
            "queries/bad.sql:2:1: near \"SELEC\": syntax error",
            |h| write(&h.join("queries/bad.sql"), "-- query: zz {target}\nSELEC * FROM x\nWHERE 1\n"),
        ),
        damage(
            "a spec line that is not UTF-8",
            &["list", "--grep", "vaddq_u8"],
            format!("specs/neon/arith.spec:{}:3: bytes that are not UTF-8 text", arith_lines + 1),
            |h| append(&h.join("specs/neon/arith.spec"), b"; \xe9t\xe9\n"),
        ),
        damage(
            "a cached similarity verdict that is not one",
            &["list", "--grep", "vaddq_u8"],
            "similarity_checks: pair feed: bad verdict \"maybe\" (similar, different or unknown)",
            |h| append(&h.join("rules.db/similarity_checks.csv"), b"feed,maybe,1.5\n"),
        ),
        damage(
            "a CSV line that is not UTF-8",
            &["list", "--grep", "vaddq_u8"],
            "rules.db/kernel_tuning.csv:",
            |h| append(&h.join("rules.db/kernel_tuning.csv"), b"\xff\n"),
        ),
        damage(
            "a symbolic link loop under specs/",
            &["list", "--grep", "vaddq_u8"],
            "specs/neon/loop: a symbolic link to ",
            |h| std::os::unix::fs::symlink("..", h.join("specs/neon/loop")).unwrap(),
        ),
        family_damage(
            "an unknown feature",
            "specs/neon/zz.spec:5:12: family zz-test [W=128]: unknown feature 'neonx' for neon (did you mean 'neon'?)",
            ["neonx", "", "(add a a)", ""],
        ),
        family_damage(
            "a negative cost",
            "specs/neon/zz.spec:10:3: family zz-test [W=128]: a cost is a number of cycles, not -2",
            ["neon", "", "(add a a)", "(cost -2)"],
        ),
        family_damage(
            "an immediate range with LO > HI",
            "immediate range 10..=2 of operand i is empty (LO > HI)",
            ["neon", "(i (imm u8 10 2))", "(shl a (broadcast 16 i))", ""],
        ),
        family_damage(
            "an immediate bound outside its type",
            "immediate bound 999 of operand i is not a u8 value",
            ["neon", "(i (imm u8 0 999))", "(shl a (broadcast 16 i))", ""],
        ),
        family_damage(
            "vector-registers that is not a condition",
            "vector-registers needs true or false, got 5",
            ["neon", "", "(add a a)", "(vector-registers 5)"],
        ),
        family_damage(
            "a one-lane operand in a vector register without a C type",
            "operand b (u8) is in a vector register (vector-registers), which has no C type for it on neon",
            [
                "neon",
                "(b (vec 1 u8))",
                "(add a (broadcast 16 b))",
                "(vector-registers true)",
            ],
        ),
        family_damage(
            "scale naming an unknown parameter",
            "specs/neon/zz.spec:10:10: scale names 'Q', which is not a (param ...) of family zz-test",
            ["neon", "", "(add a a)", "(scale Q 64)"],
        ),
        damage(
            "an idiom using an unknown operator",
            &["list", "--grep", "vzztest"],
            "unknown operator 'frobnicate'",
            |h| append(&h.join("specs/idioms/catalogue.spec"), b"(idiom zz_idiom (a b) (frobnicate a b))\n"),
        ),
        damage(
            "a rule predicate naming a constant of neither side",
            &["list", "--grep", "vaddq_u8"],
            "the predicate names 'c7_u8', which is in neither side of the rule (T = u8)",
            |h| {
                append(
                    &h.join("specs/rules/simplify.rules"),
                    b"rule zz_pred for T in u8: x + c0 => x - c0 if c7 == 1 [kind simplify]\n",
                )
            },
        ),
        damage(
            "a rule right-hand side naming an unbound constant",
            &["list", "--grep", "vaddq_u8"],
            "'c1_u8' is bound by neither the left-hand side nor the predicate (T = u8)",
            |h| {
                append(
                    &h.join("specs/rules/simplify.rules"),
                    b"rule zz_rhs for T in u8: x + c0 => x - c1 [kind simplify]\n",
                )
            },
        ),
        damage(
            "a rule for an unknown target",
            &["list", "--grep", "vaddq_u8"],
            "unknown ISA 'arm'",
            |h| {
                append(
                    &h.join("specs/rules/lower.rules"),
                    b"rule zz_tgt: x_u8 + y_u8 => y_u8 + x_u8 [kind lower, target arm]\n",
                )
            },
        ),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let home = common::project_copy("hostile-damage");
        (case.edit)(home.path());
        let o = common::isadb(home.path(), case.args);
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(2)
            || !err.contains(&case.fragment)
            || err.trim_end().lines().count() != 1
        {
            failures.push(format!(
                "{}: exit {:?}, wanted 2 with {:?}; stderr {err:?}",
                case.what,
                o.status.code(),
                case.fragment
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} damaged projects, each refused with one line",
        cases.len()
    );
}

/// A build killed mid-way leaves `isadb.sqlite.building-PID`: the next command removes it when
/// that process is gone, and keeps a live one's.
#[test]
fn a_dead_build_leftover_is_removed_by_the_next_command() {
    let home = common::project_copy("hostile-leftover");
    // Built first, so the command below only reads.
    assert!(common::isadb(home.path(), &["db", "build"])
        .status
        .success());
    let dead = {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let leftover = |pid: u32| {
        home.path()
            .join(format!("rules.db/isadb.sqlite.building-{pid}"))
    };
    std::fs::write(leftover(dead), vec![0u8; 4096]).unwrap();
    std::fs::write(format!("{}-wal", leftover(dead).display()), b"x").unwrap();
    std::fs::write(leftover(std::process::id()), b"in use").unwrap();
    let o = common::isadb(home.path(), &["show", "vaddq_u8"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!leftover(dead).exists());
    assert!(!Path::new(&format!("{}-wal", leftover(dead).display())).exists());
    assert!(
        leftover(std::process::id()).exists(),
        "a live process's build is kept"
    );
}

/// A damaged database file is noticed when opened (`PRAGMA quick_check`), named on one line
/// and rebuilt from specs/ and the committed CSV tables; the next command is quiet.
#[test]
fn a_damaged_database_is_rebuilt_saying_so() {
    let home = common::project_copy("hostile-damaged-db");
    let db = home.path().join("rules.db/isadb.sqlite");
    for (what, offset, len) in [("a page", 0.6, 4096), ("the header", 0.0, 100)] {
        let o = common::isadb(home.path(), &["list", "--grep", "vaddq_u8"]);
        assert_eq!(o.status.code(), Some(0), "{what}");
        let mut bytes = std::fs::read(&db).unwrap();
        let at = ((bytes.len() as f64 * offset) as usize / 4096) * 4096;
        bytes[at..at + len].fill(0xa5);
        std::fs::write(&db, bytes).unwrap();
        let o = common::isadb(home.path(), &["list", "--grep", "vaddq_u8"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{what}: {err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("vaddq_u8"));
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains("rules.db/isadb.sqlite: ")
                && err.ends_with("; rebuilding it from specs/ and rules.db/*.csv\n"),
            "{what}: {err}"
        );
        let o = common::isadb(home.path(), &["list", "--grep", "vaddq_u8"]);
        assert_eq!(o.status.code(), Some(0));
        assert!(
            o.stderr.is_empty(),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A closed standard error never turns an error into a panic (exit 101).
#[test]
fn a_closed_stderr_is_not_a_panic() {
    let home = common::project_copy("hostile-stderr");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .arg("--home")
        .arg(home.path())
        .args(["show", "no-such-instruction"])
        .stderr(writer)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A database and directory isadb may not write still answer reads; the optional selection
/// cache write is skipped with a note. Runs as an unprivileged user (root writes anything):
/// through `setpriv` when the tests run as root.
#[test]
fn a_read_only_database_answers_reads() {
    let home = common::project_copy("hostile-read-only");
    let o = common::isadb(home.path(), &["db", "build"]);
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_file(home.path().join("rules.db/isadb.sqlite-checked"));
    let mut runner: Vec<String> = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { geteuid() } == 0 {
        runner = [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]
        .map(String::from)
        .to_vec();
    }
    set_mode(home.path(), 0o755);
    for entry in walk(home.path()) {
        let dir = entry.is_dir();
        let under_rules_db = entry.starts_with(home.path().join("rules.db"));
        set_mode(
            &entry,
            match (dir, under_rules_db) {
                (true, true) => 0o555,
                (true, false) => 0o755,
                (false, true) => 0o444,
                (false, false) => 0o644,
            },
        );
    }
    set_mode(&home.path().join("rules.db"), 0o555);
    let run = |args: &[&str]| {
        let (program, pre) = match runner.split_first() {
            Some((p, pre)) => (p.clone(), pre.to_vec()),
            None => (env!("CARGO_BIN_EXE_isadb").to_string(), vec![]),
        };
        let mut cmd = Command::new(program);
        cmd.args(pre);
        if !runner.is_empty() {
            cmd.arg(env!("CARGO_BIN_EXE_isadb"));
        }
        cmd.arg("--home")
            .arg(home.path())
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["show", "vaddq_u8"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    set_mode(&home.path().join("rules.db"), 0o755);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("add Vd.16B"));
    set_mode(&home.path().join("rules.db"), 0o555);
    let o = run(&["compile", "a_u8 + b_u8", "--target", "neon"]);
    set_mode(&home.path().join("rules.db"), 0o755);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        err.trim_end(),
        "isadb: the database is read-only: this selection is not kept in its cache"
    );
}

extern "C" {
    fn geteuid() -> u32;
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}
