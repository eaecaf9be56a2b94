//! Which CPU features we can execute, and the compiler flags each needs.
//!
//! x86 runs natively, so a feature must be in `/proc/cpuinfo`; NEON runs under `qemu-aarch64 -cpu max`
//! (every Armv8/v9 SIMD extension); HVX runs under qemu-hexagon 7.2, which emulates HVX up to v67.
//! Features outside the tables are attempted with the default flags: if the compiler or the CPU
//! rejects them, the instruction is reported as not compiling or as crashing.

use super::Toolchain;
use std::collections::HashSet;

/// Whether an instruction's feature can run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// It can, with these extra compiler flags.
    Flags(Vec<String>),
    /// It cannot; the reason is recorded as the skip detail.
    Unsupported(String),
}

/// x86 features: spec name, gcc flag, /proc/cpuinfo flag.
const X86: &[(&str, &str, &str)] = &[
    ("mmx", "-mmmx", "mmx"),
    ("sse", "-msse", "sse"),
    ("sse2", "-msse2", "sse2"),
    ("sse3", "-msse3", "pni"),
    ("ssse3", "-mssse3", "ssse3"),
    ("sse4.1", "-msse4.1", "sse4_1"),
    ("sse4.2", "-msse4.2", "sse4_2"),
    ("avx", "-mavx", "avx"),
    ("avx2", "-mavx2", "avx2"),
    ("fma", "-mfma", "fma"),
    ("f16c", "-mf16c", "f16c"),
    ("bmi", "-mbmi", "bmi1"),
    ("bmi1", "-mbmi", "bmi1"),
    ("bmi2", "-mbmi2", "bmi2"),
    ("popcnt", "-mpopcnt", "popcnt"),
    ("lzcnt", "-mlzcnt", "abm"),
    ("aes", "-maes", "aes"),
    ("pclmul", "-mpclmul", "pclmulqdq"),
    ("pclmulqdq", "-mpclmul", "pclmulqdq"),
    ("gfni", "-mgfni", "gfni"),
    ("vaes", "-mvaes", "vaes"),
    ("vpclmulqdq", "-mvpclmulqdq", "vpclmulqdq"),
    ("avx512f", "-mavx512f", "avx512f"),
    ("avx512bw", "-mavx512bw", "avx512bw"),
    ("avx512dq", "-mavx512dq", "avx512dq"),
    ("avx512vl", "-mavx512vl", "avx512vl"),
    ("avx512cd", "-mavx512cd", "avx512cd"),
    ("avx512vnni", "-mavx512vnni", "avx512_vnni"),
    ("avx512vbmi", "-mavx512vbmi", "avx512vbmi"),
    ("avx512vbmi2", "-mavx512vbmi2", "avx512_vbmi2"),
    ("avx512bitalg", "-mavx512bitalg", "avx512_bitalg"),
    ("avx512ifma", "-mavx512ifma", "avx512ifma"),
    ("avx512vpopcntdq", "-mavx512vpopcntdq", "avx512_vpopcntdq"),
    ("avx512bf16", "-mavx512bf16", "avx512_bf16"),
    ("avx512fp16", "-mavx512fp16", "avx512_fp16"),
    ("avxvnni", "-mavxvnni", "avx_vnni"),
    ("avxifma", "-mavxifma", "avx_ifma"),
    ("avxvnniint8", "-mavxvnniint8", "avx_vnni_int8"),
];

/// NEON features beyond the default `-march=armv8.2-a+dotprod+i8mm+rdma`: spec name, march extension.
const NEON: &[(&str, &str)] = &[
    ("neon", ""),
    ("asimd", ""),
    ("dotprod", ""),
    ("i8mm", ""),
    ("rdm", ""),
    ("rdma", ""),
    ("fp16", "+fp16"),
    ("fhm", "+fp16fml"),
    ("bf16", "+bf16"),
    ("aes", "+aes"),
    ("sha2", "+sha2"),
    ("sha3", "+sha3"),
    ("sm4", "+sm4"),
    ("crc", "+crc"),
];

/// Highest HVX version qemu-hexagon 7.2 emulates.
pub const HVX_MAX_VERSION: u32 = 67;

/// What the machine running the harnesses offers.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// The CPU flags from /proc/cpuinfo (None when the host is not x86-64 or it cannot be read).
    pub x86_flags: Option<HashSet<String>>,
}

impl Host {
    /// Reads /proc/cpuinfo on an x86-64 host.
    pub fn detect() -> Host {
        let x86_flags = if cfg!(target_arch = "x86_64") {
            std::fs::read_to_string("/proc/cpuinfo").ok().map(|text| {
                text.lines()
                    .filter(|l| l.starts_with("flags"))
                    .take(1)
                    .flat_map(|l| {
                        l.split(':')
                            .nth(1)
                            .unwrap_or("")
                            .split_whitespace()
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
                    .collect()
            })
        } else {
            None
        };
        Host { x86_flags }
    }
}

/// The parts of a feature expression such as `avx512bw+avx512vl`.
fn parts(feature: &str) -> impl Iterator<Item = String> + '_ {
    feature
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-'))
        .filter(|p| !p.is_empty())
        .map(|p| p.to_ascii_lowercase())
}

/// Whether `feature` can run on `target` here, and with which flags.
pub fn support(target: Toolchain, feature: &str, host: &Host) -> Support {
    match missing(target, feature, host) {
        Some(reason) => Support::Unsupported(reason),
        None => Support::Flags(compile_flags(target, feature)),
    }
}

/// The compiler flags code using `feature` needs on `target`, whether or not this machine can
/// run it (features outside the tables need none).
pub fn compile_flags(target: Toolchain, feature: &str) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    for part in parts(feature) {
        let flag = match target {
            Toolchain::X86 => X86.iter().find(|f| f.0 == part).map(|f| f.1),
            Toolchain::Neon => NEON.iter().find(|f| f.0 == part).map(|f| f.1),
            Toolchain::Hvx => None,
        };
        if let Some(flag) = flag.filter(|f| !f.is_empty() && !flags.iter().any(|g| g == f)) {
            flags.push(flag.to_string());
        }
    }
    flags
}

