//! Compile a C harness for x86 / AArch64 NEON / Hexagon HVX and run it (natively or under qemu),
//! returning the bytes it wrote to stdout — used to check instruction semantics against real hardware/emulators.
//!
//! Command lines (the `extra_flags` handling is described on [`compile_and_run`]):
//! - X86:  `gcc -O1 -march=native -fno-strict-aliasing <extra> -o EXE SRC.c -lm`, run `EXE`.
//! - Neon: `aarch64-linux-gnu-gcc -O1 -static -march=armv8.2-a+dotprod+i8mm+rdma -fno-strict-aliasing <extra> -o EXE SRC.c -lm`,
//!   run `qemu-aarch64 -cpu max EXE`.
//! - Hvx:  `clang-14 --target=hexagon -mv67 -mhvx -mhvx-length=128b -O1 -ffreestanding -nostdlib -G0 -fno-strict-aliasing <extra> -c SRC.c -o OBJ`,
//!   `ld.lld-14 -static -e _start OBJ -o EXE`, run `qemu-hexagon EXE`.
//!
//! HVX programs have no libc: the prelude supplies `_start`, `emit` (write syscall), `memcpy`/`memset`/`memmove`/`memcmp`,
//! clang's `__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes` and the integer-division helpers
//! (`__hexagon_{div,udiv,mod,umod}{si,di}3`). Scalar float division / libm (`__hexagon_divsf3`, `sqrtf`, ...) is NOT provided.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An execution target whose vector-intrinsic semantics we can observe by running a compiled C harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Host x86-64 (SSE/AVX/AVX-512 intrinsics), compiled with gcc and run natively.
    X86,
    /// AArch64 Advanced SIMD, cross-compiled with aarch64-linux-gnu-gcc and run under qemu-aarch64.
    Neon,
    /// Hexagon HVX (128-byte vectors, v67), compiled with clang-14, linked with ld.lld-14, run under qemu-hexagon.
    Hvx,
}

impl Target {
    /// All targets, for iteration.
    pub const ALL: [Target; 3] = [Target::X86, Target::Neon, Target::Hvx];

    /// Short ISA name ("x86", "neon", "hvx"), matching the ISA names used elsewhere in isadb.
    pub fn name(&self) -> &'static str {
        match self {
            Target::X86 => "x86",
            Target::Neon => "neon",
            Target::Hvx => "hvx",
        }
    }

    /// Parses an ISA name ("x86", "neon", "hvx"; case-insensitive) into a target.
    pub fn from_isa(isa: &str) -> Option<Target> {
        match isa.to_ascii_lowercase().as_str() {
            "x86" | "x86_64" | "x86-64" => Some(Target::X86),
            "neon" | "aarch64" | "arm64" => Some(Target::Neon),
            "hvx" | "hexagon" => Some(Target::Hvx),
            _ => None,
        }
    }

    /// External tools this target needs (compiler, [linker,] emulator), in pipeline order.
    fn tools(&self) -> &'static [&'static str] {
        match self {
            Target::X86 => &["gcc"],
            Target::Neon => &["aarch64-linux-gnu-gcc", "qemu-aarch64"],
            Target::Hvx => &["clang-14", "ld.lld-14", "qemu-hexagon"],
        }
    }
}

impl std::fmt::Display for Target {
    /// Prints the short ISA name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Common prelude for hosted targets (x86, NEON): `emit` via write(2) and a `main` calling `harness_main`.
macro_rules! hosted_prelude {
    ($includes:expr) => {
        concat!(
            $includes,
            r#"#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Writes n bytes at p to stdout (unbuffered, retries partial writes). */
static void emit(const void *p, unsigned long n) {
  const char *c = (const char *)p;
  while (n > 0) {
    long w = (long)write(1, c, n);
    if (w <= 0) break;
    c += w;
    n -= (unsigned long)w;
  }
}

/* Reads up to n bytes from stdin into p, retrying short reads; returns the count read (n unless EOF/error). */
static unsigned long read_in(void *p, unsigned long n) {
  char *c = (char *)p;
  unsigned long got = 0;
  while (got < n) {
    long r = (long)read(0, c + got, n - got);
    if (r <= 0) break;
    got += (unsigned long)r;
  }
  return got;
}

int harness_main(void);
int main(void) { return harness_main(); }
"#
        )
    };
}

const X86_PRELUDE: &str = hosted_prelude!("#include <immintrin.h>\n");
const NEON_PRELUDE: &str = hosted_prelude!("#include <arm_neon.h>\n");

const HVX_PRELUDE: &str = r#"#include <stdint.h>
#include <stddef.h>
#include <hexagon_types.h>
#include <hexagon_protos.h>
#include <hvx_hexagon_protos.h>

/* ---- freestanding runtime for qemu-hexagon (no libc) ---- */
static long isadb_syscall3(long nr, long a, long b, long c) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r6 __asm__("r6") = nr;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}

