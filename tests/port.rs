//! `isadb port`: an instruction of one ISA selected for another, proven, and run.

mod common;

use common::{isadb, json, project_copy, selected, tools};
use isadb::Toolchain;

#[test]
fn an_x86_intrinsic_ports_to_neon_and_back_proven_and_run() {
    let guard = project_copy("port");
    let home = guard.path();
    // SSE's rounding average is NEON's urhadd; the shift's immediate is given.
    let cases: [(&[&str], &[&str]); 4] = [
        (&["_mm_avg_epu8", "--target", "neon"], &["vrhaddq_u8"]),
        (&["vrhaddq_u8", "--target", "x86-avx2"], &["_mm_avg_epu8"]),
        (
            &["_mm_slli_epi16", "--target", "neon", "--imm", "3"],
            &["vshlq_n_u16"],
        ),
        (
            &["_mm_packs_epi32", "--target", "neon"],
            &["vqmovn_s32", "vqmovn_s32"],
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--json", "port"];
        all.extend_from_slice(args);
        let out = isadb(home, &all);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = json(&out);
        assert_eq!(selected(&report), expected, "{args:?}: {report}");
        assert_eq!(
            report["scalarized"].as_array().unwrap().len(),
            0,
            "{report}"
        );
    }
    // Run on both sides' hardware: the NEON port under qemu, the x86 one natively, each
    // against the interpreter of the source instruction's semantics.
    let runs: [(&str, &str, Toolchain); 2] = [
        ("_mm_madd_epi16", "neon", Toolchain::Neon),
        ("vqdmulhq_s16", "x86-avx2", Toolchain::X86),
    ];
    for (name, target, toolchain) in runs {
        if !tools(toolchain) {
            continue;
        }
        let out = isadb(
            home,
            &["--json", "port", name, "--target", target, "--run", "20"],
        );
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = json(&out);
        let run = report["run"].as_str().unwrap_or_default().to_string();
        // A CPU without AVX2 compiles the port and says why it did not run it.
        let expected = if report["not_run"].is_null() {
            "lanes equal the interpreter's"
        } else {
            "did not run it"
        };
        assert!(run.contains(expected), "{name}: {run}");
    }
}

#[test]
fn bad_port_requests_are_one_line_errors() {
    let guard = project_copy("port-bad");
    let home = guard.path();
    let cases: [(&[&str], &str); 4] = [
        (
            &["port", "_mm_avg_epu9", "--target", "neon"],
            "unknown instruction '_mm_avg_epu9' (did you mean '_mm_avg_epu8'?)",
        ),
        (
            &["port", "_mm_slli_epi16", "--target", "neon"],
            "_mm_slli_epi16 takes 1 immediate (n in 0..=255), got 0 --imm",
        ),
        (
            &["port", "_mm_slli_epi16", "--target", "neon", "--imm", "300"],
            "operand n is an immediate in 0..=255, got 300",
        ),
        (
            &["port", "_mm_avg_epu8", "--target", "arm"],
            "unknown target 'arm'",
        ),
    ];
    for (args, needle) in cases {
        let out = isadb(home, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
