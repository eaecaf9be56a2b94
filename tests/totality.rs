//! Totality: every IR operator at every element type selects a proven sequence on every target
//! (by vector instructions or by scalarizing lanes), walked in-process on a representative
//! part of the table (`isadb bench totality` walks all of it, telling direct lowerings from
//! rules besides); and scalarized selections run on
//! real inputs natively, under qemu-aarch64 and under qemu-hexagon.

mod common;

use common::{isadb, project_copy, tools};
use isadb::totality::{cells, lane_counts, walk, Detail};
use isadb::{Coverage, Elem, Project, Target, Toolchain};
use serde_json::Value;

/// Every operator at every type at one register's lanes, and every operator at one type (a
/// different one per operator, so each type is walked at every lane count) at the other lane
/// counts of the table, on one target (a test per target, so the harness walks two at once).
fn every_operator_at_every_type_selects_a_proven_sequence_on(name: &str) {
    let target = Target::parse(name).unwrap();
    let guard = project_copy(&format!("totality-{name}"));
    let project = Project::at(guard.path());
    let all = cells(target);
    let types = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32"];
    let subset: Vec<_> = all
        .iter()
        .filter(|c| {
            let elem = Elem::parse(&c.elem).unwrap();
            let register = lane_counts(target, elem)[1];
            let kind = all.iter().position(|d| d.op == c.op).unwrap();
            c.lanes == register || types[kind % types.len()] == c.elem
        })
        .cloned()
        .collect();
    let walked = walk(&project, target, subset, Detail::Covered, &mut |_, _| {}).unwrap();
    let c = walked.counts();
    let table = format!(
        "{}: {} cells, {} by vector instructions, {} scalarized, {} failing\n",
        target.name,
        walked.cells.len(),
        c.vector,
        c.scalarized,
        c.failed
    );
    assert!(walked.cells.len() > 400, "{}", walked.cells.len());
    // Scalarizing is the last resort, not the rule.
    assert!(c.vector > 2 * c.scalarized, "{table}");
    let failing: Vec<String> = walked
        .cells
        .iter()
        .filter_map(|(cell, coverage)| match coverage {
            Coverage::Failed(e) => Some(format!(
                "{} {} at {} lanes: {e}",
                target.name, cell.expression, cell.lanes
            )),
            _ => None,
        })
        .collect();
    eprint!("{table}");
    assert!(failing.is_empty(), "{}\n{table}", failing.join("\n"));
}

#[test]
fn every_operator_at_every_type_selects_a_proven_sequence_on_x86_avx2() {
    every_operator_at_every_type_selects_a_proven_sequence_on("x86-avx2");
}

#[test]
fn every_operator_at_every_type_selects_a_proven_sequence_on_x86_avx512() {
    every_operator_at_every_type_selects_a_proven_sequence_on("x86-avx512");
}

#[test]
fn every_operator_at_every_type_selects_a_proven_sequence_on_neon() {
    every_operator_at_every_type_selects_a_proven_sequence_on("neon");
}

#[test]
fn every_operator_at_every_type_selects_a_proven_sequence_on_hvx() {
    every_operator_at_every_type_selects_a_proven_sequence_on("hvx");
}

/// With [`Detail::DirectOrRules`] (as `bench totality` walks) each covered cell is told
/// apart: a lowering alone, the rules, or scalarized lanes; never left untold.
#[test]
fn a_detailed_walk_tells_direct_lowerings_from_rules_and_scalarizing() {
    let neon = Target::parse("neon").unwrap();
    let guard = project_copy("totality-detail");
    let project = Project::at(guard.path());
    let some: Vec<_> = cells(neon)
        .into_iter()
        .filter(|c| c.elem == "i16" && c.lanes == 8)
        .filter(|c| ["add", "div", "max", "sat-cast u8", "reduce-add 2"].contains(&c.op.as_str()))
        .collect();
    assert_eq!(some.len(), 5);
    let walked = walk(&project, neon, some, Detail::DirectOrRules, &mut |_, _| {}).unwrap();
    let of = |op: &str| &walked.cells.iter().find(|(c, _)| c.op == op).unwrap().1;
    assert_eq!(of("add"), &Coverage::Direct);
    assert_eq!(of("max"), &Coverage::Direct);
    assert!(
        matches!(of("div"), Coverage::Scalarized(ops) if ops.iter().any(|o| o.starts_with("div"))),
        "{:?}",
        of("div")
    );
    let c = walked.counts();
    assert_eq!((c.vector, c.failed), (0, 0), "{:?}", walked.cells);
    assert_eq!(c.direct + c.rules + c.scalarized, 5);
}

