//! Scalar C for a scalarized operator: the operands' lanes in arrays (`T a[N]`, bool lanes as
//! `uint8_t` 0/1), a loop over the result's lanes, one C expression per IR operator kind with
//! the interpreter's exact semantics (wrap-around integer arithmetic computed in unsigned
//! types, shifts by the lane width or more, Halide's cast and saturating cast, comparisons into
//! 0/1, IEEE f32 without libm), and the result in an array of its own.

use crate::error::{Error, Result};
use crate::ir::{Elem, Op, VecType};

/// The 128-bit lane types, emitted before every function (guarded): gcc's `__int128`, or on
/// Hexagon, where clang has no `__int128`, its `_BitInt(128)`.
pub const TYPES: &str = "\
#ifndef ISADB_TYPES
#define ISADB_TYPES
#if defined(__hexagon__)
typedef unsigned _BitInt(128) isadb_u128;
typedef signed _BitInt(128) isadb_i128;
#else
typedef unsigned __int128 isadb_u128;
typedef __int128 isadb_i128;
#endif
#endif
";

/// Helpers the lane expressions call, emitted before a function that scalarizes (guarded, so
/// functions pasted into one header define them once).
pub const HELPERS: &str = "\
#ifndef ISADB_HELPERS
#define ISADB_HELPERS
static inline float isadb_f32(uint32_t bits) { float f; memcpy(&f, &bits, sizeof f); return f; }
static inline float isadb_fabs(float x) { uint32_t b; memcpy(&b, &x, sizeof b); return isadb_f32(b & 0x7fffffffu); }
static inline uint32_t isadb_f32_bits(float x) { uint32_t b; memcpy(&b, &x, sizeof b); return b; }
static inline int isadb_snan(float x) { uint32_t b = isadb_f32_bits(x); return (b & 0x7fc00000u) == 0x7f800000u && (b & 0x003fffffu) != 0; }
/* IEEE minNum / maxNum: a signalling NaN gives NaN, a quiet one the other operand, -0 < +0. */
static inline float isadb_fmin(float a, float b) {
  if (isadb_snan(a) || isadb_snan(b)) return isadb_f32(0x7fc00000u);
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return isadb_f32_bits(a) >> 31 ? a : b;
  return a < b ? a : b;
}
static inline float isadb_fmax(float a, float b) {
  if (isadb_snan(a) || isadb_snan(b)) return isadb_f32(0x7fc00000u);
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return isadb_f32_bits(a) >> 31 ? b : a;
  return a > b ? a : b;
}
static inline uint64_t isadb_clmul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  for (int i = 0; i < 64; i++) if ((b >> i) & 1) r ^= a << i;
  return r;
}
static inline uint64_t isadb_clmod(uint64_t a, uint64_t m) {
  if (m == 0) return a;
  int degree = 63 - __builtin_clzll(m);
  for (int i = 63; i >= degree; i--) if ((a >> i) & 1) a ^= m << (i - degree);
  return a;
}
/* Halide's integer division and remainder: Euclidean, zero by zero, MIN / -1 wrapping. */
static inline int64_t isadb_div_s(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  return r < 0 ? (b > 0 ? q - 1 : q + 1) : q;
}
static inline int64_t isadb_mod_s(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return r < 0 ? (b > 0 ? r + b : r - b) : r;
}
static inline uint64_t isadb_div_u(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
static inline uint64_t isadb_mod_u(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }
/* M * 2^E (plus a nonzero remainder below it when sticky) rounded to the nearest f32, ties to
   even, with subnormals and overflow. */
static inline float isadb_f32_round(uint32_t sign, uint64_t m, int e, int sticky) {
  if (m == 0) return isadb_f32(sign << 31);
  while (m >= (1ull << 26)) { sticky |= (int)(m & 1); m >>= 1; e++; }
  while (m < (1ull << 25)) { m <<= 1; e--; }
  int lead = e + 25, shift = 2;
  if (lead > 127) return isadb_f32((sign << 31) | 0x7f800000u);
  if (lead < -126) shift += -126 - lead;
  if (shift > 40) shift = 40;
  uint64_t keep = m >> shift, rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (sticky || (keep & 1)))) keep++;
  if (lead < -126) return isadb_f32((sign << 31) | (uint32_t)keep);
  if (keep >> 24) { keep >>= 1; lead++; }
  if (lead > 127) return isadb_f32((sign << 31) | 0x7f800000u);
  return isadb_f32((sign << 31) | ((uint32_t)(lead + 127) << 23) | ((uint32_t)keep & 0x7fffffu));
}
/* IEEE f32 division in integers (the HVX programs have no float division routine). */
static inline float isadb_fdiv(float x, float y) {
  uint32_t a, b; memcpy(&a, &x, sizeof a); memcpy(&b, &y, sizeof b);
  uint32_t sign = (a ^ b) >> 31;
  int ainf = (a << 1) == 0xff000000u, binf = (b << 1) == 0xff000000u;
  int azero = (a << 1) == 0, bzero = (b << 1) == 0;
  if (x != x || y != y || (ainf && binf) || (azero && bzero)) return isadb_f32(0x7fc00000u);
  if (ainf || bzero) return isadb_f32((sign << 31) | 0x7f800000u);
  if (azero || binf) return isadb_f32(sign << 31);
  int ea = (int)((a >> 23) & 0xff), eb = (int)((b >> 23) & 0xff);
  uint64_t ma = a & 0x7fffffu, mb = b & 0x7fffffu;
  if (ea) ma |= 0x800000u; else ea = 1;
  if (eb) mb |= 0x800000u; else eb = 1;
  while (ma < 0x800000u) { ma <<= 1; ea--; }
  while (mb < 0x800000u) { mb <<= 1; eb--; }
  uint64_t n = ma << 40;
  return isadb_f32_round(sign, n / mb, ea - eb - 40, n % mb != 0);
}
/* IEEE roundToIntegral, the sign kept: 0 floor, 1 ceil, 2 trunc, 3 nearest with ties to even,
   4 nearest with ties away from zero, in integers (no libm). At 2^23 and above every f32 is
   integral. */
