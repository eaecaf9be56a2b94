//! How an operand or result travels between Rust and a C harness: its C type, its bytes in the
//! input/output stream, and how those bytes map to the IR value's lanes.
//!
//! Defaults per ISA (an operand's `(c "...")` overrides the C type):
//! - x86: 128/256/512-bit vectors are `__m128i`/`__m256i`/`__m512i` (`__m128` etc. for f32 lanes),
//!   64-bit integer vectors the MMX `__m64`;
//!   `<N x bool>` is `__mmaskM` with M = N rounded up to 8/16/32/64 (bit i = lane i); scalars are
//!   `char`/`short`/`int`/`long long` (unsigned variants for unsigned types), `float`.
//! - NEON: 64/128-bit vectors are `int16x8_t`, `uint8x8_t`, `float32x4_t`, ...; scalars `int16_t` etc.;
//!   bool vectors need an explicit C type (`uint16x8_t`: each lane all ones or zeros).
//! - HVX: 1024 bits is `HVX_Vector`, 2048 bits `HVX_VectorPair`, `<N x bool>` an `HVX_VectorPred`
//!   (one bit per byte; a lane covers 128/N bytes, passed through `Q6_Q_vand_VR`/`Q6_V_vand_QR`);
//!   scalars `int` (or `long long` for 64 bits).

use super::Toolchain;
use crate::ir::{Elem, VecType};
use crate::spec::Isa;

/// How the IR value's lanes become the C object's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// The lanes' little-endian bytes are the object's bytes (vectors, pairs, structs of vectors, same-size scalars).
    Bytes,
    /// A one-lane integer in a wider C integer, extended by the IR type's signedness.
    Widened,
    /// One bit per bool lane, lane i at bit i (x86 `__mmaskN`, or a mask in a plain integer).
    Bits,
    /// Each bool lane fills `lane_bytes` bytes with all ones (true) or zeros (false).
    Expanded { lane_bytes: usize },
}

/// The C side of one operand or result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CType {
    /// The C type name as written in the harness.
    pub name: String,
    /// Bytes the value occupies in the stream (and `sizeof` of the C object, except for HVX predicates,
    /// which travel as an `HVX_Vector`).
    pub size: usize,
    /// Alignment of the value's slot in a stream record (HVX loads vectors straight from the buffer).
    pub align: usize,
    pub repr: Repr,
    /// An `HVX_VectorPred`, converted from/to an `HVX_Vector` carrier.
    pub hvx_pred: bool,
    /// The size was not known from the type name: the harness asserts `sizeof(name) == size` at compile time.
    pub check_size: bool,
    /// Another C type with the same bytes to try when the instruction does not compile with this
    /// default (a NEON 64-bit scalar may be `int64_t` or the one-lane vector `int64x1_t`).
    pub alternative: Option<String>,
}

impl CType {
    fn new(name: &str, size: usize, repr: Repr) -> CType {
        CType {
            name: name.to_string(),
            size,
            align: natural_align(size),
            repr,
            hvx_pred: false,
            check_size: false,
            alternative: None,
        }
    }

    /// A result whose C type the harness takes from the intrinsic (`__typeof__`): just its bytes.
    pub fn auto(size: usize) -> CType {
        CType::new("__typeof__", size, Repr::Bytes)
    }

