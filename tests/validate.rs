//! `isadb validate` end to end: the shipped specs of every ISA against real execution (x86
//! natively, NEON and HVX under qemu), sample specs covering each C type mapping, a deliberately
//! wrong semantics that must be caught, one-instruction compile failures, caching, and the harness
//! generator itself.
//!
//! A missing compiler or emulator makes the affected instructions "skipped"; with
//! `ISADB_REQUIRE_TOOLS=1` (as in CI) it fails the run instead.

use isadb::testing::harness::{self, Harness, Job};
use isadb::testing::{build_and_run, check_tools, generate_inputs, missing, Host};
use isadb::Toolchain;
use serde_json::Value;

use std::process::Output;
use std::sync::Mutex;

mod common;

use common::{isadb, project_copy, root, scratch};
use tempfile::TempDir;

/// The per-ISA tests of the shipped specs take turns: each runs the compilers on both cores.
static REAL_LOCK: Mutex<()> = Mutex::new(());

/// A home with the shared prelude and the given spec files (path under specs/, text).
fn spec_home(name: &str, files: &[(&str, &str)]) -> TempDir {
    let guard = scratch(name);
    let dir = guard.path();
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::copy(
        root().join("specs/prelude.spec"),
        dir.join("specs/prelude.spec"),
    )
    .unwrap();
    for (path, text) in files {
        let p = dir.join("specs").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    guard
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            text(&o.stdout),
            text(&o.stderr)
        )
    })
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn have(target: Toolchain) -> bool {
    check_tools(target).is_ok()
}

fn result<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no result for {name}"))
}

/// Validates one ISA of the shipped specs with 24 inputs: no mismatches, and every instruction
/// with an intrinsic is either validated or skipped with a reason.
fn check_shipped(isa: &str, target: Toolchain) {
    let _turn = REAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let guard = project_copy(&format!("real-{isa}"));
    let home = guard.path();
    let out = isadb(
        home,
        &[
            "validate", "--isa", isa, "--inputs", "24", "--force", "--json",
        ],
    );
    let report = json(&out);
    let s = &report["isas"][0];
    let mismatches: Vec<String> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "mismatch")
        .map(|r| format!("{}: {}", r["name"], r["detail"]))
        .collect();
    assert!(
        mismatches.is_empty(),
        "{isa} mismatches:\n{}",
        mismatches.join("\n")
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(s["isa"], isa);
    assert_eq!(n(&s["mismatched"]), 0);
    assert_eq!(
        n(&s["validated"]),
        n(&s["with_intrinsic"]) - n(&s["skipped"]),
        "{s}"
    );
    if n(&s["with_intrinsic"]) > 0 && have(target) {
        assert!(n(&s["validated"]) > 0, "{s}");
    }
    let csv = std::fs::read_to_string(home.join("rules.db/validation_results.csv")).unwrap();
    assert!(csv.starts_with("sem_hash,instruction_name,isa,inputs,status,detail,validated_at\n"));
}

#[test]
fn shipped_x86_specs_match_execution() {
    check_shipped("x86", Toolchain::X86);
}

#[test]
fn shipped_neon_specs_match_execution() {
    check_shipped("neon", Toolchain::Neon);
}

#[test]
fn shipped_hvx_specs_match_execution() {
    check_shipped("hvx", Toolchain::Hvx);
}

const X86_SAMPLES: &str = r#"
(family add (isa x86) (feature sse2) (intrinsic "_mm_add_epi16") (asm "paddw")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (add a b)) (cost 1))
(family mask-add (isa x86) (feature avx512bw) (intrinsic "_mm512_mask_add_epi16") (asm "vpaddw")
  (operands (src (vec 32 i16)) (k (vec 32 bool)) (a (vec 32 i16)) (b (vec 32 i16)))
  (semantics (select k (add a b) src)) (cost 1))
(family slli (isa x86) (feature sse2) (intrinsic "_mm_slli_epi16") (asm "psllw")
  (operands (a (vec 8 i16)) (n (imm i32 0 255))) (semantics (shl a (cast i16 (broadcast 8 n)))) (cost 1))
(family cmpgt (isa x86) (feature avx512vl) (intrinsic "_mm_cmpgt_epi32_mask") (asm "vpcmpgtd")
  (operands (a (vec 4 i32)) (b (vec 4 i32))) (semantics (gt a b)) (cost 1))
"#;

const NEON_SAMPLES: &str = r#"
(family add (isa neon) (feature neon) (intrinsic "vaddq_s16") (asm "add")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (add a b)) (cost 1))
(family dot (isa neon) (feature dotprod) (intrinsic "vdotq_u32") (asm "udot")
  (operands (acc (vec 4 u32)) (a (vec 16 u8)) (b (vec 16 u8)))
  (semantics (add acc (reduce-add 4 (mul (widen4 a) (widen4 b))))) (cost 1))
