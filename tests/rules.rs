//! Hand-written rewrite rules: unsound variants of every shipped rule are refuted by z3, the
//! shipped rules all verify, and wrong or malformed rule files give exit 1 or 2.

use isadb::testing::{elaborate, load_kernel_rules, load_rules, mutants, rule_macros, rule_types};
use isadb::{load_macros, prove_equivalent, Macros, Verdict};
use std::process::Output;

mod common;

use common::{isadb, root};

fn macros() -> Macros {
    rule_macros(&load_macros(&root().join("specs")).unwrap().macros).unwrap()
}

/// Every mutant of every shipped rule (at its first element type, one lane: the rules are lane-wise) is refuted.
#[test]
fn mutants_of_the_shipped_rules_are_refuted() {
    let rules = load_rules(&root().join("specs")).unwrap();
    let names: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    // Two threads, each with its own macros and z3 contexts (expressions are not Send).
    let chunks: Vec<Vec<String>> = (0..2)
        .map(|k| names.iter().skip(k).step_by(2).cloned().collect())
        .collect();
    let results: Vec<(
        usize,
        Vec<String>,
        std::collections::BTreeMap<String, usize>,
    )> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(move || {
                    let macros = macros();
                    let rules = load_rules(&root().join("specs")).unwrap();
                    let (mut n, mut bad, mut kinds) =
                        (0, Vec::new(), std::collections::BTreeMap::new());
                    for r in rules.iter().filter(|r| chunk.contains(&r.name)) {
                        let t = rule_types(r)[0];
                        let inst = elaborate(r, t, 1, &macros).unwrap();
                        for m in mutants(&inst) {
                            n += 1;
                            let kind = m
                                .what
                                .split(" at ")
                                .next()
                                .unwrap_or("")
                                .split(" -> ")
                                .next()
                                .unwrap_or("");
                            let kind = kind
                                .trim_start_matches("lhs: ")
                                .split(" of ")
                                .next()
                                .unwrap_or("")
                                .to_string();
                            *kinds.entry(kind).or_insert(0) += 1;
                            match prove_equivalent(&m.lhs, &m.rhs, m.predicate.as_deref(), 10_000)
                                .unwrap()
                            {
                                Verdict::Counterexample { .. } => {}
                                v => bad.push(format!("{} ({}): {v:?}", r.name, m.what)),
                            }
                        }
                    }
                    (n, bad, kinds)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: usize = results.iter().map(|(n, _, _)| n).sum();
    let mut kinds = std::collections::BTreeMap::new();
    for (_, _, k) in &results {
        for (name, c) in k {
            *kinds.entry(name.clone()).or_insert(0) += c;
        }
    }
    let bad: Vec<&String> = results.iter().flat_map(|(_, b, _)| b).collect();
    eprintln!("{total} mutants {kinds:?}, {} not refuted", bad.len());
    assert!(
        bad.is_empty(),
        "mutants not refuted:\n{}",
        bad.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(total >= 200, "only {total} mutants");
}

fn home(name: &str) -> tempfile::TempDir {
    common::project_copy(&format!("rules-{name}"))
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn shipped_rules_verify() {
    let home = home("shipped");
    let out = isadb(&home, &["verify-rules", "--jobs", "2", "--force"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let hand = load_rules(&root().join("specs")).unwrap();
    let csv = std::fs::read_to_string(home.path().join("rules.db/rules.csv")).unwrap();
    // The kernel rules: those of specs/dsp/ and those `synth --dialect dsp` found.
    let dialect_synthesized = csv.matches(",dsp,synthesized,").count();
    let kernel_rules =
        load_kernel_rules(&root().join("specs")).unwrap().len() + dialect_synthesized;
    let synthesized = csv.matches(",synthesized,").count() - dialect_synthesized;
    // Every hand-written rule is proven; a synthesized rule z3 cannot decide in its budget
    // stays unknown (unused by selection); none is refuted.
    for r in &hand {
        let row = csv
            .lines()
            .find(|l| l.contains(&format!(",{},", r.name)))
            .unwrap();
        assert!(row.contains(",proven,"), "{row}");
    }
    let summary = stdout
        .lines()
        .find(|l| !l.starts_with("kernel rules: ") && l.contains(" already proven (skipped)"))
        .unwrap_or_default();
    let counts: Vec<usize> = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let (proven, refuted, unknown) = (counts[0], counts[1], counts[2]);
    assert_eq!(refuted, 0, "{stdout}");
    assert_eq!(proven + unknown, hand.len() + synthesized, "{summary}");
    assert!(unknown * 100 < synthesized, "{summary}");
    assert!(
        stdout.contains(&format!("kernel rules: {kernel_rules} proven, 0 refuted")),
        "{stdout}"
    );
    assert_eq!(
        csv.matches(",proven,").count(),
        proven + kernel_rules,
        "{summary}"
    );
    assert!(
        std::fs::read_to_string(home.path().join("rules.db/verification_runs.csv"))
            .unwrap()
            .contains("verify-rules")
    );
    // Incremental: only the undecided are tried again, and a rebuild keeps the verdicts.
    let out = isadb(&home, &["db", "build"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = isadb(&home, &["verify-rules"]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains(&format!("{proven} already proven")),
        "{stdout}"
    );
    // `--json` prints one document covering both sets of rules.
    let out = isadb(&home, &["--json", "verify-rules"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {:?}", text(&out)));
    // The incremental run retried the undecided ones, and a loaded machine decides some of them
    // only then: every rule is either proven by now or still undecided, none refuted.
    let count = |key: &str| report[key].as_u64().unwrap() as usize;
    assert!(count("skipped") >= proven, "{report}");
    assert_eq!(count("refuted"), 0, "{report}");
    assert_eq!(
        count("skipped") + count("proven") + count("unknown"),
        proven + unknown,
        "{report}"
    );
    assert_eq!(report["kernel_rules"]["skipped"], kernel_rules, "{report}");
    assert_eq!(report["kernel_rules"]["refuted"], 0, "{report}");
}

#[test]
fn a_wrong_rule_is_refuted_with_a_counterexample() {
    let home = home("wrong");
    std::fs::write(
        home.path().join("specs/rules/wrong.rules"),
        "# truncating instead of saturating\nrule bad_sat_add for T in u8 i16: T(WT(x) + WT(y)) => saturating_add(x, y) [kind lift]\n",
    )
    .unwrap();
    let out = isadb(&home, &["verify-rules", "--rule", "bad_sat_add"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("bad_sat_add refuted: T = u8, 4 lanes: x_u8 = ["),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(home.path().join("rules.db/rules.csv")).unwrap();
    assert!(
        csv.contains("bad_sat_add") && csv.contains(",refuted,"),
        "{csv}"
    );
}

#[test]
fn a_malformed_rule_is_a_one_line_error() {
    let home = home("malformed");
    let cases = [
        (
            "rule a: x_u8 +* y_u8 => x_u8 [kind lift]\n",
            "specs/rules/bad.rules:1:15: ",
        ),
        (
            "\n\nrule b: x_u8 => y_u8 [kind lifting]\n",
            "specs/rules/bad.rules:3:",
        ),
        (
            "rule c for T in u8: WT(x) => x [kind simplify]\n",
            "specs/rules/bad.rules:1:",
        ),
        (
            "rule d: x_u8 + q => x_u8 [kind lift]\n",
            "specs/rules/bad.rules:1:16: ",
        ),
        (
            "rule e: x_u8 + * x_u8 => x_u8 [kind lift]\n",
            "specs/rules/bad.rules:1:16: unexpected token '*', expected an expression (reading a Halide-style expression)",
        ),
    ];
    for (rules, want) in cases {
        std::fs::write(home.path().join("specs/rules/bad.rules"), rules).unwrap();
        let out = isadb(&home, &["verify-rules"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{rules}: {stdout}{stderr}");
        let line = stderr.trim_end();
        assert!(
            line.starts_with(&format!("isadb: {want}")) && !line.contains('\n'),
            "{rules}: {stderr}"
        );
    }
}
