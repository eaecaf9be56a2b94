//! `isadb synth` end to end: a small search split into shards whose CSV rows
//! `isadb db import --merge` merges gives the same rules as the unsharded run, every rule is
//! proven, and `verify-rules` proves the synthesized rules like the hand-written ones.

mod common;

use common::{isadb, project_copy};
use std::path::Path;

/// The synthesized rules of a project: (name, lhs, rhs, predicate, kind, target, status, types).
fn synthesized(home: &Path) -> Vec<String> {
    let db = isadb::Database::open(isadb::Project::at(home).db).unwrap();
    let mut rows = db
        .text_rows(
            "SELECT name || ' | ' || lhs || ' | ' || rhs || ' | ' || coalesce(predicate, '') || ' | ' || kind
               || ' | ' || coalesce(target, '') || ' | ' || status || ' | ' || coalesce(types_proven, '')
             FROM rules WHERE provenance = 'synthesized'",
        )
        .unwrap()
        .into_iter()
        .map(|r| r[0].clone())
        .collect::<Vec<_>>();
    rows.sort();
    rows
}

/// Rules without their name, status and claimed types (the name hashes the types). A type is
/// claimed, and a rule proven rather than left unknown, when z3 answers within a time budget,
/// which a loaded machine can miss in one run and not in the other.
fn unclaimed(rules: &[String]) -> Vec<String> {
    let mut out: Vec<String> = rules
        .iter()
        .map(|r| {
            let fields: Vec<&str> = r.split(" | ").collect();
            let lhs = fields[1].split_once(": ").map_or(fields[1], |(_, l)| l);
            format!("{lhs} | {}", fields[2..fields.len() - 2].join(" | "))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

const SMALL: [&str; 8] = [
    "--types",
    "u8",
    "--targets",
    "neon",
    "--max-size",
    "3",
    "--lower-size",
    "3",
];

#[test]
fn shards_merged_equal_one_run_and_verify_rules_proves_them() {
    let whole = project_copy("synth-whole");
    let out = isadb(&whole, &[&["synth"][..], &SMALL].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = synthesized(whole.path());
    assert!(expected.len() > 10, "{expected:?}");
    // None refuted (the committed rules of the other pieces include a few z3 left unknown).
    assert!(
        expected.iter().all(|r| !r.contains(" | refuted | ")),
        "{expected:?}"
    );
    // Strength reduction, generalised over its literal and over element types.
    assert!(
        expected
            .iter()
            .any(|r| r.contains("x * c0 | x << c1 | c0 == 1 << c1 | simplify")),
        "{expected:?}"
    );
    // The cast workload's sign extension in place, as a pair of shifts (u16: logical, a mask).
    assert!(
        expected
            .iter()
            .any(|r| r.contains("(x << 8) >> 8 | x & 255 |  | simplify")),
        "{expected:?}"
    );
    // The committed CSV holds them.
    let csv = std::fs::read_to_string(whole.path().join("rules.db/rules.csv")).unwrap();
    assert!(csv.contains(",synthesized,"));

    let sharded = project_copy("synth-sharded");
    for k in ["1/2", "2/2"] {
        let dir = sharded.path().join(format!("shard-{}", &k[..1]));
        let dir_text = dir.display().to_string();
        let args = [&["synth", "--shard", k, "--out", &dir_text][..], &SMALL].concat();
        let out = isadb(&sharded, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = isadb(&sharded, &["db", "import", "--merge", &dir_text]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The same rules, up to what z3's time budget decides (see `unclaimed`).
    assert_eq!(
        unclaimed(&synthesized(sharded.path())),
        unclaimed(&expected)
    );

    // A second run finds nothing changed and searches nothing (its five pieces: lift u8,
    // casts u16, signedness u16, bits u8, lower neon u8).
    let out = isadb(&whole, &[&["synth"][..], &SMALL].concat());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.matches("unchanged").count() == 5, "{text}");
    assert_eq!(synthesized(whole.path()), expected);

    let name = expected
        .iter()
        .find(|r| r.contains("x * c0 | x << c1"))
        .and_then(|r| r.split(" | ").next())
        .unwrap()
        .to_string();
    let out = isadb(&whole, &["verify-rules", "--force", "--rule", &name]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success() && text.contains("1 proven"), "{text}");
}

#[test]
fn lowering_search_joins_terms_past_its_size_bound() {
    // AVX2 has no halving add of 16-bit lanes: the terms enumerated up to 5 nodes, joined by an
    // invertible operator whose other operand's fingerprint is looked up, give Hacker's
    // Delight's four instructions (9 nodes), proven (searched again: the committed rules hold
    // them too).
    let home = project_copy("synth-joined");
    let args = [
        "synth",
        "--force",
        "--types",
        "i16",
        "--targets",
        "x86-avx2",
        "--max-size",
        "2",
        "--lower-size",
        "5",
    ];
    let out = isadb(&home, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = synthesized(home.path());
    for expected in [
        "halving_add(x_i16, y_i16) | ((x_i16 ^ y_i16) >> 1) + (x_i16 & y_i16) |  | lower | x86 | proven",
        "rounding_halving_add(x_i16, y_i16) | (x_i16 | y_i16) - ((x_i16 ^ y_i16) >> 1) |  | lower | x86 | proven",
    ] {
        assert!(
            rules.iter().any(|r| r.contains(expected)),
            "{expected} not in {rules:?}"
        );
    }
}
