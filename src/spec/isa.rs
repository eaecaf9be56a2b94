//! The instruction sets a spec family belongs to, `(isa x86)`: one word each in the spec files,
//! the database and on the command line.

use crate::words::text_enum;

text_enum! {
    /// An instruction set.
    pub enum Isa("ISA") {
        /// x86-64: SSE through AVX-512 and AVX-VNNI.
        X86 = "x86",
        /// AArch64 Advanced SIMD.
        Neon = "neon",
        /// Hexagon HVX, 128-byte vectors.
        Hvx = "hvx",
        /// The float DSP dialect of Diospyros and Isaria.
        Dsp = "dsp",
    }
}

impl Isa {
    /// Whether the ISA hands bool lanes over as the bits of an integer (x86: `movemask`'s
    /// general register, AVX-512's mask registers), bit i for lane i, rather than as a vector
    /// of whole-lane masks or a predicate register.
    pub fn bool_lanes_as_bits(self) -> bool {
        self == Isa::X86
    }

    /// The C type of a vector of one lane of `ty` in a vector register (`(vector-registers
    /// ...)`): NEON's 64-bit D-register types (`int64x1_t`, `uint64x1_t`).
    pub fn one_lane_vector_c_type(self, ty: crate::ir::VecType) -> Option<String> {
        use crate::ir::Elem;
        let base = match (self, ty.lanes, ty.elem) {
            (Isa::Neon, 1, Elem::I64) => "int",
            (Isa::Neon, 1, Elem::U64) => "uint",
            _ => return None,
        };
        Some(format!("{base}64x1_t"))
    }

    /// The CPU features an instruction of this ISA may name in `(feature ...)`.
    pub fn features(self) -> &'static [&'static str] {
        match self {
            Isa::X86 => &[
                "mmx",
                "sse",
                "sse2",
                "sse3",
                "ssse3",
                "sse4.1",
                "sse4.2",
                "avx",
                "avx2",
                "fma",
                "f16c",
                "aes",
                "pclmul",
                "vpclmulqdq",
                "gfni",
                "vaes",
                "avx512f",
                "avx512bw",
                "avx512vl",
                "avx512dq",
                "avx512cd",
                "avx512vnni",
                "avx512vbmi",
                "avx512vbmi2",
                "avx512bitalg",
                "avx512ifma",
                "avx512vpopcntdq",
                "avx512bf16",
                "avx512fp16",
                "avxvnni",
                "avxifma",
                "avxvnniint8",
            ],
            Isa::Neon => &[
                "neon", "dotprod", "i8mm", "rdm", "fp16", "fhm", "bf16", "aes", "sha2", "sha3",
                "sm4", "crc",
            ],
            Isa::Hvx => &[
                "hvxv60", "hvxv62", "hvxv65", "hvxv66", "hvxv67", "hvxv68", "hvxv69", "hvxv71",
                "hvxv73", "hvxv75", "hvxv79",
            ],
            Isa::Dsp => &["dsp"],
        }
    }
}