    /// The stream bytes of `lanes` (raw lane bits of `ty`).
    pub fn encode(&self, ty: VecType, lanes: &[u128]) -> Vec<u8> {
        let mut out = vec![0u8; self.size];
        match self.repr {
            Repr::Bytes => {
                let lane_bytes = (ty.elem.bits() / 8) as usize;
                for (i, l) in lanes.iter().enumerate() {
                    out[i * lane_bytes..(i + 1) * lane_bytes]
                        .copy_from_slice(&l.to_le_bytes()[..lane_bytes]);
                }
            }
            Repr::Widened => {
                let bits = ty.elem.bits();
                let v = lanes[0] & ty.elem.mask();
                let negative = ty.elem.is_signed() && bits < 128 && (v >> (bits - 1)) & 1 == 1;
                let ext = if negative { v | !ty.elem.mask() } else { v };
                out.copy_from_slice(&ext.to_le_bytes()[..self.size]);
            }
            Repr::Bits => {
                for (i, &l) in lanes.iter().enumerate() {
                    if l & 1 == 1 {
                        out[i / 8] |= 1 << (i % 8);
                    }
                }
            }
            Repr::Expanded { lane_bytes } => {
                for (i, &l) in lanes.iter().enumerate() {
                    if l & 1 == 1 {
                        out[i * lane_bytes..(i + 1) * lane_bytes].fill(0xff);
                    }
                }
            }
        }
        out
    }

    /// The lanes of `ty` read back from stream bytes. A bool lane whose bytes are neither all ones nor
    /// all zeros decodes to [`INCONSISTENT`], which never equals a real lane.
    pub fn decode(&self, ty: VecType, bytes: &[u8]) -> Vec<u128> {
        let n = ty.lanes as usize;
        match self.repr {
            Repr::Bytes => {
                let lane_bytes = (ty.elem.bits() / 8) as usize;
                (0..n)
                    .map(|i| {
                        let mut buf = [0u8; 16];
                        buf[..lane_bytes]
                            .copy_from_slice(&bytes[i * lane_bytes..(i + 1) * lane_bytes]);
                        u128::from_le_bytes(buf)
                    })
                    .collect()
            }
            Repr::Widened => {
                let mut buf = [0u8; 16];
                buf[..self.size].copy_from_slice(&bytes[..self.size]);
                vec![u128::from_le_bytes(buf) & ty.elem.mask()]
            }
            Repr::Bits => (0..n)
                .map(|i| ((bytes[i / 8] >> (i % 8)) & 1) as u128)
                .collect(),
            Repr::Expanded { lane_bytes } => (0..n)
                .map(|i| {
                    let lane = &bytes[i * lane_bytes..(i + 1) * lane_bytes];
                    if lane.iter().all(|&b| b == 0xff) {
                        1
                    } else if lane.iter().all(|&b| b == 0) {
                        0
                    } else {
                        INCONSISTENT
                    }
                })
                .collect(),
        }
    }
}

/// A decoded bool lane whose bytes were mixed (neither all ones nor all zeros).
pub const INCONSISTENT: u128 = u128::MAX;

/// The largest power of two dividing `size`, capped at 256 (a vector pair).
fn natural_align(size: usize) -> usize {
    if size == 0 {
        1
    } else {
        (1usize << size.trailing_zeros()).min(256)
    }
}

/// The C type for a value of IR type `ty` on `target`: the default, or `c_override` (an operand's `(c ...)`).
/// Err explains why no C type fits.
pub fn c_type(target: Toolchain, ty: VecType, c_override: Option<&str>) -> Result<CType, String> {
    let name = match c_override {
        Some(c) => return from_name(target, ty, c.trim()),
        None => default_name(target, ty)?,
    };
    let mut c = from_name(target, ty, &name)?;
    if target == Toolchain::Neon {
        c.alternative = Isa::Neon.one_lane_vector_c_type(ty);
    }
    Ok(c)
}

