//! The e-graph's terms, typed: IR operators at a vector type, inputs, constants, instructions
//! and pattern variables ([`Term`]), the i64 arithmetic and conditions of rewrites ([`Int`],
//! [`Condition`]) and the rewrites themselves ([`Rewrite`]). This is the one place they become
//! egglog text ([`std::fmt::Display`]) and the one place an extracted term is read back from it
//! ([`Term::parse`]).
//!
//! Every node carries its type as a string (`"u16x8"`), so a rule instantiated at one type and
//! lane count matches only nodes of that type; a constant is one i64 lane value broadcast to
//! every lane.
//!
//! [`Term`] and its reading back are here; [`rewrite`] holds the i64 arithmetic, conditions and
//! rewrites, [`command`] the commands of a generated program.

mod command;
mod rewrite;

pub use command::{fits_i64, Command, COST_SCALE};
pub use rewrite::{Cmp, Condition, Int, IntOp, Rewrite, Ruleset};

use crate::error::{Error, Result};
use crate::ir::print::sign_extend;
use crate::ir::sexpr::{read_one, SExpr, SKind};
use crate::ir::{Elem, VecType};
use std::collections::BTreeSet;
use std::fmt;

/// An e-graph constructor for an IR operator: name, i64 parameters, expression arguments.
pub struct Constructor {
    /// Its egglog name.
    pub name: &'static str,
    /// i64 parameters after the type.
    pub params: usize,
    /// Expression arguments after those.
    pub args: usize,
}

const fn c(name: &'static str, params: usize, args: usize) -> Constructor {
    Constructor { name, params, args }
}

/// The extraction cost `prelude.egg` gives every operator of [`CONSTRUCTORS`]: a term holding
/// one is not yet lowered into instructions.
pub const OPERATOR_COST: u64 = 1_000_000;

/// Every operator constructor besides `Var` and `Const`, as `prelude.egg` declares them.
pub const CONSTRUCTORS: [Constructor; 44] = [
    c("Add", 0, 2),
    c("Sub", 0, 2),
    c("Mul", 0, 2),
    c("Div", 0, 2),
    c("Mod", 0, 2),
    c("Neg", 0, 1),
    c("And", 0, 2),
    c("Or", 0, 2),
    c("Xor", 0, 2),
    c("Not", 0, 1),
    c("Shl", 0, 2),
    c("Shr", 0, 2),
    c("Min", 0, 2),
    c("Max", 0, 2),
    c("Abs", 0, 1),
    c("Popcount", 0, 1),
    c("Clz", 0, 1),
    c("Clmul", 0, 2),
    c("Clmod", 0, 2),
    c("Sqrt", 0, 1),
    c("Sgn", 0, 1),
    c("Floor", 0, 1),
    c("Ceil", 0, 1),
    c("Trunc", 0, 1),
    c("Round", 0, 1),
    c("RoundAway", 0, 1),
    c("Eq", 0, 2),
    c("Ne", 0, 2),
    c("Lt", 0, 2),
    c("Le", 0, 2),
    c("Gt", 0, 2),
    c("Ge", 0, 2),
    c("Select", 0, 3),
    c("Cast", 0, 1),
    c("SatCast", 0, 1),
    c("Bitcast", 0, 1),
    c("Broadcast", 0, 1),
    c("Concat", 0, 2),
    c("Interleave", 0, 2),
    c("Slice", 2, 1),
    c("ReduceAdd", 0, 1),
    c("Lookup", 0, 2),
    c("Compress", 0, 2),
    c("Expand", 0, 2),
];

/// Whether the constructor `name` spells the IR operator named `op` (`RoundAway`,
/// `round-away`).
pub fn spells(name: &str, op: &str) -> bool {
    let mut letters = op.chars().filter(|c| *c != '-');
    name.chars()
        .all(|c| letters.next().is_some_and(|l| l.eq_ignore_ascii_case(&c)))
        && letters.next().is_none()
}

/// The IR operator `name` at type `ty` on `args` (no parameters).
pub fn op(name: &'static str, ty: VecType, args: Vec<Term>) -> Term {
    Term::Op {
        name,
        ty,
        params: vec![],
        args,
    }
}

/// The same bits read as `ty`: `(Reinterpret "u8x16" arg)`.
pub fn reinterpret(ty: VecType, arg: Term) -> Term {
    Term::Reinterpret {
        ty,
        arg: Box::new(arg),
    }
}