/// The cells of the table name every operator kind at every type it is defined on.
#[test]
fn the_table_covers_every_operator_type_and_lane_count() {
    let neon = Target::parse("neon").unwrap();
    let all = cells(neon);
    let ops: std::collections::BTreeSet<String> = all
        .iter()
        .map(|c| c.op.split(' ').next().unwrap().to_string())
        .collect();
    for op in [
        "add",
        "sub",
        "mul",
        "div",
        "mod",
        "neg",
        "and",
        "or",
        "xor",
        "not",
        "shl",
        "shr",
        "min",
        "max",
        "abs",
        "popcount",
        "clz",
        "sqrt",
        "sgn",
        "floor",
        "ceil",
        "trunc",
        "round",
        "round-away",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "select",
        "cast",
        "sat-cast",
        "bitcast",
        "broadcast",
        "concat",
        "slice",
        "interleave",
        "shuffle",
        "lookup",
        "reduce-add",
    ] {
        assert!(ops.contains(op), "{op} missing from {ops:?}");
    }
    // Casts: every ordered pair of distinct integer types, at each of the four lane counts.
    assert_eq!(
        all.iter().filter(|c| c.op.starts_with("cast ")).count(),
        56 * 4
    );
    // Division at every type, remainder at every integer type.
    assert_eq!(all.iter().filter(|c| c.op == "div").count(), 9 * 4);
    assert_eq!(all.iter().filter(|c| c.op == "mod").count(), 8 * 4);
    assert_eq!(lane_counts(neon, Elem::U16), vec![1, 8, 16, 32]);
    let hvx = Target::parse("hvx").unwrap();
    assert_eq!(lane_counts(hvx, Elem::U8), vec![1, 128, 256, 512]);
}

/// Scalarized selections, alone and between vector instructions (bool lanes crossing in the
/// target's mask form), run on random inputs and equal the interpreter's lanes. On HVX (v67:
/// no f32 instructions) f32 arithmetic is always scalarized.
#[test]
fn scalarized_selections_run_and_equal_the_interpreter() {
    let guard = project_copy("totality-run");
    let cases: [(&str, &str, &str, bool); 18] = [
        ("x86-avx2", "(popcount a_u64)", "4", false),
        ("x86-avx2", "(div a_i8 b_i8)", "32", true),
        ("x86-avx512", "(mod a_i64 (add b_i64 c_i64))", "8", true),
        ("neon", "(mod (div a_i16 b_i16) c_i16)", "8", true),
        ("hvx", "(mod a_i32 b_i32)", "32", true),
        ("x86-avx2", "(add (popcount a_u64) b_u64)", "8", false),
        ("x86-avx2", "(clz (shr a_i64 b_i64))", "4", false),
        (
            "x86-avx512",
            "(select (lt c_u64 d_u64) (popcount a_u64) b_u64)",
            "8",
            false,
        ),
        ("x86-avx2", "(sqrt (div a_f32 b_f32))", "8", false),
        ("neon", "(clz a_u64)", "2", false),
        ("neon", "(concat a_u8 (broadcast 2 b_u8))", "8", false),
        ("neon", "(compress (lt c_u16 d_u16) a_u16)", "8", false),
        (
            "hvx",
            "(clmod a_u8 (expand (gt c_u8 d_u8) b_u8))",
            "128",
            false,
        ),
        ("neon", "(add (sat-cast i8 a_u64) b_i8)", "16", false),
        ("neon", "(reduce-add 2 (div a_f32 b_f32))", "4", false),
        ("hvx", "(div a_f32 b_f32)", "32", true),
        (
            "hvx",
            "(select (lt c_f32 d_f32) (sqrt a_f32) (min a_f32 b_f32))",
            "32",
            true,
        ),
        (
            "hvx",
            "(select (gt c_i32 d_i32) (sat-cast i32 a_i64) b_i32)",
            "32",
            false,
        ),
    ];
    let mut scalarized_somewhere = 0;
    for (target, expression, lanes, must_scalarize) in cases {
        let t = Target::parse(target).unwrap();
        if !tools(Toolchain::of(t.isa).unwrap()) {
            continue;
        }
        let out = isadb(
            guard.path(),
            &[
                "--json",
                "compile",
                "--target",
                target,
                expression,
                "--lanes",
                lanes,
                "--no-cache",
                "--run",
                "24",
            ],
        );
        assert!(
            out.status.success(),
            "{target} {expression}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let run = report["run"].as_str().unwrap_or_default();
        let scalarized = report["scalarized"].as_array().unwrap();
        if must_scalarize {
            assert!(!scalarized.is_empty(), "{target} {expression}: {report}");
        }
        if !scalarized.is_empty() {
            scalarized_somewhere += 1;
            let steps = report["steps"].as_array().unwrap();
            assert!(
                steps
                    .iter()
                    .any(|s| s["asm"].as_str().unwrap().starts_with("scalarized ")),
                "{report}"
            );
        }
        match report["not_run"].as_str() {
            None => assert!(
                run.contains("lanes equal the interpreter's"),
                "{target} {expression}: {run}"
            ),
            Some(why) => eprintln!("{target} {expression}: compiled, not run here: {why}"),
        }
    }
    if std::env::var("ISADB_REQUIRE_TOOLS").as_deref() == Ok("1") {
        assert!(scalarized_somewhere >= 2, "{scalarized_somewhere}");
    }
}

/// The printed sequence names the scalarized operator with its lanes and its cost per lane.
#[test]
fn a_scalarized_operator_is_printed_and_costed_per_lane() {
    let guard = project_copy("totality-print");
    let out = isadb(
        guard.path(),
        &[
            "compile",
            "--target",
            "hvx",
            "(div a_f32 b_f32)",
            "--lanes",
            "32",
            "--no-cache",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("scalarized div (32 lanes)"), "{text}");
    // 32 lanes at 3 each, and 2 x 32 operand lanes extracted at 1 each.
    assert!(text.contains("cost 160"), "{text}");
    assert!(
        text.contains("scalarized (no instruction sequence covers them): div at f32x32"),
        "{text}"
    );
}