/* Writes n bytes at p to stdout via the write syscall (64), retrying partial writes. */
static void emit(const void *p, unsigned long n) {
  const char *c = (const char *)p;
  while (n > 0) {
    long w = isadb_syscall3(64, 1, (long)c, (long)n);
    if (w <= 0) break;
    c += w;
    n -= (unsigned long)w;
  }
}

/* Reads up to n bytes from stdin into p via the read syscall (63), retrying short reads; returns the count read. */
static unsigned long read_in(void *p, unsigned long n) {
  char *c = (char *)p;
  unsigned long got = 0;
  while (got < n) {
    long r = isadb_syscall3(63, 0, (long)(c + got), (long)(n - got));
    if (r <= 0) break;
    got += (unsigned long)r;
  }
  return got;
}

int harness_main(void);
void isadb_start_c(void) __attribute__((noreturn, used));
void isadb_start_c(void) {
  int rc = harness_main();
  for (;;) isadb_syscall3(93, rc, 0, 0); /* exit */
}
/* Entry point: align sp to 256 (HVX vector pairs), clear fp/lr so the frame chain ends, call into C. */
__asm__(".text\n.globl _start\n.type _start,@function\n.p2align 4\n_start:\n"
        "  r29 = and(r29, #-256)\n  r30 = #0\n  r31 = #0\n  call isadb_start_c\n"
        ".size _start, .-_start\n");

/* Library routines clang may emit calls to (aggregate copies, divisions). */
__attribute__((weak)) void *memcpy(void *d, const void *s, size_t n) {
  unsigned char *dp = (unsigned char *)d; const unsigned char *sp = (const unsigned char *)s;
  while (n--) *dp++ = *sp++;
  return d;
}
__attribute__((weak)) void *memmove(void *d, const void *s, size_t n) {
  unsigned char *dp = (unsigned char *)d; const unsigned char *sp = (const unsigned char *)s;
  if (dp < sp) { while (n--) *dp++ = *sp++; }
  else { dp += n; sp += n; while (n--) *--dp = *--sp; }
  return d;
}
__attribute__((weak)) void *memset(void *d, int c, size_t n) {
  unsigned char *dp = (unsigned char *)d;
  while (n--) *dp++ = (unsigned char)c;
  return d;
}
__attribute__((weak)) int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n; n--, x++, y++) if (*x != *y) return *x < *y ? -1 : 1;
  return 0;
}
__attribute__((weak)) void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *d, const void *s, size_t n) {
  return memcpy(d, s, n);
}
static unsigned long long isadb_udivmod64(unsigned long long n, unsigned long long d, unsigned long long *rem) {
  unsigned long long q = 0, r = 0;
  if (d == 0) { if (rem) *rem = n; return ~0ULL; }
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= 1ULL << i; }
  }
  if (rem) *rem = r;
  return q;
}
__attribute__((weak)) unsigned long long __hexagon_udivdi3(unsigned long long a, unsigned long long b) { return isadb_udivmod64(a, b, 0); }
__attribute__((weak)) unsigned long long __hexagon_umoddi3(unsigned long long a, unsigned long long b) { unsigned long long r; isadb_udivmod64(a, b, &r); return r; }
__attribute__((weak)) long long __hexagon_divdi3(long long a, long long b) {
  unsigned long long q = isadb_udivmod64(a < 0 ? -(unsigned long long)a : (unsigned long long)a, b < 0 ? -(unsigned long long)b : (unsigned long long)b, 0);
  return (long long)(((a < 0) != (b < 0)) ? -q : q);
}
__attribute__((weak)) long long __hexagon_moddi3(long long a, long long b) {
  unsigned long long r;
  isadb_udivmod64(a < 0 ? -(unsigned long long)a : (unsigned long long)a, b < 0 ? -(unsigned long long)b : (unsigned long long)b, &r);
  return (long long)(a < 0 ? -r : r);
}
__attribute__((weak)) unsigned __hexagon_udivsi3(unsigned a, unsigned b) { return (unsigned)__hexagon_udivdi3(a, b); }
__attribute__((weak)) unsigned __hexagon_umodsi3(unsigned a, unsigned b) { return (unsigned)__hexagon_umoddi3(a, b); }
__attribute__((weak)) int __hexagon_divsi3(int a, int b) { return (int)__hexagon_divdi3(a, b); }
__attribute__((weak)) int __hexagon_modsi3(int a, int b) { return (int)__hexagon_moddi3(a, b); }
/* ---- end of runtime ---- */
"#;

