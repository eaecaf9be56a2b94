//! `isadb kernel`: small kernels of every family (the lifted List form and C) compiled for every
//! target, proven, and run on random inputs (natively, under qemu-aarch64; AVX-512 only where the
//! CPU has it); a wrong rule caught by `verify-rules` and, forced into the database as proven,
//! by translation validation; bad input as one-line errors with exit 2.

mod common;

use common::{isadb, json, project_copy};
use isadb::testing::{check_tools, kernel_family as family, missing, Host};
use isadb::Toolchain;
use std::process::Output;

/// A private copy of the project (specs, queries, committed tables) in a temporary directory.
fn project() -> tempfile::TempDir {
    project_copy("kernel")
}

/// Writes `text` to `name` in `dir`; its path.
fn write_file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).trim().to_string()
}

const MAT_MUL_2X2: &str = "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))) (+ (* (Get A 0) (Get B 1)) (* (Get A 1) (Get B 3))) (+ (* (Get A 2) (Get B 0)) (* (Get A 3) (Get B 2))) (+ (* (Get A 2) (Get B 1)) (* (Get A 3) (Get B 3))))";

/// Whether this machine can run code for the target (tools present; the CPU has the feature).
fn runnable(target: &str) -> bool {
    let (tc, feature) = match target {
        "neon" => (Toolchain::Neon, "neon"),
        "x86-avx2" => (Toolchain::X86, "avx2+fma"),
        "x86-avx512" => (Toolchain::X86, "avx512f"),
        _ => (Toolchain::X86, ""),
    };
    if let Err(e) = check_tools(tc) {
        assert!(
            std::env::var("ISADB_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "{e}"
        );
        return false;
    }
    missing(tc, feature, &Host::detect()).is_none()
}

#[test]
fn small_kernels_of_every_family_compile_prove_and_run_on_every_target() {
    let home = project();
    let dir = home.path().join("kernels");
    std::fs::create_dir_all(&dir).unwrap();
    let mm = dir.join("mat-mul_2x2_2x2.sexp");
    std::fs::write(&mm, MAT_MUL_2X2).unwrap();
    let all = ["dsp", "x86-avx2", "x86-avx512", "neon"];
    let mut files = vec![(mm, 4usize, &all[..])];
    for (k, outputs, targets) in [
        (family::conv(3, 3, 2, 2), 16, &all[..]),
        (family::q_prod(), 7, &all[..3]),
        (family::qr_decomp(3), 18, &["dsp", "x86-avx2", "neon"][..]),
        (family::mat_mul(2, 3, 3), 6, &all[1..2]),
    ] {
        let p = dir.join(format!("{}.c", k.name));
        std::fs::write(&p, &k.c).unwrap();
        files.push((p, outputs, targets));
    }
    for (file, outputs, targets) in &files {
        for &target in targets.iter() {
            let o = isadb(
                home.path(),
                &[
                    "--json",
                    "kernel",
                    file.to_str().unwrap(),
                    "--target",
                    target,
                    "--cost-model",
                    "diospyros",
                    "--run",
                    "20",
                ],
            );
            let what = format!("{} on {target}", file.display());
            assert!(
                o.status.success() || !runnable(target),
                "{what}: {}",
                stderr(&o)
            );
            if !o.status.success() {
                continue;
            }
            let r = json(&o);
            assert_eq!(r["outputs"], *outputs as u64, "{what}");
            assert_eq!(
                r["proof"]["outputs"], *outputs as u64,
                "{what}: every output proven"
            );
            let run = &r["run"];
            assert_eq!(run["passed"], true, "{what}: {run}");
            let how = run["how"].as_str().unwrap();
            if runnable(target) {
                assert!(how == "native" || how == "qemu-aarch64", "{what}: {how}");
                // A C kernel's drop-in ran against the source compiled as written.
                if file.extension().is_some_and(|x| x == "c") {
                    assert_eq!(run["source"]["compared"], true, "{what}: {run}");
                } else {
                    assert!(run["source"].is_null(), "{what}: {run}");
                }
            } else {
                assert!(how.starts_with("compiled only: CPU lacks"), "{what}: {how}");
            }
            let diospyros = r["costs"]["diospyros"].as_f64().unwrap();
            let scalar = r["costs"]["scalar_diospyros"].as_f64().unwrap();
            assert!(
                diospyros < scalar,
                "{what}: vectorized {diospyros} vs scalar {scalar}"
            );
        }
    }
    // Diospyros's own optimum for mat-mul 2x2 on its 4-wide DSP: one multiply, one MAC.
    let o = isadb(
        home.path(),
        &[
            "--json",
            "kernel",
            files[0].0.to_str().unwrap(),
            "--cost-model",
            "diospyros",
        ],
    );
    let r = json(&o);
    assert!(
        (r["costs"]["diospyros"].as_f64().unwrap() - 2.052).abs() < 1e-9,
        "{r}"
    );
}

#[test]
fn emits_the_egglog_that_ran_and_c_with_intrinsics() {
    let home = project();
    let mm = home.path().join("mm.sexp");
    std::fs::write(&mm, MAT_MUL_2X2).unwrap();
    let o = isadb(
        home.path(),
        &["kernel", mm.to_str().unwrap(), "--emit", "egglog"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "(datatype V (Vec S S S S)",
        "(ruleset compile)",
        "; vec-mac (imported)",
        "(run expand",
        "(run compile",
        "(run optimize",
        "(set (Root 0) (Concat t",
        "(union t",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    let o = isadb(
        home.path(),
        &[
            "kernel",
            mm.to_str().unwrap(),
            "--target",
            "x86-avx2",
            "--emit",
            "c",
        ],
    );
    let c = String::from_utf8_lossy(&o.stdout);
    assert!(c.contains("#include <immintrin.h>") && c.contains("void kernel(const float *restrict A, const float *restrict B, float *restrict out)"), "{c}");
    assert!(c.contains("_mm256_"), "{c}");
    // Its 2x2 lanes stay in the low 128-bit block: permuted within it (vpermilps, not the
    // cross-block vpermps) and stored as the block, with no buffer for the tail.
    assert!(
        c.contains("_mm256_permutevar_ps(") && !c.contains("permutevar8x32"),
        "{c}"
    );
    assert!(
        c.contains("_mm_storeu_ps(out + 0, _mm256_castps256_ps128(") && !c.contains("tail"),
        "{c}"
    );
    let o = isadb(
        home.path(),
        &[
            "kernel",
            mm.to_str().unwrap(),
            "--target",
            "neon",
            "--emit",
            "c",
        ],
    );
    let c = String::from_utf8_lossy(&o.stdout);
    assert!(c.contains("vfmaq_f32") || c.contains("vmulq_f32"), "{c}");
    // q-prod's vectors mix lanes of its four arrays and literals: on AVX2 they are loads,
    // broadcasts and permutes blended together, never an element inserted lane by lane.
    let q = home.path().join("q-prod.c");
    std::fs::write(&q, family::q_prod().c).unwrap();
    let o = isadb(
        home.path(),
        &[
            "kernel",
            q.to_str().unwrap(),
            "--target",
            "x86-avx2",
            "--emit",
            "c",
        ],
    );
    let c = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && c.contains("_mm256_blend_ps("), "{c}");
    let inserts: Vec<&str> = c
        .split("_mm256_setr_ps(")
        .skip(1)
        .map(|args| &args[..args.find(')').unwrap_or(args.len())])
        .filter(|args| args.contains('['))
        .collect();
    assert!(inserts.is_empty(), "lanes inserted one by one: {inserts:?}");
}

#[test]
fn a_wrong_rule_is_refuted_and_if_forced_in_caught_by_translation_validation() {
    let home = project();
    // A MAC that forgets its accumulator: cheaper than the real one, so extraction wants it.
    std::fs::write(
        home.path().join("specs/dsp/wrong.rules"),
        "(rule vec-mac-wrong (Vec (+ (* b c) a) ...) (VecMul (Vec b ...) (Vec c ...)))\n",
    )
    .unwrap();
    let o = isadb(home.path(), &["verify-rules", "--rule", "vec-mac-wrong"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("vec-mac-wrong refuted: 2 lanes, lane 0: counterexample"),
        "{out}"
    );
    // Forced into the database as proven (a verifier bug, a tampered rules.csv): the compile fails.
    let csv = home.path().join("rules.db/rules.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let forced: Vec<String> = text
        .lines()
        .map(|l| {
            if l.contains(",vec-mac-wrong,") {
                l.replace(",refuted,", ",proven,")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_ne!(
        forced.join("\n") + "\n",
        text,
        "the refuted row is in rules.csv"
    );
    std::fs::write(&csv, forced.join("\n") + "\n").unwrap();
    let mm = home.path().join("mm.sexp");
    std::fs::write(&mm, MAT_MUL_2X2).unwrap();
    let o = isadb(
        home.path(),
        &["kernel", mm.to_str().unwrap(), "--cost-model", "diospyros"],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let e = stderr(&o);
    assert!(
        e.starts_with("isadb: translation validation: output ")
            && e.contains("is not equal to its spec: counterexample"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// A C kernel's emitted code ends with a drop-in of the source's own signature, and `--run`
/// calls it beside the source compiled as written on the same arguments: they agree (outputs
/// read before written start from the caller's values, or from zero with `--zero-outputs`); a
/// header the lifting does not read that changes the meaning is caught; a source that does not
/// compile beside the harness is said not compared.
#[test]
fn a_c_kernel_gets_a_drop_in_run_against_the_source_compiled_as_written() {
    let home = project();
    let write = |name: &str, text: &str| write_file(home.path(), name, text);
    let blend = write(
        "blend.c",
        "#include <math.h>\nfloat twice(float x) { return 2.0f * x; }\n\
void blend(const float *in, float scale, float w[2][2], float out[4]) {\n\
  for (int i = 0; i < 4; i++) out[i] += twice(in[i]) * scale + w[i / 2][i % 2] * sqrtf(in[i] * in[i]);\n\
  w[1][1] = in[0] - in[3];\n}\n",
    );
    let o = isadb(
        home.path(),
        &["kernel", &blend, "--target", "dsp", "--emit", "c"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c = String::from_utf8_lossy(&o.stdout).to_string();
    // The output read before written is an input named `out`: the flat output is `out__`.
    assert!(
        c.contains("void blend_isadb(const float *restrict scale, const float *restrict in, const float *restrict w, const float *restrict out, float *restrict out__) {"),
        "{c}"
    );
    assert!(
        c.contains("void blend(const float *in, float scale, float w[2][2], float out[4]) {\n  float isadb_out[8];\n  blend_isadb("),
        "{c}"
    );
    assert!(
        c.contains("memcpy((float *)w, isadb_out + 0, sizeof(float) * 4);"),
        "{c}"
    );
    assert!(
        c.contains("memcpy((float *)out, isadb_out + 4, sizeof(float) * 4);"),
        "{c}"
    );
    let run = |file: &str, extra: &[&str]| {
        let mut args = vec!["--json", "kernel", file, "--target", "dsp", "--run", "20"];
        args.extend(extra);
        isadb(home.path(), &args)
    };
    for extra in [&[][..], &["--zero-outputs"][..]] {
        let o = run(&blend, extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let r = json(&o);
        let source = &r["run"]["source"];
        assert_eq!(source["compared"], true, "{extra:?}: {r}");
        assert!(
            source["max_error"].as_f64().unwrap() <= 1e-3,
            "{extra:?}: {r}"
        );
        assert_eq!(r["run"]["passed"], true, "{extra:?}: {r}");
    }
    // An unsized output read past the elements it writes: the drop-in copies back only those
    // it writes (one here), the harness holds all four.
    let partial = write(
        "partial.c",
        "void partial(float *a, float *o) {\n  o[0] = a[0] + o[3];\n}\n",
    );
    let o = isadb(
        home.path(),
        &["kernel", &partial, "--target", "dsp", "--emit", "c"],
    );
    let c = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        c.contains("  memcpy((float *)o, isadb_out + 0, sizeof(float) * 1);\n}"),
        "{c}"
    );
    let r = json(&run(&partial, &[]));
    assert_eq!(r["run"]["source"]["compared"], true, "{r}");
    assert_eq!(r["run"]["passed"], true, "{r}");
    // The lifting skips `#include`: a header redefining sqrtf changes what gcc compiles.
    write("absolute.h", "#define sqrtf(x) (x)\n");
    let redefined = write(
        "redefined.c",
        "#include \"absolute.h\"\nvoid magnitude(float a[4], float o[4]) {\n  for (int i = 0; i < 4; i++) o[i] = sqrtf(a[i] * a[i]);\n}\n",
    );
    let o = run(&redefined, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["run"]["source"]["compared"], true, "{r}");
    assert!(r["run"]["max_error"].as_f64().unwrap() <= 1e-3, "{r}");
    let detail = r["run"]["source"]["detail"].as_str().unwrap();
    assert!(
        detail.contains(": drop-in ") && detail.contains("o["),
        "{detail}"
    );
    // `sgn` is the lifting's own; C has none, so the source does not link.
    let sign = write(
        "sign.c",
        "void sign(float a[4], float o[4]) {\n  for (int i = 0; i < 4; i++) o[i] = sgn(a[i]);\n}\n",
    );
    let o = run(&sign, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["run"]["source"]["compared"], false, "{r}");
    assert!(
        r["run"]["source"]["detail"]
            .as_str()
            .unwrap()
            .contains("was not compared"),
        "{r}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let home = project();
    let write = |name: &str, text: &str| write_file(home.path(), name, text);
    let cases = [
        (write("bad.sexp", "(List (+ (Get A 0) (Get B 0))"), vec![], "bad.sexp:1:1: unclosed '('"),
        (write("op.sexp", "(List (frob (Get A 0)))"), vec![], "op.sexp:1:7: unknown operator 'frob'"),
        (
            write("loop.c", "void kernel(float a[4], float o[4]) {\n  int i = 0;\n  while (i < 4) { o[i] = a[i]; i++; }\n}\n"),
            vec![],
            "loop.c:3:3: 'while' is outside the kernel subset",
        ),
        (
            write("data.c", "void kernel(float a[4], float o[4]) {\n  for (int i = 0; i < 4; i++) {\n    if (a[i] > 0.0f) o[i] = a[i];\n  }\n}\n"),
            vec![],
            "data.c:3:14: comparison '>' of input data is outside the kernel subset",
        ),
        (write("ok.sexp", MAT_MUL_2X2), vec!["--target", "avx9"], "--target avx9: unknown kernel target 'avx9'; one of dsp, x86-avx2, x86-avx512, neon"),
        (write("ok2.sexp", MAT_MUL_2X2), vec!["--cost-model", "fast"], "--cost-model fast: unknown cost model 'fast'; one of diospyros, isaria, target"),
    ];
    for (file, extra, want) in cases {
        let mut args = vec!["kernel", file.as_str()];
        args.extend(extra);
        let o = isadb(home.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(want), "{e} lacks {want}");
    }
}

/// The synthesized dialect rules of a `rules.csv`, as `LHS => RHS [status]`.
fn synthesized_dialect_rules(rules_csv: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(rules_csv).unwrap();
    let mut rules: Vec<String> = text
        .lines()
        .filter(|l| l.contains(",dsp,synthesized,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').skip(2).collect();
            format!("{} => {} [{}]", f[0], f[1], f[8])
        })
        .collect();
    rules.sort();
    rules
}

#[test]
fn synthesized_dialect_rules_are_found_again_proven_and_compile_kernels_alone() {
    let home = project();
    let mm = home.path().join("mm.sexp");
    std::fs::write(&mm, MAT_MUL_2X2).unwrap();
    // The committed synthesized rules alone vectorize mat-mul 2x2 to Diospyros's cost, proven.
    let o = isadb(
        home.path(),
        &[
            "--json",
            "kernel",
            mm.to_str().unwrap(),
            "--cost-model",
            "diospyros",
            "--rules",
            "synthesized",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert!(
        (j["costs"]["diospyros"].as_f64().unwrap() - 2.052).abs() < 1e-6,
        "{j}"
    );
    assert_eq!(j["proof"]["outputs"], 4, "{j}");
    let o = isadb(
        home.path(),
        &[
            "kernel",
            mm.to_str().unwrap(),
            "--rules",
            "synthesized",
            "--emit",
            "egglog",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("(synthesized)") && !text.contains("(imported)"),
        "{text}"
    );

    // A fresh search finds the same rules; every one proven, none with a bare wildcard as its
    // left side; the vectorizing, fusing and lane-shaping rules among them.
    let committed = synthesized_dialect_rules(&common::root().join("rules.db/rules.csv"));
    let o = isadb(
        home.path(),
        &["--json", "synth", "--dialect", "dsp", "--force"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert!(j["proven"].as_u64().unwrap() > 100, "{j}");
    let found = synthesized_dialect_rules(&home.path().join("rules.db/rules.csv"));
    assert_eq!(found, committed);
    for rule in [
        "(Vec (+ a b) ...) => (VecAdd (Vec a ...) (Vec b ...))",
        "(VecAdd a (VecMul b c)) => (VecMAC a b c)",
        "0 => (+ 0 0)",
        "(+ a 0) => a",
        "(VecAdd a b) => (VecAdd b a)",
    ] {
        let rule = format!("{rule} [proven]");
        assert!(found.contains(&rule), "{rule} not found among {found:#?}");
    }
    assert!(found.iter().all(|r| r.ends_with("[proven]")), "{found:#?}");
    assert!(!found
        .iter()
        .any(|r| r.starts_with(|c: char| c.is_ascii_lowercase())));
    let o = isadb(home.path(), &["synth", "--dialect", "dsp"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("unchanged"),
        "{}",
        stderr(&o)
    );
}
