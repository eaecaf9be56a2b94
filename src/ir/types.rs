//! Element and vector types of the IR: integers of 8..128 bits, booleans (masks) and f32.

use super::limits::MAX_LANES;
use std::fmt;

/// The type of one lane: a signed (`I8`..`I128`) or unsigned (`U8`..`U128`) integer, a bool
/// (a mask lane) or an f32.
#[allow(missing_docs)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Elem {
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    Bool,
    F32,
}

use Elem::*;

const INTS: [(Elem, &str, u32, bool); 10] = [
    (I8, "i8", 8, true),
    (I16, "i16", 16, true),
    (I32, "i32", 32, true),
    (I64, "i64", 64, true),
    (I128, "i128", 128, true),
    (U8, "u8", 8, false),
    (U16, "u16", 16, false),
    (U32, "u32", 32, false),
    (U64, "u64", 64, false),
    (U128, "u128", 128, false),
];

impl Elem {
    /// Every element type, for parsers and "did you mean" hints.
    pub const ALL: [Elem; 12] = [I8, I16, I32, I64, I128, U8, U16, U32, U64, U128, Bool, F32];

    /// The integer type of this width and signedness.
    pub fn int(bits: u32, signed: bool) -> Option<Elem> {
        INTS.iter()
            .find(|e| e.2 == bits && e.3 == signed)
            .map(|e| e.0)
    }

    /// Its name: `i8`, `u16`, `bool`, `f32`.
    pub fn name(self) -> &'static str {
        match self {
            Bool => "bool",
            F32 => "f32",
            _ => INTS.iter().find(|e| e.0 == self).unwrap().1,
        }
    }

    /// The type of this name.
    pub fn parse(s: &str) -> Option<Elem> {
        Elem::ALL.into_iter().find(|e| e.name() == s)
    }

    /// The element type a variable's name gives it: its suffix (`acc_u32`), or its prefix
    /// before a number, as Halide's `simd_op_check` names its inputs (`i8_1`, `u16_2`).
    pub fn of_variable(name: &str) -> Option<Elem> {
        let (stem, last) = name.rsplit_once('_')?;
        let numbered = !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit());
        Elem::parse(last).or_else(|| numbered.then(|| Elem::parse(stem)).flatten())
    }

    /// Width in bits; a bool lane is one bit.
    pub fn bits(self) -> u32 {
        match self {
            Bool => 1,
            F32 => 32,
            _ => INTS.iter().find(|e| e.0 == self).unwrap().2,
        }
    }

    /// Integers (not bool or f32).
    pub fn is_int(self) -> bool {
        !matches!(self, Bool | F32)
    }

    /// Signed integers and f32.
    pub fn is_signed(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64 | I128 | F32)
    }

    /// The integer of the same signedness at another width.
    pub fn with_bits(self, bits: u32) -> Option<Elem> {
        self.is_int()
            .then(|| Elem::int(bits, self.is_signed()))
            .flatten()
    }

    /// Twice as wide, same signedness (i8 -> i16).
    pub fn wide(self) -> Option<Elem> {
        self.with_bits(self.bits() * 2)
    }

    /// Half as wide, same signedness (i16 -> i8).
    pub fn narrow(self) -> Option<Elem> {
        self.with_bits(self.bits() / 2)
    }

    /// The signed integer of the same width.
    pub fn signed(self) -> Option<Elem> {
        self.is_int()
            .then(|| Elem::int(self.bits(), true))
            .flatten()
    }

    /// The unsigned integer of the same width.
    pub fn unsigned(self) -> Option<Elem> {
        self.is_int()
            .then(|| Elem::int(self.bits(), false))
            .flatten()
    }

    /// The integer of the same width at the other signedness.
    pub fn other_signedness(self) -> Option<Elem> {
        if self.is_signed() {
            self.unsigned()
        } else {
            self.signed()
        }
    }

    /// Bit mask of the lane width.
    pub fn mask(self) -> u128 {
        if self.bits() >= 128 {
            u128::MAX
        } else {
            (1u128 << self.bits()) - 1
        }
    }

    /// Smallest value as a signed 128-bit integer (integers only).
    pub fn min_value(self) -> i128 {
        match (self.is_signed(), self.bits()) {
            (false, _) => 0,
            (true, 128) => i128::MIN,
            (true, b) => -(1i128 << (b - 1)),
        }
    }

    /// Largest value; u128's maximum does not fit i128 and is clipped to i128::MAX.
    pub fn max_value(self) -> i128 {
        match (self.is_signed(), self.bits()) {
            (true, 128) | (false, 128) => i128::MAX,
            (true, b) => (1i128 << (b - 1)) - 1,
            (false, b) => (1i128 << b) - 1,
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `<lanes x elem>`; one lane is a scalar and prints as its element type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VecType {
    /// The number of lanes.
    pub lanes: u32,
    /// The type of each lane.
    pub elem: Elem,
}

impl VecType {
    /// `<lanes x elem>`.
    pub fn new(lanes: u32, elem: Elem) -> VecType {
        VecType { lanes, elem }
    }

    /// The width of the whole vector.
    pub fn bits(self) -> u32 {
        self.lanes * self.elem.bits()
    }

    /// The same lanes of another element type.
    pub fn with_elem(self, elem: Elem) -> VecType {
        VecType { elem, ..self }
    }

    /// The same element type at another lane count.
    pub fn with_lanes(self, lanes: u32) -> VecType {
        VecType { lanes, ..self }
    }

    /// Parses `<16 x u8>` or a bare element type; `None` also for lanes outside
    /// 1..=[`MAX_LANES`] (see [`VecType::lanes_of_text`] to name that).
    pub fn parse(s: &str) -> Option<VecType> {
        if let Some(inner) = s.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
            let mut parts = inner.split_whitespace();
            let lanes = parts
                .next()?
                .parse()
                .ok()
                .filter(|n: &u32| (1..=MAX_LANES).contains(n))?;
            (parts.next()? == "x").then_some(())?;
            let elem = Elem::parse(parts.next()?)?;
            parts.next().is_none().then_some(VecType::new(lanes, elem))
        } else {
            Elem::parse(s).map(|e| VecType::new(1, e))
        }
    }
}

impl VecType {
    /// The lane count written in a type atom `<N x T>`, whether or not it is within limits.
    pub fn lanes_of_text(s: &str) -> Option<u128> {
        s.strip_prefix('<')?.split_whitespace().next()?.parse().ok()
    }
}

impl fmt::Display for VecType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lanes == 1 {
            write!(f, "{}", self.elem)
        } else {
            write!(f, "<{} x {}>", self.lanes, self.elem)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_print_round_trip() {
        for s in ["<16 x u8>", "i32", "<64 x bool>", "<4 x f32>"] {
            assert_eq!(VecType::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(VecType::parse("<1 x i8>").unwrap().to_string(), "i8");
        assert!(VecType::parse("<0 x i8>").is_none());
        assert!(VecType::parse("<4096 x i8>").is_some());
        assert!(VecType::parse("<4097 x i8>").is_none());
        assert!(VecType::parse("<4 x i7>").is_none());
    }

    #[test]
    fn widening_and_ranges() {
        assert_eq!(U8.wide(), Some(U16));
        assert_eq!(I16.narrow(), Some(I8));
        assert_eq!(I128.wide(), None);
        assert_eq!(I8.min_value(), -128);
        assert_eq!(U16.max_value(), 65535);
        assert_eq!(U8.signed(), Some(I8));
    }
}