/// C text every harness starts with for this target: intrinsic headers, `static void emit(const void *p, unsigned long n)`
/// writing n bytes to stdout, `static unsigned long read_in(void *p, unsigned long n)` reading up to n bytes of stdin, and an entry point (`main`, or for HVX a `_start` stub) that returns `int harness_main(void)`'s value as exit code.
pub fn prelude(target: Target) -> &'static str {
    match target {
        Target::X86 => X86_PRELUDE,
        Target::Neon => NEON_PRELUDE,
        Target::Hvx => HVX_PRELUDE,
    }
}

/// Checks that the compiler, linker and emulator for `target` are installed; Err names the missing tool.
pub fn check_tools(target: Target) -> Result<(), String> {
    for tool in target.tools() {
        let ok = Command::new(tool)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return Err(format!(
                "{} target: required tool `{tool}` is not installed or not runnable",
                target.name()
            ));
        }
    }
    Ok(())
}

/// Upper bound on one harness execution, so a hung emulator cannot stall validation.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Why [`build_and_run`] failed, by stage, with the tool output callers need to attribute errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A file could not be written or a tool could not be started.
    Setup(String),
    /// The compiler (`stage` "compile") or linker ("link") rejected the program: `summary` is one readable line
    /// (first error lines), `stderr` the tool's complete diagnostics.
    Build {
        stage: &'static str,
        summary: String,
        stderr: String,
    },
    /// The program ran but failed (non-zero exit, signal or timeout); `stdout` holds what it wrote before that.
    Run { summary: String, stdout: Vec<u8> },
}

impl std::fmt::Display for Failure {
    /// The one-line summary.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Setup(s)
            | Failure::Build { summary: s, .. }
            | Failure::Run { summary: s, .. } => f.write_str(s),
        }
    }
}

/// Compiles `source` (prelude already included by the caller) with the extra flags, runs it, returns its stdout bytes.
/// Errors carry the compiler's first error lines or the emulator's exit status, as one readable message.
///
/// `extra_flags`: a `-march=...` replaces the default `-march` (X86/Neon); for Neon a flag starting with `+`
/// (e.g. `+sve2`) is appended to the `-march` string; for Hvx a `-mvNN` replaces `-mv67`; everything else is passed
/// to the compiler as-is. Intermediate files get unique names in `workdir` (created if missing); they are deleted
/// afterwards, except that the source is kept on failure (the error message names its path).
pub fn compile_and_run(
    target: Target,
    source: &str,
    extra_flags: &[String],
    workdir: &Path,
) -> Result<Vec<u8>, String> {
    execute(target, source, extra_flags, workdir, Some(&[]), true).map_err(|(f, src)| match src {
        Some(src) => format!("{f} [source: {}]", src.display()),
        None => f.to_string(),
    })
}