/// `<16 x u8>` as `u8x16`.
pub fn type_name(t: VecType) -> String {
    format!("{}x{}", t.elem, t.lanes)
}

/// Parses `u8x16`.
pub fn parse_type_name(s: &str) -> Option<VecType> {
    let (e, n) = s.rsplit_once('x')?;
    Some(VecType::new(n.parse().ok()?, Elem::parse(e)?))
}

/// A lane's bits as the i64 the e-graph stores (sign-extended for signed types).
pub fn lane_value(elem: Elem, bits: u128) -> i64 {
    if elem.is_signed() {
        sign_extend(bits, elem.bits()) as i64
    } else {
        bits as i64
    }
}

/// The lane bits of an e-graph constant.
pub fn lane_bits(elem: Elem, v: i64) -> u128 {
    (v as i128 as u128) & elem.mask()
}

/// A term of the e-graph, or a pattern over it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// An IR operator at a type: `(Add "u16x8" a b)`, `(Slice "u8x8" 0 2 x)`.
    Op {
        /// One of [`CONSTRUCTORS`].
        name: &'static str,
        ty: VecType,
        params: Vec<i64>,
        args: Vec<Term>,
    },
    /// A whole input variable: `(Var "u8x16" "a_u8")`.
    Var { ty: VecType, name: String },
    /// Lanes of an input variable from an offset, as one load: `(Part "u8x8" "a_u8" 8)`.
    Part {
        ty: VecType,
        name: String,
        offset: i64,
    },
    /// A constant splat: `(Const "u16x8" 5)`, or `(Const "u16x8" w_c0)` in a pattern.
    Const { ty: VecType, value: Int },
    /// The same bits read as another type of the same width: `(Reinterpret "u8x16" x)`.
    Reinterpret { ty: VecType, arg: Box<Term> },
    /// Bool lanes that hold where a lane of a mask of whole-lane ones and zeros is not zero,
    /// the mask read as they are (targets whose comparisons make masks, not predicates):
    /// `(Nonzero "boolx16" m)`.
    Nonzero { ty: VecType, arg: Box<Term> },
    /// Bool lanes each repeated over the bytes of its lane, a predicate register read at bytes
    /// (targets whose predicates hold a flag per byte, HVX's Q: a compare of halfwords sets
    /// both bytes' flags): `(Spread "boolx128" q)` of a `boolx64` q.
    Spread { ty: VecType, arg: Box<Term> },
    /// A register pair assembled from two registers: `(Pair "u16x128" lo hi)`.
    Pair {
        ty: VecType,
        lo: Box<Term>,
        hi: Box<Term>,
    },
    /// Lanes of a computed value from an offset: `(Lanes "u8x64" 0 x)`.
    Lanes {
        ty: VecType,
        offset: i64,
        arg: Box<Term>,
    },
    /// An instruction on its operands: `(I_vaddq_u8 a b)`, by its constructor name.
    Instr { name: String, args: Vec<Term> },
    /// The root of the selection.
    Out(Box<Term>),
    /// A result computed in two parts.
    OutPair(Box<Term>, Box<Term>),
    /// A rule's wildcard, by the rule's variable name (printed `w_x`).
    Wildcard(String),
    /// A variable of a rewrite isadb generates (printed as it is: `a`, `x`).
    Slot(&'static str),
}

impl Term {
    /// A constant of type `ty` with lane value `v`.
    pub fn constant(ty: VecType, v: i64) -> Term {
        Term::Const {
            ty,
            value: Int::Lit(v as i128),
        }
    }

    /// The term with `f` applied to the operands of an operator or of a reinterpretation;
    /// other terms as they are.
    pub fn map_operands(self, mut f: impl FnMut(Term) -> Term) -> Term {
        match self {
            Term::Op { .. } | Term::Reinterpret { .. } => self
                .try_map_children(&mut |c| Some(f(c.clone())))
                .expect("every child maps"),
            other => other,
        }
    }