static inline float isadb_fround(float x, int mode) {
  uint32_t b = isadb_f32_bits(x);
  if (((b >> 23) & 0xffu) >= 150u) return x != x ? isadb_f32(b | 0x00400000u) : x;
  int32_t t = (int32_t)x, up = x < 0.0f ? -1 : 1;
  float f = x - (float)t, a = isadb_fabs(f);
  int32_t r = t;
  switch (mode) {
  case 0: r = f < 0.0f ? t - 1 : t; break;
  case 1: r = f > 0.0f ? t + 1 : t; break;
  case 2: break;
  case 3: r = a > 0.5f || (a == 0.5f && (t & 1)) ? t + up : t; break;
  default: r = a >= 0.5f ? t + up : t; break;
  }
  return isadb_f32(isadb_f32_bits((float)r) | (b & 0x80000000u));
}
/* Correctly rounded f32 square root in integers (no libm: the HVX programs have none, and a
   square root is never halfway between two floats, so the guard bit decides the rounding). */
static inline float isadb_fsqrt(float x) {
  uint32_t b; memcpy(&b, &x, sizeof b);
  if (x != x || ((b >> 31) && (b << 1))) return isadb_f32(0x7fc00000u);
  if ((b << 1) == 0 || b == 0x7f800000u) return x;
  int e = (int)(b >> 23);
  uint64_t m = b & 0x7fffffu;
  if (e == 0) e = 1; else m |= 0x800000u;
  e -= 150;
  if (e & 1) { m <<= 1; e -= 1; }
  while (m < (1ull << 60)) { m <<= 2; e -= 2; }
  uint64_t r = 0, bit = 1ull << 62;
  while (bit > m) bit >>= 2;
  while (bit) {
    if (m >= r + bit) { m -= r + bit; r = (r >> 1) + bit; } else r >>= 1;
    bit >>= 2;
  }
  uint64_t top = r >> 6, mant = (top >> 1) + (top & 1);
  int exp = 7 + e / 2 + 150;
  if (mant >> 24) { mant >>= 1; exp += 1; }
  return isadb_f32(((uint32_t)exp << 23) | ((uint32_t)mant & 0x7fffffu));
}
#endif
";

