//! The C source of a batch: the target's prelude, load and store macros, one function per job
//! (a `switch` over the immediate combinations where there are any), and `harness_main`, which
//! speaks the protocol of [`super::stream`].

use super::stream::{MAGIC_IN, MAGIC_OUT, MARK_END, MARK_JOB};
use super::{round_up, Arg, Job, Slot, CHUNK_BYTES};
use crate::toolchain::ctype::Repr;
use crate::toolchain::{self, Toolchain};
use std::fmt::Write;

/// A generated program and the source lines of each job's function (1-based, inclusive).
#[derive(Debug, Clone)]
pub struct Source {
    /// The C program.
    pub text: String,
    /// The first and last line of each job's function.
    pub lines: Vec<(usize, usize)>,
}

impl Source {
    /// The job whose function contains source line `line`.
    pub fn job_at_line(&self, line: usize) -> Option<usize> {
        self.lines
            .iter()
            .position(|&(a, b)| (a..=b).contains(&line))
    }
}

/// A C literal for an immediate.
fn imm_literal(v: i128) -> String {
    if (i32::MIN as i128..=i32::MAX as i128).contains(&v) {
        if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }
    } else if (0..=u32::MAX as i128).contains(&v) {
        format!("{v}u")
    } else if v < 0 {
        format!("({v}LL)")
    } else {
        format!("{v}ULL")
    }
}

/// Writes the statement loading `slot` into variable `var` from `p + offset`.
fn load(out: &mut String, slot: &Slot, var: &str) {
    let c = &slot.ctype;
    if c.hvx_pred {
        let _ = writeln!(
            out,
            "      HVX_VectorPred {var}; {{ HVX_Vector t_; ISADB_LOAD(HVX_Vector, t_, p + {}); {var} = Q6_Q_vand_VR(t_, -1); }}",
            slot.offset
        );
    } else {
        let _ = writeln!(
            out,
            "      {} {var}; ISADB_LOAD({}, {var}, p + {});",
            c.name, c.name, slot.offset
        );
    }
}

/// The complete program for a batch of jobs.
pub fn source(target: Toolchain, jobs: &[&Job]) -> Source {
    let mut s = String::with_capacity(8192 + jobs.len() * 2048);
    s.push_str(toolchain::prelude(target));
    s.push_str("\n/* ---- isadb validation harness ---- */\n");
    let buf = jobs
        .iter()
        .map(|j| j.harness.record.max(j.harness.out_record))
        .fold(CHUNK_BYTES, usize::max);
    let buf = round_up(buf, 256);
    s.push_str(match target {
        Toolchain::Hvx => include_str!("access_hvx.c"),
        _ => include_str!("access_memcpy.c"),
    });
    let _ = writeln!(
        s,
        "static unsigned char isadb_in[{buf}] __attribute__((aligned(256)));"
    );
    let _ = writeln!(
        s,
        "static unsigned char isadb_out[{buf}] __attribute__((aligned(256)));"
    );
    let mut lines = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter().enumerate() {
        s.push('\n');
        let first = s.matches('\n').count() + 1;
        function(&mut s, k, job, buf, target);
        let last = s.matches('\n').count();
        lines.push((first, last));
    }
    s.push_str("\nint harness_main(void) {\n  unsigned int hdr[2], n, mark;\n");
    let _ = writeln!(
        s,
        "  if (read_in(hdr, 8) != 8 || hdr[0] != {MAGIC_IN}u || hdr[1] != {}u) return 3;",
        jobs.len()
    );
    let _ = writeln!(s, "  mark = {MAGIC_OUT}u; emit(&mark, 4);");
    for k in 0..jobs.len() {
        let _ = writeln!(
            s,
            "  if (read_in(&n, 4) != 4) return 4;\n  mark = {}u; emit(&mark, 4);\n  if (!isadb_run_{k}(n)) return 5;",
            MARK_JOB + k as u32
        );
    }
    let _ = writeln!(s, "  mark = {MARK_END}u; emit(&mark, 4);\n  return 0;\n}}");
    Source { text: s, lines }
}

/// Whether `flag` goes on the job's own function as a target attribute rather than on the
/// compiler's command line: x86 feature flags such as `-mavx512bw`.
pub fn is_function_flag(target: Toolchain, flag: &str) -> bool {
    target == Toolchain::X86 && flag.starts_with("-m") && !flag.starts_with("-march=")
}