/// The default C type name for `ty` on `target`.
fn default_name(target: Toolchain, ty: VecType) -> Result<String, String> {
    let bits = ty.bits();
    let no_default =
        || format!("no default C type for {ty} on {target}; give the operand a (c \"...\") type");
    if ty.elem == Elem::Bool {
        return match target {
            Toolchain::X86 if ty.lanes <= 64 => {
                Ok(format!("__mmask{}", ty.lanes.next_power_of_two().max(8)))
            }
            Toolchain::Hvx if 128 % ty.lanes == 0 => Ok("HVX_VectorPred".into()),
            _ => Err(no_default()),
        };
    }
    if ty.lanes == 1 {
        return scalar_name(target, ty.elem)
            .map(str::to_string)
            .ok_or_else(no_default);
    }
    match target {
        Toolchain::X86 => {
            let suffix = if ty.elem == Elem::F32 { "" } else { "i" };
            match bits {
                64 if ty.elem.is_int() => Ok("__m64".into()),
                128 | 256 | 512 => Ok(format!("__m{bits}{suffix}")),
                _ => Err(no_default()),
            }
        }
        Toolchain::Neon => {
            if bits != 64 && bits != 128 {
                return Err(no_default());
            }
            let base = match ty.elem {
                Elem::F32 => "float",
                e if e.is_signed() => "int",
                _ => "uint",
            };
            Ok(format!("{base}{}x{}_t", ty.elem.bits(), ty.lanes))
        }
        Toolchain::Hvx => match bits {
            // Lanes packed in a scalar register (Rt) or pair (Rtt).
            32 => Ok("int".into()),
            64 => Ok("long long".into()),
            1024 => Ok("HVX_Vector".into()),
            2048 => Ok("HVX_VectorPair".into()),
            _ => Err(no_default()),
        },
    }
}

/// The default scalar C type of an element type.
fn scalar_name(target: Toolchain, elem: Elem) -> Option<&'static str> {
    use Elem::*;
    Some(match (target, elem) {
        (_, F32) => "float",
        (Toolchain::Hvx, I64) => "long long",
        (Toolchain::Hvx, U64) => "unsigned long long",
        (Toolchain::Hvx, I8 | I16 | I32 | U8 | U16 | U32) => "int",
        (Toolchain::X86, I8) => "char",
        (Toolchain::X86, U8) => "unsigned char",
        (Toolchain::X86, I16) => "short",
        (Toolchain::X86, U16) => "unsigned short",
        (Toolchain::X86, I32) => "int",
        (Toolchain::X86, U32) => "unsigned int",
        (Toolchain::X86, I64) => "long long",
        (Toolchain::X86, U64) => "unsigned long long",
        (Toolchain::Neon, I8) => "int8_t",
        (Toolchain::Neon, U8) => "uint8_t",
        (Toolchain::Neon, I16) => "int16_t",
        (Toolchain::Neon, U16) => "uint16_t",
        (Toolchain::Neon, I32) => "int32_t",
        (Toolchain::Neon, U32) => "uint32_t",
        (Toolchain::Neon, I64) => "int64_t",
        (Toolchain::Neon, U64) => "uint64_t",
        _ => return None,
    })
}

/// Size in bytes of a C scalar type name, if it is one we know.
fn scalar_size(target: Toolchain, name: &str) -> Option<usize> {
    let words: Vec<&str> = name
        .split_whitespace()
        .filter(|w| *w != "signed" && *w != "unsigned" && *w != "const")
        .collect();
    let long = if target == Toolchain::Hvx { 4 } else { 8 };
    Some(match words.join(" ").as_str() {
        "" | "int" => 4, // "" is a bare `unsigned`
        "char" => 1,
        "short" | "short int" => 2,
        "long" | "long int" => long,
        "long long" | "long long int" => 8,
        "float" | "float32_t" => 4,
        "double" | "float64_t" => 8,
        "int8_t" | "uint8_t" => 1,
        "int16_t" | "uint16_t" => 2,
        "int32_t" | "uint32_t" => 4,
        "int64_t" | "uint64_t" => 8,
        _ => return None,
    })
}

