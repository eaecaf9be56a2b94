//! `isadb compile`: the instructions selected for Pitchfork's and Halide's fixed-point patterns on
//! each target (the cases are data: every file of `tests/compile/select/` and
//! `tests/compile/run/`), the generated C run on real inputs (natively, under qemu-aarch64 and
//! qemu-hexagon), translation validation catching a wrong selection, and bad input.

mod common;

use common::{isadb, project_copy, root, selected, tools};
use isadb::testing::{missing, run_c, selection_features, Host};
use isadb::{prove_selection, Database, Node, Project, RunCheck, Selector, Target, Toolchain};
use serde_json::Value;
use std::collections::HashMap;
use std::process::Output;
use std::rc::Rc;

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// One case of a file of `tests/compile/`: `EXPRESSION [--lanes N] [=> INTRINSIC ...]`.
struct Case {
    /// `file:line`, for failure messages.
    at: String,
    target: String,
    expression: String,
    /// Extra `compile` arguments (`--lanes N`).
    extra: Vec<String>,
    /// The intrinsics selected, in order (files of `select/`).
    selected: Vec<String>,
}

/// Every case of every file of `tests/compile/<dir>/`, whose name is the target.
fn cases(dir: &str) -> Vec<Case> {
    let dir = root().join("tests/compile").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let target = path.file_stem().unwrap().to_str().unwrap().to_string();
        Target::parse(&target).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (left, selected) = match line.split_once(" => ") {
                Some((l, s)) => (l, s.split_whitespace().map(String::from).collect()),
                None => (line, vec![]),
            };
            let (expression, extra) = match left.split_once(" --lanes ") {
                Some((e, lanes)) => (e, vec!["--lanes".to_string(), lanes.trim().to_string()]),
                None => (left, vec![]),
            };
            out.push(Case {
                at: format!("{}:{}", path.display(), n + 1),
                target: target.clone(),
                expression: expression.trim().to_string(),
                extra,
                selected,
            });
        }
    }
    assert!(!out.is_empty(), "no cases in {}", dir.display());
    out
}

