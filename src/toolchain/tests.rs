//! The toolchains on real programs: intrinsics of each ISA computed by the compiled code, stdin
//! reaching it, and a compile error reported with its first lines.

use super::features::{missing, Host};
use super::*;
use crate::spec::Isa;

/// A scratch directory for one call, removed when the guard drops (pass or fail).
fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("isadb-toolchain-test-")
        .tempdir()
        .unwrap()
}

/// Whether this CPU runs `feature`, by validation's feature table; prints why not.
fn cpu_has(feature: &str) -> bool {
    match missing(Toolchain::X86, feature, &Host::detect()) {
        None => true,
        Some(why) => {
            eprintln!("skipping: {why}");
            false
        }
    }
}

/// Returns false (and prints why) if the target's tools are missing, so tests skip instead of failing.
fn have(target: Toolchain) -> bool {
    match check_tools(target) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipping: {e}");
            false
        }
    }
}

/// Builds a harness: prelude + body.
fn program(target: Toolchain, body: &str) -> String {
    format!("{}\n{}", prelude(target), body)
}

fn le_i16(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn le_i32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn isa_names_round_trip() {
    for t in Toolchain::ALL {
        assert_eq!(Toolchain::of(t.isa()), Some(t));
        assert_eq!(t.name(), t.isa().as_str());
    }
    assert_eq!(Toolchain::of(Isa::Dsp), None);
}

#[test]
fn x86_avx2_add_epi16() {
    if !have(Toolchain::X86) || !cpu_has("avx2") {
        return;
    }
    let src = program(
        Toolchain::X86,
        r#"
int harness_main(void) {
  int16_t a[16], b[16], r[16];
  for (int i = 0; i < 16; i++) { a[i] = (int16_t)(i * 3); b[i] = (int16_t)(1000 - i); }
  a[15] = 32767; b[15] = 1; /* wraps */
  __m256i v = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)a), _mm256_loadu_si256((const __m256i *)b));
  _mm256_storeu_si256((__m256i *)r, v);
  emit(r, sizeof r);
  return 0;
}
"#,
    );
    let out = compile_and_run(
        Toolchain::X86,
        &src,
        &["-mavx2".to_string()],
        workdir().path(),
    )
    .unwrap();
    let mut exp: Vec<i16> = (0..16).map(|i| (i * 3 + 1000 - i) as i16).collect();
    exp[15] = i16::MIN;
    assert_eq!(out, le_i16(&exp));
}

#[test]
fn x86_avx512_dpbusd() {
    if !have(Toolchain::X86) || !cpu_has("avx512f+avx512vnni") {
        return;
    }
    let src = program(
        Toolchain::X86,
        r#"
int harness_main(void) {
  uint8_t a[64]; int8_t b[64]; int32_t s[16], r[16];
  for (int i = 0; i < 64; i++) { a[i] = (uint8_t)(i * 7 + 128); b[i] = (int8_t)(i * 5 - 100); }
  for (int j = 0; j < 16; j++) s[j] = j * 1000 - 5000;
  __m512i v = _mm512_dpbusd_epi32(_mm512_loadu_si512(s), _mm512_loadu_si512(a), _mm512_loadu_si512(b));
  _mm512_storeu_si512(r, v);
  emit(r, sizeof r);
  return 0;
}
"#,
    );
    let flags = super::features::compile_flags(Toolchain::X86, "avx512f+avx512vnni");
    let out = compile_and_run(Toolchain::X86, &src, &flags, workdir().path()).unwrap();
    let exp: Vec<i32> = (0..16)
        .map(|j: i32| {
            let mut acc = j * 1000 - 5000;
            for k in 0..4 {
                let i = 4 * j + k;
                acc += ((i * 7 + 128) as u8 as i32) * ((i * 5 - 100) as i8 as i32);
            }
            acc
        })
        .collect();
    assert_eq!(out, le_i32(&exp));
}