/// Like [`compile_and_run`], but feeds `stdin` to the program and reports failures by stage ([`Failure`]).
/// All intermediate files are deleted, also on failure, unless the environment variable `ISADB_KEEP_HARNESS`
/// is set (then the sources are kept in `workdir`, for debugging).
pub fn build_and_run(
    target: Target,
    source: &str,
    extra_flags: &[String],
    workdir: &Path,
    stdin: &[u8],
) -> Result<Vec<u8>, Failure> {
    let keep = std::env::var_os("ISADB_KEEP_HARNESS").is_some();
    execute(target, source, extra_flags, workdir, Some(stdin), keep).map_err(|(f, _)| f)
}

/// Like [`build_and_run`] without running the program: for code this machine cannot run (a CPU
/// feature it lacks), which is still checked to compile and link.
pub fn build_only(
    target: Target,
    source: &str,
    extra_flags: &[String],
    workdir: &Path,
) -> Result<(), Failure> {
    execute(target, source, extra_flags, workdir, None, false)
        .map(|_| ())
        .map_err(|(f, _)| f)
}

/// Writes the source, builds it and, given its stdin, runs it; on failure also returns the kept
/// source's path (if `keep_source`).
fn execute(
    target: Target,
    source: &str,
    extra_flags: &[String],
    workdir: &Path,
    stdin: Option<&[u8]>,
    keep_source: bool,
) -> Result<Vec<u8>, (Failure, Option<PathBuf>)> {
    std::fs::create_dir_all(workdir).map_err(|e| {
        (
            Failure::Setup(format!("cannot create workdir {}: {e}", workdir.display())),
            None,
        )
    })?;
    let stem = unique_stem(target);
    let src = workdir.join(format!("{stem}.c"));
    let obj = workdir.join(format!("{stem}.o"));
    let exe = workdir.join(format!("{stem}.elf"));
    std::fs::write(&src, source).map_err(|e| {
        (
            Failure::Setup(format!("cannot write {}: {e}", src.display())),
            None,
        )
    })?;

    let result = build(target, &src, &obj, &exe, extra_flags).and_then(|()| match stdin {
        Some(stdin) => run(target, &exe, stdin),
        None => Ok(Vec::new()),
    });
    for p in [&obj, &exe] {
        let _ = std::fs::remove_file(p);
    }
    let keep = result.is_err() && keep_source;
    if !keep && std::env::var_os("ISADB_KEEP_HARNESS").is_none() {
        let _ = std::fs::remove_file(&src);
    }
    result.map_err(|f| (f, keep.then_some(src)))
}

/// Returns a file stem unique across threads and processes sharing a workdir.
fn unique_stem(target: Target) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "isadb_{}_{}_{}_{:08x}",
        target.name(),
        std::process::id(),
        n,
        nanos
    )
}

/// Splits extra flags into (march override, Neon march extensions, HVX `-mvNN` override, pass-through flags).
fn split_flags(
    target: Target,
    extra: &[String],
) -> (Option<&str>, String, Option<&str>, Vec<&str>) {
    let (mut march, mut exts, mut mv, mut rest) = (None, String::new(), None, Vec::new());
    for f in extra {
        if f.starts_with("-march=") && target != Target::Hvx {
            march = Some(f.as_str());
        } else if f.starts_with('+') && target == Target::Neon {
            exts.push_str(f);
        } else if target == Target::Hvx
            && f.len() > 3
            && f.starts_with("-mv")
            && f[3..].chars().all(|c| c.is_ascii_digit())
        {
            mv = Some(f.as_str());
        } else {
            rest.push(f.as_str());
        }
    }
    (march, exts, mv, rest)
}

