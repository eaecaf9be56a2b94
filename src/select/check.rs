//! Runs the emitted C function on random inputs (natively, under qemu-aarch64 or qemu-hexagon,
//! with the validation toolchains) and compares every output lane with the interpreter on the
//! input expression. The features of the selected instructions decide, through validation's
//! feature table, the compiler flags and whether this machine can run the program at all; one
//! it cannot run is still compiled and linked.

use super::catalog::Catalog;
use super::compile::Compiled;
use super::emit_c::{c_name, function, parameters, result_lane_bytes, result_type, scalar_type};
use super::node::Node;
use crate::error::{Error, Result};
use crate::ir::limits::MAX_RUN_LANES;
use crate::ir::{Elem, Expr, Op, VecType};
use crate::semantics::sample::random_lanes;
use crate::semantics::value::lane_eq;
use crate::semantics::{eval, Env, Value};
use crate::toolchain::features::{compile_flags, missing, Host};
use crate::toolchain::{build_and_run, build_only, prelude, Toolchain};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::fmt::Write;
use std::path::Path;

/// What running the selection's C found.
#[derive(Debug, PartialEq)]
pub enum RunCheck {
    /// Every lane of every iteration (`lanes` in all) equals the interpreter's (any two f32
    /// NaNs are equal: IEEE leaves their payloads to the hardware).
    Equal {
        /// Lanes compared.
        lanes: usize,
        /// How f32 inputs were drawn and f32 results compared.
        floats: Floats,
    },
    /// The first differing lane: iteration, lane, expected, actual.
    Mismatch(String),
    /// Compiled and linked, not run: why this machine cannot run it ("CPU lacks avx512vnni").
    NotRun(String),
}

/// How a check draws f32 inputs and compares f32 results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floats {
    /// The input has no f32 lanes.
    None,
    /// Proven over the reals: f32 inputs drawn finite, f32 results compared as numbers (-0
    /// equals +0), the domain of the proof.
    Reals,
    /// Every f32 value of the input only reaches comparisons, conversions, roundings, selects,
    /// negations and absolute values, whose IEEE results are fixed for every input, NaN and
    /// infinities included (a conversion of NaN is 0, a comparison with NaN false but for
    /// `!=`): those are drawn too, and lanes compared exactly. The proof, over the reals, does
    /// not see them.
    Ieee,
}

impl Floats {
    /// How `input`'s f32 lanes are checked.
    pub fn of(input: &Expr) -> Floats {
        let mut any = false;
        let mut ieee = true;
        input.walk(&mut |n| {
            any |= n.ty.elem == Elem::F32;
            let f32_node_ieee = match n.op {
                Op::Var(_) | Op::Const(_) | Op::Select | Op::Neg | Op::Abs => true,
                Op::Floor | Op::Ceil | Op::Trunc | Op::Round | Op::RoundAway => true,
                // A conversion from integers: no NaN to meet.
                Op::Cast(Elem::F32) => n.args[0].ty.elem.is_int(),
                _ => false,
            };
            let reads_f32_ieee = match n.op {
                Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Select => true,
                Op::Neg | Op::Abs => true,
                Op::Floor | Op::Ceil | Op::Trunc | Op::Round | Op::RoundAway => true,
                Op::Cast(e) | Op::SatCast(e) => e.is_int(),
                _ => false,
            };
            let reads_f32 = n.args.iter().any(|a| a.ty.elem == Elem::F32);
            ieee &= (n.ty.elem != Elem::F32 || f32_node_ieee) && (!reads_f32 || reads_f32_ieee);
        });
        match (any, ieee) {
            (false, _) => Floats::None,
            (true, true) => Floats::Ieee,
            (true, false) => Floats::Reals,
        }
    }
}

/// The CPU features of the selected instructions, sorted, each once. An AVX-512 instruction on
/// registers narrower than 512 bits also needs AVX512VL (Intel's rule for its 128- and 256-bit
/// forms), which the database's single feature per instruction leaves out.
pub fn features(compiled: &Compiled, catalog: &Catalog) -> Vec<String> {
    fn walk(n: &Node, catalog: &Catalog, out: &mut Vec<String>) {
        if let Node::Instr { index, .. } = n {
            let ins = &catalog.instructions[*index];
            let narrow = ins
                .operands
                .iter()
                .map(|o| o.ty)
                .chain([ins.result])
                .any(|t| t.lanes > 1 && t.elem != Elem::Bool && t.bits() < 512);
            out.push(ins.feature.clone());
            if narrow && ins.feature.starts_with("avx512") && !ins.feature.contains("avx512vl") {
                out.push("avx512vl".into());
            }
        }
        n.children().iter().for_each(|c| walk(c, catalog, out));
    }
    let mut out = Vec::new();
    walk(&compiled.root, catalog, &mut out);
    out.sort();
    out.dedup();
    out
}

