//! `isadb bench kernels`: every kernel of every family and size of the Diospyros and Isaria
//! evaluations. For the DSP (the peers' 4-wide target), each is compiled by a separate
//! `isadb kernel --json` process (its own wall time and peak memory) and its cost reported in
//! both peers' models beside their published numbers. For x86-avx2 (this machine's widest
//! runnable vector unit), the emitted code is timed against the same kernel as plain C built with
//! `gcc -O3 -march=native` and `gcc -O3 -fno-tree-vectorize`, and against Eigen 3 fixed-size
//! matrices for mat-mul (libeigen3-dev, installed with apt-get when missing): each variant is
//! called in a loop long enough to take 2 ms, in eleven rounds that visit every variant in turn,
//! and its fastest round kept.

use super::compile::Options;
use super::cost::Model;
use super::family::{self, Kernel};
use super::store::RuleSet;
use super::{compile_file, KernelTarget, Report};
use crate::error::{Error, Result};
use crate::project::Project;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The peers' figures from issue 14 (this machine): Diospyros cost, wall s, memory MB; Isaria
/// wall s, memory MB.
const PEERS: [(&str, f64, f64, f64, f64, f64); 7] = [
    ("mat-mul_2x2_2x2", 2.052, 0.02, 4.0, 0.04, 8.0),
    ("mat-mul_3x3_3x3", 9.596, 0.25, 18.0, 0.58, 49.0),
    ("mat-mul_4x4_4x4", 20.72, 2.18, 90.0, 8.90, 1100.0),
    ("2d-conv_3x3_3x3", 52.64, 2.72, 74.0, 0.07, 8.0),
    ("2d-conv_3x5_3x3", 67.27, 25.35, 596.0, 169.49, 17300.0),
    ("2d-conv_4x4_3x3", 78.14, 16.11, 354.0, 0.84, 84.0),
    ("q-prod", 37.01, 4.09, 64.0, 2.47, 292.0),
];

/// Diospyros's cost after its 180 s timeout, where the issue gives it.
const DIOSPYROS_TIMED_OUT: [(&str, f64); 1] = [("mat-mul_16x16_16x16", 12010.0)];

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub kernel: String,
    pub outputs: usize,
    pub diospyros_cost: f64,
    pub isaria_cost: f64,
    pub dsp_cost: f64,
    pub wall_s: f64,
    pub peak_mb: f64,
    pub proven: bool,
    /// The peers' cost, wall and memory where known.
    pub peer_diospyros_cost: Option<f64>,
    pub peer_diospyros_wall_s: Option<f64>,
    pub peer_isaria_wall_s: Option<f64>,
    /// x86-avx2: compile wall time, the C checked on random inputs, and ns per call.
    pub avx2_wall_s: f64,
    pub avx2_checked: bool,
    pub ns_isadb: f64,
    pub ns_gcc_native: f64,
    pub ns_gcc_novec: f64,
    pub ns_eigen: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub rows: Vec<Row>,
    pub geomean_vs_native: f64,
    pub geomean_vs_novec: f64,
    pub geomean_vs_eigen: Option<f64>,
    pub avx512: String,
}

fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len().max(1) as f64).exp()
}

/// The kernel's input file: the peers' own lifted form where the shared kernels have it,
/// else the C.
fn input_file(k: &Kernel, dir: &Path) -> Result<PathBuf> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/kernels")
        .join(format!("{}.sexp", k.name));
    if shared.exists() {
        return Ok(shared);
    }
    let p = dir.join(format!("{}.c", k.name));
    std::fs::write(&p, &k.c).map_err(|e| Error::io(&p, e))?;
    Ok(p)
}