/// Runs the compiler (and linker for HVX) producing `exe`.
fn build(
    target: Target,
    src: &Path,
    obj: &Path,
    exe: &Path,
    extra: &[String],
) -> Result<(), Failure> {
    let (march, exts, mv, rest) = split_flags(target, extra);
    match target {
        Target::X86 | Target::Neon => {
            let (cc, default_march) = match target {
                Target::X86 => ("gcc", "-march=native"),
                _ => (
                    "aarch64-linux-gnu-gcc",
                    "-march=armv8.2-a+dotprod+i8mm+rdma",
                ),
            };
            let mut cmd = Command::new(cc);
            cmd.arg("-O1");
            if target == Target::Neon {
                cmd.arg("-static");
            }
            cmd.arg(format!("{}{}", march.unwrap_or(default_march), exts));
            cmd.arg("-fno-strict-aliasing")
                .args(&rest)
                .arg("-o")
                .arg(exe)
                .arg(src)
                .arg("-lm");
            run_tool(target, "compile", cmd)
        }
        Target::Hvx => {
            let mut cc = Command::new("clang-14");
            cc.args([
                "--target=hexagon",
                mv.unwrap_or("-mv67"),
                "-mhvx",
                "-mhvx-length=128b",
                "-O1",
            ])
            .args(["-ffreestanding", "-nostdlib", "-G0", "-fno-strict-aliasing"])
            .args(&rest)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(obj);
            run_tool(target, "compile", cc)?;
            let mut ld = Command::new("ld.lld-14");
            ld.args(["-static", "-e", "_start"])
                .arg(obj)
                .arg("-o")
                .arg(exe);
            run_tool(target, "link", ld)
        }
    }
}

/// Runs a build tool; on failure returns its first error lines (summary) and complete diagnostics.
fn run_tool(target: Target, stage: &'static str, mut cmd: Command) -> Result<(), Failure> {
    let prog = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .env("LC_ALL", "C") // plain ASCII diagnostics, the same on every machine
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Failure::Setup(format!(
                "{} {stage}: cannot run `{prog}`: {e}",
                target.name()
            ))
        })?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    Err(Failure::Build {
        stage,
        summary: format!(
            "{} {stage} failed ({prog}, {}): {}",
            target.name(),
            describe_status(out.status),
            first_errors(&text)
        ),
        stderr: text,
    })
}