/// Size in bytes of a vector (or vector-struct) C type name we know, for the target.
fn vector_size(target: Toolchain, name: &str) -> Option<usize> {
    match target {
        Toolchain::X86 => {
            if let Some(m) = name.strip_prefix("__mmask") {
                return m
                    .parse::<usize>()
                    .ok()
                    .filter(|b| [8, 16, 32, 64].contains(b))
                    .map(|b| b / 8);
            }
            let rest = name.strip_prefix("__m")?;
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let tail = &rest[digits.len()..];
            let bits: usize = digits.parse().ok()?;
            let known = match bits {
                64 => tail.is_empty(),
                128 | 256 | 512 => ["", "i", "d", "h", "bh"].contains(&tail),
                _ => false,
            };
            known.then_some(bits / 8)
        }
        Toolchain::Hvx => match name {
            "HVX_Vector" => Some(128),
            "HVX_VectorPair" => Some(256),
            _ => None,
        },
        Toolchain::Neon => {
            // (u)int8x16_t, float32x4_t, poly8x8_t, int8x16x2_t, bfloat16x8_t, float16x4_t.
            let body = name.strip_suffix("_t")?;
            let base = ["uint", "int", "float", "poly", "bfloat", "mfloat"]
                .iter()
                .find(|b| body.starts_with(*b))?;
            let dims: Vec<usize> = body[base.len()..]
                .split('x')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            match dims.as_slice() {
                [bits, lanes] => Some(bits * lanes / 8),
                [bits, lanes, count] => Some(bits * lanes * count / 8),
                _ => None,
            }
        }
    }
}