(family tbl2 (isa neon) (feature neon) (intrinsic "vqtbl2q_u8") (asm "tbl")
  (operands (t (vec 32 u8) (c "uint8x16x2_t")) (i (vec 16 u8))) (semantics (lookup t i)) (cost 1))
(family bsl (isa neon) (feature neon) (intrinsic "vbslq_u16") (asm "bsl")
  (operands (m (vec 8 bool) (c "uint16x8_t")) (a (vec 8 u16)) (b (vec 8 u16))) (semantics (select m a b)) (cost 1))
(family shl (isa neon) (feature neon) (intrinsic "vshlq_n_s32") (asm "shl")
  (operands (a (vec 4 i32)) (n (imm i32 0 31))) (semantics (shl a (cast i32 (broadcast 4 n)))) (cost 1))
(family add64 (isa neon) (feature neon) (intrinsic "vadd_s64") (asm "add")
  (operands (a i64) (b i64)) (semantics (add a b)) (cost 1))
"#;

const HVX_SAMPLES: &str = r#"
(family add (isa hvx) (feature hvxv60) (intrinsic "Q6_Vh_vadd_VhVh") (asm "vadd")
  (operands (a (vec 64 i16)) (b (vec 64 i16))) (semantics (add a b)) (cost 1))
(family wadd (isa hvx) (feature hvxv60) (intrinsic "Q6_Wh_vadd_VubVub") (asm "vadd")
  (operands (a (vec 128 u8)) (b (vec 128 u8))) (semantics (deal (add (widen a) (widen b)))) (cost 1))
(family cmpgt (isa hvx) (feature hvxv60) (intrinsic "Q6_Q_vcmp_gt_VhVh") (asm "vcmp.gt")
  (operands (a (vec 64 i16)) (b (vec 64 i16))) (semantics (gt a b)) (cost 1))
(family mux (isa hvx) (feature hvxv60) (intrinsic "Q6_V_vmux_QVV") (asm "vmux")
  (operands (q (vec 128 bool)) (a (vec 128 u8)) (b (vec 128 u8))) (semantics (select q a b)) (cost 1))
(family rmpy (isa hvx) (feature hvxv60) (intrinsic "Q6_Vw_vrmpy_VubRb") (asm "vrmpy")
  (operands (a (vec 128 u8)) (r (vec 4 i8) (c "int")))
  (semantics (reduce-add 4 (mul (cast i32 a) (cast i32 (broadcast 32 r))))) (cost 1))
(family v68 (isa hvx) (feature hvxv68) (intrinsic "Q6_Vh_vsub_VhVh") (asm "vsub")
  (operands (a (vec 64 i16)) (b (vec 64 i16))) (semantics (sub a b)) (cost 1))
"#;

