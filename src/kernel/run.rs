//! `--run N`: the emitted C compiled with the validation toolchains (natively on x86; NEON by
//! aarch64-linux-gnu-gcc under qemu-aarch64) and run on N random inputs beside the spec computed
//! in double precision; every output must agree within |got - want| <= 1e-3 * (1 + |want|)
//! (single-precision arithmetic reassociated by vectorization). Code for CPU features this
//! machine lacks (AVX-512 on most) is compiled but not run, and the report says so.

use super::lower::{headers, literal, Lowered};
use super::target::{KernelTarget, Target};
use super::term::{Dag, Id, Op};
use crate::error::{Error, Result};
use crate::toolchain::features::{support, Host, Support};
use crate::toolchain::{self, Toolchain};
use serde::Serialize;
use std::fmt::Write;

/// The agreement required between the kernel and the spec.
pub const TOLERANCE: f64 = 1e-3;

#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub iterations: usize,
    /// "native", "qemu-aarch64" or "compiled only: <reason>".
    pub how: String,
    pub passed: bool,
    pub max_error: f64,
    pub detail: String,
}

/// The spec as a C function in double precision: `void spec(const double *IN..., double *out)`.
pub fn spec_function(dag: &Dag, outputs: &[Id], inputs: &[(String, usize)]) -> String {
    let mut body = String::new();
    for id in dag.reachable(outputs) {
        let a: Vec<String> = dag.args(id).iter().map(|x| operand(dag, *x)).collect();
        let e = match dag.op(id) {
            Op::Num(_) | Op::Get(..) => continue,
            Op::Add => format!("{} + {}", a[0], a[1]),
            Op::Sub => format!("{} - {}", a[0], a[1]),
            Op::Mul => format!("{} * {}", a[0], a[1]),
            Op::Div => format!("{} / {}", a[0], a[1]),
            Op::Neg => format!("-{}", a[0]),
            Op::Sqrt => format!("sqrt({})", a[0]),
            Op::Sgn => format!("(double)(({0} > 0.0) - ({0} < 0.0))", a[0]),
            _ => continue,
        };
        writeln!(body, "  const double s{id} = {e};").expect("string write");
    }
    for (k, &o) in outputs.iter().enumerate() {
        writeln!(body, "  out[{k}] = {};", operand(dag, o)).expect("string write");
    }
    let params: Vec<String> = inputs
        .iter()
        .map(|(n, _)| format!("const double *{n}"))
        .chain(["double *out".to_string()])
        .collect();
    format!("static void spec({}) {{\n{body}}}\n", params.join(", "))
}

fn operand(dag: &Dag, id: Id) -> String {
    match dag.op(id) {
        Op::Num(n) => literal(n).trim_end_matches('f').to_string(),
        Op::Get(a, i) => format!("{}[{i}]", dag.arrays()[a as usize]),
        _ => format!("s{id}"),
    }
}

/// A harness: random inputs (xorshift, magnitudes 0.25..2 with random signs), the kernel and
/// the spec, the largest scaled error printed.
pub fn harness(
    dag: &Dag,
    outputs: &[Id],
    lowered: &Lowered,
    target: &Target,
    iterations: usize,
) -> String {
    let mut c = String::from(headers(target));
    c.push_str("#include <stdio.h>\n#include <stdint.h>\n");
    c.push_str(&lowered.c);
    c.push_str(&spec_function(dag, outputs, &lowered.inputs));
    let n = lowered.outputs;
    let mut main = String::new();
    main.push_str("int main(void) {\n  uint64_t h_rng = 88172645463325252ull;\n  double h_worst = 0.0; int h_bad_iter = -1, h_bad_out = -1; double h_bad_got = 0, h_bad_want = 0;\n");
    for (name, len) in &lowered.inputs {
        let len = len.max(&1);
        writeln!(main, "  float {name}[{len}]; double {name}_d[{len}];").expect("string write");
    }
    writeln!(main, "  float h_out[{n}]; double h_want[{n}];").expect("string write");
    writeln!(main, "  for (int h_it = 0; h_it < {iterations}; h_it++) {{").expect("string write");
    for (name, len) in &lowered.inputs {
        writeln!(
            main,
            "    for (int h_i = 0; h_i < {len}; h_i++) {{ h_rng ^= h_rng << 13; h_rng ^= h_rng >> 7; h_rng ^= h_rng << 17; float h_m = 0.25f + (float)((h_rng >> 11) % 1000) * 0.00175f; {name}[h_i] = (h_rng & 1) ? h_m : -h_m; {name}_d[h_i] = {name}[h_i]; }}"
        )
        .expect("string write");
    }
    let args: Vec<String> = lowered.inputs.iter().map(|(n, _)| n.clone()).collect();
    let dargs: Vec<String> = lowered
        .inputs
        .iter()
        .map(|(n, _)| format!("{n}_d"))
        .collect();
    writeln!(
        main,
        "    kernel({}{}h_out);",
        args.join(", "),
        if args.is_empty() { "" } else { ", " }
    )
    .expect("string write");
    writeln!(
        main,
        "    spec({}{}h_want);",
        dargs.join(", "),
        if dargs.is_empty() { "" } else { ", " }
    )
    .expect("string write");
    writeln!(main, "    for (int h_k = 0; h_k < {n}; h_k++) {{ double h_e = fabs((double)h_out[h_k] - h_want[h_k]) / (1.0 + fabs(h_want[h_k])); if (!(h_e <= h_worst)) {{ h_worst = h_e; h_bad_iter = h_it; h_bad_out = h_k; h_bad_got = h_out[h_k]; h_bad_want = h_want[h_k]; }} }}").expect("string write");
    main.push_str("  }\n  printf(\"%.3g %d %d %.9g %.9g\\n\", h_worst, h_bad_iter, h_bad_out, h_bad_got, h_bad_want);\n  return 0;\n}\n");
    c.push_str(&main);
    c
}