/// Compiles for the DSP in a child process; its JSON report.
fn dsp_compile(project: &Project, file: &Path) -> Result<serde_json::Value> {
    let exe = std::env::current_exe().map_err(|e| Error::Tool(format!("isadb executable: {e}")))?;
    let home = &project.home;
    let out = Command::new(exe)
        .arg("--home")
        .arg(home)
        .args(["--json", "kernel"])
        .arg(file)
        .args([
            "--target",
            "dsp",
            "--cost-model",
            "diospyros",
            "--timeout",
            "60",
        ])
        .output()
        .map_err(|e| Error::Tool(format!("isadb kernel: {e}")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "isadb kernel {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Tool(format!("isadb kernel --json: {e}")))
}

/// Installs libeigen3-dev with apt-get when its headers are missing (printed, not silent).
fn ensure_eigen() -> bool {
    if Path::new("/usr/include/eigen3/Eigen/Dense").exists() {
        return true;
    }
    eprintln!("isadb bench kernels: Eigen 3 is missing; running: apt-get install -y libeigen3-dev");
    // Its output goes to stderr: stdout carries the report (`--json`).
    let ok = Command::new("apt-get")
        .args(["install", "-y", "-q", "libeigen3-dev"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(std::io::stderr())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok && Path::new("/usr/include/eigen3/Eigen/Dense").exists()
}

fn gcc(dir: &Path, compiler: &str, args: &[&str], src: &str, obj: &str) -> Result<()> {
    let out = Command::new(compiler)
        .current_dir(dir)
        .args(args)
        .args(["-c", src, "-o", obj])
        .output()
        .map_err(|e| Error::Tool(format!("{compiler}: {e}")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "{compiler} {src}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("failed")
        )));
    }
    Ok(())
}

/// The timing program: each variant called in a loop of >= 2 ms, the fastest of 11 interleaved
/// rounds.
fn timing_main(k: &Kernel, isadb_inputs: &[(String, usize)], eigen: bool) -> String {
    let total_out: usize = k.outputs.iter().map(|o| o.1).sum();
    let mut c = String::from("#include <stdio.h>\n#include <time.h>\n#include <math.h>\n");
    let plain_params: Vec<String> = k
        .inputs
        .iter()
        .chain(&k.outputs)
        .map(|_| "float *".to_string())
        .collect();
    let isadb_params: Vec<String> = isadb_inputs
        .iter()
        .map(|_| "const float *".to_string())
        .chain(["float *".to_string()])
        .collect();
    c += &format!("void k_isadb({});\n", isadb_params.join(", "));
    c += &format!(
        "void k_native({});\nvoid k_novec({});\n",
        plain_params.join(", "),
        plain_params.join(", ")
    );
    if eigen {
        c += "void k_eigen(const float *, const float *, float *);\n";
    }
    for (n, len) in &k.inputs {
        c += &format!("static float {n}[{len}];\n");
    }
    for (n, len) in &k.outputs {
        c += &format!("static float {n}[{len}];\n");
    }
    c += &format!("static float out_isadb[{total_out}];\n");
    c += "static double h_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }\n";
    c += "#include <stdlib.h>\n";
    let isadb_args: Vec<String> = isadb_inputs
        .iter()
        .map(|(n, _)| n.clone())
        .chain(["out_isadb".to_string()])
        .collect();
    let plain_args: Vec<String> = k
        .inputs
        .iter()
        .chain(&k.outputs)
        .map(|(n, _)| n.clone())
        .collect();
    let mut calls = vec![
        ("isadb", format!("k_isadb({})", isadb_args.join(", "))),
        ("native", format!("k_native({})", plain_args.join(", "))),
        ("novec", format!("k_novec({})", plain_args.join(", "))),
    ];
    if eigen {
        calls.push((
            "eigen",
            format!(
                "k_eigen({}, {}, {})",
                k.inputs[0].0, k.inputs[1].0, k.outputs[0].0
            ),
        ));
    }
    c += "int main(void) {\n  unsigned long long h_s = 88172645463325252ull;\n";
    for (n, len) in &k.inputs {
        c += &format!("  for (int h_i = 0; h_i < {len}; h_i++) {{ h_s ^= h_s << 13; h_s ^= h_s >> 7; h_s ^= h_s << 17; float h_m = 0.25f + (float)((h_s >> 11) % 1000) * 0.00175f; {n}[h_i] = (h_s & 1) ? h_m : -h_m; }}\n");
    }
    // Correctness: the emitted kernel against the native build.
    c += &format!("  {};\n  {};\n", calls[0].1, calls[1].1);
    c += "  double h_worst = 0; int h_at = 0;\n";
    let mut off = 0;
    for (n, len) in &k.outputs {
        c += &format!("  for (int h_i = 0; h_i < {len}; h_i++) {{ double h_e = fabs((double)out_isadb[{off} + h_i] - {n}[h_i]) / (1.0 + fabs({n}[h_i])); if (!(h_e <= h_worst)) {{ h_worst = h_e; h_at = {off} + h_i; }} }}\n");
        off += len;
    }
    c += "  printf(\"check %g %d\\n\", h_worst, h_at);\n";
    // Each variant's repetitions for >= 2 ms, then 11 rounds visiting every variant in turn (a
    // burst of load elsewhere on the machine slows one round of all of them, not 11 runs of
    // one), each variant's fastest round kept: noise only ever adds time.
    let n = calls.len();
    c += &format!("  long h_reps[{n}]; double h_best[{n}];\n");
    for (v, (_, call)) in calls.iter().enumerate() {
        c += &format!(
            "  h_reps[{v}] = 1; h_best[{v}] = 1e300; for (;;) {{ double h_t0 = h_now(); for (long h_r = 0; h_r < h_reps[{v}]; h_r++) {{ {call}; __asm__ volatile(\"\" ::: \"memory\"); }} if (h_now() - h_t0 > 2e6) break; h_reps[{v}] *= 2; }}\n"
        );
    }
    c += "  for (int h_k = 0; h_k < 11; h_k++) {\n";
    for (v, (_, call)) in calls.iter().enumerate() {
        c += &format!(
            "    {{ double h_t0 = h_now(); for (long h_r = 0; h_r < h_reps[{v}]; h_r++) {{ {call}; __asm__ volatile(\"\" ::: \"memory\"); }} double h_t = (h_now() - h_t0) / h_reps[{v}]; if (h_t < h_best[{v}]) h_best[{v}] = h_t; }}\n"
        );
    }
    c += "  }\n";
    for (v, (name, _)) in calls.iter().enumerate() {
        c += &format!("  printf(\"{name} %.3f\\n\", h_best[{v}]);\n");
    }
    c += "  return 0;\n}\n";
    c
}

fn eigen_source(r: usize, k: usize, c: usize) -> String {
    format!(
        "#include <Eigen/Dense>
using namespace Eigen;
extern \"C\" void k_eigen(const float *a, const float *b, float *c) {{
  Map<const Matrix<float, {r}, {k}, RowMajor>> A(a);
  Map<const Matrix<float, {k}, {c}, RowMajor>> B(b);
  Map<Matrix<float, {r}, {c}, RowMajor>> C(c);
  C.noalias() = A * B;
}}
"
    )
}

