//! `isadb port`: an instruction of one ISA selected for another, proven, and run.

mod common;

use common::{isadb, json, project_copy, selected, tools};
use isadb::Toolchain;

#[test]
fn an_x86_intrinsic_ports_to_neon_and_back_proven_and_run() {
    let guard = project_copy("port");
    let home = guard.path();
    // SSE's rounding average is NEON's urhadd; the shift's immediate is given.
    // Data movement comes from the search over the target's own shuffles: SSE's reversal of
    // 32-bit lanes is two NEON instructions, alignr is ext, a one-lane blend is ins, a byte
    // shift left is ext with zeros.
    // A NEON lane broadcast is a broadcast of a load of that lane on x86.
    // SSE's horizontal sum is addp (pairwise sums, the rewrite joining even and odd lanes);
    // its horizontal difference uzp1, uzp2 and sub; psadbw sums bytes by uaddlp; vpsrav's
    // counts, read unsigned, are clamped and negated for sshl.
    // Synthesized (the rules leave them scalarized): pshufb is tbl on indices masked to keep
    // the high bit (tbl gives zero for indices past 15, as pshufb does for a set high bit);
    // pmuludq on one lane is umull of lane 0 by lane 0; HVX widens a register's low half by
    // vunpack, a 16-byte SSE register being the low lanes of a 128-byte HVX one.
    // SSE's scalar forms: lane 0 by the D-register instruction, lanes 1-3 copied from a.
    let cases: [(&[&str], &[&str]); 56] = [
        (&["_mm_add_ss", "--target", "neon"], &["vadd_f32"]),
        (&["_mm_cmplt_ss", "--target", "neon"], &["vcgt_f32"]),
        (&["_mm_add_si64", "--target", "neon"], &["vadd_s64"]),
        (
            &["_mm_shuffle_epi8", "--target", "neon"],
            &["vandq_s8", "vqtbl1q_s8"],
        ),
        (&["_mm_mul_su32", "--target", "neon"], &["vmull_lane_u32"]),
        (
            &["_mm_cvtepi8_epi16", "--target", "hvx"],
            &["Q6_Wh_vunpack_Vb"],
        ),
        (&["_mm_hadd_epi16", "--target", "neon"], &["vpaddq_s16"]),
        (
            &["_mm_hsub_epi16", "--target", "neon"],
            &["vuzp1q_s16", "vuzp2q_s16", "vsubq_s16"],
        ),
        (
            &["_mm_sad_epu8", "--target", "neon"],
            &["vabdq_u8", "vpaddlq_u8", "vpaddlq_u16", "vpaddlq_u32"],
        ),
        // u8 x i8 products fit 16 bits: i32(a_u8) goes through i16 as i32(b_i8) does; the
        // products' pairs summed with saturation are their even and odd lanes' `sqadd`.
        (
            &["_mm_maddubs_epi16", "--target", "neon"],
            &[
                "vmovl_s8",
                "vmovl_u8",
                "vmulq_s16",
                "vmovl_s8",
                "vmovl_u8",
                "vmulq_s16",
                "vuzp1q_s16",
                "vuzp2q_s16",
                "vqaddq_s16",
            ],
        ),
        // pmulhrsw's ((p >> 14) + 1) >> 1 is the rounding shift of p by 15: rshrn narrows it.
        (
            &["_mm_mulhrs_epi16", "--target", "neon"],
            &["vmull_s16", "vrshrn_n_s32", "vmull_s16", "vrshrn_n_s32"],
        ),
        (
            &["_mm_srav_epi32", "--target", "neon"],
            &["vminq_u32", "vnegq_s32", "vshlq_s32"],
        ),
        (&["_mm_avg_epu8", "--target", "neon"], &["vrhaddq_u8"]),
        // SSE's minps is `a < b ? a : b` (the second operand for a NaN): NEON's `fcmgt` and a
        // bitwise select of the lanes' bits, proven with the bits of f32 lanes uninterpreted.
        (
            &["_mm_min_ps", "--target", "neon"],
            &["vcgtq_f32", "vbslq_f32"],
        ),
        // f32, proven over the reals: NEON's minNum is SSE's minps there.
        (&["vminnmq_f32", "--target", "x86-avx2"], &["_mm_min_ps"]),
        (&["_mm_cvtepi32_ps", "--target", "neon"], &["vcvtq_f32_s32"]),
        (
            &["vmulq_laneq_s16", "--target", "x86-avx2", "--imm", "6"],
            &["_mm_broadcastw_epi16", "_mm_mullo_epi16"],
        ),
        (&["vrhaddq_u8", "--target", "x86-avx2"], &["_mm_avg_epu8"]),
        // A 64-bit NEON register is the low half of an xmm one, through a reinterpretation of
        // the mask too.
        (
            &["vbsl_s16", "--target", "x86-avx2"],
            &["_mm_and_si128", "_mm_andnot_si128", "_mm_or_si128"],
        ),
        (
            &["_mm_slli_epi16", "--target", "neon", "--imm", "3"],
            &["vshlq_n_u16"],
        ),
        // An AVX2 register is two of NEON's: the immediate, folded lane by lane, splits too.
        (
            &["_mm256_slli_epi16", "--target", "neon", "--imm", "3"],
            &["vshlq_n_u16", "vshlq_n_u16"],
        ),
        (
            &["_mm_packs_epi32", "--target", "neon"],
            &["vqmovn_s32", "vqmovn_s32"],
        ),
        (
            &["_mm_shuffle_epi32", "--target", "neon", "--imm", "27"],
            &["vextq_s16", "vrev64q_s32"],
        ),
        (
            &["_mm_alignr_epi8", "--target", "neon", "--imm", "4"],
            &["vextq_s16"],
        ),
        // The identity shuffle of the low words: the rules assemble the high half apart
        // (`vget_high`); the search over the moves the selection makes finds the operand itself.
        (
            &["_mm_shufflelo_epi16", "--target", "neon", "--imm", "228"],
            &[],
        ),
        // The rules leave the lanes apart (slices scalarized, then moved); the low half's chain
        // of moves is one ins on the D register, the high half a's own.
        (
            &["_mm_blend_epi16", "--target", "neon", "--imm", "1"],
            &["vcopy_lane_s16"],
        ),
        (
            &["_mm_bslli_si128", "--target", "neon", "--imm", "3"],
            &["vextq_s8"],
        ),
        // Indices past a lookup's table read zeros: AVX2's byte shift of each 128-bit lane is
        // ext with zeros per NEON register.
        (
            &["_mm256_bslli_epi128", "--target", "neon", "--imm", "1"],
            &["vextq_s8", "vextq_s8"],
        ),
        // The rules leave a three-lane broadcast scalarized: the two 128-bit lanes are ported
        // one by one, each by the search over NEON's moves (four instructions, 22 before).
        (
            &["_mm256_shuffle_epi32", "--target", "neon", "--imm", "1"],
            &[
                "vdupq_laneq_s32",
                "vcopyq_laneq_s32",
                "vdupq_laneq_s32",
                "vcopyq_laneq_s32",
            ],
        ),
        // vmpy of unsigned by signed bytes leaves the pair dealt: even products in the low
        // register, odd ones in the high; their saturating sum is pmaddubsw.
        (
            &["_mm_maddubs_epi16", "--target", "hvx"],
            &["Q6_Wh_vmpy_VubVb", "Q6_Vh_vadd_VhVh_sat"],
        ),
        // movemask packs its bool lanes: bytes of 0 or 1 (each byte's top bit) gathered by three
        // shift-right-and-add rounds (16, 32, 64 bits), the low bytes of the two 64-bit lanes
        // joined by a lane insert (five instructions; sse2neon's packing takes seven).
        (
            &["_mm_movemask_epi8", "--target", "neon"],
            &[
                "vshrq_n_u8",
                "vsraq_n_u16",
                "vsraq_n_u32",
                "vsraq_n_u64",
                "vcopyq_laneq_s8",
            ],
        ),
        (
            &["_mm_movemask_pi8", "--target", "neon"],
            &["vshr_n_u8", "vsra_n_u16", "vsra_n_u32", "vsra_n_u64"],
        ),
        // Below a register, HVX reads SSE's operands into registers: the high halves of
        // products of halfwords (mulhi), the bytes of two registers interleaved (a vshuff
        // pair's low register holds unpacklo's), unpackhi's halves first moved down (valign).
        (
            &["_mm_mulhi_epi16", "--target", "hvx"],
            &["Q6_Ww_vmpy_VhVh", "Q6_Vh_vshuffo_VhVh"],
        ),
        (
            &["_mm_unpacklo_epi8", "--target", "hvx"],
            &["Q6_W_vshuff_VVR"],
        ),
        (
            &["_mm_unpackhi_epi16", "--target", "hvx"],
            &["Q6_V_valign_VVR", "Q6_V_valign_VVR", "Q6_W_vshuff_VVR"],
        ),
        // A scalar by one lane of a vector (NEON's `_lane` forms) is selected padded to a
        // register like a scalar by a scalar: the lane read is a slice of the register, not a
        // gather (it was five scalar operations, cost 21).
        (
            &["vqdmulhh_lane_s16", "--imm", "0", "--target", "x86-avx2"],
            &[
                "_mm256_cvtepu16_epi32",
                "_mm256_cvtepu16_epi32",
                "_mm256_madd_epi16",
                "_mm256_srai_epi32",
                "_mm_packs_epi32",
            ],
        ),
        // HVX has no word multiply: products of halfwords, vmpyieo then vmpyie accumulating.
        (
            &["_mm_mullo_epi32", "--target", "hvx"],
            &["Q6_Vw_vmpyieo_VhVh", "Q6_Vw_vmpyieacc_VwVwVuh"],
        ),
        // f32 lanes compared into all-ones lanes, read as their bits (cmpps's result is f32,
        // NEON's u32), and f32 lanes moved by NEON's f32 permutes.
        (&["_mm_cmplt_ps", "--target", "neon"], &["vcgtq_f32"]),
        (&["vcltq_f32", "--target", "x86-avx2"], &["_mm_cmplt_ps"]),
        (&["_mm_andnot_ps", "--target", "neon"], &["vbicq_u32"]),
        (&["_mm_unpacklo_ps", "--target", "neon"], &["vzip1q_f32"]),
        // SSE3's horizontal sums of f32 pairs: faddp; the differences uzp1, uzp2 and fsub.
        (&["_mm_hadd_ps", "--target", "neon"], &["vpaddq_f32"]),
        (
            &["_mm_hsub_ps", "--target", "neon"],
            &["vuzp1q_f32", "vuzp2q_f32", "vsubq_f32"],
        ),
        // Roundings: roundps's mode immediate picks frintz; frintm is roundps at mode 1, named.
        (
            &["_mm_round_ps", "--target", "neon", "--imm", "3"],
            &["vrndq_f32"],
        ),
        (&["vrndmq_f32", "--target", "x86-avx2"], &["_mm_floor_ps"]),
        // AArch64's saturating conversion on x86: cvttps2dq, NaN lanes cleared by an ordered
        // compare, lanes past 2^31 flipped to the maximum by a xor (was scalarized).
        (
            &["vcvtq_s32_f32", "--target", "x86-avx2"],
            &[
                "_mm_cvttps_epi32",
                "_mm_cmpeq_ps",
                "_mm_and_si128",
                "_mm_cmpge_ps",
                "_mm_xor_si128",
            ],
        ),
        // An unordered compare is no constant, though over the reals no lane is a NaN: the
        // byte maps are checked on NaN lanes too (it had ported to a zero vector).
        (
            &["_mm_cmp_ps", "--target", "neon", "--imm", "3"],
            &["vceqq_f32", "vceqq_f32", "vandq_u32", "vmvnq_u32"],
        ),
        // A reinterpretation or a register cast is no instruction at all, on either side.
        (&["vreinterpretq_u8_f32", "--target", "x86-avx2"], &[]),
        (&["_mm_castps_si128", "--target", "neon"], &[]),
        // A byte permutation no short sequence of shuffles makes: pshufb at a literal index
        // vector (a table lookup found by probing the interpreter; the load costs one).
        (
            &["vrev32q_s8", "--target", "x86-avx2"],
            &["literal", "_mm_shuffle_epi8"],
        ),
        // movmskps: the compare's 32-bit lanes and-ed with their weights 1, 2, 4, 8 (a literal
        // loaded, where the rules build it lane by lane) and summed by addv.
        (
            &["_mm_movemask_ps", "--target", "neon"],
            &["vcltzq_s32", "literal", "vbslq_u32", "vaddvq_u32"],
        ),
        (
            &["_mm_shuffle_ps", "--target", "neon", "--imm", "27"],
            &["vextq_s16", "vrev64q_s32"],
        ),
        // NEON's pairwise maximum of two 64-bit vectors: the even and the odd lanes each
        // looked up from the two joined (searched from the joined values, not from the ymm a
        // concatenation at i16 lanes makes of them, which no move reads back to an xmm), then
        // one 64-bit maximum (cost 6; 7 when the even lanes were packed by pand + packusdw,
        // before the moves a term leaves were priced for extraction).
        (
            &["vpmax_s16", "--target", "x86-avx2"],
            &[
                "_mm_set_epi64x",
                "literal",
                "_mm_shuffle_epi8",
                "literal",
                "_mm_shuffle_epi8",
                "_m_pmaxsw",
            ],
        ),
        // A bit reversal of bytes: the or of two pshufb lookups of each byte's nibbles in
        // literal tables (scalarized bit by bit before, cost 4,556).
        (
            &["vrbitq_u8", "--target", "x86-avx2"],
            &[
                "literal",
                "_mm_and_si128",
                "_mm_shuffle_epi8",
                "literal",
                "_mm_srli_epi16",
                "_mm_and_si128",
                "_mm_shuffle_epi8",
                "_mm_or_si128",
            ],
        ),
        // A sum of signed bytes widened: their sign bits flipped, psadbw, 8 * 128 less.
        (
            &["vaddlv_s8", "--target", "x86-avx2"],
            &["_mm_xor_si128", "_m_psadbw", "_mm_sub_si64"],
        ),
        // A table of two registers: pshufb in each at the index less the register's offset,
        // carried past the table by a saturating add (pshufb zeroes lanes of bit 7), or-ed.
        (
            &["vqtbl2q_u8", "--target", "x86-avx2"],
            &[
                "_mm_adds_epu8",
                "_mm_shuffle_epi8",
                "_mm_sub_epi8",
                "_mm_adds_epu8",
                "_mm_shuffle_epi8",
                "_mm_or_si128",
            ],
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
    // A shift by a count in a register on HVX: the count's 64-bit minimum in scalar code, its
    // low word splat by vsplat from a general register (not broadcast lane by lane, cost 105).
    let out = isadb(
        home,
        &["--json", "port", "_mm_sll_epi32", "--target", "hvx"],
    );
    let report = json(&out);
    let expected = [
        "min",
        "Q6_V_vsplat_R",
        "Q6_Q_vcmp_gt_VwVw",
        "Q6_Vw_vmin_VwVw",
        "Q6_Vw_vasl_VwVw",
        "Q6_V_vmux_QVV",
    ];
    assert_eq!(selected(&report), expected, "{report}");
    assert_eq!(report["cost"], serde_json::json!(9.0), "{report}");
    // Run on both sides' hardware: the NEON port under qemu, the x86 one natively, each
    // against the interpreter of the source instruction's semantics and beside the source
    // instruction itself (natively for x86, under qemu for NEON) on the same inputs.
    // movemask's bool lanes (bits of an int on x86) are written as bytes of 0 or 1. The C of
    // the last eight needed care: an operand named `i` (the C's loop counter), 128-bit lanes
    // scalarized (`__int128`, on Hexagon `_BitInt(128)`), no operand at all, slices of two lanes
    // reinterpreted (no C type of their own), flags of scalarized lanes spread over an HVX
    // predicate, bits read as bool lanes and back (a bit reversal scalarized), and a rounding
    // constant wider than an e-graph lane; an f32 constant with nothing scalarized (the helper
    // that reads its bits was left out); the last, a shift whose e-graph passes the budget (its
    // count's 64-bit minimum in 32-bit words on HVX) and cannot be halved (a broadcast), selected
    // by pieces.
    let runs: [(&[&str], &str, Toolchain, &str); 39] = [
        (&["_mm_madd_epi16"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_cmplt_ss"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_cvtss_si32"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_add_si64"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_add_ps"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_min_ps"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_cmpneq_ps"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_blendv_ps"], "neon", Toolchain::Neon, "natively"),
        (
            &["_mm_shuffle_ps", "--imm", "177"],
            "neon",
            Toolchain::Neon,
            "natively",
        ),
        (
            &["vcvtq_f32_s32"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (&["_mm_mulhrs_epi16"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_shuffle_epi8"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_cvtepi8_epi16"], "hvx", Toolchain::Hvx, "natively"),
        (&["_mm_movemask_epi8"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_movemask_ps"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_hadd_ps"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_floor_ps"], "neon", Toolchain::Neon, "natively"),
        (
            &["vcvtnq_s32_f32"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (
            &["vrev32q_s8"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (
            &["_mm256_movemask_epi8"],
            "neon",
            Toolchain::Neon,
            "natively",
        ),
        (
            &["vqdmulhq_s16"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (
            &["_mm_insert_epi16", "--imm", "3"],
            "neon",
            Toolchain::Neon,
            "natively",
        ),
        (&["_mm_testz_si128"], "neon", Toolchain::Neon, "natively"),
        (
            &["_mm256_shuffle_epi32", "--imm", "1"],
            "neon",
            Toolchain::Neon,
            "natively",
        ),
        (&["_mm_setzero_si128"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_minpos_epu16"], "neon", Toolchain::Neon, "natively"),
        (&["_mm_cmpeq_epi64"], "hvx", Toolchain::Hvx, "natively"),
        (&["_mm_testz_si128"], "hvx", Toolchain::Hvx, "natively"),
        (&["_mm_mullo_epi32"], "hvx", Toolchain::Hvx, "natively"),
        (&["_mm_maddubs_epi16"], "hvx", Toolchain::Hvx, "natively"),
        (&["_mm_unpackhi_epi16"], "hvx", Toolchain::Hvx, "natively"),
        // Moves of operands read beside zeros, and an add of the low lanes of two registers.
        (&["_mm_hadd_epi16"], "hvx", Toolchain::Hvx, "natively"),
        (
            &["vaddlvq_s8"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (
            &["vrbit_s8"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        // Rounding by 2^63 in 128-bit lanes: a constant wider than an e-graph lane.
        (
            &["vrsraq_n_u64", "--imm", "64"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        // Mask 0: a zero vector of f32 lanes, HVX having no f32 registers.
        (
            &["_mm_dp_ps", "--imm", "0"],
            "hvx",
            Toolchain::Hvx,
            "natively",
        ),
        (&["_mm256_sra_epi16"], "hvx", Toolchain::Hvx, "natively"),
        // Tables of three registers, and of half of one beside a destination (pshufb's).
        (
            &["vqtbl3q_u8"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
        (
            &["vtbx1_s8"],
            "x86-avx2",
            Toolchain::X86,
            "under qemu-aarch64",
        ),
    ];
    for (source, target, toolchain, how) in runs {
        if !tools(toolchain) || !tools(Toolchain::Neon) {
            continue;
        }
        let name = source[0];
        let mut args = vec!["--json", "port"];
        args.extend(source);
        args.extend(["--target", target, "--run", "20"]);
        let out = isadb(home, &args);
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
        let beside = &report["beside"];
        if report["not_run"].is_null() {
            assert_eq!(beside["verdict"], "equal", "{name}: {beside}");
            assert_eq!(beside["how"], how, "{name}: {beside}");
            assert_eq!(beside["instruction"], name);
            assert!(beside["lanes"].as_u64().unwrap() >= 20, "{beside}");
        } else {
            assert_eq!(beside["verdict"], "not_run", "{name}: {beside}");
        }
    }
}

#[test]
fn a_hand_written_port_is_refuted_or_proven_and_ships_as_a_drop_in_function() {
    let guard = project_copy("port-check");
    let home = guard.path();
    // NEON's truncating halving add is not SSE's rounding average: z3 finds the lanes.
    let out = isadb(
        home,
        &[
            "--json",
            "port",
            "_mm_avg_epu8",
            "--target",
            "neon",
            "--check",
            "(vhaddq_u8 a b)",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(report["verdict"], "refuted", "{report}");
    let cex = &report["counterexample"];
    assert_eq!(cex["inputs"][0][0], "a", "{report}");
    assert_eq!(cex["inputs"][1][0], "b", "{report}");
    assert_ne!(cex["expected"], cex["actual"], "{report}");
    // madd written by hand with lanes of the operands: proven, and its drop-in keeps
    // _mm_madd_epi16's signature in NEON's types.
    let madd = "(vpaddq_s32 (vmull_s16 (lanes a 0 4) (lanes b 0 4)) (vmull_s16 (lanes a 4 4) (lanes b 4 4)))";
    let out = isadb(
        home,
        &[
            "--json",
            "port",
            "_mm_madd_epi16",
            "--target",
            "neon",
            "--check",
            madd,
            "--emit",
            "c",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(
        selected(&report),
        ["vmull_s16", "vmull_s16", "vpaddq_s32"],
        "{report}"
    );
    let c = report["c"].as_str().unwrap();
    assert!(
        c.contains("static inline int32x4_t isadb__mm_madd_epi16(int16x8_t a, int16x8_t b) {"),
        "{c}"
    );
    // Translations written with vreinterpret, as translation headers are: andnot's operands
    // swapped in bic is refuted, in the right order proven; the reinterpretations are no steps.
    let bic = |x: &str, y: &str| {
        format!("(vreinterpretq_f32_u32 (vbicq_u32 (vreinterpretq_u32_f32 {x}) (vreinterpretq_u32_f32 {y})))")
    };
    for (sequence, verdict) in [(bic("a", "b"), Some(1)), (bic("b", "a"), Some(0))] {
        let args = ["--json", "port", "_mm_andnot_ps", "--target", "neon"];
        let out = isadb(home, &[&args[..], &["--check", &sequence]].concat());
        assert_eq!(out.status.code(), verdict, "{sequence}");
        if verdict == Some(0) {
            assert_eq!(selected(&json(&out)), ["vbicq_u32"], "{sequence}");
        }
    }
    // movemask's result is the bits of an integer on x86: a port to NEON must pack its bool
    // lanes, and sse2neon's shift-and-accumulate packing proves; the drop-in returns the
    // bits, and runs under qemu beside the x86 instruction run natively.
    let ones = "(vshrq_n_u8 (vcltzq_s8 a) 7)";
    let pairs = format!("(vsraq_n_u16 {ones} {ones} 7)");
    let quads = format!("(vsraq_n_u32 {pairs} {pairs} 14)");
    let octets = format!("(vsraq_n_u64 {quads} {quads} 28)");
    let packing = format!("(concat (vgetq_lane_u8 {octets} 0) (vgetq_lane_u8 {octets} 8))");
    let mut args = vec![
        "--json",
        "port",
        "_mm_movemask_epi8",
        "--target",
        "neon",
        "--check",
        &packing,
        "--emit",
        "c",
    ];
    let run = tools(Toolchain::Neon);
    if run {
        args.extend(["--run", "20"]);
    }
    let out = isadb(home, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(
        selected(&report),
        [
            "vcltzq_s8",
            "vshrq_n_u8",
            "vsraq_n_u16",
            "vsraq_n_u32",
            "vsraq_n_u64",
            "vgetq_lane_u8",
            "vgetq_lane_u8"
        ],
        "{report}"
    );
    // The mask alone is no longer a port: it leaves the bits unpacked.
    let out = isadb(
        home,
        &[
            "port",
            "_mm_movemask_epi8",
            "--target",
            "neon",
            "--check",
            "(vcltq_s8 a 0)",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = report["c"].as_str().unwrap();
    assert!(
        c.contains("static inline uint16_t isadb__mm_movemask_epi8(int8x16_t a) {"),
        "{c}"
    );
    if run {
        assert_eq!(report["beside"]["verdict"], "equal", "{report}");
    }
}

#[test]
fn bad_port_requests_are_one_line_errors() {
    let guard = project_copy("port-bad");
    let home = guard.path();
    let cases: [(&[&str], &str); 10] = [
        (
            &["port", "_mm_avg_epu9", "--target", "neon"],
            "unknown instruction '_mm_avg_epu9' (did you mean '_mm_avg_epu8'?)",
        ),
        // A mnemonic names the instructions whose assembly it heads.
        (
            &["port", "uqadd", "--target", "x86-avx2"],
            "'uqadd' is the mnemonic of 12 instructions: vqadd_u8, vqadd_u16, vqadd_u32, vqadd_u64, vqaddq_u8, vqaddq_u16, vqaddq_u32, vqaddq_u64, vqaddb_u8, vqaddh_u16, vqadds_u32, vqaddd_u64; name one",
        ),
        (
            &["port", "_mm_slli_epi16[count=3]", "--target", "neon"],
            "_mm_slli_epi16 has no immediate operand 'count' (its immediates: n)",
        ),
        (
            &["port", "_mm_slli_epi16[n=3]", "--target", "neon", "--imm", "3"],
            "give _mm_slli_epi16's immediates in its name (_mm_slli_epi16[n=1]) or by --imm, not both",
        ),
        (
            &["port", "_mm_slli_epi16[n]", "--target", "neon"],
            "'_mm_slli_epi16[n]': 'n' is not OPERAND=VALUE",
        ),
        (
            &["port", "_mm_slli_epi16", "--target", "neon", "--emit", "c"],
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
        (
            &[
                "port",
                "_mm_avg_epu8",
                "--target",
                "neon",
                "--check",
                "(vhaddq_u9 a b)",
            ],
            "--check:1:1: 'vhaddq_u9' is no instruction of neon",
        ),
        (
            &[
                "port",
                "_mm_avg_epu8",
                "--target",
                "neon",
                "--check",
                "(vmull_s16 a b)",
            ],
            "--check:1:12: operand a of vmull_s16 is <4 x i16>, given <16 x u8>",
        ),
    ];
    // The label `port --all` prints (`_mm_slli_epi16[n=3]`) names the instruction at its
    // immediates, as --imm does.
    let ported = |args: &[&str]| {
        let out = isadb(home, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The steps (`  t0 = ...`, `  out[...] = ...`), not the timings.
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let labelled = ported(&["port", "_mm_slli_epi16[n=3]", "--target", "neon"]);
    assert!(labelled[0].contains("vshlq_n_u16(a, 3)"), "{labelled:?}");
    let by_imm = ported(&["port", "_mm_slli_epi16", "--imm", "3", "--target", "neon"]);
    assert_eq!(labelled, by_imm);
    for (args, needle) in cases {
        let out = isadb(home, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn port_all_ports_a_source_set_stores_the_rows_and_shards_merge() {
    let guard = project_copy("port-all");
    let home = guard.path();
    let args = [
        "--json",
        "port",
        "--all",
        "--from",
        "x86:ssse3",
        "--target",
        "neon",
    ];
    let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
    let out = isadb(home, &forced);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let rows = report["rows"].as_array().unwrap();
    let row = |source: &str| {
        rows.iter()
            .find(|r| r["source"] == source)
            .unwrap_or_else(|| panic!("no row for {source}: {report}"))
    };
    // Every instruction of the set, immediates at sampled values, each with a proven sequence.
    assert_eq!(
        row("_mm_abs_epi16")["sequence"],
        serde_json::json!(["vabsq_s16(a)"])
    );
    assert_eq!(row("_mm_abs_epi16")["status"], "proven");
    assert_eq!(
        row("_mm_alignr_epi8[n=1]")["instruction"],
        "_mm_alignr_epi8"
    );
    assert!(rows.iter().all(|r| r["status"] != "failed"), "{report}");
    let d = &report["distribution"];
    let counted: u64 = [
        "at_most_one",
        "two",
        "three_to_four",
        "five_or_more",
        "scalarized",
        "failed",
    ]
    .iter()
    .map(|k| d[k].as_u64().unwrap())
    .sum();
    assert_eq!(counted, rows.len() as u64);
    assert_eq!(
        report["ported"].as_u64(),
        Some(rows.len() as u64),
        "{forced:?}"
    );
    assert!(home.join("rules.db/port_results.csv").exists());

    // Stored: the second run reuses every row.
    let again = json(&isadb(home, &args));
    assert_eq!(again["cached"].as_u64(), Some(rows.len() as u64));
    assert_eq!(again["ported"].as_u64(), Some(0));

    // A shard writes its share as CSV, which db import --merge takes.
    let shard_dir = home.join("shard");
    let out = isadb(
        home,
        &[
            "--json",
            "port",
            "--all",
            "--from",
            "x86:sse4.2",
            "--target",
            "hvx",
            "--shard",
            "1/1",
            "--out",
            shard_dir.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(shard_dir.join("port_results.csv")).unwrap();
    assert!(csv.starts_with("source,target,instruction,"), "{csv}");
    let out = isadb(
        home,
        &["db", "import", "--merge", shard_dir.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = std::fs::read_to_string(home.join("rules.db/port_results.csv")).unwrap();
    assert!(merged.lines().any(|l| l.contains(",hvx,")), "{merged}");

    // A source set that is not one is a one-line error.
    let out = isadb(
        home,
        &["port", "--all", "--from", "x86:sse9", "--target", "neon"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown feature 'sse9'"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The port tables shipped in `rules.db/` are the current selector's: `port --all` over a
/// source set of each table reuses every row and ports none again (a table left behind a
/// change of the selector makes the first `port --all` cold, minutes instead of a second).
#[test]
fn the_shipped_port_tables_are_current() {
    let guard = project_copy("port-shipped");
    let home = guard.path();
    for (from, target) in [
        ("x86:sse4.2", "neon"),
        ("x86:sse4.2", "hvx"),
        ("x86:sse4.2", "x86-avx512"),
        ("neon:sha3", "x86-avx2"),
    ] {
        let args = [
            "--json", "port", "--all", "--from", from, "--target", target,
        ];
        let out = isadb(home, &args);
        let report = json(&out);
        assert_eq!(out.status.code(), Some(0), "{from} -> {target}: {report}");
        let rows = report["rows"].as_array().unwrap().len() as u64;
        assert!(rows > 0, "{from} -> {target}: {report}");
        assert_eq!(report["ported"].as_u64(), Some(0), "{from} -> {target}");
        assert_eq!(report["cached"].as_u64(), Some(rows), "{from} -> {target}");
    }
}

/// An instruction with an immediate named without it is ported at the values `port --all`
/// samples, one row each (the committed rows reused), as `port --all` prints them.
#[test]
fn an_instruction_named_without_its_immediates_ports_at_the_sampled_values() {
    let guard = project_copy("port-sampled");
    let home = guard.path();
    let out = isadb(
        home,
        &["--json", "port", "_mm_srai_epi32", "--target", "neon"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let rows: Vec<(String, serde_json::Value)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap().to_string(),
                r["sequence"].clone(),
            )
        })
        .collect();
    let shift = |n: u32| serde_json::json!([format!("vshrq_n_s32(a, {n})")]);
    assert_eq!(
        rows,
        [
            ("_mm_srai_epi32[n=0]".to_string(), serde_json::json!([])),
            ("_mm_srai_epi32[n=1]".to_string(), shift(1)),
            ("_mm_srai_epi32[n=127]".to_string(), shift(31)),
            ("_mm_srai_epi32[n=255]".to_string(), shift(31)),
            ("_mm_srai_epi32[n=248]".to_string(), shift(31)),
        ]
    );
}

/// The table lookups one process finds by probing every instruction are kept in the database
/// with the catalog, and the next process probes only those: a lookup taken out of the kept
/// list is not selected, and any change to the rules forgets the list.
#[test]
fn table_lookups_found_once_are_kept_and_the_next_process_probes_only_those() {
    let guard = project_copy("port-kept-tables");
    let home = guard.path();
    let calls = || {
        let out = isadb(
            home,
            &["--json", "port", "vrev32q_s8", "--target", "x86-avx2"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        selected(&json(&out))
    };
    let pshufb = ["literal", "_mm_shuffle_epi8"];
    assert_eq!(calls(), pshufb);
    let db = isadb::Database::open(isadb::Project::at(home).db).unwrap();
    let key = "catalog_fingerprint x86-avx2 table_lookups";
    let kept = db.meta(key).unwrap().expect("the lookups found are kept");
    let (inputs, lookups) = kept.split_once('\n').unwrap();
    let lookups: Vec<&str> = lookups.lines().collect();
    assert!(lookups.contains(&"_mm_shuffle_epi8 0"), "{lookups:?}");
    assert!(lookups.contains(&"_mm256_shuffle_epi8 0"), "{lookups:?}");
    // Without pshufb in the kept list the next process does not find it.
    let without: Vec<&str> = lookups
        .iter()
        .copied()
        .filter(|l| !l.starts_with("_mm_shuffle_epi8 "))
        .collect();
    db.set_meta(key, &format!("{inputs}\n{}", without.join("\n")))
        .unwrap();
    let other = calls();
    assert!(!other.iter().any(|c| c == "_mm_shuffle_epi8"), "{other:?}");
    assert_eq!(
        db.meta(key).unwrap().unwrap().lines().count(),
        lookups.len()
    );
    // A changed rule forgets what was kept: probed again, pshufb is found again.
    let changed = db
        .conn()
        .execute("UPDATE rules SET status = status WHERE id = 1", [])
        .unwrap();
    assert_eq!(changed, 1);
    assert_eq!(db.meta(key).unwrap(), None);
    assert_eq!(calls(), pshufb);
    assert_eq!(db.meta(key).unwrap(), Some(kept));
}
