//! The C toolchains isadb runs real code with: compile a program for x86 / AArch64 NEON /
//! Hexagon HVX and run it (natively or under qemu), returning the bytes it wrote to stdout; the
//! CPU features each needs ([`features`]) and the C types of operands ([`ctype`]). Validation
//! runs instruction semantics through them, and `compile --run` a selection.
//!
//! Command lines (the `extra_flags` handling is described on [`compile_and_run`]):
//! - X86:  `gcc -O1 -march=native -fno-strict-aliasing <extra> -o EXE SRC.c -lm`, run `EXE`.
//! - Neon: `aarch64-linux-gnu-gcc -O1 -static -march=armv8.2-a+dotprod+i8mm+rdma -fno-strict-aliasing <extra> -o EXE SRC.c -lm`,
//!   run `qemu-aarch64 -cpu max EXE`.
//! - Hvx:  `clang-14 --target=hexagon -mv67 -mhvx -mhvx-length=128b -O1 -ffreestanding -nostdlib -G0 -fno-strict-aliasing <extra> -c SRC.c -o OBJ`,
//!   `ld.lld-14 -static -e _start OBJ -o EXE`, run `qemu-hexagon EXE`.
//!
//! HVX programs have no libc: the prelude (`hvx.c`) supplies `_start`, `emit` (write syscall), `memcpy`/`memset`/`memmove`/`memcmp`,
//! clang's `__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes` and the integer-division helpers
//! (`__hexagon_{div,udiv,mod,umod}{si,di}3`). Scalar float division / libm (`__hexagon_divsf3`, `sqrtf`, ...) is NOT provided.

mod build;
pub mod ctype;
pub mod features;
#[cfg(test)]
mod tests;

use crate::spec::Isa;
use std::process::{Command, Stdio};

#[cfg(test)]
use build::compile_and_run;
pub use build::{build_and_run, build_only, Failure};

/// A toolchain that builds and runs C for one ISA, whose vector-intrinsic semantics we observe by
/// running a compiled harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolchain {
    /// Host x86-64 (SSE/AVX/AVX-512 intrinsics), compiled with gcc and run natively.
    X86,
    /// AArch64 Advanced SIMD, cross-compiled with aarch64-linux-gnu-gcc and run under qemu-aarch64.
    Neon,
    /// Hexagon HVX (128-byte vectors, v67), compiled with clang-14, linked with ld.lld-14, run under qemu-hexagon.
    Hvx,
}

impl Toolchain {
    /// All toolchains, for iteration.
    pub const ALL: [Toolchain; 3] = [Toolchain::X86, Toolchain::Neon, Toolchain::Hvx];

    /// The toolchain that runs `isa`'s code; None for an ISA without one (dsp).
    pub fn of(isa: Isa) -> Option<Toolchain> {
        Toolchain::ALL.into_iter().find(|t| t.isa() == isa)
    }

    /// The ISA whose code it runs.
    pub fn isa(self) -> Isa {
        match self {
            Toolchain::X86 => Isa::X86,
            Toolchain::Neon => Isa::Neon,
            Toolchain::Hvx => Isa::Hvx,
        }
    }

    /// The ISA's name ("x86", "neon", "hvx").
    pub fn name(&self) -> &'static str {
        self.isa().as_str()
    }

    /// External tools this target needs (compiler, [linker,] emulator), in pipeline order.
    fn tools(&self) -> &'static [&'static str] {
        match self {
            Toolchain::X86 => &["gcc"],
            Toolchain::Neon => &["aarch64-linux-gnu-gcc", "qemu-aarch64"],
            Toolchain::Hvx => &["clang-14", "ld.lld-14", "qemu-hexagon"],
        }
    }
}

impl std::fmt::Display for Toolchain {
    /// Prints the short ISA name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

const X86_PRELUDE: &str = concat!("#include <immintrin.h>\n", include_str!("hosted.c"));
const NEON_PRELUDE: &str = concat!("#include <arm_neon.h>\n", include_str!("hosted.c"));
const HVX_PRELUDE: &str = include_str!("hvx.c");

/// C text every harness starts with for this target: intrinsic headers, `static void emit(const void *p, unsigned long n)`
/// writing n bytes to stdout, `static unsigned long read_in(void *p, unsigned long n)` reading up to n bytes of stdin, and an entry point (`main`, or for HVX a `_start` stub) that returns `int harness_main(void)`'s value as exit code.
pub fn prelude(target: Toolchain) -> &'static str {
    match target {
        Toolchain::X86 => X86_PRELUDE,
        Toolchain::Neon => NEON_PRELUDE,
        Toolchain::Hvx => HVX_PRELUDE,
    }
}

/// Checks that the compiler, linker and emulator for `target` are installed; Err names the missing tool.
pub fn check_tools(target: Toolchain) -> Result<(), String> {
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
