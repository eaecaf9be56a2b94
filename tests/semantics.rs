//! The interpreter and the z3 encoding agree on every instruction in the specs, at reduced
//! lanes; stored semantics text parses back to the same tree.

use isadb::testing::{eval_with_z3, read_one, Scope};
use isadb::{eval, load_dir, Elem, Env, Macros, Op, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

fn specs() -> isadb::SpecSet {
    load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("specs")).expect("specs load")
}

/// A lane value: edge cases half the time, random bits otherwise. f32 lanes are never zero:
/// division by zero is IEEE infinity for the interpreter but unspecified over the reals.
fn lane(rng: &mut SmallRng, elem: Elem) -> u128 {
    if elem == Elem::F32 {
        let x: f32 = [1.0, -1.0, 0.5, 3.25, -1e3][rng.gen_range(0..5)];
        return (if rng.gen_bool(0.5) {
            x
        } else {
            rng.gen_range(-100.0f32..100.0)
        })
        .to_bits() as u128;
    }
    let m = elem.mask();
    let edges = [0, 1, m, m >> 1, (m >> 1) + 1, 2, m - 1, 0x55 & m, 0xAA & m];
    if rng.gen_bool(0.5) {
        edges[rng.gen_range(0..edges.len())]
    } else {
        rng.gen::<u128>() & m
    }
}

