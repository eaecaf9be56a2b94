//! The commands of a generated egglog program: fixed `.egg` text, instruction constructors with
//! their costs, type ranges and halves, rewrites, the root and unions, printed as egglog text.

use super::{type_name, Rewrite, Term};
use crate::ir::{Elem, VecType};
use std::fmt;

/// Extraction costs are instruction costs times this (egglog costs are integers), plus one per
/// instruction: at equal cost the sequence of fewer instructions wins (`ssra`, not `sshr` + `add`).
pub const COST_SCALE: f64 = 100.0;

/// One command of a generated program.
#[derive(Debug, Clone)]
pub enum Command {
    /// Fixed egglog text: one of the `.egg` files of `src/select/`.
    Fixed(&'static str),
    /// An instruction's constructor with its cost (instruction costs are extraction costs):
    /// `(constructor I_x (Expr Expr) Expr :cost 10)`.
    Instruction {
        name: String,
        operands: usize,
        cost: u64,
    },
    /// The integer range of a type's lanes and their count: `(set (tlo "u8x16") 0)`,
    /// `(set (thi ...) 255)`, `(set (lanes-of ...) 16)`.
    Range(VecType),
    /// The type of half of a type's lanes, and that half's lane count:
    /// `(set (half-of "u8x16") "u8x8")`, `(set (lanes-of "u8x8") 8)`.
    Half(VecType),
    /// A type of at least the target's smallest register, whose values an output takes as
    /// they are: `(register-part "u8x16")`.
    RegisterPart(VecType),
    /// A rewrite.
    Rewrite(std::rc::Rc<Rewrite>),
    /// The root of the selection of input K: `(let $root (Out t))` for the first,
    /// `(let $root_K (Out t))` for the others.
    Root(usize, Term),
    /// Extraction of input K's root: `(extract $root)`, `(extract $root_K)`.
    Extract(usize),
    /// Two terms are equal: `(union a b)`.
    Union(Term, Term),
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Fixed(text) => f.write_str(text),
            Command::Instruction {
                name,
                operands,
                cost,
            } => writeln!(
                f,
                "(constructor {name} ({}) Expr :cost {cost})",
                vec!["Expr"; *operands].join(" ")
            ),
            Command::RegisterPart(ty) => writeln!(f, "(register-part \"{}\")", type_name(*ty)),
            Command::Range(ty) => {
                let t = type_name(*ty);
                writeln!(f, "(set (lanes-of \"{t}\") {})", ty.lanes)?;
                if ty.elem.is_int() && !ty.elem.is_signed() {
                    writeln!(f, "(set (unsigned \"{t}\") 1)")?;
                }
                // Lane values live in i64: u64 and 128-bit types get no range; u64 gets bounds
                // of values below 2^63 where its operations keep them (`bounds.egg`).
                if !fits_i64(ty.elem) {
                    if ty.elem.bits() == 64 {
                        writeln!(f, "(set (wide-unsigned \"{t}\") 1)")?;
                    }
                    return Ok(());
                }
                writeln!(f, "(set (tlo \"{t}\") {})", ty.elem.min_value())?;
                writeln!(f, "(set (thi \"{t}\") {})", ty.elem.max_value())
            }
            Command::Half(ty) => {
                let h = ty.with_lanes(ty.lanes / 2);
                writeln!(
                    f,
                    "(set (half-of \"{}\") \"{}\")",
                    type_name(*ty),
                    type_name(h)
                )?;
                writeln!(f, "(set (lanes-of \"{}\") {})", type_name(h), h.lanes)
            }
            Command::Rewrite(r) => write!(f, "{r}"),
            Command::Root(k, t) => writeln!(f, "(let {} (Out {t}))", root_name(*k)),
            Command::Extract(k) => writeln!(f, "(extract {})", root_name(*k)),
            Command::Union(a, b) => writeln!(f, "(union {a} {b})"),
        }
    }
}

/// The egglog name of input K's root.
fn root_name(k: usize) -> String {
    match k {
        0 => "$root".to_string(),
        k => format!("$root_{k}"),
    }
}

/// Whether every value of `elem` is an i64 (the e-graph's lane values and bounds).
pub fn fits_i64(elem: Elem) -> bool {
    elem.min_value() >= i64::MIN as i128 && elem.max_value() <= i64::MAX as i128
}