/// The C type of one lane in a lane array.
pub fn lane_type(e: Elem) -> Result<&'static str> {
    Ok(match e {
        Elem::U8 | Elem::Bool => "uint8_t",
        Elem::I8 => "int8_t",
        Elem::U16 => "uint16_t",
        Elem::I16 => "int16_t",
        Elem::U32 => "uint32_t",
        Elem::I32 => "int32_t",
        Elem::U64 => "uint64_t",
        Elem::I64 => "int64_t",
        Elem::U128 => "isadb_u128",
        Elem::I128 => "isadb_i128",
        Elem::F32 => "float",
    })
}

fn unsupported(what: String) -> Error {
    Error::Usage(format!("scalarized C does not support {what}"))
}

/// The unsigned type of the same width (wrap-around arithmetic and shift amounts).
fn unsigned(e: Elem) -> Result<&'static str> {
    lane_type(e.unsigned().unwrap_or(Elem::U8))
}

/// The unsigned type integer arithmetic on `e` is computed in (never promoted to `int`).
fn wide(e: Elem) -> &'static str {
    match e.bits() {
        0..=32 => "uint32_t",
        33..=64 => "uint64_t",
        _ => "isadb_u128",
    }
}

/// An integer literal of type `e` with lane bits `bits` (an f32 from its bit pattern).
pub fn literal(e: Elem, bits: u128) -> Result<String> {
    Ok(match e {
        Elem::F32 => format!("isadb_f32({:#x}u)", bits as u32),
        Elem::Bool => format!("{}", bits & 1),
        _ if bits & e.mask() > u64::MAX as u128 => {
            let bits = bits & e.mask();
            format!(
                "({})(((isadb_u128){:#x}ull << 64) | {:#x}ull)",
                lane_type(e)?,
                bits >> 64,
                bits as u64
            )
        }
        _ => format!("({}){:#x}ull", lane_type(e)?, bits & e.mask()),
    })
}

/// A value of `e` written as a C literal of type `e` (`v` within its range).
fn int_literal(e: Elem, v: i128) -> Result<String> {
    if i64::try_from(v).is_err() {
        return literal(e, v as u128);
    }
    Ok(if v < 0 {
        format!("({})({v}ll)", lane_type(e)?)
    } else {
        format!("({})({v}ull)", lane_type(e)?)
    })
}

/// C statements declaring `out` (a lane array of `ty`) and computing `op` into it from the
/// lane arrays `operands` (name and type each).
pub fn lanes(op: &Op, ty: VecType, operands: &[(String, VecType)], out: &str) -> Result<String> {
    let n = ty.lanes;
    let t = lane_type(ty.elem)?;
    let a = |i: usize| operands[i].0.as_str();
    let each = |expr: String| {
        format!("    {t} {out}[{n}];\n    for (int l = 0; l < {n}; l++) {out}[l] = {expr};\n")
    };
    Ok(match op {
        // The vector's bits in order (lane by lane, low bit first), a bool lane per bit.
        Op::Bitcast(_) => match (operands[0].1.elem == Elem::Bool, ty.elem == Elem::Bool) {
            (false, false) => format!(
                "    {t} {out}[{n}];\n    memcpy({out}, {}, sizeof {out});\n",
                a(0)
            ),
            (false, true) => each(format!("(((const uint8_t *){})[l / 8] >> (l % 8)) & 1", a(0))),
            (true, false) => format!(
                "    {t} {out}[{n}];\n    memset({out}, 0, sizeof {out});\n    for (int l = 0; l < {}; l++) if ({}[l]) ((uint8_t *){out})[l / 8] |= (uint8_t)(1u << (l % 8));\n",
                operands[0].1.lanes,
                a(0)
            ),
            (true, true) => each(format!("{}[l]", a(0))),
        },
        Op::Broadcast(_) => each(format!("{}[l % {}]", a(0), operands[0].1.lanes)),
        Op::Concat => {
            let first = operands[0].1.lanes;
            each(format!("l < {first} ? {}[l] : {}[l - {first}]", a(0), a(1)))
        }
        Op::Slice { start, stride, .. } => each(format!("{}[{start} + l * {stride}]", a(0))),
        Op::Interleave => {
            let k = operands.len();
            let mut pick = format!("{}[l / {k}]", a(k - 1));
            for i in (0..k - 1).rev() {
                pick = format!("l % {k} == {i} ? {}[l / {k}] : {pick}", a(i));
            }
            each(pick)
        }
        Op::Lookup => {
            let index = unsigned(operands[1].1.elem)?;
            let table = operands[0].1.lanes;
            each(format!(
                "({index}){i}[l] < {table}u ? {}[({index}){i}[l]] : 0",
                a(0),
                i = a(1)
            ))
        }
        Op::ReduceAdd(k) => {
            let elem = operands[0].1.elem;
            let zero = literal(elem, 0)?;
            let add = lanewise(
                &Op::Add,
                elem,
                elem,
                &["acc".into(), format!("{}[l * {k} + j]", a(0))],
            )?;
            format!(
                "    {t} {out}[{n}];\n    for (int l = 0; l < {n}; l++) {{\n      {t} acc = {zero};\n      for (int j = 0; j < {k}; j++) acc = {add};\n      {out}[l] = acc;\n    }}\n"
            )
        }
        Op::Compress => format!(
            "    {t} {out}[{n}];\n    {{ int k = 0;\n      for (int l = 0; l < {n}; l++) if ({m}[l]) {out}[k++] = {x}[l];\n      for (; k < {n}; k++) {out}[k] = 0; }}\n",
            m = a(0),
            x = a(1)
        ),
        Op::Expand => format!(
            "    {t} {out}[{n}];\n    {{ int k = 0;\n      for (int l = 0; l < {n}; l++) {out}[l] = {m}[l] ? {x}[k++] : 0; }}\n",
            m = a(0),
            x = a(1)
        ),
        Op::Shuffle(_) | Op::Var(_) | Op::Const(_) => {
            return Err(unsupported(format!(
                "'{}' as a scalarized operator",
                op.name()
            )))
        }
        _ => {
            let from = operands[0].1.elem;
            let args: Vec<String> = operands.iter().map(|(v, _)| format!("{v}[l]")).collect();
            each(lanewise(op, from, ty.elem, &args)?)
        }
    })
}