/// Builds the C type `name` for IR type `ty`, checking that they fit together.
fn from_name(target: Toolchain, ty: VecType, name: &str) -> Result<CType, String> {
    let bits = ty.bits() as usize;
    let misfit = |what: &str| format!("C type {name} cannot carry {ty}: {what}");
    if name == "HVX_VectorPred" {
        if target != Toolchain::Hvx || ty.elem != Elem::Bool || 128 % ty.lanes != 0 {
            return Err(misfit("an HVX predicate holds <32|64|128 x bool>"));
        }
        let mut c = CType::new(
            name,
            128,
            Repr::Expanded {
                lane_bytes: (128 / ty.lanes) as usize,
            },
        );
        c.hvx_pred = true;
        return Ok(c);
    }
    let scalar = scalar_size(target, name);
    let known = scalar.or_else(|| vector_size(target, name));
    if ty.elem == Elem::Bool {
        let Some(size) = known else {
            return Err(misfit("unknown C type for a mask"));
        };
        let is_mask_int = scalar.is_some() || name.starts_with("__mmask");
        if is_mask_int {
            if ty.lanes as usize > size * 8 {
                return Err(misfit(&format!(
                    "{} lanes do not fit in {} bits",
                    ty.lanes,
                    size * 8
                )));
            }
            return Ok(CType::new(name, size, Repr::Bits));
        }
        if size % ty.lanes as usize != 0 {
            return Err(misfit(&format!(
                "{size} bytes do not split into {} lanes",
                ty.lanes
            )));
        }
        return Ok(CType::new(
            name,
            size,
            Repr::Expanded {
                lane_bytes: size / ty.lanes as usize,
            },
        ));
    }
    if !ty.elem.bits().is_multiple_of(8) {
        return Err(misfit("lanes are not whole bytes"));
    }
    match known {
        Some(size) if size * 8 == bits => Ok(CType::new(name, size, Repr::Bytes)),
        Some(size) if scalar.is_some() && ty.lanes == 1 && bits < size * 8 && ty.elem.is_int() => {
            Ok(CType::new(name, size, Repr::Widened))
        }
        Some(size) => Err(misfit(&format!(
            "it has {} bits, the IR type {bits}",
            size * 8
        ))),
        None => {
            let mut c = CType::new(name, bits / 8, Repr::Bytes);
            c.check_size = true;
            Ok(c)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> VecType {
        VecType::parse(s).unwrap()
    }

    #[test]
    fn defaults_per_isa() {
        let name = |t, s: &str| c_type(t, ty(s), None).map(|c| c.name);
        assert_eq!(name(Toolchain::X86, "<8 x i16>").unwrap(), "__m128i");
        assert_eq!(name(Toolchain::X86, "<16 x f32>").unwrap(), "__m512");
        assert_eq!(name(Toolchain::X86, "<4 x bool>").unwrap(), "__mmask8");
        assert_eq!(name(Toolchain::X86, "<32 x bool>").unwrap(), "__mmask32");
        assert_eq!(name(Toolchain::X86, "i64").unwrap(), "long long");
        assert_eq!(name(Toolchain::X86, "<4 x i16>").unwrap(), "__m64");
        assert!(name(Toolchain::X86, "<2 x f32>").is_err());
        assert_eq!(name(Toolchain::Neon, "<8 x u8>").unwrap(), "uint8x8_t");
        assert_eq!(name(Toolchain::Neon, "<4 x f32>").unwrap(), "float32x4_t");
        assert_eq!(name(Toolchain::Neon, "i16").unwrap(), "int16_t");
        assert!(name(Toolchain::Neon, "<8 x bool>").is_err());
        assert_eq!(
            c_type(Toolchain::Neon, ty("u64"), None)
                .unwrap()
                .alternative
                .as_deref(),
            Some("uint64x1_t")
        );
        assert_eq!(
            c_type(Toolchain::Neon, ty("i64"), Some("int64_t"))
                .unwrap()
                .alternative,
            None
        );
        assert_eq!(name(Toolchain::Hvx, "<64 x i16>").unwrap(), "HVX_Vector");
        assert_eq!(
            name(Toolchain::Hvx, "<128 x u16>").unwrap(),
            "HVX_VectorPair"
        );
        assert_eq!(
            name(Toolchain::Hvx, "<32 x bool>").unwrap(),
            "HVX_VectorPred"
        );
        assert!(name(Toolchain::X86, "<4 x i8>").is_err());
    }

    #[test]
    fn overrides_and_encodings() {
        let packed = c_type(Toolchain::Hvx, ty("<4 x i8>"), Some("int")).unwrap();
        assert_eq!((packed.size, packed.repr), (4, Repr::Bytes));
        let narrow = c_type(Toolchain::Hvx, ty("i8"), None).unwrap();
        assert_eq!(narrow.repr, Repr::Widened);
        assert_eq!(
            narrow.encode(ty("i8"), &[0x80]),
            vec![0x80, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            narrow.decode(ty("i8"), &[0x80, 0xff, 0xff, 0xff]),
            vec![0x80]
        );
        let table = c_type(Toolchain::Neon, ty("<32 x u8>"), Some("uint8x16x2_t")).unwrap();
        assert_eq!(
            (table.size, table.repr, table.check_size),
            (32, Repr::Bytes, false)
        );
        let mask = c_type(Toolchain::X86, ty("<4 x bool>"), None).unwrap();
        assert_eq!(mask.encode(ty("<4 x bool>"), &[1, 0, 1, 1]), vec![0b1101]);
        assert_eq!(mask.decode(ty("<4 x bool>"), &[0xfd]), vec![1, 0, 1, 1]);
        let pred = c_type(Toolchain::Hvx, ty("<32 x bool>"), None).unwrap();
        assert!(pred.hvx_pred);
        let mut bytes = pred.encode(ty("<32 x bool>"), &[1; 32]);
        assert!(bytes.iter().all(|&b| b == 0xff));
        bytes[5] = 0;
        assert_eq!(pred.decode(ty("<32 x bool>"), &bytes)[1], INCONSISTENT);
        let neon_mask = c_type(Toolchain::Neon, ty("<8 x bool>"), Some("uint16x8_t")).unwrap();
        assert_eq!(neon_mask.repr, Repr::Expanded { lane_bytes: 2 });
        let odd = c_type(Toolchain::Neon, ty("<8 x i16>"), Some("my_struct_t")).unwrap();
        assert!(odd.check_size && odd.size == 16);
        assert!(c_type(Toolchain::X86, ty("<8 x i16>"), Some("__m256i")).is_err());
        let mmx = c_type(Toolchain::X86, ty("i64"), Some("__m64")).unwrap();
        assert_eq!(
            (mmx.size, mmx.repr, mmx.check_size),
            (8, Repr::Bytes, false)
        );
        assert!(
            c_type(Toolchain::Hvx, ty("<32 x i32>"), Some("HVX_VectorPair"))
                .unwrap_err()
                .contains("2048 bits")
        );
    }
}
