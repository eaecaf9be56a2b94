//! Runs the emitted C function on random inputs (natively, under qemu-aarch64 or qemu-hexagon,
//! with the validation toolchains) and compares every output lane with the interpreter on the
//! input expression.

use super::emit_c::{function, parameters, scalar_type};
use super::{Catalog, Compiled};
use crate::error::{Error, Result};
use crate::ir::VecType;
use crate::semantics::{eval, Env, Value};
use crate::validate::inputs::edge_values;
use crate::validate::toolchain::{build_and_run, prelude};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write;
use std::path::Path;

/// Lanes compared, and the first mismatch (iteration, lane, expected, actual) if any.
#[derive(Debug)]
pub struct RunCheck {
    pub lanes: usize,
    pub mismatch: Option<String>,
}

/// Random lane values of `ty`, a third of them edge values (0, max, min, ...).
pub(crate) fn random_lanes(ty: VecType, count: usize, rng: &mut SmallRng) -> Vec<u128> {
    let edges = edge_values(ty.elem);
    (0..count)
        .map(|_| {
            if rng.gen_range(0..3) == 0 {
                edges[rng.gen_range(0..edges.len())]
            } else {
                rng.gen::<u128>() & ty.elem.mask()
            }
        })
        .collect()
}

fn le_bytes(ty: VecType, lanes: &[u128]) -> Vec<u8> {
    let size = (ty.elem.bits() / 8) as usize;
    lanes
        .iter()
        .flat_map(|l| l.to_le_bytes()[..size].to_vec())
        .collect()
}

/// Compiles the selection's C, runs it over `iterations` chunks of random inputs and compares.
pub fn run_c(
    compiled: &Compiled,
    catalog: &Catalog,
    iterations: usize,
    seed: u64,
    workdir: &Path,
) -> Result<RunCheck> {
    let result = compiled.input.ty;
    let params = parameters(compiled);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut inputs = Vec::new();
    let mut stdin = Vec::new();
    for (name, ty) in &params {
        let lanes = random_lanes(*ty, ty.lanes as usize * iterations, &mut rng);
        stdin.extend(le_bytes(*ty, &lanes));
        inputs.push((name.clone(), *ty, lanes));
    }
    let mut main = String::from("int harness_main(void) {\n");
    let mut args = Vec::new();
    for (name, ty, _) in &inputs {
        let c = scalar_type(ty.elem)?;
        let len = ty.lanes as usize * iterations;
        writeln!(
            main,
            "  static {c} {name}_in[{len}];\n  read_in({name}_in, sizeof {name}_in);"
        )
        .expect("string write");
        args.push(format!("{name}_in"));
    }
    let out_len = result.lanes as usize * iterations;
    writeln!(
        main,
        "  static {} out[{out_len}];\n  kernel({}, out, {out_len});\n  emit(out, sizeof out);\n  return 0;\n}}",
        scalar_type(result.elem)?,
        args.join(", ")
    )
    .expect("string write");
    let source = format!(
        "{}\n{}\n{main}",
        prelude(catalog.target.toolchain()),
        function(compiled, catalog, "kernel")?
    );
    let bytes = build_and_run(catalog.target.toolchain(), &source, &[], workdir, &stdin)
        .map_err(|f| Error::Tool(format!("{} C: {f}", catalog.target.name)))?;
    let size = (result.elem.bits() / 8) as usize;
    if bytes.len() != out_len * size {
        return Err(Error::Tool(format!(
            "the program wrote {} bytes, expected {}",
            bytes.len(),
            out_len * size
        )));
    }
    let actual: Vec<u128> = bytes
        .chunks(size)
        .map(|c| {
            let mut b = [0u8; 16];
            b[..size].copy_from_slice(c);
            u128::from_le_bytes(b)
        })
        .collect();
    for it in 0..iterations {
        let mut env = Env::new();
        for (name, ty, lanes) in &inputs {
            let n = ty.lanes as usize;
            env.insert(
                name.clone(),
                Value::new(*ty, lanes[it * n..(it + 1) * n].to_vec()),
            );
        }
        let expected = eval(&compiled.input, &env)?;
        let n = result.lanes as usize;
        for (lane, (e, a)) in expected.lanes.iter().zip(&actual[it * n..]).enumerate() {
            if e != a {
                return Ok(RunCheck {
                    lanes: it * n + lane,
                    mismatch: Some(format!(
                        "iteration {it} lane {lane}: interpreter {e:#x}, {} {a:#x}",
                        catalog.target.name
                    )),
                });
            }
        }
    }
    Ok(RunCheck {
        lanes: out_len,
        mismatch: None,
    })
}
