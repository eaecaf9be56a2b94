//! `isadb compile`: the instructions selected for Pitchfork's and Halide's fixed-point patterns on
//! each target, the generated C run on real inputs (natively, under qemu-aarch64 and
//! qemu-hexagon), translation validation catching a wrong selection, and bad input.

mod common;

use common::{isadb, json, project_copy};
use isadb::database::{Database, Layout};
use isadb::select::{compile, validate, Catalog, Node, Target};
use isadb::validate::toolchain;
use serde_json::Value;
use std::collections::HashMap;
use std::rc::Rc;

/// The intrinsics of the selected sequence, in order.
fn selected(report: &Value) -> Vec<String> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["call"]
                .as_str()
                .unwrap()
                .split('(')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// (target, expression, extra arguments, the selected intrinsics in order).
const ACCEPTANCE: &[(&str, &str, &[&str], &[&str])] = &[
    // Pitchfork's Sobel filter.
    (
        "neon",
        "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)",
        &[],
        &["vaddl_u8", "vmlal_u8", "vaddl_u8", "vmlal_u8"],
    ),
    // On HVX the widening adds leave their pair dealt (even lanes low): one vshuff restores
    // the order. Cheaper than Pitchfork's vzxt + vmpa.acc (which the e-graph also holds).
    (
        "hvx",
        "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)",
        &[],
        &[
            "Q6_Wh_vadd_VubVub",
            "Q6_Wh_vaddacc_WhVubVub",
            "Q6_W_vshuff_VVR",
        ],
    ),
    (
        "hvx",
        "u16(a_u8) + u16(b_u8)*3 + u16(c_u8)",
        &[],
        &[
            "Q6_Wh_vadd_VubVub",
            "Q6_Wuh_vmpyacc_WuhVubVub",
            "Q6_W_vshuff_VVR",
        ],
    ),
    // With coefficients that are not both one, Pitchfork's vzxt + vmpa.acc (Rt.b = 3, 5, 3, 5).
    (
        "hvx",
        "u16(a_u8) + u16(b_u8)*3 + u16(c_u8)*5",
        &[],
        &[
            "Q6_Wuh_vzxt_Vub",
            "Q6_Wh_vmpaacc_WhWubRb",
            "Q6_W_vshuff_VVR",
        ],
    ),
    ("neon", "absd(a_u16, b_u16)", &[], &["vabdq_u16"]),
    (
        "hvx",
        "absd(a_u16, b_u16)",
        &[],
        &["Q6_Vuh_vabsdiff_VuhVuh"],
    ),
    (
        "x86-avx2",
        "absd(a_u16, b_u16)",
        &[],
        &["_mm256_subs_epu16", "_mm256_subs_epu16", "_mm256_or_si256"],
    ),
    ("neon", "u8(min(z_u16, 255))", &[], &["vqmovn_u16"]),
    (
        "x86-avx2",
        "u8(min(z_u16 >> 1, 255))",
        &[],
        &["_mm_srli_epi16", "_mm_srli_epi16", "_mm_packus_epi16"],
    ),
    (
        "hvx",
        "u8(min(z_u16 >> 1, 255))",
        &["--lanes", "128"],
        &[
            "Q6_Vuh_vlsr_VuhR",
            "Q6_Vuh_vlsr_VuhR",
            "Q6_Vub_vpack_VhVh_sat",
        ],
    ),
    // Half a register of result: the low half of a vpack of the value with itself.
    (
        "hvx",
        "u8(min(z_u16, 255))",
        &[],
        &["Q6_Vuh_vmin_VuhVuh", "Q6_Vub_vpack_VhVh_sat"],
    ),
    // vasr narrows two registers into interleaved lanes: deal the input first (at half a
    // register of result, deal the input with itself and store the low half).
    (
        "hvx",
        "u8_sat((i32(a_i16) + 8) / 16)",
        &["--lanes", "128"],
        &["Q6_W_vdeal_VVR", "Q6_Vub_vasr_VhVhR_rnd_sat"],
    ),
    (
        "hvx",
        "u8_sat((i32(a_i16) + 8) / 16)",
        &[],
        &["Q6_W_vdeal_VVR", "Q6_Vub_vasr_VhVhR_rnd_sat"],
    ),
    (
        "neon",
        "u8((u16(a_u8) + u16(b_u8) + 1) / 2)",
        &[],
        &["vrhaddq_u8"],
    ),
    (
        "hvx",
        "u8((u16(a_u8) + u16(b_u8) + 1) / 2)",
        &[],
        &["Q6_Vub_vavg_VubVub_rnd"],
    ),
    (
        "x86-avx2",
        "u8((u16(a_u8) + u16(b_u8) + 1) / 2)",
        &[],
        &["_mm256_avg_epu8"],
    ),
    (
        "neon",
        "u8(min(u16(a_u8) + u16(b_u8), 255))",
        &[],
        &["vqaddq_u8"],
    ),
    (
        "hvx",
        "u8(min(u16(a_u8) + u16(b_u8), 255))",
        &[],
        &["Q6_Vub_vadd_VubVub_sat"],
    ),
    (
        "x86-avx2",
        "u8(min(u16(a_u8) + u16(b_u8), 255))",
        &[],
        &["_mm256_adds_epu8"],
    ),
    (
        "neon",
        "i16_sat(i32(a_i16) + i32(b_i16))",
        &[],
        &["vqaddq_s16"],
    ),
    (
        "hvx",
        "i16_sat(i32(a_i16) + i32(b_i16))",
        &[],
        &["Q6_Vh_vadd_VhVh_sat"],
    ),
    (
        "x86-avx2",
        "i16_sat(i32(a_i16) + i32(b_i16))",
        &[],
        &["_mm256_adds_epi16"],
    ),
    (
        "neon",
        "i16_sat((i32(a_i16) * i32(b_i16) + (1 << 14)) / (1 << 15))",
        &[],
        &["vqrdmulhq_s16"],
    ),
    (
        "x86-avx2",
        "i16((i32(a_i16) * i32(b_i16) + 16384) >> 15)",
        &[],
        &["_mm256_mulhrs_epi16"],
    ),
    (
        "neon",
        "i8_sat((i32(a_i16) + 8) / 16)",
        &[],
        &["vqrshrn_n_s16"],
    ),
    ("neon", "a_i16 + i16(b_i8) * i16(c_i8)", &[], &["vmlal_s8"]),
    ("neon", "a_u16 + u16(absd(b_u8, c_u8))", &[], &["vabal_u8"]),
    (
        "neon",
        "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))",
        &[],
        &["vdotq_u32"],
    ),
    (
        "hvx",
        "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))",
        &[],
        &["Q6_Vuw_vrmpyacc_VuwVubVub"],
    ),
    (
        "x86-avx512",
        "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))",
        &[],
        &["_mm512_dpbusd_epi32"],
    ),
    (
        "hvx",
        "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))",
        &[],
        &["Q6_Vw_vrmpyacc_VwVubVb"],
    ),
    (
        "x86-avx2",
        "reduce_add(2, i32(a_i16) * i32(b_i16))",
        &[],
        &["_mm256_madd_epi16"],
    ),
];