/// Compiles and runs the kernel on `iterations` random inputs.
pub fn run(
    dag: &Dag,
    outputs: &[Id],
    lowered: &Lowered,
    target: &Target,
    iterations: usize,
) -> Result<RunReport> {
    let source = harness(dag, outputs, lowered, target, iterations);
    let host = Host::detect();
    let (toolchain, feature, how) = match target.kind {
        KernelTarget::Neon => (Toolchain::Neon, "neon", "qemu-aarch64"),
        KernelTarget::Avx2 => (Toolchain::X86, "avx2+fma", "native"),
        KernelTarget::Avx512 => (Toolchain::X86, "avx512f", "native"),
        KernelTarget::Dsp => (Toolchain::X86, "", "native"),
    };
    let flags = match support(toolchain, feature, &host) {
        Support::Flags(f) => f,
        Support::Unsupported(why) => {
            return compile_only(&source, feature, &why, iterations);
        }
    };
    toolchain::check_tools(toolchain).map_err(Error::Tool)?;
    let dir = tempfile::tempdir().map_err(|e| Error::Tool(format!("temporary directory: {e}")))?;
    let out = toolchain::build_and_run(toolchain, &source, &flags, dir.path(), &[])
        .map_err(|f| Error::Tool(format!("kernel harness on {}: {f}", target.name)))?;
    let text = String::from_utf8_lossy(&out);
    let f: Vec<&str> = text.split_whitespace().collect();
    let worst: f64 = f
        .first()
        .and_then(|x| x.parse().ok())
        .unwrap_or(f64::INFINITY);
    let passed = worst <= TOLERANCE;
    let detail = if passed {
        format!("every output within {TOLERANCE:e} (scaled) on {iterations} random inputs")
    } else {
        format!(
            "iteration {} output {}: kernel {} vs spec {}",
            f.get(1).unwrap_or(&"?"),
            f.get(2).unwrap_or(&"?"),
            f.get(3).unwrap_or(&"?"),
            f.get(4).unwrap_or(&"?")
        )
    };
    Ok(RunReport {
        iterations,
        how: how.to_string(),
        passed,
        max_error: worst,
        detail,
    })
}

/// Compiles (gcc -c with the feature's flags) without running: the CPU lacks the feature.
fn compile_only(source: &str, feature: &str, why: &str, iterations: usize) -> Result<RunReport> {
    let dir = tempfile::tempdir().map_err(|e| Error::Tool(format!("temporary directory: {e}")))?;
    let src = dir.path().join("kernel.c");
    std::fs::write(&src, source).map_err(|e| Error::io(&src, e))?;
    let flag = format!("-m{}", feature.split('+').next().unwrap_or(feature));
    let out = std::process::Command::new("gcc")
        .args(["-O2", "-mfma", &flag, "-c", "-o"])
        .arg(dir.path().join("kernel.o"))
        .arg(&src)
        .output()
        .map_err(|e| Error::Tool(format!("gcc: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Tool(format!(
            "kernel C does not compile: {}",
            err.lines().find(|l| l.contains("error")).unwrap_or("")
        )));
    }
    Ok(RunReport {
        iterations,
        how: format!("compiled only: {why}"),
        passed: true,
        max_error: 0.0,
        detail: format!("compiled with gcc {flag}; not run: {why}"),
    })
}
