//! The targets `isadb compile` selects instructions for: an ISA, the features it may use and the
//! width of one register.

use super::isa::Isa;
use crate::error::{Error, Result};

/// A compilation target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The name users type (`x86-avx2`).
    pub name: &'static str,
    /// The instruction set.
    pub isa: Isa,
    /// Features whose instructions may be selected.
    pub features: &'static [&'static str],
    /// The width of one vector register.
    pub register_bits: u32,
    /// Values narrower than this are not worth splitting a wider computation into.
    pub min_split_bits: u32,
    /// Widening instructions deal their pairs and narrowing ones interleave, and a value of
    /// half a register is stored from a whole one: selection reasons about lane layout.
    pub lane_layout: bool,
    /// A predicate register holds a flag per byte, and a compare of wider lanes sets the flags
    /// of all of a lane's bytes (HVX's Q): a select of wider lanes is a select of bytes.
    pub byte_predicates: bool,
}

/// Every target.
pub const TARGETS: [Target; 4] = [
    Target {
        name: "x86-avx2",
        isa: Isa::X86,
        features: &[
            "sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2",
        ],
        register_bits: 256,
        min_split_bits: 128,
        lane_layout: false,
        byte_predicates: false,
    },
    Target {
        name: "x86-avx512",
        isa: Isa::X86,
        features: &[
            "sse",
            "sse2",
            "sse3",
            "ssse3",
            "sse4.1",
            "sse4.2",
            "avx",
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512dq",
            "avx512cd",
            "avx512vnni",
            "avx512vbmi",
        ],
        register_bits: 512,
        min_split_bits: 128,
        lane_layout: false,
        byte_predicates: false,
    },
    Target {
        name: "neon",
        isa: Isa::Neon,
        features: &["neon", "rdm", "dotprod", "i8mm"],
        register_bits: 128,
        min_split_bits: 64,
        lane_layout: false,
        byte_predicates: false,
    },
    Target {
        name: "hvx",
        isa: Isa::Hvx,
        features: &["hvxv60", "hvxv62", "hvxv65", "hvxv66"],
        register_bits: 1024,
        min_split_bits: 1024,
        lane_layout: true,
        byte_predicates: true,
    },
];

impl Target {
    /// The target named `name`; an unknown name is a usage error with a suggestion.
    pub fn parse(name: &str) -> Result<Target> {
        TARGETS
            .iter()
            .find(|t| t.name == name)
            .copied()
            .ok_or_else(|| {
                let known: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
                Error::Usage(format!(
                    "unknown target '{name}'{}; targets: {}",
                    crate::words::did_you_mean(name, &known),
                    known.join(", ")
                ))
            })
    }
}