/// Why this machine cannot run code using `feature` on `target` (the CPU or the emulator lacks
/// a part of it), or None when it can. This table is the one place that decides it.
pub fn missing(target: Toolchain, feature: &str, host: &Host) -> Option<String> {
    for part in parts(feature) {
        match target {
            Toolchain::X86 => {
                let Some(cpu) = &host.x86_flags else {
                    return Some("the host is not an x86-64 machine".into());
                };
                if let Some(&(_, _, cpuinfo)) = X86.iter().find(|f| f.0 == part) {
                    if !cpu.contains(cpuinfo) {
                        return Some(format!("CPU lacks {part}"));
                    }
                }
            }
            Toolchain::Neon => {
                if part.starts_with("sve") || part == "sme" {
                    return Some(format!("{part} is not validated as NEON"));
                }
            }
            Toolchain::Hvx => {
                let too_new = part
                    .strip_prefix("hvxv")
                    .and_then(|v| v.parse::<u32>().ok())
                    .is_some_and(|v| v > HVX_MAX_VERSION);
                if too_new || part.contains("qfloat") || part.contains("ieee") {
                    return Some(format!("emulator lacks {part} (qemu-hexagon 7.2 emulates HVX up to v{HVX_MAX_VERSION})"));
                }
            }
        }
    }
    None
}

/// The x86 features of the table this machine cannot run, in table order (spec names).
#[cfg(test)]
pub fn x86_features_missing(host: &Host) -> Vec<&'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    for &(name, _, _) in X86 {
        if missing(Toolchain::X86, name, host).is_some() && !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// Skip details that depend on this machine rather than on the spec: such rows are re-evaluated on
/// every run (a machine with the tool or feature then validates them).
pub fn is_environmental(detail: &str) -> bool {
    [
        "tool unavailable",
        "CPU lacks",
        "emulator lacks",
        "the host is not",
    ]
    .iter()
    .any(|p| detail.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(flags: &[&str]) -> Host {
        Host {
            x86_flags: Some(flags.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn flags_and_reasons() {
        let h = host(&["sse2", "avx2", "avx512f", "avx512bw"]);
        assert_eq!(
            support(Toolchain::X86, "avx512bw", &h),
            Support::Flags(vec!["-mavx512bw".into()])
        );
        assert_eq!(
            support(Toolchain::X86, "avx512f+avx512bw", &h),
            Support::Flags(vec!["-mavx512f".into(), "-mavx512bw".into()])
        );
        assert_eq!(
            support(Toolchain::X86, "avx512vnni", &h),
            Support::Unsupported("CPU lacks avx512vnni".into())
        );
        assert_eq!(
            support(Toolchain::Neon, "dotprod", &h),
            Support::Flags(vec![])
        );
        assert_eq!(
            support(Toolchain::Neon, "fp16", &h),
            Support::Flags(vec!["+fp16".into()])
        );
        assert_eq!(
            support(Toolchain::Hvx, "hvxv66", &h),
            Support::Flags(vec![])
        );
        assert!(
            matches!(support(Toolchain::Hvx, "hvxv68", &h), Support::Unsupported(r) if r.starts_with("emulator lacks hvxv68"))
        );
        assert_eq!(
            compile_flags(Toolchain::X86, "avx512vnni"),
            vec!["-mavx512vnni".to_string()]
        );
        assert_eq!(
            x86_features_missing(&h),
            ["mmx", "sse", "sse3", "ssse3", "sse4.1", "sse4.2", "avx"]
                .iter()
                .chain(&["fma", "f16c", "bmi", "bmi1", "bmi2", "popcnt", "lzcnt"])
                .chain(&["aes", "pclmul", "pclmulqdq", "gfni", "vaes", "vpclmulqdq"])
                .chain(&[
                    "avx512dq",
                    "avx512vl",
                    "avx512cd",
                    "avx512vnni",
                    "avx512vbmi"
                ])
                .chain(&[
                    "avx512vbmi2",
                    "avx512bitalg",
                    "avx512ifma",
                    "avx512vpopcntdq"
                ])
                .chain(&[
                    "avx512bf16",
                    "avx512fp16",
                    "avxvnni",
                    "avxifma",
                    "avxvnniint8"
                ])
                .copied()
                .collect::<Vec<_>>()
        );
        // Linux spells some flags apart from the feature (avx512fp16 is avx512_fp16).
        let h = host(&["avx512f", "avx512_fp16", "avx512_vnni"]);
        assert_eq!(missing(Toolchain::X86, "avx512fp16", &h), None);
        assert_eq!(missing(Toolchain::X86, "avx512vnni", &h), None);
        assert!(missing(Toolchain::X86, "avx512bw", &h).is_some());
        assert_eq!(
            missing(Toolchain::X86, "avx512f", &Host::default()).as_deref(),
            Some("the host is not an x86-64 machine")
        );
        assert!(is_environmental("CPU lacks avx512fp16"));
        assert!(!is_environmental("does not compile: error: x"));
    }
}