    /// The term with each subterm ([`Term::children`], in order) replaced by `f` of it; None
    /// where `f` gives None for one.
    pub fn try_map_children(&self, f: &mut dyn FnMut(&Term) -> Option<Term>) -> Option<Term> {
        let mut one = |x: &Term| f(x).map(Box::new);
        Some(match self {
            Term::Op {
                name,
                ty,
                params,
                args,
            } => Term::Op {
                name,
                ty: *ty,
                params: params.clone(),
                args: args.iter().map(&mut *f).collect::<Option<_>>()?,
            },
            Term::Instr { name, args } => Term::Instr {
                name: name.clone(),
                args: args.iter().map(&mut *f).collect::<Option<_>>()?,
            },
            Term::Reinterpret { ty, arg } => Term::Reinterpret {
                ty: *ty,
                arg: one(arg)?,
            },
            Term::Nonzero { ty, arg } => Term::Nonzero {
                ty: *ty,
                arg: one(arg)?,
            },
            Term::Spread { ty, arg } => Term::Spread {
                ty: *ty,
                arg: one(arg)?,
            },
            Term::Lanes { ty, offset, arg } => Term::Lanes {
                ty: *ty,
                offset: *offset,
                arg: one(arg)?,
            },
            Term::Pair { ty, lo, hi } => Term::Pair {
                ty: *ty,
                lo: one(lo)?,
                hi: one(hi)?,
            },
            Term::Out(x) => Term::Out(one(x)?),
            Term::OutPair(a, b) => Term::OutPair(one(a)?, one(b)?),
            Term::Var { .. }
            | Term::Part { .. }
            | Term::Const { .. }
            | Term::Wildcard(_)
            | Term::Slot(_) => self.clone(),
        })
    }

    /// The typed heads in the term, `(Add, u16x8)`, children first: what a pattern needs
    /// the e-graph to hold before it can match.
    pub fn typed_heads(&self, out: &mut impl FnMut(&'static str, VecType)) {
        for child in self.children() {
            child.typed_heads(out);
        }
        let head = match self {
            Term::Op { name, ty, .. } => Some((*name, *ty)),
            Term::Var { ty, .. } => Some(("Var", *ty)),
            Term::Part { ty, .. } => Some(("Part", *ty)),
            Term::Const { ty, .. } => Some(("Const", *ty)),
            Term::Reinterpret { ty, .. } => Some(("Reinterpret", *ty)),
            Term::Nonzero { ty, .. } => Some(("Nonzero", *ty)),
            Term::Spread { ty, .. } => Some(("Spread", *ty)),
            Term::Pair { ty, .. } => Some(("Pair", *ty)),
            Term::Lanes { ty, .. } => Some(("Lanes", *ty)),
            _ => None,
        };
        if let Some((name, ty)) = head {
            out(name, ty);
        }
    }

    /// The parts of input variables in the term: type, variable and offset.
    pub fn parts(&self, out: &mut impl FnMut(VecType, &str, i64)) {
        if let Term::Part { ty, name, offset } = self {
            out(*ty, name, *offset);
        }
        for child in self.children() {
            child.parts(out);
        }
    }

    /// Every type in the term.
    pub fn types(&self, out: &mut BTreeSet<VecType>) {
        self.typed_heads(&mut |_, ty| {
            out.insert(ty);
        });
    }

    /// The constructor names of the instructions in the term.
    pub fn instructions<'a>(&'a self, out: &mut BTreeSet<&'a str>) {
        if let Term::Instr { name, .. } = self {
            out.insert(name);
        }
        for child in self.children() {
            child.instructions(out);
        }
    }

    /// The subterms, in order (without allocating: program generation walks every term of
    /// thousands of rewrites).
    pub fn children(&self) -> impl Iterator<Item = &Term> + '_ {
        let (args, first, second): (&[Term], Option<&Term>, Option<&Term>) = match self {
            Term::Op { args, .. } | Term::Instr { args, .. } => (args, None, None),
            Term::Reinterpret { arg, .. }
            | Term::Nonzero { arg, .. }
            | Term::Spread { arg, .. }
            | Term::Lanes { arg, .. }
            | Term::Out(arg) => (&[], Some(arg), None),
            Term::Pair { lo, hi, .. } | Term::OutPair(lo, hi) => (&[], Some(lo), Some(hi)),
            _ => (&[], None, None),
        };
        args.iter().chain(first).chain(second)
    }

    /// Reads a term egglog extracted (or the selection cache stored).
    pub fn parse(text: &str) -> Result<Term> {
        term(&read_one(text, "extracted term")?)
    }
}