/// Times the emitted AVX2 kernel against the baselines: ns per call for isadb, gcc native,
/// gcc without vectorization, Eigen; and whether the outputs agree.
fn time_kernel(
    k: &Kernel,
    report: &Report,
    eigen: bool,
) -> Result<(bool, f64, f64, f64, Option<f64>)> {
    let dir = tempfile::tempdir().map_err(|e| Error::Tool(format!("temporary directory: {e}")))?;
    let d = dir.path();
    let write = |name: &str, text: &str| -> Result<()> {
        std::fs::write(d.join(name), text).map_err(|e| Error::io(d.join(name), e))
    };
    write(
        "isadb.c",
        &format!("#define {} k_isadb\n{}", report.function, report.c),
    )?;
    write("plain.c", &format!("#include <math.h>\n{}", k.c))?;
    let mm = if k.family == "mat-mul" {
        let dims: Vec<usize> = k
            .name
            .trim_start_matches("mat-mul_")
            .split(['x', '_'])
            .filter_map(|x| x.parse().ok())
            .collect();
        Some((dims[0], dims[1], dims[3]))
    } else {
        None
    };
    let with_eigen = eigen && mm.is_some();
    write("main.c", &timing_main(k, &report.inputs, with_eigen))?;
    gcc(d, "gcc", &["-O3", "-march=native"], "isadb.c", "isadb.o")?;
    gcc(
        d,
        "gcc",
        &["-O3", "-march=native", "-Dkernel=k_native"],
        "plain.c",
        "native.o",
    )?;
    gcc(
        d,
        "gcc",
        &[
            "-O3",
            "-fno-tree-vectorize",
            "-Dkernel=k_novec",
            "-Dsgn=sgn_novec",
            "-Dnorm=norm_novec",
            "-Dmatmul=matmul_novec",
            "-Dcross=cross_novec",
        ],
        "plain.c",
        "novec.o",
    )?;
    gcc(d, "gcc", &["-O2"], "main.c", "main.o")?;
    let mut objs = vec!["main.o", "isadb.o", "native.o", "novec.o"];
    if let (true, Some((r, kk, c))) = (with_eigen, mm) {
        write("eigen.cc", &eigen_source(r, kk, c))?;
        gcc(
            d,
            "g++",
            &["-O3", "-march=native", "-I/usr/include/eigen3", "-DNDEBUG"],
            "eigen.cc",
            "eigen.o",
        )?;
        objs.push("eigen.o");
    }
    let link = Command::new(if with_eigen { "g++" } else { "gcc" })
        .current_dir(d)
        .args(&objs)
        .args(["-o", "bench", "-lm"])
        .output()
        .map_err(|e| Error::Tool(format!("link: {e}")))?;
    if !link.status.success() {
        return Err(Error::Tool(format!(
            "link: {}",
            String::from_utf8_lossy(&link.stderr).trim()
        )));
    }
    let out = Command::new(d.join("bench"))
        .output()
        .map_err(|e| Error::Tool(format!("bench: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "bench {}: the timing program failed ({}): {}",
            k.name,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let value = |key: &str| -> Option<f64> {
        text.lines().find_map(|l| {
            l.strip_prefix(&format!("{key} "))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
    };
    let checked = value("check").is_some_and(|e| e <= super::run::TOLERANCE);
    let need = |key: &str| {
        value(key)
            .ok_or_else(|| Error::Tool(format!("bench {}: no {key} timing in {text:?}", k.name)))
    };
    Ok((
        checked,
        need("isadb")?,
        need("native")?,
        need("novec")?,
        if with_eigen { value("eigen") } else { None },
    ))
}

/// Runs the benchmark on every kernel, or those whose name contains `only`.
pub fn run(project: &Project, only: Option<&str>) -> Result<BenchReport> {
    let eigen = ensure_eigen();
    let dir = tempfile::tempdir().map_err(|e| Error::Tool(format!("temporary directory: {e}")))?;
    let mut rows = Vec::new();
    for k in family::all()
        .into_iter()
        .filter(|k| only.is_none_or(|o| k.name.contains(o)))
    {
        let file = input_file(&k, dir.path())?;
        let j = dsp_compile(project, &file)?;
        let num = |path: &[&str]| -> f64 {
            path.iter()
                .fold(&j, |v, p| &v[*p])
                .as_f64()
                .unwrap_or(f64::NAN)
        };
        let c_file = dir.path().join(format!("{}.c", k.name));
        std::fs::write(&c_file, &k.c).map_err(|e| Error::io(&c_file, e))?;
        let opts = Options {
            model: Model::Target,
            timeout: Duration::from_secs(60),
            seed: true,
            run: None,
            keep_egglog: false,
        };
        let avx2 = compile_file(
            project,
            &c_file,
            KernelTarget::Avx2,
            RuleSet::Given,
            super::Outputs::Caller,
            &opts,
        )?;
        let (checked, ns_isadb, ns_native, ns_novec, ns_eigen) = time_kernel(&k, &avx2, eigen)
            .unwrap_or_else(|e| {
                eprintln!("isadb bench kernels: {}: not timed: {e}", k.name);
                (false, f64::NAN, f64::NAN, f64::NAN, None)
            });
        let peer = PEERS.iter().find(|p| p.0 == k.name);
        let timed_out = DIOSPYROS_TIMED_OUT
            .iter()
            .find(|p| p.0 == k.name)
            .map(|p| p.1);
        rows.push(Row {
            kernel: k.name.clone(),
            outputs: num(&["outputs"]) as usize,
            diospyros_cost: num(&["costs", "diospyros"]),
            isaria_cost: num(&["costs", "isaria"]),
            dsp_cost: num(&["costs", "target"]),
            wall_s: num(&["wall_ms"]) / 1000.0,
            peak_mb: num(&["peak_rss_mb"]),
            proven: num(&["proof", "outputs"]) as usize == num(&["outputs"]) as usize,
            peer_diospyros_cost: peer.map(|p| p.1).or(timed_out),
            peer_diospyros_wall_s: peer.map(|p| p.2),
            peer_isaria_wall_s: peer.map(|p| p.4),
            avx2_wall_s: avx2.wall_ms / 1000.0,
            avx2_checked: checked,
            ns_isadb,
            ns_gcc_native: ns_native,
            ns_gcc_novec: ns_novec,
            ns_eigen,
        });
    }
    let ratio = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<f64> {
        rows.iter()
            .filter_map(|r| f(r).map(|b| b / r.ns_isadb))
            .filter(|x| x.is_finite())
            .collect()
    };
    let eig = ratio(&|r| r.ns_eigen);
    Ok(BenchReport {
        geomean_vs_native: geomean(&ratio(&|r| Some(r.ns_gcc_native))),
        geomean_vs_novec: geomean(&ratio(&|r| Some(r.ns_gcc_novec))),
        geomean_vs_eigen: (!eig.is_empty()).then(|| geomean(&eig)),
        avx512: avx512_note(),
        rows,
    })
}

fn avx512_note() -> String {
    let host = crate::toolchain::features::Host::detect();
    match crate::toolchain::features::support(crate::toolchain::Toolchain::X86, "avx512f", &host) {
        crate::toolchain::features::Support::Flags(_) => {
            "this CPU has avx512f (not timed here; run isadb kernel --target x86-avx512 --run)"
                .into()
        }
        crate::toolchain::features::Support::Unsupported(why) => {
            format!("x86-avx512 code compiles but is not run: {why}")
        }
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel | outputs | isadb diospyros-cost | isaria-cost | dsp-cost | wall s | peak MB | proven | Diospyros cost / wall s | Isaria wall s | avx2 ns: isadb / gcc-native / gcc-novec / eigen | x native | x novec | x eigen")?;
        for r in &self.rows {
            let opt = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
            writeln!(
                f,
                "{} | {} | {:.3} | {:.3} | {:.1} | {:.2} | {:.0} | {} | {} / {} | {} | {:.1} / {:.1} / {:.1} / {} | {:.2} | {:.2} | {}{}",
                r.kernel,
                r.outputs,
                r.diospyros_cost,
                r.isaria_cost,
                r.dsp_cost,
                r.wall_s,
                r.peak_mb,
                if r.proven { "yes" } else { "no" },
                opt(r.peer_diospyros_cost, 3),
                opt(r.peer_diospyros_wall_s, 2),
                opt(r.peer_isaria_wall_s, 2),
                r.ns_isadb,
                r.ns_gcc_native,
                r.ns_gcc_novec,
                opt(r.ns_eigen, 1),
                r.ns_gcc_native / r.ns_isadb,
                r.ns_gcc_novec / r.ns_isadb,
                opt(r.ns_eigen.map(|e| e / r.ns_isadb), 2),
                if r.avx2_checked { "" } else { " (OUTPUTS DIFFER)" }
            )?;
        }
        writeln!(
            f,
            "geomean speedup of the emitted x86-avx2 code: {:.2}x vs gcc -O3 -march=native, {:.2}x vs gcc -O3 -fno-tree-vectorize{}",
            self.geomean_vs_native,
            self.geomean_vs_novec,
            self.geomean_vs_eigen.map_or(String::new(), |e| format!(", {e:.2}x vs Eigen 3 (mat-mul)"))
        )?;
        writeln!(f, "{}", self.avx512)
    }
}