#[test]
fn selects_the_fixed_point_instructions_on_every_target() {
    let home = project_copy("compile-acceptance");
    let mut wrong = Vec::new();
    for (target, expr, extra, want) in ACCEPTANCE {
        let mut args = vec!["--json", "compile", "--target", target, expr, "--no-cache"];
        args.extend_from_slice(extra);
        let out = isadb(&home, &args);
        assert!(
            out.status.success(),
            "{target} {expr}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = selected(&json(&out));
        if got != *want {
            wrong.push(format!(
                "{target} {expr}: selected {got:?}, expected {want:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn tools(target: toolchain::Target) -> bool {
    match toolchain::check_tools(target) {
        Ok(()) => true,
        Err(e) if std::env::var("ISADB_REQUIRE_TOOLS").as_deref() != Ok("1") => {
            eprintln!("skipping: {e}");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn generated_c_computes_the_expression_on_every_target() {
    let home = project_copy("compile-run");
    let cases = [
        ("x86-avx2", "absd(a_u16, b_u16)", &[][..]),
        ("x86-avx2", "u8(min(z_u16, 255))", &[]),
        (
            "x86-avx2",
            "i16((i32(a_i16) * i32(b_i16) + 16384) >> 15)",
            &[],
        ),
        (
            "x86-avx512",
            "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))",
            &[],
        ),
        ("neon", "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)", &[]),
        ("neon", "i8_sat((i32(a_i16) + 8) / 16)", &[]),
        (
            "neon",
            "acc_u32 + reduce_add(4, u32(a_u8) * u32(b_u8))",
            &[],
        ),
        ("hvx", "u16(a_u8) + u16(b_u8)*2 + u16(c_u8)", &[]),
        ("hvx", "u8(min(z_u16 >> 1, 255))", &["--lanes", "128"]),
        ("hvx", "u8(min(z_u16, 255))", &[]),
        ("hvx", "u8_sat((i32(a_i16) + 8) / 16)", &[]),
        ("hvx", "u16(a_u8) + u16(b_u8)*3 + u16(c_u8)", &[]),
        ("hvx", "acc_i32 + reduce_add(4, i32(a_u8) * i32(b_i8))", &[]),
    ];
    for (target, expr, extra) in cases {
        let t = Target::parse(target).unwrap();
        if !tools(t.toolchain()) {
            continue;
        }
        let mut args = vec!["--json", "compile", "--target", target, expr, "--run", "16"];
        args.extend_from_slice(extra);
        let out = isadb(&home, &args);
        assert!(
            out.status.success(),
            "{target} {expr}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let run = json(&out)["run"].as_str().unwrap().to_string();
        assert!(
            run.contains("lanes equal the interpreter's"),
            "{target} {expr}: {run}"
        );
    }
}

#[test]
fn translation_validation_rejects_a_wrong_selection() {
    let home = project_copy("compile-wrong");
    let layout = Layout::at(&home);
    let catalog = Catalog::load(&layout, Target::parse("neon").unwrap()).unwrap();
    let compiled = compile(
        &catalog,
        "u8((u16(a_u8) + u16(b_u8) + 1) / 2)",
        None,
        &HashMap::new(),
        None,
    )
    .unwrap();
    validate(&catalog, &compiled.input, &compiled.root).unwrap();
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
    let err = validate(&catalog, &compiled.input, &wrong)
        .unwrap_err()
        .to_string();
    assert!(err.contains("differs from the input"), "{err}");
}

#[test]
fn emits_the_egglog_program_and_c() {
    let home = project_copy("compile-emit");
    let out = isadb(
        &home,
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
        &home,
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
    let home = project_copy("compile-bad");
    let cases = [
        (
            vec!["compile", "--target", "avx3", "a_u8 + b_u8"],
            "unknown target 'avx3'",
        ),
        (vec!["compile", "--target", "neon", "a_u8 + b_u16"], "u8"),
        (
            vec!["compile", "--target", "neon", "a_u8 +"],
            "expression:1:",
        ),
        (
            vec!["compile", "--target", "neon", "z + 1", "--var", "z"],
            "--var z: expected NAME:TYPE",
        ),
        (
            vec!["compile", "--target", "neon", "a_u8", "--emit", "asm"],
            "--emit asm",
        ),
    ];
    for (args, needle) in cases {
        let out = isadb(&home, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A declared variable takes its type from --var.
    let out = isadb(
        &home,
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
    let mut args = vec!["--json", "compile", "--target", "neon", expr];
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

#[test]
fn selection_cache_answers_the_same_expression_again() {
    let home = project_copy("compile-cache");
    let first = compile_json(&home, AVERAGE, &[]);
    assert_eq!(first["cached"], false);
    assert!(first["rewrites"].as_u64().unwrap() > 0);
    // Spelled differently, the same elaborated expression.
    let second = compile_json(&home, "u8((u16(a_u8)+u16(b_u8)+1)/2)", &[]);
    assert_eq!(second["cached"], true);
    assert_eq!(second["steps"], first["steps"]);
    assert_eq!(second["outputs"], first["outputs"]);
    assert_eq!(second["cost"], first["cost"]);
    assert_eq!(second["rewrites"], Value::Null);
    let text = isadb(&home, &["compile", "--target", "neon", AVERAGE]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("from the selection cache"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    assert_eq!(
        compile_json(&home, AVERAGE, &["--no-cache"])["cached"],
        false
    );
    assert_eq!(
        compile_json(&home, AVERAGE, &["--lanes", "8"])["cached"],
        false
    );
    assert_eq!(
        compile_json(&home, AVERAGE, &["--lanes", "8"])["cached"],
        true
    );

    // The cache is not a committed table: not exported, and a rebuilt database starts empty.
    let exported = home.join("exported");
    assert!(isadb(&home, &["db", "export", exported.to_str().unwrap()])
        .status
        .success());
    assert!(exported.join("rules.csv").exists());
    assert!(!exported.join("selection_cache.csv").exists());
    assert!(isadb(&home, &["db", "build"]).status.success());
    assert_eq!(compile_json(&home, AVERAGE, &[])["cached"], false);
}

#[test]
fn a_corrupt_cache_row_is_selected_again_and_overwritten() {
    let home = project_copy("compile-cache-corrupt");
    let first = compile_json(&home, AVERAGE, &[]);
    let db = Database::open(Layout::at(&home).db).unwrap();
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
    let again = compile_json(&home, AVERAGE, &[]);
    assert_eq!(again["cached"], false);
    assert_eq!(again["steps"], first["steps"]);
    let rewritten: String = db.conn().query_row(term, [], |r| r.get(0)).unwrap();
    assert_eq!(rewritten, stored);
    assert_eq!(compile_json(&home, AVERAGE, &[])["cached"], true);
}

#[test]
fn a_cache_row_edited_into_another_term_is_caught_on_random_inputs() {
    let home = project_copy("compile-cache-edited");
    let first = compile_json(&home, AVERAGE, &[]);
    let db = Database::open(Layout::at(&home).db).unwrap();
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
    let again = compile_json(&home, AVERAGE, &[]);
    assert_eq!(again["cached"], false);
    assert_eq!(again["steps"], first["steps"]);
    assert_eq!(compile_json(&home, AVERAGE, &[])["cached"], true);
}
