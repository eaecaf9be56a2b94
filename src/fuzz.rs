//! Hostile-input fuzzing (issue 16): the expression, s-expression, spec, rule, Datalog and CSV
//! readers fed mutations of the shipped inputs (bytes flipped, deleted, duplicated, nested,
//! huge numbers and lane counts spliced in), from a fixed seed so every run checks the same
//! cases. Each must answer Ok or a one-line error: never a panic, never a multi-line message.

use crate::error::Result;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `ISADB_FUZZ_<NAME>` as a number, else `default`: `ISADB_FUZZ_CASES` (cases per reader,
/// 5,000) and `ISADB_FUZZ_SEED` (16) make longer and other runs.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(format!("ISADB_FUZZ_{name}"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Fragments spliced into inputs: the shapes the probes found panics and hangs with.
const SPLICES: &[&str] = &[
    "(",
    ")",
    "((((((((",
    "))))",
    "<1000000000 x i8>",
    "<0 x u8>",
    "(vec 4294967295 i8)",
    "99999999999999999999999999999999999999999",
    "-170141183460469231731687303715884105729",
    "0xfffffffffffffffffffffffffffffffffff",
    "1e999",
    "nan",
    "\"",
    "\\",
    "{1x}",
    "{a}{a}",
    "\u{fffd}",
    "\0",
    "\n",
    " => ",
    " if ",
    ":-",
    ",",
    "%",
    ";",
    "_",
    "T",
    "c0",
    "x_u8",
    "(imm u8 9 1)",
    "(bitcast u8 a)",
    "(shuffle (1 2 3) a)",
    "(blockwise 0 (a) a)",
    "(slice 0 0 0 a)",
    "(broadcast 0 a)",
    "(reduce-add 0 a)",
    "(tabulate i 1000000000 i)",
    "(cast u128 a)",
    "(shl a 200)",
    "(lanes a)",
    "(case)",
    "(let)",
    "(define (f) (f))",
];

/// A mutation of `seed`: a few random edits.
fn mutate(rng: &mut SmallRng, seed: &str) -> String {
    let mut text: Vec<char> = seed.chars().collect();
    for _ in 0..rng.gen_range(1..=4) {
        let at = rng.gen_range(0..=text.len());
        match rng.gen_range(0..6) {
            0 if !text.is_empty() => {
                let end = (at + rng.gen_range(1..8)).min(text.len());
                text.drain(at.min(end)..end);
            }
            1 => {
                let splice = SPLICES[rng.gen_range(0..SPLICES.len())];
                text.splice(at..at, splice.chars());
            }
            2 if !text.is_empty() => {
                let i = at.min(text.len() - 1);
                text[i] = char::from(rng.gen_range(0x20u8..0x7f));
            }
            3 if !text.is_empty() => {
                let start = at.min(text.len() - 1);
                let end = (start + rng.gen_range(1..40)).min(text.len());
                let piece: Vec<char> = text[start..end].to_vec();
                text.splice(start..start, piece);
            }
            4 => text.truncate(at),
            _ => {
                let depth = rng.gen_range(1..400);
                let wrapped = format!(
                    "{}{}{}",
                    "(not ".repeat(depth),
                    text.iter().collect::<String>(),
                    ")".repeat(depth)
                );
                text = wrapped.chars().collect();
            }
        }
    }
    text.into_iter().collect()
}

/// Feeds `ISADB_FUZZ_CASES` (5,000) mutations of the seeds to `read`; returns (cases, errors).
/// Panics (with the input) on a panic or a multi-line error.
fn fuzz(name: &str, seeds: &[String], mut read: impl FnMut(&str) -> Result<()>) -> (usize, usize) {
    let mut rng = SmallRng::seed_from_u64(setting("SEED", 16));
    let mut errors = 0;
    let cases = setting("CASES", 5000) as usize;
    for case in 0..cases {
        let seed = &seeds[case % seeds.len()];
        let input = mutate(&mut rng, seed);
        let outcome = catch_unwind(AssertUnwindSafe(|| read(&input)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let msg = e.to_string();
                assert!(
                    !msg.contains('\n') && !msg.is_empty(),
                    "{name} case {case}: a message of {} lines for {input:?}: {msg}",
                    msg.lines().count()
                );
                errors += 1;
            }
            Err(_) => panic!("{name} case {case}: panic on {input:?}"),
        }
    }
    eprintln!("fuzz {name}: {cases} cases, {errors} errors, 0 panics");
    (cases, errors)
}

fn shipped(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The top-level forms of a shipped file, one seed each.
fn forms_of(path: &str) -> Vec<String> {
    crate::ir::sexpr::read_all(&shipped(path), path)
        .unwrap()
        .iter()
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn expressions_never_panic() {
    let seeds: Vec<String> = [
        "(halving_add a_u8 b_u8)",
        "(add (and a_u8 b_u8) (shr (xor a_u8 b_u8) 1))",
        "u8(min(u16(a_u8) + u16(b_u8), 255))",
        "select(a_i16 > b_i16, a_i16 - b_i16, b_i16 - a_i16)",
        "(const <4 x i32> 1 2 3 4)",
        "i16(a_u8) * i16(b_u8) + i16(c_u8) * i16(d_u8)",
    ]
    .map(String::from)
    .to_vec();
    let macros =
        crate::spec::load_macros(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs"))
            .unwrap()
            .macros;
    fuzz("expression", &seeds, |text| {
        let (parsed, _) = crate::ir::forms::parse_expression(text, "fuzz")?;
        crate::ir::halide::elaborate_parsed(&parsed, &macros, 8, &Default::default())?;
        Ok(())
    });
}

#[test]
fn s_expressions_and_specs_never_panic() {
    let mut seeds = forms_of("specs/neon/arith.spec");
    seeds.extend(forms_of("specs/idioms/fpir.spec"));
    seeds.truncate(40);
    fuzz("s-expression", &seeds, |text| {
        crate::ir::sexpr::read_all(text, "fuzz").map(drop)
    });
    let prelude = shipped("specs/prelude.spec");
    fuzz("spec", &seeds, |text| {
        let mut set = crate::spec::SpecSet::default();
        let mut forms = crate::ir::sexpr::read_all(&prelude, "prelude")?;
        forms.extend(crate::ir::sexpr::read_all(text, "fuzz")?);
        crate::spec::load::load_forms(&mut set, &forms)
    });
}

#[test]
fn rules_never_panic() {
    let seeds: Vec<String> = ["specs/rules/lift.rules", "specs/rules/simplify.rules"]
        .iter()
        .flat_map(|f| {
            shipped(f)
                .lines()
                .filter(|l| l.starts_with("rule "))
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    let macros = crate::rules::load::rule_macros(
        &crate::spec::load_macros(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs"))
            .unwrap()
            .macros,
    )
    .unwrap();
    fuzz("rule", &seeds, |text| {
        for rule in crate::rules::syntax::parse_rules(text, "fuzz")? {
            for t in crate::rules::load::rule_types(&rule) {
                crate::rules::load::elaborate(&rule, t, 4, &macros)?;
            }
        }
        Ok(())
    });
}

#[test]
fn datalog_never_panics() {
    let seeds = vec![
        shipped("queries/relations.dl"),
        shipped("queries/equivalents.dl"),
        shipped("queries/equivalents_on_target.dl"),
    ];
    fuzz("datalog", &seeds, |text| {
        let program = crate::query::datalog::Program::parse(text, "fuzz")?;
        program.check(&[("implements", 3), ("isa", 2), ("member", 2), ("target", 2)])?;
        let mut facts = crate::query::datalog::Facts::default();
        facts.add("isa", &["a", "x86"]);
        facts.add("member", &["a", "c"]);
        program.unfold("answer").run(&mut facts);
        Ok(())
    });
}

#[test]
fn csv_import_never_panics() {
    let tables = ["kernel_tuning", "synthesis_runs", "verification_runs"];
    let seeds: Vec<String> = tables
        .iter()
        .map(|t| shipped(&format!("rules.db/{t}.csv")))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut db = crate::database::Database::open_in_memory().unwrap();
    let counter = std::cell::Cell::new(0);
    fuzz("csv", &seeds, |text| {
        let table = tables[counter.get() % tables.len()];
        counter.set(counter.get() + 1);
        std::fs::write(dir.path().join(format!("{table}.csv")), text).unwrap();
        let imported = db.import_tables(dir.path(), &[table]);
        std::fs::remove_file(dir.path().join(format!("{table}.csv"))).unwrap();
        imported
    });
}

#[test]
fn kernels_never_panic() {
    use crate::kernel::family;
    let kernels = [
        family::mat_mul(2, 2, 2),
        family::conv(3, 3, 2, 2),
        family::q_prod(),
        family::qr_decomp(2),
    ];
    // Diospyros's C as written: prototypes with attributes, brace initializers, pointers into
    // calloc'd and malloc'd memory, memcpy/memset, a test's main with strings.
    let memory = "#include <string.h>\nvoid h(float *x, int m) __attribute__((always_inline));\n\
void h(float *x, int m) { for (int i = 0; i < m; i++) x[i] = x[i] * 2; }\n\
void k(float *a, float o[4]) {\n  float t[2][2] = {{a[0], 1}, {a[3]}};\n\
  float *p = (float *)calloc(sizeof(float), 4);\n  float *q = (float *)malloc(4 * sizeof(float));\n\
  memcpy(p, &t[0][0], 4 * sizeof(float));\n  memset(q, 0, sizeof(float) * 4);\n  h(p + 1, 3);\n\
  for (int i = 0; i < 4; i++) o[i] += p[i] + q[i] + a[i];\n  free(p);\n}\n\
int main(void) { printf(\"%d\\n\", 'x'); return 0; }\n";
    let c: Vec<String> = kernels
        .iter()
        .map(|k| k.c.clone())
        .chain([memory.to_string()])
        .collect();
    fuzz("kernel C", &c, |text| {
        crate::kernel::c::lift(text, "fuzz.c", crate::kernel::Outputs::Zero)?
            .within_limits("fuzz.c")?;
        Ok(())
    });
    let lifted: Vec<String> = c
        .iter()
        .map(|text| {
            let k = crate::kernel::c::lift(text, "seed.c", crate::kernel::Outputs::Caller).unwrap();
            k.dag.print(k.root)
        })
        .collect();
    fuzz("kernel List", &lifted, |text| {
        crate::kernel::read::read_list(text, "fuzz.sexp")?.within_limits("fuzz.sexp")?;
        Ok(())
    });
}