fn le_bytes(ty: VecType, lanes: &[u128]) -> Vec<u8> {
    let size = (ty.elem.bits() / 8) as usize;
    lanes
        .iter()
        .flat_map(|l| l.to_le_bytes()[..size].to_vec())
        .collect()
}

/// Inputs for `iterations` runs of a selection's C function: each parameter's lanes for every
/// iteration, one after the other.
pub struct Inputs {
    #[allow(missing_docs)]
    pub iterations: usize,
    /// Each parameter: name, type (of one iteration) and the lanes of all iterations.
    pub values: Vec<(String, VecType, Vec<u128>)>,
}

impl Inputs {
    /// The lanes of parameter `name` in iteration `it`.
    pub fn at(&self, name: &str, it: usize) -> Option<&[u128]> {
        let (_, ty, lanes) = self.values.iter().find(|(n, _, _)| n == name)?;
        let n = ty.lanes as usize;
        lanes.get(it * n..(it + 1) * n)
    }
}

/// Random inputs (a third of the lanes edge values) for `iterations` runs of the selection,
/// within isadb's budget of lanes per check.
pub fn random_inputs(compiled: &Compiled, iterations: usize, seed: u64) -> Result<Inputs> {
    let params = parameters(compiled);
    let lanes = iterations
        * params
            .iter()
            .chain([&(String::new(), compiled.input.ty)])
            .map(|(_, ty)| ty.lanes as usize)
            .sum::<usize>();
    if lanes > MAX_RUN_LANES {
        return Err(Error::Usage(format!(
            "--run {iterations}: {lanes} lanes of inputs and outputs, past isadb's budget of {MAX_RUN_LANES} per check; run fewer iterations"
        )));
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let finite = Floats::of(&compiled.input) == Floats::Reals;
    let values = params
        .into_iter()
        .map(|(name, ty)| {
            let mut lanes = random_lanes(ty, ty.lanes as usize * iterations, &mut rng);
            if finite && ty.elem == Elem::F32 {
                // Finite values only: f32 selections are proven over the reals.
                for (i, lane) in lanes.iter_mut().enumerate() {
                    if !f32::from_bits(*lane as u32).is_finite() {
                        *lane = ((i % 17) as f32 - 8.0).to_bits() as u128;
                    }
                }
            }
            (name, ty, lanes)
        })
        .collect();
    Ok(Inputs { iterations, values })
}

/// The C under test: its functions, and the statements of the harness's main that fill `out`
/// (the result lanes of every iteration, one after the other) from the `NAME_in` arrays (each
/// input's lanes of every iteration).
pub struct Entry {
    /// The functions, without headers.
    pub functions: String,
    /// The statements calling them.
    pub call: String,
}

impl Entry {
    /// The selection's function over arrays, called once on every iteration's lanes.
    pub fn kernel(compiled: &Compiled, catalog: &Catalog, inputs: &Inputs) -> Result<Entry> {
        let out_len = compiled.input.ty.lanes as usize * inputs.iterations;
        let args: Vec<String> = inputs
            .values
            .iter()
            .map(|(name, _, _)| format!("{}_in", c_name(name)))
            .chain(["out".to_string(), out_len.to_string()])
            .collect();
        Ok(Entry {
            functions: function(compiled, catalog, "kernel")?,
            call: format!("  kernel({});\n", args.join(", ")),
        })
    }
}

/// Compiles the selection's C and runs it on `inputs`: the output lanes of every iteration,
/// one after the other; or, when `host` cannot run a feature of the selection, why (the program
/// is still compiled and linked).
pub fn run_on(
    compiled: &Compiled,
    catalog: &Catalog,
    inputs: &Inputs,
    workdir: &Path,
    host: &Host,
) -> Result<std::result::Result<Vec<u128>, String>> {
    let entry = Entry::kernel(compiled, catalog, inputs)?;
    run_entry(compiled, catalog, inputs, &entry, workdir, host)
}

/// [`run_on`] with the C under test given.
pub fn run_entry(
    compiled: &Compiled,
    catalog: &Catalog,
    inputs: &Inputs,
    entry: &Entry,
    workdir: &Path,
    host: &Host,
) -> Result<std::result::Result<Vec<u128>, String>> {
    let result = compiled.input.ty;
    let iterations = inputs.iterations;
    let mut stdin = Vec::new();
    let mut main = String::from("int harness_main(void) {\n");
    for (name, ty, lanes) in &inputs.values {
        let name = c_name(name);
        stdin.extend(le_bytes(*ty, lanes));
        let c = scalar_type(ty.elem)?;
        let len = ty.lanes as usize * iterations;
        writeln!(
            main,
            "  static {c} {name}_in[{len}];\n  read_in({name}_in, sizeof {name}_in);"
        )
        .expect("string write");
    }
    let out_len = result.lanes as usize * iterations;
    writeln!(
        main,
        "  static {} out[{out_len}];\n{}  emit(out, sizeof out);\n  return 0;\n}}",
        result_type(result.elem)?,
        entry.call
    )
    .expect("string write");
    let toolchain = Toolchain::of(catalog.target.isa)
        .ok_or_else(|| Error::Usage(format!("no C toolchain runs {}", catalog.target.name)))?;
    let source = format!("{}\n{}\n{main}", prelude(toolchain), entry.functions);
    let used = features(compiled, catalog);
    let mut flags: Vec<String> = Vec::new();
    for f in used.iter().flat_map(|f| compile_flags(toolchain, f)) {
        if !flags.contains(&f) {
            flags.push(f);
        }
    }
    let tool_error = |f| Error::Tool(format!("{} C: {f}", catalog.target.name));
    if let Some(reason) = used.iter().find_map(|f| missing(toolchain, f, host)) {
        build_only(toolchain, &source, &flags, workdir).map_err(tool_error)?;
        return Ok(Err(reason));
    }
    let bytes = build_and_run(toolchain, &source, &flags, workdir, &stdin).map_err(tool_error)?;
    let size = result_lane_bytes(result.elem);
    if bytes.len() != out_len * size {
        return Err(Error::Tool(format!(
            "the program wrote {} bytes, expected {}",
            bytes.len(),
            out_len * size
        )));
    }
    Ok(Ok(bytes
        .chunks(size)
        .map(|c| {
            let mut b = [0u8; 16];
            b[..size].copy_from_slice(c);
            u128::from_le_bytes(b)
        })
        .collect()))
}

/// Compiles the selection's C, runs it over `iterations` chunks of random inputs and compares;
/// when `host` cannot run a feature of the selection, only compiles it.
pub fn run_c(
    compiled: &Compiled,
    catalog: &Catalog,
    iterations: usize,
    seed: u64,
    workdir: &Path,
    host: &Host,
) -> Result<RunCheck> {
    let inputs = random_inputs(compiled, iterations, seed)?;
    let actual = match run_on(compiled, catalog, &inputs, workdir, host)? {
        Ok(lanes) => lanes,
        Err(reason) => return Ok(RunCheck::NotRun(reason)),
    };
    let result = compiled.input.ty;
    let floats = Floats::of(&compiled.input);
    for it in 0..iterations {
        let mut env = Env::new();
        for (name, ty, _) in &inputs.values {
            let lanes = inputs.at(name, it).expect("every iteration has its lanes");
            env.insert(name.clone(), Value::new(*ty, lanes.to_vec()));
        }
        let expected = eval(&compiled.input, &env)?;
        let n = result.lanes as usize;
        for (lane, (e, a)) in expected.lanes.iter().zip(&actual[it * n..]).enumerate() {
            let as_numbers = floats == Floats::Reals
                && result.elem == Elem::F32
                && f32::from_bits(*e as u32) == f32::from_bits(*a as u32);
            if !lane_eq(result.elem, *e, *a) && !as_numbers {
                return Ok(RunCheck::Mismatch(format!(
                    "iteration {it} lane {lane}: interpreter {e:#x}, {} {a:#x}",
                    catalog.target.name
                )));
            }
        }
    }
    Ok(RunCheck::Equal {
        lanes: result.lanes as usize * iterations,
        floats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;
    use std::collections::HashMap;

    fn floats(text: &str) -> Floats {
        let e = elaborate_expression(text, "test", &Macros::default(), 8, &HashMap::new());
        Floats::of(&e.unwrap())
    }

    #[test]
    fn nan_is_drawn_only_where_ieee_fixes_every_f32_result() {
        assert_eq!(floats("x_u8 + y_u8"), Floats::None);
        // Comparisons, conversions to integers, roundings and selects: IEEE's results.
        for ieee in [
            "i32(x_f32)",
            "u8(floor(x_f32))",
            "x_f32 != y_f32",
            "select(x_f32 < y_f32, x_f32, y_f32)",
            "f32(x_i32) < y_f32",
            "-abs(x_f32)",
        ] {
            assert_eq!(floats(ieee), Floats::Ieee, "{ieee}");
        }
        // Arithmetic, and minimums whose NaN operand the selection may return either way.
        for reals in [
            "x_f32 + y_f32",
            "i32(x_f32 * 2.0f)",
            "min(x_f32, y_f32)",
            "abs(x_f32 - y_f32)",
        ] {
            assert_eq!(floats(reals), Floats::Reals, "{reals}");
        }
    }
}