/// Writes job k's function `static int isadb_run_k(unsigned int n)` (0 on a short read).
fn function(s: &mut String, k: usize, job: &Job, buf: usize, target: Toolchain) {
    let h = &job.harness;
    let chunk = (buf / h.record.max(h.out_record)).max(1);
    let _ = writeln!(s, "/* {k}: {} */", h.name.replace("*/", "* /"));
    let features: Vec<&str> = job
        .flags
        .iter()
        .filter(|f| is_function_flag(target, f))
        .map(|f| &f[2..])
        .collect();
    if !features.is_empty() {
        let _ = writeln!(s, "__attribute__((target(\"{}\")))", features.join(","));
    }
    let _ = writeln!(s, "static int isadb_run_{k}(unsigned int n) {{");
    for slot in &h.slots {
        if slot.ctype.check_size {
            let _ = writeln!(
                s,
                "  _Static_assert(sizeof({0}) == {1}, \"C type {0} of {2} must have {1} bytes ({3})\");",
                slot.ctype.name, slot.ctype.size, slot.name, slot.ty
            );
        }
    }
    let _ = writeln!(s, "  while (n > 0) {{");
    let _ = writeln!(s, "    unsigned int c = n < {chunk}u ? n : {chunk}u;");
    let _ = writeln!(
        s,
        "    if (read_in(isadb_in, (unsigned long)c * {}u) != (unsigned long)c * {}u) return 0;",
        h.record, h.record
    );
    let _ = writeln!(s, "    for (unsigned int i = 0; i < c; i++) {{");
    let _ = writeln!(
        s,
        "      const unsigned char *p = isadb_in + (unsigned long)i * {}u;",
        h.record
    );
    let _ = writeln!(
        s,
        "      unsigned char *q = isadb_out + (unsigned long)i * {}u;",
        h.out_record
    );
    for (i, slot) in h.slots.iter().enumerate() {
        load(s, slot, &format!("v{i}"));
    }
    let rc = &h.result.ctype;
    let call_expr = |case: &[i128]| -> String {
        let args: Vec<String> = h
            .args
            .iter()
            .map(|a| match a {
                Arg::Value(i) => format!("v{i}"),
                Arg::Imm(i) => imm_literal(case[*i]),
            })
            .collect();
        format!("{}({})", h.intrinsic, args.join(", "))
    };
    let call = |case: &[i128]| format!("r = {};", call_expr(case));
    if rc.hvx_pred {
        let _ = writeln!(s, "      HVX_VectorPred r;");
    } else {
        // The result takes the intrinsic's own return type (__m512h, int64x1_t, a struct, int, ...);
        // its size must match the IR result (scalars and masks may be wider: the low bytes count).
        let first = job.imm_cases.first().map_or(&[][..], |c| c.as_slice());
        let _ = writeln!(s, "      __typeof__({}) r;", call_expr(first));
        let exact = h.result.ty.lanes > 1 && rc.repr != Repr::Bits;
        let cond = if exact {
            format!("sizeof(r) == {}", rc.size)
        } else {
            format!("sizeof(r) >= {} && sizeof(r) <= {}", rc.size, h.out_record)
        };
        let _ = writeln!(
            s,
            "      _Static_assert({cond}, \"the intrinsic's result must have {} bytes ({})\");",
            rc.size, h.result.ty
        );
    }
    if h.has_selector() {
        let _ = writeln!(
            s,
            "      unsigned int sel; ISADB_LOAD(unsigned int, sel, p);"
        );
        let _ = writeln!(s, "      switch (sel) {{");
        for (i, case) in job.imm_cases.iter().enumerate() {
            let label = if i == 0 { "default: case 0" } else { "case" };
            if i == 0 {
                let _ = writeln!(s, "      {label}: {} break;", call(case));
            } else {
                let _ = writeln!(s, "      {label} {i}: {} break;", call(case));
            }
        }
        let _ = writeln!(s, "      }}");
    } else {
        let _ = writeln!(s, "      {}", call(&[]));
    }
    if rc.hvx_pred {
        let _ = writeln!(
            s,
            "      {{ HVX_Vector t_ = Q6_V_vand_QR(r, -1); ISADB_STORE(HVX_Vector, q, t_); }}"
        );
    } else {
        let _ = writeln!(s, "      ISADB_STORE(__typeof__(r), q, r);");
    }
    let _ = writeln!(s, "    }}");
    let _ = writeln!(
        s,
        "    emit(isadb_out, (unsigned long)c * {}u);",
        h.out_record
    );
    let _ = writeln!(s, "    n -= c;\n  }}\n  return 1;\n}}");
}