#[test]
fn neon_dot_and_qrdmulh() {
    if !have(Toolchain::Neon) {
        return;
    }
    let src = program(
        Toolchain::Neon,
        r#"
int harness_main(void) {
  uint8_t a[16], b[16]; uint32_t acc[4] = {1, 2, 3, 0xfffffff0u}, r[4];
  for (int i = 0; i < 16; i++) { a[i] = (uint8_t)(i * 17 + 200); b[i] = (uint8_t)(255 - i * 3); }
  vst1q_u32(r, vdotq_u32(vld1q_u32(acc), vld1q_u8(a), vld1q_u8(b)));
  emit(r, sizeof r);
  int16_t x[8] = {-32768, 32767, 1000, -1000, 12345, -32768, 16384, 3};
  int16_t y[8] = {-32768, 32767, 2000, 2000, -54, 32767, 16384, -3};
  int16_t z[8];
  vst1q_s16(z, vqrdmulhq_s16(vld1q_s16(x), vld1q_s16(y)));
  emit(z, sizeof z);
  return 0;
}
"#,
    );
    let out = compile_and_run(Toolchain::Neon, &src, &[], workdir().path()).unwrap();
    let acc = [1u32, 2, 3, 0xffff_fff0];
    let mut exp = Vec::new();
    for j in 0..4u32 {
        let mut s = acc[j as usize];
        for k in 0..4 {
            let i = 4 * j + k;
            s = s.wrapping_add(((i * 17 + 200) as u8 as u32) * ((255 - i * 3) as u8 as u32));
        }
        exp.extend(s.to_le_bytes());
    }
    let x: [i16; 8] = [-32768, 32767, 1000, -1000, 12345, -32768, 16384, 3];
    let y: [i16; 8] = [-32768, 32767, 2000, 2000, -54, 32767, 16384, -3];
    let z: Vec<i16> = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| {
            let p = (2 * a as i64 * b as i64 + (1 << 15)) >> 16;
            p.clamp(i16::MIN as i64, i16::MAX as i64) as i16
        })
        .collect();
    exp.extend(le_i16(&z));
    assert_eq!(out, exp);
}

#[test]
fn hvx_add_rmpy_widen() {
    if !have(Toolchain::Hvx) {
        return;
    }
    let src = program(
        Toolchain::Hvx,
        r#"
static int16_t ha[64] __attribute__((aligned(128))), hb[64] __attribute__((aligned(128)));
static uint8_t ua[128] __attribute__((aligned(128))), ub[128] __attribute__((aligned(128)));
static HVX_Vector out1, out2;
static HVX_VectorPair outw;
int harness_main(void) {
  for (int i = 0; i < 64; i++) { ha[i] = (int16_t)(i * 300 - 9000); hb[i] = (int16_t)(i * 211 + 17); }
  ha[63] = 32767; hb[63] = 1; /* wraps */
  for (int i = 0; i < 128; i++) { ua[i] = (uint8_t)(i * 37 + 11); ub[i] = (uint8_t)(250 - i); }
  out1 = Q6_Vh_vadd_VhVh(*(HVX_Vector *)ha, *(HVX_Vector *)hb);
  out2 = Q6_Vw_vrmpy_VubRb(*(HVX_Vector *)ua, (int)0x80FF7F03); /* bytes (lsb first): 3, 127, -1, -128 */
  outw = Q6_Wh_vadd_VubVub(*(HVX_Vector *)ua, *(HVX_Vector *)ub);
  emit(&out1, 128);
  emit(&out2, 128);
  emit(&outw, 256);
  return 0;
}
"#,
    );
    let out = compile_and_run(Toolchain::Hvx, &src, &[], workdir().path()).unwrap();
    let mut h: Vec<i16> = (0..64)
        .map(|i: i32| ((i * 300 - 9000) as i16).wrapping_add((i * 211 + 17) as i16))
        .collect();
    h[63] = i16::MIN;
    let ua: Vec<u8> = (0..128).map(|i: i32| (i * 37 + 11) as u8).collect();
    let ub: Vec<u8> = (0..128).map(|i: i32| (250 - i) as u8).collect();
    let rt: [i32; 4] = [3, 127, -1, -128];
    let w: Vec<i32> = (0..32)
        .map(|j| (0..4).map(|k| ua[4 * j + k] as i32 * rt[k]).sum())
        .collect();
    // Widening pair: lo vector holds even-indexed lanes, hi vector holds odd-indexed lanes.
    let even: Vec<i16> = (0..64)
        .map(|i| ua[2 * i] as i16 + ub[2 * i] as i16)
        .collect();
    let odd: Vec<i16> = (0..64)
        .map(|i| ua[2 * i + 1] as i16 + ub[2 * i + 1] as i16)
        .collect();
    let mut exp = le_i16(&h);
    exp.extend(le_i32(&w));
    exp.extend(le_i16(&even));
    exp.extend(le_i16(&odd));
    assert_eq!(out.len(), exp.len());
    assert_eq!(out, exp);
}