/// The term an s-expression of egglog's output spells.
fn term(s: &SExpr) -> Result<Term> {
    let bad = || Error::data("extracted term", format!("unexpected {s}"));
    let items = s.list().ok_or_else(bad)?;
    let head = s.head().ok_or_else(bad)?;
    let str_at = |i: usize| match items.get(i).map(|x| &x.kind) {
        Some(SKind::Str(t)) => Ok(t.clone()),
        _ => Err(bad()),
    };
    let int_at = |i: usize| match items.get(i).map(|x| &x.kind) {
        Some(SKind::Int(v)) => i64::try_from(*v).map_err(|_| bad()),
        _ => Err(bad()),
    };
    let ty_at = |i: usize| parse_type_name(&str_at(i)?).ok_or_else(bad);
    let arg =
        |i: usize| -> Result<Box<Term>> { Ok(Box::new(term(items.get(i).ok_or_else(bad)?)?)) };
    let args = |from: usize| -> Result<Vec<Term>> { items[from..].iter().map(term).collect() };
    let arity = |n: usize| {
        if items.len() == n + 1 {
            Ok(())
        } else {
            Err(bad())
        }
    };
    Ok(match head {
        "Var" => {
            arity(2)?;
            Term::Var {
                ty: ty_at(1)?,
                name: str_at(2)?,
            }
        }
        "Part" => {
            arity(3)?;
            Term::Part {
                ty: ty_at(1)?,
                name: str_at(2)?,
                offset: int_at(3)?,
            }
        }
        "Const" => {
            arity(2)?;
            Term::constant(ty_at(1)?, int_at(2)?)
        }
        "Reinterpret" => {
            arity(2)?;
            Term::Reinterpret {
                ty: ty_at(1)?,
                arg: arg(2)?,
            }
        }
        "Nonzero" => {
            arity(2)?;
            Term::Nonzero {
                ty: ty_at(1)?,
                arg: arg(2)?,
            }
        }
        "Spread" => {
            arity(2)?;
            Term::Spread {
                ty: ty_at(1)?,
                arg: arg(2)?,
            }
        }
        "Pair" => {
            arity(3)?;
            Term::Pair {
                ty: ty_at(1)?,
                lo: arg(2)?,
                hi: arg(3)?,
            }
        }
        "Lanes" => {
            arity(3)?;
            Term::Lanes {
                ty: ty_at(1)?,
                offset: int_at(2)?,
                arg: arg(3)?,
            }
        }
        "Out" => {
            arity(1)?;
            Term::Out(arg(1)?)
        }
        // A join's cost is the parts' (see `Node::cost`).
        "OutPair" | "OutJoin" => {
            arity(2)?;
            Term::OutPair(arg(1)?, arg(2)?)
        }
        h if h.starts_with("I_") => Term::Instr {
            name: h.to_string(),
            args: args(1)?,
        },
        h => {
            let c = CONSTRUCTORS.iter().find(|c| c.name == h).ok_or_else(bad)?;
            arity(1 + c.params + c.args)?;
            Term::Op {
                name: c.name,
                ty: ty_at(1)?,
                params: (0..c.params)
                    .map(|i| int_at(2 + i))
                    .collect::<Result<_>>()?,
                args: args(2 + c.params)?,
            }
        }
    })
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Op {
                name,
                ty,
                params,
                args,
            } => {
                write!(f, "({name} \"{}\"", type_name(*ty))?;
                for p in params {
                    write!(f, " {p}")?;
                }
                for a in args {
                    write!(f, " {a}")?;
                }
                f.write_str(")")
            }
            Term::Var { ty, name } => write!(f, "(Var \"{}\" \"{name}\")", type_name(*ty)),
            Term::Part { ty, name, offset } => {
                write!(f, "(Part \"{}\" \"{name}\" {offset})", type_name(*ty))
            }
            Term::Const { ty, value } => write!(f, "(Const \"{}\" {value})", type_name(*ty)),
            Term::Reinterpret { ty, arg } => {
                write!(f, "(Reinterpret \"{}\" {arg})", type_name(*ty))
            }
            Term::Nonzero { ty, arg } => write!(f, "(Nonzero \"{}\" {arg})", type_name(*ty)),
            Term::Spread { ty, arg } => write!(f, "(Spread \"{}\" {arg})", type_name(*ty)),
            Term::Pair { ty, lo, hi } => write!(f, "(Pair \"{}\" {lo} {hi})", type_name(*ty)),
            Term::Lanes { ty, offset, arg } => {
                write!(f, "(Lanes \"{}\" {offset} {arg})", type_name(*ty))
            }
            Term::Instr { name, args } => {
                let args: Vec<String> = args.iter().map(Term::to_string).collect();
                write!(f, "({name} {})", args.join(" "))
            }
            Term::Out(x) => write!(f, "(Out {x})"),
            Term::OutPair(a, b) => write!(f, "(OutPair {a} {b})"),
            Term::Wildcard(name) => write!(f, "w_{name}"),
            Term::Slot(name) => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_print_as_egglog_reads_them_and_read_back() {
        let ty = VecType::new(8, Elem::U16);
        let half = VecType::new(4, Elem::U16);
        let t = Term::Out(Box::new(Term::Instr {
            name: "I_vaddq_u16".into(),
            args: vec![
                Term::Var {
                    ty,
                    name: "a_u16".into(),
                },
                Term::Reinterpret {
                    ty,
                    arg: Box::new(Term::Pair {
                        ty,
                        lo: Box::new(Term::Part {
                            ty: half,
                            name: "b".into(),
                            offset: 0,
                        }),
                        hi: Box::new(Term::Lanes {
                            ty: half,
                            offset: 4,
                            arg: Box::new(Term::Op {
                                name: "Slice",
                                ty,
                                params: vec![0, 1],
                                args: vec![Term::constant(ty, -3)],
                            }),
                        }),
                    }),
                },
            ],
        }));
        let text = t.to_string();
        assert_eq!(
            text,
            "(Out (I_vaddq_u16 (Var \"u16x8\" \"a_u16\") (Reinterpret \"u16x8\" (Pair \"u16x8\" \
             (Part \"u16x4\" \"b\" 0) (Lanes \"u16x4\" 4 (Slice \"u16x8\" 0 1 (Const \"u16x8\" -3)))))))"
        );
        assert_eq!(Term::parse(&text).unwrap(), t);
        assert!(Term::parse("(Add \"u16x8\" (Var \"u16x8\" \"a\"))").is_err());
        assert!(Term::parse("(I_x").is_err());
    }

    #[test]
    fn the_prelude_declares_every_constructor_and_the_analysis_types_it() {
        let prelude = include_str!("../prelude.egg");
        let analysis = include_str!("../analysis.egg");
        for c in &CONSTRUCTORS {
            let sig = std::iter::once("String")
                .chain(std::iter::repeat_n("i64", c.params))
                .chain(std::iter::repeat_n("Expr", c.args))
                .collect::<Vec<_>>()
                .join(" ");
            let declared = format!(
                "(constructor {} ({sig}) Expr :cost {OPERATOR_COST})",
                c.name
            );
            assert!(prelude.contains(&declared), "{declared}");
            let vars: Vec<String> = (0..c.params + c.args).map(|i| format!("x{i}")).collect();
            let typed = format!(
                "(rule ((= e ({} t {}))) ((set (type-of e) t)) :ruleset analysis)",
                c.name,
                vars.join(" ")
            );
            assert!(analysis.contains(&typed), "{typed}");
        }
        let cost = format!(":cost {OPERATOR_COST}");
        assert_eq!(prelude.matches(&cost).count(), CONSTRUCTORS.len());
    }

    #[test]
    fn rewrites_print_their_conditions() {
        let ty = VecType::new(8, Elem::U16);
        let r = Rewrite {
            ruleset: Ruleset::Lift,
            source: "a test".into(),
            lhs: Term::Const {
                ty,
                value: Int::Slot("c"),
            },
            rhs: Term::Wildcard("x".into()),
            conditions: vec![
                Condition::TypeOf(Term::Wildcard("x".into()), ty),
                Condition::Compare(
                    Cmp::Le,
                    Int::Hi("x".into()),
                    Int::Bin(IntOp::Add, Box::new(Int::Fresh(0)), Box::new(Int::Lit(1))),
                ),
            ],
        };
        assert_eq!(
            r.to_string(),
            "; a test\n(rewrite (Const \"u16x8\" c) w_x :when ((= (type-of w_x) \"u16x8\") \
             (<= (hi w_x) (+ k0 1))) :ruleset lift)\n"
        );
    }
}