/// Masks, immediates, register pairs, predicates, packed scalars, table structs, vector masks
/// and NEON's one-lane 64-bit vectors all validate; what cannot run here is skipped with a reason.
#[test]
fn sample_specs_cover_every_c_type_mapping() {
    let home = spec_home(
        "samples",
        &[
            ("x86/s.spec", X86_SAMPLES),
            ("neon/s.spec", NEON_SAMPLES),
            ("hvx/s.spec", HVX_SAMPLES),
        ],
    );
    let out = isadb(&home, &["validate", "--inputs", "32", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // What this CPU lacks is decided by validation's own feature table.
    let host = Host::detect();
    let specs = isadb::load_dir(&home.path().join("specs")).unwrap();
    for r in report["results"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let target = Toolchain::of(r["isa"].as_str().unwrap().parse().unwrap()).unwrap();
        let ins = specs.instructions.iter().find(|i| i.name == name).unwrap();
        let expect_skip = if name == "Q6_Vh_vsub_VhVh" {
            Some("emulator lacks hvxv68".to_string())
        } else if !have(target) {
            Some("tool unavailable".to_string())
        } else {
            missing(target, &ins.feature, &host)
        };
        match expect_skip {
            Some(why) => {
                assert_eq!(r["status"], "skipped", "{r}");
                assert!(r["detail"].as_str().unwrap().starts_with(&why), "{r}");
            }
            None => assert_eq!(r["status"], "validated", "{r}"),
        }
        assert_eq!(n(&r["inputs"]), 32);
    }
    assert_eq!(report["results"].as_array().unwrap().len(), 16);
    // A second run reuses every verdict and rewrites nothing.
    let csv = std::fs::read(home.path().join("rules.db/validation_results.csv")).unwrap();
    let again = json(&isadb(&home, &["validate", "--inputs", "32", "--json"]));
    for s in again["isas"].as_array().unwrap() {
        assert_eq!(n(&s["ran"]), 0, "{s}");
    }
    assert_eq!(n(&again["rows_changed"]), 0);
    let forced = json(&isadb(
        &home,
        &[
            "validate", "--isa", "hvx", "--inputs", "32", "--force", "--json",
        ],
    ));
    assert_eq!(
        n(&forced["isas"][0]["ran"]),
        if have(Toolchain::Hvx) { 5 } else { 0 }
    );
    assert_eq!(
        std::fs::read(home.path().join("rules.db/validation_results.csv")).unwrap(),
        csv,
        "re-running must not change the CSV"
    );
}

/// `_mm_add_epi16` specified as a subtraction is caught: exit 1, and the report names the
/// instruction, every operand's lanes, the expected and the actual lanes.
#[test]
fn wrong_semantics_is_a_mismatch() {
    if !have(Toolchain::X86) {
        return;
    }
    let spec = r#"
(family add (isa x86) (feature sse2) (intrinsic "_mm_add_epi16") (asm "paddw")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (sub a b)) (cost 1))
(family sub (isa x86) (feature sse2) (intrinsic "_mm_sub_epi16") (asm "psubw")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (sub a b)) (cost 1))
"#;
    let home = spec_home("wrong", &[("x86/w.spec", spec)]);
    let out = isadb(&home, &["validate", "--isa", "x86", "--inputs", "24"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report = text(&out.stdout);
    assert!(report.contains("MISMATCH _mm_add_epi16 (x86)"), "{report}");
    for needle in [
        "    a        = [",
        "    b        = [",
        "    expected = [",
        "    actual   = [",
        "differing lanes: ",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    assert_eq!(
        report.matches("  input ").count(),
        3,
        "at most three examples:\n{report}"
    );
    assert!(!report.contains("MISMATCH _mm_sub_epi16"));
    let out = isadb(
        &home,
        &[
            "validate", "--isa", "x86", "--inputs", "24", "--force", "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    assert_eq!(n(&r["isas"][0]["mismatched"]), 1);
    assert_eq!(n(&r["isas"][0]["validated"]), 1);
    let bad = result(&r, "_mm_add_epi16");
    assert_eq!(bad["status"], "mismatch");
    assert!(n(&bad["mismatched_inputs"]) > 12, "{bad}");
    let m = &bad["mismatches"][0];
    let (a, b) = (
        m["operands"][0][1].as_str().unwrap(),
        m["operands"][0][1].as_str().unwrap(),
    );
    assert!(a.starts_with('[') && b.starts_with('['));
    assert_ne!(m["expected"], m["actual"]);
    // The verdict is recorded and exported; a cached mismatch still fails the run.
    let csv = std::fs::read_to_string(home.path().join("rules.db/validation_results.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",_mm_add_epi16,x86,24,mismatch,")),
        "{csv}"
    );
    assert_eq!(
        isadb(&home, &["validate", "--isa", "x86"]).status.code(),
        Some(1)
    );
}

/// In one batch, a wrong C type and an unknown intrinsic are each reported as not compiling,
/// and their neighbours still validate.
#[test]
fn a_bad_intrinsic_does_not_sink_its_batch() {
    if !have(Toolchain::X86) {
        return;
    }
    let spec = r#"
(family add (isa x86) (feature sse2) (intrinsic "_mm_add_epi16") (asm "paddw")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (add a b)) (cost 1))
(family ctype (isa x86) (feature sse2) (intrinsic "_mm_adds_epi16") (asm "paddsw")
  (operands (a (vec 8 i16) (c "__m128")) (b (vec 8 i16)))
  (semantics (sat-cast i16 (add (cast i32 a) (cast i32 b)))) (cost 1))
(family nosuch (isa x86) (feature sse2) (intrinsic "_mm_frobnicate_epi16") (asm "pfrob")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (add a b)) (cost 1))
(family sub (isa x86) (feature sse2) (intrinsic "_mm_sub_epi16") (asm "psubw")
  (operands (a (vec 8 i16)) (b (vec 8 i16))) (semantics (sub a b)) (cost 1))
"#;
    let home = spec_home("badc", &[("x86/b.spec", spec)]);
    let out = isadb(
        &home,
        &["validate", "--isa", "x86", "--inputs", "8", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let r = json(&out);
    assert_eq!(result(&r, "_mm_add_epi16")["status"], "validated");
    assert_eq!(result(&r, "_mm_sub_epi16")["status"], "validated");
    for name in ["_mm_adds_epi16", "_mm_frobnicate_epi16"] {
        let x = result(&r, name);
        assert_eq!(x["status"], "skipped");
        let d = x["detail"].as_str().unwrap();
        assert!(
            d.starts_with("does not compile: ") && d.contains(name),
            "{d}"
        );
    }
    assert_eq!(r["isas"][0]["skip_reasons"]["does not compile"], 2);
    // Usage errors exit 2.
    assert_eq!(
        isadb(&home, &["validate", "--isa", "sve"]).status.code(),
        Some(2)
    );
    let unknown = isadb(&home, &["validate", "--instr", "_mm_add_epi61"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains("did you mean '_mm_add_epi16'"),
        "{}",
        text(&unknown.stderr)
    );
    let one = json(&isadb(
        &home,
        &["validate", "--instr", "_mm_sub_epi16", "--force", "--json"],
    ));
    assert_eq!(one["results"].as_array().unwrap().len(), 1);
}

/// The generator emits one call site per immediate combination and reads every input from
/// stdin: the C source does not depend on the number of inputs.
#[test]
fn harness_generator() {
    let home = spec_home(
        "gen",
        &[("x86/s.spec", X86_SAMPLES), ("hvx/s.spec", HVX_SAMPLES)],
    );
    let specs = isadb::load_dir(&home.path().join("specs")).unwrap();
    let job = |name: &str, target: Toolchain, count: usize| {
        let ins = specs.instruction(name).unwrap();
        let h = Harness::new(target, ins).unwrap();
        let set = generate_inputs(&ins.operands, count, 1, name);
        Job::new(h, &set, vec![])
    };
    let small = [
        job("_mm_slli_epi16", Toolchain::X86, 10),
        job("_mm512_mask_add_epi16", Toolchain::X86, 10),
    ];
    let large = [
        job("_mm_slli_epi16", Toolchain::X86, 1000),
        job("_mm512_mask_add_epi16", Toolchain::X86, 1000),
    ];
    let src_small = harness::source(Toolchain::X86, &small.iter().collect::<Vec<_>>());
    let src_large = harness::source(Toolchain::X86, &large.iter().collect::<Vec<_>>());
    // Immediates: 10 inputs give 8 combinations (lo, hi, 1, bits-1, bits, bits+1, ...); 1000 give 32.
    for call in [
        "_mm_slli_epi16(v0, 0)",
        "_mm_slli_epi16(v0, 255)",
        "_mm_slli_epi16(v0, 15)",
        "_mm_slli_epi16(v0, 16)",
        "_mm_slli_epi16(v0, 17)",
    ] {
        assert!(src_small.text.contains(call), "missing {call}");
    }
    assert_eq!(src_large.text.matches("r = _mm_slli_epi16(").count(), 32);
    let strip_cases = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("case "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip_cases(&src_small.text),
        strip_cases(&src_large.text),
        "inputs must not be compiled in"
    );
    assert!(src_small
        .text
        .contains("__mmask32 v1; ISADB_LOAD(__mmask32, v1, p + 64);"));
    assert!(src_small
        .text
        .contains("r = _mm512_mask_add_epi16(v0, v1, v2, v3);"));
    assert_eq!(src_small.lines.len(), 2);
    // stdin: header, then per job its count and records.
    let input = harness::stdin_bytes(&small.iter().collect::<Vec<_>>());
    assert_eq!(
        input.len(),
        8 + 4 + 10 * small[0].harness.record + 4 + 10 * small[1].harness.record
    );
    assert_eq!(&input[..4], &harness::MAGIC_IN.to_le_bytes());
    // HVX: predicates go through Q6_Q_vand_VR / Q6_V_vand_QR, pairs are 256-byte records.
    let hvx = [
        job("Q6_V_vmux_QVV", Toolchain::Hvx, 4),
        job("Q6_Q_vcmp_gt_VhVh", Toolchain::Hvx, 4),
        job("Q6_Wh_vadd_VubVub", Toolchain::Hvx, 4),
    ];
    let src = harness::source(Toolchain::Hvx, &hvx.iter().collect::<Vec<_>>());
    assert!(src.text.contains("Q6_Q_vand_VR(t_, -1)"));
    assert!(src.text.contains("Q6_V_vand_QR(r, -1)"));
    assert!(src.text.contains("aligned(256)"));
    assert_eq!(hvx[2].harness.out_record, 256);
    if have(Toolchain::Hvx) {
        let out = build_and_run(
            Toolchain::Hvx,
            &src.text,
            &["-O0".to_string()],
            tempfile::tempdir().unwrap().path(),
            &harness::stdin_bytes(&hvx.iter().collect::<Vec<_>>()),
        )
        .unwrap();
        let parsed = harness::parse_output(&hvx.iter().collect::<Vec<_>>(), &out);
        assert!(parsed.complete);
        assert_eq!(parsed.outputs[2].len(), 4 * 256);
    }
}