/// The C expression of one lane of a lane-wise operator on operands of element type `from`
/// (for `select`, the arms' type) with result type `to`.
fn lanewise(op: &Op, from: Elem, to: Elem, args: &[String]) -> Result<String> {
    if from == Elem::F32 && !matches!(op, Op::Select | Op::Cast(_)) {
        return float(op, args);
    }
    let x = || args[0].as_str();
    let y = || args[1].as_str();
    let t = lane_type(to)?;
    let w = wide(from);
    let bits = from.bits();
    Ok(match op {
        Op::Add | Op::Sub | Op::Mul => {
            let sign = match op {
                Op::Add => "+",
                Op::Sub => "-",
                _ => "*",
            };
            format!("({t})(({w}){} {sign} ({w}){})", x(), y())
        }
        Op::Neg => format!("({t})(({w})0 - ({w}){})", x()),
        Op::And => format!("({t})({} & {})", x(), y()),
        Op::Or => format!("({t})({} | {})", x(), y()),
        Op::Xor => format!("({t})({} ^ {})", x(), y()),
        Op::Not if from == Elem::Bool => format!("({t})({} ^ 1)", x()),
        Op::Not => format!("({t})~({w}){}", x()),
        Op::Shl => format!(
            "({u}){s} >= {bits}u ? ({t})0 : ({t})(({w}){v} << ({u}){s})",
            u = unsigned(from)?,
            v = x(),
            s = y()
        ),
        Op::Shr if from.is_signed() => format!(
            "({t})({v} >> (({u}){s} >= {top}u ? {top}u : ({u}){s}))",
            u = unsigned(from)?,
            top = bits - 1,
            v = x(),
            s = y()
        ),
        Op::Shr => format!(
            "({u}){s} >= {bits}u ? ({t})0 : ({t})({v} >> ({u}){s})",
            u = unsigned(from)?,
            v = x(),
            s = y()
        ),
        Op::Min => format!("{a} <= {b} ? {a} : {b}", a = x(), b = y()),
        Op::Max => format!("{a} >= {b} ? {a} : {b}", a = x(), b = y()),
        Op::Abs if from.is_signed() => {
            format!("({t})({v} < 0 ? ({w})0 - ({w}){v} : ({w}){v})", v = x())
        }
        Op::Abs => x().to_string(),
        Op::Clmul | Op::Clmod => format!(
            "({t})isadb_{}((uint64_t)({u}){}, (uint64_t)({u}){})",
            op.name(),
            x(),
            y(),
            u = unsigned(from)?
        ),
        Op::Div | Op::Mod => {
            let (sign, wide) = if from.is_signed() {
                ("s", "int64_t")
            } else {
                ("u", "uint64_t")
            };
            format!(
                "({t})isadb_{}_{sign}(({wide}){}, ({wide}){})",
                op.name(),
                x(),
                y()
            )
        }
        Op::Popcount => format!(
            "({t})__builtin_popcountll((uint64_t)({}){})",
            unsigned(from)?,
            x()
        ),
        Op::Clz => format!(
            "({u}){v} == 0 ? ({t}){bits} : ({t})(__builtin_clzll((uint64_t)({u}){v}) - {})",
            64 - bits,
            u = unsigned(from)?,
            v = x()
        ),
        _ if op.is_comparison() => comparison(op, x(), y()),
        Op::Select => format!("{} ? {} : {}", args[0], args[1], args[2]),
        Op::Cast(Elem::Bool) => format!("{} != 0", x()),
        // Toward zero, saturating at the type's bounds, NaN to 0 (the IR's conversion).
        Op::Cast(_) if from == Elem::F32 => format!(
            "{v} != {v} ? ({t})0 : (double){v} <= {lo}.0 ? ({t}){lo_c} : (double){v} >= {hi}.0 ? ({t}){hi_c} : ({t}){v}",
            v = x(),
            lo = to.min_value(),
            hi = to.max_value(),
            lo_c = int_literal(to, to.min_value())?,
            hi_c = int_literal(to, to.max_value())?,
        ),
        Op::Cast(_) => format!("({t}){}", x()),
        Op::SatCast(_) => sat_cast(from, to, x())?,
        _ => return Err(unsupported(format!("{} on {from}", op.name()))),
    })
}

