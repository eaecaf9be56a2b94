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
        let mut has_sqrt = false;
        sem.walk(&mut |e| has_sqrt |= e.op == Op::Sqrt);
        if has_sqrt {
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
    eprintln!("agreement: {checked} instructions checked, {uninterpreted} use uninterpreted sqrt");
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
