//! `--run N`: the emitted C compiled with the validation toolchains (natively on x86; NEON by
//! aarch64-linux-gnu-gcc under qemu-aarch64) and run on N random inputs beside the spec computed
//! in double precision; every output must agree within |got - want| <= 1e-3 * (1 + |want|)
//! (single-precision arithmetic reassociated by vectorization). Code for CPU features this
//! machine lacks (AVX-512 on most) is compiled but not run, and the report says so.

mod source;

use super::lower::{has_drop_in, headers, literal, output_parameter, Lowered};
use super::read::Signature;
use super::target::{KernelTarget, Target};
use super::term::{Dag, Id, Op};
use crate::error::{Error, Result};
use crate::toolchain::features::{support, Host, Support};
use crate::toolchain::{self, Failure, Toolchain};
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
    /// For a kernel lifted from C: its drop-in against the source compiled as written.
    pub source: Option<SourceRun>,
}

/// The drop-in replacement run against the source function compiled as written.
#[derive(Clone, Debug, Serialize)]
pub struct SourceRun {
    /// False where the source does not compile beside the harness (its own headers, a
    /// `static` kernel): `detail` says why.
    pub compared: bool,
    /// The largest scaled disagreement, when compared.
    pub max_error: Option<f64>,
    pub detail: String,
}

/// The spec as a C function in double precision: `void spec(const double *IN..., double *out)`.
pub fn spec_function(dag: &Dag, outputs: &[Id], inputs: &[(String, usize)]) -> String {
    let out = output_parameter(inputs);
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
        writeln!(body, "  {out}[{k}] = {};", operand(dag, o)).expect("string write");
    }
    let params: Vec<String> = inputs
        .iter()
        .map(|(n, _)| format!("const double *{n}"))
        .chain([format!("double *{out}")])
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

/// A loop filling `array[0..len]` with random floats (xorshift, magnitudes 0.25..2 with random
/// signs).
fn random_fill(array: &str, len: usize) -> String {
    format!(
        "    for (int h_i = 0; h_i < {len}; h_i++) {{ h_rng ^= h_rng << 13; h_rng ^= h_rng >> 7; h_rng ^= h_rng << 17; float h_m = 0.25f + (float)((h_rng >> 11) % 1000) * 0.00175f; {array}[h_i] = (h_rng & 1) ? h_m : -h_m; }}\n"
    )
}

/// A harness: random inputs, the kernel and the spec, the largest scaled error printed; with
/// `source` (a kernel lifted from C), also the drop-in against the source compiled as written.
pub fn harness(
    dag: &Dag,
    outputs: &[Id],
    lowered: &Lowered,
    target: &Target,
    iterations: usize,
    source: Option<&Signature>,
) -> String {
    let mut c = String::from(headers(target));
    c.push_str("#include <stdio.h>\n#include <stdint.h>\n");
    c.push_str(&lowered.c);
    c.push_str(&spec_function(dag, outputs, &lowered.inputs));
    if let Some(s) = source {
        c.push_str(&source::prototype(s));
    }
    let n = lowered.outputs;
    let mut main = String::new();
    main.push_str("int main(void) {\n  uint64_t h_rng = 88172645463325252ull;\n  double h_worst = 0.0; int h_bad_iter = -1, h_bad_out = -1; double h_bad_got = 0, h_bad_want = 0;\n");
    if let Some(s) = source {
        main.push_str(&source::declarations(s));
    }
    for (name, len) in &lowered.inputs {
        let len = len.max(&1);
        writeln!(main, "  float {name}[{len}]; double {name}_d[{len}];").expect("string write");
    }
    writeln!(main, "  float h_out[{n}]; double h_want[{n}];").expect("string write");
    writeln!(main, "  for (int h_it = 0; h_it < {iterations}; h_it++) {{").expect("string write");
    for (name, len) in &lowered.inputs {
        main.push_str(&random_fill(name, *len));
        writeln!(
            main,
            "    for (int h_i = 0; h_i < {len}; h_i++) {name}_d[h_i] = {name}[h_i];"
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
        "    {}({}{}h_out);",
        lowered.function,
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
    if let Some(s) = source {
        main.push_str(&source::iteration(s));
    }
    main.push_str("  }\n  printf(\"%.3g %d %d %.9g %.9g\\n\", h_worst, h_bad_iter, h_bad_out, h_bad_got, h_bad_want);\n");
    if source.is_some() {
        main.push_str(source::PRINT);
    }
    main.push_str("  return 0;\n}\n");
    c.push_str(&main);
    if let Some(s) = source {
        c.push_str(&source::appended(s));
    }
    c
}

/// Compiles and runs the kernel on `iterations` random inputs; a kernel lifted from C
/// (`signature`) also runs its drop-in against the source compiled as written.
pub fn run(
    dag: &Dag,
    outputs: &[Id],
    lowered: &Lowered,
    target: &Target,
    iterations: usize,
    signature: Option<&Signature>,
) -> Result<RunReport> {
    let checked = signature.filter(|s| has_drop_in(s));
    let harness_with = |s| harness(dag, outputs, lowered, target, iterations, s);
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
            return compile_only(&harness_with(None), feature, &why, iterations);
        }
    };
    toolchain::check_tools(toolchain).map_err(Error::Tool)?;
    let dir = tempfile::tempdir().map_err(|e| Error::Tool(format!("temporary directory: {e}")))?;
    let build = |text: &str, flags: &[String]| {
        toolchain::build_and_run(toolchain, text, flags, dir.path(), &[])
    };
    let failed = |f: Failure| Error::Tool(format!("kernel harness on {}: {f}", target.name));
    let (out, not_compiled) = match checked {
        Some(s) => {
            // The source's own `#include "..."` are found beside it.
            let mut with = flags.clone();
            if let Some(d) = s.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                with.push(format!("-I{}", d.display()));
            }
            match build(&harness_with(Some(s)), &with) {
                Ok(out) => (out, None),
                Err(Failure::Build { summary, .. }) => {
                    let out = build(&harness_with(None), &flags).map_err(failed)?;
                    (out, Some(summary))
                }
                Err(f) => return Err(failed(f)),
            }
        }
        None => (build(&harness_with(None), &flags).map_err(failed)?, None),
    };
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let f: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let worst: f64 = f
        .first()
        .and_then(|x| x.parse().ok())
        .unwrap_or(f64::INFINITY);
    let detail = if worst <= TOLERANCE {
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
    let source = checked.map(|s| match not_compiled {
        Some(why) => SourceRun {
            compared: false,
            max_error: None,
            detail: format!(
                "the drop-in {} was not compared with {}: it does not compile beside the harness ({why})",
                s.name,
                s.path.display()
            ),
        },
        None => {
            let (worst, detail) = source::read(s, lines.next().unwrap_or(""), TOLERANCE, iterations);
            SourceRun {
                compared: true,
                max_error: Some(worst),
                detail,
            }
        }
    });
    let source_agrees = source
        .as_ref()
        .is_none_or(|s| s.max_error.is_none_or(|e| e <= TOLERANCE));
    Ok(RunReport {
        iterations,
        how: how.to_string(),
        passed: worst <= TOLERANCE && source_agrees,
        max_error: worst,
        detail,
        source,
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
        source: None,
    })
}