/// Picks the first few `error` lines of compiler/linker output (or its first lines if none match).
fn first_errors(text: &str) -> String {
    let errs: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error"))
        .take(6)
        .collect();
    let lines: Vec<&str> = if errs.is_empty() {
        text.lines().take(10).collect()
    } else {
        errs
    };
    lines
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Formats an exit status including the terminating signal, if any.
fn describe_status(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    match status.code() {
        Some(c) => format!("exit status {c}"),
        None => "unknown status".to_string(),
    }
}

/// Executes `exe` (under the target's emulator) with `stdin` as its standard input, enforcing [`RUN_TIMEOUT`],
/// and returns stdout on exit status 0.
fn run(target: Target, exe: &Path, stdin: &[u8]) -> Result<Vec<u8>, Failure> {
    let exe: PathBuf = exe.to_path_buf();
    let mut cmd = match target {
        Target::X86 => Command::new(&exe),
        Target::Neon => {
            let mut c = Command::new("qemu-aarch64");
            c.args(["-cpu", "max"]).arg(&exe);
            c
        }
        Target::Hvx => {
            let mut c = Command::new("qemu-hexagon");
            c.arg(&exe);
            c
        }
    };
    let prog = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(if stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Failure::Setup(format!("{} run: cannot start `{prog}`: {e}", target.name()))
        })?;
    let mut so = child.stdout.take().expect("piped stdout");
    let mut se = child.stderr.take().expect("piped stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    // The writer ignores errors: a program that exits early closes the pipe (EPIPE), which its status reports.
    let t_in = child.stdin.take().map(|mut si| {
        let data = stdin.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = si.write_all(&data);
        })
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > RUN_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                return Err(Failure::Setup(format!(
                    "{} run: waiting for `{prog}` failed: {e}",
                    target.name()
                )))
            }
        }
    };
    if let Some(t) = t_in {
        let _ = t.join();
    }
    let stdout = t_out.join().unwrap_or_default();
    let stderr = t_err.join().unwrap_or_default();
    let Some(status) = status else {
        let summary = format!(
            "{} run: `{prog}` timed out after {}s",
            target.name(),
            RUN_TIMEOUT.as_secs()
        );
        return Err(Failure::Run { summary, stdout });
    };
    if status.success() {
        return Ok(stdout);
    }
    let err_text = String::from_utf8_lossy(&stderr);
    let err_text: String = err_text.lines().take(5).collect::<Vec<_>>().join(" | ");
    let summary = format!(
        "{} run failed: `{prog}` {} after writing {} stdout bytes{}",
        target.name(),
        describe_status(status),
        stdout.len(),
        if err_text.is_empty() {
            String::new()
        } else {
            format!("; stderr: {err_text}")
        }
    );
    Err(Failure::Run { summary, stdout })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory for one call, removed when the guard drops (pass or fail).
    fn workdir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("isadb-toolchain-test-")
            .tempdir()
            .unwrap()
    }

    /// Whether this CPU runs `feature`, by validation's feature table; prints why not.
    fn cpu_has(feature: &str) -> bool {
        use super::super::features::{missing, Host};
        match missing(Target::X86, feature, &Host::detect()) {
            None => true,
            Some(why) => {
                eprintln!("skipping: {why}");
                false
            }
        }
    }

    /// Returns false (and prints why) if the target's tools are missing, so tests skip instead of failing.
    fn have(target: Target) -> bool {
        match check_tools(target) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("skipping: {e}");
                false
            }
        }
    }

    /// Builds a harness: prelude + body.
    fn program(target: Target, body: &str) -> String {
        format!("{}\n{}", prelude(target), body)
    }

    fn le_i16(v: &[i16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn le_i32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn isa_names_round_trip() {
        for t in Target::ALL {
            assert_eq!(Target::from_isa(t.name()), Some(t));
        }
        assert_eq!(Target::from_isa("sve"), None);
    }

    #[test]
    fn x86_avx2_add_epi16() {
        if !have(Target::X86) || !cpu_has("avx2") {
            return;
        }
        let src = program(
            Target::X86,
            r#"
int harness_main(void) {
  int16_t a[16], b[16], r[16];
  for (int i = 0; i < 16; i++) { a[i] = (int16_t)(i * 3); b[i] = (int16_t)(1000 - i); }
  a[15] = 32767; b[15] = 1; /* wraps */
  __m256i v = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)a), _mm256_loadu_si256((const __m256i *)b));
  _mm256_storeu_si256((__m256i *)r, v);
  emit(r, sizeof r);
  return 0;
}
"#,
        );
        let out =
            compile_and_run(Target::X86, &src, &["-mavx2".to_string()], workdir().path()).unwrap();
        let mut exp: Vec<i16> = (0..16).map(|i| (i * 3 + 1000 - i) as i16).collect();
        exp[15] = i16::MIN;
        assert_eq!(out, le_i16(&exp));
    }

    #[test]
    fn x86_avx512_dpbusd() {
        if !have(Target::X86) || !cpu_has("avx512f+avx512vnni") {
            return;
        }
        let src = program(
            Target::X86,
            r#"
int harness_main(void) {
  uint8_t a[64]; int8_t b[64]; int32_t s[16], r[16];
  for (int i = 0; i < 64; i++) { a[i] = (uint8_t)(i * 7 + 128); b[i] = (int8_t)(i * 5 - 100); }
  for (int j = 0; j < 16; j++) s[j] = j * 1000 - 5000;
  __m512i v = _mm512_dpbusd_epi32(_mm512_loadu_si512(s), _mm512_loadu_si512(a), _mm512_loadu_si512(b));
  _mm512_storeu_si512(r, v);
  emit(r, sizeof r);
  return 0;
}
"#,
        );
        let flags = super::super::features::compile_flags(Target::X86, "avx512f+avx512vnni");
        let out = compile_and_run(Target::X86, &src, &flags, workdir().path()).unwrap();
        let exp: Vec<i32> = (0..16)
            .map(|j: i32| {
                let mut acc = j * 1000 - 5000;
                for k in 0..4 {
                    let i = 4 * j + k;
                    acc += ((i * 7 + 128) as u8 as i32) * ((i * 5 - 100) as i8 as i32);
                }
                acc
            })
            .collect();
        assert_eq!(out, le_i32(&exp));
    }

    #[test]
    fn neon_dot_and_qrdmulh() {
        if !have(Target::Neon) {
            return;
        }
        let src = program(
            Target::Neon,
            r#"
int harness_main(void) {
  uint8_t a[16], b[16]; uint32_t acc[4] = {1, 2, 3, 0xfffffff0u}, r[4];
  for (int i = 0; i < 16; i++) { a[i] = (uint8_t)(i * 17 + 200); b[i] = (uint8_t)(255 - i * 3); }
  vst1q_u32(r, vdotq_u32(vld1q_u32(acc), vld1q_u8(a), vld1q_u8(b)));
  emit(r, sizeof r);
  int16_t x[8] = {-32768, 32767, 1000, -1000, 12345, -32768, 16384, 3};
  int16_t y[8] = {-32768, 32767, 2000, 2000, -54, 32767, 16384, -3};
  int16_t z[8];
  vst1q_s16(z, vqrdmulhq_s16(vld1q_s16(x), vld1q_s16(y)));
  emit(z, sizeof z);
  return 0;
}
"#,
        );
        let out = compile_and_run(Target::Neon, &src, &[], workdir().path()).unwrap();
        let acc = [1u32, 2, 3, 0xffff_fff0];
        let mut exp = Vec::new();
        for j in 0..4u32 {
            let mut s = acc[j as usize];
            for k in 0..4 {
                let i = 4 * j + k;
                s = s.wrapping_add(((i * 17 + 200) as u8 as u32) * ((255 - i * 3) as u8 as u32));
            }
            exp.extend(s.to_le_bytes());
        }
        let x: [i16; 8] = [-32768, 32767, 1000, -1000, 12345, -32768, 16384, 3];
        let y: [i16; 8] = [-32768, 32767, 2000, 2000, -54, 32767, 16384, -3];
        let z: Vec<i16> = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| {
                let p = (2 * a as i64 * b as i64 + (1 << 15)) >> 16;
                p.clamp(i16::MIN as i64, i16::MAX as i64) as i16
            })
            .collect();
        exp.extend(le_i16(&z));
        assert_eq!(out, exp);
    }

    #[test]
    fn hvx_add_rmpy_widen() {
        if !have(Target::Hvx) {
            return;
        }
        let src = program(
            Target::Hvx,
            r#"
static int16_t ha[64] __attribute__((aligned(128))), hb[64] __attribute__((aligned(128)));
static uint8_t ua[128] __attribute__((aligned(128))), ub[128] __attribute__((aligned(128)));
static HVX_Vector out1, out2;
static HVX_VectorPair outw;
int harness_main(void) {
  for (int i = 0; i < 64; i++) { ha[i] = (int16_t)(i * 300 - 9000); hb[i] = (int16_t)(i * 211 + 17); }
  ha[63] = 32767; hb[63] = 1; /* wraps */
  for (int i = 0; i < 128; i++) { ua[i] = (uint8_t)(i * 37 + 11); ub[i] = (uint8_t)(250 - i); }
  out1 = Q6_Vh_vadd_VhVh(*(HVX_Vector *)ha, *(HVX_Vector *)hb);
  out2 = Q6_Vw_vrmpy_VubRb(*(HVX_Vector *)ua, (int)0x80FF7F03); /* bytes (lsb first): 3, 127, -1, -128 */
  outw = Q6_Wh_vadd_VubVub(*(HVX_Vector *)ua, *(HVX_Vector *)ub);
  emit(&out1, 128);
  emit(&out2, 128);
  emit(&outw, 256);
  return 0;
}
"#,
        );
        let out = compile_and_run(Target::Hvx, &src, &[], workdir().path()).unwrap();
        let mut h: Vec<i16> = (0..64)
            .map(|i: i32| ((i * 300 - 9000) as i16).wrapping_add((i * 211 + 17) as i16))
            .collect();
        h[63] = i16::MIN;
        let ua: Vec<u8> = (0..128).map(|i: i32| (i * 37 + 11) as u8).collect();
        let ub: Vec<u8> = (0..128).map(|i: i32| (250 - i) as u8).collect();
        let rt: [i32; 4] = [3, 127, -1, -128];
        let w: Vec<i32> = (0..32)
            .map(|j| (0..4).map(|k| ua[4 * j + k] as i32 * rt[k]).sum())
            .collect();
        // Widening pair: lo vector holds even-indexed lanes, hi vector holds odd-indexed lanes.
        let even: Vec<i16> = (0..64)
            .map(|i| ua[2 * i] as i16 + ub[2 * i] as i16)
            .collect();
        let odd: Vec<i16> = (0..64)
            .map(|i| ua[2 * i + 1] as i16 + ub[2 * i + 1] as i16)
            .collect();
        let mut exp = le_i16(&h);
        exp.extend(le_i32(&w));
        exp.extend(le_i16(&even));
        exp.extend(le_i16(&odd));
        assert_eq!(out.len(), exp.len());
        assert_eq!(out, exp);
    }

    #[test]
    fn hvx_stack_vectors_division_and_exit_code() {
        if !have(Target::Hvx) {
            return;
        }
        // Stack-allocated vectors/pairs, struct copy (memcpy helper) and runtime division must all work.
        let src = program(
            Target::Hvx,
            r#"
struct big { int x[64]; };
static struct big g = {{1, 2, 3}};
static volatile int seven = 7, minus100 = -100;
__attribute__((noinline)) static HVX_VectorPair twice(HVX_Vector v) { HVX_VectorPair p[2]; p[1] = Q6_W_vcombine_VV(v, v); return p[1]; }
int harness_main(void) {
  HVX_Vector st[3];
  st[0] = Q6_V_vsplat_R(0x01020304);
  HVX_VectorPair p = twice(st[0]);
  struct big c = g; c.x[10] = minus100 / seven + (minus100 % seven) * 100 + (int)(1000000000000LL / seven % 1000);
  emit(&p, 256);
  emit(&c.x[0], 4); emit(&c.x[10], 4);
  return 42;
}
"#,
        );
        let err = compile_and_run(Target::Hvx, &src, &[], workdir().path()).unwrap_err();
        assert!(err.contains("exit status 42"), "{err}");
        let ok_src = src.replace("return 42;", "return 0;");
        let out = compile_and_run(Target::Hvx, &ok_src, &[], workdir().path()).unwrap();
        let mut exp: Vec<u8> = [4u8, 3, 2, 1].repeat(64);
        exp.extend(1i32.to_le_bytes());
        let v: i32 = -100 / 7 + (-100 % 7) * 100 + (1_000_000_000_000i64 / 7 % 1000) as i32;
        exp.extend(v.to_le_bytes());
        assert_eq!(out, exp);
    }

    #[test]
    fn stdin_reaches_every_target() {
        let body = "int harness_main(void) { static unsigned char b[300000] __attribute__((aligned(256)));\n\
                    unsigned long n = read_in(b, sizeof b); for (unsigned long i = 0; i < n; i++) b[i] ^= 0x5a;\n\
                    emit(b, n); return n == 300000 ? 0 : 9; }\n";
        let input: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let expect: Vec<u8> = input.iter().map(|b| b ^ 0x5a).collect();
        for t in Target::ALL {
            if !have(t) || (t == Target::X86 && !cfg!(target_arch = "x86_64")) {
                continue;
            }
            let out = build_and_run(t, &program(t, body), &[], workdir().path(), &input).unwrap();
            assert!(out == expect, "{t}: {} bytes back", out.len());
            // A short input is seen as such (exit 9), with the stdout written so far.
            match build_and_run(t, &program(t, body), &[], workdir().path(), &input[..1000]) {
                Err(Failure::Run { summary, stdout }) => {
                    assert!(summary.contains("exit status 9"), "{summary}");
                    assert_eq!(stdout.len(), 1000);
                }
                other => panic!("{t}: {other:?}"),
            }
        }
    }

    #[test]
    fn compile_error_is_reported() {
        if !have(Target::X86) {
            return;
        }
        let src = program(
            Target::X86,
            "int harness_main(void) { return undefined_thing; }\n",
        );
        let err = compile_and_run(Target::X86, &src, &[], workdir().path()).unwrap_err();
        assert!(
            err.contains("compile failed") && err.contains("undefined_thing"),
            "{err}"
        );
    }
}
