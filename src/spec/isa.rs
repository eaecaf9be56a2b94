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
