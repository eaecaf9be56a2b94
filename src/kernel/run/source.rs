//! `--run` for a kernel lifted from C: the source file compiled as written (its kernel renamed
//! `NAME_source`, its own `main` renamed too) beside the drop-in replacement, both called on the
//! same random arguments each iteration and every element of every output array compared. The
//! symbolic evaluation that lifted the kernel is checked so against a real C compiler.

use super::random_fill;
use crate::kernel::lower::parameters;
use crate::kernel::read::Signature;
use std::fmt::Write;

/// The source function's name in the harness.
fn renamed(s: &Signature) -> String {
    format!("{}_source", s.name)
}

/// Its prototype, placed before the harness's `main` (the source itself comes after it, so
/// that its macros touch none of the harness).
pub fn prototype(s: &Signature) -> String {
    format!("void {}({});\n", renamed(s), parameters(s))
}

/// The source, renamed, to append to the harness.
pub fn appended(s: &Signature) -> String {
    format!(
        "#define main isadb_source_main\n#define {} {}\n#line 1 \"{}\"\n{}\n",
        s.name,
        renamed(s),
        s.path
            .display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', " "),
        s.source
    )
}

/// `main`'s declarations: each parameter twice (`h_s_` for the source, `h_d_` for the
/// drop-in) and the worst disagreement.
pub fn declarations(s: &Signature) -> String {
    let mut c = String::from(
        "  double h_sworst = 0.0; int h_sbad_iter = -1, h_sbad_param = -1, h_sbad_k = -1; double h_sbad_got = 0, h_sbad_want = 0;\n",
    );
    for p in &s.params {
        if p.scalar {
            writeln!(c, "  float h_s_{0}, h_d_{0};", p.name).expect("string write");
        } else {
            writeln!(c, "  float h_s_{0}[{1}], h_d_{0}[{1}];", p.name, p.len)
                .expect("string write");
        }
    }
    c
}

/// One iteration: fresh arguments (zero for outputs taken to start at zero), both calls, the
/// comparison of every output element.
pub fn iteration(s: &Signature) -> String {
    let mut c = String::new();
    for p in &s.params {
        let (src, dst) = (format!("h_s_{}", p.name), format!("h_d_{}", p.name));
        if p.scalar {
            c.push_str(&random_fill(&format!("(&{src})"), 1));
            writeln!(c, "    {dst} = {src};").expect("string write");
        } else if p.zeroed {
            writeln!(
                c,
                "    memset({src}, 0, sizeof {src}); memset({dst}, 0, sizeof {dst});"
            )
            .expect("string write");
        } else {
            c.push_str(&random_fill(&src, p.len));
            writeln!(c, "    memcpy({dst}, {src}, sizeof {src});").expect("string write");
        }
    }
    let args = |prefix: &str| -> String {
        s.params
            .iter()
            .map(|p| match p.scalar {
                true => format!("{prefix}{}", p.name),
                false => format!("(void *){prefix}{}", p.name),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(c, "    {}({});", renamed(s), args("h_s_")).expect("string write");
    writeln!(c, "    {}({});", s.name, args("h_d_")).expect("string write");
    for (k, p) in s.params.iter().enumerate() {
        let Some(filled) = &p.output else {
            continue;
        };
        writeln!(
            c,
            "    for (int h_k = 0; h_k < {len}; h_k++) {{ double h_e = fabs((double)h_d_{n}[h_k] - (double)h_s_{n}[h_k]) / (1.0 + fabs((double)h_s_{n}[h_k])); if (!(h_e <= h_sworst)) {{ h_sworst = h_e; h_sbad_iter = h_it; h_sbad_param = {k}; h_sbad_k = h_k; h_sbad_got = h_d_{n}[h_k]; h_sbad_want = h_s_{n}[h_k]; }} }}",
            len = filled.len(),
            n = p.name
        )
        .expect("string write");
    }
    c
}

/// The line `main` prints last.
pub const PRINT: &str = "  printf(\"%.3g %d %d %d %.9g %.9g\\n\", h_sworst, h_sbad_iter, h_sbad_param, h_sbad_k, h_sbad_got, h_sbad_want);\n";

/// The comparison the printed line says: the worst scaled error and, past `tolerance`, where.
pub fn read(s: &Signature, line: &str, tolerance: f64, iterations: usize) -> (f64, String) {
    let f: Vec<&str> = line.split_whitespace().collect();
    let worst: f64 = f
        .first()
        .and_then(|x| x.parse().ok())
        .unwrap_or(f64::INFINITY);
    let detail = if worst <= tolerance {
        format!(
            "the drop-in {} agrees with {} compiled as written on every output element within {tolerance:e} (scaled) on {iterations} random inputs",
            s.name,
            s.path.display()
        )
    } else {
        let param = f
            .get(2)
            .and_then(|k| k.parse::<usize>().ok())
            .and_then(|k| s.params.get(k))
            .map_or("?", |p| p.name.as_str());
        format!(
            "iteration {} {param}[{}]: drop-in {} vs {} compiled as written {}",
            f.get(1).unwrap_or(&"?"),
            f.get(3).unwrap_or(&"?"),
            f.get(4).unwrap_or(&"?"),
            s.name,
            f.get(5).unwrap_or(&"?"),
        )
    };
    (worst, detail)
}