#[test]
fn interpreter_and_z3_agree_on_every_instruction() {
    let set = specs();
    let mut rng = SmallRng::seed_from_u64(7);
    let (mut checked, mut uninterpreted) = (0, 0);
    let mut failures = Vec::new();
    for ins in &set.instructions {
        let scaled = set.scaled(ins).expect("scaled instance");
        let sem = &scaled.semantics;
        // sqrt, and f32 lanes made from bits (x86's andps, cmpps), are uninterpreted functions
        // in z3: it cannot compute them from concrete inputs.
        let mut uninterpreted_op = false;
        sem.walk(&mut |e| uninterpreted_op |= e.op == Op::Sqrt || e.op == Op::Bitcast(Elem::F32));
        if uninterpreted_op {
            uninterpreted += 1;
            continue;
        }
        for _ in 0..3 {
            let mut env = Env::new();
            for op in &scaled.operands {
                let lanes = (0..op.ty.lanes)
                    .map(|_| match op.imm {
                        Some((lo, hi)) => rng.gen_range(lo..=hi) as u128 & op.ty.elem.mask(),
                        None => lane(&mut rng, op.ty.elem),
                    })
                    .collect();
                env.insert(op.name.clone(), Value::new(op.ty, lanes));
            }
            let concrete = eval(sem, &env).expect("interpreter");
            let symbolic = eval_with_z3(sem, &env).unwrap_or_else(|e| panic!("{}: {e}", ins.name));
            let same = if sem.ty.elem == Elem::F32 {
                (0..concrete.lanes.len()).all(|i| {
                    let (a, b) = (concrete.f32(i), symbolic.f32(i));
                    (a - b).abs() <= 1e-3 * a.abs().max(1.0)
                })
            } else {
                concrete == symbolic
            };
            if !same {
                failures.push(format!(
                    "{} ({}): interpreter {concrete} vs z3 {symbolic}",
                    ins.name, scaled.result
                ));
                break;
            }
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 50, "only {checked} instructions checked");
    eprintln!(
        "agreement: {checked} instructions checked, {uninterpreted} use uninterpreted sqrt or f32 bits"
    );
}

#[test]
fn stored_semantics_round_trip_through_text() {
    let set = specs();
    let macros = Macros::default();
    for ins in &set.instructions {
        let parsed = Scope::new(&macros)
            .expr(&read_one(&ins.sem_text, &ins.name).unwrap())
            .unwrap();
        assert_eq!(parsed.to_string(), ins.sem_text, "{}", ins.name);
        assert_eq!(*parsed, *ins.semantics, "{}", ins.name);
    }
}

/// Every NEON register operand in assembly text names a real arrangement (`Vd.8H`, `Vn.S[]`):
/// a spec's asm template once printed `addhn Vd.416` (a `let` shadowed the `H` of `4H`).
#[test]
fn neon_asm_names_real_arrangements() {
    let set = specs();
    let valid = [
        "8B", "16B", "4H", "8H", "2S", "4S", "1D", "2D", "4B", "B", "H", "S", "D",
    ];
    let mut bad = Vec::new();
    for ins in set
        .instructions
        .iter()
        .filter(|i| i.isa == isadb::Isa::Neon)
    {
        for operand in ins.asm.split([' ', ',', '{', '}']) {
            let Some((_, arrangement)) = operand.split_once('.') else {
                continue;
            };
            let arrangement = arrangement.split('[').next().unwrap_or_default();
            if operand.starts_with('V') && !valid.contains(&arrangement) {
                bad.push(format!("{}: {}", ins.name, ins.asm));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} bad arrangements: {:?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
}

/// NEON's D-register forms take one-lane vectors (`vadd_s64(int64x1_t, int64x1_t)`), the scalar
/// forms scalars (`vaddd_s64(int64_t, int64_t)`): `(vector-registers ...)` says which, so the
/// harness and the emitted C pass the type the intrinsic declares.
#[test]
fn neon_d_register_forms_take_one_lane_vectors() {
    let set = specs();
    let c_types = |name: &str| -> Vec<Option<String>> {
        let ins = set.instruction(name).expect(name);
        ins.operands.iter().map(|o| o.c_type.clone()).collect()
    };
    let x1 = |t: &str| Some(t.to_string());
    assert_eq!(c_types("vadd_s64"), vec![x1("int64x1_t"), x1("int64x1_t")]);
    assert_eq!(c_types("vaddd_s64"), vec![None, None]);
    assert_eq!(
        c_types("vbsl_u64"),
        vec![x1("uint64x1_t"), x1("uint64x1_t"), x1("uint64x1_t")]
    );
    // The shift count is an immediate, not a register.
    assert_eq!(c_types("vshr_n_s64"), vec![x1("int64x1_t"), None]);
    assert_eq!(c_types("vshrd_n_s64"), vec![None, None]);
    assert_eq!(c_types("vpadal_s32"), vec![x1("int64x1_t"), None]);
}

#[test]
fn scaled_instances_have_fewer_lanes() {
    let set = specs();
    let madd = set
        .instruction("_mm512_madd_epi16")
        .expect("_mm512_madd_epi16 is specified");
    let scaled = set.scaled(madd).unwrap();
    assert_eq!(madd.result.to_string(), "<16 x i32>");
    assert_eq!(scaled.result.to_string(), "<2 x i32>");
    assert_eq!(scaled.operands[0].ty.to_string(), "<4 x i16>");
}

/// An IR expression from its text.
fn ir(text: &str) -> std::rc::Rc<isadb::Expr> {
    Scope::new(&Macros::default())
        .expr(&read_one(text, "test").unwrap())
        .unwrap()
}

fn lanes(ty: &str, values: &[u128]) -> Value {
    Value::new(isadb::VecType::parse(ty).unwrap(), values.to_vec())
}

#[test]
fn compress_and_expand_move_lanes_by_the_mask() {
    let mut env = Env::new();
    env.insert("k".into(), lanes("<6 x bool>", &[0, 1, 1, 0, 0, 1]));
    env.insert("x".into(), lanes("<6 x i16>", &[10, 11, 12, 13, 14, 65535]));
    let compress = ir("(compress (var k <6 x bool>) (var x <6 x i16>))");
    let expand = ir("(expand (var k <6 x bool>) (var x <6 x i16>))");
    let c = eval(&compress, &env).unwrap();
    let e = eval(&expand, &env).unwrap();
    assert_eq!(c.to_string(), "[11 12 -1 0 0 0]");
    assert_eq!(e.to_string(), "[0 10 11 0 0 12]");
    assert_eq!(eval_with_z3(&compress, &env).unwrap(), c);
    assert_eq!(eval_with_z3(&expand, &env).unwrap(), e);
    env.insert("k".into(), lanes("<6 x bool>", &[0; 6]));
    assert_eq!(eval(&compress, &env).unwrap().to_string(), "[0 0 0 0 0 0]");
    assert_eq!(eval(&expand, &env).unwrap().to_string(), "[0 0 0 0 0 0]");
}

#[test]
fn z3_proves_expand_undoes_compress_and_refutes_compress_as_select() {
    use isadb::{prove_equivalent, Verdict};
    let round_trip =
        ir("(expand (var k <8 x bool>) (compress (var k <8 x bool>) (var x <8 x u8>)))");
    let masked = ir("(select (var k <8 x bool>) (var x <8 x u8>) (const <8 x u8> 0))");
    let verdict = prove_equivalent(&round_trip, &masked, None, 10_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
    let compress = ir("(compress (var k <8 x bool>) (var x <8 x u8>))");
    match prove_equivalent(&compress, &masked, None, 10_000).unwrap() {
        Verdict::Counterexample { lhs, rhs, .. } => assert_ne!(lhs, rhs),
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

#[test]
fn carryless_multiply_and_remainder_are_gf2_polynomial_arithmetic() {
    let mut env = Env::new();
    env.insert("a".into(), lanes("<3 x u16>", &[0x57, 0b11, 0xffff]));
    env.insert("b".into(), lanes("<3 x u16>", &[0x83, 0b11, 0xffff]));
    let product = ir("(clmul (var a <3 x u16>) (var b <3 x u16>))");
    // FIPS-197 section 4.2: {57} * {83} = {2b79}, which is {c1} modulo x^8 + x^4 + x^3 + x + 1;
    // (x+1)^2 = x^2 + 1; 0xffff squared keeps the even bits below 16.
    assert_eq!(eval(&product, &env).unwrap().to_string(), "[11129 5 21845]");
    let gf = ir("(clmod (clmul (var a <3 x u16>) (var b <3 x u16>)) (const <3 x u16> 283))");
    let reduced = eval(&gf, &env).unwrap();
    assert_eq!(reduced.lanes[0], 0xc1);
    assert_eq!(eval_with_z3(&gf, &env).unwrap(), reduced);
    assert_eq!(
        eval_with_z3(&product, &env).unwrap(),
        eval(&product, &env).unwrap()
    );
    let by_zero = ir("(clmod (var a <3 x u16>) (const <3 x u16> 0))");
    assert_eq!(eval(&by_zero, &env).unwrap(), env["a"]);
}

#[test]
fn z3_proves_remainders_by_a_symbolic_polynomial_are_reduced() {
    use isadb::{prove_equivalent, Verdict};
    // The remainder has a lower degree than a nonzero divisor (more leading zeros) ...
    let below = ir("(select (eq (var m <2 x u8>) (const <2 x u8> 0)) (const <2 x bool> 1)
                       (gt (clz (clmod (var a <2 x u8>) (var m <2 x u8>))) (clz (var m <2 x u8>))))");
    let yes = ir("(const <2 x bool> 1)");
    let verdict = prove_equivalent(&below, &yes, None, 20_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
    // ... and a second remainder changes nothing, while clmul by x is not the identity.
    let twice = ir("(clmod (clmod (var a <2 x u8>) (var m <2 x u8>)) (var m <2 x u8>))");
    let once = ir("(clmod (var a <2 x u8>) (var m <2 x u8>))");
    assert!(prove_equivalent(&twice, &once, None, 20_000)
        .unwrap()
        .is_proven());
    let by_x = ir("(clmul (var a <2 x u8>) (const <2 x u8> 2))");
    match prove_equivalent(&by_x, &ir("(var a <2 x u8>)"), None, 20_000).unwrap() {
        Verdict::Counterexample { lhs, rhs, .. } => assert_ne!(lhs, rhs),
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

/// The AES S-box by its definition (FIPS-197 5.1.1): the GF(2^8) inverse, then the affine map
/// b ^ rotl(b, 1) ^ rotl(b, 2) ^ rotl(b, 3) ^ rotl(b, 4) ^ 0x63.
fn aes_sbox(x: u8) -> u8 {
    let mul = |mut a: u8, mut b: u8| {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 == 1 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    };
    let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
    inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
}

/// GFNI cannot run on every machine, so its semantics are checked against the published use:
/// gf2p8affineinv with the matrix 0xF1E3C78F1F3E7CF8 and 0x63 is the AES S-box, gf2p8mul is
/// FIPS-197's multiplication, and the identity matrix gives x back (gf2p8affine).
#[test]
fn gfni_semantics_compute_the_aes_sbox() {
    let set = specs();
    let run = |name: &str, x: &[u128], m: &[u128], b: Option<u128>| {
        let ins = set
            .instruction(name)
            .unwrap_or_else(|| panic!("{name} is specified"));
        let mut env = Env::new();
        let values = [x, m];
        for (op, v) in ins
            .operands
            .iter()
            .zip(values.iter().copied().chain([&[][..]]))
        {
            let lanes = match op.imm {
                Some(_) => vec![b.unwrap()],
                None => v.to_vec(),
            };
            env.insert(op.name.clone(), Value::new(op.ty, lanes));
        }
        eval(&ins.semantics, &env).unwrap().lanes
    };
    let matrix = |q: u64| {
        (0..16)
            .map(|i| (q >> (8 * (i % 8)) & 0xff) as u128)
            .collect::<Vec<_>>()
    };
    for start in (0..256).step_by(16) {
        let x: Vec<u128> = (start..start + 16).collect();
        let want: Vec<u128> = x.iter().map(|&v| aes_sbox(v as u8) as u128).collect();
        let got = run(
            "_mm_gf2p8affineinv_epi64_epi8",
            &x,
            &matrix(0xF1E3C78F1F3E7CF8),
            Some(0x63),
        );
        assert_eq!(got, want, "S-box of {start}..");
        let same = run(
            "_mm_gf2p8affine_epi64_epi8",
            &x,
            &matrix(0x0102040810204080),
            Some(0),
        );
        assert_eq!(same, x);
    }
    // The reference itself against published S-box entries.
    assert_eq!(
        [aes_sbox(0), aes_sbox(1), aes_sbox(0x53), aes_sbox(0xff)],
        [0x63, 0x7c, 0xed, 0x16]
    );
    let product = run("_mm_gf2p8mul_epi8", &[0x57; 16], &[0x83; 16], None);
    assert_eq!(product, vec![0xc1; 16]);
}

#[test]
fn roundings_to_integral_f32_agree_with_ieee_at_ties_and_z3_tells_them_apart() {
    use isadb::{prove_equivalent, Verdict};
    let x = [2.5f32, -2.5, 0.5, -0.5, 1.5, -0.3, 0.7, 8388607.5];
    let mut env = Env::new();
    let bits: Vec<u128> = x.iter().map(|v| v.to_bits() as u128).collect();
    env.insert("x".into(), lanes("<8 x f32>", &bits));
    let expected: [(&str, [f32; 8]); 5] = [
        ("floor", [2.0, -3.0, 0.0, -1.0, 1.0, -1.0, 0.0, 8388607.0]),
        ("ceil", [3.0, -2.0, 1.0, -0.0, 2.0, -0.0, 1.0, 8388608.0]),
        ("trunc", [2.0, -2.0, 0.0, -0.0, 1.0, -0.0, 0.0, 8388607.0]),
        ("round", [2.0, -2.0, 0.0, -0.0, 2.0, -0.0, 1.0, 8388608.0]),
        (
            "round-away",
            [3.0, -3.0, 1.0, -1.0, 2.0, -0.0, 1.0, 8388608.0],
        ),
    ];
    for (op, want) in expected {
        let e = ir(&format!("({op} (var x <8 x f32>))"));
        let got = eval(&e, &env).unwrap();
        let want: Vec<u128> = want.iter().map(|v| v.to_bits() as u128).collect();
        assert_eq!(got.lanes, want, "{op}");
        // z3's model of the rounding (over the reals, where -0 is 0) gives the same values.
        let by_z3 = eval_with_z3(&e, &env).unwrap();
        let real = |l: &[u128]| -> Vec<f32> {
            l.iter().map(|b| f32::from_bits(*b as u32) + 0.0).collect()
        };
        assert_eq!(real(&by_z3.lanes), real(&got.lanes), "{op} by z3");
    }
    let a = |op: &str| ir(&format!("({op} (var a <4 x f32>))"));
    let trunc_as_select = ir("(select (lt (var a <4 x f32>) (const <4 x f32> 0.0)) (ceil (var a <4 x f32>)) (floor (var a <4 x f32>)))");
    let verdict = prove_equivalent(&a("trunc"), &trunc_as_select, None, 20_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
    for (l, r) in [
        ("round", "round-away"),
        ("round", "floor"),
        ("trunc", "ceil"),
    ] {
        match prove_equivalent(&a(l), &a(r), None, 20_000).unwrap() {
            Verdict::Counterexample { lhs, rhs, .. } => assert_ne!(lhs, rhs, "{l} {r}"),
            other => panic!("{l} against {r}: expected a counterexample, got {other:?}"),
        }
    }
}

/// x86's truncating conversion gives -2^31 out of range and for NaN; the IR's saturates. The
/// fix-up the selector uses (the maximum above the range) proves in milliseconds, with the
/// conversions' bounds outside z3's `int2bv` (a minute unknown before), a saturating narrowing
/// of it too; without the fix-up z3 finds the lane at 2^31. u32 to f32 by halves proves as a
/// linear fact over the 16-bit pieces (20 s with z3's `bv2int` of the whole word).
/// f32 `abs` and negation as the sign bit cleared and flipped (x86's `andps`/`xorps` with a
/// constant) are proven; a mask clearing another bit is not.
#[test]
fn z3_reads_the_sign_bit_cleared_and_flipped_as_abs_and_negation() {
    use isadb::prove_equivalent;
    let x = "(var x <4 x f32>)";
    let on_bits = |logic: &str, mask: u32| {
        ir(&format!(
            "(bitcast f32 ({logic} (bitcast u32 {x}) (const <4 x u32> {mask})))"
        ))
    };
    for (lhs, rhs) in [
        (format!("(abs {x})"), on_bits("and", 0x7fff_ffff)),
        (format!("(neg {x})"), on_bits("xor", 0x8000_0000)),
        (format!("(neg (abs {x}))"), on_bits("or", 0x8000_0000)),
    ] {
        let verdict = prove_equivalent(&ir(&lhs), &rhs, None, 20_000).unwrap();
        assert!(verdict.is_proven(), "{lhs}: {verdict:?}");
    }
    let wrong = prove_equivalent(
        &ir(&format!("(abs {x})")),
        &on_bits("and", 0x7fff_fffe),
        None,
        20_000,
    );
    assert!(!wrong.unwrap().is_proven());
}

#[test]
fn z3_proves_the_fixed_up_conversion_and_refutes_the_bare_one() {
    use isadb::{prove_equivalent, Verdict};
    let truncated = "(select (and (ge (var x <4 x f32>) (const <4 x f32> -2147483648.0)) (lt (var x <4 x f32>) (const <4 x f32> 2147483648.0))) (cast i32 (var x <4 x f32>)) (const <4 x i32> -2147483648))";
    let fixed = format!(
        "(select (ge (var x <4 x f32>) (const <4 x f32> 2147483648.0)) (const <4 x i32> 2147483647) (select (eq (var x <4 x f32>) (var x <4 x f32>)) {truncated} (const <4 x i32> 0)))"
    );
    let cast = ir("(cast i32 (var x <4 x f32>))");
    let verdict = prove_equivalent(&cast, &ir(&fixed), None, 20_000).unwrap();
    assert!(verdict.is_proven(), "{verdict:?}");
    let narrowed = ir(&format!("(sat-cast i16 {fixed})"));
    let verdict = prove_equivalent(&ir("(cast i16 (var x <4 x f32>))"), &narrowed, None, 20_000);
    assert!(verdict.unwrap().is_proven());
    match prove_equivalent(&cast, &ir(truncated), None, 20_000).unwrap() {
        Verdict::Counterexample { lhs, rhs, .. } => assert_ne!(lhs, rhs),
        other => panic!("expected a counterexample, got {other:?}"),
    }
    // u32 to f32 by its 16-bit halves (AVX2 converts only from i32), and not by the high half
    // alone.
    let x = "(var x <4 x u32>)";
    let half = |part: &str| format!("(cast f32 (bitcast i32 {part}))");
    let high = half(&format!("(shr {x} (const <4 x u32> 16))"));
    let low = half(&format!("(and {x} (const <4 x u32> 65535))"));
    let scaled = format!("(mul {high} (const <4 x f32> 65536.0))");
    let whole = ir(&format!("(cast f32 {x})"));
    let verdict = prove_equivalent(&whole, &ir(&format!("(add {scaled} {low})")), None, 20_000);
    assert!(verdict.unwrap().is_proven());
    let refuted = prove_equivalent(&whole, &ir(&scaled), None, 20_000).unwrap();
    assert!(
        matches!(refuted, Verdict::Counterexample { .. }),
        "{refuted:?}"
    );
}