/// `compile --json` of a case with more arguments; the report.
fn compile_case(home: &std::path::Path, case: &Case, more: &[&str]) -> Value {
    let mut args = vec![
        "--json",
        "compile",
        "--target",
        &case.target,
        &case.expression,
    ];
    args.extend(case.extra.iter().map(String::as_str));
    args.extend_from_slice(more);
    let out = isadb(home, &args);
    assert!(
        out.status.success(),
        "{}: {}{}",
        case.at,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

#[test]
fn every_selection_file_selects_its_instructions() {
    let guard = project_copy("compile-acceptance");
    let mut wrong = Vec::new();
    let cases = cases("select");
    for case in &cases {
        assert!(
            !case.selected.is_empty(),
            "{}: no '=> INTRINSIC ...'",
            case.at
        );
        let got = selected(&compile_case(guard.path(), case, &["--no-cache"]));
        if got != case.selected {
            wrong.push(format!(
                "{} ({} {}): selected {got:?}, expected {:?}",
                case.at, case.target, case.expression, case.selected
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(cases.len() >= 32, "{} cases", cases.len());
}

#[test]
fn the_c_of_every_run_file_computes_its_expression() {
    let guard = project_copy("compile-run");
    let home = guard.path();
    let host = Host::detect();
    for case in cases("run") {
        let t = Target::parse(&case.target).unwrap();
        let toolchain = Toolchain::of(t.isa).unwrap();
        if !tools(toolchain) {
            continue;
        }
        let report = compile_case(home, &case, &["--run", "16"]);
        let (target, expr) = (&case.at, &case.expression);
        let run = report["run"].as_str().unwrap();
        // Whether this machine can run the selection is decided by validation's feature table:
        // the C is run exactly when no feature of the selected instructions is missing here.
        let lacking: Vec<String> = report["features"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| missing(toolchain, f.as_str().unwrap(), &host))
            .collect();
        match report["not_run"].as_str() {
            None => {
                assert!(
                    lacking.is_empty(),
                    "{target} {expr}: ran though {lacking:?}"
                );
                assert!(
                    run.contains("lanes equal the interpreter's"),
                    "{target} {expr}: {run}"
                );
            }
            Some(why) => {
                assert!(
                    lacking.iter().any(|l| l == why),
                    "{target} {expr}: not run ({why}), but this machine lacks {lacking:?}"
                );
                eprintln!("{target} {expr}: compiled, not run here: {why}");
            }
        }
    }
}

/// A selector for x86 `target` on a copy of the project (kept while the guard lives), where
/// this machine builds x86 C.
fn x86_selector(copy: &str, target: &str) -> Option<(tempfile::TempDir, Selector)> {
    if !tools(Toolchain::X86) {
        return None;
    }
    let guard = project_copy(copy);
    let target = Target::parse(target).unwrap();
    let selector = Selector::load(&Project::at(guard.path()), target).unwrap();
    Some((guard, selector))
}

#[test]
fn a_selection_the_cpu_cannot_run_is_compiled_and_not_run() {
    let Some((_guard, mut selector)) = x86_selector("compile-not-run", "x86-avx512") else {
        return;
    };
    let expr = "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))";
    let compiled = selector.compile(expr, None, &HashMap::new(), None).unwrap();
    let catalog = &selector.catalog;
    assert_eq!(selection_features(&compiled, catalog), ["avx512vnni"]);
    let work = tempfile::tempdir().unwrap();
    // A CPU with AVX-512F/BW but without VNNI, as the feature table reads /proc/cpuinfo.
    let without_vnni = Host {
        x86_flags: Some(
            ["sse2", "avx2", "avx512f", "avx512bw"]
                .map(String::from)
                .into(),
        ),
    };
    let check = run_c(&compiled, catalog, 4, 1, work.path(), &without_vnni).unwrap();
    assert_eq!(check, RunCheck::NotRun("CPU lacks avx512vnni".into()));
    let not_x86 = Host::default();
    let check = run_c(&compiled, catalog, 4, 1, work.path(), &not_x86).unwrap();
    assert_eq!(
        check,
        RunCheck::NotRun("the host is not an x86-64 machine".into())
    );
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

#[test]
fn translation_validation_rejects_a_wrong_selection() {
    let guard = project_copy("compile-wrong");
    let home = guard.path();
    let mut selector = Selector::load(&Project::at(home), Target::parse("neon").unwrap()).unwrap();
    let compiled = selector
        .compile(
            "u8((u16(a_u8) + u16(b_u8) + 1) / 2)",
            None,
            &HashMap::new(),
            None,
        )
        .unwrap();
    let catalog = &selector.catalog;
    prove_selection(catalog, &compiled.input, &compiled.root).unwrap();
    // The same operands through the truncating average (uhadd) instead of the rounding one.
    let Node::Instr { args, .. } = &*compiled.root else {
        panic!("expected one instruction, got {:?}", compiled.root);
    };
    let uhadd = catalog
        .instructions
        .iter()
        .position(|i| i.name == "vhaddq_u8")
        .unwrap();
    let wrong = Rc::new(Node::Instr {
        index: uhadd,
        args: args.clone(),
    });
    let err = prove_selection(catalog, &compiled.input, &wrong)
        .unwrap_err()
        .to_string();
    assert!(err.contains("differs from the input"), "{err}");
}

/// A wrong selection z3 cannot see: `!=` of f32 lanes as the ordered comparison (false where
/// a lane is NaN) instead of the unordered one. The proof is over the reals, where no lane is a
/// NaN, so it passes; running the C on inputs with NaN (the input only compares f32 lanes, so
/// the check draws them) finds the lane.
#[test]
fn running_on_nan_catches_a_selection_only_wrong_for_nan() {
    let Some((_guard, mut selector)) = x86_selector("compile-nan", "x86-avx2") else {
        return;
    };
    let compiled = selector
        .compile("x_f32 != y_f32", None, &HashMap::new(), None)
        .unwrap();
    let catalog = &selector.catalog;
    // vcmpps with predicate 4 (NEQ_UQ: true where unordered); 12 is NEQ_OQ.
    fn with_predicate(n: &Rc<Node>, from: i64, to: i64) -> Rc<Node> {
        Rc::new(match &**n {
            Node::Const { ty, value } if *value == from => Node::Const { ty: *ty, value: to },
            Node::Instr { index, args } => Node::Instr {
                index: *index,
                args: args.iter().map(|a| with_predicate(a, from, to)).collect(),
            },
            Node::Nonzero { ty, arg } => Node::Nonzero {
                ty: *ty,
                arg: with_predicate(arg, from, to),
            },
            Node::Reinterpret { ty, arg } => Node::Reinterpret {
                ty: *ty,
                arg: with_predicate(arg, from, to),
            },
            other => other.clone(),
        })
    }
    let ordered = with_predicate(&compiled.root, 4, 12);
    assert_ne!(ordered, compiled.root, "{:?}", compiled.root);
    prove_selection(catalog, &compiled.input, &ordered).unwrap();
    let wrong = isadb::Compiled {
        root: ordered,
        ..compiled
    };
    let work = tempfile::tempdir().unwrap();
    match run_c(&wrong, catalog, 50, 1, work.path(), &Host::detect()).unwrap() {
        RunCheck::NotRun(why) => eprintln!("not run here: {why}"),
        check => assert!(matches!(check, RunCheck::Mismatch(_)), "{check:?}"),
    }
}

/// An expression whose e-graph passes the budget however it is cut (a 30-term sum, whose sums
/// reassociate without end) is selected without the stored rules: 29 NEON `add`, proven and
/// run under qemu, where selection used to stop at the budget's error.
#[test]
fn an_expression_past_the_budget_at_every_cut_is_selected_without_the_stored_rules() {
    let guard = project_copy("compile-past-budget");
    let sum30 = ["a_u8", "b_u8", "c_u8"].repeat(10).join(" + ");
    let mut args = vec![
        "--json",
        "compile",
        "--target",
        "neon",
        &sum30,
        "--no-cache",
    ];
    if tools(Toolchain::Neon) {
        args.extend(["--run", "20"]);
    }
    let out = isadb(guard.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(selected(&report), vec!["vaddq_u8"; 29]);
    assert_eq!(report["scalarized"], serde_json::json!([]));
    if args.contains(&"--run") {
        assert_eq!(
            report["run"],
            "ran the C on neon: 320 lanes equal the interpreter's"
        );
    }
}

/// A selection z3 cannot decide in time (HVX's high words of 64-bit products by a negative
/// constant, given 200 ms) is replaced by every lane in scalar code, said so on stderr, not
/// cached, and runs equal to the interpreter under qemu-hexagon.
#[test]
fn an_undecided_selection_falls_back_to_scalar_lanes() {
    let guard = project_copy("compile-undecided");
    let home = guard.path();
    let expr = "i32((i64(x_i32) * i64(-12345)) >> 32)";
    let mut args = vec![
        "--json",
        "compile",
        "--target",
        "hvx",
        expr,
        "--proof-timeout",
        "200",
    ];
    if tools(Toolchain::Hvx) {
        args.extend(["--run", "20"]);
    }
    let out = isadb(home, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("z3 could not decide the selection for hvx"),
        "{stderr}"
    );
    let report = json(&out);
    assert_eq!(report["same_tree"], true);
    assert_eq!(
        report["scalarized"],
        serde_json::json!([
            "cast at i32x32",
            "shr at i64x32",
            "mul at i64x32",
            "cast at i64x32"
        ])
    );
    if args.contains(&"--run") {
        assert_eq!(
            report["run"],
            "ran the C on hvx: 640 lanes equal the interpreter's"
        );
    }
    // Not cached: the next compile selects (and falls back) again.
    let again = json(&isadb(home, &args[..7]));
    assert_eq!(again["cached"], false);
}

#[test]
fn emits_the_egglog_program_and_c() {
    let guard = project_copy("compile-emit");
    let home = guard.path();
    let out = isadb(
        home,
        &[
            "compile",
            "--target",
            "hvx",
            "absd(a_u16, b_u16)",
            "--emit",
            "egglog",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "(ruleset lift)",
        "(ruleset lower)",
        "(run-schedule",
        "(extract $root)",
        "I_Q6_Vuh_vabsdiff_VuhVuh",
        "(function hi (Expr) i64",
    ] {
        assert!(text.contains(needle), "no {needle} in the program");
    }
    let out = isadb(
        home,
        &[
            "compile",
            "--target",
            "neon",
            "absd(a_u16, b_u16)",
            "--emit",
            "c",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "void kernel(const uint16_t *a_u16, const uint16_t *b_u16, uint16_t *out, long n)"
        ),
        "{text}"
    );
    assert!(text.contains("vabdq_u16("), "{text}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let guard = project_copy("compile-bad");
    let home = guard.path();
    let cases = [
        (
            vec!["compile", "--target", "avx3", "a_u8 + b_u8"],
            "unknown target 'avx3'",
        ),
        (vec!["compile", "--target", "neon", "a_u8 & b_i16"], "u8"),
        (
            vec!["compile", "--target", "neon", "a_u8 +"],
            "expression: neither a Halide-style expression (1:7: expected an expression, found end of input) nor an s-expression (",
        ),
        // Without spaces the text reads as one symbol: the infix reading's error is given.
        (
            vec!["compile", "--target", "neon", "a_u8>>"],
            "expression:1:7: expected an expression, found end of input",
        ),
        (
            vec!["compile", "--target", "neon", "z + 1", "--var", "z"],
            "--var z: expected NAME:TYPE",
        ),
        (
            vec!["compile", "--target", "neon", "a_u8", "--emit", "asm"],
            "--emit asm",
        ),
        (
            vec!["compile", "--target", "neon", "cast<uint9_t>(a_u16)"],
            "unknown type 'uint9_t' in cast<uint9_t>",
        ),
        (
            vec!["compile", "--target", "neon", "saturating_cast + a_u8"],
            "'saturating_cast' is a function, not a value",
        ),
        // An expression may start with '-', an unknown option is still one.
        (
            vec!["compile", "--target", "neon", "--bogus"],
            "unexpected argument '--bogus'",
        ),
    ];
    for (args, needle) in cases {
        let out = isadb(home, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A declared variable takes its type from --var.
    let out = isadb(
        home,
        &[
            "--json",
            "compile",
            "--target",
            "neon",
            "u8(min(z, 255))",
            "--var",
            "z:u16",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(selected(&json(&out)), ["vqmovn_u16"]);
}

/// `compile --json` on neon; the report.
fn compile_json(home: &std::path::Path, expr: &str, extra: &[&str]) -> Value {
    compile_json_on(home, "neon", expr, extra)
}

/// `compile --json` of `expr` on `target` with the `extra` arguments; its report.
fn compile_json_on(home: &std::path::Path, target: &str, expr: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--json", "compile", "--target", target, expr];
    args.extend_from_slice(extra);
    let out = isadb(home, &args);
    assert!(
        out.status.success(),
        "{expr} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

const AVERAGE: &str = "u8((u16(a_u8) + u16(b_u8) + 1) / 2)";

/// No saturating narrowing of 64-bit lanes before AVX-512: a clamp by `vpcmpgtq` and selects
/// (of the operand with its sign bit flipped for unsigned lanes), then the even dwords of the
/// clamped lanes, found among the moves as a truncation is (both were scalarized). Not a case
/// of `select/x86-avx2.txt`: in a batch of that file the selects are `vpblendvb`s (a comparison
/// mask rewrite another case's comparison brings), alone `vpand`, `vpandn` and `vpor`. At one
/// lane the clamp of signed lanes (two bounds' emulated comparisons and blends, cost 12) costs
/// more than the lane's scalar saturation (4), which is taken; of unsigned lanes too (one
/// bound: two xors, `pcmpgtq`, three blends, cost 8), since extraction also weighs one-lane
/// operators at the cost of their scalar code.
#[test]
fn a_saturating_narrowing_of_64_bit_lanes_is_a_clamp_and_moves_on_avx2() {
    let guard = project_copy("compile-sat64");
    for (expr, scalar) in [
        ("i32_sat(a_i64)", "sat-cast at i32x1"),
        ("u32_sat(a_i64)", "sat-cast at u32x1"),
        ("u32_sat(a_u64)", "sat-cast at u32x1"),
    ] {
        let report = compile_json_on(
            guard.path(),
            "x86-avx2",
            expr,
            &["--lanes", "1", "--no-cache"],
        );
        assert_eq!(report["scalarized"], serde_json::json!([scalar]), "{expr}");
        assert_eq!(report["cost"], serde_json::json!(4.0), "{expr}");
    }
    for expr in ["i32_sat(a_i64)", "u32_sat(a_u64)"] {
        let report = compile_json_on(guard.path(), "x86-avx2", expr, &["--no-cache"]);
        let calls = selected(&report);
        assert_eq!(
            report["scalarized"],
            serde_json::json!([]),
            "{expr}: {calls:?}"
        );
        assert!(
            calls.contains(&"_mm256_cmpgt_epi64".to_string()),
            "{expr}: {calls:?}"
        );
        assert!(
            calls
                .ends_with(&["_mm256_shuffle_epi32", "_mm256_permute4x64_epi64"].map(String::from)),
            "{expr}: {calls:?}"
        );
    }
}

#[test]
fn the_s_expression_form_selects_as_the_halide_form() {
    let guard = project_copy("compile-sexpr");
    let infix = compile_json(guard.path(), AVERAGE, &["--no-cache"]);
    let sexpr = compile_json(
        guard.path(),
        "(cast u8 (shr (add (add (cast u16 a_u8) (cast u16 b_u8)) 1) 1))",
        &["--no-cache"],
    );
    assert_eq!(selected(&infix), ["vrhaddq_u8"]);
    assert_eq!(selected(&sexpr), selected(&infix));
    assert_eq!(sexpr["result"], infix["result"]);
}

#[test]
fn selection_cache_answers_the_same_expression_again() {
    let guard = project_copy("compile-cache");
    let home = guard.path();
    let first = compile_json(home, AVERAGE, &[]);
    assert_eq!(first["cached"], false);
    assert!(first["rewrites"].as_u64().unwrap() > 0);
    // Spelled differently, the same elaborated expression.
    let second = compile_json(home, "u8((u16(a_u8)+u16(b_u8)+1)/2)", &[]);
    assert_eq!(second["cached"], true);
    assert_eq!(second["steps"], first["steps"]);
    assert_eq!(second["outputs"], first["outputs"]);
    assert_eq!(second["cost"], first["cost"]);
    assert_eq!(second["rewrites"], Value::Null);
    let text = isadb(home, &["compile", "--target", "neon", AVERAGE]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("from the selection cache"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    assert_eq!(
        compile_json(home, AVERAGE, &["--no-cache"])["cached"],
        false
    );
    assert_eq!(
        compile_json(home, AVERAGE, &["--lanes", "8"])["cached"],
        false
    );
    assert_eq!(
        compile_json(home, AVERAGE, &["--lanes", "8"])["cached"],
        true
    );

    // The cache is not a committed table: not exported, and a rebuilt database starts empty.
    let exported = home.join("exported");
    assert!(isadb(home, &["db", "export", exported.to_str().unwrap()])
        .status
        .success());
    assert!(exported.join("rules.csv").exists());
    assert!(!exported.join("selection_cache.csv").exists());
    assert!(isadb(home, &["db", "build"]).status.success());
    assert_eq!(compile_json(home, AVERAGE, &[])["cached"], false);
}

#[test]
fn a_corrupt_cache_row_is_selected_again_and_overwritten() {
    let guard = project_copy("compile-cache-corrupt");
    let home = guard.path();
    let first = compile_json(home, AVERAGE, &[]);
    let db = Database::open(Project::at(home).db).unwrap();
    let term = "SELECT term FROM selection_cache";
    let stored: String = db.conn().query_row(term, [], |r| r.get(0)).unwrap();
    let corrupted = db
        .conn()
        .execute(
            "UPDATE selection_cache SET term = '(I_no_such_instruction'",
            [],
        )
        .unwrap();
    assert_eq!(corrupted, 1);
    let again = compile_json(home, AVERAGE, &[]);
    assert_eq!(again["cached"], false);
    assert_eq!(again["steps"], first["steps"]);
    let rewritten: String = db.conn().query_row(term, [], |r| r.get(0)).unwrap();
    assert_eq!(rewritten, stored);
    assert_eq!(compile_json(home, AVERAGE, &[])["cached"], true);
}

#[test]
fn a_cache_row_edited_into_another_term_is_caught_on_random_inputs() {
    let guard = project_copy("compile-cache-edited");
    let home = guard.path();
    let first = compile_json(home, AVERAGE, &[]);
    let db = Database::open(Project::at(home).db).unwrap();
    // Still a term over the catalog's instructions, but a truncating halving add.
    let edited = db
        .conn()
        .execute(
            "UPDATE selection_cache SET term = replace(term, 'I_vrhaddq_u8', 'I_vhaddq_u8')",
            [],
        )
        .unwrap();
    assert_eq!(edited, 1);
    let term: String = db
        .conn()
        .query_row("SELECT term FROM selection_cache", [], |r| r.get(0))
        .unwrap();
    assert!(term.contains("I_vhaddq_u8"), "{term}");
    let again = compile_json(home, AVERAGE, &[]);
    assert_eq!(again["cached"], false);
    assert_eq!(again["steps"], first["steps"]);
    assert_eq!(compile_json(home, AVERAGE, &[])["cached"], true);
}

/// The fingerprint a `compile` process keeps in the database for the next one is the one the
/// catalog hashes to, and any change to the rules forgets it.
#[test]
fn a_kept_catalog_fingerprint_is_the_catalogs_and_is_forgotten_when_a_rule_changes() {
    let guard = project_copy("compile-kept-fingerprint");
    let home = guard.path();
    compile_json(home, AVERAGE, &["--no-cache"]);
    let db = Database::open(Project::at(home).db).unwrap();
    let kept = || db.meta("catalog_fingerprint neon").unwrap();
    let by_the_binary = kept().expect("the compile process kept its catalog's fingerprint");
    // This test's own executable is another isadb: it hashes the catalog itself.
    let selector = Selector::load(&Project::at(home), Target::parse("neon").unwrap()).unwrap();
    let fingerprint = &selector.catalog.fingerprint;
    assert_eq!(fingerprint.len(), 64);
    assert!(
        by_the_binary.ends_with(&format!("\n{fingerprint}")),
        "{by_the_binary}"
    );
    let changed = db
        .conn()
        .execute("UPDATE rules SET status = status WHERE id = 1", [])
        .unwrap();
    assert_eq!(changed, 1);
    assert_eq!(kept(), None);
}

/// `compile --batch FILE --target neon --jobs JOBS --json`.
fn neon_batch(home: &std::path::Path, file: &std::path::Path, jobs: &str) -> Output {
    isadb(
        home,
        &[
            "--json",
            "compile",
            "--batch",
            file.to_str().unwrap(),
            "--target",
            "neon",
            "--jobs",
            jobs,
        ],
    )
}

/// The instructions a batch entry calls, by name.
fn entry_calls(entry: &Value) -> Vec<&str> {
    entry["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().split('(').next().unwrap())
        .collect()
}

/// A case as a JSONL line of a batch (its target and lanes).
fn batch_line(case: &Case) -> String {
    let lanes = case.extra.get(1).map(|l| format!(", \"lanes\": {l}"));
    format!(
        "{{\"expr\": {}, \"target\": \"{}\"{}}}",
        serde_json::to_string(&case.expression).unwrap(),
        case.target,
        lanes.unwrap_or_default()
    )
}

/// Halide's `simd_op_check` expressions (tests/compile/op_check/), compiled in one batch per
/// target: each selects exactly its intrinsics, proven, none scalarized.
#[test]
fn halide_simd_op_check_expressions_select_their_instructions() {
    let guard = project_copy("compile-op-check");
    let home = guard.path();
    let cases = cases("op_check");
    let mut targets: Vec<&str> = cases.iter().map(|c| c.target.as_str()).collect();
    targets.dedup();
    let mut wrong = Vec::new();
    for target in targets {
        let of_target: Vec<&Case> = cases.iter().filter(|c| c.target == target).collect();
        let lines: Vec<String> = of_target.iter().map(|c| batch_line(c)).collect();
        let file = home.join(format!("{target}.jsonl"));
        std::fs::write(&file, lines.join("\n")).unwrap();
        let out = neon_batch(home, &file, "2");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = json(&out);
        let entries = report["expressions"].as_array().unwrap();
        assert_eq!(entries.len(), of_target.len());
        for (case, entry) in of_target.iter().zip(entries) {
            if entry_calls(entry) != case.selected
                || entry["proof"].is_null()
                || entry["scalarized"].as_array().is_none_or(|s| !s.is_empty())
            {
                wrong.push(format!("{}: {entry}", case.at));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(cases.len() >= 430, "{} cases", cases.len());
}

#[test]
fn a_batch_selects_what_compile_selects_for_every_selection_file() {
    let guard = project_copy("compile-batch");
    let home = guard.path();
    let cases = cases("select");
    // JSONL for every case (its target and lanes), and one expression that cannot elaborate.
    let mut lines: Vec<String> = cases.iter().map(batch_line).collect();
    lines.push("# a comment, then a plain line for --target".to_string());
    lines.push("a_u8 & b_i16".to_string());
    let file = home.join("batch.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = neon_batch(home, &file, "2");
    // The expression that does not elaborate fails alone: exit 1, every other one selected.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let entries = report["expressions"].as_array().unwrap();
    assert_eq!(entries.len(), cases.len() + 1);
    assert_eq!(report["failed"], 1);
    let last = &entries[cases.len()];
    assert_eq!(last["line"], cases.len() + 2);
    assert!(last["error"].as_str().unwrap().contains("u8"), "{last}");
    // A chunk's shared e-graph may break a tie of equal cost otherwise than the case's own
    // program (checked against `compile` alone); anything else is wrong.
    let mut wrong = Vec::new();
    let mut ties = Vec::new();
    for (case, entry) in cases.iter().zip(entries) {
        if entry["proof"].is_null() {
            wrong.push(format!("{}: {entry}", case.at));
        } else if entry_calls(entry) != case.selected {
            let alone = compile_case(home, case, &["--no-cache"]);
            match alone["cost"] == entry["cost"] {
                true => ties.push(case.at.clone()),
                false => wrong.push(format!("{}: {entry}, alone {}", case.at, alone["cost"])),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        ties.len() * 50 <= cases.len(),
        "ties broken otherwise: {ties:?}"
    );
    assert!(report["programs"].as_u64().unwrap() < cases.len() as u64);

    // Bad batch files: one line naming the file and line, exit 2.
    let bad = [
        ("{\"expr\": 3}", "bad.jsonl:1: not a batch JSON object"),
        (
            "{\"expr\": \"a_u8\", \"target\": \"arm\"}",
            "bad.jsonl:1: target: unknown target 'arm'",
        ),
        (
            "\n\na_u8 + b_u8",
            "bad.jsonl:3: a plain expression needs --target",
        ),
        ("# nothing", "bad.jsonl: no expressions in the batch"),
    ];
    let path = home.join("bad.jsonl");
    for (text, needle) in bad {
        std::fs::write(&path, text).unwrap();
        let out = isadb(home, &["compile", "--batch", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{text}: {err}");
        assert!(err.contains(needle), "{text}: {err}");
    }
}

/// Three NEON expressions whose rules together once made one lowering iteration grow the
/// e-graph from 212,000 tuples to 113 million (70 s, 13 GB: a lane-wise operator on the low
/// lanes of values that share them, a node per pair): the cap on an iteration's matches stops
/// that program early, the chunk is split, and each selects as it does alone.
#[test]
fn a_batch_whose_rules_join_many_pairs_selects_in_bounded_steps() {
    let guard = project_copy("compile-batch-pairs");
    let home = guard.path();
    let file = home.join("pairs.txt");
    std::fs::write(
        &file,
        "u8_sat((u32(x_u16) + 8) / 16)\nu8((u32(x_u16) + 128) >> 8)\nu8(clamp(x_i16, 0, 255))\n",
    )
    .unwrap();
    let out = neon_batch(home, &file, "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let calls: Vec<Vec<&str>> = report["expressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(entry_calls)
        .collect();
    assert_eq!(
        calls,
        [
            vec!["vqrshrn_n_u16"],
            vec!["vaddhn_u16"],
            vec!["vqmovun_s16"]
        ],
        "{report}"
    );
}
