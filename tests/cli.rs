//! The real binary on the shipped specs: show, eval, prove, db build/export/import, and the
//! one-line errors and exit codes for bad input.

use std::path::Path;
use std::process::Output;

mod common;

use common::isadb;

fn home(name: &str) -> tempfile::TempDir {
    common::project_copy(&format!("cli-{name}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn prove_refutes_truncating_average_and_proves_halving_add() {
    let h = home("prove");
    let o = isadb(
        &h,
        &[
            "prove",
            "(shr (add a_u8 b_u8) 1)",
            "(rounding_halving_add a_u8 b_u8)",
            "--lanes",
            "64",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("counterexample"), "{}", stdout(&o));
    let o = isadb(
        &h,
        &[
            "--json",
            "prove",
            "(halving_add a_u8 b_u8)",
            "(add (and a_u8 b_u8) (shr (xor a_u8 b_u8) 1))",
            "--lanes",
            "64",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "proven");
    assert_eq!(v["ty"], "<64 x u8>");
}

/// `isadb --json prove LHS RHS --lanes N`: the exit code and the verdict.
fn prove_json(h: &Path, lhs: &str, rhs: &str, lanes: &str) -> (Option<i32>, serde_json::Value) {
    let o = isadb(h, &["--json", "prove", lhs, rhs, "--lanes", lanes]);
    let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    (o.status.code(), v)
}

#[test]
fn prove_and_eval_read_the_halide_form_as_compile_does() {
    let guard = home("halide");
    let h = guard.path();
    let o = isadb(h, &["prove", "x_i8 * 2", "x_i8 << 1", "--lanes", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("proven: equivalent at <4 x i8>"));
    // One side in each form.
    let average = "u8((u16(a_u8) + u16(b_u8) + 1) >> 1)";
    let (code, v) = prove_json(h, average, "(rounding_halving_add a_u8 b_u8)", "16");
    assert_eq!((code, &v["ty"]), (Some(0), &serde_json::json!("<16 x u8>")));
    // Halide's / rounds toward negative infinity: an arithmetic shift, not C's division.
    assert_eq!(prove_json(h, "x_i16 / 2", "(shr x_i16 1)", "8").0, Some(0));
    let (code, v) = prove_json(h, "(a_u8 + b_u8) / 2", "halving_add(a_u8, b_u8)", "8");
    assert_eq!(
        (code, &v["verdict"]),
        (Some(1), &serde_json::json!("counterexample"))
    );
    // Lane values are constants in either form.
    let o = isadb(
        h,
        &["--json", "eval", "_mm_add_epi16", "(1 << 7) - 1", "-1"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["lanes"], serde_json::json!(vec!["126"; 8]));
}

#[test]
fn counterexample_lanes_really_differ() {
    let h = home("cex");
    let o = isadb(
        &h,
        &[
            "--json",
            "prove",
            "(shr (add a_u8 b_u8) 1)",
            "(rounding_halving_add a_u8 b_u8)",
            "--lanes",
            "4",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "counterexample");
    assert_ne!(v["lhs"], v["rhs"]);
}

#[test]
fn show_and_eval_madd() {
    let h = home("show");
    let o = isadb(&h, &["show", "_mm256_madd_epi16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for want in [
        "vpmaddwd",
        "avx2",
        "<16 x i16>",
        "<8 x i32>",
        "reduce-add 2",
    ] {
        assert!(text.contains(want), "missing {want} in\n{text}");
    }
    let o = isadb(
        &h,
        &[
            "--json",
            "eval",
            "_mm_madd_epi16",
            "1,2,3,4,5,6,7,-32768",
            "-32768",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["lanes"],
        serde_json::json!(["-98304", "-229376", "-360448", "1073512448"])
    );
}

#[test]
fn bad_input_gives_one_line_errors_and_exit_2() {
    let h = home("errors");
    let cases: &[(&[&str], &str)] = &[
        (
            &["show", "_mm256_madd_epi61"],
            "did you mean '_mm256_madd_epi16'",
        ),
        (
            &["prove", "(add a_u8 b_u16)", "a_u8"],
            "add needs operands of one type, got <16 x u8> and <16 x u16>",
        ),
        (
            &["prove", "(add a_u8", "a_u8"],
            "lhs: neither a Halide-style expression (1:6: expected ')' to close '(' at 1:1, found 'a_u8') nor an s-expression (1:10: expected ')'",
        ),
        (
            &["prove", "a_u8", "b_u8 + * 2"],
            "rhs: neither a Halide-style expression (1:8: unexpected token '*'",
        ),
        (
            &["prove", "(halvng_add a_u8 b_u8)", "a_u8"],
            "did you mean 'halving_add'",
        ),
        (&["eval", "_mm_madd_epi16", "1"], "takes 2 operands"),
        (
            &["eval", "_mm_madd_epi16", "1", "70000"],
            "does not fit in i16",
        ),
        (&["list", "--isa", "hxv"], "unknown ISA 'hxv'"),
        (
            &["prove", "(const (vec) 1)", "a_u8"],
            "expected (vec LANES ELEM) or (mask LANES)",
        ),
    ];
    for (args, want) in cases {
        let o = isadb(&h, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn malformed_spec_names_file_line_and_column_and_keeps_old_database() {
    let h = home("badspec");
    assert!(isadb(&h, &["db", "build"]).status.success());
    let before = std::fs::read(h.path().join("rules.db/isadb.sqlite")).unwrap();
    std::fs::write(
        h.path().join("specs/x86/broken.spec"),
        "(family oops\n  (isa x86)\n  (semantics (add a b)))\n",
    )
    .unwrap();
    let o = isadb(&h, &["db", "build"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("specs/x86/broken.spec:3:"), "{err}");
    assert_eq!(
        std::fs::read(h.path().join("rules.db/isadb.sqlite")).unwrap(),
        before
    );
}

#[test]
fn database_rebuilds_when_missing_stale_or_corrupt() {
    let h = home("stale");
    let db = h.path().join("rules.db/isadb.sqlite");
    assert!(isadb(&h, &["list", "--isa", "x86"]).status.success());
    assert!(db.exists());
    std::fs::write(&db, b"this is not a database at all, not even close").unwrap();
    let o = isadb(&h, &["show", "_mm_madd_epi16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let extra = "(family extra (isa x86) (param W 128) (feature sse2) (intrinsic \"_mm_extra_epi8\") (asm \"extra\")\n (operands (a (vec 16 i8))) (semantics (neg a)))\n";
    std::fs::write(h.path().join("specs/x86/extra.spec"), extra).unwrap();
    let o = isadb(&h, &["show", "_mm_extra_epi8"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn csv_export_import_round_trips_and_rejects_bad_rows() {
    let h = home("csv");
    let out = h.path().join("export");
    assert!(isadb(&h, &["db", "export", out.to_str().unwrap()])
        .status
        .success());
    let rules = out.join("rules.csv");
    let header = std::fs::read_to_string(&rules).unwrap();
    let header = header.lines().next().unwrap().to_string();
    let columns = header.split(',').count();
    let mut row = vec![String::new(); columns];
    let col = |name: &str| header.split(',').position(|c| c == name).unwrap();
    let write_rules = |row: &[String]| {
        let quoted: Vec<String> = row
            .iter()
            .map(|c| {
                if c.contains(' ') {
                    format!("\"{c}\"")
                } else {
                    c.clone()
                }
            })
            .collect();
        std::fs::write(&rules, format!("{header}\n{}\n", quoted.join(","))).unwrap();
    };
    row[col("id")] = "1".into();
    row[col("name")] = "demo".into();
    row[col("lhs")] = "(add a b)".into();
    row[col("rhs")] = "(add b a)".into();
    row[col("kind")] = "simplify".into();
    row[col("provenance")] = "hand-written".into();
    row[col("rule_hash")] = "h".into();
    row[col("status")] = "proven".into();
    write_rules(&row);
    assert!(isadb(&h, &["db", "import", out.to_str().unwrap()])
        .status
        .success());
    let first = h.path().join("first");
    assert!(isadb(&h, &["db", "export", first.to_str().unwrap()])
        .status
        .success());
    assert!(isadb(&h, &["db", "import", first.to_str().unwrap()])
        .status
        .success());
    let second = h.path().join("second");
    assert!(isadb(&h, &["db", "export", second.to_str().unwrap()])
        .status
        .success());
    let exported = std::fs::read_to_string(first.join("rules.csv")).unwrap();
    assert!(exported.contains("demo"), "{exported}");
    for t in ["rules", "validation_results", "idiom_matches"] {
        let name = format!("{t}.csv");
        assert_eq!(
            std::fs::read(first.join(&name)).unwrap(),
            std::fs::read(second.join(&name)).unwrap(),
            "{name}"
        );
    }
    row[col("status")] = "maybe".into();
    write_rules(&row);
    let o = isadb(&h, &["db", "import", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("rules.csv: line 2"), "{}", stderr(&o));
}

/// An idiom fact z3 left unknown is not used and stays so through `db build`; `db build
/// --retry-unknown` asks z3 again, proves it, uses it and writes the verdict back to the
/// committed CSV.
#[test]
fn retry_unknown_matches_an_undecided_fact_again() {
    let h = home("retry");
    let csv = h.path().join("rules.db/idiom_matches.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let fact = |l: &str| l.starts_with("vqrdmulhq_s16,") && l.contains(",rounding_mul_shr,");
    let edited: String = text
        .lines()
        .map(|l| match fact(l) {
            true => l.replacen(",proven,", ",unknown,", 1),
            false => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    assert_ne!(
        edited, text,
        "no proven rounding_mul_shr fact of vqrdmulhq_s16 to edit"
    );
    std::fs::write(&csv, &edited).unwrap();
    let idioms = || stdout(&isadb(&h, &["query", "idioms of vqrdmulhq_s16"]));
    let undecided = || {
        std::fs::read_to_string(&csv)
            .unwrap()
            .lines()
            .any(|l| fact(l) && l.contains(",unknown,"))
    };
    let o = isadb(&h, &["db", "build"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!idioms().contains("rounding_mul_shr"), "{}", idioms());
    assert!(undecided());
    let o = isadb(&h, &["db", "build", "--retry-unknown"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        idioms().contains("rounding_mul_shr: i16 x i16 -> i16, z=15"),
        "{}",
        idioms()
    );
    assert!(!undecided());
}