/// Clamps to the destination's range (only where the source's range exceeds it), then casts.
fn sat_cast(from: Elem, to: Elem, x: &str) -> Result<String> {
    let t = lane_type(to)?;
    let mut expr = format!("({t}){x}");
    if to.max_value() < from.max_value() {
        let hi = int_literal(from, to.max_value())?;
        expr = format!("{x} > {hi} ? ({t}){hi} : {expr}");
    }
    if to.min_value() > from.min_value() {
        let lo = int_literal(from, to.min_value())?;
        expr = format!("{x} < {lo} ? ({t}){lo} : {expr}");
    }
    Ok(expr)
}

/// One lane of an f32 operator.
fn float(op: &Op, args: &[String]) -> Result<String> {
    let x = || args[0].as_str();
    let y = || args[1].as_str();
    Ok(match op {
        Op::Add => format!("{} + {}", x(), y()),
        Op::Sub => format!("{} - {}", x(), y()),
        Op::Mul => format!("{} * {}", x(), y()),
        Op::Div => format!("isadb_fdiv({}, {})", x(), y()),
        Op::Neg => format!("-{}", x()),
        Op::Abs => format!("isadb_fabs({})", x()),
        Op::Sqrt => format!("isadb_fsqrt({})", x()),
        Op::Floor => format!("isadb_fround({}, 0)", x()),
        Op::Ceil => format!("isadb_fround({}, 1)", x()),
        Op::Trunc => format!("isadb_fround({}, 2)", x()),
        Op::Round => format!("isadb_fround({}, 3)", x()),
        Op::RoundAway => format!("isadb_fround({}, 4)", x()),
        Op::Min => format!("isadb_fmin({}, {})", x(), y()),
        Op::Max => format!("isadb_fmax({}, {})", x(), y()),
        Op::Sgn => format!("{v} > 0.0f ? 1.0f : {v} < 0.0f ? -1.0f : 0.0f", v = x()),
        _ if op.is_comparison() => comparison(op, x(), y()),
        _ => return Err(unsupported(format!("{} on f32", op.name()))),
    })
}

/// A comparison into 0/1 (C's relational operators are IEEE's for f32: only `!=` holds of a
/// NaN, as in the interpreter).
fn comparison(op: &Op, x: &str, y: &str) -> String {
    let symbol = match op {
        Op::Eq => "==",
        Op::Ne => "!=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        _ => ">=",
    };
    format!("{x} {symbol} {y}")
}