#[test]
fn hvx_stack_vectors_division_and_exit_code() {
    if !have(Toolchain::Hvx) {
        return;
    }
    // Stack-allocated vectors/pairs, struct copy (memcpy helper) and runtime division must all work.
    let src = program(
        Toolchain::Hvx,
        r#"
struct big { int x[64]; };
static struct big g = {{1, 2, 3}};
static volatile int seven = 7, minus100 = -100;
__attribute__((noinline)) static HVX_VectorPair twice(HVX_Vector v) { HVX_VectorPair p[2]; p[1] = Q6_W_vcombine_VV(v, v); return p[1]; }
int harness_main(void) {
  HVX_Vector st[3];
  st[0] = Q6_V_vsplat_R(0x01020304);
  HVX_VectorPair p = twice(st[0]);
  struct big c = g; c.x[10] = minus100 / seven + (minus100 % seven) * 100 + (int)(1000000000000LL / seven % 1000);
  emit(&p, 256);
  emit(&c.x[0], 4); emit(&c.x[10], 4);
  return 42;
}
"#,
    );
    let err = compile_and_run(Toolchain::Hvx, &src, &[], workdir().path()).unwrap_err();
    assert!(err.contains("exit status 42"), "{err}");
    let ok_src = src.replace("return 42;", "return 0;");
    let out = compile_and_run(Toolchain::Hvx, &ok_src, &[], workdir().path()).unwrap();
    let mut exp: Vec<u8> = [4u8, 3, 2, 1].repeat(64);
    exp.extend(1i32.to_le_bytes());
    let v: i32 = -100 / 7 + (-100 % 7) * 100 + (1_000_000_000_000i64 / 7 % 1000) as i32;
    exp.extend(v.to_le_bytes());
    assert_eq!(out, exp);
}

#[test]
fn stdin_reaches_every_target() {
    let body = "int harness_main(void) { static unsigned char b[300000] __attribute__((aligned(256)));\n\
                    unsigned long n = read_in(b, sizeof b); for (unsigned long i = 0; i < n; i++) b[i] ^= 0x5a;\n\
                    emit(b, n); return n == 300000 ? 0 : 9; }\n";
    let input: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let expect: Vec<u8> = input.iter().map(|b| b ^ 0x5a).collect();
    for t in Toolchain::ALL {
        if !have(t) || (t == Toolchain::X86 && !cfg!(target_arch = "x86_64")) {
            continue;
        }
        let out = build_and_run(t, &program(t, body), &[], workdir().path(), &input).unwrap();
        assert!(out == expect, "{t}: {} bytes back", out.len());
        // A short input is seen as such (exit 9), with the stdout written so far.
        match build_and_run(t, &program(t, body), &[], workdir().path(), &input[..1000]) {
            Err(Failure::Run { summary, stdout }) => {
                assert!(summary.contains("exit status 9"), "{summary}");
                assert_eq!(stdout.len(), 1000);
            }
            other => panic!("{t}: {other:?}"),
        }
    }
}

#[test]
fn compile_error_is_reported() {
    if !have(Toolchain::X86) {
        return;
    }
    let src = program(
        Toolchain::X86,
        "int harness_main(void) { return undefined_thing; }\n",
    );
    let err = compile_and_run(Toolchain::X86, &src, &[], workdir().path()).unwrap_err();
    assert!(
        err.contains("compile failed") && err.contains("undefined_thing"),
        "{err}"
    );
}
