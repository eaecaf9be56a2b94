//! `isadb query` on the shipped database: the acceptance questions of the query issue, answered
//! from proven idiom facts.

use std::path::Path;
use std::process::Command;

fn query(text: &str) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .args([
            "--home",
            env!("CARGO_MANIFEST_DIR"),
            "--json",
            "query",
            text,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{text}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn names(rows: &[serde_json::Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["instruction"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dot_product_on_hvx_is_every_vrmpy_and_vdmpy_form_and_nothing_else() {
    let rows = query("dot-product on hvx");
    let found = names(&rows);
    for n in &found {
        assert!(
            n.contains("vrmpy") || n.contains("vdmpy"),
            "{n} is not a dot product"
        );
    }
    for want in [
        "Q6_Vuw_vrmpy_VubVub",
        "Q6_Vw_vrmpy_VubVb",
        "Q6_Vw_vrmpy_VbVb",
        "Q6_Vuw_vrmpyacc_VuwVubVub",
        "Q6_Vw_vrmpyacc_VwVubVb",
        "Q6_Vw_vrmpy_VubRb",
        "Q6_Vuw_vrmpy_VubRub",
        "Q6_Vw_vrmpyacc_VwVubRb",
        "Q6_Vh_vdmpy_VubRb",
        "Q6_Vh_vdmpyacc_VhVubRb",
        "Q6_Vw_vdmpy_VhRh_sat",
        "Q6_Vw_vdmpy_VhRuh_sat",
        "Q6_Vw_vdmpyacc_VwVhRh_sat",
        "Q6_Vw_vdmpyacc_VwVhRuh_sat",
        "Q6_Vw_vdmpy_VhVh_sat",
    ] {
        assert!(
            found.iter().any(|f| f == want),
            "missing {want} in {found:?}"
        );
    }
    let binding = rows
        .iter()
        .find(|r| r["instruction"] == "Q6_Vw_vrmpyacc_VwVubVb")
        .unwrap()["binding"]
        .clone();
    assert_eq!(binding, "i32 x u8 x i8 -> i32, 4-way");
    // The saturating forms by a scalar are saturating dot products, and not wrapping ones:
    // -32768 * -32768 twice overflows i32.
    let sat: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["instruction"] == "Q6_Vw_vdmpy_VhRh_sat")
        .collect();
    assert_eq!(sat.len(), 1, "{sat:?}");
    assert_eq!(sat[0]["idiom"], "dot_product_scalar_sat");
}

#[test]
fn dot_product_on_x86_is_madd_maddubs_and_vnni_with_mask_forms() {
    let found = names(&query("dot-product on x86"));
    let re = regex::Regex::new(r"^(_mm(256|512)?_(mask_|maskz_)?(madd_epi16|maddubs_epi16|dpbusds?(_avx)?_epi32|dpwssds?(_avx)?_epi32)|_mm_maddu?b?s?_pi16|_m_pmaddwd)$").unwrap();
    for n in &found {
        assert!(re.is_match(n), "{n} is not pmaddwd/pmaddubsw/vpdp*");
    }
    for want in [
        "_mm_madd_epi16",
        "_mm512_maskz_madd_epi16",
        "_mm256_maddubs_epi16",
        "_mm512_dpbusd_epi32",
        "_mm256_mask_dpbusds_epi32",
        "_mm_dpwssd_epi32",
        "_mm512_maskz_dpwssds_epi32",
        "_mm256_dpbusd_avx_epi32",
        "_mm_madd_pi16",
        "_m_pmaddwd",
        "_mm_maddubs_pi16",
    ] {
        assert!(found.iter().any(|f| f == want), "missing {want}");
    }
}

/// A compile target's name asks for the instructions `compile --target` selects from: on
/// x86-avx2, SSE..AVX2 without MMX or AVX-512; a question's words around the form are read too.
#[test]
fn compile_targets_are_their_features_and_questions_are_read() {
    let mut found = names(&query("dot-product on x86-avx2"));
    found.sort();
    assert_eq!(
        found,
        [
            "_mm256_madd_epi16",
            "_mm256_maddubs_epi16",
            "_mm_madd_epi16",
            "_mm_maddubs_epi16",
            "_mm_maddubs_pi16"
        ]
    );
    let mut asked = names(&query(
        "Which instructions implement dot-product on x86-avx2?",
    ));
    asked.sort();
    assert_eq!(asked, found);
    for q in [
        "what intrinsics compute dot-product on x86-avx2",
        "list the instructions that perform dot-product on x86-avx2",
    ] {
        let mut asked = names(&query(q));
        asked.sort();
        assert_eq!(asked, found, "{q}");
    }
    let mut equivalents = names(&query("equivalents of vqaddq_s8 on x86-avx2"));
    equivalents.sort();
    assert_eq!(equivalents, ["_mm256_adds_epi8", "_mm_adds_epi8"]);
}

/// An empty answer says where a sequence is found: `port` for an instruction's equivalents.
#[test]
fn an_instruction_without_a_single_equivalent_is_pointed_to_port() {
    let out = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .args([
            "--home",
            env!("CARGO_MANIFEST_DIR"),
            "query",
            "equivalents of _mm_madd_epi16 on neon",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "isadb: no single instruction there is proven equivalent; `isadb port _mm_madd_epi16 --target neon` finds the cheapest proven sequence"
    );
}

#[test]
fn dot_product_on_neon_is_sdot_udot_usdot() {
    let found = names(&query("dot-product on neon"));
    for want in ["vdot_s32", "vdotq_u32", "vusdotq_s32"] {
        assert!(
            found.iter().any(|f| f == want),
            "missing {want} in {found:?}"
        );
    }
    for n in &found {
        assert!(n.contains("dot"), "{n} is not a dot product");
    }
    // The lane forms are proven for each value of the lane immediate.
    let mut found = names(&query("dot_product_lane_acc on neon"));
    found.sort();
    let mut want: Vec<String> = ["vdot", "vsudot", "vusdot"]
        .iter()
        .flat_map(|op| {
            ["", "q"].iter().flat_map(move |q| {
                ["lane", "laneq"].iter().flat_map(move |l| {
                    let types: &[&str] = if *op == "vdot" {
                        &["s32", "u32"]
                    } else {
                        &["s32"]
                    };
                    types.iter().map(move |t| format!("{op}{q}_{l}_{t}"))
                })
            })
        })
        .collect();
    want.sort();
    assert_eq!(found, want);
}

#[test]
fn averages_across_isas() {
    let mut found = names(&query("equivalents of _mm256_avg_epu8 on neon"));
    found.sort();
    assert_eq!(found, ["vrhadd_u8", "vrhaddq_u8"]);
    let found = names(&query("rounding average on hvx"));
    assert!(found.len() >= 4, "{found:?}");
    for n in &found {
        assert!(n.contains("vavg") && n.ends_with("_rnd"), "{n}");
    }
    let mut found = names(&query(
        "what implements u8((u16(a_u8) + u16(b_u8) + 1) >> 1) on x86",
    ));
    found.sort();
    let mut want: Vec<String> = ["", "256", "512"]
        .iter()
        .flat_map(|w| {
            ["", "mask_", "maskz_"]
                .iter()
                .map(move |m| format!("_mm{w}_{m}avg_epu8"))
        })
        .chain(["_mm_avg_pu8".into(), "_m_pavgb".into()])
        .collect();
    want.sort();
    assert_eq!(found, want);
}

#[test]
fn unknown_words_get_suggestions() {
    let out = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .args([
            "--home",
            env!("CARGO_MANIFEST_DIR"),
            "query",
            "dot prodcut on hvx",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 'dot product'"), "{err}");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("queries/relations.dl")
        .exists());
}

#[test]
fn permutations_that_coincide_at_few_lanes_are_told_apart_at_full_width() {
    // A 4-lane shuffle is a 4-lane deal; at 64 halfwords vshuff interleaves instead.
    let mut found = names(&query("deinterleave on hvx"));
    found.sort();
    assert_eq!(found, ["Q6_Vb_vdeal_Vb", "Q6_Vh_vdeal_Vh"]);
    // A reinterpretation of two lanes is a two-lane deal, of one lane a one-lane splat: a copy
    // matches no idiom (NEON has no deal of its own: no rows, exit 1).
    for idiom in ["splat", "interleave_lanes", "unzip_even"] {
        let found = names(&query(&format!("{idiom} on neon")));
        assert!(!found.is_empty(), "{idiom}");
        assert!(
            !found.iter().any(|n| n.starts_with("vreinterpret")),
            "{idiom}: {found:?}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_isadb"))
        .args(["--home", env!("CARGO_MANIFEST_DIR"), "--json", "query"])
        .arg("deinterleave on neon")
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows, serde_json::json!([]), "{rows}");
    // 256- and 512-bit packs work within each 128-bit lane, so only the 128-bit forms pack
    // their two operands one after the other.
    let mut found = names(&query("saturating pack on x86"));
    found.sort();
    let mmx = [
        "_mm_packs_pi16",
        "_mm_packs_pi32",
        "_mm_packs_pu16",
        "_m_packsswb",
        "_m_packssdw",
        "_m_packuswb",
    ];
    let mut want: Vec<String> = ["", "mask_", "maskz_"]
        .iter()
        .flat_map(|m| {
            ["packs_epi16", "packs_epi32", "packus_epi16", "packus_epi32"]
                .iter()
                .map(move |p| format!("_mm_{m}{p}"))
        })
        .chain(mmx.iter().map(|n| n.to_string()))
        .collect();
    want.sort();
    assert_eq!(found, want);
    // A reduction to one lane is a pairwise add only where it has two lanes to add.
    let found = names(&query("pairwise add on neon"));
    assert!(found.iter().any(|n| n == "vaddv_s32"), "{found:?}");
    assert!(
        !found.iter().any(|n| n == "vaddvq_s32" || n == "vaddvq_u32"),
        "{found:?}"
    );
    let reductions: Vec<String> = names(&query("pairwise add on neon"))
        .into_iter()
        .filter(|n| n.starts_with("vaddv") || n.starts_with("vaddlv"))
        .collect();
    assert!(
        reductions.iter().all(|n| !n.contains('q')),
        "only the two-lane vaddv/vaddlv are pairwise adds: {reductions:?}"
    );
    // vtrnq/vuzpq on four lanes transpose and unzip; on two lanes (vtrn/vuzp) they zip.
    let found = names(&query("interleave_lanes on neon"));
    assert!(found.iter().any(|n| n == "vtrn_s32"), "{found:?}");
    assert!(
        !found
            .iter()
            .any(|n| n.starts_with("vtrnq") || n.starts_with("vuzpq")),
        "{found:?}"
    );
}

/// NEON's `srshl` and `urshl` read each count's low byte: at bytes they implement Halide's
/// rounding shift exactly, at wider lanes with the count clamped to that byte (proven with the
/// clamp); `sshl`, whose right shifts truncate, implements it under no clamp.
#[test]
fn rounding_shifts_by_a_register_implement_the_idiom_with_the_count_clamped_to_a_byte() {
    let rows = query("rounding shift left on neon");
    let binding = |name: &str| {
        rows.iter()
            .find(|r| r["instruction"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {:?}", names(&rows)))["binding"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(binding("vrshlq_s8"), "i8 x i8 -> i8");
    assert_eq!(
        binding("vrshlq_s16"),
        "i16 x i16 -> i16, b clamped to [-128, 127]"
    );
    assert_eq!(
        binding("vrshlq_u64"),
        "u64 x i64 -> u64, b clamped to [-128, 127]"
    );
    let found = names(&rows);
    assert!(
        !found
            .iter()
            .any(|n| n.starts_with("vshlq_s") && !n.contains("_n_")),
        "{found:?}"
    );
}
