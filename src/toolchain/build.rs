//! Building a C program with a toolchain and running it (natively or under an emulator), with
//! a time limit, reporting a failure by stage with the tool's first error lines.

use super::Toolchain;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
#[cfg(test)]
pub fn compile_and_run(
    target: Toolchain,
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
    target: Toolchain,
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
    target: Toolchain,
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
    target: Toolchain,
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
fn unique_stem(target: Toolchain) -> String {
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
    target: Toolchain,
    extra: &[String],
) -> (Option<&str>, String, Option<&str>, Vec<&str>) {
    let (mut march, mut exts, mut mv, mut rest) = (None, String::new(), None, Vec::new());
    for f in extra {
        if f.starts_with("-march=") && target != Toolchain::Hvx {
            march = Some(f.as_str());
        } else if f.starts_with('+') && target == Toolchain::Neon {
            exts.push_str(f);
        } else if target == Toolchain::Hvx
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
    target: Toolchain,
    src: &Path,
    obj: &Path,
    exe: &Path,
    extra: &[String],
) -> Result<(), Failure> {
    let (march, exts, mv, rest) = split_flags(target, extra);
    match target {
        Toolchain::X86 | Toolchain::Neon => {
            let (cc, default_march) = match target {
                Toolchain::X86 => ("gcc", "-march=native"),
                _ => (
                    "aarch64-linux-gnu-gcc",
                    "-march=armv8.2-a+dotprod+i8mm+rdma",
                ),
            };
            let mut cmd = Command::new(cc);
            cmd.arg("-O1");
            if target == Toolchain::Neon {
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
        Toolchain::Hvx => {
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
fn run_tool(target: Toolchain, stage: &'static str, mut cmd: Command) -> Result<(), Failure> {
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
fn run(target: Toolchain, exe: &Path, stdin: &[u8]) -> Result<Vec<u8>, Failure> {
    let exe: PathBuf = exe.to_path_buf();
    let mut cmd = match target {
        Toolchain::X86 => Command::new(&exe),
        Toolchain::Neon => {
            let mut c = Command::new("qemu-aarch64");
            c.args(["-cpu", "max"]).arg(&exe);
            c
        }
        Toolchain::Hvx => {
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
